//! Test harness: a fresh store per test, on SQLite (a temp file) or on
//! PostgreSQL (a fresh database on the server named by
//! `AGON_TEST_DATABASE_URL`, which `cargo xtask test` starts).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agon_store::{EventStore, NewDebate, PgStore, SqliteStore};
use sqlx::Connection;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name unique across this process and concurrent test processes.
pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The admin URL of the test server; tests fail (not skip) without it.
pub fn admin_url() -> String {
    std::env::var("AGON_TEST_DATABASE_URL").expect(
        "AGON_TEST_DATABASE_URL is not set: run the suite with `cargo xtask test`, \
         or start a server with `cargo xtask db start` and export AGON_TEST_DATABASE_URL=$(cargo xtask db url)",
    )
}

/// Where a test's store lives, for opening it again or reaching it raw.
#[derive(Clone, Debug)]
pub enum Place {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Place {
    pub fn url(&self) -> String {
        match self {
            Self::Sqlite(path) => format!("sqlite://{}", path.display()),
            Self::Postgres(url) => url.clone(),
        }
    }

    pub async fn open(&self) -> Arc<dyn EventStore> {
        agon_store::open(&self.url()).await.unwrap()
    }

    /// Runs raw SQL (to corrupt rows on purpose).
    pub async fn exec(&self, sql: &str) {
        match self {
            Self::Sqlite(path) => {
                let mut c =
                    sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
                        .await
                        .unwrap();
                sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
                    .execute(&mut c)
                    .await
                    .unwrap();
            }
            Self::Postgres(url) => {
                let mut c = sqlx::PgConnection::connect(url).await.unwrap();
                sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
                    .execute(&mut c)
                    .await
                    .unwrap();
            }
        }
    }
}

pub async fn sqlite_place() -> Place {
    let dir = std::env::temp_dir().join("agon-store-tests");
    std::fs::create_dir_all(&dir).unwrap();
    Place::Sqlite(dir.join(format!("{}.db", unique("t"))))
}

pub async fn postgres_place() -> Place {
    let admin = admin_url();
    let name = unique("agon_t");
    let mut c = sqlx::PgConnection::connect(&admin)
        .await
        .expect("connect to the test server");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut c)
        .await
        .unwrap();
    let base = admin
        .rsplit_once('/')
        .map_or(admin.as_str(), |(base, _)| base)
        .to_owned();
    Place::Postgres(format!("{base}/{name}"))
}

pub async fn sqlite() -> (Arc<dyn EventStore>, Place) {
    let place = sqlite_place().await;
    (
        Arc::new(SqliteStore::open(&place.url()).await.unwrap()),
        place,
    )
}

pub async fn postgres() -> (Arc<dyn EventStore>, Place) {
    let place = postgres_place().await;
    (
        Arc::new(PgStore::connect(&place.url()).await.unwrap()),
        place,
    )
}

pub fn new_debate(id: &str) -> NewDebate {
    NewDebate {
        id: id.into(),
        topic: "Should a mid-size company hold Bitcoin as a treasury reserve asset?".into(),
        config: serde_json::json!({"aspects": 3, "minirounds": 3}),
    }
}

/// The synthetic debate's events: deterministic, valid, of any length.
pub fn events(messages: usize) -> Vec<agon_core::DebateEvent> {
    agon_testkit::synthetic::debate(3, messages)
}
