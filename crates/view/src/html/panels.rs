//! The panels beside a debate's transcript: the agreement graph, the
//! dialectic rounds and the deliberation's bids (drawn from the
//! transcript), then the view's [`crate::Sections`] laid out as HTML: the
//! ledger, claims and crux cards, requirements, the solution, decisions and
//! proposals, usage, metrics, warnings, round records, reflections, devil's
//! advocates, tool calls, sources, notes and repairs. Built as [`Html`]:
//! every text a model or a person wrote is escaped on the way in.

use agon_core::{Blackboard, DialogueMessage, MessageKind};

use super::{Html, name};
use crate::sections::{CacheEffect, InRound, Relation, Sections, StepRow, Usage};
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
pub fn stance_graph(view: &DebateView) -> Option<String> {
    stance_graph_html(view.board(), view.sections()).map(Html::into_string)
}

fn stance_graph_html(board: &Blackboard, sections: &Sections) -> Option<Html> {
    use std::collections::BTreeMap;
    let debaters: Vec<&agon_core::Persona> = board.debaters().collect();
    let index: BTreeMap<&str, usize> = debaters
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), i))
        .collect();
    // (low, high) pair → (agreements, disagreements), both directions.
    let mut pairs: BTreeMap<(usize, usize), (usize, usize)> = BTreeMap::new();
    for ledger in &sections.ledger {
        let Some(&a) = index.get(ledger.persona.as_str()) else {
            continue;
        };
        let mut count = |with: &str, agree: bool| {
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
    let sections = view.sections();
    let mut out = Html::default();
    if let Some(rounds) = dialectic_rounds_html(board) {
        out.push(rounds);
    }
    if let Some(bids) = latest_bids_html(board) {
        out.push(bids);
    }
    if let Some(graph) = stance_graph_html(board, sections) {
        out.push(html!(
            "<section><h2>Agreements and disagreements</h2>{}<p class=\"kind\">green: agreed on something; red: disagreed; thicker: more often</p></section>",
            graph
        ));
    }
    ledger(&mut out, sections);
    claims(&mut out, sections);
    requirements(&mut out, sections);
    solution(&mut out, sections);
    decisions_and_proposals(&mut out, sections);
    if let Some(summary) = board.latest_rolling_summary() {
        out.push(html!(
            "<section><h2>Earlier discussion (rolling summary)</h2><p class=\"kind\">messages 1–{} in {} characters (from {})</p><div class=\"md\">{}</div></section>",
            Html::number(summary.span.end),
            Html::number(summary.after_chars),
            Html::number(summary.before_chars),
            Html::markdown(&summary.text)
        ));
    }
    usage(&mut out, &sections.usage);
    out.push(metrics_table(view.metrics()));
    step_rows(
        &mut out,
        "Warnings",
        "optional steps that failed; the debate continued",
        &sections.warnings,
    );
    round_records(&mut out, sections);
    reflections(&mut out, sections);
    devils_advocates(&mut out, sections);
    tool_calls(&mut out, sections);
    sources_cited(&mut out, sections);
    notes(&mut out, sections);
    step_rows(
        &mut out,
        "Repairs",
        "model output that validation repaired before it was recorded",
        &sections.repairs,
    );
    out
}

/// `items`, each escaped.
fn texts<'a>(items: impl IntoIterator<Item = &'a String>) -> Vec<Html> {
    items.into_iter().map(|t| Html::text(t)).collect()
}

/// Warnings or repairs: the step, what it was about, what happened.
fn step_rows(out: &mut Html, title: &'static str, about: &'static str, rows: &[StepRow]) {
    if rows.is_empty() {
        return;
    }
    out.push(html!(
        "<section><h2>{}</h2><p class=\"kind\">{}</p><ul>",
        Html::literal(title),
        Html::literal(about)
    ));
    for r in rows {
        out.push(html!(
            "<li class=\"warn\">{} {}: {}</li>",
            Html::text(&r.step),
            Html::text(&r.subject),
            Html::text(&r.text)
        ));
    }
    out.push_literal("</ul></section>");
}

