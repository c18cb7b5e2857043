//! One suite for every backend: the embedded SQLite index, PostgreSQL +
//! pgvector (a fresh database on the server of `AGON_TEST_DATABASE_URL`;
//! the test fails without it) and the in-process index. Plus the HNSW plan
//! check, cross-process visibility and the embedder-mismatch rules.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agon_core::{DebateId, PersonaId};
use agon_memory::{
    DebateInfo, EmbeddingSpace, InMemoryIndex, MemoryError, MemoryFilter, MemoryIndex, MemoryKind,
    MemoryRecord, PgMemory, SqliteMemory,
};
use chrono::{Duration, TimeZone, Utc};

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn unique(prefix: &str) -> String {
    format!(
        "{prefix}_{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        Utc::now().timestamp_subsec_nanos()
    )
}

pub(crate) fn sqlite_url() -> String {
    let dir = std::env::temp_dir().join("agon-memory-tests");
    std::fs::create_dir_all(&dir).unwrap();
    format!(
        "sqlite://{}",
        dir.join(format!("{}.db", unique("m"))).display()
    )
}

pub(crate) async fn pg_url() -> String {
    use sqlx::Connection;
    let admin = std::env::var("AGON_TEST_DATABASE_URL")
        .expect("AGON_TEST_DATABASE_URL is not set: run the suite with `cargo xtask test`");
    let name = unique("agon_m");
    let mut c = sqlx::PgConnection::connect(&admin).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut c)
        .await
        .unwrap();
    let base = admin
        .rsplit_once('/')
        .map_or(admin.as_str(), |(b, _)| b)
        .to_owned();
    format!("{base}/{name}")
}

fn space(dims: usize) -> EmbeddingSpace {
    EmbeddingSpace {
        model: "test-embedder".into(),
        dimensions: dims,
    }
}

fn record(
    id: &str,
    persona: &str,
    debate: &str,
    kind: MemoryKind,
    content: &str,
    v: &[f32],
) -> MemoryRecord {
    MemoryRecord {
        id: id.into(),
        debate: DebateId::new(debate),
        persona: PersonaId::new(persona),
        content: content.into(),
        kind,
        importance: 6,
        round: 2,
        created: Utc.timestamp_opt(1_750_000_000, 0).unwrap() + Duration::seconds(id.len() as i64),
        embedding: v.to_vec(),
        subject: None,
    }
}

