//! The panels beside a debate's transcript: the agreement graph, the
//! dialectic rounds, the deliberation's bids, the ledger, claims and crux
//! cards, the solution, decisions and proposals, usage, metrics, warnings
//! and repairs. Every text a model or a person wrote is escaped.

use std::fmt::Write as _;

use agon_core::{Blackboard, ClaimStatus, DialogueMessage, MessageKind, PersonaId};

use super::{escape, name};
use crate::DebateView;

/// The agreement and disagreement graph between the debaters, from their
/// ledgers: the debaters on a circle, a green line for each pair that
/// agreed on something, a red one for each pair that disagreed, thicker
/// the more often (SVG, names escaped). `None` before any is recorded.
pub fn stance_graph(board: &Blackboard) -> Option<String> {
    use std::collections::BTreeMap;
    let debaters: Vec<&agon_core::Persona> = board.debaters().collect();
    let index: BTreeMap<&PersonaId, usize> = debaters
        .iter()
        .enumerate()
        .map(|(i, p)| (&p.id, i))
        .collect();
    // (low, high) pair → (agreements, disagreements), both directions.
    let mut pairs: BTreeMap<(usize, usize), (usize, usize)> = BTreeMap::new();
    for (persona, ledger) in board.positions() {
        let Some(&a) = index.get(persona) else {
            continue;
        };
        let mut count = |with: &PersonaId, agree: bool| {
            if let Some(&b) = index.get(with)
                && a != b
            {
                let entry = pairs.entry((a.min(b), a.max(b))).or_default();
                if agree {
                    entry.0 += 1;
                } else {
                    entry.1 += 1;
                }
            }
        };
        ledger.agreements.iter().for_each(|x| count(&x.with, true));
        ledger
            .disagreements
            .iter()
            .for_each(|x| count(&x.with, false));
    }
    if pairs.is_empty() {
        return None;
    }
    let n = debaters.len().max(1) as f64;
    let at = |i: usize| {
        let angle = std::f64::consts::TAU * i as f64 / n - std::f64::consts::FRAC_PI_2;
        (160.0 + 110.0 * angle.cos(), 130.0 + 95.0 * angle.sin())
    };
    let mut svg = String::from(
        "<svg viewBox=\"0 0 320 260\" width=\"100%\" role=\"img\" aria-label=\"agreements and disagreements\">",
    );
    for (&(a, b), &(agree, disagree)) in &pairs {
        let ((x1, y1), (x2, y2)) = (at(a), at(b));
        // Two parallel lines when a pair both agreed and disagreed.
        for (count, color, shift) in [(agree, "#2e8b57", -3.0), (disagree, "#c0392b", 3.0)] {
            if count > 0 {
                let _ = write!(
                    svg,
                    "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\" stroke-width=\"{}\" stroke-opacity=\".8\"><title>{} {} {}: {count}</title></line>",
                    x1 + shift,
                    y1 + shift,
                    x2 + shift,
                    y2 + shift,
                    1 + count.min(6),
                    escape(&debaters[a].name),
                    if color == "#2e8b57" {
                        "agrees with"
                    } else {
                        "disagrees with"
                    },
                    escape(&debaters[b].name),
                );
            }
        }
    }
    for (i, p) in debaters.iter().enumerate() {
        let (x, y) = at(i);
        let _ = write!(
            svg,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"6\" fill=\"#23262f\"></circle><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\">{}</text>",
            y - 10.0,
            escape(&p.name)
        );
    }
    svg.push_str("</svg>");
    Some(svg)
}

/// Longest excerpt of a contribution in the rounds panel.
const EXCERPT: usize = 320;

