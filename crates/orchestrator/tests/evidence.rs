//! Evidence from a persona's corpus in a debate: the real local MiniLM
//! embedder, the embedded index in the debate's SQLite file (and pgvector
//! on PostgreSQL), a scripted model that cites the first passage its
//! EVIDENCE shows and, every other time, an invented id.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use agon_core::PersonaId;
use agon_llm::{ChatModel, Embedder, PriceTable};
use agon_local::LocalEmbedder;
use agon_memory::corpus::{CorpusFormat, chunk};
use agon_memory::{Memory, RetrievalConfig};
use agon_orchestrator::{Models, RunControl, RunOutcome};
use agon_testkit::ScriptedModel;
use support::small_config;

use crate::evidence_bench::Prompts;

/// An id no corpus has.
const INVENTED: &str = "0badc0de";

const MARA_ESSAY: &str = "# Transit\n\nAfter the centre of Ghent closed to through traffic in 2017, tram and bus ridership rose by 18 percent within a year.\n\n# Retail\n\nPedestrian-zone retail footfall grew while shop vacancies fell from 11 to 7 percent.\n\n# Air\n\nNitrogen dioxide at the central monitor fell by a third within two winters.\n";

/// The first `[E:…]` id of a prompt's EVIDENCE, cited; on every second
/// citing turn an invented id too.
fn cite(prompt: &str, turn: usize) -> Option<String> {
    let id = first_evidence_id(prompt)?;
    let mut text = format!(" As my own data shows [E:{id}].");
    if turn % 2 == 1 {
        text.push_str(&format!(" Also [E:{INVENTED}]."));
    }
    Some(text)
}

fn first_evidence_id(prompt: &str) -> Option<String> {
    let section = prompt.split("── EVIDENCE: YOUR SOURCES").nth(1)?;
    let start = section.find("• [E:")? + "• [E:".len();
    let end = start + section[start..].find(']')?;
    Some(section[start..end].to_owned())
}