/// The suite every backend passes; `record_debate` makes a debate known
/// where the backend reads debates from (the event store, or the in-process
/// index itself).
async fn suite(index: Arc<dyn MemoryIndex>, record_debate: impl AsyncFnOnce(&DebateInfo)) {
    let backend = index.backend();
    assert_eq!(index.space().await.unwrap(), None);
    assert!(
        index
            .search(&[1.0, 0.0, 0.0, 0.0], &MemoryFilter::default(), 5)
            .await
            .unwrap()
            .is_empty()
    );
    index.bind(&space(4)).await.unwrap();
    index.bind(&space(4)).await.unwrap();
    // Another embedder: refused, both named.
    let other = EmbeddingSpace {
        model: "voyage-3".into(),
        dimensions: 1024,
    };
    let err = index.bind(&other).await.unwrap_err();
    assert!(
        matches!(err, MemoryError::EmbedderMismatch { .. }),
        "{backend}: {err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("test-embedder (4-d)") && text.contains("voyage-3 (1024-d)"),
        "{text}"
    );

    let records = vec![
        record(
            "d1/a",
            "mara",
            "d1",
            MemoryKind::Message,
            "Mara cited the Paris car ban and asthma data",
            &[1.0, 0.0, 0.0, 0.0],
        ),
        record(
            "d1/bb",
            "mara",
            "d1",
            MemoryKind::Reflection,
            "Mara concedes cost matters for commuters",
            &[0.8, 0.6, 0.0, 0.0],
        ),
        record(
            "d1/ccc",
            "theo",
            "d1",
            MemoryKind::Message,
            "Theo says delivery vans need exemptions",
            &[0.9, 0.0, 0.1, 0.0],
        ),
        record(
            "d2/dddd",
            "mara",
            "d2",
            MemoryKind::Position,
            "Mara's position: congestion charges work",
            &[0.0, 0.0, 1.0, 0.0],
        ),
    ];
    assert_eq!(index.insert(records.clone()).await.unwrap(), 4, "{backend}");
    assert_eq!(
        index.insert(records.clone()).await.unwrap(),
        0,
        "{backend}: ids are idempotent"
    );
    let existing = index
        .existing(&["d1/a".into(), "nope".into()])
        .await
        .unwrap();
    assert_eq!(existing.len(), 1);

    // Dense search: order by cosine, every filter.
    let q = [1.0, 0.0, 0.0, 0.0];
    let ids =
        |c: Vec<agon_memory::Candidate>| c.into_iter().map(|c| c.memory.id).collect::<Vec<_>>();
    let all = index
        .search(&q, &MemoryFilter::default(), 10)
        .await
        .unwrap();
    assert_eq!(
        ids(all.clone()),
        ["d1/a", "d1/ccc", "d1/bb", "d2/dddd"],
        "{backend}"
    );
    assert!((all[0].similarity - 1.0).abs() < 1e-4);
    assert_eq!(all[0].memory.content, records[0].content);
    assert_eq!(all[0].memory.created, records[0].created);
    let mara = MemoryFilter::persona("mara");
    assert_eq!(
        ids(index.search(&q, &mara, 2).await.unwrap()),
        ["d1/a", "d1/bb"]
    );
    let cross = MemoryFilter {
        exclude_debate: Some(DebateId::new("d1")),
        ..mara.clone()
    };
    assert_eq!(
        ids(index.search(&q, &cross, 10).await.unwrap()),
        ["d2/dddd"]
    );
    let kinds = MemoryFilter {
        kinds: vec![MemoryKind::Reflection],
        debate: Some(DebateId::new("d1")),
        ..MemoryFilter::default()
    };
    assert_eq!(ids(index.search(&q, &kinds, 10).await.unwrap()), ["d1/bb"]);
    assert!(
        index
            .search(&q, &MemoryFilter::persona("nobody"), 10)
            .await
            .unwrap()
            .is_empty()
    );

    // The personas under a filter, and a memory's neighbours in its debate.
    assert_eq!(
        index.personas(&MemoryFilter::default()).await.unwrap(),
        ["mara", "theo"],
        "{backend}"
    );
    let d2 = MemoryFilter {
        debate: Some(DebateId::new("d2")),
        ..MemoryFilter::default()
    };
    assert_eq!(index.personas(&d2).await.unwrap(), ["mara"], "{backend}");
    let near = async |id: &str, filter: &MemoryFilter, n: usize| -> Vec<String> {
        index
            .neighbours(id, filter, n)
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.id)
            .collect()
    };
    let any = MemoryFilter::default();
    assert_eq!(
        near("d1/bb", &any, 1).await,
        ["d1/a", "d1/ccc"],
        "{backend}"
    );
    assert_eq!(
        near("d1/a", &any, 5).await,
        ["d1/bb", "d1/ccc"],
        "{backend}: same debate only, oldest first"
    );
    assert_eq!(
        near("d1/bb", &mara, 1).await,
        ["d1/a"],
        "{backend}: filtered"
    );
    assert!(near("nope", &any, 1).await.is_empty(), "{backend}");
    assert!(near("d1/bb", &any, 0).await.is_empty(), "{backend}");
    assert_eq!(index.count(&mara).await.unwrap(), 3);
    assert_eq!(
        index.count(&MemoryFilter::persona("nobody")).await.unwrap(),
        0
    );

    // BM25: stemmed terms, filters.
    let hits = index
        .lexical("car bans", &MemoryFilter::default(), 10)
        .await
        .unwrap();
    assert_eq!(hits[0].id, "d1/a", "{backend}: {hits:?}");
    let hits = index
        .lexical("Mara", &MemoryFilter::persona("theo"), 10)
        .await
        .unwrap();
    assert!(hits.is_empty(), "{backend}: {hits:?}");
    assert!(
        index
            .lexical("the of", &MemoryFilter::default(), 10)
            .await
            .unwrap()
            .is_empty()
    );

    // Fetch by id with similarity.
    let fetched = index
        .fetch(&["d2/dddd".into(), "missing".into()], &q)
        .await
        .unwrap();
    assert_eq!(fetched.len(), 1);
    assert!(fetched[0].similarity.abs() < 1e-4);

    // Bad records: named by id, nothing stored.
    let nan = record(
        "bad/nan",
        "mara",
        "d1",
        MemoryKind::Message,
        "x",
        &[f32::NAN, 0.0, 0.0, 0.0],
    );
    let err = index.insert(vec![nan]).await.unwrap_err().to_string();
    assert!(
        err.contains("bad/nan") && err.contains("not finite"),
        "{err}"
    );
    let zero = record(
        "bad/zero",
        "mara",
        "d1",
        MemoryKind::Message,
        "x",
        &[0.0; 4],
    );
    let err = index.insert(vec![zero]).await.unwrap_err().to_string();
    assert!(
        err.contains("bad/zero") && err.contains("zero vector"),
        "{err}"
    );
    let short = record(
        "bad/dims",
        "mara",
        "d1",
        MemoryKind::Message,
        "x",
        &[1.0; 3],
    );
    let err = index.insert(vec![short]).await.unwrap_err().to_string();
    assert!(
        err.contains("bad/dims") && err.contains("3 dimensions"),
        "{err}"
    );
    assert_eq!(index.count(&MemoryFilter::default()).await.unwrap(), 4);

    // Debates for labels.
    let info = DebateInfo {
        debate: DebateId::new("d1"),
        topic: "Ban cars downtown?".into(),
        started: Utc.timestamp_millis_opt(1_750_000_000_000).unwrap(),
    };
    record_debate(&info).await;
    let got = index
        .debates(&[DebateId::new("d1"), DebateId::new("zz")])
        .await
        .unwrap();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((&got[0].debate, &got[0].topic), (&info.debate, &info.topic));

    // Reindex: vectors dropped, memories kept (found by BM25), re-set.
    index.reset_space(&space(2)).await.unwrap();
    assert_eq!(index.space().await.unwrap(), Some(space(2)));
    let pending = index.unembedded(10).await.unwrap();
    assert_eq!(pending.len(), 4, "{backend}");
    assert!(
        index
            .search(&[1.0, 0.0], &MemoryFilter::default(), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        index
            .lexical("car", &MemoryFilter::default(), 10)
            .await
            .unwrap()
            .len(),
        1
    );
    let err = index
        .set_embeddings(vec![("d1/a".into(), vec![f32::NAN, 1.0])])
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("d1/a"), "{err}");
    index
        .set_embeddings(
            pending
                .iter()
                .map(|m| (m.id.clone(), vec![1.0, 2.0]))
                .collect(),
        )
        .await
        .unwrap();
    assert!(index.unembedded(10).await.unwrap().is_empty());
    let found = index
        .search(&[1.0, 0.0], &MemoryFilter::default(), 10)
        .await
        .unwrap();
    assert_eq!(found.len(), 4, "{backend}");
    assert!(
        (found[0].similarity - 1.0 / 5f32.sqrt()).abs() < 1e-3,
        "normalized: {found:?}"
    );

    // Deleting a debate's memories (when the debate is deleted).
    let all = index.count(&MemoryFilter::default()).await.unwrap();
    let of_d1 = MemoryFilter {
        debate: Some("d1".into()),
        ..MemoryFilter::default()
    };
    let in_d1 = index.count(&of_d1).await.unwrap();
    assert!(in_d1 > 0, "{backend}");
    assert!(
        !index
            .lexical("asthma", &MemoryFilter::default(), 10)
            .await
            .unwrap()
            .is_empty(),
        "{backend}: d1's words are in BM25 before"
    );
    assert_eq!(
        index.delete_debate(&"d1".into()).await.unwrap(),
        in_d1,
        "{backend}"
    );
    assert_eq!(index.count(&of_d1).await.unwrap(), 0, "{backend}");
    assert_eq!(
        index.count(&MemoryFilter::default()).await.unwrap(),
        all - in_d1,
        "{backend}: the others stay"
    );
    let found = index
        .search(&[1.0, 0.0], &MemoryFilter::default(), 10)
        .await
        .unwrap();
    assert!(
        found.iter().all(|c| c.memory.debate.as_str() != "d1"),
        "{backend}: {found:?}"
    );
    assert!(
        index
            .lexical("asthma", &MemoryFilter::default(), 10)
            .await
            .unwrap()
            .is_empty(),
        "{backend}: its words are gone from BM25"
    );
    assert_eq!(index.delete_debate(&"d1".into()).await.unwrap(), 0);

    // Validity: a later memory of the same persona on the same subject
    // closes the earlier one; deleting the later debate opens it again.
    let on = |id: &str, debate: &str, minute: i64| MemoryRecord {
        subject: Some("car ban".into()),
        created: Utc.timestamp_opt(1_760_000_000, 0).unwrap() + Duration::minutes(minute),
        ..record(
            id,
            "mara",
            debate,
            MemoryKind::Position,
            "Mara's position on the car ban",
            &[0.0, 1.0],
        )
    };
    index
        .insert(vec![on("v1/p", "v1", 0), on("v2/p", "v2", 60)])
        .await
        .unwrap();
    let stored = index.on_subject(&"mara".into(), "car ban").await.unwrap();
    assert_eq!(stored.len(), 2, "{backend}");
    assert!(
        stored
            .iter()
            .all(|m| m.subject.as_deref() == Some("car ban")),
        "{backend}"
    );
    assert!(
        index
            .on_subject(&"mara".into(), "rates")
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        agon_memory::rechain(index.as_ref(), &"mara".into(), "car ban")
            .await
            .unwrap(),
        1
    );
    let ids = ["v1/p".to_owned(), "v2/p".to_owned(), "nope".to_owned()];
    let closed = index.superseded(&ids).await.unwrap();
    assert_eq!(closed.len(), 1, "{backend}: {closed:?}");
    assert_eq!(closed["v1/p"].by, "v2/p", "{backend}");
    assert_eq!(
        closed["v1/p"].until,
        Utc.timestamp_opt(1_760_000_000, 0).unwrap() + Duration::minutes(60),
        "{backend}"
    );
    assert_eq!(
        agon_memory::forget_debate(index.as_ref(), &"v2".into())
            .await
            .unwrap(),
        1
    );
    assert!(
        index.superseded(&ids).await.unwrap().is_empty(),
        "{backend}: v1/p holds again"
    );
}

