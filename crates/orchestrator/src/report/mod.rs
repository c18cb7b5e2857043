//! The markdown report of a debate, a pure function of its blackboard:
//! the protocol's own body (structured: personas, aspects, crux rooms,
//! closings, synthesis; dialectic: agents, clarifications, rounds of
//! proposals, critiques and refinements, summaries, the solution), then
//! what every debate has (the position ledger and claims when there are
//! any, warnings, repairs, usage and cost).

mod dialectic;

use std::fmt::Write as _;

use agon_core::{Blackboard, DialogueMessage, MessageKind};

/// How much the report shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReportOptions {
    /// Show each contribution's model, latency and tokens.
    pub verbose: bool,
}

/// Whether the debate ran the dialectic protocol (its agents have roles).
pub fn is_dialectic(bb: &Blackboard) -> bool {
    bb.personas().iter().any(|p| p.specialty.is_some())
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cell(text: &str) -> String {
    let t = one_line(text).replace('|', "\\|");
    if t.is_empty() { "—".into() } else { t }
}

fn quote_block(s: &mut String, bb: &Blackboard, m: &DialogueMessage) {
    let _ = writeln!(
        s,
        "**{}** ({}):",
        bb.persona_name(&m.persona),
        m.kind.label()
    );
    for line in m.content.lines() {
        let _ = writeln!(s, "> {line}");
    }
    s.push('\n');
}

/// Renders the report with the default options.
pub fn markdown(bb: &Blackboard) -> String {
    markdown_with(bb, ReportOptions::default())
}

/// Renders the report: the protocol's body, then the position ledger
/// (start → end stance, concessions, shifts), claims and crux cards,
/// reflections, warnings, repairs, usage and cost.
pub fn markdown_with(bb: &Blackboard, options: ReportOptions) -> String {
    let mut s = if is_dialectic(bb) {
        dialectic::body(bb, options)
    } else {
        structured_body(bb)
    };
    if !is_dialectic(bb) || !bb.analyzed_turns().is_empty() || !bb.claims().is_empty() {
        ledger_and_claims(&mut s, bb);
    }
    tail(&mut s, bb);
    s
}

fn structured_body(bb: &Blackboard) -> String {
    let mut s = String::new();
    let topic = bb.topic().map_or("(not started)", |t| t.question.as_str());
    let _ = writeln!(s, "# {topic}\n");
    if let Some(id) = bb.debate() {
        let _ = write!(s, "Debate `{id}`");
        if let Some(t) = bb.started_at() {
            let _ = write!(s, ", started {}", t.format("%Y-%m-%d %H:%M UTC"));
        }
        let _ = writeln!(s, ", status: {:?}.\n", bb.status());
    }
    if let Some(ctx) = bb.topic().and_then(|t| t.context.as_deref()) {
        let _ = writeln!(s, "{ctx}\n");
    }

    s.push_str("## Personas\n\n");
    for p in bb.personas() {
        let _ = writeln!(
            s,
            "- **{}** ({:?}): {} _Voice: {}_",
            p.name,
            p.role,
            one_line(&p.contract),
            one_line(&p.voice)
        );
    }
    s.push('\n');

    let openings: Vec<&DialogueMessage> = bb
        .messages()
        .iter()
        .filter(|m| m.kind == MessageKind::Opening)
        .collect();
    if !openings.is_empty() {
        s.push_str("## Openings\n\n");
        for m in openings {
            quote_block(&mut s, bb, m);
        }
    }

    for aspect in bb.aspects() {
        let _ = writeln!(
            s,
            "## Aspect: {}\n\n_{}_\n",
            aspect.label,
            one_line(&aspect.description)
        );
        let mut last_mr = None;
        for &i in bb.message_indices_for_aspect(&aspect.id) {
            let m = &bb.messages()[i];
            if m.crux_room.is_some() {
                continue;
            }
            if m.miniround != last_mr {
                let _ = writeln!(s, "### Miniround {}\n", m.miniround.unwrap_or(0));
                last_mr = m.miniround;
            }
            quote_block(&mut s, bb, m);
        }
        if let Some(r) = bb.rounds().iter().find(|r| r.aspect == aspect.id) {
            let _ = writeln!(s, "**Round record.** {}\n", one_line(&r.summary));
            for (p, take) in &r.takes {
                let _ = write!(s, "- {}: {}", bb.persona_name(p), one_line(&take.position));
                if !take.key_argument.is_empty() {
                    let _ = write!(s, " — {}", one_line(&take.key_argument));
                }
                if !take.evidence_cited.is_empty() {
                    let _ = write!(s, " (evidence: {})", take.evidence_cited.join("; "));
                }
                s.push('\n');
            }
            s.push('\n');
        }
    }

    for (title, kind) in [
        ("Closings", MessageKind::Closing),
        ("Synthesis", MessageKind::Synthesis),
    ] {
        let msgs: Vec<&DialogueMessage> = bb.messages().iter().filter(|m| m.kind == kind).collect();
        if !msgs.is_empty() {
            let _ = writeln!(s, "## {title}\n");
            for m in msgs {
                quote_block(&mut s, bb, m);
            }
        }
    }
    s
}

fn ledger_and_claims(s: &mut String, bb: &Blackboard) {
    s.push_str("## Position ledger\n\n| Persona | Start stance | End stance | Concessions | Shifts | Agreements | Disagreements |\n|---|---|---|---|---|---|---|\n");
    for p in bb.debaters() {
        let Some(st) = bb.position(&p.id) else {
            continue;
        };
        let list = |items: Vec<String>| {
            if items.is_empty() {
                "—".to_owned()
            } else {
                cell(&items.join("; "))
            }
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            p.name,
            cell(&st.initial_stance),
            cell(&st.overall_stance),
            list(
                st.concessions
                    .iter()
                    .map(|n| format!("r{}: {}", n.round, n.text))
                    .collect()
            ),
            list(
                st.shifts
                    .iter()
                    .map(|n| format!("r{}: {}", n.round, n.text))
                    .collect()
            ),
            list(
                st.agreements
                    .iter()
                    .map(|a| format!("{} on {}", bb.persona_name(&a.with), a.on))
                    .collect()
            ),
            list(
                st.disagreements
                    .iter()
                    .map(|d| format!("{} on {}", bb.persona_name(&d.with), d.on))
                    .collect()
            ),
        );
    }
    s.push('\n');

    s.push_str("## Contested claims and crux cards\n\n");
    if bb.claims().is_empty() {
        s.push_str("No claim was contested strongly enough to open.\n\n");
    }
    for c in bb.claims() {
        let _ = writeln!(
            s,
            "### {} — {} vs {} ({})\n\n\"{}\"\n",
            c.id,
            bb.persona_name(&c.personas[0]),
            bb.persona_name(&c.personas[1]),
            c.status.label(),
            one_line(&c.claim)
        );
        if let Some(room) = &c.crux_room {
            let _ = writeln!(s, "Crux room `{room}`:\n");
            for &i in bb.message_indices_for_room(room) {
                quote_block(s, bb, &bb.messages()[i]);
            }
        }
        if let Some(res) = &c.resolution {
            let _ = writeln!(s, "Outcome: {}\n", one_line(res));
        }
    }
    for card in bb.crux_cards() {
        let _ = writeln!(
            s,
            "**Crux card {}** — {} _({} disagreement, {})_\n",
            card.id,
            one_line(&card.question),
            card.disagreement_type.label(),
            if card.resolved {
                "resolved"
            } else {
                "unresolved"
            }
        );
        for p in &card.positions {
            let _ = writeln!(
                s,
                "- {}: **{}** — {} _Would change their mind: {}_",
                bb.persona_name(&p.persona),
                p.stance.label(),
                one_line(&p.reasoning),
                one_line(&p.falsifier)
            );
        }
        let _ = writeln!(s, "\nDiagnosis: {}\n", one_line(&card.diagnosis));
    }

    if !bb.reflections().is_empty() {
        s.push_str("## Reflections\n\n");
        for r in bb.reflections() {
            let _ = writeln!(
                s,
                "- ({}, importance {}, round {}) {}",
                r.kind.label(),
                r.importance,
                r.round,
                one_line(&r.content)
            );
        }
        s.push('\n');
    }
}

fn tail(s: &mut String, bb: &Blackboard) {
    if !bb.warnings().is_empty() {
        let _ = writeln!(
            s,
            "## Warnings\n\n{} optional step(s) failed; the debate continued.\n",
            bb.warnings().len()
        );
        for w in bb.warnings() {
            let _ = writeln!(
                s,
                "- {} {}: {}",
                w.step.name(),
                subject(&w.step),
                one_line(&w.reason)
            );
        }
        s.push('\n');
    }

    if !bb.repairs().is_empty() {
        let notes: usize = bb.repairs().iter().map(|r| r.notes.len()).sum();
        let _ = writeln!(
            s,
            "## Repairs\n\nValidation repaired {} model output(s) ({notes} note(s)) before they were recorded.\n",
            bb.repairs().len()
        );
        for r in bb.repairs() {
            let _ = writeln!(
                s,
                "- {} {}: {}",
                r.step.name(),
                subject(&r.step),
                one_line(&r.notes.join("; "))
            );
        }
        s.push('\n');
    }

    s.push_str("## Usage and cost\n\n| Role | Model | Calls | Input tokens | Output tokens | Cost |\n|---|---|---|---|---|---|\n");
    let (mut calls, mut input, mut output, mut micro, mut unpriced) = (0, 0, 0, 0, false);
    for (role, models) in bb.usage() {
        for (model, u) in models {
            calls += u.calls;
            input += u.input_tokens;
            output += u.output_tokens;
            micro += u.cost_micro_usd;
            unpriced |= u.unpriced;
            let cost = if u.unpriced && u.cost_micro_usd == 0 {
                "unpriced".to_owned()
            } else {
                format!("${:.4}", u.cost_micro_usd as f64 / 1e6)
            };
            let _ = writeln!(
                s,
                "| {role} | {model} | {} | {} | {} | {cost} |",
                u.calls, u.input_tokens, u.output_tokens
            );
        }
    }
    let _ = writeln!(
        s,
        "| **total** | | {calls} | {input} | {output} | ${:.4}{} |",
        micro as f64 / 1e6,
        if unpriced {
            " + unpriced (local) calls"
        } else {
            ""
        }
    );
}

/// What a step was about: its message, else its scope.
fn subject(step: &agon_core::StepId) -> String {
    step.message()
        .map(ToString::to_string)
        .or_else(|| step.scope())
        .unwrap_or_default()
}
