//! The turns a protocol plans: who speaks, in which phase, with which
//! voice ([`Speak`]), how a debate starts ([`Start`]), the summaries it
//! asks for ([`SummaryJob`]) and what its finish must know ([`Finish`]).

use agon_context::Phase;
use agon_context::prompts::Utterance;
use agon_core::{
    AspectId, Blackboard, CruxRoomId, DebateAspect, DialogueMessage, MessageId, MessageKind,
    Persona, PersonaId, Topic, TurnKey,
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
    /// The system prompt of a speaker in this voice, with answers of about
    /// `words` words (the judge's at least 150): the same for every speaker
    /// of a voice (who speaks is said last, in the turn's instruction), so
    /// that their calls share it as a prefix.
    pub fn system_prompt(self, board: &Blackboard, words: u32) -> String {
        match self {
            Self::Debater => agon_context::prompts::debater_system(board, words),
            Self::Judge => agon_context::prompts::judge_system(board, words.max(150)),
            Self::Agent => agon_context::prompts::dialectic::agent_system(board, words),
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
    /// Read the agents' trust standings once started, and weigh the
    /// feedback prompts show by them ([`crate::TrustRead::Standings`]).
    pub weigh_by_trust: bool,
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
    /// The strategy, recorded with the summary.
    pub method: agon_core::SummaryMethod,
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
