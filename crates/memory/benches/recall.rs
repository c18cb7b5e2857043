//! Memory-recall harness: `cargo xtask bench memory --dataset FILE`
//! (or `cargo bench -p agon-memory --bench recall -- --dataset FILE`).
//!
//! Indexes every turn of a LoCoMo-format dataset as a memory of its speaker
//! (local MiniLM embeddings) and prints evidence recall per category and
//! overall for bm25, dense, fusion and agon, ending with the plain table
//! `method recall@5 recall@10 recall@1000tok p50_ms`.
//!
//! Options: `--budget TOKENS` (default 1000), `--lexical-share X` and
//! `--candidates N` (override the retrieval defaults, for exploration).

use std::path::PathBuf;
use std::sync::Arc;

use agon_llm::Embedder;
use agon_local::LocalEmbedder;
use agon_memory::RetrievalConfig;
use agon_memory::locomo::{evaluate, load};

fn usage() -> ! {
    eprintln!(
        "usage: recall --dataset FILE [--budget TOKENS] [--lexical-share X] [--candidates N]"
    );
    std::process::exit(2)
}

fn main() {
    let mut dataset: Option<PathBuf> = None;
    let mut budget = 1_000usize;
    let mut config = RetrievalConfig::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--dataset" => dataset = Some(PathBuf::from(value())),
            "--budget" => budget = value().parse().unwrap_or_else(|_| usage()),
            "--lexical-share" => config.lexical_share = value().parse().unwrap_or_else(|_| usage()),
            "--candidates" => config.candidates = value().parse().unwrap_or_else(|_| usage()),
            "--bench" => {}
            _ => usage(),
        }
    }
    let Some(dataset) = dataset else { usage() };
    let samples = match load(&dataset) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
    };
    let embedder: Arc<dyn Embedder> = match LocalEmbedder::minilm() {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
    };
    match runtime.block_on(evaluate(&samples, embedder, config, budget)) {
        Ok(report) => print!("{}", report.render()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
    }
}
