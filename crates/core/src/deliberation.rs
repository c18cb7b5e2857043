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

/// Who volunteers most urgently among `bids`: the highest urgency, ties
/// broken by who spoke least recently (`last_spoke` gives a persona's
/// latest turn; never spoken counts as oldest), then by the order of the
/// bids. `None` when nobody volunteers.
pub fn pick_volunteer(
    bids: &[Bid],
    last_spoke: impl Fn(&PersonaId) -> Option<usize>,
) -> Option<&PersonaId> {
    bids.iter()
        .enumerate()
        .filter(|(_, b)| b.respond)
        .max_by_key(|(i, b)| {
            // Larger key wins: urgency, then older last turn, then earlier bid.
            let recency = last_spoke(&b.persona).map_or(usize::MAX, |t| usize::MAX - 1 - t);
            (b.urgency, recency, usize::MAX - i)
        })
        .map(|(_, b)| &b.persona)
}

/// Seed 002's memory statistics, from the blackboard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryStats {
    /// Rolling summaries recorded.
    pub summaries: usize,
    /// Decisions recorded.
    pub decisions: usize,
    /// Proposals under discussion.
    pub active_proposals: usize,
    /// Proposals made in all.
    pub proposals: usize,
    /// Participants.
    pub agents: usize,
    /// Messages in the transcript.
    pub messages: usize,
    /// Messages per participant (by id).
    pub messages_by_agent: BTreeMap<PersonaId, u32>,
    /// Turns skipped (a speaker produced nothing usable).
    pub skipped_turns: usize,
    /// Rolling summaries that failed.
    pub failed_summaries: usize,
}

impl MemoryStats {
    /// The statistics of `board`.
    pub fn of(board: &crate::Blackboard) -> Self {
        use crate::step::{StepId, TurnKey};
        let warned =
            |f: &dyn Fn(&StepId) -> bool| board.warnings().iter().filter(|w| f(&w.step)).count();
        Self {
            summaries: board
                .summaries()
                .iter()
                .filter(|s| s.scope == crate::SummaryScope::Rolling)
                .count(),
            decisions: board.decisions().len(),
            active_proposals: board
                .proposals()
                .iter()
                .filter(|p| p.status == ProposalStatus::Active)
                .count(),
            proposals: board.proposals().len(),
            agents: board.debaters().count(),
            messages: board.messages().len(),
            messages_by_agent: board
                .debaters()
                .map(|p| {
                    let n = board
                        .participation()
                        .get(&p.id)
                        .map_or(0, |part| part.message_count);
                    (p.id.clone(), n)
                })
                .collect(),
            skipped_turns: warned(&|s| matches!(s, StepId::Utterance(TurnKey::Turn { .. }))),
            failed_summaries: warned(&|s| matches!(s, StepId::RollingSummary { .. })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bid(p: &str, respond: bool, urgency: u8) -> Bid {
        Bid {
            persona: PersonaId::new(p),
            respond,
            urgency,
            reason: String::new(),
        }
    }

    #[test]
    fn the_most_urgent_volunteer_speaks_ties_go_to_who_spoke_least_recently() {
        let last = |p: &PersonaId| match p.as_str() {
            "a" => Some(9),
            "b" => Some(3),
            _ => None,
        };
        let bids = [bid("a", true, 7), bid("b", true, 7), bid("c", false, 0)];
        assert_eq!(pick_volunteer(&bids, last).unwrap().as_str(), "b");
        let bids = [bid("a", true, 8), bid("b", true, 7), bid("c", true, 7)];
        assert_eq!(pick_volunteer(&bids, last).unwrap().as_str(), "a");
        // Never spoken counts as the oldest.
        let bids = [bid("b", true, 5), bid("c", true, 5)];
        assert_eq!(pick_volunteer(&bids, last).unwrap().as_str(), "c");
        // Equal in everything: the earlier bid.
        let bids = [bid("d", true, 5), bid("c", true, 5)];
        assert_eq!(pick_volunteer(&bids, last).unwrap().as_str(), "d");
        let bids = [bid("a", false, 0), bid("b", false, 0)];
        assert!(pick_volunteer(&bids, last).is_none());
    }
}
