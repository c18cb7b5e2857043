//! # agon-context
//!
//! Builds what each agent sees: a tailored, token-budgeted view of the
//! debate [`Blackboard`](agon_core::Blackboard) for one persona at one
//! moment ([`Phase`]), following seed 000's context template. Also the pure
//! summarization policies: seed 001's rolling-summary planner ([`rolling`])
//! and seed 004's perspective summaries ([`perspective`]).
//!
//! Pure: no I/O, no clock, no randomness. The same blackboard, persona,
//! phase, budget and extras always give the same text.
//!
//! ```
//! use agon_context::{assemble, ContextBudget, ContextExtras, Phase};
//! use agon_core::{Blackboard, DebateEvent, Persona, Topic};
//!
//! let mut board = Blackboard::new();
//! board.apply(&DebateEvent::DebateStarted {
//!     debate: "d1".into(),
//!     topic: Topic::new("Should cities ban cars from their centres?"),
//!     aspects: vec![],
//!     personas: vec![
//!         Persona::debater("ada", "Ada", "urbanist", "brisk"),
//!         Persona::debater("bo", "Bo", "shop owner", "warm"),
//!     ],
//!     time: chrono::DateTime::UNIX_EPOCH,
//!     protocol: None,
//! })?;
//! let context = assemble(&board, "Ada", &Phase::Opening, ContextBudget::default(), &ContextExtras::default())?;
//! // The same view for every participant: who speaks is said with the task.
//! assert!(context.text.contains("Opening statements"));
//! assert!(context.text.contains("Should cities ban cars"));
//! assert!(context.total_tokens <= context.budget);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod assemble;
mod budget;
mod deliberation;
mod dialectic;
mod error;
mod extras;
mod fit;
mod inert;
pub mod perspective;
mod phase;
pub mod prompts;
mod recall;
pub mod rolling;
mod section;
mod sources;
mod tokens;
pub mod trust;

pub use assemble::{
    AssembledContext, Assembler, AssemblyOptions, ContextExtras, EVIDENCE_SHARE, EvidencePassage,
    RetrievedMemory, SectionReport, assemble,
};
pub use budget::ContextBudget;
pub use dialectic::critiques_answered;
pub use error::ContextError;
pub use inert::{QUOTE_GUTTER, fenced, inert};
pub use phase::Phase;
pub use recall::{
    RecallScope, RetrievalConfig, SESSION_CANDIDATES, SESSION_LEXICAL_STANDOUT,
    SESSION_MIN_SIMILARITY, SESSION_STANDOUT, TurnRecall, evidence_query, next_recall_query,
    recall_query, session_recall_bar, session_words_stand_out, turn_recall,
};
pub use section::{Section, SectionKind, render};
pub use tokens::{CachedCounter, Encoding, TiktokenCounter, TokenCounter};
