//! The report body of a deliberation (seeds 001 + 002): the participants,
//! the statistics, the rolling summaries, the decisions, every proposal with
//! its status and reactions, and the latest messages.

use std::fmt::Write as _;

use agon_core::{Blackboard, SummaryScope};

use crate::MemoryStats;
use crate::sections::{Header, Sections};

use super::{ReportOptions, cell, one_line, quote_block};

/// Messages quoted at the end of the body (all of them with `verbose`).
const LATEST_MESSAGES: usize = 12;

/// The statistics as a markdown table.
pub fn stats_markdown(bb: &Blackboard) -> String {
    let st = MemoryStats::of(bb);
    let mut s = String::from("| | |\n|---|---|\n");
    for (label, value) in [
        ("messages", st.messages),
        ("participants", st.agents),
        ("rolling summaries", st.summaries),
        ("failed summaries", st.failed_summaries),
        ("decisions", st.decisions),
        ("proposals (active)", st.active_proposals),
        ("proposals (all)", st.proposals),
        ("skipped turns", st.skipped_turns),
    ] {
        let _ = writeln!(s, "| {label} | {value} |");
    }
    for (id, n) in &st.messages_by_agent {
        let _ = writeln!(s, "| messages by {} | {n} |", cell(bb.persona_name(id)));
    }
    s
}

/// The body.
pub(super) fn body(
    bb: &Blackboard,
    header: &Header,
    sections: &Sections,
    options: ReportOptions,
) -> String {
    let mut s = String::new();
    let topic = header.topic.as_deref().unwrap_or("");
    let _ = writeln!(s, "# Deliberation: {}\n", one_line(topic));
    let cast: Vec<String> = bb
        .debaters()
        .map(|p| format!("**{}** ({})", p.name, one_line(&p.contract)))
        .collect();
    let _ = writeln!(s, "Participants: {}\n", cast.join("; "));
    if let Some(skeptic) = bb.devils_advocate(0) {
        let name = bb.persona_name(skeptic);
        let spoke = bb
            .messages()
            .iter()
            .filter(|m| &m.persona == skeptic)
            .count();
        let _ = writeln!(
            s,
            "Skeptic: **{name}**, drawn from the agents' trust memory; its bid was raised \
             whenever the group converged ({spoke} turns in all).\n"
        );
    }
    let _ = writeln!(s, "## Statistics\n\n{}", stats_markdown(bb));

    s.push_str("## Summaries\n\n");
    let rolling: Vec<_> = bb
        .summaries()
        .iter()
        .filter(|x| x.scope == SummaryScope::Rolling)
        .collect();
    if rolling.is_empty() {
        s.push_str("_No rolling summary: the session never reached the summary cadence._\n\n");
    }
    for x in rolling {
        let _ = writeln!(
            s,
            "**Messages 1–{}** (folded {}–{}):\n\n{}\n",
            x.span.end,
            x.span.start + 1,
            x.span.end,
            x.text.trim()
        );
    }

    s.push_str("## Decisions\n\n");
    if sections.decisions.is_empty() {
        s.push_str("_No decision was recorded._\n\n");
    }
    for d in &sections.decisions {
        let _ = writeln!(
            s,
            "- **{}** {}: {} _(supported by {})_",
            d.id,
            one_line(&d.topic),
            one_line(&d.outcome),
            d.supporting.join(", ")
        );
    }
    s.push('\n');

    s.push_str("## Proposals\n\n");
    if sections.proposals.is_empty() {
        s.push_str("_No proposal was made._\n\n");
    } else {
        s.push_str("| id | by | proposal | status | support | oppose | neutral |\n|---|---|---|---|---|---|---|\n");
    }
    for p in &sections.proposals {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            p.id,
            cell(&p.by),
            cell(&p.content),
            p.status,
            cell(&p.support.join(", ")),
            cell(&p.oppose.join(", ")),
            cell(&p.neutral.join(", "))
        );
    }
    s.push('\n');

    let messages = bb.messages();
    let shown = if options.verbose {
        messages.len()
    } else {
        LATEST_MESSAGES.min(messages.len())
    };
    if shown < messages.len() {
        let _ = writeln!(
            s,
            "## Latest messages\n\nThe last {shown} of {} (the whole transcript: `agon show {}`).\n",
            messages.len(),
            bb.debate().map(|d| d.to_string()).unwrap_or_default()
        );
    } else {
        s.push_str("## Transcript\n\n");
    }
    for m in &messages[messages.len() - shown..] {
        quote_block(&mut s, bb, m);
    }
    s
}
