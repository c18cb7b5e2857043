//! The body of a dialectic debate's report (seed 004's report, with
//! Agon's memory on top): the problem, the agents and the judge, the
//! clarifications, each round's proposals, critiques, refinements and
//! summaries, and the solution.

use std::fmt::Write as _;

use agon_core::{Blackboard, DialogueMessage, MessageKind, Persona, SummaryScope};

use super::{ReportOptions, cell, one_line};
use crate::sections::{Header, Sections};

fn role(p: &Persona) -> &str {
    p.specialty.map_or("—", agon_core::AgentRole::as_str)
}

/// The model that answered for `persona` (from its messages' metadata).
fn model_of<'a>(bb: &'a Blackboard, p: &Persona) -> &'a str {
    bb.messages()
        .iter()
        .filter(|m| m.persona == p.id)
        .find_map(|m| m.meta.as_ref().map(|meta| meta.model.as_str()))
        .filter(|m| !m.is_empty())
        .or_else(|| {
            bb.summaries()
                .iter()
                .filter(|s| match &s.scope {
                    SummaryScope::Persona { persona } => persona == &p.id,
                    SummaryScope::Judge => !p.is_debater(),
                    SummaryScope::Rolling => false,
                })
                .find_map(|s| s.model.as_deref())
        })
        .unwrap_or("—")
}

fn contribution(s: &mut String, bb: &Blackboard, m: &DialogueMessage, options: ReportOptions) {
    let name = bb.persona_name(&m.persona);
    let what = match &m.kind {
        MessageKind::Critique { target } => format!("critique of {}", bb.persona_name(target)),
        other => other.label().to_owned(),
    };
    let _ = write!(s, "#### {name} — {what}");
    if m.is_carried_proposal() {
        let _ = write!(
            s,
            " (the refinement of round {}, carried over)",
            m.round.saturating_sub(1)
        );
    }
    if options.verbose
        && let Some(meta) = &m.meta
    {
        let tokens = if meta.input_tokens == 0 {
            // A total without its split (a file dialectic wrote).
            meta.output_tokens.to_string()
        } else {
            format!("{} in / {} out", meta.input_tokens, meta.output_tokens)
        };
        let _ = write!(
            s,
            " _(model {}, latency {} ms, tokens {tokens})_",
            meta.model, meta.latency_ms
        );
    }
    s.push_str("\n\n");
    super::quoted(s, &m.content);
    s.push('\n');
}

/// The report's dialectic body.
pub(super) fn body(
    bb: &Blackboard,
    header: &Header,
    sections: &Sections,
    options: ReportOptions,
) -> String {
    let mut s = String::new();
    let problem = header.topic.as_deref().unwrap_or("(not started)");
    let title = problem
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(problem);
    let _ = writeln!(s, "# {}\n", one_line(title).trim_start_matches('#').trim());
    s.push_str(&super::status_line(header, " (dialectic)"));
    let _ = writeln!(s, "## Problem Description\n\n{}\n", problem.trim());
    if let Some(ctx) = &header.context {
        let _ = writeln!(s, "### Context\n\n{}\n", ctx.trim());
    }

    s.push_str("## Agents\n\n| Id | Name | Role | Model |\n|---|---|---|---|\n");
    for p in bb.debaters() {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            p.id,
            cell(&p.name),
            role(p),
            model_of(bb, p)
        );
    }
    s.push_str("\n## Judge\n\n| Id | Name | Role | Model |\n|---|---|---|---|\n");
    for p in bb.personas().iter().filter(|p| !p.is_debater()) {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            p.id,
            cell(&p.name),
            role(p),
            model_of(bb, p)
        );
    }
    s.push('\n');
    s.push_str(&super::rubric_line(header));

    clarifications(&mut s, bb);
    devils_advocates(&mut s, sections);

    s.push_str("## Rounds\n\n");
    let rounds = bb.current_round();
    for round in 1..=rounds {
        let _ = writeln!(s, "### Round {round}\n");
        let in_round: Vec<&DialogueMessage> =
            bb.messages().iter().filter(|m| m.round == round).collect();
        let summaries: Vec<_> = bb
            .summaries()
            .iter()
            .filter(|x| x.round == Some(round) && matches!(x.scope, SummaryScope::Persona { .. }))
            .collect();
        if !summaries.is_empty() {
            s.push_str("**Summaries** (for this round; each replaces its agent's history in later prompts)\n\n");
            for x in summaries {
                let SummaryScope::Persona { persona } = &x.scope else {
                    continue;
                };
                // A summary without a call of its own was written by the
                // previous round's analysis.
                let made = match x.latency_ms {
                    Some(ms) => format!("latency {ms} ms, tokens {}", x.tokens.unwrap_or(0)),
                    None => format!("written by round {}'s analysis", round.saturating_sub(1)),
                };
                let _ = writeln!(
                    s,
                    "- {}: {} → {} chars ({}, {made})\n\n  > {}\n",
                    bb.persona_name(persona),
                    x.before_chars,
                    x.after_chars,
                    x.method,
                    one_line(&x.text)
                );
            }
        }
        for (title, matches, none) in [
            (
                "Proposals",
                (|k: &MessageKind| *k == MessageKind::Proposal) as fn(&MessageKind) -> bool,
                "No proposals in this round.",
            ),
            (
                "Critiques",
                |k: &MessageKind| matches!(k, MessageKind::Critique { .. }),
                "No critiques in this round.",
            ),
            (
                "Refinements",
                |k: &MessageKind| *k == MessageKind::Refinement,
                "No refinements in this round.",
            ),
        ] {
            let _ = writeln!(s, "#### {title}\n");
            let items: Vec<&&DialogueMessage> =
                in_round.iter().filter(|m| matches(&m.kind)).collect();
            if items.is_empty() {
                let _ = writeln!(s, "{none}\n");
            }
            for m in items {
                contribution(&mut s, bb, m, options);
            }
        }
    }

    if let Some(x) = bb
        .summaries()
        .iter()
        .rev()
        .find(|x| x.scope == SummaryScope::Judge)
    {
        let _ = writeln!(
            s,
            "## Judge's summary of round {}\n\n{} → {} chars ({}, latency {} ms, tokens {}).\n\n> {}\n",
            x.round.unwrap_or(0),
            x.before_chars,
            x.after_chars,
            x.method,
            x.latency_ms.unwrap_or(0),
            x.tokens.unwrap_or(0),
            one_line(&x.text)
        );
    }

    requirements_matrix(&mut s, sections);
    s.push_str("## Final Synthesis\n\n");
    match &sections.solution {
        None => s.push_str("No solution was synthesized.\n\n"),
        Some(sol) => {
            let _ = writeln!(
                s,
                "_By {} after round {}; confidence {}._\n",
                sol.by,
                sol.round,
                sol.confidence.map_or_else(
                    || "not given (plain-text synthesis)".to_owned(),
                    |c| format!("{c}/100")
                ),
            );
            super::quoted(&mut s, &sol.description);
            s.push('\n');
            for (title, items) in &sol.lists {
                let _ = writeln!(s, "### {title}\n");
                for item in items {
                    let _ = writeln!(s, "- {}", one_line(item));
                }
                s.push('\n');
            }
            if !sol.earlier.is_empty() {
                s.push_str("### Earlier solutions\n\n");
                for (round, confidence) in &sol.earlier {
                    let _ = writeln!(
                        s,
                        "- after round {round}: confidence {}",
                        confidence.map_or_else(|| "—".to_owned(), |c| c.to_string())
                    );
                }
                s.push('\n');
            }
        }
    }
    s
}

