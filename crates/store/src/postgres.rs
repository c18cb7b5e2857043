//! PostgreSQL: JSONB payloads, many workers on one database.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Pool, Postgres};

use crate::error::StoreError;

/// Connecting gives up after this long.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// An [`crate::EventStore`] in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: Pool<Postgres>,
    url: String,
}

impl PgStore {
    /// Connects to `url` (`postgres://…`) and runs the migrations. An
    /// unreachable server fails within [`CONNECT_TIMEOUT`], naming the URL
    /// (password redacted).
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let shown = crate::error::redact_url(url);
        let options = PgConnectOptions::from_str(url).map_err(|e| StoreError::Unavailable {
            url: shown.clone(),
            message: e.to_string(),
        })?;
        let connect = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_with(options);
        let pool = tokio::time::timeout(CONNECT_TIMEOUT, connect)
            .await
            .map_err(|_| StoreError::ConnectTimeout {
                url: shown.clone(),
                after: CONNECT_TIMEOUT,
            })?
            .map_err(|e| StoreError::Unavailable {
                url: shown.clone(),
                message: e.to_string(),
            })?;
        sqlx::migrate!("./migrations/postgres")
            .run(&pool)
            .await
            .map_err(|e| StoreError::Migration {
                url: shown.clone(),
                message: e.to_string(),
            })?;
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
