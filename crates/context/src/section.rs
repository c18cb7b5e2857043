//! Context sections and their rendering to text (a pure function).

use serde::Serialize;

/// The sections an assembled context can contain. Seed 000's template
/// (debate state, where everyone stands, your position so far, open
/// disputes, recent exchange, key insights, relevant earlier context), plus
/// the sections the other phases need (earlier rounds, crux cards, the
/// dispute behind a crux room, the crux room's exchange, and seed 001's
/// rolling summary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SectionKind {
    /// Topic, aspect, round.
    DebateState,
    /// The disputed claim and the dialogue that triggered it (crux phases).
    TheDispute,
    /// The crux room's own messages (crux exchange).
    CruxExchange,
    /// The last messages of the current aspect, verbatim.
    RecentExchange,
    /// The last group's messages while their analysis is still running
    /// (the staleness a speaker accepts), verbatim; cut first.
    NotYetAnalysed,
    /// The persona's own ledger.
    YourPosition,
    /// The other personas' ledgers, relative to the persona.
    WhereEveryoneStands,
    /// Active and in-room claims.
    OpenDisputes,
    /// Crux cards produced so far (related ones, in crux phases).
    CruxCards,
    /// Structured records of earlier rounds.
    EarlierRounds,
    /// Top reflections.
    KeyInsights,
    /// Seed 001's rolling summary of older transcript.
    EarlierSummary,
    /// Memories retrieved by the caller.
    RelevantEarlierContext,
    /// Clarifying questions and the answers given (dialectic).
    Clarifications,
    /// The agent's own earlier rounds: its latest perspective summary and
    /// what it proposed, received and refined since (dialectic).
    YourHistory,
    /// The proposal under review: another agent's (critique) or one's own
    /// (refinement), or the final round's proposals (judge) (dialectic).
    UnderReview,
    /// The critiques one's proposal received this round (dialectic).
    CritiquesReceived,
    /// Decisions recorded so far (deliberation).
    Decisions,
    /// Active proposals and their reactions (deliberation).
    Proposals,
    /// The notes a moderator posted while the debate runs (every phase an
    /// agent acts in).
    ModeratorNotes,
    /// The problem's requirements and which of them no proposal covers
    /// yet (dialectic).
    Requirements,
    /// Passages of the persona's own corpus relevant to the turn, each with
    /// the id it is cited by (present only when the persona has a corpus).
    Evidence,
}

impl SectionKind {
    /// Every kind, in the order sections are rendered: what is fixed for
    /// the whole debate first (the state, the notes, the clarifications
    /// and requirements once settled), then what later rounds add to and
    /// every participant reads alike (earlier rounds, summaries, insights,
    /// crux cards, decisions), then what is fixed for a round or a turn of
    /// the exchange (the proposal under review and the critiques of it,
    /// the dispute, the recent exchange, which only grows between two
    /// summaries; then a long session's proposals, whose reactions change
    /// at almost every turn), then what is this call's own (where the others stand relative to the speaker,
    /// its own position, its disputes, its memories). Calls that read the
    /// same material share a prefix, which providers cache.
    pub const RENDER_ORDER: [SectionKind; 22] = [
        Self::DebateState,
        Self::ModeratorNotes,
        Self::Clarifications,
        Self::Requirements,
        Self::EarlierRounds,
        Self::CruxCards,
        Self::KeyInsights,
        Self::EarlierSummary,
        Self::Decisions,
        Self::UnderReview,
        Self::CritiquesReceived,
        Self::TheDispute,
        Self::RecentExchange,
        Self::CruxExchange,
        Self::Proposals,
        Self::NotYetAnalysed,
        Self::WhereEveryoneStands,
        Self::YourPosition,
        Self::OpenDisputes,
        Self::RelevantEarlierContext,
        Self::Evidence,
        Self::YourHistory,
    ];

