//! # agon
//!
//! Multi-agent LLM debates with a real memory. This facade re-exports the
//! layers of the workspace behind features:
//!
//! - [`core`] (always): the data model, events and the blackboard;
//! - [`context`] (feature `context`, default): token-budgeted context assembly;
//! - [`protocol`] (feature `protocol`, default): the protocols as pure planners;
//! - [`config`] (feature `config`, default): configuration parsed and validated
//!   into protocol rules;
//! - [`llm`] (feature `llm`, default): `ChatModel` / `Embedder` and the HTTP
//!   providers;
//! - `local` (feature `local`): the in-process models;
//! - `store` (feature `store`): the event log on SQLite and PostgreSQL;
//! - `memory` (feature `memory`): vector memory;
//! - `orchestrator` (feature `orchestrator`): the interpreter that runs debates.

pub use agon_core as core;

#[cfg(feature = "context")]
pub use agon_context as context;

#[cfg(feature = "protocol")]
pub use agon_protocol as protocol;

#[cfg(feature = "config")]
pub use agon_config as config;

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
