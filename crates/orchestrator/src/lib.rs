//! # agon-orchestrator
//!
//! Runs Agon debates: the seed-000 protocol (openings, aspects with
//! minirounds, per-message analysis, claims, round records, reflections,
//! crux rooms, closings, synthesis) composed from the lower crates. It owns
//! the order of steps and the I/O between them, nothing else: state changes
//! are `agon-core` events, contexts and prompts come from `agon-context`,
//! rooms from `agon-crux`, models from `agon-llm`, persistence from
//! `agon-store`, memory from `agon-memory`.
//!
//! Every step is recorded in the debate's event log, so [`Orchestrator::run`]
//! on an interrupted debate continues from its last persisted event with no
//! message repeated or lost. See [`runner`] for exactly when a speaker waits
//! for background analysis.

pub mod config;
mod error;
mod memory;
pub mod models;
pub mod report;
pub mod runner;
pub mod scripted;
mod update;

pub use config::{ConfigError, DebateConfig, DetectionMode, PersonaConfig};
pub use error::OrchestratorError;
pub use models::{ModelError, Models, Role};
pub use runner::{JUDGE_ID, Orchestrator, RunControl, RunOutcome};
pub use update::{DebateUpdate, DebateUpdates};
