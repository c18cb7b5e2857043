//! Section builders of a deliberation (seeds 001 + 002): the session's
//! state, the decisions made, the active proposals with their reactions,
//! the speaker's own last position and key contributions, and the messages
//! since the rolling summary. Each returns candidates most important first
//! (the newest first, so a tight budget drops the oldest); the fitter keeps
//! what the budget allows, so a view never exceeds its budget however long
//! the session.

use agon_core::{Blackboard, Persona, PersonaId, ProposalStatus, Reaction};

use crate::fit::Draft;
use crate::section::SectionKind;

/// Most messages offered to RECENT EXCHANGE in a speaking turn: more than
/// any recent budget holds, so the budget (not this cap) decides, and a
/// session whose summaries keep failing still costs a bounded amount of work.
pub const RECENT_CANDIDATES: usize = 240;
/// When the budget cuts a speaking turn's window, it starts at a message
/// whose index is a multiple of this, so that consecutive turns share the
/// window as a prefix for up to this many turns (a provider caches it); it
/// shows up to this many minus one messages fewer than the budget holds.
pub const WINDOW_STEP: usize = 8;
/// Messages shown to a listening agent (seed 002: the last 5).
pub const LISTEN_MESSAGES: usize = 5;
/// Most decisions and most active proposals offered to a view (the
/// newest): more than a view's share holds, and the work of a view stays
/// bounded however many a session has made.
pub const MEMORY_CANDIDATES: usize = 100;
/// Key contributions of the speaker shown (the newest).
const KEY_CONTRIBUTIONS: usize = 5;
/// Longest quotation of the speaker's own last message, in characters.
const LAST_POSITION_CHARS: usize = 500;

fn name<'a>(bb: &'a Blackboard, id: &'a PersonaId) -> &'a str {
    bb.persona_name(id)
}

/// The session's state: its topic and context, the same for every
/// participant's call (who speaks, and how far the session is, are said
/// with the task, after everything the calls share).
pub(crate) fn state(bb: &Blackboard) -> Draft {
    let mut draft = Draft::new(SectionKind::DebateState);
    if let Some(topic) = bb.topic() {
        draft.push(format!("Topic: {}", topic.question.trim()));
        if let Some(context) = topic.context.as_deref().filter(|c| !c.trim().is_empty()) {
            draft.push(format!("Context: {}", context.trim()));
        }
    }
    draft
}

/// Every decision, newest first: `[D2] topic: outcome (supported by …)`.
pub(crate) fn decisions(bb: &Blackboard) -> Draft {
    let mut draft = Draft::new(SectionKind::Decisions);
    for (i, d) in bb
        .decisions()
        .iter()
        .enumerate()
        .rev()
        .take(MEMORY_CANDIDATES)
    {
        let supporters: Vec<&str> = d.supporting.iter().map(|p| name(bb, p)).collect();
        draft.push_at(
            format!(
                "• [{}] {}: {} (supported by {})",
                d.id,
                d.topic.trim(),
                d.outcome.trim(),
                supporters.join(", ")
            ),
            i,
        );
    }
    draft
}

/// The active proposals, newest first, with each participant's latest
/// reaction.
pub(crate) fn proposals(bb: &Blackboard) -> Draft {
    let mut draft = Draft::new(SectionKind::Proposals);
    let active = bb
        .proposals()
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, p)| p.status == ProposalStatus::Active)
        .take(MEMORY_CANDIDATES);
    for (i, p) in active {
        let mut line = format!(
            "• [{}] {} proposes: \"{}\"",
            p.id,
            name(bb, &p.proposer),
            p.content.trim()
        );
        for (label, reaction) in [
            ("support", Reaction::Support),
            ("oppose", Reaction::Oppose),
            ("neutral", Reaction::Neutral),
        ] {
            let who: Vec<&str> = p
                .reactions
                .iter()
                .filter(|(_, r)| **r == reaction)
                .map(|(id, _)| name(bb, id))
                .collect();
            if !who.is_empty() {
                line.push_str(&format!(" — {label}: {}", who.join(", ")));
            }
        }
        if p.reactions.is_empty() {
            line.push_str(" — no reactions yet");
        }
        draft.push_at(line, i);
    }
    draft
}

