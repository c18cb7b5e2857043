//! `cargo xtask bench requirements`: the share of planted requirements the
//! ledger tracks, against dialectic 0.7's keyword inference, on problem
//! statements written for Agon (benches/support/requirements.rs: 26
//! requirements in 5 problems, 9 explicit and 17 implicit).
//!
//! The ledger's column is the one `requirements` call Agon makes before
//! round 1, answered by a real model: `--model SPEC` (default `local`, the
//! in-process SmolLM2), with its keyword fallback when the call fails.
//! dialectic's column is its inference over the problem's lines (it reads
//! no clarification). An item tracks a planted requirement when it holds
//! every one of the requirement's terms; "own item" counts the
//! requirements tracked by an item that tracks no other (what a coverage
//! verdict per requirement needs). The extra prompt tokens of the tracking
//! on dialectic's reference benchmark are checked in tests/headline.rs.

use std::sync::Arc;
use std::time::Instant;

use agon_llm::{ChatRequest, JsonSchema, ModelFactory, ModelSpec};
use agon_protocol::Background;
use agon_protocol::background_job::request;

#[path = "support/requirements.rs"]
mod set;

fn row(method: &str, s: &set::Score) {
    println!(
        "| {method} | {} | {} | {:.0} % | {} | {} |",
        set::Score::pct(s.explicit),
        set::Score::pct(s.implicit),
        100.0 * s.overall(),
        s.own_item,
        s.items
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let spec = args
        .iter()
        .position(|a| a == "--model")
        .and_then(|i| args.get(i + 1))
        .map_or("local", String::as_str);
    let spec: ModelSpec = spec.parse().unwrap_or_else(|e| panic!("{e}"));
    let factory = ModelFactory::new().with_local(Arc::new(agon_local::Backends));
    let model = factory
        .build(&spec, &|k| std::env::var(k).ok())
        .unwrap_or_else(|e| panic!("{e}"));

    let keywords = set::keyword_score();
    let mut ledger = set::Score::default();
    let mut latencies = Vec::new();
    let mut fallbacks = 0;
    println!("## Requirements tracked ({spec})\n");
    for problem in &set::SET {
        let board = set::board(problem);
        let Some(job) = request(&board, &Background::Requirements) else {
            panic!("{}: no problem to read", problem.name)
        };
        let call = job.primary;
        let req = ChatRequest::new(call.prompt.user)
            .with_system(call.prompt.system)
            .with_temperature(0.0)
            .with_max_tokens(700)
            .with_purpose("requirements");
        let started = Instant::now();
        let output = model
            .complete_json(req, &JsonSchema::new(call.name, call.schema))
            .await
            .map(|r| r.value)
            .map_err(|e| agon_protocol::ModelFailure::other(e.to_string()));
        latencies.push(started.elapsed());
        let events =
            agon_protocol::requirements::events(&board, output, chrono::DateTime::UNIX_EPOCH);
        for e in &events {
            if let agon_core::DebateEvent::StepFailed { reason, .. } = e {
                fallbacks += 1;
                println!("  ({}: {reason})", problem.name);
            }
        }
        let items: Vec<String> = events
            .iter()
            .find_map(|e| match e {
                agon_core::DebateEvent::RequirementsRecorded { requirements, .. } => {
                    Some(requirements.iter().map(|r| r.text.clone()).collect())
                }
                _ => None,
            })
            .unwrap_or_default();
        let mut one = set::Score::default();
        one.add(problem, &items);
        println!(
            "- {}: {} items, {:.0} % tracked ({:.1} s)",
            problem.name,
            items.len(),
            100.0 * one.overall(),
            latencies.last().map_or(0.0, |d| d.as_secs_f64())
        );
        if args.iter().any(|a| a == "--show") {
            for item in &items {
                println!("  · {item}");
            }
        }
        ledger.add(problem, &items);
    }
    latencies.sort();
    println!(
        "\n| method | explicit | implicit | overall | own item | items |\n|---|---|---|---|---|---|"
    );
    row("dialectic 0.7 keyword inference", &keywords);
    row(&format!("Agon ledger, {spec}"), &ledger);
    println!(
        "\nmedian call {:.1} s; {fallbacks} of {} calls fell back to the keywords",
        latencies[latencies.len() / 2].as_secs_f64(),
        latencies.len()
    );
}
