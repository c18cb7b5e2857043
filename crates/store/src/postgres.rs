//! PostgreSQL: JSONB payloads, many workers on one database.

use sqlx::{Pool, Postgres};

use crate::error::StoreError;
pub use crate::pool::CONNECT_TIMEOUT;

/// An [`crate::EventStore`] in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: Pool<Postgres>,
    url: String,
}

impl PgStore {
    /// Connects to `url` (`postgres://…`) and runs the migrations. An
    /// unreachable server fails within [`CONNECT_TIMEOUT`], naming the URL
    /// (password redacted). Stores and memories of one URL share one pool
    /// ([`crate::postgres_pool`]).
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let shown = crate::error::redact_url(url);
        let pool = crate::pool::postgres_pool(url).await?;
        Ok(Self { pool, url: shown })
    }

    /// The pool, for crates that add their own tables (vector memory).
    pub fn pool(&self) -> &Pool<Postgres> {
        &self.pool
    }

    /// Closes the pool.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

crate::sql::impl_event_store!(PgStore, Postgres, "postgres");
