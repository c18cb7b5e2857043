//! # agon-orchestrator
//!
//! The interpreter of Agon's protocols. A protocol (`agon-protocol`) is a
//! pure function from the blackboard to the next steps; this crate executes
//! them and owns all I/O: context assembly (`agon-context`), model calls
//! (`agon-llm`), appends to the event log (`agon-store`), vector memory
//! (`agon-memory`), the run lease and the live update stream. It holds no
//! protocol rule.
//!
//! Every step is recorded in the debate's event log, so [`Orchestrator::run`]
//! on an interrupted debate replays the log and asks the protocol again: it
//! continues from its last persisted event with no message repeated or
//! lost. Background work (each message's analysis, round records,
//! reflections) runs off the critical path and is applied in the protocol's
//! order; each protocol's planner in `agon_protocol` says exactly when a speaker
//! waits for it.

mod answers;
mod applier;
mod calls;
mod control;
mod error;
mod guard;
mod interpreter;
mod lease;
mod mcp_servers;
mod models;
mod orchestrator;
mod shared;
mod speak;
mod tool_turn;
mod trust_memory;
mod trust_steps;
mod update;
mod usage;

pub use agon_protocol::{JUDGE_ID, PendingQuestion, RunRequest, Steer, SteerError};
pub use agon_store::lease::{holder_is_dead, this_process};
pub use answers::{AnswerError, Answerer, NoAnswers, Question};
pub use control::{REQUEST_POLL, RunControl, RunOutcome, Steering};
pub use error::{ErrorKind, OrchestratorError};
pub use lease::LEASE_TTL;
pub use models::{ModelError, Models, Role};
pub use orchestrator::{Orchestrator, new_debate_id};
pub use trust_memory::{NoTrustMemory, TrustMemory};
pub use update::{DebateUpdate, DebateUpdates};
