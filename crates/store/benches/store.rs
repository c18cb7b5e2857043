//! Store throughput: appending single events and batches of 10, and loading
//! a 10,000-event debate with and without a snapshot, on SQLite and on
//! PostgreSQL (`AGON_BENCH_DATABASE_URL`, set by `cargo xtask bench store`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agon_core::{Blackboard, DebateEvent};
use agon_store::{EventStore, NewDebate, PgStore, SqliteStore};
use agon_testkit::synthetic;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tokio::runtime::Runtime;

const LOAD_EVENTS: usize = 10_000;

fn new_debate(id: &str) -> NewDebate {
    NewDebate {
        id: id.into(),
        topic: "bench".into(),
        config: serde_json::json!({}),
    }
}

async fn stores() -> Vec<(&'static str, Arc<dyn EventStore>)> {
    let dir = std::env::temp_dir().join(format!("agon-store-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let mut out: Vec<(&'static str, Arc<dyn EventStore>)> = Vec::new();
    match SqliteStore::open(&format!("sqlite://{}", dir.join("bench.db").display())).await {
        Ok(store) => out.push(("sqlite", Arc::new(store))),
        Err(e) => eprintln!("sqlite unavailable: {e}"),
    }
    match std::env::var("AGON_BENCH_DATABASE_URL") {
        Ok(url) => match PgStore::connect(&url).await {
            Ok(store) => out.push(("postgres", Arc::new(store))),
            Err(e) => eprintln!("postgres unavailable: {e}"),
        },
        Err(_) => eprintln!(
            "AGON_BENCH_DATABASE_URL not set: PostgreSQL benchmarks skipped (use `cargo xtask bench store`)"
        ),
    }
    out
}

fn bench_store(c: &mut Criterion) {
    let rt = Runtime::new().unwrap_or_else(|e| panic!("tokio runtime: {e}"));
    let stores = rt.block_on(stores());
    let events: Vec<DebateEvent> = synthetic::debate(3, 4_500);
    let run = std::process::id();

    for batch in [1usize, 10] {
        let mut group = c.benchmark_group(format!("store/append_batch_{batch}"));
        group.throughput(Throughput::Elements(batch as u64));
        for (name, store) in &stores {
            let id = format!("append-{batch}-{run}");
            let _ = rt.block_on(store.delete_debate(&id.as_str().into()));
            if let Err(e) = rt.block_on(store.create_debate(&new_debate(&id))) {
                eprintln!("{name}: {e}");
                continue;
            }
            let seq = Arc::new(AtomicU64::new(0));
            group.bench_function(BenchmarkId::from_parameter(name), |b| {
                b.to_async(&rt).iter(|| {
                    let store = Arc::clone(store);
                    let seq = Arc::clone(&seq);
                    let id = id.clone();
                    let at = seq.load(Ordering::Relaxed) as usize;
                    let chunk: Vec<DebateEvent> = (0..batch)
                        .map(|i| events[(at + i) % events.len()].clone())
                        .collect();
                    async move {
                        let next = store.append(&id.as_str().into(), at as u64, &chunk).await;
                        if let Ok(next) = next {
                            seq.store(next, Ordering::Relaxed);
                        }
                    }
                });
            });
        }
        group.finish();
    }

    let mut group = c.benchmark_group("store/load_10k_events");
    group.sample_size(10);
    for (name, store) in &stores {
        for snapshot in [false, true] {
            let id = format!("load-{snapshot}-{run}");
            let _ = rt.block_on(store.delete_debate(&id.as_str().into()));
            let prepared = rt.block_on(async {
                store.create_debate(&new_debate(&id)).await?;
                for (i, chunk) in events[..LOAD_EVENTS].chunks(500).enumerate() {
                    store
                        .append(&id.as_str().into(), (i * 500) as u64, chunk)
                        .await?;
                }
                if snapshot {
                    let board =
                        Blackboard::replay(&events[..LOAD_EVENTS - 100]).unwrap_or_default();
                    store
                        .save_snapshot(&id.as_str().into(), (LOAD_EVENTS - 100) as u64, &board)
                        .await?;
                }
                Ok::<_, agon_store::StoreError>(())
            });
            if let Err(e) = prepared {
                eprintln!("{name}: {e}");
                continue;
            }
            let label = if snapshot {
                "snapshot_at_9900"
            } else {
                "full_replay"
            };
            group.bench_function(BenchmarkId::new(*name, label), |b| {
                b.to_async(&rt).iter(|| {
                    let store = Arc::clone(store);
                    let id = id.clone();
                    async move { store.load(&id.as_str().into()).await.map(|(_, seq)| seq) }
                });
            });
        }
    }
    group.finish();

    for (_, store) in &stores {
        for id in [
            format!("append-1-{run}"),
            format!("append-10-{run}"),
            format!("load-false-{run}"),
            format!("load-true-{run}"),
        ] {
            let _ = rt.block_on(store.delete_debate(&id.as_str().into()));
        }
    }
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! { name = benches; config = config(); targets = bench_store }
criterion_main!(benches);
