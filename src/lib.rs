//! # agon
//!
//! Multi-agent LLM debates with a real memory. This facade re-exports every
//! layer of the workspace behind a feature, so that a project takes only
//! the layers it uses (each is also a crate of its own):
//!
//! - [`core`] (always): the data model, events and the blackboard;
//! - [`extract`] (always): the extraction payloads and their validation;
//! - `context` (feature `context`, default): token-budgeted context assembly;
//! - `protocol` (feature `protocol`, default): the protocols as pure planners;
//! - `config` (feature `config`, default): configuration parsed and validated
//!   into protocol rules;
//! - `view` (feature `view`, default): the view of a debate (reports,
//!   metrics) computed from its log;
//! - `llm` (feature `llm`, default): `ChatModel` / `Embedder` and the HTTP
//!   providers;
//! - `trust` (feature `trust`): agent trust memory and the living rubric;
//! - `local` (feature `local`): the in-process models;
//! - `store` (feature `store`): the event log on SQLite and PostgreSQL;
//! - `memory` (feature `memory`): vector memory;
//! - `tools` (feature `tools`): the tools agents may call;
//! - `orchestrator` (feature `orchestrator`): the interpreter that runs debates;
//! - `eval` (feature `eval`): dialectic's evaluation of a finished debate;
//! - `app` (feature `app`): the application every front door shares;
//! - `server` (feature `server`): the HTTP API, live streams and pages;
//! - `mcp` (feature `mcp`): Agon as a Model Context Protocol server;
//! - `worker` (feature `worker`): debates on a pool of workers over PostgreSQL.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub use agon_core as core;

pub use agon_extract as extract;

#[cfg(feature = "context")]
#[cfg_attr(docsrs, doc(cfg(feature = "context")))]
pub use agon_context as context;

#[cfg(feature = "protocol")]
#[cfg_attr(docsrs, doc(cfg(feature = "protocol")))]
pub use agon_protocol as protocol;

#[cfg(feature = "config")]
#[cfg_attr(docsrs, doc(cfg(feature = "config")))]
pub use agon_config as config;

#[cfg(feature = "view")]
#[cfg_attr(docsrs, doc(cfg(feature = "view")))]
pub use agon_view as view;

#[cfg(feature = "llm")]
#[cfg_attr(docsrs, doc(cfg(feature = "llm")))]
pub use agon_llm as llm;

#[cfg(feature = "trust")]
#[cfg_attr(docsrs, doc(cfg(feature = "trust")))]
pub use agon_trust as trust;

#[cfg(feature = "local")]
#[cfg_attr(docsrs, doc(cfg(feature = "local")))]
pub use agon_local as local;

#[cfg(feature = "store")]
#[cfg_attr(docsrs, doc(cfg(feature = "store")))]
pub use agon_store as store;

#[cfg(feature = "memory")]
#[cfg_attr(docsrs, doc(cfg(feature = "memory")))]
pub use agon_memory as memory;

#[cfg(feature = "tools")]
#[cfg_attr(docsrs, doc(cfg(feature = "tools")))]
pub use agon_tools as tools;

#[cfg(feature = "orchestrator")]
#[cfg_attr(docsrs, doc(cfg(feature = "orchestrator")))]
pub use agon_orchestrator as orchestrator;

#[cfg(feature = "eval")]
#[cfg_attr(docsrs, doc(cfg(feature = "eval")))]
pub use agon_eval as eval;

#[cfg(feature = "app")]
#[cfg_attr(docsrs, doc(cfg(feature = "app")))]
pub use agon_app as app;

#[cfg(feature = "server")]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub use agon_server as server;

#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub use agon_mcp as mcp;

#[cfg(feature = "worker")]
#[cfg_attr(docsrs, doc(cfg(feature = "worker")))]
pub use agon_worker as worker;
