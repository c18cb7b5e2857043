//! The panels beside a debate's transcript: the agreement graph, the
//! dialectic rounds, the deliberation's bids, the ledger, claims and crux
//! cards, the solution, decisions and proposals, usage, metrics, warnings
//! and repairs. Built as [`Html`]: every text a model or a person wrote is
//! escaped on the way in.

use agon_core::{Blackboard, ClaimStatus, DialogueMessage, MessageKind, PersonaId};

use super::{Html, name};
use crate::{DebateView, html};

/// `parts` with `separator` (markup of the source) between them.
fn join(parts: Vec<Html>, separator: &'static str) -> Html {
    let mut out = Html::default();
    for (i, part) in parts.into_iter().enumerate() {
        if i > 0 {
            out.push_literal(separator);
        }
        out.push(part);
    }
    out
}

/// The agreement and disagreement graph between the debaters, from their
/// ledgers: the debaters on a circle, a green line for each pair that
/// agreed on something, a red one for each pair that disagreed, thicker
/// the more often (SVG, names escaped). `None` before any is recorded.
pub fn stance_graph(board: &Blackboard) -> Option<String> {
    stance_graph_html(board).map(Html::into_string)
}

fn stance_graph_html(board: &Blackboard) -> Option<Html> {
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
    let mut svg = Html::literal(
        "<svg viewBox=\"0 0 320 260\" width=\"100%\" role=\"img\" aria-label=\"agreements and disagreements\">",
    );
    for (&(a, b), &(agree, disagree)) in &pairs {
        let ((x1, y1), (x2, y2)) = (at(a), at(b));
        // Two parallel lines when a pair both agreed and disagreed.
        for (count, color, verb, shift) in [
            (agree, "#2e8b57", "agrees with", -3.0),
            (disagree, "#c0392b", "disagrees with", 3.0),
        ] {
            if count > 0 {
                svg.push(html!(
                    "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\" stroke-opacity=\".8\"><title>{} {} {}: {}</title></line>",
                    Html::decimal(x1 + shift, 1),
                    Html::decimal(y1 + shift, 1),
                    Html::decimal(x2 + shift, 1),
                    Html::decimal(y2 + shift, 1),
                    Html::literal(color),
                    Html::number(1 + count.min(6)),
                    Html::text(&debaters[a].name),
                    Html::literal(verb),
                    Html::text(&debaters[b].name),
                    Html::number(count),
                ));
            }
        }
    }
    for (i, p) in debaters.iter().enumerate() {
        let (x, y) = at(i);
        svg.push(html!(
            "<circle cx=\"{}\" cy=\"{}\" r=\"6\" fill=\"#23262f\"></circle><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>",
            Html::decimal(x, 1),
            Html::decimal(y, 1),
            Html::decimal(x, 1),
            Html::decimal(y - 10.0, 1),
            Html::text(&p.name)
        ));
    }
    svg.push_literal("</svg>");
    Some(svg)
}

/// Longest excerpt of a contribution in the rounds panel.
const EXCERPT: usize = 320;

/// A dialectic debate's rounds laid out per agent: its proposal, the
/// critiques of it, its refinement, then the judge's solution of the
/// round. `None` for other protocols or before round 1.
pub fn dialectic_rounds(board: &Blackboard) -> Option<String> {
    dialectic_rounds_html(board).map(Html::into_string)
}

