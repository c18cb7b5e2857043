//! Memory-recall harness: `cargo xtask bench memory --dataset FILE`
//! (or `cargo bench -p agon-memory --bench recall -- --dataset FILE`).
//!
//! Indexes every turn of a LoCoMo-format dataset as a memory of its speaker
//! (local MiniLM embeddings) and prints evidence recall per category and
//! overall for dense-nameless, bm25, dense, fusion and agon, ending with the plain table
//! `method recall@5 recall@10 recall@1000tok p50_ms`.
//!
//! Options: `--budget TOKENS` (default 1000), `--lexical-share X` and
//! `--candidates N` (override the retrieval defaults, for exploration);
//! `--dump FILE` writes every question's raw signals instead (the analyzed
//! terms of each turn and question, the cosine to every turn with and
//! without the `SPEAKER:` prefix, the vectors of the turns without it and
//! of the nameless question), one JSON line per sample, so fusion,
//! scoring and dense feedback can be explored offline without embedding
//! again.

use std::path::PathBuf;
use std::sync::Arc;

use agon_llm::Embedder;
use agon_local::{LocalEmbedder, Precision};
use agon_memory::RetrievalConfig;
use agon_memory::locomo::{evaluate, load};

fn usage() -> ! {
    eprintln!(
        "usage: recall --dataset FILE [--budget TOKENS] [--lexical-share X] [--candidates N] [--precision int8|f32]"
    );
    std::process::exit(2)
}

fn main() {
    let mut dataset: Option<PathBuf> = None;
    let mut dump: Option<PathBuf> = None;
    let mut budget = 1_000usize;
    let mut config = RetrievalConfig::default();
    let mut precision = Precision::fastest();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--dataset" => dataset = Some(PathBuf::from(value())),
            "--budget" => budget = value().parse().unwrap_or_else(|_| usage()),
            "--lexical-share" => config.lexical_share = value().parse().unwrap_or_else(|_| usage()),
            "--candidates" => config.candidates = value().parse().unwrap_or_else(|_| usage()),
            "--dump" => dump = Some(PathBuf::from(value())),
            "--precision" => {
                precision = match value().as_str() {
                    "int8" => Precision::Int8,
                    "f32" => Precision::F32,
                    _ => usage(),
                }
            }
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
    eprintln!("embedder: MiniLM, {precision:?} products");
    let embedder: Arc<dyn Embedder> = match LocalEmbedder::minilm_at(precision) {
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
    if let Some(out) = dump {
        if let Err(e) = runtime.block_on(write_dump(&samples, embedder.as_ref(), &out)) {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
        return;
    }
    match runtime.block_on(evaluate(&samples, embedder, config, budget)) {
        Ok(report) => print!("{}", report.render()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
    }
}

async fn embed_all(
    embedder: &dyn Embedder,
    texts: &[String],
    input: agon_llm::InputType,
) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error>> {
    let mut out = Vec::with_capacity(texts.len());
    for batch in texts.chunks(embedder.max_batch().max(1)) {
        for mut v in embedder.embed(batch, input).await? {
            agon_memory::normalize(&mut v)?;
            out.push(v);
        }
    }
    Ok(out)
}

/// The raw signals of every question (see the module docs), for offline
/// exploration of fusion and scoring.
async fn write_dump(
    samples: &[agon_memory::locomo::Sample],
    embedder: &dyn Embedder,
    out: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    use agon_context::{TiktokenCounter, TokenCounter};
    use agon_llm::InputType;
    use std::io::Write;
    let analyzer = agon_memory::Analyzer::default();
    let counter = TiktokenCounter::default();
    let mut file = std::io::BufWriter::new(std::fs::File::create(out)?);
    for sample in samples {
        let full: Vec<String> = sample.turns.iter().map(|(t, _)| t.memory_text()).collect();
        let bare: Vec<String> = sample.turns.iter().map(|(t, _)| t.content()).collect();
        let full_v = embed_all(embedder, &full, InputType::Document).await?;
        let bare_v = embed_all(embedder, &bare, InputType::Document).await?;
        let questions: Vec<String> = sample
            .questions
            .iter()
            .map(|q| q.question.clone())
            .collect();
        let query_v = embed_all(embedder, &questions, InputType::Query).await?;
        let speakers: std::collections::BTreeSet<&str> = sample
            .turns
            .iter()
            .map(|(t, _)| t.speaker.as_str())
            .collect();
        let nameless: Vec<String> = questions
            .iter()
            .map(|q| {
                speakers.iter().fold(q.clone(), |q, name| {
                    q.replace(&format!("{name}'s"), "their")
                        .replace(name, "someone")
                })
            })
            .collect();
        let nameless_v = embed_all(embedder, &nameless, InputType::Query).await?;
        let round = |x: f32| (x * 10_000.0).round() / 10_000.0;
        let rounded = |v: &[f32]| -> Vec<f32> { v.iter().map(|x| round(*x)).collect() };
        let turns: Vec<serde_json::Value> = sample
            .turns
            .iter()
            .zip(full.iter().zip(&bare_v))
            .map(|((t, time), (text, vector))| {
                serde_json::json!({
                    "id": t.dia_id,
                    "speaker": t.speaker,
                    "time": time.timestamp(),
                    "tokens": counter.count(text),
                    "terms": analyzer.terms(text),
                    "text": text,
                    "vector": rounded(vector),
                })
            })
            .collect();
        let qs: Vec<serde_json::Value> = sample
            .questions
            .iter()
            .zip(query_v.iter().zip(&nameless_v))
            .map(|(q, (qv, nv))| {
                let cos = |vs: &[Vec<f32>]| -> Vec<f32> {
                    vs.iter().map(|v| round(agon_memory::dot(qv, v))).collect()
                };
                serde_json::json!({
                    "question": q.question,
                    "category": q.category,
                    "evidence": q.evidence,
                    "terms": analyzer.terms(&q.question),
                    "cos": cos(&full_v),
                    "cos_bare": cos(&bare_v),
                    "cos_nameless": bare_v.iter().map(|v| round(agon_memory::dot(nv, v))).collect::<Vec<f32>>(),
                    "vector_nameless": rounded(nv),
                })
            })
            .collect();
        serde_json::to_writer(
            &mut file,
            &serde_json::json!({"sample": sample.id, "turns": turns, "questions": qs}),
        )?;
        writeln!(file)?;
        eprintln!("dumped {} ({} turns)", sample.id, sample.turns.len());
    }
    file.flush()?;
    Ok(())
}