/// Creates the debate in the event store at `url` (where the database
/// backends read topics and starts from).
async fn create_debate(url: &str, info: &DebateInfo) {
    let store = agon_store::open(url).await.unwrap();
    store
        .create_debate(&agon_store::NewDebate {
            id: info.debate.clone(),
            topic: info.topic.clone(),
            config: serde_json::json!({}),
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn embedded_sqlite_backend() {
    let url = sqlite_url();
    let index = Arc::new(SqliteMemory::open(&url).await.unwrap());
    suite(index, async |info| create_debate(&url, info).await).await;
}

#[tokio::test]
async fn in_memory_backend() {
    let index = Arc::new(InMemoryIndex::new());
    suite(index.clone(), async |info| index.note_debate(info).await).await;
}

#[tokio::test]
async fn pgvector_backend() {
    let url = pg_url().await;
    let index = Arc::new(PgMemory::connect(&url).await.unwrap());
    suite(index, async |info| create_debate(&url, info).await).await;
}

/// The memory and the event store of one URL share one connection pool,
/// and the memory needs no copy of a debate's metadata.
#[tokio::test]
async fn the_memory_shares_the_stores_pool_and_debates() {
    let url = sqlite_url();
    let store_pool = agon_store::sqlite_pool(&url, agon_store::BUSY_TIMEOUT)
        .await
        .unwrap();
    let memory = SqliteMemory::open(&url).await.unwrap();
    let count = |table: &'static str| {
        let pool = store_pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
            )
            .bind(table)
            .fetch_one(&pool)
            .await
            .unwrap()
        }
    };
    assert_eq!(
        count("memories").await,
        1,
        "memory tables in the store's file"
    );
    assert_eq!(count("memory_debates").await, 0, "no copy of debates");
    assert_eq!(memory.count(&MemoryFilter::default()).await.unwrap(), 0);
    // One pool: closing it through one holder closes it for every holder.
    let again = agon_store::sqlite_pool(&url, agon_store::BUSY_TIMEOUT)
        .await
        .unwrap();
    again.close().await;
    assert!(store_pool.is_closed());
    assert!(memory.count(&MemoryFilter::default()).await.is_err());
}

