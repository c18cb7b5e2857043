//! The shared rate limit on a real PostgreSQL (a fresh database on the
//! server of `AGON_TEST_DATABASE_URL`): gates on separate connection pools,
//! as separate workers have, spend one bucket, and a 429 one of them
//! reports pauses all of them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use agon_llm::RateGate;
use agon_worker::{NamedRateLimit, PgRateGate};
use sqlx::postgres::PgPoolOptions;

mod support;

use support::pg_url;

async fn gates(url: &str, n: usize) -> Vec<PgRateGate> {
    let mut gates = Vec::new();
    for _ in 0..n {
        let pool = PgPoolOptions::new()
            .max_connections(2)
            .connect(url)
            .await
            .unwrap();
        gates.push(PgRateGate::open(pool).await.unwrap());
    }
    gates
}

const KEY: &str = "stub@http://127.0.0.1:9/v1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_gates_spend_one_bucket_and_a_429_pauses_them_all() {
    let url = pg_url("rate").await;
    let gates = gates(&url, 3).await;
    let limit: NamedRateLimit = "stub=10/s".parse().unwrap();
    gates[0].configure(&limit).await.unwrap();

    // 30 requests through three gates at 10/s from a full bucket of 10:
    // the last 20 wait for the refill, about 2 s.
    let start = Instant::now();
    let mut tasks = Vec::new();
    for gate in gates.clone() {
        tasks.push(tokio::spawn(async move {
            for _ in 0..10 {
                gate.admit(KEY, 100).await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let spent = start.elapsed();
    assert!(
        spent >= Duration::from_millis(1800),
        "{spent:?}: the bucket was not shared"
    );
    assert!(spent < Duration::from_secs(6), "{spent:?}");

    // A key nobody limited passes at once.
    let start = Instant::now();
    for _ in 0..50 {
        gates[2].admit("other@http://x/v1", 100).await;
    }
    assert!(start.elapsed() < Duration::from_secs(3));

    // One gate's 429 holds the others for the provider's Retry-After.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    gates[1]
        .throttled(KEY, Some(Duration::from_millis(1500)))
        .await;
    let start = Instant::now();
    gates[2].admit(KEY, 100).await;
    let held = start.elapsed();
    assert!(
        held >= Duration::from_millis(1400),
        "{held:?}: the 429 was not shared"
    );

    // A 429 on an unlimited key pauses that key too.
    gates[0]
        .throttled("other@http://x/v1", Some(Duration::from_millis(800)))
        .await;
    let start = Instant::now();
    gates[1].admit("other@http://x/v1", 1).await;
    assert!(start.elapsed() >= Duration::from_millis(700));
}
