//! The step vocabulary: what a protocol asks the interpreter to do next.
//!
//! A step says *what* happens (speak as P in phase X with message kind K,
//! analyse message M, record a round, reflect, check a room's convergence,
//! write its crux card, finish), never *how*: no prompts, no model calls,
//! no SQL. The interpreter builds prompts from the step's ids with
//! `agon-context` and converts model output back into events with the
//! functions of this crate.

use agon_context::Phase;
use agon_context::prompts::Utterance;
use agon_core::{
    AspectId, Blackboard, CruxRoomId, DebateAspect, DebateEvent, DialogueMessage, MessageId,
    MessageKind, Persona, PersonaId, Topic, TurnKey,
};
use chrono::{DateTime, Utc};

/// Which model voices a speak step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Voice {
    /// A debater (the persona's own model if it has one).
    Debater,
    /// The judge (synthesis): sees the judge's brief, not an assembled context.
    Judge,
    /// A dialectic agent: its role brief is its system prompt.
    Agent,
}

impl Voice {
    /// The system prompt of `persona` speaking in this voice, with answers
    /// of about `words` words (the judge's at least 150).
    pub fn system_prompt(self, board: &Blackboard, persona: &Persona, words: u32) -> String {
        match self {
            Self::Debater => agon_context::prompts::persona_system(board, persona, words),
            Self::Judge => agon_context::prompts::judge_system(board, words.max(150)),
            Self::Agent => agon_context::prompts::dialectic::agent_system(board, persona, words),
        }
    }
}

/// One utterance: who speaks, in which phase, as which kind of message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speak {
    /// The turn's identity (used to record a skipped turn).
    pub key: TurnKey,
    /// Who speaks.
    pub persona: PersonaId,
    /// The kind of message it becomes.
    pub kind: MessageKind,
    /// The context phase to assemble (`None`: the judge's brief).
    pub phase: Option<Phase>,
    /// The instruction the speaker is given.
    pub instruction: Utterance,
    /// The aspect the message belongs to, if any.
    pub aspect: Option<AspectId>,
    /// The miniround, for takes.
    pub miniround: Option<u32>,
    /// The crux room, for room turns.
    pub room: Option<CruxRoomId>,
    /// Which model voices it.
    pub voice: Voice,
}

impl Speak {
    /// The message this turn becomes once the model has answered: the next
    /// `msg-N` id, the blackboard's current round, `content`, at `time`.
    pub fn message(
        &self,
        board: &Blackboard,
        content: String,
        time: DateTime<Utc>,
    ) -> DialogueMessage {
        DialogueMessage {
            id: MessageId::numbered(board.messages().len() + 1),
            persona: self.persona.clone(),
            kind: self.kind.clone(),
            aspect: self.aspect.clone(),
            round: board.current_round(),
            miniround: self.miniround,
            crux_room: self.room.clone(),
            content,
            time,
            reply_to: None,
            meta: None,
        }
    }
}

/// Where the aspects of a debate come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AspectSource {
    /// Listed in the configuration.
    Configured(Vec<DebateAspect>),
    /// Decomposed from the topic by the judge model (this many).
    Planned {
        /// How many aspects to ask for.
        count: usize,
    },
}

/// What the `debate_started` event will hold (the interpreter adds the
/// debate id, the time and, for planned aspects, the judge's aspects).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    /// The question and its context.
    pub topic: Topic,
    /// Debaters, and the judge when a synthesis is asked for.
    pub personas: Vec<Persona>,
    /// Cast this many debaters for the topic (a structured call) and put
    /// them before `personas`, when the configuration names none.
    pub cast: Option<usize>,
    /// The aspects, or how many to plan.
    pub aspects: AspectSource,
}

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
    Ask(crate::ask::Ask),
    /// Ask the person at hand (the answers to clarifying questions).
    AskHuman(crate::ask::HumanAsk),
    /// Read the agents' trust memories.
    ReadTrust(crate::ask::TrustRead),
    /// Everything is done: record usage, the debate in its agents' trust
    /// memory, and `debate_finished`.
    Finish(Finish),
}