#[tokio::test]
async fn sqlite_memory_shares_the_debate_store_file_and_sees_other_writers() {
    let url = sqlite_url();
    let _store = agon_store::open(&url).await.unwrap();
    let a = SqliteMemory::open(&url).await.unwrap();
    let b = SqliteMemory::open(&url).await.unwrap();
    a.bind(&space(4)).await.unwrap();
    assert!(
        b.search(&[1.0, 0.0, 0.0, 0.0], &MemoryFilter::default(), 5)
            .await
            .unwrap()
            .is_empty()
    );
    a.insert(vec![record(
        "x/1",
        "mara",
        "x",
        MemoryKind::Message,
        "first",
        &[1.0, 0.0, 0.0, 0.0],
    )])
    .await
    .unwrap();
    // `b` loaded its cache before the insert; it catches up.
    assert_eq!(
        b.search(&[1.0, 0.0, 0.0, 0.0], &MemoryFilter::default(), 5)
            .await
            .unwrap()
            .len(),
        1
    );
    let err = b
        .bind(&EmbeddingSpace {
            model: "other".into(),
            dimensions: 4,
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("other (4-d)"));
    // A deletion by `a` reaches `b`'s cache too.
    assert_eq!(a.delete_debate(&"x".into()).await.unwrap(), 1);
    assert!(
        b.search(&[1.0, 0.0, 0.0, 0.0], &MemoryFilter::default(), 5)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Creates a table of another component in the same file first, as the
/// debate store does, to show the memory migrations live beside it.
#[tokio::test]
async fn pgvector_dense_queries_use_the_hnsw_index() {
    let memory = PgMemory::connect(&pg_url().await).await.unwrap();
    memory.bind(&space(16)).await.unwrap();
    let mut rng = fastrand::Rng::with_seed(7);
    // Enough rows that the planner prices the HNSW scan (whose estimated cost
    // grows with ef_search = 200) below a sequential scan and sort: at 3,000
    // rows it does not, at 8,000 it does.
    let records: Vec<MemoryRecord> = (0..12_000)
        .map(|i| {
            let v: Vec<f32> = (0..16).map(|_| rng.f32() - 0.5).collect();
            record(
                &format!("r{i}"),
                ["mara", "theo", "priya"][i % 3],
                "d",
                MemoryKind::Message,
                "text",
                &v,
            )
        })
        .collect();
    for chunk in records.chunks(500) {
        memory.insert(chunk.to_vec()).await.unwrap();
    }
    sqlx::query("ANALYZE memories")
        .execute(memory.pool())
        .await
        .unwrap();
    let q: Vec<f32> = (0..16).map(|i| if i == 0 { 1.0 } else { 0.0 }).collect();
    for filter in [MemoryFilter::default(), MemoryFilter::persona("theo")] {
        let plan = memory.explain_dense(&q, &filter, 10).await.unwrap();
        if filter.persona.is_none() {
            assert!(plan.contains("memories_embedding_hnsw"), "{plan}");
        } else {
            // A selective filter on a small table: the planner may prefer the
            // persona B-tree and an exact sort (correct and exact); at scale
            // it takes the HNSW scan with iterative filtering (the benchmark
            // prints that plan at 100k memories).
            assert!(
                plan.contains("memories_embedding_hnsw") || plan.contains("memories_persona"),
                "{plan}"
            );
        }
        let found = memory.search(&q, &filter, 10).await.unwrap();
        assert_eq!(
            found.len(),
            10,
            "iterative scans fill the limit under a filter"
        );
        assert!(found.windows(2).all(|w| w[0].similarity >= w[1].similarity));
    }
}
