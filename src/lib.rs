//! # agon
//!
//! Multi-agent LLM debates with a real memory. This facade re-exports the
//! layers of the workspace behind features:
//!
//! - [`core`] (always): the data model, events and the blackboard;
//! - [`extract`] (always): the extraction payloads and their validation;
//! - [`context`] (feature `context`, default): token-budgeted context assembly;
//! - [`protocol`] (feature `protocol`, default): the protocols as pure planners;
//! - [`config`] (feature `config`, default): configuration parsed and validated
//!   into protocol rules;
//! - [`view`] (feature `view`, default): the view of a debate (reports,
//!   metrics) computed from its log;
//! - [`llm`] (feature `llm`, default): `ChatModel` / `Embedder` and the HTTP
//!   providers;
//! - `local` (feature `local`): the in-process models;
//! - `store` (feature `store`): the event log on SQLite and PostgreSQL;
//! - `memory` (feature `memory`): vector memory;
//! - `orchestrator` (feature `orchestrator`): the interpreter that runs debates;
//! - `worker` (feature `worker`): debates on a pool of workers over PostgreSQL.

pub use agon_core as core;

pub use agon_extract as extract;

#[cfg(feature = "context")]
pub use agon_context as context;

#[cfg(feature = "protocol")]
pub use agon_protocol as protocol;

#[cfg(feature = "config")]
pub use agon_config as config;

#[cfg(feature = "view")]
pub use agon_view as view;

#[cfg(feature = "llm")]
pub use agon_llm as llm;

#[cfg(feature = "local")]
pub use agon_local as local;

#[cfg(feature = "store")]
pub use agon_store as store;

#[cfg(feature = "memory")]
pub use agon_memory as memory;

#[cfg(feature = "orchestrator")]
pub use agon_orchestrator as orchestrator;

#[cfg(feature = "worker")]
pub use agon_worker as worker;
