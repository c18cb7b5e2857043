//! # agon-store
//!
//! Debates persisted as event logs: an [`EventStore`] trait and two real
//! implementations, [`SqliteStore`] (the embedded default: one file, WAL)
//! and [`PgStore`] (PostgreSQL, JSONB). Appends are transactional with
//! per-debate sequence numbers and optimistic concurrency; loading is the
//! latest snapshot plus a replay of the rest; a run lease keeps a debate to
//! one process; per-persona records outlive debates.
//!
//! Migrations are embedded (`sqlx::migrate!`) and run on open; queries are
//! checked at run time, so no `DATABASE_URL` is needed to build.

mod codec;
mod error;
pub mod lease;
mod log;
mod open;
mod pool;
mod postgres;
mod sql;
mod sqlite;
mod store;
mod types;

pub use error::{StoreError, redact_url};
pub use log::{DebateLog, LogError, SnapshotPolicy};
pub use open::open;
pub use pool::{MigrationLock, postgres_pool, sqlite_migration_lock, sqlite_pool};
pub use postgres::{APPENDS_CHANNEL, CONNECT_TIMEOUT, PgStore};
pub use sqlite::{BUSY_TIMEOUT, SqliteStore};
pub use store::{EventStore, RecordUpdate};
pub use types::{
    DebateRecord, DocRecord, ForkPoint, Lease, NewDebate, PersonaRecord, PostedRequest, RunStatus,
    StoredEvent,
};
