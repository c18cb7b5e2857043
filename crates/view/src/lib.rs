//! # agon-view
//!
//! What a person reads about a debate, as one pure view model computed
//! from its event log. [`DebateView::from_log`] replays the log once into
//! the blackboard and the debate-quality metrics; the Markdown report, the
//! JSON report, `show --metrics`, `agon debate --report` and dialectic's
//! debate-state JSON ([`export::dialectic_state`]) all render from it, so
//! a section added once shows everywhere. A live view folds the events it
//! receives into a blackboard and says what [`live::notice`] says of each.
//!
//! Which body a report has follows the protocol the debate recorded
//! ([`agon_core::Blackboard::protocol`]), never a guess from its shape.
//!
//! ```
//! use agon_core::{DebateEvent, Persona, ProtocolKind, Topic};
//! use agon_view::{DebateView, ReportOptions};
//!
//! let log = vec![DebateEvent::DebateStarted {
//!     debate: "d1".into(),
//!     topic: Topic::new("Should the city ban cars from the centre?"),
//!     aspects: vec![],
//!     personas: vec![Persona::debater("ada", "Ada", "urbanist", "brisk")],
//!     time: chrono::DateTime::UNIX_EPOCH,
//!     protocol: Some(ProtocolKind::Structured),
//! }];
//! let view = DebateView::from_log(&log, ReportOptions::default()).unwrap();
//! assert_eq!(view.protocol(), ProtocolKind::Structured);
//! assert!(view.markdown().contains("Should the city ban cars"));
//! assert_eq!(view.json()["metrics"]["messages"], 0);
//! ```

mod empty;
pub mod export;
pub mod html;
pub mod import;
mod json;
pub mod live;
mod memory_stats;
pub mod metrics;
pub mod report;
mod sections;
pub mod terminal;
mod view;

pub use empty::ReportOptions;
pub use memory_stats::MemoryStats;
pub use metrics::{DebateMetrics, PersonaMetrics, RoleTokens, debate_metrics, replay_with_metrics};
pub use sections::*;
pub use view::{DebateView, ForkOrigin, RememberedChange};
