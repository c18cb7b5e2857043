//! Store size (`cargo xtask bench store-size`): bytes per 1,000 events on
//! SQLite and PostgreSQL, and a 10,000-message debate's store before and
//! after compaction (`EventStore::compact`), then after its deletion and a
//! second compaction. The log is written as a run writes it: through
//! `DebateLog` with the default snapshot policy, a few events per append.
//! PostgreSQL is measured when `AGON_BENCH_DATABASE_URL` is set (`cargo
//! xtask bench store-size` starts the embedded server).

use std::sync::Arc;

use agon_core::DebateEvent;
use agon_store::{DebateLog, EventStore, NewDebate, PgStore, SnapshotPolicy, SqliteStore};
use agon_testkit::synthetic;

const MESSAGES: usize = 10_000;

fn mb(bytes: u64) -> String {
    format!("{:.2} MB", bytes as f64 / 1_048_576.0)
}

async fn measure(name: &str, store: Arc<dyn EventStore>, events: &[DebateEvent]) {
    let id = format!("size-{}", std::process::id());
    let _ = store.delete_debate(&id.as_str().into()).await;
    let base = match store.compact().await {
        Ok((_, after)) => after,
        Err(e) => {
            eprintln!("{name}: {e}");
            return;
        }
    };
    let written = async {
        store
            .create_debate(&NewDebate {
                id: id.as_str().into(),
                topic: "store size".into(),
                config: serde_json::json!({}),
            })
            .await
            .map_err(|e| e.to_string())?;
        let mut log = DebateLog::open(
            Arc::clone(&store),
            id.as_str().into(),
            SnapshotPolicy::default(),
        )
        .await
        .map_err(|e| e.to_string())?;
        for turn in events.chunks(3) {
            log.append(turn).await.map_err(|e| e.to_string())?;
        }
        Ok::<_, String>(())
    }
    .await;
    if let Err(e) = written {
        eprintln!("{name}: {e}");
        return;
    }
    let (full, compacted) = match store.compact().await {
        Ok(sizes) => sizes,
        Err(e) => {
            eprintln!("{name}: {e}");
            return;
        }
    };
    let per_thousand = full.saturating_sub(base) as f64 / events.len() as f64 * 1000.0;
    let per_thousand_compacted =
        compacted.saturating_sub(base) as f64 / events.len() as f64 * 1000.0;
    let _ = store.delete_debate(&id.as_str().into()).await;
    let emptied = store.compact().await.map(|(_, after)| after).unwrap_or(0);
    println!(
        "| {name} | {} | {} | {:.0} KB | {} | {:.0} KB | {} |",
        mb(base),
        mb(full),
        per_thousand / 1024.0,
        mb(compacted),
        per_thousand_compacted / 1024.0,
        mb(emptied)
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"));
    runtime.block_on(run());
}

async fn run() {
    let events = synthetic::debate(3, MESSAGES);
    println!(
        "{MESSAGES}-message synthetic debate: {} events, written 3 per append through DebateLog (default snapshot policy)\n",
        events.len()
    );
    println!(
        "| store | empty | written | per 1,000 events | compacted | per 1,000 events, compacted | deleted + compacted |\n|---|---|---|---|---|---|---|"
    );
    let dir = std::env::temp_dir().join(format!("agon-size-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    match SqliteStore::open(&format!("sqlite://{}", dir.join("size.db").display())).await {
        Ok(store) => measure("SQLite", Arc::new(store), &events).await,
        Err(e) => eprintln!("sqlite unavailable: {e}"),
    }
    match std::env::var("AGON_BENCH_DATABASE_URL") {
        Ok(url) => match PgStore::connect(&url).await {
            Ok(store) => measure("PostgreSQL", Arc::new(store), &events).await,
            Err(e) => eprintln!("postgres unavailable: {e}"),
        },
        Err(_) => eprintln!(
            "AGON_BENCH_DATABASE_URL not set: PostgreSQL skipped (use `cargo xtask bench store-size`)"
        ),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
