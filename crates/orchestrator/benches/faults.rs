//! `cargo xtask bench faults`: the structured debate, dialectic and
//! deliberation against a provider that faults 5 %, 20 % and 50 % of its
//! calls (429 with `Retry-After`, 500, 503, 529, resets, slow headers,
//! stalls, truncated answers, malformed JSON, empty choices,
//! schema-invalid and whitespace answers; `agon_testkit::faults`), five
//! seeds each. Prints the table of docs/reliability.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "support/faults.rs"]
mod runner;

use std::collections::BTreeMap;

use runner::{Outcome, PROTOCOLS, run};

const SEEDS: u64 = 5;
const RATES: [f64; 3] = [0.05, 0.2, 0.5];

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    println!(
        "| protocol | fault rate | debates | finished in the first run | finished after a resume | \
         messages as on a healthy provider | of the others, with warnings | requests | \
         extra requests | faults injected | warnings per debate | extra tokens | wall time median |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut by_kind: BTreeMap<&str, u64> = BTreeMap::new();
    let mut errors: Vec<String> = Vec::new();
    for protocol in PROTOCOLS {
        let healthy = run(protocol, 0.0, 1, dir.path()).await;
        assert!(healthy.finished_first, "{protocol}: {:?}", healthy.error);
        for rate in RATES {
            let mut outcomes: Vec<Outcome> = Vec::new();
            for seed in 0..SEEDS {
                outcomes.push(run(protocol, rate, 100 + seed, dir.path()).await);
            }
            for o in &outcomes {
                for (fault, n) in &o.faults.faults {
                    *by_kind.entry(fault.name()).or_default() += n;
                }
                if let Some(e) = &o.error {
                    errors.push(format!("{protocol} at {:.0} %: {e}", rate * 100.0));
                }
            }
            let n = outcomes.len() as f64;
            let first = outcomes.iter().filter(|o| o.finished_first).count();
            let finished = outcomes.iter().filter(|o| o.finished).count();
            let same = outcomes
                .iter()
                .filter(|o| o.messages == healthy.messages)
                .count();
            // A debate whose path changed (an analysis failed for good: a
            // claim not opened, a crux room not held) says so in a warning.
            let others = outcomes.iter().filter(|o| o.messages != healthy.messages);
            let explained = others.clone().filter(|o| o.warnings > 0).count();
            let others = others.count();
            let requests: u64 = outcomes.iter().map(|o| o.faults.requests).sum();
            let extra_requests =
                requests.saturating_sub(healthy.faults.requests * outcomes.len() as u64);
            let injected: u64 = outcomes.iter().map(|o| o.faults.injected()).sum();
            let warnings = outcomes.iter().map(|o| o.warnings).sum::<usize>() as f64 / n;
            let tokens = outcomes.iter().map(|o| o.tokens as f64).sum::<f64>() / n;
            let extra = tokens / healthy.tokens as f64 - 1.0;
            let mut walls: Vec<f64> = outcomes.iter().map(|o| o.wall.as_secs_f64()).collect();
            walls.sort_by(f64::total_cmp);
            println!(
                "| {protocol} | {:.0} % | {} | {first} | {finished} | {same} | {explained} of {others} | \
                 {requests} | {extra_requests} | {injected} | {warnings:.1} (healthy {}) | {:+.1} % | \
                 {:.1} s (healthy {:.1} s) |",
                rate * 100.0,
                outcomes.len(),
                healthy.warnings,
                extra * 100.0,
                walls[walls.len() / 2],
                healthy.wall.as_secs_f64(),
            );
        }
    }
    println!();
    println!("faults injected by kind: {by_kind:?}");
    println!("first-run errors ({}):", errors.len());
    for e in errors {
        println!("- {e}");
    }
}
