//! # agon-store
//!
//! Debates persisted as event logs: an [`EventStore`] trait and two real
//! implementations, [`SqliteStore`] (the embedded default: one file, WAL)
//! and [`PgStore`] (PostgreSQL, JSONB). Appends are transactional with
//! per-debate sequence numbers and optimistic concurrency; loading is the
//! latest snapshot plus a replay of the rest; a run lease keeps a debate to
//! one process; per-persona records outlive debates.
//!
//! Migrations are embedded ([`migrations`]: the SQL files read at compile
//! time, no sqlx proc-macro) and run on open; queries are checked at run
//! time, so no `DATABASE_URL` is needed to build.
//!
//! Append a debate's events and read them back, without the rest of Agon
//! (an in-memory SQLite here; a file is `sqlite://PATH`, PostgreSQL
//! `postgres://…`):
//!
//! ```
//! use agon_core::{DebateEvent, DebateId, Persona, Topic};
//! use agon_store::NewDebate;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let store = agon_store::open("sqlite::memory:").await?;
//! let id = DebateId::new("d-1");
//! store
//!     .create_debate(&NewDebate {
//!         id: id.clone(),
//!         topic: "Should cities ban cars from their centres?".into(),
//!         config: serde_json::json!({}),
//!     })
//!     .await?;
//! let started = DebateEvent::DebateStarted {
//!     debate: id.clone(),
//!     topic: Topic::new("Should cities ban cars from their centres?"),
//!     aspects: vec![],
//!     personas: vec![
//!         Persona::debater("mara", "Mara", "Urban planner.", "direct"),
//!         Persona::debater("theo", "Theo", "Economist.", "dry"),
//!     ],
//!     time: chrono::Utc::now(),
//!     protocol: None,
//! };
//! // Appends are checked against the sequence number the writer last saw.
//! let seq = store.append(&id, 0, &[started]).await?;
//! assert_eq!(seq, 1);
//! // Reading is the latest snapshot plus a replay of the events after it.
//! let (board, at) = store.load(&id).await?;
//! assert_eq!(at, 1);
//! assert_eq!(board.debaters().count(), 2);
//! assert_eq!(store.events_after(&id, 0).await?[0].event.name(), "debate_started");
//! # Ok::<(), agon_store::StoreError>(())
//! # }).unwrap();
//! ```

mod codec;
mod error;
pub mod lease;
mod log;
pub mod migrations;
mod open;
mod pool;
#[cfg(feature = "postgres")]
mod postgres;
mod sql;
mod sqlite;
mod store;
mod types;

pub use error::{StoreError, redact_url};
pub use log::{DebateLog, LogError, SnapshotPolicy};
pub use open::open;
#[cfg(feature = "postgres")]
pub use pool::postgres_pool;
pub use pool::{CONNECT_TIMEOUT, MigrationLock, sqlite_migration_lock, sqlite_pool};
#[cfg(feature = "postgres")]
pub use postgres::{APPENDS_CHANNEL, PgStore};
pub use sqlite::{BUSY_TIMEOUT, SqliteStore};
pub use store::{EventStore, RecordUpdate};
pub use types::{
    DebateRecord, DocRecord, ForkPoint, Lease, NewDebate, PersonaRecord, PostedRequest, RunStatus,
    StoredEvent,
};
