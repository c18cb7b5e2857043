//! The moments at which an agent needs context.

use agon_core::{AspectId, ClaimId, CruxRoomId, PersonaId};
use serde::Serialize;

use crate::section::SectionKind;

/// When the context is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    /// Opening statement: an intentional cold start (topic, aspects, the
    /// other participants' names, nothing else).
    Opening,
    /// A take on `aspect`. Miniround 0 sees the whole blackboard but no recent
    /// exchange (there is none yet for the aspect); minirounds 1+ add the
    /// aspect's latest messages verbatim.
    Take {
        /// The aspect debated.
        aspect: AspectId,
        /// The miniround (0 = initial takes).
        miniround: u32,
    },
    /// Entering a crux room on `claim`: the claim, the messages that
    /// triggered it, both parties' positions, prior related crux cards.
    CruxEntry {
        /// The disputed claim.
        claim: ClaimId,
    },
    /// A turn in crux room `room`: the dispute plus as many of the room's
    /// messages as fit the budget (no fixed cap).
    CruxExchange {
        /// The room.
        room: CruxRoomId,
    },
    /// Closing statement: the whole ledger and all reflections, and the
    /// messages not analysed yet, verbatim.
    Closing,
    /// A dialectic proposal in `round` (round 1, or an agent with no
    /// refinement to carry over): the problem, the clarifications, the
    /// agent's own history.
    Propose {
        /// The round.
        round: u32,
    },
    /// A dialectic critique of `target`'s proposal of `round`.
    Critique {
        /// The round.
        round: u32,
        /// Whose proposal is critiqued.
        target: PersonaId,
    },
    /// A dialectic refinement of one's own proposal of `round`, from the
    /// critiques it received.
    Refine {
        /// The round.
        round: u32,
    },
    /// The input of an agent's perspective summary: its own proposals,
    /// the critiques it received and its own refinements, newest first
    /// within the budget.
    PerspectiveSummary,
    /// The judge: the synthesis after `round` (the final round's proposals
    /// and refinements, or the judge's summary of them, first).
    Judgement {
        /// The round synthesized.
        round: u32,
    },
    /// The input of the judge's summary: the proposals and refinements of `round`.
    JudgeSummary {
        /// The final round.
        round: u32,
    },
    /// A deliberation turn (seeds 001 + 002): the full memory context (the
    /// rolling summary, decisions, active proposals with their reactions,
    /// the speaker's last position and key contributions) and the messages
    /// since the summary, verbatim, newest kept first.
    Deliberate {
        /// The turn (1-based).
        turn: u32,
    },
    /// Deciding whether to speak next in a listening deliberation (seed
    /// 002's brief context): decisions, active proposals, the last 5 messages.
    Listen {
        /// The turn the decision is for.
        turn: u32,
    },
}