/// A dialectic debate's rounds laid out per agent: its proposal, the
/// critiques of it, its refinement, then the judge's solution of the
/// round. `None` for other protocols or before round 1.
pub fn dialectic_rounds(board: &Blackboard) -> Option<String> {
    if board.protocol() != agon_core::ProtocolKind::Dialectic {
        return None;
    }
    let last = board.messages().iter().map(|m| m.round).max().unwrap_or(0);
    if last == 0 {
        return None;
    }
    let excerpt =
        |m: &DialogueMessage| escape(&agon_extract::truncate_chars(m.content.trim(), EXCERPT));
    let mut out = String::from("<section><h2>Rounds</h2>");
    for round in 1..=last {
        let _ = write!(out, "<details open><summary>Round {round}</summary>");
        for agent in board.debaters() {
            let of = |kind: &MessageKind| {
                board
                    .messages()
                    .iter()
                    .find(|m| m.round == round && m.persona == agent.id && &m.kind == kind)
            };
            let _ = write!(out, "<h3>{}</h3>", escape(&agent.name));
            if let Some(p) = of(&MessageKind::Proposal) {
                let carried = if p.is_carried_proposal() {
                    " (its refinement, carried over)"
                } else {
                    ""
                };
                let _ = write!(out, "<p><em>proposal{carried}</em>: {}</p>", excerpt(p));
            }
            let critiques: Vec<String> = board
                .messages()
                .iter()
                .filter(|m| {
                    m.round == round
                        && matches!(&m.kind, MessageKind::Critique { target } if *target == agent.id)
                })
                .map(|m| format!("<li>{}: {}</li>", name(board, &m.persona), excerpt(m)))
                .collect();
            if !critiques.is_empty() {
                let _ = write!(out, "<ul>{}</ul>", critiques.concat());
            }
            if let Some(r) = of(&MessageKind::Refinement) {
                let _ = write!(out, "<p><em>refinement</em>: {}</p>", excerpt(r));
            }
        }
        if let Some(s) = board.solutions().iter().find(|s| s.round == round) {
            let _ = write!(
                out,
                "<p>✓ <strong>the judge</strong> (confidence {}): {}</p>",
                s.confidence
                    .map_or_else(|| "—".to_owned(), |c| c.to_string()),
                escape(&agon_extract::truncate_chars(s.description.trim(), EXCERPT))
            );
        }
        out.push_str("</details>");
    }
    out.push_str("</section>");
    Some(out)
}

/// A deliberation's latest "should I respond?" answers (seed 002): who
/// wanted to speak, how urgently and why. `None` before any.
pub fn latest_bids(board: &Blackboard) -> Option<String> {
    let turns = u32::try_from(board.messages().len()).unwrap_or(u32::MAX);
    let (turn, bids) = (1..=turns.saturating_add(1))
        .rev()
        .find_map(|t| board.bids(t).map(|b| (t, b)))?;
    let mut out = format!(
        "<section><h2>Who speaks at turn {turn}, and why</h2><table><tr><th>agent</th><th>wants to</th><th>urgency</th><th>why</th></tr>"
    );
    for b in bids {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            name(board, &b.persona),
            if b.respond { "yes" } else { "no" },
            b.urgency,
            escape(&b.reason)
        );
    }
    out.push_str("</table></section>");
    Some(out)
}

