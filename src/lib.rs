//! # agon
//!
//! Multi-agent LLM debates with a real memory. This facade re-exports the
//! layers of the workspace behind features:
//!
//! - [`core`] (always): the data model, events and the blackboard;
//! - [`context`] (feature `context`, default): token-budgeted context assembly;
//! - [`llm`] (feature `llm`, default): `ChatModel` / `Embedder` and the HTTP providers.

pub use agon_core as core;

#[cfg(feature = "context")]
pub use agon_context as context;

#[cfg(feature = "llm")]
pub use agon_llm as llm;