/// The speaker's last message (seed 002's "your previous position") and
/// its key contributions, newest first.
pub(crate) fn your_position(bb: &Blackboard, me: &Persona) -> Draft {
    let mut draft = Draft::new(SectionKind::YourPosition);
    if let Some(last) = bb.messages().iter().rev().find(|m| m.persona == me.id) {
        draft.push(format!(
            "Your last message: \"{}\"",
            agon_extract::truncate_chars(last.content.trim(), LAST_POSITION_CHARS)
        ));
    }
    if let Some(part) = bb.participation().get(&me.id) {
        let newest = part.key_contributions.iter().rev().take(KEY_CONTRIBUTIONS);
        for c in newest {
            draft.push(format!("Your key contribution: {}", c.trim()));
        }
    }
    draft
}

/// Messages from index `from` on, newest first (at most `max`), as
/// `Name: text` lines in transcript order.
pub(crate) fn recent(bb: &Blackboard, from: usize, max: usize) -> Draft {
    let mut draft = Draft::new(SectionKind::RecentExchange);
    let messages = bb.messages();
    let from = from.min(messages.len());
    for (i, m) in messages.iter().enumerate().skip(from).rev().take(max) {
        draft.push_at(format!("{}: {}", name(bb, &m.persona), m.content.trim()), i);
    }
    draft
}