/// The panels beside the transcript: the position ledger, claims and crux
/// cards, the solution, deliberation's decisions and proposals, usage,
/// metrics, warnings. Refetched by the page as the debate goes on.
pub fn panels(view: &DebateView) -> String {
    let board = view.board();
    let mut out = String::new();
    if let Some(rounds) = dialectic_rounds(board) {
        out.push_str(&rounds);
    }
    if let Some(bids) = latest_bids(board) {
        out.push_str(&bids);
    }
    if let Some(graph) = stance_graph(board) {
        let _ = write!(
            out,
            "<section><h2>Agreements and disagreements</h2>{graph}<p class=\"kind\">green: agreed on something; red: disagreed; thicker: more often</p></section>"
        );
    }
    out.push_str("<section><h2>Position ledger</h2>");
    if board
        .positions()
        .values()
        .all(|p| p.overall_stance.is_empty())
    {
        out.push_str("<p>No position recorded yet.</p>");
    }
    for (persona, p) in board.positions() {
        if p.overall_stance.is_empty() {
            continue;
        }
        let _ = write!(
            out,
            "<h3>{}</h3><p>{}</p>",
            name(board, persona),
            escape(&p.overall_stance)
        );
        let mut list = |label: &str, items: Vec<String>| {
            if !items.is_empty() {
                let _ = write!(out, "<p><em>{label}</em>: {}</p>", items.join("; "));
            }
        };
        list(
            "concessions",
            p.concessions.iter().map(|n| escape(&n.text)).collect(),
        );
        list("shifts", p.shifts.iter().map(|n| escape(&n.text)).collect());
        list(
            "agrees with",
            p.agreements
                .iter()
                .map(|a| format!("{} on {}", name(board, &a.with), escape(&a.on)))
                .collect(),
        );
        list(
            "disagrees with",
            p.disagreements
                .iter()
                .map(|d| format!("{} on {}", name(board, &d.with), escape(&d.on)))
                .collect(),
        );
        list(
            "evidence",
            p.aspects
                .values()
                .flat_map(|a| a.evidence.iter().map(|e| escape(e)))
                .collect(),
        );
    }
    out.push_str("</section>");
    if !board.claims().is_empty() {
        out.push_str("<section><h2>Claims and crux cards</h2><table>");
        for c in board.claims() {
            let status = match c.status {
                ClaimStatus::Active => "active",
                ClaimStatus::InCruxRoom => "in a crux room",
                ClaimStatus::Resolved => "resolved",
                ClaimStatus::Abandoned => "abandoned",
            };
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{} vs {}</td><td>{status}</td></tr>",
                escape(&c.claim),
                name(board, &c.personas[0]),
                name(board, &c.personas[1])
            );
            if let Some(card) = &c.card {
                let positions: Vec<String> = card
                    .positions
                    .iter()
                    .map(|p| {
                        format!(
                            "{}: {:?} ({})",
                            name(board, &p.persona),
                            p.stance,
                            escape(&p.reasoning)
                        )
                    })
                    .collect();
                let _ = write!(
                    out,
                    "<tr><td colspan=\"3\">◆ <strong>{}</strong><br>{}<br><em>{}</em></td></tr>",
                    escape(&card.question),
                    positions.join("<br>"),
                    escape(&card.diagnosis)
                );
            }
        }
        out.push_str("</table></section>");
    }
    requirements(&mut out, board);
    if let Some(s) = board.solutions().last() {
        let _ = write!(
            out,
            "<section><h2>Solution after round {}</h2><div class=\"md\">{}</div><p>Confidence: {}</p>",
            s.round,
            super::markdown(&s.description),
            s.confidence
                .map_or_else(|| "—".to_owned(), |c| c.to_string())
        );
        for (title, items) in crate::report::solution_lists(board, s) {
            if items.is_empty() {
                continue;
            }
            let _ = write!(out, "<h3>{}</h3><ul>", escape(title));
            for item in items {
                let _ = write!(out, "<li>{}</li>", escape(&item));
            }
            out.push_str("</ul>");
        }
        out.push_str("</section>");
    }
    if !board.decisions().is_empty() || !board.proposals().is_empty() {
        out.push_str("<section><h2>Decisions and proposals</h2><ul>");
        for d in board.decisions() {
            let _ = write!(
                out,
                "<li>✔ {}: {}</li>",
                escape(&d.topic),
                escape(&d.outcome)
            );
        }
        for p in board.proposals() {
            let reactions: Vec<String> = p
                .reactions
                .iter()
                .map(|(who, r)| {
                    let mark = match r {
                        agon_core::Reaction::Support => "+",
                        agon_core::Reaction::Oppose => "−",
                        agon_core::Reaction::Neutral => "○",
                    };
                    format!("{mark}{}", name(board, who))
                })
                .collect();
            let _ = write!(
                out,
                "<li>✚ {} ({}, {}): {}{}</li>",
                escape(p.id.as_str()),
                name(board, &p.proposer),
                format!("{:?}", p.status).to_lowercase(),
                escape(&p.content),
                if reactions.is_empty() {
                    String::new()
                } else {
                    format!(" <span class=\"kind\">{}</span>", reactions.join(" "))
                }
            );
        }
        out.push_str("</ul></section>");
    }
    if let Some(summary) = board.latest_rolling_summary() {
        let _ = write!(
            out,
            "<section><h2>Earlier discussion (rolling summary)</h2><p class=\"kind\">messages 1–{} in {} characters (from {})</p><div class=\"md\">{}</div></section>",
            summary.span.end,
            summary.after_chars,
            summary.before_chars,
            super::markdown(&summary.text)
        );
    }
    let usage = board.usage_total();
    let _ = write!(
        out,
        "<section><h2>Usage</h2><p>{} calls · {} in / {} out tokens · ${:.4}{}</p><table>",
        usage.calls,
        usage.input_tokens,
        usage.output_tokens,
        usage.cost_micro_usd as f64 / 1e6,
        if board.status() == agon_core::DebateStatus::Finished {
            ""
        } else {
            " <span class=\"kind\">(each run records its usage when it stops)</span>"
        }
    );
    for (role, models) in board.usage() {
        let (calls, tokens, cost, unpriced) =
            models
                .values()
                .fold((0, 0, 0, false), |(c, t, m, u), usage| {
                    (
                        c + usage.calls,
                        t + usage.input_tokens + usage.output_tokens,
                        m + usage.cost_micro_usd,
                        u || usage.unpriced,
                    )
                });
        let cost = if unpriced && cost == 0 {
            "—".to_owned()
        } else {
            format!("${:.4}", cost as f64 / 1e6)
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{calls} calls</td><td>{tokens} tokens</td><td>{cost}</td></tr>",
            escape(role)
        );
    }
    out.push_str("</table></section>");
    out.push_str(&metrics_table(view.metrics()));
    if !board.warnings().is_empty() {
        out.push_str("<section><h2>Warnings</h2><ul>");
        for w in board.warnings() {
            let _ = write!(
                out,
                "<li class=\"warn\">{}: {}</li>",
                escape(&w.step.to_string()),
                escape(&w.reason)
            );
        }
        out.push_str("</ul></section>");
    }
    round_records(&mut out, board);
    reflections(&mut out, board);
    devils_advocates(&mut out, board);
    tool_calls(&mut out, board);
    if !board.citations().is_empty() {
        out.push_str("<section><h2>Sources cited</h2><p class=\"kind\">passages of each persona's own corpus it cited as [E:id]</p><ul>");
        for persona in board.personas() {
            for e in board.sources_cited(&persona.id) {
                let _ = write!(
                    out,
                    "<li>{}: <code>[E:{}]</code> {}: “{}”</li>",
                    escape(&persona.name),
                    escape(&e.id),
                    escape(&e.source),
                    escape(&e.passage)
                );
            }
            for c in board.citations().iter().filter(|c| c.persona == persona.id) {
                for id in &c.rejected {
                    let _ = write!(
                        out,
                        "<li class=\"warn\">{}: <code>[E:{}]</code> rejected (no such chunk in its corpus)</li>",
                        escape(&persona.name),
                        escape(id)
                    );
                }
            }
        }
        out.push_str("</ul></section>");
    }
    if !board.repairs().is_empty() {
        out.push_str("<section><h2>Repairs</h2><p class=\"kind\">model output that validation repaired before it was recorded</p><ul>");
        for r in board.repairs() {
            let _ = write!(
                out,
                "<li>{}: {}</li>",
                escape(&r.step.to_string()),
                r.notes
                    .iter()
                    .map(|n| escape(n))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
        out.push_str("</ul></section>");
    }
    out
}

/// The debate-quality metrics (the report's table).
fn metrics_table(m: &crate::DebateMetrics) -> String {
    let percent =
        |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| format!("{:.0} %", v * 100.0));
    let ratio = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| format!("{v:.2}"));
    let rows = [
        (
            "messages analysed",
            format!("{} of {}", m.messages_analysed, m.messages),
        ),
        ("ledger coverage", percent(m.ledger_coverage)),
        (
            "claims opened · resolved",
            format!("{} · {}", m.claims_opened, m.claims_resolved),
        ),
        ("crux compression", ratio(m.crux_compression)),
        ("disagreement entropy", ratio(m.disagreement_entropy)),
        (
            "messages building on ledger evidence · on others'",
            format!("{} · {}", m.evidence_reuse, m.evidence_reuse_others),
        ),
        (
            "self-contradictions flagged",
            m.self_contradictions.to_string(),
        ),
        ("memory ÷ utterance tokens", ratio(m.memory_cost)),
    ];
    let mut out = String::from("<section><h2>Debate quality</h2><table>");
    for (label, value) in rows {
        let _ = write!(out, "<tr><td>{label}</td><td>{value}</td></tr>");
    }
    out.push_str("</table></section>");
    out
}