    /// Over budget, sections give up items in this order: the first kind
    /// loses its items (newest-least-important first) before the next one
    /// loses any. Leftover budget is handed out in the reverse order.
    /// The debate state is never dropped, only cut.
    pub const SHRINK_ORDER: [SectionKind; 22] = [
        Self::NotYetAnalysed,
        Self::RelevantEarlierContext,
        Self::Evidence,
        Self::EarlierSummary,
        Self::KeyInsights,
        Self::EarlierRounds,
        Self::CruxCards,
        Self::OpenDisputes,
        Self::WhereEveryoneStands,
        Self::YourPosition,
        Self::YourHistory,
        Self::Clarifications,
        Self::Requirements,
        Self::Decisions,
        Self::Proposals,
        Self::CritiquesReceived,
        Self::TheDispute,
        Self::RecentExchange,
        Self::CruxExchange,
        Self::UnderReview,
        Self::ModeratorNotes,
        Self::DebateState,
    ];

    /// The heading shown to the model.
    pub fn title(self) -> &'static str {
        match self {
            Self::DebateState => "DEBATE STATE",
            Self::TheDispute => "THE DISPUTE",
            Self::CruxExchange => "CRUX ROOM EXCHANGE",
            Self::RecentExchange => "RECENT EXCHANGE",
            Self::NotYetAnalysed => "JUST SAID (NOT IN THE LEDGER YET)",
            Self::YourPosition => "YOUR POSITION SO FAR",
            Self::WhereEveryoneStands => "WHERE EVERYONE STANDS",
            Self::OpenDisputes => "OPEN DISPUTES",
            Self::CruxCards => "CRUX CARDS",
            Self::EarlierRounds => "EARLIER ROUNDS",
            Self::KeyInsights => "KEY INSIGHTS",
            Self::EarlierSummary => "EARLIER DISCUSSION (SUMMARY)",
            Self::RelevantEarlierContext => "RELEVANT EARLIER CONTEXT",
            Self::Clarifications => "CLARIFICATIONS",
            Self::YourHistory => "YOUR EARLIER ROUNDS",
            Self::UnderReview => "UNDER REVIEW",
            Self::CritiquesReceived => "CRITIQUES OF YOUR PROPOSAL",
            Self::Decisions => "DECISIONS MADE",
            Self::Proposals => "ACTIVE PROPOSALS",
            Self::ModeratorNotes => "MODERATOR NOTES",
            Self::Requirements => "REQUIREMENTS",
            Self::Evidence => "EVIDENCE: YOUR SOURCES (cite as [E:id])",
        }
    }

    /// The heading line: `── TITLE ─────…`, 46 characters wide.
    pub fn heading(self) -> String {
        let title = self.title();
        let rule = 46usize.saturating_sub(title.chars().count() + 4).max(3);
        format!("── {title} {}", "─".repeat(rule))
    }

    /// Position in [`SectionKind::SHRINK_ORDER`].
    pub fn shrink_rank(self) -> usize {
        Self::SHRINK_ORDER
            .iter()
            .position(|k| *k == self)
            .unwrap_or(usize::MAX)
    }

    /// Position in [`SectionKind::RENDER_ORDER`].
    pub(crate) fn render_rank(self) -> usize {
        Self::RENDER_ORDER
            .iter()
            .position(|k| *k == self)
            .unwrap_or(usize::MAX)
    }
}

/// A section ready to render: its kind and its items in display order.
/// An item may span several lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Section {
    /// Which section.
    pub kind: SectionKind,
    /// Items, in display order.
    pub items: Vec<String>,
}

impl Section {
    /// The section's text: heading line, then one item per line.
    pub fn render(&self) -> String {
        let mut out = self.kind.heading();
        for item in &self.items {
            out.push('\n');
            out.push_str(item);
        }
        out
    }
}