/// Where the verbatim window starts: after the latest rolling summary.
pub(crate) fn window_start(bb: &Blackboard) -> usize {
    bb.latest_rolling_summary().map_or(0, |s| s.span.end)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use agon_core::{
        DebateEvent, DebateSummary, Decision, DecisionId, DialogueMessage, MessageId, MessageKind,
        MessageSpan, Persona, PersonaId, ProposalId, SummaryScope, Topic,
    };
    use chrono::DateTime;
    use proptest::prelude::*;

    use crate::{Assembler, ContextBudget, ContextExtras, Phase};

    const WORDS: [&str; 8] = [
        "budget", "buses", "lanes", "cost", "riders", "safety", "we", "should",
    ];

    fn text(words: usize, salt: usize) -> String {
        (0..words)
            .map(|i| WORDS[(i * 7 + salt) % WORDS.len()])
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// One generated session step: a message of `words` words by persona
    /// `who`, then maybe a rolling summary of `summary` words, a proposal,
    /// a decision.
    type Op = (usize, usize, Option<usize>, bool, bool);

    fn session(ops: &[Op]) -> Vec<DebateEvent> {
        let ids = ["ada", "bo", "cy"];
        let mut events = vec![DebateEvent::DebateStarted {
            debate: "d".into(),
            topic: Topic::new("How should the city spend its transport budget?"),
            aspects: vec![],
            personas: ids
                .iter()
                .map(|id| Persona::debater(*id, id.to_uppercase(), "citizen", "plain"))
                .collect(),
            time: DateTime::UNIX_EPOCH,
            protocol: None,
        }];
        let (mut covered, mut proposals, mut decisions) = (0, 0, 0);
        for (i, (who, words, summary, proposal, decision)) in ops.iter().enumerate() {
            let persona = PersonaId::new(ids[who % 3]);
            events.push(DebateEvent::MessageAppended {
                message: DialogueMessage {
                    id: MessageId::new(format!("msg-{}", i + 1)),
                    persona: persona.clone(),
                    kind: MessageKind::Deliberation,
                    aspect: None,
                    round: 0,
                    miniround: None,
                    crux_room: None,
                    content: text(*words, i),
                    time: DateTime::UNIX_EPOCH,
                    reply_to: None,
                    meta: None,
                },
            });
            if let Some(summary_words) = summary {
                events.push(DebateEvent::SummaryRecorded {
                    summary: DebateSummary {
                        scope: SummaryScope::Rolling,
                        span: MessageSpan {
                            start: covered,
                            end: i + 1,
                        },
                        text: text(*summary_words, i),
                        before_chars: 0,
                        after_chars: 0,
                        method: "rolling".into(),
                        round: None,
                        temperature_centi: None,
                        latency_ms: None,
                        tokens: None,
                        model: None,
                        time: DateTime::UNIX_EPOCH,
                    },
                });
                covered = i + 1;
            }
            if *proposal {
                proposals += 1;
                events.push(DebateEvent::ProposalRecorded {
                    proposal: ProposalId::new(format!("P{proposals}")),
                    proposer: persona.clone(),
                    content: text(40, i),
                    time: DateTime::UNIX_EPOCH,
                });
            }
            if *decision {
                decisions += 1;
                events.push(DebateEvent::DecisionRecorded {
                    decision: Decision {
                        id: DecisionId::new(format!("D{decisions}")),
                        topic: text(5, i),
                        outcome: text(30, i),
                        supporting: vec![persona],
                        source_message: None,
                        time: DateTime::UNIX_EPOCH,
                    },
                });
            }
        }
        events
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// Whatever the session (long messages, long summaries, many
        /// proposals and decisions, summaries that never came), no turn's
        /// view and no listening view exceeds its budget.
        #[test]
        fn no_view_exceeds_its_budget(
            ops in proptest::collection::vec(
                (0usize..3, 1usize..600, proptest::option::weighted(0.08, 1usize..2_000), proptest::bool::weighted(0.1), proptest::bool::weighted(0.05)),
                1..120,
            ),
            budget in 200usize..6_000,
        ) {
            let assembler = Assembler::default();
            let budget = ContextBudget::new(budget).unwrap();
            let mut board = agon_core::Blackboard::new();
            for (turn, event) in session(&ops).iter().enumerate() {
                board.apply(event).unwrap();
                if !matches!(event, DebateEvent::MessageAppended { .. }) {
                    continue;
                }
                let turn = u32::try_from(turn).unwrap();
                for phase in [Phase::Deliberate { turn }, Phase::Listen { turn }] {
                    let view = assembler
                        .assemble(&board, "bo", &phase, budget, &ContextExtras::default())
                        .unwrap();
                    prop_assert!(view.total_tokens <= budget.total(), "{} > {}", view.total_tokens, budget.total());
                }
            }
        }
    }

    #[test]
    fn the_view_shows_the_summary_the_memory_and_the_newest_messages() {
        let ops: Vec<Op> = (0..30)
            .map(|i| (i % 3, 20, (i == 11).then_some(50), i == 14, i == 20))
            .collect();
        let mut board = agon_core::Blackboard::new();
        for event in session(&ops) {
            board.apply(&event).unwrap();
        }
        let view = Assembler::default()
            .assemble(
                &board,
                "ada",
                &Phase::Deliberate { turn: 31 },
                ContextBudget::new(6_000).unwrap(),
                &ContextExtras::default(),
            )
            .unwrap();
        let t = &view.text;
        assert!(t.contains("Messages 1–12 in brief:"), "{t}");
        assert!(t.contains("── DECISIONS MADE"), "{t}");
        assert!(t.contains("• [D1]"), "{t}");
        assert!(
            t.contains("• [P1] CY proposes:") && t.contains("no reactions yet"),
            "{t}"
        );
        assert!(t.contains("Your last message:"), "{t}");
        // The window starts after the summary: message 13 on, not 12.
        let recent = &t[t.find("── RECENT EXCHANGE").unwrap()..];
        let recent = &recent[..recent.find("\n\n──").unwrap_or(recent.len())];
        assert_eq!(recent.lines().count() - 1, 18, "{recent}");
    }
}