fn dialectic_rounds_html(board: &Blackboard) -> Option<Html> {
    if board.protocol() != agon_core::ProtocolKind::Dialectic {
        return None;
    }
    let last = board.messages().iter().map(|m| m.round).max().unwrap_or(0);
    if last == 0 {
        return None;
    }
    let excerpt =
        |m: &DialogueMessage| Html::text(&agon_extract::truncate_chars(m.content.trim(), EXCERPT));
    let mut out = Html::literal("<section><h2>Rounds</h2>");
    for round in 1..=last {
        out.push(html!(
            "<details open><summary>Round {}</summary>",
            Html::number(round)
        ));
        for agent in board.debaters() {
            let of = |kind: &MessageKind| {
                board
                    .messages()
                    .iter()
                    .find(|m| m.round == round && m.persona == agent.id && &m.kind == kind)
            };
            out.push(html!("<h3>{}</h3>", Html::text(&agent.name)));
            if let Some(p) = of(&MessageKind::Proposal) {
                let carried = if p.is_carried_proposal() {
                    " (its refinement, carried over)"
                } else {
                    ""
                };
                out.push(html!(
                    "<p><em>proposal{}</em>: {}</p>",
                    Html::literal(carried),
                    excerpt(p)
                ));
            }
            let critiques: Vec<Html> = board
                .messages()
                .iter()
                .filter(|m| {
                    m.round == round
                        && matches!(&m.kind, MessageKind::Critique { target } if *target == agent.id)
                })
                .map(|m| html!("<li>{}: {}</li>", name(board, &m.persona), excerpt(m)))
                .collect();
            if !critiques.is_empty() {
                out.push(html!("<ul>{}</ul>", join(critiques, "")));
            }
            if let Some(r) = of(&MessageKind::Refinement) {
                out.push(html!("<p><em>refinement</em>: {}</p>", excerpt(r)));
            }
        }
        if let Some(s) = board.solutions().iter().find(|s| s.round == round) {
            out.push(html!(
                "<p>✓ <strong>the judge</strong> (confidence {}): {}</p>",
                s.confidence
                    .map_or_else(|| Html::literal("—"), Html::number),
                Html::text(&agon_extract::truncate_chars(s.description.trim(), EXCERPT))
            ));
        }
        out.push_literal("</details>");
    }
    out.push_literal("</section>");
    Some(out)
}

/// A deliberation's latest "should I respond?" answers (seed 002): who
/// wanted to speak, how urgently and why. `None` before any.
pub fn latest_bids(board: &Blackboard) -> Option<String> {
    latest_bids_html(board).map(Html::into_string)
}

fn latest_bids_html(board: &Blackboard) -> Option<Html> {
    let turns = u32::try_from(board.messages().len()).unwrap_or(u32::MAX);
    let (turn, bids) = (1..=turns.saturating_add(1))
        .rev()
        .find_map(|t| board.bids(t).map(|b| (t, b)))?;
    let mut out = html!(
        "<section><h2>Who speaks at turn {}, and why</h2><table><tr><th>agent</th><th>wants to</th><th>urgency</th><th>why</th></tr>",
        Html::number(turn)
    );
    for b in bids {
        out.push(html!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            name(board, &b.persona),
            Html::literal(if b.respond { "yes" } else { "no" }),
            Html::number(b.urgency),
            Html::text(&b.reason)
        ));
    }
    out.push_literal("</table></section>");
    Some(out)
}

/// The panels beside the transcript: the position ledger, claims and crux
/// cards, the solution, deliberation's decisions and proposals, usage,
/// metrics, warnings. Refetched by the page as the debate goes on.
pub fn panels(view: &DebateView) -> String {
    panels_html(view).into_string()
}

/// [`panels`], as markup.
pub(super) fn panels_html(view: &DebateView) -> Html {
    let board = view.board();
    let mut out = Html::default();
    if let Some(rounds) = dialectic_rounds_html(board) {
        out.push(rounds);
    }
    if let Some(bids) = latest_bids_html(board) {
        out.push(bids);
    }
    if let Some(graph) = stance_graph_html(board) {
        out.push(html!(
            "<section><h2>Agreements and disagreements</h2>{}<p class=\"kind\">green: agreed on something; red: disagreed; thicker: more often</p></section>",
            graph
        ));
    }
    ledger(&mut out, board);
    claims(&mut out, board);
    requirements(&mut out, board);
    solution(&mut out, board);
    decisions_and_proposals(&mut out, board);
    if let Some(summary) = board.latest_rolling_summary() {
        out.push(html!(
            "<section><h2>Earlier discussion (rolling summary)</h2><p class=\"kind\">messages 1–{} in {} characters (from {})</p><div class=\"md\">{}</div></section>",
            Html::number(summary.span.end),
            Html::number(summary.after_chars),
            Html::number(summary.before_chars),
            Html::markdown(&summary.text)
        ));
    }
    usage(&mut out, board);
    out.push(metrics_table(view.metrics()));
    if !board.warnings().is_empty() {
        out.push_literal("<section><h2>Warnings</h2><ul>");
        for w in board.warnings() {
            out.push(html!(
                "<li class=\"warn\">{}: {}</li>",
                Html::text(&w.step.to_string()),
                Html::text(&w.reason)
            ));
        }
        out.push_literal("</ul></section>");
    }
    round_records(&mut out, board);
    reflections(&mut out, board);
    devils_advocates(&mut out, board);
    tool_calls(&mut out, board);
    sources_cited(&mut out, board);
    if !board.repairs().is_empty() {
        out.push_literal("<section><h2>Repairs</h2><p class=\"kind\">model output that validation repaired before it was recorded</p><ul>");
        for r in board.repairs() {
            out.push(html!(
                "<li>{}: {}</li>",
                Html::text(&r.step.to_string()),
                join(r.notes.iter().map(|n| Html::text(n)).collect(), "; ")
            ));
        }
        out.push_literal("</ul></section>");
    }
    out
}