impl SectionKind {
    /// Whether the section shows material that every participant's call
    /// of a round reads alike and that stays the same from one call to the
    /// next, in the phases that share ([`crate::Phase::shares_material`]):
    /// the layers rendered first, whose end
    /// [`crate::AssembledContext::shared_prefix`] marks
    /// (a provider with explicit cache breakpoints caches up to there, and
    /// a later call reads it only if it sends the same text up to the same
    /// mark). The exchanges and a long session's proposals, rendered right
    /// after them, are read alike too but grow or change with every turn:
    /// providers that cache the longest prefix (OpenAI) serve them, a mark
    /// after them would be written and never read.
    pub fn is_shared_material(self) -> bool {
        matches!(
            self,
            Self::DebateState
                | Self::ModeratorNotes
                | Self::Clarifications
                | Self::Requirements
                | Self::EarlierRounds
                | Self::CruxCards
                | Self::KeyInsights
                | Self::EarlierSummary
                | Self::Decisions
                | Self::UnderReview
                | Self::CritiquesReceived
                | Self::TheDispute
        )
    }
}

/// Bytes of [`render`]'s text that its leading shared-material sections
/// take ([`SectionKind::is_shared_material`]): where a call's own sections
/// begin, or the whole text's length when it has none.
pub fn shared_material_len(sections: &[Section]) -> usize {
    let mut ordered: Vec<&Section> = sections.iter().filter(|s| !s.items.is_empty()).collect();
    ordered.sort_by_key(|s| s.kind.render_rank());
    let mut len = 0;
    for (i, section) in ordered.iter().enumerate() {
        if !section.kind.is_shared_material() {
            break;
        }
        // The blank line between sections belongs to what follows.
        len += section.render().len() + if i > 0 { 2 } else { 0 };
    }
    len
}

/// Renders sections in [`SectionKind::RENDER_ORDER`], separated by a blank
/// line. Empty sections are omitted. Pure: the same sections always give the
/// same text.
pub fn render(sections: &[Section]) -> String {
    let mut ordered: Vec<&Section> = sections.iter().filter(|s| !s.items.is_empty()).collect();
    ordered.sort_by_key(|s| s.kind.render_rank());
    ordered
        .iter()
        .map(|s| s.render())
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_in_both_orders_exactly_once() {
        for kind in SectionKind::RENDER_ORDER {
            assert_eq!(
                SectionKind::SHRINK_ORDER
                    .iter()
                    .filter(|k| **k == kind)
                    .count(),
                1,
                "{kind:?}"
            );
        }
        assert_eq!(
            SectionKind::SHRINK_ORDER.last(),
            Some(&SectionKind::DebateState)
        );
    }

    #[test]
    fn the_shared_material_is_a_prefix_of_the_rendered_text() {
        let section = |kind, item: &str| Section {
            kind,
            items: vec![item.to_owned()],
        };
        let sections = vec![
            section(SectionKind::YourHistory, "mine"),
            section(SectionKind::UnderReview, "their proposal"),
            section(SectionKind::DebateState, "Problem: p"),
            section(SectionKind::WhereEveryoneStands, "standings"),
        ];
        let text = render(&sections);
        let shared = shared_material_len(&sections);
        assert!(text[..shared].ends_with("their proposal"), "{text}");
        assert!(
            text[shared..].starts_with("\n\n── WHERE EVERYONE STANDS"),
            "{text}"
        );
        let only_shared = &sections[1..3];
        assert_eq!(shared_material_len(only_shared), render(only_shared).len());
    }

    #[test]
    fn headings_are_46_chars_wide() {
        for kind in SectionKind::RENDER_ORDER {
            assert_eq!(kind.heading().chars().count(), 46, "{kind:?}");
        }
    }

    #[test]
    fn render_orders_sections_and_skips_empty_ones() {
        let sections = vec![
            Section {
                kind: SectionKind::KeyInsights,
                items: vec!["• insight".into()],
            },
            Section {
                kind: SectionKind::OpenDisputes,
                items: vec![],
            },
            Section {
                kind: SectionKind::DebateState,
                items: vec!["Topic: x".into(), "Round 1 of 3".into()],
            },
        ];
        let text = render(&sections);
        assert!(text.starts_with("── DEBATE STATE"));
        assert!(text.contains("Topic: x\nRound 1 of 3\n\n── KEY INSIGHTS"));
        assert!(!text.contains("OPEN DISPUTES"));
    }
}
