//! `cargo xtask bench load`: 20 debates of the three protocols at once
//! (7 structured, 7 dialectic, 6 deliberation; the small configurations
//! of the fault and load tests), four ways: in one process through the
//! library API and as 20 `agon debate` processes, each on one SQLite file
//! and on one PostgreSQL database (`AGON_BENCH_DATABASE_URL`). The models
//! answer after 5 ms: the scripted model in process, the same answers from
//! a stub OpenAI-compatible server for the processes.
//!
//! Reported: wall time, debates and messages per second, and the step
//! latency: the time between two consecutive messages of a debate (what a
//! reader waits for the next one), median and p95 over every debate.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agon_core::DebateId;
use agon_orchestrator::{Models, RunControl, RunOutcome};
use agon_store::EventStore;
use agon_testkit::ScriptedModel;
use support::{AGON, fresh_database};

const DEBATES: usize = 20;
const DELAY: Duration = Duration::from_millis(5);

/// The gaps between consecutive messages of every debate, in ms.
async fn gaps(store: &Arc<dyn EventStore>) -> (Vec<f64>, usize) {
    let mut gaps = Vec::new();
    let mut messages = 0;
    for record in store.list_debates().await.unwrap() {
        let (bb, _) = store.load(&record.id).await.unwrap();
        let times: Vec<_> = bb.messages().iter().map(|m| m.time).collect();
        messages += times.len();
        for pair in times.windows(2) {
            gaps.push((pair[1] - pair[0]).num_microseconds().unwrap_or(0) as f64 / 1000.0);
        }
    }
    gaps.sort_by(f64::total_cmp);
    (gaps, messages)
}

fn protocol(i: usize) -> &'static str {
    support::runner::PROTOCOLS[i % 3]
}

async fn in_process(url: &str) -> Duration {
    let store = agon_store::open(url).await.unwrap();
    let orch = Arc::new(agon_app::orchestrator_for(store));
    let models = Models::uniform(
        Arc::new(ScriptedModel::new(DELAY)),
        agon_llm::PriceTable::default(),
    );
    let mut ids: Vec<DebateId> = Vec::new();
    for i in 0..DEBATES {
        ids.push(
            orch.create(&support::runner::config(protocol(i)))
                .await
                .unwrap(),
        );
    }
    let start = Instant::now();
    let runs: Vec<_> = ids
        .into_iter()
        .map(|id| {
            let (orch, models) = (Arc::clone(&orch), models.clone());
            tokio::spawn(async move { orch.run(&id, &models, RunControl::default()).await })
        })
        .collect();
    for run in runs {
        assert!(matches!(run.await.unwrap(), Ok(RunOutcome::Finished)));
    }
    start.elapsed()
}

async fn processes(url: &str, files: &[std::path::PathBuf]) -> Duration {
    // The store is created before the clock starts.
    drop(agon_store::open(url).await.unwrap());
    let start = Instant::now();
    let children: Vec<_> = (0..DEBATES)
        .map(|i| {
            Command::new(AGON)
                .env("AGON_STORE", url)
                .args([
                    "debate",
                    "--quiet",
                    "--config",
                    files[i % 3].to_str().unwrap(),
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(!err.to_lowercase().contains("locked"), "{err}");
    }
    start.elapsed()
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let admin = std::env::var("AGON_BENCH_DATABASE_URL").ok();
    let (server, _) = support::stub(DELAY).await;
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = support::configs(dir.path(), &server.uri())
        .into_iter()
        .map(|(_, path)| path)
        .collect();
    println!(
        "| how | store | wall time | debates/s | messages/s | step latency median | step latency p95 |"
    );
    println!("|---|---|---|---|---|---|---|");
    let ways = [
        ("one process, library API", "SQLite"),
        ("one process, library API", "PostgreSQL"),
        ("20 `agon debate` processes", "SQLite"),
        ("20 `agon debate` processes", "PostgreSQL"),
    ];
    // Three interleaved rounds; each row is the round of median wall time.
    let mut rows: Vec<Vec<(f64, usize, f64, f64)>> = vec![Vec::new(); ways.len()];
    for round in 0..3 {
        for (i, (how, store)) in ways.iter().enumerate() {
            let name = format!(
                "agon_bench_load_{}_{}_{round}",
                if how.starts_with("one") {
                    "lib"
                } else {
                    "proc"
                },
                store.to_lowercase()
            );
            let url = if *store == "SQLite" {
                format!(
                    "sqlite://{}",
                    dir.path().join(format!("{name}.db")).display()
                )
            } else {
                let Some(admin) = &admin else {
                    continue;
                };
                fresh_database(admin, &name).await
            };
            let wall = if how.starts_with("one") {
                in_process(&url).await
            } else {
                processes(&url, &files).await
            };
            let (gaps, messages) = gaps(&agon_store::open(&url).await.unwrap()).await;
            rows[i].push((
                wall.as_secs_f64(),
                messages,
                pct(&gaps, 0.5),
                pct(&gaps, 0.95),
            ));
        }
    }
    for ((how, store), mut runs) in ways.into_iter().zip(rows) {
        if runs.is_empty() {
            println!(
                "| {how} | {store} | (AGON_BENCH_DATABASE_URL unset: `cargo xtask bench load`) | | | | |"
            );
            continue;
        }
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (secs, messages, median, p95) = runs[runs.len() / 2];
        println!(
            "| {how} | {store} | {secs:.2} s | {:.1} | {:.0} | {median:.0} ms | {p95:.0} ms |",
            DEBATES as f64 / secs,
            messages as f64 / secs,
        );
    }
}
