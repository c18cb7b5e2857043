//! Concurrent first use: 8 processes open a new store at once (the event
//! store's tables and the memory tables), on SQLite and on PostgreSQL.
//! Every process must succeed and the migrations must be applied once.
//!
//! The children are this test binary itself, running the ignored test
//! `child_opener` with the URL in their environment, all released at the
//! same instant (a start time in the future).

use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::process::Command;

use crate::index::{pg_url, sqlite_url};

const PROCESSES: usize = 8;
const ROUNDS: usize = 3;

/// Child mode: waits for the common start time, then opens the store and
/// the memory tables of `AGON_CHILD_URL`, failing loudly on any error.
#[tokio::test]
#[ignore = "run as a child process by the first-use tests"]
async fn child_opener() {
    let (Ok(url), Ok(start)) = (
        std::env::var("AGON_CHILD_URL"),
        std::env::var("AGON_CHILD_START_MS"),
    ) else {
        return;
    };
    let start: u128 = start.parse().unwrap();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    if start > now {
        tokio::time::sleep(Duration::from_millis((start - now) as u64)).await;
    }
    let store = agon_store::open(&url).await.expect("opening the store");
    store.list_debates().await.expect("listing debates");
    agon_memory::open(&url)
        .await
        .expect("opening the memory tables");
    println!("OPENED");
}

async fn open_at_once(url: &str) {
    let exe = std::env::current_exe().unwrap();
    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
        + 700;
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "first_use::child_opener",
                    "--ignored",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env("AGON_CHILD_URL", url)
                .env("AGON_CHILD_START_MS", start.to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .unwrap()
        })
        .collect();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().await.unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("OPENED"),
            "process {i} of {PROCESSES} failed to open {url}:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Rows in the store's and the memory's migration tables of `pool`.
macro_rules! migration_rows {
    ($pool:expr) => {{
        let mut rows = Vec::new();
        for table in ["_sqlx_migrations", "_agon_memory_migrations"] {
            let n: i64 =
                sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
                    .fetch_one($pool)
                    .await
                    .unwrap();
            rows.push(n);
        }
        rows
    }};
}

#[tokio::test]
async fn eight_processes_open_a_new_sqlite_store_at_once() {
    for _ in 0..ROUNDS {
        let url = sqlite_url();
        open_at_once(&url).await;
        // The migrations ran once: one row per migration, no duplicates.
        let pool = agon_store::sqlite_pool(&url, agon_store::BUSY_TIMEOUT)
            .await
            .unwrap();
        assert_eq!(
            migration_rows!(&pool),
            [store_migrations(), memory_migrations()]
        );
    }
}

/// The memory's migrations (one file each, the same for both databases).
fn memory_migrations() -> i64 {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
    std::fs::read_dir(dir).unwrap().count() as i64
}

/// The store's migrations (one file each, the same for both databases).
fn store_migrations() -> i64 {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../store/migrations/sqlite");
    std::fs::read_dir(dir).unwrap().count() as i64
}

#[tokio::test]
async fn eight_processes_open_a_new_postgres_store_at_once() {
    for _ in 0..ROUNDS {
        let url = pg_url().await;
        open_at_once(&url).await;
        let pool = agon_store::postgres_pool(&url).await.unwrap();
        assert_eq!(
            migration_rows!(&pool),
            [store_migrations(), memory_migrations()]
        );
    }
}
