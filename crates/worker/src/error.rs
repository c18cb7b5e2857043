//! The worker crate's errors.

use agon_orchestrator::OrchestratorError;
use agon_store::StoreError;

/// What went wrong submitting, listing or running queued debates.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The store is not PostgreSQL: the queue lives in the store's database.
    #[error(
        "the job queue needs a PostgreSQL store (--store postgres://…), not `{url}`; \
         on one machine, run debates with `agon debate` on SQLite"
    )]
    NotPostgres {
        /// The store URL (password redacted).
        url: String,
    },
    /// The queue's database failed.
    #[error("job queue at {url}: {source}")]
    Database {
        /// The store URL (password redacted).
        url: String,
        /// The database error.
        #[source]
        source: sqlx::Error,
    },
    /// graphile_worker refused an operation (migration, enqueue, start).
    #[error("job queue: {what}: {message}")]
    Queue {
        /// What was being done.
        what: &'static str,
        /// The engine's message.
        message: String,
    },
    /// A rate limit given on the command line is malformed.
    #[error("rate limit `{spec}`: {reason}")]
    RateLimit {
        /// The limit as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The orchestrator failed (reading a debate's configuration).
    #[error(transparent)]
    Orchestrator(#[from] OrchestratorError),
    /// The event store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl WorkerError {
    pub(crate) fn queue(what: &'static str, e: impl std::fmt::Display) -> Self {
        Self::Queue {
            what,
            message: e.to_string(),
        }
    }
}
