//! Seed 002's memory statistics of a deliberation.

use std::collections::BTreeMap;

use agon_core::{Blackboard, PersonaId, ProposalStatus, StepId, SummaryScope, TurnKey};
use serde::{Deserialize, Serialize};

/// Seed 002's memory statistics, from the blackboard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    pub fn of(board: &Blackboard) -> Self {
        let warned =
            |f: &dyn Fn(&StepId) -> bool| board.warnings().iter().filter(|w| f(&w.step)).count();
        Self {
            summaries: board
                .summaries()
                .iter()
                .filter(|s| s.scope == SummaryScope::Rolling)
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
