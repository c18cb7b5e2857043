//! The step vocabulary: what a protocol asks the interpreter to do next.
//!
//! A step says *what* happens (speak as P in phase X with message kind K,
//! ask models or the person a question, read the trust memory, record
//! events, finish), never *how*: no model calls, no SQL. The interpreter
//! builds turn prompts from the step's ids with `agon-context`, has the
//! protocol render each question's prompt and convert its answers
//! (`crate::ask`), and appends what comes back.

use agon_core::{AspectId, DebateEvent, DialogueMessage, MessageId, MessageKind, PersonaId};

use crate::question::{Ask, HumanAsk, TrustRead};
use crate::turn::{Deadline, Finish, Speak, Start};

/// A step on the critical path: the interpreter runs one at a time, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Generate one utterance and append it.
    Speak(Speak),
    /// Generate several utterances concurrently, each from the blackboard
    /// as it is when the group starts, and append them in the listed order
    /// (so the log does not depend on which model answered first).
    Parallel {
        /// The turns.
        turns: Vec<Speak>,
        /// When the group must be done, if ever.
        deadline: Option<Deadline>,
    },
    /// Append events the protocol decided on its own (an aspect starts, a
    /// claim is promoted, a crux room opens). They carry no time.
    Record {
        /// What the step is, for progress displays ("aspect 2", "crux room on claim-1").
        label: String,
        /// The events.
        events: Vec<DebateEvent>,
    },
    /// Ask models (concurrently); the protocol turns the answers into
    /// events ([`crate::ask::convert`]).
    Ask(Ask),
    /// Ask the person at hand (the answers to clarifying questions).
    AskHuman(HumanAsk),
    /// Read the agents' trust memories.
    ReadTrust(TrustRead),
    /// Everything is done: record usage, the debate in its agents' trust
    /// memory, and `debate_finished`.
    Finish(Finish),
}

impl Step {
    /// Whether a stop request may take effect before this step (a started
    /// debate always finishes its bookkeeping; starting is never stopped).
    pub fn is_stoppable(&self) -> bool {
        !matches!(
            self,
            Self::Ask(Ask::Start(_)) | Self::AskHuman(_) | Self::Finish(_)
        )
    }

    /// The step that starts a debate: [`Ask::Start`].
    pub fn start(start: Start) -> Self {
        Self::Ask(Ask::Start(start))
    }

    /// A short name for progress displays and spans.
    pub fn label(&self) -> String {
        match self {
            Self::Speak(speak) => speak.key.to_string(),
            Self::Parallel { turns, .. } => format!("{} turns in parallel", turns.len()),
            Self::Record { label, .. } => label.clone(),
            Self::Ask(ask) => ask.label(),
            Self::AskHuman(human) => format!("{} clarifying questions", human.questions.len()),
            Self::ReadTrust(read) => read.label(),
            Self::Finish(_) => "finish".into(),
        }
    }

    /// Who speaks in this step, for steps with one speaker.
    pub fn speaker(&self) -> Option<&PersonaId> {
        match self {
            Self::Speak(speak)
            | Self::Ask(Ask::Convergence {
                otherwise: speak, ..
            }) => Some(&speak.persona),
            _ => None,
        }
    }
}

/// How a message is analysed (fixed by the protocol's detection rules and
/// the message kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnalysisMode {
    /// One call for position and disagreement judgement (`turn_analysis`);
    /// otherwise `position_update` alone.
    pub combined: bool,
    /// A separate disagreement-detection call as well.
    pub detector: bool,
    /// Messages in the judged window (for `combined` and `detector`).
    pub window: usize,
    /// Earlier messages shown with the analysed one when no window is
    /// judged (structured debate: 3).
    pub context: usize,
    /// The rule that opens claims from the judged windows (`None`: no
    /// claims from detection).
    pub claims: Option<crate::claim_detector::ClaimDetector>,
    /// The shape of a batch's answer.
    pub shape: BatchShape,
}

/// What a batch analysis asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BatchShape {
    /// Seed 000's position updates (`batch_position_update`, or
    /// `batch_turn_analysis` when combined).
    #[default]
    Positions,
    /// A dialectic round's contributions (`round_analysis`): the lean
    /// position fields, and with `impact`, which critiques each refinement
    /// took in (seed 003's dissent impact, in the same call).
    Contributions {
        /// Whether the call judges the critiques' impact.
        impact: bool,
    },
}