async fn suite(url: &str) {
    let embedder: Arc<dyn Embedder> =
        Arc::new(LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")));
    let store = agon_store::open(url).await.unwrap();
    let index = agon_memory::open(url).await.unwrap();
    let memory = Memory::open(index, embedder, RetrievalConfig::default())
        .await
        .unwrap();
    let mara = PersonaId::new("mara");
    let chunks = chunk(MARA_ESSAY, CorpusFormat::Markdown, "mara.md").unwrap();
    assert_eq!(
        memory
            .add_corpus(&mara, "mara.md", &chunks, chrono::Utc::now())
            .await
            .unwrap(),
        3
    );
    let orch = agon_app::orchestrator_for(store).with_memory(memory);
    let id = orch.create(&small_config()).await.unwrap();
    let model = Arc::new(Prompts::appending(
        ScriptedModel::new(Duration::from_millis(20)),
        cite,
    ));
    let models = Models::uniform(
        model.clone() as Arc<dyn ChatModel>,
        PriceTable::with_defaults(),
    );
    let outcome = orch.run(&id, &models, RunControl::default()).await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);

    // Mara's turns showed EVIDENCE; nobody else has a corpus.
    let prompts = model.seen.lock().unwrap().clone();
    let with_evidence: Vec<&String> = prompts
        .iter()
        .map(|(_, p)| p)
        .filter(|p| p.contains("── EVIDENCE: YOUR SOURCES"))
        .collect();
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let mara_turns = bb.messages().iter().filter(|m| m.persona == mara).count();
    assert_eq!(
        with_evidence.len(),
        mara_turns,
        "one EVIDENCE per Mara turn"
    );
    assert!(with_evidence.iter().all(|p| p.contains("(mara.md)")));
    // They ask for citations by id; once Mara cited, her position shows her sources.
    assert!(
        with_evidence
            .iter()
            .all(|p| p.contains(agon_context::prompts::CITE_EVIDENCE))
    );
    assert!(
        with_evidence
            .iter()
            .any(|p| p.contains("Sources you've cited: [E:")),
        "no later take showed Mara's cited sources"
    );

    // Citations: real ones kept with source and passage, invented ones caught.
    let citations = bb.citations();
    assert_eq!(citations.len(), mara_turns, "{citations:#?}");
    assert!(
        citations
            .iter()
            .all(|c| c.persona == mara && !c.cited.is_empty())
    );
    let rejected: Vec<&String> = citations.iter().flat_map(|c| &c.rejected).collect();
    assert_eq!(rejected.len(), mara_turns / 2);
    assert!(rejected.iter().all(|r| *r == INVENTED));
    let sources = bb.sources_cited(&mara);
    assert!(!sources.is_empty());
    assert!(sources.iter().all(|s| s.source == "mara.md"));
    assert!(
        sources.iter().any(|s| s.passage.contains("18 percent")
            || s.passage.contains("Nitrogen dioxide")
            || s.passage.contains("vacancies")),
        "{sources:#?}"
    );

    // The report lists them.
    let md = agon_view::report::markdown(&bb);
    assert!(
        md.contains("## Sources cited\n\n### Mara\n\n- `[E:"),
        "{md}"
    );
    assert!(md.contains("mara.md: \""));
    assert!(md.contains(&format!(
        "Rejected (no such chunk in Mara's corpus): `[E:{INVENTED}]`"
    )));
    let json = agon_view::report::json(&bb, agon_view::report::ReportOptions::default());
    assert_eq!(json["citations"].as_array().unwrap().len(), mara_turns);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persona_argues_from_its_corpus_and_invented_sources_are_caught() {
    let dir = std::env::temp_dir().join("agon-orchestrator-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!(
        "sqlite://{}",
        dir.join(format!("{}.db", support::unique("evidence")))
            .display()
    );
    suite(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_on_pgvector() {
    suite(&support::pg_url().await).await;
}

/// `cargo xtask bench evidence`'s deterministic figures (docs/benchmarks.md,
/// "Corpus evidence"): recall of the planted chunk and what the scripted
/// debate's takes show under EVIDENCE, within a tolerance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_corpus_benchmark_keeps_its_documented_figures() {
    use crate::evidence_bench as bench;
    let dir = std::env::temp_dir().join("agon-orchestrator-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!(
        "sqlite://{}",
        dir.join(format!("{}.db", support::unique("evidence-bench")))
            .display()
    );
    let embedder: Arc<dyn Embedder> =
        Arc::new(LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")));
    let index = agon_memory::open(&url).await.unwrap();
    let memory = Memory::open(index, embedder, RetrievalConfig::default())
        .await
        .unwrap();
    let (planted, chunks) = bench::index(&memory, &bench::TUNED).await;
    assert_eq!((planted.len(), chunks), (9, 39));
    let rows = bench::recall(&memory, &bench::TUNED, &planted).await;
    // The held-out corpus, in a store of its own.
    let held_out_url = format!(
        "sqlite://{}",
        dir.join(format!("{}.db", support::unique("evidence-held-out")))
            .display()
    );
    let held_out = Memory::open(
        agon_memory::open(&held_out_url).await.unwrap(),
        Arc::new(LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}"))),
        RetrievalConfig::default(),
    )
    .await
    .unwrap();
    let (held_planted, held_chunks) = bench::index(&held_out, &bench::HELD_OUT).await;
    assert_eq!((held_planted.len(), held_chunks), (9, 39));
    let held_rows = bench::recall(&held_out, &bench::HELD_OUT, &held_planted).await;
    let print = std::env::var_os("AGON_HEADLINE_PRINT").is_some();
    for (set, rows) in [(&bench::TUNED, &rows), (&bench::HELD_OUT, &held_rows)] {
        for (name, row) in rows {
            println!(
                "{} {name}: recall@1 {:.3} recall@3 {:.3} recall@5 {:.3}",
                set.name, row.at1, row.at3, row.at5
            );
        }
    }
    let f = bench::debate(&url, memory, &planted).await;
    println!(
        "takes {} with planted {} tokens {:.1} share mean {:.3} max {:.3}",
        f.takes, f.with_planted, f.evidence_tokens, f.mean_share, f.max_share
    );
    if print {
        return;
    }
    let agon = rows[2].1;
    // The goal: at least 0.9 recall@5 of the planted chunk.
    assert!(agon.at5 >= 0.9, "agon recall@5 {:.3}", agon.at5);
    for (rows, documented) in [(&rows, DOCUMENTED_RECALL), (&held_rows, HELD_OUT_RECALL)] {
        for ((name, row), (at1, at3, at5)) in rows.iter().zip(documented) {
            assert!(
                (row.at1 - at1).abs() <= 0.06
                    && (row.at3 - at3).abs() <= 0.06
                    && (row.at5 - at5).abs() <= 0.06,
                "{name}: {row:?}, documented {at1} / {at3} / {at5}: update docs/benchmarks.md if meant"
            );
        }
    }
    // The section: at most a quarter of a take's prompt; the planted fact
    // in the takes that need it.
    assert!(f.takes >= 12, "{f:?}");
    assert!(f.max_share <= 0.25, "{f:?}");
    let held = f.with_planted as f64 / f.takes as f64;
    assert!(
        (held - DOCUMENTED_HELD).abs() <= 0.1,
        "EVIDENCE held the planted fact in {held:.2} of takes, documented {DOCUMENTED_HELD}"
    );
}

/// recall@1, @3 and @5 of dense, BM25 and agon (docs/benchmarks.md).
const DOCUMENTED_RECALL: [(f64, f64, f64); 3] = [
    (0.444, 0.778, 0.963),
    (0.667, 0.704, 0.741),
    (0.556, 0.852, 0.926),
];
/// The same on the held-out corpus (docs/benchmarks.md), never tuned on.
const HELD_OUT_RECALL: [(f64, f64, f64); 3] = [
    (0.370, 0.963, 0.963),
    (0.704, 0.704, 0.741),
    (0.556, 0.963, 0.963),
];
/// Share of takes whose EVIDENCE held the planted fact (16 of 18).
const DOCUMENTED_HELD: f64 = 0.889;
