//! Section builders of the dialectic phases (seed 004): the problem, the
//! clarifications, an agent's own history (its latest perspective summary,
//! or its proposals, the critiques it received and its refinements), the
//! proposal under review, the critiques received, and the judge's view of
//! the final round. Like every builder, each returns candidates most
//! important first; the fitter keeps what the budget allows.

use agon_core::{Blackboard, DialogueMessage, MessageKind, Persona, PersonaId, SummaryScope};

use crate::fit::Draft;
use crate::perspective::agent_perspective;
use crate::section::SectionKind;

fn name<'a>(bb: &'a Blackboard, id: &'a PersonaId) -> &'a str {
    bb.persona_name(id)
}

/// Whether a proposal was carried over from the previous round's
/// refinement (it answers that refinement, and repeats it).
fn carried(message: &DialogueMessage) -> bool {
    message.kind == MessageKind::Proposal && message.reply_to.is_some()
}

/// The problem, its context, and where the debate stands.
pub(crate) fn state(bb: &Blackboard, me: Option<&Persona>, stage: &str) -> Draft {
    let mut draft = Draft::new(SectionKind::DebateState);
    if let Some(topic) = bb.topic() {
        draft.push(format!("Problem: {}", topic.question.trim()));
        if let Some(context) = topic.context.as_deref().filter(|c| !c.trim().is_empty()) {
            draft.push(format!("Context: {}", context.trim()));
        }
    }
    let agents: Vec<String> = bb
        .debaters()
        .map(|p| match &p.specialty {
            Some(s) => format!("{} ({s})", p.name),
            None => p.name.clone(),
        })
        .collect();
    draft.push(format!("Agents: {}", agents.join(", ")));
    match me {
        Some(me) => draft.push(format!("You are {}. {stage}", me.name)),
        None => draft.push(stage.to_owned()),
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
            .messages()
            .iter()
            .find(|m| {
                m.kind == MessageKind::ClarificationAnswer
                    && m.reply_to.as_ref() == Some(&question.id)
            })
            .map_or("NA", |a| a.content.trim());
        draft.push(format!(
            "{} asked: {}\n  Answer: {answer}",
            name(bb, &question.persona),
            question.content.trim()
        ));
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

/// The agent's history before `round`: with `use_summary`, its latest
/// perspective summary and what came after it; otherwise (the input of a
/// fresh summary) the whole perspective. Newest first; carried-over
/// proposals are left out (they repeat the refinement shown).
pub(crate) fn your_history(
    bb: &Blackboard,
    me: &Persona,
    round: Option<u32>,
    use_summary: bool,
) -> Draft {
    let mut draft = Draft::new(SectionKind::YourHistory);
    let summary = use_summary
        .then(|| {
            bb.latest_summary(&SummaryScope::Persona {
                persona: me.id.clone(),
            })
        })
        .flatten();
    let after = summary.map_or(0, |s| s.span.end);
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
    let perspective = agent_perspective(bb, &me.id);
    for m in perspective.iter().rev() {
        let index = bb.message_index(&m.id).unwrap_or(0);
        if index < after || carried(m) || round.is_some_and(|r| m.round >= r) {
            continue;
        }
        draft.push_at(history_line(bb, &me.id, m), index + 1);
    }
    draft
}

fn round_message<'a>(
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

/// The agent's own proposal of `round`.
pub(crate) fn own_proposal(bb: &Blackboard, me: &Persona, round: u32) -> Draft {
    let mut draft = Draft::new(SectionKind::UnderReview);
    if let Some(p) = round_message(bb, &me.id, &MessageKind::Proposal, round) {
        draft.push(format!(
            "Your proposal (round {round}):\n{}",
            p.content.trim()
        ));
    }
    draft
}

/// The critiques the agent's proposal received in `round`.
pub(crate) fn critiques_received(bb: &Blackboard, me: &Persona, round: u32) -> Draft {
    let mut draft = Draft::new(SectionKind::CritiquesReceived);
    for m in bb.messages().iter().filter(|m| {
        m.round == round && matches!(&m.kind, MessageKind::Critique { target } if target == &me.id)
    }) {
        draft.push(format!("{}: {}", name(bb, &m.persona), m.content.trim()));
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
            name(bb, &m.persona),
            m.kind.label(),
            m.content.trim()
        )
    };
    let in_round = |kind: MessageKind| {
        bb.messages()
            .iter()
            .enumerate()
            .filter(move |(_, m)| m.round == round && m.kind == kind && !carried(m))
    };
    for (i, m) in in_round(MessageKind::Refinement) {
        draft.push_at(label(m), i);
    }
    for (i, m) in in_round(MessageKind::Proposal) {
        draft.push_at(label(m), i);
    }
    draft
}

/// The refinements of the rounds before `round`, newest first (what the
/// judge sees of the earlier rounds).
pub(crate) fn earlier_refinements(bb: &Blackboard, round: u32) -> Draft {
    let mut draft = Draft::new(SectionKind::EarlierRounds);
    for (i, m) in bb
        .messages()
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, m)| m.kind == MessageKind::Refinement && m.round < round)
    {
        draft.push_at(
            format!(
                "Round {} — {}'s refinement: {}",
                m.round,
                name(bb, &m.persona),
                m.content.trim()
            ),
            i,
        );
    }
    draft
}
