//! # agon-worker
//!
//! Scale-out for Agon: debates run by a pool of workers, on one machine or
//! many, over one PostgreSQL database, on
//! [graphile_worker](https://docs.rs/graphile_worker) (the Rust port of
//! Graphile Worker; docs/scale.md says why this engine).
//!
//! - The unit of work is one step: a job ([`AdvanceDebate`]) runs the step
//!   the protocol plans next for a debate (and the background work it
//!   starts), then queues the debate's next job. Each debate has a queue
//!   of its own ([`debate_queue`]), which graphile_worker runs one job at a
//!   time, so steps of one debate never run concurrently, while different
//!   debates interleave on every worker.
//! - A retried or duplicated job is harmless: it plans from the debate's
//!   event log and finds the step done. A worker that dies is found by its
//!   missing heartbeats, and its jobs go to the others.
//! - [`PgRateGate`] shares provider rate limits (requests and tokens per
//!   minute per provider key) by all workers, and one worker's 429 pauses
//!   every worker.
//!
//! The embedded SQLite store stays the one-machine default; the queue needs
//! a PostgreSQL store.

mod error;
mod job;
mod queue;
mod rate;
mod worker;

pub use error::WorkerError;
pub use job::{AdvanceDebate, MAX_ATTEMPTS, SCHEMA, TASK, debate_of_key, debate_queue};
pub use queue::{JobQueue, QueuedJob, is_postgres};
pub use rate::{NamedRateLimit, PgRateGate, RateLimit};
pub use worker::{WorkerSettings, run_worker};