/// Each debater's ledger: start and end stance, concessions, shifts,
/// agreements, disagreements, evidence.
fn ledger(out: &mut Html, sections: &Sections) {
    out.push_literal("<section><h2>Position ledger</h2>");
    if let Some(why) = &sections.empty.ledger {
        out.push(html!("<p class=\"kind\">{}</p>", Html::text(why)));
    }
    for row in &sections.ledger {
        if row.end.is_empty() && row.start.is_empty() {
            continue;
        }
        out.push(html!("<h3>{}</h3>", Html::text(&row.persona)));
        if !row.start.is_empty() && row.start != row.end {
            out.push(html!("<p><em>started</em>: {}</p>", Html::text(&row.start)));
        }
        out.push(html!("<p>{}</p>", Html::text(&row.end)));
        let mut list = |label: &'static str, items: Vec<Html>| {
            if !items.is_empty() {
                out.push(html!(
                    "<p><em>{}</em>: {}</p>",
                    Html::literal(label),
                    join(items, "; ")
                ));
            }
        };
        let dated = |items: &[InRound]| -> Vec<Html> {
            items
                .iter()
                .map(|n| html!("r{}: {}", Html::number(n.round), Html::text(&n.text)))
                .collect()
        };
        let related = |items: &[Relation]| -> Vec<Html> {
            items
                .iter()
                .map(|r| html!("{} on {}", Html::text(&r.with), Html::text(&r.on)))
                .collect()
        };
        list("concessions", dated(&row.concessions));
        list("shifts", dated(&row.shifts));
        list("agrees with", related(&row.agreements));
        list("disagrees with", related(&row.disagreements));
        list("evidence", texts(&row.evidence));
    }
    out.push_literal("</section>");
}

/// The claims with their status and outcome, then the crux cards.
fn claims(out: &mut Html, sections: &Sections) {
    if sections.claims.is_empty() {
        return;
    }
    out.push_literal("<section><h2>Claims and crux cards</h2>");
    if let Some(why) = &sections.empty.crux_cards {
        out.push(html!("<p class=\"kind\">{}</p>", Html::text(why)));
    }
    out.push_literal("<table>");
    for c in &sections.claims {
        out.push(html!(
            "<tr><td>{}</td><td>{}</td><td>{} vs {}</td><td>{}</td><td>{}</td></tr>",
            Html::text(&c.id),
            Html::text(&c.claim),
            Html::text(&c.between[0]),
            Html::text(&c.between[1]),
            Html::literal(c.status),
            c.outcome.as_deref().map_or_else(Html::default, Html::text)
        ));
    }
    out.push_literal("</table>");
    for card in &sections.crux_cards {
        let positions: Vec<Html> = card
            .positions
            .iter()
            .map(|p| {
                html!(
                    "{}: <strong>{}</strong> — {} <em>Would change their mind: {}</em>",
                    Html::text(&p.persona),
                    Html::literal(p.stance),
                    Html::text(&p.reasoning),
                    Html::text(&p.falsifier)
                )
            })
            .collect();
        out.push(html!(
            "<p>◆ <strong>{}</strong> {} <span class=\"kind\">({} disagreement, {})</span><br>{}<br><em>{}</em></p>",
            Html::text(&card.id),
            Html::text(&card.question),
            Html::literal(card.kind),
            Html::literal(if card.resolved { "resolved" } else { "unresolved" }),
            join(positions, "<br>"),
            Html::text(&card.diagnosis)
        ));
    }
    out.push_literal("</section>");
}

