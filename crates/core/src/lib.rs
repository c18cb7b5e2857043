//! # agon-core
//!
//! The data model of an Agon debate and its deterministic state transitions.
//!
//! A debate is an append-only log of [`DebateEvent`]s; the [`Blackboard`] is
//! the fold of [`Blackboard::apply`] over them. Model output never touches
//! the blackboard directly: it is parsed into the extraction payloads of
//! `agon-extract`, validated (clamped, trimmed, unknown personas dropped
//! with a note) and only then converted into events.
//!
//! This crate knows nothing of HTTP, SQL, async runtimes or files.
//!
//! ```
//! use agon_core::{ApplyError, Blackboard, DebateEvent, Persona, Topic};
//!
//! let mut board = Blackboard::new();
//! board.apply(&DebateEvent::DebateStarted {
//!     debate: "d1".into(),
//!     topic: Topic::new("Should the city ban cars from the centre?"),
//!     aspects: vec![],
//!     personas: vec![Persona::debater("ada", "Ada", "urbanist", "brisk")],
//!     time: chrono::DateTime::UNIX_EPOCH,
//!     protocol: None,
//! })?;
//! let err = board
//!     .apply(&DebateEvent::ConcessionRecorded { persona: "zed".into(), text: "x".into(), round: 1 })
//!     .unwrap_err();
//! assert_eq!(err.to_string(), "unknown persona `zed` in concession_recorded");
//! # Ok::<(), ApplyError>(())
//! ```

mod blackboard;
mod budget;
mod claim;
mod crux;
mod deliberation;
mod detection;
mod error;
mod event;
pub mod evidence;
mod ids;
mod message;
mod persona;
mod position;
mod protocol;
mod reflection;
mod requirement;
mod role;
mod round;
pub mod rubric;
mod serde_flags;
mod solution;
mod steering;
mod step;
mod summary;
mod tool;
mod trigger;
mod trust;

pub use blackboard::{
    Blackboard, DebateStatus, StepRepair, StepWarning, ToolCallRecord, UsageTotals,
};
pub use budget::{Budget, BudgetKind, BudgetStop, Spent};
pub use claim::{ClaimStatus, ClaimTransition, LiveClaim};
pub use crux::{CruxCard, CruxPosition, CruxStance, DisagreementType};
pub use deliberation::{
    Bid, Decision, MAX_URGENCY, Participation, Proposal, ProposalStatus, Reaction,
};
pub use detection::{AnalyzedTurn, JudgedDisagreement, TurnAnalyzedView};
pub use error::ApplyError;
pub use event::{AspectPositionUpdate, CritiqueTaken, DebateEvent};
pub use ids::{
    AspectId, ClaimId, CruxCardId, CruxRoomId, DebateId, DecisionId, MessageId, PersonaId,
    ProposalId, ReflectionId,
};
pub use message::{DialogueMessage, MessageKind, MessageMeta};
pub use persona::{AgentRole, DebateAspect, Persona, PersonaRole, Topic, UnknownRole};
pub use position::{
    Agreement, AspectPosition, Disagreement, Intensity, LedgerNote, PersonaPositionState,
};
pub use protocol::ProtocolKind;
pub use reflection::{Reflection, ReflectionKind};
pub use requirement::{
    Coverage, CoverageRecord, CoverageStatus, MAX_REQUIREMENTS, Requirement, RequirementLedger,
    RequirementMethod, RequirementSource,
};
pub use role::{ModelRole, UnknownModelRole, UsageRole};
pub use round::{PersonaTake, RoundRecord};
pub use solution::Solution;
pub use steering::{MAX_NOTE_CHARS, ModeratorNote};
pub use step::{AnalysisPart, StepId, StepIdError, TurnKey, TurnKeyError};
pub use summary::{DebateSummary, MessageSpan, SummaryMethod, SummaryScope};
pub use tool::{ToolGrant, ToolName, UnknownTool, is_server_name, mcp_tool_name};
pub use trigger::{EpistemicWeights, ReflectionTrigger};
pub use trust::{LOW_TRUST, TrustStanding};
