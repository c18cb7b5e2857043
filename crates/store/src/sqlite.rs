//! The embedded default: one SQLite file, WAL journal, busy timeout.

use std::time::Duration;

use sqlx::{Pool, Sqlite};

use crate::error::StoreError;
pub use crate::pool::BUSY_TIMEOUT;

/// An [`crate::EventStore`] in a SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: Pool<Sqlite>,
    url: String,
}

impl SqliteStore {
    /// Appends are not announced on SQLite: one machine, one process's
    /// live updates.
    async fn announce(
        _tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
        _id: &agon_core::DebateId,
    ) -> Result<(), sqlx::Error> {
        Ok(())
    }

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
    /// Stores (and memories) of one file with one busy timeout share one
    /// connection pool ([`crate::sqlite_pool`]).
    pub async fn open_with_busy_timeout(
        url: &str,
        busy_timeout: Duration,
    ) -> Result<Self, StoreError> {
        let shown = crate::error::redact_url(url);
        let pool = crate::pool::sqlite_pool(url, busy_timeout).await?;
        Ok(Self { pool, url: shown })
    }

    /// Closes the pool (for every user of this database in the process).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// The database file's size: its pages, once the WAL is checkpointed
    /// into it.
    async fn measure(&self) -> Result<u64, sqlx::Error> {
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&self.pool)
            .await?;
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count")
            .fetch_one(&self.pool)
            .await?;
        let size: i64 = sqlx::query_scalar("PRAGMA page_size")
            .fetch_one(&self.pool)
            .await?;
        Ok(u64::try_from(pages.saturating_mul(size)).unwrap_or(0))
    }

    /// Rewrites the file without its free pages.
    async fn vacuum(&self) -> Result<(), sqlx::Error> {
        sqlx::raw_sql("VACUUM").execute(&self.pool).await?;
        Ok(())
    }
}

crate::sql::impl_event_store!(SqliteStore, Sqlite, "sqlite");
