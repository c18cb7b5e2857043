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

    /// The store's tables with their indexes and TOAST, in bytes.
    async fn measure(&self) -> Result<u64, sqlx::Error> {
        let bytes: i64 = sqlx::query_scalar(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = current_schema() AND c.relkind = 'r' \
             AND c.relname IN ('debates', 'events', 'snapshots', 'leases', 'persona_records')",
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(u64::try_from(bytes).unwrap_or(0))
    }

    /// `VACUUM FULL` of the store's tables.
    async fn vacuum(&self) -> Result<(), sqlx::Error> {
        // The simple protocol: VACUUM runs outside any transaction block.
        sqlx::raw_sql("VACUUM FULL debates, events, snapshots, leases, persona_records")
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

crate::sql::impl_event_store!(PgStore, Postgres, "postgres");