/// Each debater's ledger: stance, concessions, shifts, agreements,
/// disagreements, evidence.
fn ledger(out: &mut Html, board: &Blackboard) {
    out.push_literal("<section><h2>Position ledger</h2>");
    if board
        .positions()
        .values()
        .all(|p| p.overall_stance.is_empty())
    {
        out.push_literal("<p>No position recorded yet.</p>");
    }
    for (persona, p) in board.positions() {
        if p.overall_stance.is_empty() {
            continue;
        }
        out.push(html!(
            "<h3>{}</h3><p>{}</p>",
            name(board, persona),
            Html::text(&p.overall_stance)
        ));
        let mut list = |label: &'static str, items: Vec<Html>| {
            if !items.is_empty() {
                out.push(html!(
                    "<p><em>{}</em>: {}</p>",
                    Html::literal(label),
                    join(items, "; ")
                ));
            }
        };
        list(
            "concessions",
            p.concessions.iter().map(|n| Html::text(&n.text)).collect(),
        );
        list(
            "shifts",
            p.shifts.iter().map(|n| Html::text(&n.text)).collect(),
        );
        list(
            "agrees with",
            p.agreements
                .iter()
                .map(|a| html!("{} on {}", name(board, &a.with), Html::text(&a.on)))
                .collect(),
        );
        list(
            "disagrees with",
            p.disagreements
                .iter()
                .map(|d| html!("{} on {}", name(board, &d.with), Html::text(&d.on)))
                .collect(),
        );
        list(
            "evidence",
            p.aspects
                .values()
                .flat_map(|a| a.evidence.iter().map(|e| Html::text(e)))
                .collect(),
        );
    }
    out.push_literal("</section>");
}

/// The claims with their status, and each one's crux card.
fn claims(out: &mut Html, board: &Blackboard) {
    if board.claims().is_empty() {
        return;
    }
    out.push_literal("<section><h2>Claims and crux cards</h2><table>");
    for c in board.claims() {
        let status = match c.status {
            ClaimStatus::Active => "active",
            ClaimStatus::InCruxRoom => "in a crux room",
            ClaimStatus::Resolved => "resolved",
            ClaimStatus::Abandoned => "abandoned",
        };
        out.push(html!(
            "<tr><td>{}</td><td>{} vs {}</td><td>{}</td></tr>",
            Html::text(&c.claim),
            name(board, &c.personas[0]),
            name(board, &c.personas[1]),
            Html::literal(status)
        ));
        if let Some(card) = &c.card {
            let positions: Vec<Html> = card
                .positions
                .iter()
                .map(|p| {
                    html!(
                        "{}: {} ({})",
                        name(board, &p.persona),
                        Html::text(&format!("{:?}", p.stance)),
                        Html::text(&p.reasoning)
                    )
                })
                .collect();
            out.push(html!(
                "<tr><td colspan=\"3\">◆ <strong>{}</strong><br>{}<br><em>{}</em></td></tr>",
                Html::text(&card.question),
                join(positions, "<br>"),
                Html::text(&card.diagnosis)
            ));
        }
    }
    out.push_literal("</table></section>");
}

/// The judge's latest solution and its lists.
fn solution(out: &mut Html, board: &Blackboard) {
    let Some(s) = board.solutions().last() else {
        return;
    };
    out.push(html!(
        "<section><h2>Solution after round {}</h2><div class=\"md\">{}</div><p>Confidence: {}</p>",
        Html::number(s.round),
        Html::markdown(&s.description),
        s.confidence
            .map_or_else(|| Html::literal("—"), Html::number)
    ));
    for (title, items) in crate::report::solution_lists(board, s) {
        if items.is_empty() {
            continue;
        }
        out.push(html!("<h3>{}</h3><ul>", Html::text(title)));
        for item in items {
            out.push(html!("<li>{}</li>", Html::text(&item)));
        }
        out.push_literal("</ul>");
    }
    out.push_literal("</section>");
}