/// Work derived from the transcript, run off the critical path and applied
/// strictly in the order the protocol lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Background {
    /// Analyse a message: position update, disagreement judgement, and the
    /// claims that opens.
    Analyse {
        /// The message.
        message: MessageId,
        /// How.
        mode: AnalysisMode,
    },
    /// Analyse several messages in one call (a dialectic phase), each into
    /// its speaker's position ledger.
    AnalyseBatch {
        /// The messages, in transcript order.
        messages: Vec<MessageId>,
        /// How (position only).
        mode: AnalysisMode,
        /// Perspective summaries the same call writes (a dialectic round's
        /// analysis, for the agents whose history reached their threshold
        /// by the round's end); empty otherwise.
        summaries: Vec<crate::turn::SummaryJob>,
    },
    /// Read a batch of deliberation messages for decisions, proposals and
    /// reactions with the analysis model.
    Detect {
        /// The messages, in transcript order.
        messages: Vec<MessageId>,
        /// Where decisions and proposals come from.
        source: crate::rules::DetectionSource,
    },
    /// Record the round of an aspect.
    RoundRecord {
        /// The aspect.
        aspect: AspectId,
        /// Its round number.
        round: u32,
    },
    /// Write reflections after an aspect (listed only when the trigger is
    /// due and everything before it is applied).
    Reflect {
        /// The aspect.
        aspect: AspectId,
        /// Its round number.
        round: u32,
    },
    /// Read the problem's requirements (and the clarification answers')
    /// with the analysis model, once, before any analysis of a round.
    Requirements,
}

/// The identity of a background job (what the interpreter keys in-flight
/// model calls by).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BackgroundId {
    /// [`Background::Analyse`].
    Analyse(MessageId),
    /// [`Background::AnalyseBatch`], by its first message.
    AnalyseBatch(MessageId),
    /// [`Background::Detect`], by its first message.
    Detect(MessageId),
    /// [`Background::RoundRecord`].
    RoundRecord(AspectId),
    /// [`Background::Reflect`].
    Reflect(AspectId),
    /// [`Background::Requirements`].
    Requirements,
}

impl Background {
    /// The job's identity.
    pub fn id(&self) -> BackgroundId {
        match self {
            Self::Analyse { message, .. } => BackgroundId::Analyse(message.clone()),
            Self::AnalyseBatch { messages, .. } => BackgroundId::AnalyseBatch(
                messages
                    .first()
                    .cloned()
                    .unwrap_or_else(|| MessageId::new("")),
            ),
            Self::Detect { messages, .. } => BackgroundId::Detect(
                messages
                    .first()
                    .cloned()
                    .unwrap_or_else(|| MessageId::new("")),
            ),
            Self::RoundRecord { aspect, .. } => BackgroundId::RoundRecord(aspect.clone()),
            Self::Reflect { aspect, .. } => BackgroundId::Reflect(aspect.clone()),
            Self::Requirements => BackgroundId::Requirements,
        }
    }
}

/// What comes next on the critical path.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Run this step.
    Step(Box<Step>),
    /// Nothing can run until background work is applied (a barrier, or a
    /// speaker whose previous message is not analysed yet).
    Wait,
    /// A person paused the debate: no critical-path step runs until it is
    /// resumed (background work still runs).
    Paused,
    /// The debate is finished.
    Finished,
}

impl Next {
    /// [`Next::Step`] of `step`.
    pub fn step(step: Step) -> Self {
        Self::Step(Box::new(step))
    }
}

/// The unit a protocol's progress is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProgressUnit {
    /// Aspects of a structured debate (with minirounds).
    #[default]
    Aspect,
    /// Rounds of a dialectic debate.
    Round,
    /// Turns of a deliberation.
    Turn,
}

/// Where the debate stands, for progress displays (the same for every
/// protocol).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Progress {
    /// What `at` and `of` count.
    pub unit: ProgressUnit,
    /// The current aspect, round or turn (1-based; 0 before the first).
    pub at: usize,
    /// How many there are (at most, for a debate that may stop early).
    pub of: usize,
    /// Miniround within the aspect (structured debate).
    pub miniround: u32,
    /// The phase ("openings", "takes", "critiques", "crux room on claim-1", …).
    pub phase: String,
    /// The contributions the debate is planned to have, when known: every
    /// message outside crux rooms and clarifications (at most, for a
    /// debate that may stop early).
    pub contributions: Option<u64>,
}

impl Progress {
    /// One line: "aspect 2/3 · miniround 1", "round 2/5 · critiques",
    /// "turn 4 of 40", or the phase alone.
    pub fn describe(&self) -> String {
        match self.unit {
            ProgressUnit::Aspect if self.at > 0 && self.phase == "takes" => format!(
                "aspect {}/{} · miniround {}",
                self.at,
                self.of,
                self.miniround + 1
            ),
            ProgressUnit::Round if self.at > 0 => {
                format!("round {}/{} · {}", self.at, self.of, self.phase)
            }
            _ => self.phase.clone(),
        }
    }
}

/// Whether a message counts towards [`Progress::contributions`].
pub fn is_contribution(message: &DialogueMessage) -> bool {
    message.crux_room.is_none()
        && !matches!(
            message.kind,
            MessageKind::ClarificationQuestion | MessageKind::ClarificationAnswer
        )
}

/// A protocol's answer for one blackboard.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Background work not yet applied, in the order it must be applied.
    pub background: Vec<Background>,
    /// The next critical-path step.
    pub next: Next,
    /// Where the debate stands.
    pub progress: Progress,
}
