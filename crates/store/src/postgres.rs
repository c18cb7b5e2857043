//! PostgreSQL: JSONB payloads, many workers on one database.

use sqlx::{Pool, Postgres};

use crate::error::StoreError;

/// An [`crate::EventStore`] in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: Pool<Postgres>,
    url: String,
}

/// The channel every append is announced on (payload: the debate id),
/// when its transaction commits.
pub const APPENDS_CHANNEL: &str = "agon_appends";

impl PgStore {
    /// Announces an append to the processes listening on
    /// [`APPENDS_CHANNEL`] (delivered at commit, not before).
    async fn announce(
        tx: &mut sqlx::Transaction<'_, Postgres>,
        id: &agon_core::DebateId,
    ) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(APPENDS_CHANNEL)
            .bind(id.as_str())
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    /// The ids of debates appended to by any process on the database of
    /// `url`, as they commit (LISTEN/NOTIFY): a debate a worker on another
    /// machine runs streams live. The listener reconnects by itself; the
    /// receiver ends when the connection cannot be made again.
    pub async fn listen_appends(
        url: &str,
    ) -> Result<tokio::sync::mpsc::UnboundedReceiver<agon_core::DebateId>, StoreError> {
        let shown = crate::error::redact_url(url);
        let mut listener = sqlx::postgres::PgListener::connect(url)
            .await
            .map_err(|e| crate::sql::db_error(&shown, "listening for appends", e))?;
        listener
            .listen(APPENDS_CHANNEL)
            .await
            .map_err(|e| crate::sql::db_error(&shown, "listening for appends", e))?;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                match listener.recv().await {
                    Ok(note) => {
                        if tx.send(agon_core::DebateId::new(note.payload())).is_err() {
                            return;
                        }
                    }
                    // The listener reconnects by itself; an error is a
                    // reconnection that failed: the receiver ends.
                    Err(_) => return,
                }
            }
        });
        Ok(rx)
    }
    /// Connects to `url` (`postgres://…`) and runs the migrations. An
    /// unreachable server fails within [`CONNECT_TIMEOUT`](crate::CONNECT_TIMEOUT), naming the URL
    /// (password redacted). Stores and memories of one URL share one pool
    /// ([`crate::postgres_pool`]).
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let shown = crate::error::redact_url(url);
        let pool = crate::pool::postgres_pool(url).await?;
        Ok(Self { pool, url: shown })
    }

    /// Sets `id`'s run status inside the caller's transaction `tx`, for a
    /// change that must commit with the caller's own writes (a worker
    /// marks a debate queued in the transaction that adds its next job).
    pub async fn set_status_in(
        &self,
        tx: &mut sqlx::PgConnection,
        id: &agon_core::DebateId,
        status: crate::types::RunStatus,
    ) -> Result<(), StoreError> {
        // A debate queued once is the workers' to run: a resume queues it again.
        let done = sqlx::query(
            "UPDATE debates SET status = $1, updated_at = $2, \
             on_workers = on_workers OR $1 = 'queued' WHERE id = $3",
        )
        .bind(status.as_str())
        .bind(crate::types::millis(chrono::Utc::now()))
        .bind(id.as_str())
        .execute(tx)
        .await
        .map_err(|e| crate::sql::db_error(&self.url, "setting a debate's status", e))?;
        if done.rows_affected() == 0 {
            return Err(StoreError::DebateNotFound {
                debate: id.to_string(),
            });
        }
        Ok(())
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
             AND c.relname IN ('debates', 'events', 'snapshots', 'leases', 'persona_records', 'rubrics')",
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(u64::try_from(bytes).unwrap_or(0))
    }

    /// `VACUUM FULL` of the store's tables.
    async fn vacuum(&self) -> Result<(), sqlx::Error> {
        // The simple protocol: VACUUM runs outside any transaction block.
        sqlx::raw_sql("VACUUM FULL debates, events, snapshots, leases, persona_records, rubrics")
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

crate::sql::impl_event_store!(PgStore, Postgres, "postgres");