/// A deliberation's decisions and proposals, each proposal with its
/// reactions.
fn decisions_and_proposals(out: &mut Html, board: &Blackboard) {
    if board.decisions().is_empty() && board.proposals().is_empty() {
        return;
    }
    out.push_literal("<section><h2>Decisions and proposals</h2><ul>");
    for d in board.decisions() {
        out.push(html!(
            "<li>✔ {}: {}</li>",
            Html::text(&d.topic),
            Html::text(&d.outcome)
        ));
    }
    for p in board.proposals() {
        let reactions: Vec<Html> = p
            .reactions
            .iter()
            .map(|(who, r)| {
                let mark = match r {
                    agon_core::Reaction::Support => "+",
                    agon_core::Reaction::Oppose => "−",
                    agon_core::Reaction::Neutral => "○",
                };
                html!("{}{}", Html::literal(mark), name(board, who))
            })
            .collect();
        let reactions = if reactions.is_empty() {
            Html::default()
        } else {
            html!(" <span class=\"kind\">{}</span>", join(reactions, " "))
        };
        out.push(html!(
            "<li>✚ {} ({}, {}): {}{}</li>",
            Html::text(p.id.as_str()),
            name(board, &p.proposer),
            Html::text(&format!("{:?}", p.status).to_lowercase()),
            Html::text(&p.content),
            reactions
        ));
    }
    out.push_literal("</ul></section>");
}

/// Usage and cost by role.
fn usage(out: &mut Html, board: &Blackboard) {
    let usage = board.usage_total();
    out.push(html!(
        "<section><h2>Usage</h2><p>{} calls · {} in / {} out tokens · ${}{}</p><table>",
        Html::number(usage.calls),
        Html::number(usage.input_tokens),
        Html::number(usage.output_tokens),
        Html::decimal(usage.cost_micro_usd as f64 / 1e6, 4),
        Html::literal(if board.status() == agon_core::DebateStatus::Finished {
            ""
        } else {
            " <span class=\"kind\">(each run records its usage when it stops)</span>"
        })
    ));
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
            Html::literal("—")
        } else {
            html!("${}", Html::decimal(cost as f64 / 1e6, 4))
        };
        out.push(html!(
            "<tr><td>{}</td><td>{} calls</td><td>{} tokens</td><td>{}</td></tr>",
            Html::text(role),
            Html::number(calls),
            Html::number(tokens),
            cost
        ));
    }
    out.push_literal("</table></section>");
}

/// The passages each persona cited from its own corpus, and the ids it
/// cited that its corpus does not have.
fn sources_cited(out: &mut Html, board: &Blackboard) {
    if board.citations().is_empty() {
        return;
    }
    out.push_literal("<section><h2>Sources cited</h2><p class=\"kind\">passages of each persona's own corpus it cited as [E:id]</p><ul>");
    for persona in board.personas() {
        for e in board.sources_cited(&persona.id) {
            out.push(html!(
                "<li>{}: <code>[E:{}]</code> {}: “{}”</li>",
                Html::text(&persona.name),
                Html::text(&e.id),
                Html::text(&e.source),
                Html::text(&e.passage)
            ));
        }
        for c in board.citations().iter().filter(|c| c.persona == persona.id) {
            for id in &c.rejected {
                out.push(html!(
                    "<li class=\"warn\">{}: <code>[E:{}]</code> rejected (no such chunk in its corpus)</li>",
                    Html::text(&persona.name),
                    Html::text(id)
                ));
            }
        }
    }
    out.push_literal("</ul></section>");
}

/// The debate-quality metrics (the report's table).
fn metrics_table(m: &crate::DebateMetrics) -> Html {
    let percent = |v: Option<f64>| {
        v.map_or_else(
            || Html::literal("—"),
            |v| html!("{} %", Html::decimal(v * 100.0, 0)),
        )
    };
    let ratio = |v: Option<f64>| v.map_or_else(|| Html::literal("—"), |v| Html::decimal(v, 2));
    let rows = [
        (
            "messages analysed",
            html!(
                "{} of {}",
                Html::number(m.messages_analysed),
                Html::number(m.messages)
            ),
        ),
        ("ledger coverage", percent(m.ledger_coverage)),
        (
            "claims opened · resolved",
            html!(
                "{} · {}",
                Html::number(m.claims_opened),
                Html::number(m.claims_resolved)
            ),
        ),
        ("crux compression", ratio(m.crux_compression)),
        ("disagreement entropy", ratio(m.disagreement_entropy)),
        (
            "messages building on ledger evidence · on others'",
            html!(
                "{} · {}",
                Html::number(m.evidence_reuse),
                Html::number(m.evidence_reuse_others)
            ),
        ),
        (
            "self-contradictions flagged",
            Html::number(m.self_contradictions),
        ),
        ("memory ÷ utterance tokens", ratio(m.memory_cost)),
    ];
    let mut out = Html::literal("<section><h2>Debate quality</h2><table>");
    for (label, value) in rows {
        out.push(html!(
            "<tr><td>{}</td><td>{}</td></tr>",
            Html::literal(label),
            value
        ));
    }
    out.push_literal("</table></section>");
    out
}

