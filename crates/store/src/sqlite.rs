//! The embedded default: one SQLite file, WAL journal, busy timeout.

use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Pool, Sqlite};

use crate::error::StoreError;

/// How long a writer waits for another writer's lock before [`StoreError::Locked`].
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// An [`crate::EventStore`] in a SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: Pool<Sqlite>,
    url: String,
}

impl SqliteStore {
    /// Opens (creating if missing) the database at `url` (`sqlite://PATH`,
    /// `sqlite:PATH` or a plain path) and runs the migrations.
    ///
    /// WAL journal with `synchronous = NORMAL`: an appended event survives a
    /// crash of the process (it is in the WAL when `append` returns); an OS
    /// crash or power loss may lose the last transactions.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_with_busy_timeout(url, BUSY_TIMEOUT).await
    }

    /// Like [`SqliteStore::open`], waiting at most `busy_timeout` for
    /// another writer's lock before failing with [`StoreError::Locked`].
    pub async fn open_with_busy_timeout(
        url: &str,
        busy_timeout: Duration,
    ) -> Result<Self, StoreError> {
        let shown = crate::error::redact_url(url);
        let normalized = if url.starts_with("sqlite:") {
            url.to_owned()
        } else {
            format!("sqlite://{url}")
        };
        let options = SqliteConnectOptions::from_str(&normalized)
            .map_err(|e| StoreError::Unavailable {
                url: shown.clone(),
                message: e.to_string(),
            })?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(busy_timeout)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await
            .map_err(|e| StoreError::Unavailable {
                url: shown.clone(),
                message: e.to_string(),
            })?;
        sqlx::migrate!("./migrations/sqlite")
            .run(&pool)
            .await
            .map_err(|e| StoreError::Migration {
                url: shown.clone(),
                message: e.to_string(),
            })?;
        Ok(Self { pool, url: shown })
    }

    /// Closes the pool.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

crate::sql::impl_event_store!(SqliteStore, Sqlite, "sqlite");