/// The judge's latest solution and its lists.
fn solution(out: &mut Html, sections: &Sections) {
    let Some(s) = &sections.solution else {
        return;
    };
    out.push(html!(
        "<section><h2>Solution after round {}</h2><p class=\"kind\">by {}</p><div class=\"md\">{}</div><p>Confidence: {}</p>",
        Html::number(s.round),
        Html::text(&s.by),
        Html::markdown(&s.description),
        s.confidence
            .map_or_else(|| Html::literal("—"), Html::number)
    ));
    for (title, items) in &s.lists {
        out.push(html!("<h3>{}</h3><ul>", Html::text(title)));
        for item in items {
            out.push(html!("<li>{}</li>", Html::text(item)));
        }
        out.push_literal("</ul>");
    }
    if !s.earlier.is_empty() {
        let earlier: Vec<Html> = s
            .earlier
            .iter()
            .map(|(round, confidence)| {
                html!(
                    "after round {}: confidence {}",
                    Html::number(*round),
                    confidence.map_or_else(|| Html::literal("—"), Html::number)
                )
            })
            .collect();
        out.push(html!(
            "<p class=\"kind\">Earlier solutions: {}</p>",
            join(earlier, "; ")
        ));
    }
    out.push_literal("</section>");
}

/// A deliberation's decisions and proposals, each proposal with its
/// reactions.
fn decisions_and_proposals(out: &mut Html, sections: &Sections) {
    if sections.decisions.is_empty() && sections.proposals.is_empty() {
        return;
    }
    out.push_literal("<section><h2>Decisions and proposals</h2><ul>");
    for d in &sections.decisions {
        let supported = if d.supporting.is_empty() {
            Html::default()
        } else {
            html!(
                " <span class=\"kind\">(supported by {})</span>",
                join(texts(&d.supporting), ", ")
            )
        };
        out.push(html!(
            "<li>✔ {} {}: {}{}</li>",
            Html::text(&d.id),
            Html::text(&d.topic),
            Html::text(&d.outcome),
            supported
        ));
    }
    for p in &sections.proposals {
        let reactions: Vec<Html> = [("+", &p.support), ("−", &p.oppose), ("○", &p.neutral)]
            .into_iter()
            .flat_map(|(mark, who)| {
                who.iter()
                    .map(move |w| html!("{}{}", Html::literal(mark), Html::text(w)))
            })
            .collect();
        let reactions = if reactions.is_empty() {
            Html::default()
        } else {
            html!(" <span class=\"kind\">{}</span>", join(reactions, " "))
        };
        out.push(html!(
            "<li>✚ {} ({}, {}): {}{}</li>",
            Html::text(&p.id),
            Html::text(&p.by),
            Html::text(&p.status),
            Html::text(&p.content),
            reactions
        ));
    }
    out.push_literal("</ul></section>");
}

/// Usage and cost by role and model.
fn usage(out: &mut Html, usage: &Usage) {
    let cost = |u: &agon_core::UsageTotals| {
        if u.unpriced && u.cost_micro_usd == 0 {
            Html::literal("unpriced")
        } else {
            html!("${}", Html::decimal(u.cost_micro_usd as f64 / 1e6, 4))
        }
    };
    let total = &usage.total;
    let cached_tokens = Html::number(total.cached_input_tokens);
    let cached = match usage.cache_effect() {
        _ if !usage.cached() => Html::default(),
        CacheEffect::Saved { usd, .. } => html!(
            " ({} cached, ${} saved by the prompt cache)",
            cached_tokens,
            Html::decimal(usd, 4)
        ),
        CacheEffect::WritesCostMore { usd } => html!(
            " ({} cached, cache writes ${} more)",
            cached_tokens,
            Html::decimal(usd, 4)
        ),
        CacheEffect::None => html!(" ({} cached)", cached_tokens),
    };
    out.push(html!(
        "<section><h2>Usage</h2><p>{} calls · {} in{} / {} out tokens · {}{}</p><table>",
        Html::number(total.calls),
        Html::number(total.input_tokens),
        cached,
        Html::number(total.output_tokens),
        cost(total),
        Html::literal(if usage.complete {
            ""
        } else {
            " <span class=\"kind\">(each run records its usage when it stops)</span>"
        })
    ));
    for row in &usage.rows {
        let u = &row.totals;
        out.push(html!(
            "<tr><td>{}</td><td>{}</td><td>{} calls</td><td>{} in / {} out tokens</td><td>{}</td></tr>",
            Html::text(&row.role),
            Html::text(&row.model),
            Html::number(u.calls),
            Html::number(u.input_tokens),
            Html::number(u.output_tokens),
            cost(u)
        ));
    }
    out.push_literal("</table>");
    let [utterances, analyses, records, other] = usage.by_purpose;
    if utterances + analyses + records + other > 0 {
        out.push(html!(
            "<p class=\"kind\">input tokens by purpose: utterances {} · analyses {} · round records and reflections {} · crux rooms, judge and summaries {}</p>",
            Html::number(utterances),
            Html::number(analyses),
            Html::number(records),
            Html::number(other)
        ));
    }
    out.push_literal("</section>");
}