/// The requirements panel: each requirement, its weight, which agents'
/// latest proposals cover it, and the judge's verdict.
fn requirements(out: &mut Html, board: &Blackboard) {
    let ledger = board.requirements();
    if ledger.requirements.is_empty() {
        return;
    }
    out.push_literal(
        "<section><h2>Requirements</h2><table><tr><th>id</th><th>requirement</th>\
         <th>covered by</th><th>judge</th></tr>",
    );
    let judged = board.solution();
    for r in &ledger.requirements {
        let by: Vec<Html> = ledger
            .covered_by(&r.id)
            .into_iter()
            .map(|p| name(board, p))
            .collect();
        let verdict = judged.map_or("", |s| crate::report::judge_verdict(s, &r.id));
        out.push(html!(
            "<tr><td>{}</td><td>{} <span class=\"kind\">{}</span></td><td>{}</td><td>{}</td></tr>",
            Html::text(&r.id),
            Html::text(&r.text),
            Html::text(r.weight()),
            if by.is_empty() {
                Html::literal("—")
            } else {
                join(by, ", ")
            },
            Html::text(verdict)
        ));
    }
    out.push_literal("</table></section>");
}

/// A structured debate's round records: each aspect's summary and each
/// persona's take on it.
fn round_records(out: &mut Html, board: &Blackboard) {
    if board.rounds().is_empty() {
        return;
    }
    out.push_literal("<section><h2>Round records</h2>");
    for r in board.rounds() {
        let label = board
            .aspect(&r.aspect)
            .map_or(r.aspect.as_str(), |a| a.label.as_str());
        out.push(html!(
            "<p><strong>{}</strong> (round {}): {}</p><ul>",
            Html::text(label),
            Html::number(r.round),
            Html::text(&r.summary)
        ));
        for (persona, take) in &r.takes {
            out.push(html!(
                "<li>{}: {}</li>",
                name(board, persona),
                Html::text(&take.position)
            ));
        }
        out.push_literal("</ul>");
    }
    out.push_literal("</section>");
}

/// The reflections: what the debate learned about itself.
fn reflections(out: &mut Html, board: &Blackboard) {
    if board.reflections().is_empty() {
        return;
    }
    out.push_literal("<section><h2>Reflections</h2><ul>");
    for r in board.reflections() {
        out.push(html!(
            "<li><span class=\"kind\">{}, importance {}, round {}</span> {}</li>",
            Html::text(r.kind.label()),
            Html::number(r.importance),
            Html::number(r.round),
            Html::text(&r.content)
        ));
    }
    out.push_literal("</ul></section>");
}

/// A dialectic debate's devil's advocate of each round.
fn devils_advocates(out: &mut Html, board: &Blackboard) {
    if board.devils_advocates().is_empty() {
        return;
    }
    out.push_literal("<section><h2>Devil's advocates</h2><ul>");
    for (round, persona) in board.devils_advocates() {
        out.push(html!(
            "<li>round {}: {}</li>",
            Html::number(*round),
            name(board, persona)
        ));
    }
    out.push_literal("</ul></section>");
}

/// The tool calls the agents made while they contributed.
fn tool_calls(out: &mut Html, board: &Blackboard) {
    if board.tool_calls().is_empty() {
        return;
    }
    out.push_literal("<section><h2>Tool calls</h2><ul>");
    for c in board.tool_calls() {
        let first = c
            .result
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        out.push(html!(
            "<li>{} ({}): <code>{}({})</code> {} {}</li>",
            name(board, &c.persona),
            Html::text(&c.turn.to_string()),
            Html::text(&c.name),
            Html::text(&c.arguments.to_string()),
            Html::literal(if c.ok { "→" } else { "failed:" }),
            Html::text(&agon_extract::truncate_chars(first, 200))
        ));
    }
    out.push_literal("</ul></section>");
}