/// The requirements panel: each requirement, its weight, which agents'
/// latest proposals cover it, and the judge's verdict.
fn requirements(out: &mut String, board: &Blackboard) {
    let ledger = board.requirements();
    if ledger.requirements.is_empty() {
        return;
    }
    out.push_str(
        "<section><h2>Requirements</h2><table><tr><th>id</th><th>requirement</th>\
         <th>covered by</th><th>judge</th></tr>",
    );
    let judged = board.solution();
    for r in &ledger.requirements {
        let by: Vec<String> = ledger
            .covered_by(&r.id)
            .into_iter()
            .map(|p| name(board, p))
            .collect();
        let verdict = judged.map_or("", |s| crate::report::judge_verdict(s, &r.id));
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{} <span class=\"kind\">{}</span></td><td>{}</td><td>{}</td></tr>",
            escape(&r.id),
            escape(&r.text),
            r.weight(),
            if by.is_empty() {
                "—".to_owned()
            } else {
                by.join(", ")
            },
            verdict
        );
    }
    out.push_str("</table></section>");
}

/// A structured debate's round records: each aspect's summary and each
/// persona's take on it.
fn round_records(out: &mut String, board: &Blackboard) {
    if board.rounds().is_empty() {
        return;
    }
    out.push_str("<section><h2>Round records</h2>");
    for r in board.rounds() {
        let label = board
            .aspect(&r.aspect)
            .map_or(r.aspect.as_str(), |a| a.label.as_str());
        let _ = write!(
            out,
            "<p><strong>{}</strong> (round {}): {}</p><ul>",
            escape(label),
            r.round,
            escape(&r.summary)
        );
        for (persona, take) in &r.takes {
            let _ = write!(
                out,
                "<li>{}: {}</li>",
                escape(board.persona_name(persona)),
                escape(&take.position)
            );
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>");
}

/// The reflections: what the debate learned about itself, most important
/// first as the report lists them.
fn reflections(out: &mut String, board: &Blackboard) {
    if board.reflections().is_empty() {
        return;
    }
    out.push_str("<section><h2>Reflections</h2><ul>");
    for r in board.reflections() {
        let _ = write!(
            out,
            "<li><span class=\"kind\">{}, importance {}, round {}</span> {}</li>",
            escape(r.kind.label()),
            r.importance,
            r.round,
            escape(&r.content)
        );
    }
    out.push_str("</ul></section>");
}

/// A dialectic debate's devil's advocate of each round.
fn devils_advocates(out: &mut String, board: &Blackboard) {
    if board.devils_advocates().is_empty() {
        return;
    }
    out.push_str("<section><h2>Devil's advocates</h2><ul>");
    for (round, persona) in board.devils_advocates() {
        let _ = write!(
            out,
            "<li>round {round}: {}</li>",
            escape(board.persona_name(persona))
        );
    }
    out.push_str("</ul></section>");
}

/// The tool calls the agents made while they contributed.
fn tool_calls(out: &mut String, board: &Blackboard) {
    if board.tool_calls().is_empty() {
        return;
    }
    out.push_str("<section><h2>Tool calls</h2><ul>");
    for c in board.tool_calls() {
        let first = c
            .result
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let _ = write!(
            out,
            "<li>{} ({}): <code>{}({})</code> {} {}</li>",
            escape(board.persona_name(&c.persona)),
            escape(&c.turn.to_string()),
            escape(&c.name),
            escape(&c.arguments.to_string()),
            if c.ok { "→" } else { "failed:" },
            escape(&agon_extract::truncate_chars(first, 200))
        );
    }
    out.push_str("</ul></section>");
}
