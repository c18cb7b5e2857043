//! Transcript messages and their kinds.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{AspectId, CruxRoomId, MessageId, PersonaId};

/// What a message is, across every protocol Agon runs.
///
/// Seed 000 (structured debate): opening, take, crux position, crux exchange,
/// closing, synthesis. Seed 004 (proposal/critique rounds): proposal, critique
/// (with its target), refinement, clarification question and answer.
/// Seed 002 (free deliberation): deliberation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MessageKind {
    /// Opening statement (cold start).
    Opening,
    /// A take on the current aspect, in a miniround.
    Take,
    /// Opening position statement inside a crux room.
    CruxPosition,
    /// A turn of the exchange inside a crux room.
    CruxExchange,
    /// Closing statement.
    Closing,
    /// The judge's final synthesis.
    Synthesis,
    /// A proposed solution.
    Proposal,
    /// A critique of another persona's proposal.
    Critique {
        /// Whose proposal is critiqued.
        target: PersonaId,
    },
    /// A refinement of one's own proposal after critique.
    Refinement,
    /// A clarifying question.
    ClarificationQuestion,
    /// An answer to a clarifying question.
    ClarificationAnswer,
    /// A free-form deliberation message.
    Deliberation,
}

impl MessageKind {
    /// Short lowercase label used in rendered transcripts.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Opening => "opening",
            Self::Take => "take",
            Self::CruxPosition => "crux position",
            Self::CruxExchange => "crux exchange",
            Self::Closing => "closing",
            Self::Synthesis => "synthesis",
            Self::Proposal => "proposal",
            Self::Critique { .. } => "critique",
            Self::Refinement => "refinement",
            Self::ClarificationQuestion => "question",
            Self::ClarificationAnswer => "answer",
            Self::Deliberation => "deliberation",
        }
    }

    /// Whether the message belongs inside a crux room.
    pub fn is_crux(&self) -> bool {
        matches!(self, Self::CruxPosition | Self::CruxExchange)
    }
}

/// One utterance of the transcript. Immutable once appended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DialogueMessage {
    /// Unique id within the debate.
    pub id: MessageId,
    /// Who spoke.
    pub persona: PersonaId,
    /// What kind of utterance this is.
    #[serde(flatten)]
    pub kind: MessageKind,
    /// The aspect under discussion, if any (openings and closings have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aspect: Option<AspectId>,
    /// Round number (1-based index of the aspect round; 0 for openings).
    pub round: u32,
    /// Miniround within the round (0 = initial takes), if applicable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub miniround: Option<u32>,
    /// The crux room the message was said in, for crux messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crux_room: Option<CruxRoomId>,
    /// The text.
    pub content: String,
    /// When it was said.
    pub time: DateTime<Utc>,
    /// The message this one answers, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<MessageId>,
    /// How the model call that produced it went, when it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MessageMeta>,
}

impl DialogueMessage {
    /// Whether this is a proposal carried over from the speaker's previous
    /// refinement (it answers that refinement and repeats it).
    pub fn is_carried_proposal(&self) -> bool {
        self.kind == MessageKind::Proposal && self.reply_to.is_some()
    }
}

/// The model call behind a message: which model answered, how long it took
/// and the tokens it used (zero for a message carried over without a call,
/// such as a dialectic proposal that is the previous round's refinement).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MessageMeta {
    /// The model id that answered.
    pub model: String,
    /// Wall time of the call, in milliseconds.
    pub latency_ms: u64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// The model hit its token limit and the text was cut back to its last
    /// complete sentence.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}
