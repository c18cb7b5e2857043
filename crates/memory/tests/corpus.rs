//! A persona's corpus with the real MiniLM embedder, on the embedded
//! SQLite index and on PostgreSQL + pgvector: chunks added once, listed,
//! searched as evidence by relevance, checked by citation hash, never
//! returned by a debate's recall, removed by source.

use std::sync::Arc;

use agon_core::PersonaId;
use agon_llm::Embedder;
use agon_local::LocalEmbedder;
use agon_memory::corpus::{CorpusFormat, chunk};
use agon_memory::{Memory, MemoryFilter, MemoryIndex, RetrievalConfig, SqliteMemory};
use chrono::Utc;

use crate::index::{pg_url, sqlite_url};

const ESSAY: &str = "# Transit\n\nAfter the centre closed to cars, tram ridership rose by 18 percent in the first year, the city transport office reported.\n\n# Retail\n\nFootfall on the pedestrian streets grew, and shop vacancies fell from 11 to 7 percent.\n\n# Air\n\nNitrogen dioxide at the cathedral monitor fell by a third within two winters.\n";

const POSTS: &str = "{\"text\": \"Cycling lanes on the ring road carried 4,000 riders a day by June.\", \"date\": \"2024-06-30\"}\n{\"text\": \"Parking revenue funded the night buses.\"}\n";

async fn suite(index: Arc<dyn MemoryIndex>) {
    let backend = index.backend();
    let embedder: Arc<dyn Embedder> =
        Arc::new(LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")));
    let memory = Memory::open(index, embedder, RetrievalConfig::default())
        .await
        .unwrap();
    // A multi-word name with a non-ASCII letter.
    let zoe = PersonaId::new("zoë-brandt");
    let theo = PersonaId::new("theo");
    let essay = chunk(ESSAY, CorpusFormat::Markdown, "essay.md").unwrap();
    let posts = chunk(POSTS, CorpusFormat::JsonLines, "posts.jsonl").unwrap();
    assert_eq!((essay.len(), posts.len()), (3, 2));
    let now = Utc::now();
    assert_eq!(
        memory
            .add_corpus(&zoe, "essay.md", &essay, now)
            .await
            .unwrap(),
        3,
        "{backend}"
    );
    assert_eq!(
        memory
            .add_corpus(&zoe, "posts.jsonl", &posts, now)
            .await
            .unwrap(),
        2
    );
    // The same file again adds nothing.
    assert_eq!(
        memory
            .add_corpus(&zoe, "essay.md", &essay, now)
            .await
            .unwrap(),
        0
    );
    let err = memory
        .add_corpus(&zoe, "a/b.md", &essay, now)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("a/b.md"), "{err}");

    let sources = memory.corpus_sources(None).await.unwrap();
    let listed: Vec<(&str, &str, usize)> = sources
        .iter()
        .map(|s| (s.persona.as_str(), s.file.as_str(), s.chunks))
        .collect();
    assert_eq!(
        listed,
        [
            ("zoë-brandt", "essay.md", 3),
            ("zoë-brandt", "posts.jsonl", 2)
        ],
        "{backend}"
    );
    assert!(memory.has_corpus(&zoe).await.unwrap());
    assert!(!memory.has_corpus(&theo).await.unwrap());

    // Evidence by relevance.
    let found = memory
        .evidence(&zoe, "How did air pollution change?", 2)
        .await
        .unwrap();
    assert_eq!(found.len(), 2, "{backend}");
    assert!(
        found[0].content.contains("Nitrogen dioxide"),
        "{backend}: {found:#?}"
    );
    assert_eq!(found[0].file, "essay.md");
    assert_eq!(found[0].position, 2);
    let found = memory
        .evidence(&zoe, "bike riders per day", 1)
        .await
        .unwrap();
    assert!(
        found[0].content.contains("4,000 riders"),
        "{backend}: {found:#?}"
    );
    assert!(found[0].content.starts_with("2024-06-30: "));
    assert!(memory.evidence(&theo, "air", 3).await.unwrap().is_empty());

    // Citations are checked by hash, per persona.
    let real = found[0].hash.clone();
    let checked = memory
        .corpus_chunks(&zoe, &[real.clone(), "deadbeef".into()])
        .await
        .unwrap();
    assert_eq!(checked.len(), 1, "{backend}");
    assert_eq!(checked[0].hash, real);
    assert_eq!(checked[0].file, "posts.jsonl");
    assert!(
        memory
            .corpus_chunks(&theo, &[real])
            .await
            .unwrap()
            .is_empty()
    );

    // A debate's recall never returns corpus chunks.
    assert_eq!(
        memory
            .index()
            .count(&MemoryFilter::persona(zoe.clone()))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        memory
            .index()
            .count(&MemoryFilter::corpus(zoe.clone()))
            .await
            .unwrap(),
        5
    );
    let recall = memory
        .recall("air pollution", &MemoryFilter::persona(zoe.clone()), 5)
        .await
        .unwrap();
    assert!(recall.memories.is_empty(), "{backend}: {recall:#?}");

    assert_eq!(memory.remove_corpus(&zoe, "posts.jsonl").await.unwrap(), 2);
    assert_eq!(memory.remove_corpus(&zoe, "posts.jsonl").await.unwrap(), 0);
    assert_eq!(memory.corpus_sources(Some(&zoe)).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_corpus_on_the_embedded_index() {
    suite(Arc::new(SqliteMemory::open(&sqlite_url()).await.unwrap())).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_corpus_on_pgvector() {
    suite(Arc::new(
        agon_memory::PgMemory::connect(&pg_url().await)
            .await
            .unwrap(),
    ))
    .await;
}
