//! # agon-protocol
//!
//! Agon's protocols as pure planners. A protocol is a function from the
//! blackboard to the next steps ([`Protocol::plan`]); the orchestrator is
//! the one interpreter that executes steps and owns all I/O. Because the
//! plan is derived from the events alone, resuming a debate is "replay the
//! log, ask the protocol again": there is no cursor and no resume code.
//!
//! - the step vocabulary ([`Step`], [`Speak`], [`Background`],
//!   [`Plan`]) and the [`Protocol`] seam.
//! - [`StructuredDebate`]: seed 000 (openings, aspects × minirounds, round
//!   records, reflections, crux rooms, closings, synthesis).
//! - [`Dialectic`]: seed 004 (clarifications, proposals, critiques,
//!   refinements, perspective summaries, the judge's solution).
//! - [`Deliberation`]: seeds 001 + 002 (long free-form sessions, round
//!   robin or listening turns, rolling summaries, decisions, proposals).
//! - [`crux`]: the crux room, a protocol nested in a debate.
//! - [`extract()`] and [`background`]: the one extraction pipeline (parse →
//!   validate → events) and the conversions of each step's model output.
//!
//! This crate knows nothing of HTTP, SQL, async runtimes, files or the
//! clock: times are passed in.
//!
//! Drive a planner yourself: you are the interpreter. Ask the protocol for
//! the next step, do it (here: write the utterance by hand), append what it
//! becomes, ask again. ([`Protocol::next`] is the plan as Agon's interpreter
//! runs it: it reads the agents' trust and the rubric first, and holds a
//! paused debate.)
//!
//! ```
//! use agon_core::{Blackboard, DebateAspect, DebateEvent, Persona, ReflectionTrigger, Topic};
//! use agon_protocol::{
//!     AnalysisCadence, AspectSource, CruxRules, DetectionRules, Next, Protocol, Start, Step,
//!     StructuredDebate, StructuredRules,
//! };
//!
//! let personas = vec![
//!     Persona::debater("mara", "Mara", "Urban planner.", "direct"),
//!     Persona::debater("theo", "Theo", "Economist.", "dry"),
//! ];
//! let aspects = vec![DebateAspect::new("cost", "Cost", "Who pays, who gains.")];
//! let protocol = StructuredDebate::new(StructuredRules {
//!     start: Start {
//!         topic: Topic::new("Should cities ban cars from their centres?"),
//!         personas: personas.clone(),
//!         cast: None,
//!         aspects: AspectSource::Configured(aspects.clone()),
//!         weigh_by_trust: false,
//!     },
//!     minirounds: 1,
//!     crux: CruxRules::default(),
//!     synthesis: false,
//!     detection: DetectionRules::default(),
//!     analysis: AnalysisCadence::Message,
//!     reflection: ReflectionTrigger::new(15),
//!     challenger: false,
//! });
//! let mut board = Blackboard::new();
//! // What the start step records (the interpreter adds the id and time).
//! board.apply(&DebateEvent::DebateStarted {
//!     debate: "d-1".into(),
//!     topic: Topic::new("Should cities ban cars from their centres?"),
//!     aspects,
//!     personas,
//!     time: chrono::DateTime::UNIX_EPOCH,
//!     protocol: None,
//! })?;
//! // The openings, one speaker at a time.
//! for expected in ["mara", "theo"] {
//!     let Next::Step(step) = protocol.plan(&board).next else { unreachable!() };
//!     let Step::Speak(turn) = *step else { unreachable!() };
//!     assert_eq!(turn.persona.as_str(), expected);
//!     let said = format!("{expected}'s opening statement.");
//!     let message = turn.message(&board, said, chrono::DateTime::UNIX_EPOCH);
//!     board.apply(&DebateEvent::MessageAppended { message })?;
//! }
//! // Each opening now waits to be analysed: background work the plan
//! // lists, which an interpreter runs beside the debate.
//! assert!(!protocol.plan(&board).background.is_empty());
//! # Ok::<(), agon_core::ApplyError>(())
//! ```

pub mod ask;
pub mod background;
pub mod background_job;
mod claim_detector;
pub mod clarify;
pub mod crux;
pub mod deliberation;
mod dialectic;
mod extract;
mod lookahead;
mod protocol;
mod question;
mod request;
pub mod requirements;
mod rules;
mod start;
pub mod steer;
mod step;
mod structured;
pub mod synthesis;
pub mod trust_harvest;
mod turn;

pub use ask::{ConvertError, Outcome};
pub use claim_detector::{ClaimCandidate, ClaimDetector, promote_strongest};
pub use deliberation::{
    Deliberation, DeliberationRules, DetectionSource, PatternError, Patterns, StopReason,
    StopRules, TurnMode, pick_volunteer,
};
pub use dialectic::{Dialectic, DialecticRules, SummaryRules, Termination};
pub use extract::{
    Converted, ExtractFailure, FailureKind, ModelFailure, ModelOutput, extract, step_failed,
};
pub use lookahead::{recalls_after, turns_after};
pub use protocol::{Protocol, background_over};
pub use question::{
    Answer, AnswerForm, Answers, Ask, BudgetNeed, Call, ContextNeed, HumanAsk, Limits, ModelRole,
    Question, Request, TextAnswer, TrustRead,
};
pub use request::{PendingQuestion, RunRequest, question_key};
pub use rules::{AnalysisCadence, CruxRules, DetectionMode, DetectionRules, StructuredRules};
pub use start::{
    aspects_from_output, aspects_from_plan, cast_from_output, neutral_personas, numbered_aspects,
    persona_slug, personas_from_cast, start_event,
};
pub use steer::{Steer, SteerError};
pub use step::{
    AnalysisMode, Background, BackgroundId, BatchShape, Next, Plan, Progress, ProgressUnit, Step,
    is_contribution,
};
pub use structured::{JUDGE_ID, StructuredDebate};
pub use turn::{AspectSource, Deadline, Finish, Speak, Start, SummaryJob, Voice};