/// The Requirements section: each requirement × agent × round, from the
/// ledger's coverage verdicts, and the judge's verdict on it.
fn requirements_matrix(s: &mut String, sections: &Sections) {
    let Some(matrix) = &sections.requirements else {
        return;
    };
    let _ = writeln!(
        s,
        "## Requirements\n\nFound by {}. Each cell is an agent's verdict per round \
         (round 1 first): ✓ covers, ✗ weakens, · does not address (or not analysed).\n",
        matrix.found_by
    );
    let mut header = String::from("| Requirement |");
    let mut rule = String::from("|---|");
    for a in &matrix.agents {
        let _ = write!(header, " {a} |");
        rule.push_str("---|");
    }
    if matrix.judged {
        header.push_str(" Judge |");
        rule.push_str("---|");
    }
    let _ = writeln!(s, "{header}\n{rule}");
    for r in &matrix.rows {
        let _ = write!(
            s,
            "| {} ({}) {} |",
            r.id,
            r.weight,
            one_line(&r.text).replace('|', "/")
        );
        for cells in &r.cells {
            let _ = write!(s, " {cells} |");
        }
        if let Some(verdict) = r.verdict {
            let _ = write!(s, " {verdict} |");
        }
        s.push('\n');
    }
    if !matrix.uncovered.is_empty() {
        let _ = writeln!(
            s,
            "\nNo agent's latest proposal covers: {}.",
            matrix.uncovered.join(", ")
        );
    }
    s.push('\n');
}

fn clarifications(s: &mut String, bb: &Blackboard) {
    let questions: Vec<&DialogueMessage> = bb
        .messages()
        .iter()
        .filter(|m| m.kind == MessageKind::ClarificationQuestion)
        .collect();
    if questions.is_empty() {
        return;
    }
    s.push_str("## Clarifications\n\n");
    let mut current = None;
    for (n, q) in questions.iter().enumerate() {
        if current != Some(&q.persona) {
            let p = bb.persona(&q.persona);
            let _ = writeln!(
                s,
                "### {} ({})\n",
                bb.persona_name(&q.persona),
                p.map_or("—", role)
            );
            current = Some(&q.persona);
        }
        let answer = bb.answer_to(&q.id).map_or("NA", |a| a.content.trim());
        let _ = writeln!(s, "Question ({}):\n", n + 1);
        super::quoted(s, &q.content);
        s.push_str("\nAnswer:\n\n");
        super::quoted(s, answer);
        s.push('\n');
    }
}

/// The devil's advocate of each round (drawn from the trust memory) and
/// the critiques they wrote as such.
fn devils_advocates(s: &mut String, sections: &Sections) {
    if sections.devils_advocates.is_empty() {
        return;
    }
    s.push_str("## Devil's advocates\n\n");
    for row in &sections.devils_advocates {
        let changed = row.dissents.iter().filter(|(_, impact)| *impact).count();
        let _ = writeln!(
            s,
            "- Round {}: {}, drawn from the trust memory; {} dissent(s) logged, {changed} changed the outcome",
            row.round,
            row.persona,
            row.dissents.len()
        );
        for (text, impact) in &row.dissents {
            let _ = writeln!(
                s,
                "  - {}{}",
                super::cell(&agon_extract::truncate_chars(text, 160)),
                if *impact { " _(taken in)_" } else { "" }
            );
        }
    }
    s.push('\n');
}
