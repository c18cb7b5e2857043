//! `cargo xtask bench kill`: kill anywhere. For every protocol and both
//! stores, `agon debate` is killed with SIGKILL at 50 seeded points of its
//! event log (the moment the debate reaches the N-th event: inside
//! background analyses, summaries, crux rooms, the judge, the finish),
//! then resumed with `agon resume`. Counts: kills that landed mid-run, and
//! resumed debates whose blackboard equals the uninterrupted run's (so no
//! message lost and no step repeated). The stub provider answers after
//! 10 ms with the scripted model.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use support::{canonical, configs, kill_at, pg_url_on, reference_events, references, stub};

const POINTS: usize = 50;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let admin = std::env::var("AGON_BENCH_DATABASE_URL").ok();
    let (server, _) = stub(Duration::from_millis(10)).await;
    let dir = tempfile::tempdir().unwrap();
    let configs = configs(dir.path(), &server.uri());
    let expected = references(dir.path(), &configs);
    let events = reference_events(dir.path());
    println!(
        "| protocol | store | events in the log | kills | landed mid-run | resumed equal to the uninterrupted run | wall time |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut rng = fastrand::Rng::with_seed(2026);
    for (protocol, path) in &configs {
        let total = i64::try_from(events[*protocol]).unwrap();
        for store_kind in ["SQLite", "PostgreSQL"] {
            if store_kind == "PostgreSQL" && admin.is_none() {
                println!(
                    "| {protocol} | PostgreSQL | (AGON_BENCH_DATABASE_URL unset: `cargo xtask bench kill`) | | | | |"
                );
                continue;
            }
            let start = Instant::now();
            let (mut landed, mut equal) = (0, 0);
            for point in 0..POINTS {
                let at = rng.i64(1..total);
                let store = match &admin {
                    Some(admin) if store_kind == "PostgreSQL" => pg_url_on(admin, "kill").await,
                    _ => format!(
                        "sqlite://{}",
                        dir.path().join(format!("{protocol}-{point}.db")).display()
                    ),
                };
                let (id, hit) = kill_at(&store, path, at).await;
                landed += usize::from(hit);
                if canonical(&store, &id) == expected[*protocol] {
                    equal += 1;
                } else {
                    println!(
                        "  {protocol} on {store_kind}: killed at event {at} of {total}: the resumed debate differs"
                    );
                }
            }
            println!(
                "| {protocol} | {store_kind} | {total} | {POINTS} | {landed} | {equal} | {:.0} s |",
                start.elapsed().as_secs_f64()
            );
        }
    }
}
