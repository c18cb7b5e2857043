//! `cargo xtask bench debate`: the orchestrator's overhead.
//!
//! A stub model behind a local OpenAI-compatible HTTP server answers every
//! call after a fixed 50 ms, to a tenth of a millisecond (`timed_stub`). A
//! 3-persona × 3-aspect × 3-miniround debate runs on it (SQLite store), as
//! a user's default debate runs: with the vector memory on (the embedded
//! MiniLM, its index in the store's database), and, interleaved with it
//! round by round, with the memory off. Reported: wall
//! time ÷ (utterances × 50 ms) for each, prompt tokens of each utterance
//! call against its message index (must stay flat: bounded by the context
//! budget), and calls by role. The same walls are also divided by the
//! stub's latency as a caller sees it (measured first: 50 ms plus the
//! round trip through the HTTP client and server), the overhead against an
//! ideal sequential caller of the same stub. The last line is
//! `overhead ratio: X`, the median with the memory on against the 50 ms
//! asked.

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

#[path = "support/timed_stub.rs"]
mod timed_stub;

use std::time::{Duration, Instant};

use support::{prompt_split, prompt_split_with};

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
    // The timed debates' model: answers that take the delay asked, exactly.
    let stub = timed_stub::TimedStub::start(delay());
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
    config.models.default = format!("openai-compatible:stub@{}/v1", stub.uri());

    let dir = std::env::temp_dir().join(format!("agon-bench-debate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = agon_store::open(&format!("sqlite://{}", dir.join("bench.db").display()))
        .await
        .unwrap();
    let orch = agon_app::orchestrator_for(store.clone());
    let memory_url = format!("sqlite://{}", dir.join("bench.db").display());
    let embedder: std::sync::Arc<dyn agon_llm::Embedder> =
        std::sync::Arc::new(agon_local::LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")));
    let memory_index = agon_memory::open(&memory_url).await.unwrap();
    // A memory opened afresh for each debate, as `agon debate` opens it:
    // nothing recalled for one debate is kept for the next.
    let with_memory = || async {
        let memory = agon_memory::Memory::open(
            std::sync::Arc::clone(&memory_index),
            std::sync::Arc::clone(&embedder),
            config.memory.retrieval,
        )
        .await
        .unwrap();
        agon_app::orchestrator_for(store.clone()).with_memory(memory)
    };
    let models = agon_app::models_from_config(
        &config,
        &ModelFactory::new(),
        &|_| None,
        PriceTable::default(),
    )
    .unwrap();

    // What one model call costs a caller that does nothing else: the
    // stub's answer streamed through the same client: the 50 ms and the
    // round trip (wiremock's stub, on tokio's 1 ms timer, took 51.3–52).
    let latency = stub_latency(&models).await;
    println!(
        "stub latency as a caller sees it (median of 15 streamed calls): {:.2} ms (asked: {} ms)",
        latency.as_secs_f64() * 1e3,
        delay().as_millis()
    );

    // One warm-up round (connections, tokenizer tables, the embedder), then
    // three measured ones; each round runs the debate with the memory off
    // and on, in alternating order.
    let mut ratios = Vec::new();
    let mut ratios_off = Vec::new();
    let mut last = None;
    for run in 0..4 {
        let modes = if run % 2 == 1 {
            [false, true]
        } else {
            [true, false]
        };
        for memory_on in modes {
            let fresh;
            let orch = if memory_on {
                fresh = with_memory().await;
                &fresh
            } else {
                &orch
            };
            let id = orch.create(&config).await.unwrap();
            let started = Instant::now();
            orch.run(&id, &models, RunControl::default()).await.unwrap();
            let wall = started.elapsed();
            let (bb, _) = orch.store().load(&id).await.unwrap();
            let utterances = bb.messages().len();
            let ratio = wall.as_secs_f64() / (utterances as f64 * delay().as_secs_f64().max(1e-3));
            if run > 0 {
                println!(
                    "run {run}, memory {}: {utterances} utterances in {:.0} ms → ratio {ratio:.3}",
                    if memory_on { "on " } else { "off" },
                    wall.as_secs_f64() * 1e3
                );
                if memory_on {
                    ratios.push(ratio);
                } else {
                    ratios_off.push(ratio);
                }
            }
            let received = stub.take_received();
            if memory_on {
                last = Some((bb, received));
            }
        }
    }
    let (bb, received) = last.unwrap();
    if !bb.warnings().is_empty() {
        println!("warnings: {:?}", bb.warnings());
    }

    let counter = TiktokenCounter::default();
    let mut tokens = Vec::new();
    for body in &received {
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
    // The prompt splits time nothing: wiremock's stub, answering at once.
    let server = wiremock::MockServer::start().await;
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
            // The same debate with turns as long as the default asks.
            let long = prompt_split_with(&server, &orch, cadence, 120).await;
            let stability = prefix::stability(&long.prompts, &TiktokenCounter::default());
            println!(
                "\nthe same with 120-word turns (the default length):\n{}{}",
                stability.table(),
                stability.projection()
            );
        }
    }
    ratios_off.sort_by(f64::total_cmp);
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    let median_off = ratios_off[ratios_off.len() / 2];
    // The same walls against the stub's latency as a caller sees it.
    let calibrated = delay().as_secs_f64() / latency.as_secs_f64().max(1e-6);
    println!(
        "\noverhead ratio against the stub's measured latency: memory off {:.3}, memory on {:.3}",
        median_off * calibrated,
        median * calibrated
    );
    println!("overhead ratio, memory off: {median_off:.3}");
    println!("overhead ratio: {median:.3}");
    // The scratch store (its file and WAL, about 5 MB a run).
    let _ = std::fs::remove_dir_all(&dir);
}

/// The median time of 15 streamed calls to the stub through the debaters'
/// client, read to the end.
async fn stub_latency(models: &agon_orchestrator::Models) -> Duration {
    use futures::StreamExt as _;
    let model = models.get(agon_orchestrator::Role::Debater, None);
    let mut times = Vec::new();
    for _ in 0..15 {
        let started = Instant::now();
        let mut stream = model
            .stream(
                agon_llm::ChatRequest::new("Say one sentence about cities.").with_max_tokens(60),
            )
            .await
            .unwrap();
        while stream.next().await.is_some() {}
        times.push(started.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}
