//! Section builders of the dialectic phases (seed 004): the problem, the
//! clarifications, an agent's own history (its latest perspective summary,
//! or its proposals, the critiques it received and its refinements), the
//! proposal under review, the critiques received, and the judge's view of
//! the final round. Like every builder, each returns candidates most
//! important first; the fitter keeps what the budget allows.

use agon_core::{
    Blackboard, DialogueMessage, MessageId, MessageKind, Persona, PersonaId, SummaryScope,
};

use crate::fit::Draft;
use crate::perspective::history_since_summary;
use crate::section::SectionKind;
use crate::trust::{any_standing, labelled_name, trust_of};

/// The critiques of the same round aimed at a refinement's author, among
/// `listed` (a batch's messages): what the refinement answers.
pub fn critiques_answered(
    board: &Blackboard,
    refinement: &DialogueMessage,
    listed: &[MessageId],
) -> Vec<MessageId> {
    listed
        .iter()
        .filter_map(|id| board.message(id))
        .filter(|m| {
            m.round == refinement.round
                && matches!(&m.kind, MessageKind::Critique { target } if *target == refinement.persona)
        })
        .map(|m| m.id.clone())
        .collect()
}

fn name<'a>(bb: &'a Blackboard, id: &'a PersonaId) -> &'a str {
    bb.persona_name(id)
}

/// The problem and its context; for the judge's phases (`judge_stage`),
/// the agents and the stage too. An agent's name, role and stage close its
/// prompt instead (its role and task), so the state is the same for every
/// agent: the start of the prefix their calls share.
pub(crate) fn state(bb: &Blackboard, judge_stage: Option<&str>) -> Draft {
    let mut draft = Draft::new(SectionKind::DebateState);
    if let Some(topic) = bb.topic() {
        draft.push(format!("Problem: {}", topic.question.trim()));
        if let Some(context) = topic.context.as_deref().filter(|c| !c.trim().is_empty()) {
            draft.push(format!("Context: {}", context.trim()));
        }
    }
    if let Some(stage) = judge_stage {
        let agents: Vec<String> = bb
            .debaters()
            .map(|p| match &p.specialty {
                Some(s) => format!("{} ({s})", p.name),
                None => p.name.clone(),
            })
            .collect();
        draft.push(format!("Agents: {}", agents.join(", ")));
        draft.push(stage.to_owned());
    }
    draft
}

/// Every clarifying question with its answer ("NA" when skipped), in the
/// order asked.
pub(crate) fn clarifications(bb: &Blackboard) -> Draft {
    let mut draft = Draft::new(SectionKind::Clarifications);
    for question in bb
        .messages()
        .iter()
        .filter(|m| m.kind == MessageKind::ClarificationQuestion)
    {
        let answer = bb
            .answer_to(&question.id)
            .map_or("NA", |a| a.content.trim());
        let order = draft.candidates.len();
        draft.push_lines_at(
            &[
                format!(
                    "{} asked: {}",
                    name(bb, &question.persona),
                    question.content.trim()
                ),
                format!("  Answer: {answer}"),
            ],
            order,
        );
    }
    draft
}

fn history_line(bb: &Blackboard, me: &PersonaId, m: &DialogueMessage) -> String {
    let what = match &m.kind {
        MessageKind::Proposal => "your proposal".to_owned(),
        MessageKind::Refinement => "your refinement".to_owned(),
        MessageKind::Critique { .. } if &m.persona == me => "your critique".to_owned(),
        MessageKind::Critique { .. } => format!("critique from {}", name(bb, &m.persona)),
        other => other.label().to_owned(),
    };
    format!("Round {} — {what}: {}", m.round, m.content.trim())
}

/// What the agent carries of its earlier rounds: its latest perspective
/// summary, then its perspective since (newest first; carried-over
/// proposals are left out, they repeat the refinement shown). `before`
/// leaves out the messages of that round and later (they are shown in
/// their own sections). The input of a summary is the same: the previous
/// summary stands for everything before it.
pub(crate) fn your_history(bb: &Blackboard, me: &Persona, before: Option<u32>) -> Draft {
    let mut draft = Draft::new(SectionKind::YourHistory);
    let (summary, since) = history_since_summary(bb, &me.id);
    if let Some(summary) = summary {
        draft.push_at(
            format!(
                "Your summary of your earlier rounds (made at round {}): {}",
                summary.round.unwrap_or_default(),
                summary.text.trim()
            ),
            0,
        );
    }
    for m in since.iter().rev() {
        if before.is_some_and(|r| m.round >= r) {
            continue;
        }
        let index = bb.message_index(&m.id).unwrap_or(0);
        draft.push_at(history_line(bb, &me.id, m), index + 1);
    }
    draft
}

/// A ledger section, when the debate has a ledger at all (its messages
/// are analysed); with analysis off it would only say "no stance yet".
pub(crate) fn ledger(bb: &Blackboard, draft: Draft) -> Draft {
    if bb.analyzed_turns().is_empty() {
        Draft::new(draft.kind)
    } else {
        draft
    }
}