/// The passages each persona cited from its own corpus, and the ids it
/// cited that its corpus does not have.
fn sources_cited(out: &mut Html, sections: &Sections) {
    if sections.sources.is_empty() {
        return;
    }
    out.push_literal("<section><h2>Sources cited</h2><p class=\"kind\">passages of each persona's own corpus it cited as [E:id]</p><ul>");
    for row in &sections.sources {
        for (id, source, passage) in &row.cited {
            out.push(html!(
                "<li>{}: <code>[E:{}]</code> {}: “{}”</li>",
                Html::text(&row.persona),
                Html::text(id),
                Html::text(source),
                Html::text(passage)
            ));
        }
        for id in &row.rejected {
            out.push(html!(
                "<li class=\"warn\">{}: <code>[E:{}]</code> rejected (no such chunk in its corpus)</li>",
                Html::text(&row.persona),
                Html::text(id)
            ));
        }
    }
    out.push_literal("</ul></section>");
}

/// The moderators' notes (the transcript shows each where it was posted).
fn notes(out: &mut Html, sections: &Sections) {
    if sections.notes.is_empty() {
        return;
    }
    out.push_literal("<section><h2>Moderator notes</h2><p class=\"kind\">shown to every agent from the next context on</p><ul>");
    for n in &sections.notes {
        out.push(html!(
            "<li>after message {}: {}{}</li>",
            Html::number(n.after_messages),
            Html::text(&n.text),
            n.author
                .as_deref()
                .map_or_else(Html::default, |a| html!(" — {}", Html::text(a)))
        ));
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

/// The requirements panel: each requirement, its weight, the agents'
/// verdicts per round, which agents' latest proposals cover it, and the
/// judge's verdict.
fn requirements(out: &mut Html, sections: &Sections) {
    let Some(matrix) = &sections.requirements else {
        return;
    };
    out.push(html!(
        "<section><h2>Requirements</h2><p class=\"kind\">found by {}; per agent, one verdict per round: ✓ covers, ✗ weakens, · does not address</p><table><tr><th>id</th><th>requirement</th>",
        Html::literal(matrix.found_by)
    ));
    for a in &matrix.agents {
        out.push(html!("<th>{}</th>", Html::text(a)));
    }
    out.push_literal("<th>covered by</th><th>judge</th></tr>");
    for r in &matrix.rows {
        out.push(html!(
            "<tr><td>{}</td><td>{} <span class=\"kind\">{}</span></td>",
            Html::text(&r.id),
            Html::text(&r.text),
            Html::text(&r.weight)
        ));
        for cells in &r.cells {
            out.push(html!("<td>{}</td>", Html::text(cells)));
        }
        out.push(html!(
            "<td>{}</td><td>{}</td></tr>",
            if r.covered_by.is_empty() {
                Html::literal("—")
            } else {
                join(texts(&r.covered_by), ", ")
            },
            Html::text(r.verdict.unwrap_or(""))
        ));
    }
    out.push_literal("</table>");
    if !matrix.uncovered.is_empty() {
        out.push(html!(
            "<p class=\"warn\">No agent's latest proposal covers: {}.</p>",
            join(texts(&matrix.uncovered), ", ")
        ));
    }
    out.push_literal("</section>");
}

/// A structured debate's round records: each aspect's summary and each
/// persona's take on it.
fn round_records(out: &mut Html, sections: &Sections) {
    if sections.round_records.is_empty() {
        return;
    }
    out.push_literal("<section><h2>Round records</h2>");
    for r in &sections.round_records {
        out.push(html!(
            "<p><strong>{}</strong> (round {}): {}</p><ul>",
            Html::text(&r.aspect),
            Html::number(r.round),
            Html::text(&r.summary)
        ));
        for take in &r.takes {
            let argument = if take.key_argument.is_empty() {
                Html::default()
            } else {
                html!(" — {}", Html::text(&take.key_argument))
            };
            let evidence = if take.evidence.is_empty() {
                Html::default()
            } else {
                html!(" (evidence: {})", join(texts(&take.evidence), "; "))
            };
            out.push(html!(
                "<li>{}: {}{}{}</li>",
                Html::text(&take.persona),
                Html::text(&take.position),
                argument,
                evidence
            ));
        }
        out.push_literal("</ul>");
    }
    out.push_literal("</section>");
}

/// The reflections: what the debate learned about itself.
fn reflections(out: &mut Html, sections: &Sections) {
    if sections.reflections.is_empty() {
        if let Some(why) = &sections.empty.reflections {
            out.push(html!(
                "<section><h2>Reflections</h2><p class=\"kind\">{}</p></section>",
                Html::text(why)
            ));
        }
        return;
    }
    out.push_literal("<section><h2>Reflections</h2><ul>");
    for r in &sections.reflections {
        out.push(html!(
            "<li><span class=\"kind\">{}, importance {}, round {}</span> {}</li>",
            Html::literal(r.kind),
            Html::number(r.importance),
            Html::number(r.round),
            Html::text(&r.content)
        ));
    }
    out.push_literal("</ul></section>");
}

/// The devil's advocate of each round and the dissents it logged.
fn devils_advocates(out: &mut Html, sections: &Sections) {
    if sections.devils_advocates.is_empty() {
        return;
    }
    out.push_literal("<section><h2>Devil's advocates</h2><ul>");
    for row in &sections.devils_advocates {
        let changed = row.dissents.iter().filter(|(_, impact)| *impact).count();
        out.push(html!(
            "<li>round {}: {} <span class=\"kind\">{} dissent(s) logged, {} changed the outcome</span>",
            Html::number(row.round),
            Html::text(&row.persona),
            Html::number(row.dissents.len()),
            Html::number(changed)
        ));
        if !row.dissents.is_empty() {
            out.push_literal("<ul>");
            for (text, impact) in &row.dissents {
                out.push(html!(
                    "<li>{}{}</li>",
                    Html::text(&agon_extract::truncate_chars(text, 160)),
                    Html::literal(if *impact { " <em>(taken in)</em>" } else { "" })
                ));
            }
            out.push_literal("</ul>");
        }
        out.push_literal("</li>");
    }
    out.push_literal("</ul></section>");
}

/// The tool calls the agents made while they contributed.
fn tool_calls(out: &mut Html, sections: &Sections) {
    if sections.tool_calls.is_empty() {
        return;
    }
    out.push_literal("<section><h2>Tool calls</h2><ul>");
    for c in &sections.tool_calls {
        out.push(html!(
            "<li>{} ({}): <code>{}({})</code> {} {}</li>",
            Html::text(&c.persona),
            Html::text(&c.turn),
            Html::text(&c.tool),
            Html::text(&c.arguments),
            Html::literal(if c.ok { "→" } else { "failed:" }),
            Html::text(&c.result)
        ));
    }
    out.push_literal("</ul></section>");
}
