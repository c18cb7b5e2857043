//! Deliberation tracking (seed 002): decisions, proposals, participation.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{DecisionId, MessageId, PersonaId, ProposalId};

/// A key agreement or conclusion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Decision {
    /// Unique id within the debate.
    pub id: DecisionId,
    /// What was decided about.
    pub topic: String,
    /// What was decided.
    pub outcome: String,
    /// Who supports it.
    pub supporting: Vec<PersonaId>,
    /// The message that recorded it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_message: Option<MessageId>,
    /// When.
    pub time: DateTime<Utc>,
}

/// Status of a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatus {
    /// Under discussion.
    Active,
    /// Accepted.
    Accepted,
    /// Rejected.
    Rejected,
    /// Superseded by a modified version.
    Modified,
}

/// A persona's reaction to a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reaction {
    /// For.
    Support,
    /// Against.
    Oppose,
    /// Neither.
    Neutral,
}

/// A proposal under discussion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Proposal {
    /// Unique id within the debate.
    pub id: ProposalId,
    /// Who proposed it.
    pub proposer: PersonaId,
    /// What is proposed.
    pub content: String,
    /// Lifecycle status.
    pub status: ProposalStatus,
    /// Latest reaction per persona.
    pub reactions: BTreeMap<PersonaId, Reaction>,
    /// When.
    pub time: DateTime<Utc>,
}

/// Per-persona participation counters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Participation {
    /// Messages appended by the persona.
    pub message_count: u32,
    /// Notable contributions, oldest first.
    pub key_contributions: Vec<String>,
}

/// Most urgency a listening agent can give (seed 002's evaluation, 0–10).
pub const MAX_URGENCY: u8 = 10;

/// One agent's answer to "should you respond now?" in a listening
/// deliberation (seed 002's `evaluateReaction`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Bid {
    /// Who answered.
    pub persona: PersonaId,
    /// Whether it wants to speak next.
    pub respond: bool,
    /// How urgently, 0–10 ([`MAX_URGENCY`]).
    pub urgency: u8,
    /// Why, one sentence (or why the evaluation failed).
    pub reason: String,
}
