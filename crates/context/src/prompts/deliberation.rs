//! The prompts of a deliberation (seeds 001 + 002): a turn's instruction,
//! the listening agent's "should you respond?" question, and the rolling
//! summary that folds a span of the transcript into the previous summary.

use std::fmt::Write as _;

use agon_core::{Blackboard, MessageSpan, Persona};

use super::{Prompt, QUOTE_CHARS, quote};

/// Tags a speaker may use so the patterns pick a statement up for sure.
const TAGS: &str = "Mark a proposal with [PROPOSAL], a decision the group reached with \
                    [DECISION] (or [CONSENSUS] when everyone agrees), and refer to a \
                    proposal by its id (P1, P2, …) when you support or oppose it.";

/// The instruction of a deliberation turn.
pub fn turn_instruction(skeptic: bool) -> String {
    if skeptic {
        return format!(
            "You are this session's designated skeptic, and the group is converging. \
             Test the emerging agreement before it is settled: name its weakest \
             assumption or the strongest case against it, say what it would cost if \
             it is wrong, and what evidence would change your mind. Object on the \
             merits, not for its own sake; if it survives your test, say so. {TAGS}"
        );
    }
    format!(
        "Continue the deliberation: build on what was said and decided, answer the \
         open proposals (support, oppose or improve them), and move the group toward \
         a decision. Do not repeat earlier points. {TAGS}"
    )
}

/// How far the session is ("Turn 12; 11 messages so far."): said after
/// what the participants' calls share, with the task.
pub fn progress(bb: &Blackboard, turn: u32) -> String {
    format!("Turn {turn}; {} messages so far.", bb.messages().len())
}

/// Seed 002's evaluation: from the brief context (decisions, active
/// proposals, the last messages), should `persona` speak next? The system
/// prompt and the context are the same for every participant asked at a
/// turn (a provider caches them once); who is asked comes last.
pub fn listen(persona: &Persona, context: &str, progress: &str) -> Prompt {
    Prompt {
        system: "Each participant of a group deliberation decides whether to speak next. \
                 Answer only with the JSON asked for."
            .to_owned(),
        user: format!(
            "{context}\n\n---\n{progress}\nYou are {name}. {contract}\nShould {name} respond now? Say \
             respond = true only if you have something new: an answer to a point aimed at \
             you, a proposal to support or oppose, or a decision to push for. urgency: 0 (no \
             need) to 10 (must answer now). reason: one sentence.",
            name = persona.name,
            contract = persona.contract.trim()
        ),
    }
}

/// Seed 001's rolling summary: fold the messages of `fold` into the
/// previous summary (if any), in at most `max_words` words.
pub fn rolling_summary(bb: &Blackboard, fold: MessageSpan, max_words: usize) -> Option<Prompt> {
    let messages = bb.messages().get(fold.start..fold.end)?;
    let mut user = String::new();
    if let Some(topic) = bb.topic() {
        let _ = writeln!(user, "Topic: {}", topic.question.trim());
    }
    if let Some(previous) = bb.latest_rolling_summary() {
        let _ = writeln!(
            user,
            "\nSummary of messages 1–{}:\n{}",
            previous.span.end,
            crate::fenced(&previous.text)
        );
    }
    let _ = writeln!(user, "\nMessages {}–{}:", fold.start + 1, fold.end);
    for m in messages {
        let _ = writeln!(
            user,
            "[{}]: {}",
            bb.persona_name(&m.persona),
            crate::fenced(m.content.trim())
        );
    }
    let _ = write!(
        user,
        "\nWrite one summary of the whole discussion so far (the earlier summary and \
         these messages). Keep: the key arguments and who made them, each participant's \
         position, agreements reached, disagreements that remain, decisions made, and \
         open questions. At most {max_words} words, plain prose."
    );
    Some(Prompt {
        system: "You summarize discussions concisely and faithfully, naming who said what."
            .to_owned(),
        user,
    })
}

/// The analysis model's reading of deliberation messages for proposals,
/// decisions and reactions (seed 002's detection, by model): the active
/// proposals with their ids, then the messages with theirs.
pub fn detection(bb: &Blackboard, messages: &[agon_core::MessageId]) -> Option<Prompt> {
    let mut user = String::new();
    if let Some(topic) = bb.topic() {
        let _ = writeln!(user, "Deliberation on: {}", topic.question.trim());
    }
    let active: Vec<_> = bb
        .proposals()
        .iter()
        .rev()
        .filter(|p| p.status == agon_core::ProposalStatus::Active)
        .take(20)
        .collect();
    if active.is_empty() {
        user.push_str("\nNo proposal is open.\n");
    } else {
        user.push_str("\nOpen proposals:\n");
        for p in active.iter().rev() {
            let _ = writeln!(
                user,
                "- {} by {}: \"{}\"",
                p.id,
                bb.persona_name(&p.proposer),
                quote(&p.content, QUOTE_CHARS)
            );
        }
    }
    user.push_str("\nMessages:\n");
    let mut any = false;
    for id in messages {
        let Some(m) = bb.message(id) else { continue };
        any = true;
        let _ = writeln!(
            user,
            "[{}] {}: \"{}\"",
            m.id,
            bb.persona_name(&m.persona),
            crate::fenced(m.content.trim())
        );
    }
    if !any {
        return None;
    }
    user.push_str(
        "\nFor each message, by its id: `proposal`: the new course of action it proposes, one \
         sentence (null when it proposes nothing new); `decision`: a decision it records the \
         group as having reached, with a short `topic` and the `outcome` (null when none: an \
         opinion is not a decision); `reactions`: its stance on the open proposals it \
         addresses, by id (support, oppose or neutral; empty when none).",
    );
    Some(Prompt {
        system: "You read a group deliberation and record proposals, decisions and reactions \
                 exactly as stated. Answer only with the JSON asked for."
            .to_owned(),
        user,
    })
}