/// When a group of turns must be done: `secs` after this run first started
/// a group with the same `clock` (a dialectic round: every group of the
/// round shares its clock). Turns not done by then are recorded as
/// skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    /// Groups with the same clock share one deadline.
    pub clock: u32,
    /// Seconds from the clock's start.
    pub secs: u64,
}

/// What the finish needs to know of the protocol's own rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Finish {
    /// Whether the round analyses were asked to judge each critique's
    /// impact (`critiques_judged`), so a critique left unjudged counts as a
    /// failed judgement.
    pub critiques_judged_by_analysis: bool,
}

/// One summary to write: whose, for which round, from which context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryJob {
    /// Who writes it (the agent, or the judge) and whose model is used.
    pub persona: PersonaId,
    /// Whose summary it is.
    pub scope: agon_core::SummaryScope,
    /// The round it is made for.
    pub round: u32,
    /// The context phase whose assembled text is summarized.
    pub phase: Phase,
    /// Longest summary kept, in characters.
    pub max_chars: usize,
    /// The strategy's name, recorded with the summary.
    pub method: String,
    /// The user's summary prompt, if any (`{content}` receives the text).
    pub prompt: Option<String>,
}

impl SummaryJob {
    /// The step id its failure is recorded under.
    pub fn step_id(&self) -> agon_core::StepId {
        agon_core::StepId::Summary {
            persona: match &self.scope {
                agon_core::SummaryScope::Persona { persona } => Some(persona.clone()),
                _ => None,
            },
            round: self.round,
        }
    }
}

impl Step {
    /// Whether a stop request may take effect before this step (a started
    /// debate always finishes its bookkeeping; starting is never stopped).
    pub fn is_stoppable(&self) -> bool {
        !matches!(
            self,
            Self::Ask(crate::ask::Ask::Start(_)) | Self::AskHuman(_) | Self::Finish(_)
        )
    }

    /// The step that starts a debate: [`crate::ask::Ask::Start`].
    pub fn start(start: Start) -> Self {
        Self::Ask(crate::ask::Ask::Start(start))
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
            | Self::Ask(crate::ask::Ask::Convergence {
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
    pub claims: Option<agon_core::ClaimDetector>,
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
    },
    /// Read a batch of deliberation messages for decisions, proposals and
    /// reactions with the analysis model.
    Detect {
        /// The messages, in transcript order.
        messages: Vec<MessageId>,
        /// Where decisions and proposals come from.
        source: crate::DetectionSource,
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

/// A protocol: a pure function from the blackboard to the next steps.
/// Resume is "replay the log, ask the protocol again": a protocol keeps no
/// state of its own beyond its rules.
pub trait Protocol: Send + Sync {
    /// The plan for this blackboard.
    fn plan(&self, board: &Blackboard) -> Plan;

    /// Which of Agon's protocols this is, recorded in `debate_started` so
    /// views need not guess; `None` (the default) for a protocol of one's
    /// own.
    fn kind(&self) -> Option<agon_core::ProtocolKind> {
        None
    }

    /// The events that follow from `message` by the protocol's own rules
    /// (no model call), appended with it in one batch; `board` is the
    /// blackboard before the message. None by default.
    fn message_events(&self, board: &Blackboard, message: &DialogueMessage) -> Vec<DebateEvent> {
        let _ = (board, message);
        Vec::new()
    }

    /// The prompt and answer form of call `call` of `ask`
    /// ([`crate::ask::request`] by default).
    fn request(
        &self,
        board: &Blackboard,
        ask: &crate::ask::Ask,
        call: usize,
        context: Option<&str>,
        limits: crate::ask::Limits,
    ) -> Result<crate::ask::Request, String> {
        crate::ask::request(board, ask, call, context, limits)
    }

    /// The events the answers to a question `step` become, and the step
    /// that follows, if any ([`crate::ask::convert`] by default).
    fn convert(
        &self,
        board: &Blackboard,
        debate: &agon_core::DebateId,
        step: &Step,
        answers: crate::ask::Answers,
        now: DateTime<Utc>,
    ) -> Result<crate::ask::Outcome, crate::ask::ConvertError> {
        crate::ask::convert(board, debate, self.kind(), step, answers, now)
    }
}