impl Phase {
    /// Short label ("opening", "take", "crux_entry", …).
    pub fn label(&self) -> &'static str {
        match self {
            Self::Opening => "opening",
            Self::Take { .. } => "take",
            Self::CruxEntry { .. } => "crux_entry",
            Self::CruxExchange { .. } => "crux_exchange",
            Self::Closing => "closing",
            Self::Propose { .. } => "propose",
            Self::Critique { .. } => "critique",
            Self::Refine { .. } => "refine",
            Self::PerspectiveSummary => "perspective_summary",
            Self::Judgement { .. } => "judgement",
            Self::JudgeSummary { .. } => "judge_summary",
            Self::Deliberate { .. } => "deliberate",
            Self::Listen { .. } => "listen",
        }
    }

    /// Whether an agent acts in this phase, so its context shows the
    /// moderator's notes (not in the summaries of one's own or the
    /// judge's, which condense what was said).
    pub fn shows_notes(&self) -> bool {
        !matches!(self, Self::PerspectiveSummary | Self::JudgeSummary { .. })
    }

    /// Whether a persona speaks in its own voice in this phase, so its
    /// context shows EVIDENCE from its corpus when it has one (not in
    /// summaries, the judge's phases or a listening bid).
    pub fn shows_evidence(&self) -> bool {
        !matches!(
            self,
            Self::PerspectiveSummary
                | Self::Judgement { .. }
                | Self::JudgeSummary { .. }
                | Self::Listen { .. }
        )
    }

    /// Whether a turn in this phase may plan the turn after it on a copy of
    /// the board (to recall for it ahead): every phase but a long
    /// session's turns, whose board grows to 10,000 messages and whose
    /// turns recall nothing.
    pub fn plans_ahead(&self) -> bool {
        !matches!(self, Self::Deliberate { .. } | Self::Listen { .. })
    }

    /// Whether this phase's calls start with material other participants'
    /// calls of the round send alike, so that
    /// [`crate::AssembledContext::shared_prefix`] is worth marking: the
    /// structured debate's turns (the topic, the aspect, earlier rounds,
    /// crux cards, insights, the dispute of a crux room), a long session's
    /// turns and evaluations (the topic, the rolling summary, decisions)
    /// and the dialectic contributions (the problem, the clarifications,
    /// the proposal under review and its critiques). Not the judge's and
    /// summaries' calls, which no other call reads alike.
    pub fn shares_material(&self) -> bool {
        matches!(
            self,
            Self::Opening
                | Self::Take { .. }
                | Self::CruxEntry { .. }
                | Self::CruxExchange { .. }
                | Self::Closing
                | Self::Deliberate { .. }
                | Self::Listen { .. }
                | Self::Propose { .. }
                | Self::Critique { .. }
                | Self::Refine { .. }
        )
    }

    /// Budget weights per section for this phase. A section's share is its
    /// weight over the sum of the weights of the sections that have content.
    pub fn shares(&self) -> &'static [(SectionKind, u32)] {
        use SectionKind::*;
        match self {
            Self::Opening => &[(DebateState, 100)],
            Self::Take { miniround: 0, .. } => &[
                (DebateState, 8),
                (WhereEveryoneStands, 22),
                (YourPosition, 14),
                (OpenDisputes, 8),
                (EarlierRounds, 16),
                (EarlierSummary, 8),
                (KeyInsights, 12),
                (RelevantEarlierContext, 12),
                // The previous aspect's last miniround while its analysis
                // is still running.
                (NotYetAnalysed, 8),
            ],
            Self::Take { .. } => &[
                (DebateState, 6),
                (WhereEveryoneStands, 16),
                (YourPosition, 10),
                (OpenDisputes, 6),
                (RecentExchange, 36),
                (EarlierSummary, 6),
                (KeyInsights, 8),
                (RelevantEarlierContext, 12),
            ],
            Self::CruxEntry { .. } => &[
                (DebateState, 6),
                (TheDispute, 34),
                (YourPosition, 16),
                (WhereEveryoneStands, 16),
                (CruxCards, 14),
                (RelevantEarlierContext, 14),
            ],
            Self::CruxExchange { .. } => &[
                (DebateState, 5),
                (TheDispute, 12),
                (CruxExchange, 55),
                (YourPosition, 10),
                (WhereEveryoneStands, 8),
                (RelevantEarlierContext, 10),
            ],
            Self::Closing => &[
                (DebateState, 5),
                (WhereEveryoneStands, 24),
                (YourPosition, 16),
                (OpenDisputes, 7),
                (CruxCards, 12),
                (EarlierRounds, 14),
                (KeyInsights, 14),
                (RelevantEarlierContext, 8),
                // Present only while the last group's analysis is running.
                (NotYetAnalysed, 8),
            ],
            Self::Propose { .. } => &[
                (DebateState, 30),
                (Clarifications, 20),
                (Requirements, 8),
                (YourHistory, 26),
                (WhereEveryoneStands, 8),
                (OpenDisputes, 4),
                (RelevantEarlierContext, 12),
            ],
            Self::Critique { .. } => &[
                (DebateState, 14),
                (UnderReview, 42),
                (Clarifications, 8),
                (YourHistory, 14),
                (WhereEveryoneStands, 8),
                (OpenDisputes, 4),
                (RelevantEarlierContext, 10),
            ],
            Self::Refine { .. } => &[
                (DebateState, 10),
                (UnderReview, 24),
                (CritiquesReceived, 36),
                (Clarifications, 6),
                (YourHistory, 10),
                (RelevantEarlierContext, 8),
            ],
            Self::PerspectiveSummary => &[(YourHistory, 100)],
            Self::Judgement { .. } => &[
                (DebateState, 10),
                (Clarifications, 8),
                (Requirements, 10),
                (UnderReview, 50),
                (WhereEveryoneStands, 12),
                (OpenDisputes, 8),
                (CruxCards, 10),
            ],
            Self::JudgeSummary { .. } => &[(DebateState, 6), (UnderReview, 94)],
            // Seed 001's split of an agent's view: 1k summary, 5k recent
            // (the system prompt's 2k is outside the assembled context).
            // RELEVANT EARLIER CONTEXT (seed 001's long-term tier: what the
            // summaries compressed, recalled when it matches the turn)
            // takes its share only when a memory matched.
            Self::Deliberate { .. } => &[
                (DebateState, 3),
                (EarlierSummary, 15),
                (Decisions, 7),
                (Proposals, 8),
                (YourPosition, 5),
                (OpenDisputes, 4),
                (RelevantEarlierContext, 8),
                (RecentExchange, 58),
            ],
            Self::Listen { .. } => &[
                (DebateState, 10),
                (Decisions, 25),
                (Proposals, 30),
                (RecentExchange, 35),
            ],
        }
    }
}
