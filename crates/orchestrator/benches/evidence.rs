//! `cargo xtask bench evidence`: does a persona's corpus reach its takes?
//!
//! Three personas, each with a corpus of 39 posts: one planted fact per
//! aspect among four distractors each (the same words about other squares
//! with other numbers, and the same square with a forecast's numbers) and
//! 24 posts on other themes (`support/evidence.rs`). The real MiniLM
//! embedder and the embedded SQLite index.
//!
//! 1. Recall of the planted chunk at 1 and 5, two queries per fact (the
//!    take's query, `LABEL: description`; and a question), for Agon's
//!    evidence search (BM25 + dense, fused, ranked by relevance) beside
//!    dense search alone and BM25 alone.
//! 2. A scripted structured debate on the three aspects (2 minirounds,
//!    default budget): the share of takes whose EVIDENCE holds the planted
//!    fact of the take's aspect, and the tokens the section costs (mean,
//!    and its share of the take's prompt: mean and largest).
//!
//! With `--local`, instead, `examples/evidence.toml` runs on the local
//! model (SmolLM2-135M speaking and analysing): the share of takes of
//! personas with a corpus that cite a real chunk id, and the invented ids
//! caught.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "support/evidence.rs"]
mod support;

use std::sync::Arc;

use agon_llm::{Embedder, ModelFactory, PriceTable};
use agon_memory::{Memory, RetrievalConfig};
use agon_orchestrator::RunControl;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if std::env::args().any(|a| a == "--local") {
        runtime.block_on(local());
    } else {
        runtime.block_on(run());
    }
}

fn sqlite(dir: &tempfile::TempDir, name: &str) -> String {
    format!("sqlite://{}", dir.path().join(name).display())
}

/// The memory in the SQLite file at `url`, with MiniLM.
async fn memory_at(url: &str) -> Memory {
    let embedder: Arc<dyn Embedder> =
        Arc::new(agon_local::LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")));
    let index = agon_memory::open(url).await.unwrap();
    Memory::open(index, embedder, RetrievalConfig::default())
        .await
        .unwrap()
}

async fn run() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite(&dir, "evidence.db");
    let memory = memory_at(&url).await;
    let (planted, chunks) = support::index(&memory, &support::TUNED).await;
    println!(
        "## Corpus evidence: {} personas × {chunks} chunks, {} planted facts\n",
        support::PERSONAS.len(),
        planted.len()
    );
    println!(
        "| corpus | method | recall@1 | recall@3 (what EVIDENCE shows) | recall@5 | queries |\n|---|---|---|---|---|---|"
    );
    for (name, row) in support::recall(&memory, &support::TUNED, &planted).await {
        println!(
            "| {} | {name} | {:.2} | {:.2} | {:.2} | {} |",
            support::TUNED.name,
            row.at1,
            row.at3,
            row.at5,
            row.queries
        );
    }
    // The held-out corpus, in a store of its own.
    let held_out = memory_at(&sqlite(&dir, "held-out.db")).await;
    let (held_planted, _) = support::index(&held_out, &support::HELD_OUT).await;
    for (name, row) in support::recall(&held_out, &support::HELD_OUT, &held_planted).await {
        println!(
            "| {} | {name} | {:.2} | {:.2} | {:.2} | {} |",
            support::HELD_OUT.name,
            row.at1,
            row.at3,
            row.at5,
            row.queries
        );
    }
    let f = support::debate(&url, memory, &planted).await;
    println!(
        "\n| scripted debate | takes | EVIDENCE holds the planted fact | EVIDENCE tokens (mean) | share of the take's prompt (mean / max) |\n|---|---|---|---|---|"
    );
    println!(
        "| 3 personas × 3 aspects × 2 minirounds, default budget | {} | {:.2} | {:.0} | {:.1} % / {:.1} % |",
        f.takes,
        f.with_planted as f64 / f.takes.max(1) as f64,
        f.evidence_tokens,
        f.mean_share * 100.0,
        f.max_share * 100.0
    );
}

async fn local() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let (config, _) = agon_config::DebateConfig::load_with(&root.join("evidence.toml"), &|p| {
        std::fs::read_to_string(p)
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite(&dir, "local.db");
    let memory = memory_at(&url).await;
    for persona in &config.personas {
        let id = agon_core::PersonaId::new(persona.resolved_id());
        for path in &persona.corpus {
            let format = agon_memory::CorpusFormat::of_path(path).unwrap();
            let text = std::fs::read_to_string(path).unwrap();
            let chunks = agon_memory::corpus::chunk(&text, format, "corpus").unwrap();
            let file = path.file_name().unwrap().to_str().unwrap();
            memory
                .add_corpus(&id, file, &chunks, chrono::Utc::now())
                .await
                .unwrap();
        }
    }
    let store = agon_store::open(&url).await.unwrap();
    let orch = agon_app::orchestrator_for(store).with_memory(memory);
    let factory = ModelFactory::new().with_local(Arc::new(agon_local::Backends));
    let models =
        agon_app::models_from_config(&config, &factory, &|_| None, PriceTable::default()).unwrap();
    let started = std::time::Instant::now();
    let id = orch.create(&config).await.unwrap();
    orch.run(&id, &models, RunControl::default()).await.unwrap();
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let speaking: Vec<_> = bb
        .messages()
        .iter()
        .filter(|m| bb.persona(&m.persona).is_some_and(|p| p.is_debater()))
        .collect();
    let citing_real = bb
        .citations()
        .iter()
        .filter(|c| !c.cited.is_empty())
        .count();
    let citing_any = bb.citations().len();
    let rejected: usize = bb.citations().iter().map(|c| c.rejected.len()).sum();
    let real: usize = bb.citations().iter().map(|c| c.cited.len()).sum();
    println!(
        "## examples/evidence.toml on the local model ({:.0} s)\n",
        started.elapsed().as_secs_f64()
    );
    println!(
        "| messages | citing anything | citing a real chunk | real ids cited | invented ids caught |\n|---|---|---|---|---|"
    );
    println!(
        "| {} | {citing_any} | {citing_real} ({:.0} %) | {real} | {rejected} |",
        speaking.len(),
        citing_real as f64 * 100.0 / speaking.len().max(1) as f64
    );
}
