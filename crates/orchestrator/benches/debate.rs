//! `cargo xtask bench debate`: the orchestrator's overhead.
//!
//! A stub model behind a local OpenAI-compatible HTTP server answers every
//! call after a fixed 50 ms. A 3-persona × 3-aspect × 3-miniround debate runs
//! on it (SQLite store). Reported: wall time ÷ (utterances × 50 ms), prompt
//! tokens of each utterance call against its message index (must stay flat:
//! bounded by the context budget), and calls by role. The last line is
//! `overhead ratio: X`.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::field_reassign_with_default
)]

#[path = "support/debate.rs"]
mod support;

#[path = "support/prefix.rs"]
mod prefix;

use std::time::{Duration, Instant};

use support::{Stub, prompt_split};

use agon_config::{AnalysisCadence, AspectConfig, DebateConfig};
use agon_context::{TiktokenCounter, TokenCounter};
use agon_llm::{ModelFactory, PriceTable};
use agon_orchestrator::RunControl;

const DELAY: Duration = Duration::from_millis(50);

fn delay() -> Duration {
    std::env::var("AGON_BENCH_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(DELAY, Duration::from_millis)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn run() {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Stub(delay()))
        .mount(&server)
        .await;
    let mut config = DebateConfig::default();
    config.personas = agon_config::default_personas();
    config.aspects = ["Cost", "Health", "Fairness"]
        .iter()
        .map(|l| AspectConfig {
            label: (*l).into(),
            description: format!("{l} of a car-free centre."),
        })
        .collect();
    config.minirounds = 3;
    config.crux.enabled = false;
    config.synthesis = false;
    // A budget the context reaches early, so the plateau shows.
    config.budget.context_tokens = 400;
    config.models.default = format!("openai-compatible:stub@{}/v1", server.uri());

    let dir = std::env::temp_dir().join(format!("agon-bench-debate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = agon_store::open(&format!("sqlite://{}", dir.join("bench.db").display()))
        .await
        .unwrap();
    let orch = agon_app::orchestrator_for(store);
    let models = agon_app::models_from_config(
        &config,
        &ModelFactory::new(),
        &|_| None,
        PriceTable::default(),
    )
    .unwrap();

    // One warm-up debate (connections, tokenizer tables), then the measured ones.
    let mut ratios = Vec::new();
    let mut last = None;
    for run in 0..4 {
        server.reset().await;
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .respond_with(Stub(delay()))
            .mount(&server)
            .await;
        let id = orch.create(&config).await.unwrap();
        let started = Instant::now();
        orch.run(&id, &models, RunControl::default()).await.unwrap();
        let wall = started.elapsed();
        let (bb, _) = orch.store().load(&id).await.unwrap();
        let utterances = bb.messages().len();
        let ratio = wall.as_secs_f64() / (utterances as f64 * delay().as_secs_f64().max(1e-3));
        if run > 0 {
            println!(
                "run {run}: {utterances} utterances in {:.0} ms → ratio {ratio:.3}",
                wall.as_secs_f64() * 1e3
            );
            ratios.push(ratio);
        }
        last = Some(bb);
    }
    let bb = last.unwrap();

    let counter = TiktokenCounter::default();
    let mut tokens = Vec::new();
    for request in server.received_requests().await.unwrap() {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        if body["stream"].as_bool() != Some(true) {
            continue;
        }
        let text: String = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n");
        tokens.push(counter.count(&text));
    }
    println!("\nprompt tokens per utterance call (message index: tokens):");
    let line: Vec<String> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{}:{t}", i + 1))
        .collect();
    for chunk in line.chunks(11) {
        println!("  {}", chunk.join("  "));
    }
    let takes: Vec<usize> = tokens[3..tokens.len() - 3].to_vec();
    let (first, last_take) = (
        takes[..3].iter().sum::<usize>() / 3,
        takes[takes.len() - 3..].iter().sum::<usize>() / 3,
    );
    println!(
        "takes: first three {first} tokens on average, last three {last_take}, max {} (context budget {} + system + instruction)",
        takes.iter().max().unwrap(),
        config.budget.context_tokens
    );

    println!("\ncalls per debate by role:");
    for (role, models) in bb.usage() {
        let calls: u64 = models.values().map(|u| u.calls).sum();
        println!("  {role:<10} {calls}");
    }
    for cadence in [AnalysisCadence::Message, AnalysisCadence::Miniround] {
        let split = prompt_split(&server, &orch, cadence).await;
        for note in &split.notes {
            println!("{note}");
        }
        println!(
            "\nprompt tokens of the default debate by call (o200k, schema included; analysis cadence {cadence:?}):"
        );
        let total = split.total();
        for (kind, (calls, tokens)) in &split.calls {
            println!(
                "  {kind:<20} {calls:>3} calls {tokens:>7} tokens ({:.0} %)",
                *tokens as f64 * 100.0 / total.max(1) as f64
            );
        }
        println!(
            "  total {total}; memory calls {} ÷ utterances {} = {:.2}×",
            split.memory().1,
            split.utterances().1,
            split.memory_ratio()
        );
        if cadence == AnalysisCadence::Miniround {
            let stability = prefix::stability(&split.prompts, &TiktokenCounter::default());
            println!(
                "\nprefix stability of the default debate (prompt tokens shared with a prompt sent earlier in it, by call):\n{}{}",
                stability.table(),
                stability.projection()
            );
        }
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    println!("\noverhead ratio: {median:.3}");
}