/// The problem's requirements (the proposal and judgement contexts).
/// Before any contribution is analysed, each with its id, weight and
/// text; after, one line naming the covered ones by id, then each
/// requirement no proposal covers yet, with its text (uncovered major ones
/// kept first when the budget is short).
pub(crate) fn requirements(bb: &Blackboard) -> Draft {
    let mut draft = Draft::new(SectionKind::Requirements);
    let ledger = bb.requirements();
    if !bb.coverage_tracked() {
        for r in &ledger.requirements {
            draft.push(format!("{} ({}): {}", r.id, r.weight(), r.text.trim()));
        }
        return draft;
    }
    let covered: Vec<&str> = ledger
        .requirements
        .iter()
        .filter(|r| ledger.is_covered(&r.id))
        .map(|r| r.id.as_str())
        .collect();
    let mut uncovered: Vec<(bool, usize, String)> = ledger
        .requirements
        .iter()
        .enumerate()
        .filter(|(_, r)| !ledger.is_covered(&r.id))
        .map(|(i, r)| {
            (
                !r.major,
                i + 1,
                format!(
                    "{} ({}, no proposal covers it yet): {}",
                    r.id,
                    r.weight(),
                    r.text.trim()
                ),
            )
        })
        .collect();
    uncovered.sort();
    for (_, order, line) in uncovered {
        draft.push_at(line, order);
    }
    if !covered.is_empty() {
        draft.push_at(format!("Covered by a proposal: {}", covered.join(", ")), 0);
    }
    draft
}

/// The agent's latest perspective summary, if it has one.
pub(crate) fn your_summary(bb: &Blackboard, me: &Persona) -> Draft {
    let mut draft = Draft::new(SectionKind::YourHistory);
    if let Some(summary) = bb.latest_summary(&SummaryScope::Persona {
        persona: me.id.clone(),
    }) {
        draft.push(format!(
            "Your summary of your earlier rounds (made at round {}): {}",
            summary.round.unwrap_or_default(),
            summary.text.trim()
        ));
    }
    draft
}

pub(crate) fn round_message<'a>(
    bb: &'a Blackboard,
    persona: &PersonaId,
    kind: &MessageKind,
    round: u32,
) -> Option<&'a DialogueMessage> {
    bb.messages()
        .iter()
        .rev()
        .find(|m| &m.persona == persona && &m.kind == kind && m.round == round)
}

/// `target`'s proposal of `round`.
pub(crate) fn target_proposal(bb: &Blackboard, target: &PersonaId, round: u32) -> Draft {
    let mut draft = Draft::new(SectionKind::UnderReview);
    if let Some(p) = round_message(bb, target, &MessageKind::Proposal, round) {
        draft.push(format!(
            "{}'s proposal (round {round}):\n{}",
            name(bb, target),
            p.content.trim()
        ));
    }
    draft
}

/// The agent's own proposal of `round`, shown as its critics were shown
/// it (named, not "your"): the refinement's prompt then shares its prefix
/// with the critiques of that proposal (provider prompt caches).
pub(crate) fn own_proposal(bb: &Blackboard, me: &Persona, round: u32) -> Draft {
    target_proposal(bb, &me.id, round)
}

/// The critiques the agent's proposal received in `round`, the most
/// trusted critic's first (seed 003: trust weights feedback; the fitter
/// drops the last first), each critic named with its trust standing when
/// the debate read one.
pub(crate) fn critiques_received(bb: &Blackboard, me: &Persona, round: u32) -> Draft {
    let mut draft = Draft::new(SectionKind::CritiquesReceived);
    let mut critiques: Vec<&DialogueMessage> = bb
        .messages()
        .iter()
        .filter(|m| {
            m.round == round
                && matches!(&m.kind, MessageKind::Critique { target } if target == &me.id)
        })
        .collect();
    // Stable: critics of equal trust keep the order they spoke in.
    critiques.sort_by(|a, b| trust_of(bb, &b.persona).total_cmp(&trust_of(bb, &a.persona)));
    if any_standing(bb, critiques.iter().map(|m| &m.persona)) {
        draft.push(
            "Ordered by each critic's trust from past debates, highest first; \
             weigh low-trust critiques and critiques from agents on probation with care."
                .to_owned(),
        );
    }
    for m in critiques {
        draft.push(format!(
            "{}: {}",
            labelled_name(bb, &m.persona),
            m.content.trim()
        ));
    }
    draft
}

/// The judge's view of `round`: its summary of the round when it made one,
/// else the round's refinements (first) and proposals (carried-over ones
/// repeat a refinement and are left out).
pub(crate) fn final_round(bb: &Blackboard, round: u32, use_summary: bool) -> Draft {
    let mut draft = Draft::new(SectionKind::UnderReview);
    if use_summary
        && let Some(summary) = bb
            .latest_summary(&SummaryScope::Judge)
            .filter(|s| s.round == Some(round))
    {
        draft.push(format!(
            "Summary of round {round}'s proposals and refinements: {}",
            summary.text.trim()
        ));
        return draft;
    }
    let label = |m: &DialogueMessage| {
        format!(
            "{} — {} (round {round}):\n{}",
            labelled_name(bb, &m.persona),
            m.kind.label(),
            m.content.trim()
        )
    };
    let in_round = |kind: MessageKind| {
        bb.messages()
            .iter()
            .enumerate()
            .filter(move |(_, m)| m.round == round && m.kind == kind && !m.is_carried_proposal())
    };
    for (i, m) in in_round(MessageKind::Refinement) {
        draft.push_at(label(m), i);
    }
    for (i, m) in in_round(MessageKind::Proposal) {
        draft.push_at(label(m), i);
    }
    draft
}
