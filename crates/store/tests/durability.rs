//! Durability under SIGKILL: a child process appends batches of 10 events in
//! a loop, printing `ACK <seq>` after each commit; the parent kills it with
//! SIGKILL at a random moment and checks that every acknowledged event is
//! stored, no batch is half-written, and the log replays. 20 runs per backend.
//!
//! The child is this test binary itself, running the ignored test
//! `child_appender` with the store URL and debate id in its environment.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use crate::support;

use std::process::Stdio;
use std::time::Duration;

use agon_core::Blackboard;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use support::{Place, events, new_debate};

const BATCH: usize = 10;
const RUNS: usize = 20;
/// Enough events for the child to never run out before it is killed.
const MESSAGES: usize = 4_000;

/// Child mode: appends until killed (or out of events).
#[tokio::test]
#[ignore = "run as a child process by the kill tests"]
async fn child_appender() {
    let (Ok(url), Ok(debate)) = (
        std::env::var("AGON_CHILD_STORE_URL"),
        std::env::var("AGON_CHILD_DEBATE"),
    ) else {
        return;
    };
    let store = agon_store::open(&url).await.unwrap();
    let all = events(MESSAGES);
    let mut seq = 0u64;
    for batch in all.chunks(BATCH) {
        seq = store
            .append(&debate.as_str().into(), seq, batch)
            .await
            .unwrap();
        println!("ACK {seq}");
    }
}

async fn kill_at_random_moments(place: Place, label: &str) {
    let store = place.open().await;
    let all = events(MESSAGES);
    let exe = std::env::current_exe().unwrap();
    let mut rng = fastrand::Rng::with_seed(0xA605 + label.len() as u64);
    let mut total_acked = 0;
    for run in 0..RUNS {
        let debate = format!("kill-{run}");
        store.create_debate(&new_debate(&debate)).await.unwrap();
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "durability::child_appender",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("AGON_CHILD_STORE_URL", place.url())
            .env("AGON_CHILD_DEBATE", &debate)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut acked = 0u64;
        // Wait for the first acknowledgement, then let it run a random while.
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(seq) = line.strip_prefix("ACK ") {
                acked = seq.parse().unwrap();
                break;
            }
        }
        assert!(
            acked > 0,
            "{label} run {run}: the child acknowledged nothing"
        );
        let wait = Duration::from_millis(rng.u64(5..250));
        let _ = tokio::time::timeout(wait, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(seq) = line.strip_prefix("ACK ") {
                    acked = seq.parse().unwrap();
                }
            }
        })
        .await;
        child.start_kill().unwrap(); // SIGKILL
        // Everything the child printed before it died counts as acknowledged.
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(seq) = line.strip_prefix("ACK ") {
                acked = seq.parse().unwrap();
            }
        }
        child.wait().await.unwrap();
        // A transaction the child sent before it died may still be committing
        // in the server (PostgreSQL finishes it); wait until the log is still.
        let mut last = u64::MAX;
        for _ in 0..50 {
            let now = store
                .debate(&debate.as_str().into())
                .await
                .unwrap()
                .last_seq;
            if now == last {
                break;
            }
            last = now;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        let stored = store
            .events_after(&debate.as_str().into(), 0)
            .await
            .unwrap();
        let n = stored.len();
        assert!(
            n as u64 >= acked,
            "{label} run {run}: {n} events stored but {acked} acknowledged"
        );
        assert_eq!(
            n % BATCH,
            0,
            "{label} run {run}: a batch was half-written ({n} events)"
        );
        assert!(
            stored.iter().enumerate().all(|(i, e)| e.event == all[i]),
            "{label} run {run}: stored events differ"
        );
        let (board, seq) = store.load(&debate.as_str().into()).await.unwrap();
        assert_eq!(seq, n as u64);
        assert_eq!(
            board,
            Blackboard::replay(&all[..n]).unwrap(),
            "{label} run {run}: the log replays"
        );
        assert!(
            n < all.len(),
            "{label} run {run}: the child finished before it was killed"
        );
        total_acked += acked;
    }
    assert!(total_acked > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_survives_sigkill_at_random_moments() {
    kill_at_random_moments(support::sqlite_place().await, "sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_survives_sigkill_at_random_moments() {
    kill_at_random_moments(support::postgres_place().await, "postgres").await;
}
