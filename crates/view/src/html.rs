//! The web page of a debate, rendered from the same view as the reports
//! (so a section added to the view shows everywhere): plain HTML with one
//! small script that follows the live event stream. Every text a model or
//! a person wrote is HTML-escaped; the script adds live text only as text
//! nodes.

use std::fmt::Write as _;

use agon_core::{Blackboard, ClaimStatus, DialogueMessage, MessageKind, PersonaId};

use crate::DebateView;

/// `text` with `&`, `<`, `>`, `"` and `'` escaped: safe in element content
/// and in quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#f6f6f4}\
header{background:#23262f;color:#fff;padding:.8em 1.5em}header a{color:#9fd3ff}\
main{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:1.2em;padding:1.2em 1.5em}\
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin-bottom:1em}\
h2{font-size:1.05em;margin:.3em 0 .6em}.msg{border-left:3px solid #9bb;padding:.2em .7em;margin:.6em 0}\
.who{font-weight:600}.kind{color:#667;font-size:.85em}.live{color:#667;font-style:italic;white-space:pre-wrap}\
.status{display:inline-block;padding:0 .5em;border-radius:4px;background:#e5eef8;color:#23262f;font-size:.85em}\
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:.25em .4em;text-align:left;vertical-align:top}\
.warn{color:#9a4b00}.note{background:#fff8e1;border-left:3px solid #e0a800;padding:.2em .7em;margin:.6em 0}\
form textarea,form input{width:100%;box-sizing:border-box;margin:.2em 0;font:inherit}button{font:inherit;margin:.2em .3em .2em 0}";

/// A whole page: `title` and `body` (already escaped where needed).
fn page(title: &str, body: &str, script: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>{body}{script}</body></html>",
        escape(title)
    )
}

/// One row of the debate list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListRow {
    /// The debate's id.
    pub id: String,
    /// Its topic.
    pub topic: String,
    /// Its protocol.
    pub protocol: String,
    /// Its run status.
    pub status: String,
    /// Messages in its transcript.
    pub messages: u64,
    /// When it last changed (RFC 3339).
    pub updated: String,
}

/// The configuration the start form shows first: a small structured
/// debate on the default models (any configuration `agon debate` reads
/// works, of every protocol; see docs/configuration.md).
pub const START_TEMPLATE: &str = "# Any configuration `agon debate` reads (docs/configuration.md).
# protocol = \"dialectic\" or \"deliberation\" runs the other protocols.
topic = \"Should cities ban private cars from their centres?\"
minirounds = 1
";

/// The page listing debates, with a form to start one.
pub fn list_page(rows: &[ListRow]) -> String {
    let mut body = String::from(
        "<header><strong>Agon</strong> · debates</header><main style=\"display:block\"><section><table><tr><th>debate</th><th>topic</th><th>protocol</th><th>status</th><th>messages</th><th>updated</th></tr>",
    );
    for r in rows {
        let _ = write!(
            body,
            "<tr><td><a href=\"/debates/{id}\">{id}</a></td><td>{topic}</td><td>{protocol}</td>\
             <td><span class=\"status\">{status}</span></td><td>{messages}</td><td>{updated}</td></tr>",
            id = escape(&r.id),
            topic = escape(&r.topic),
            protocol = escape(&r.protocol),
            status = escape(&r.status),
            messages = r.messages,
            updated = escape(&r.updated),
        );
    }
    if rows.is_empty() {
        body.push_str("<tr><td colspan=\"6\">No debate yet: start one below.</td></tr>");
    }
    let _ = write!(
        body,
        "</table></section><section><h2>Start a debate</h2><form id=\"start-form\">\
         <textarea name=\"toml\" rows=\"8\" spellcheck=\"false\" style=\"font-family:monospace\">{}</textarea>\
         <button type=\"submit\">Start</button> <span class=\"kind\" id=\"start-status\"></span></form></section></main>",
        escape(START_TEMPLATE)
    );
    page(
        "Agon: debates",
        &body,
        "<script src=\"/static/list.js\"></script>",
    )
}

/// The script of the debate list (served as `/static/list.js`): posts the
/// start form's configuration and opens the new debate's page.
pub const LIST_SCRIPT: &str = include_str!("../assets/list.js");

fn name(board: &Blackboard, id: &PersonaId) -> String {
    escape(board.persona_name(id))
}

fn message_html(board: &Blackboard, m: &DialogueMessage) -> String {
    let what = match &m.kind {
        MessageKind::Critique { target } => format!("critique of {}", name(board, target)),
        k => k.label().to_owned(),
    };
    format!(
        "<div class=\"msg\" id=\"{id}\"><span class=\"who\">{who}</span> <span class=\"kind\">{what} · round {round}</span><div>{text}</div></div>",
        id = escape(m.id.as_str()),
        who = name(board, &m.persona),
        round = m.round,
        text = escape(m.content.trim()).replace('\n', "<br>"),
    )
}

fn note_html(note: &agon_core::ModeratorNote) -> String {
    let by = note
        .author
        .as_deref()
        .map_or_else(String::new, |a| format!(" ({})", escape(a)));
    format!(
        "<div class=\"note\"><span class=\"who\">Moderator{by}: </span><span>{}</span></div>",
        escape(&note.text)
    )
}

/// Steering a running debate: a note every agent's next context shows,
/// pause, resume and stop (hidden once the debate is finished).
fn steer_section(hidden: bool) -> String {
    format!(
        "<section id=\"steer\"{}><h2>Steer</h2><form id=\"note-form\">\
         <textarea name=\"text\" rows=\"2\" maxlength=\"{max}\" required placeholder=\"A note every agent sees from its next turn\"></textarea>\
         <input name=\"author\" maxlength=\"80\" placeholder=\"Your name (optional)\">\
         <button type=\"submit\">Post the note</button></form>\
         <p><button type=\"button\" id=\"pause\">Pause</button><button type=\"button\" id=\"resume\">Resume</button>\
         <button type=\"button\" id=\"stop\">Stop</button> <span class=\"kind\" id=\"steer-status\"></span></p></section>",
        if hidden { " hidden" } else { "" },
        max = agon_core::MAX_NOTE_CHARS,
    )
}

/// Recording that a person overrode the outcome (the trust memory infers
/// regret from it); shown once the debate is finished.
fn override_section(hidden: bool) -> String {
    format!(
        "<section id=\"override\"{}><h2>Override the outcome</h2><form id=\"override-form\">\
         <textarea name=\"decision\" rows=\"2\" required placeholder=\"What you decided instead\"></textarea>\
         <input name=\"agent\" placeholder=\"The one agent it concerns (default: every debater)\">\
         <button type=\"submit\">Record the override</button> <span class=\"kind\" id=\"override-status\"></span></form></section>",
        if hidden { " hidden" } else { "" },
    )
}

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
    if let Some(s) = board.solutions().last() {
        let _ = write!(
            out,
            "<section><h2>Solution after round {}</h2><p>{}</p><p>Confidence: {}</p></section>",
            s.round,
            escape(&s.description).replace('\n', "<br>"),
            s.confidence
                .map_or_else(|| "—".to_owned(), |c| c.to_string())
        );
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
            let _ = write!(
                out,
                "<li>✚ {} ({}): {}</li>",
                escape(p.id.as_str()),
                name(board, &p.proposer),
                escape(&p.content)
            );
        }
        out.push_str("</ul></section>");
    }
    let usage = board.usage_total();
    let _ = write!(
        out,
        "<section><h2>Usage</h2><p>{} calls · {} in / {} out tokens · ${:.4}</p><table>",
        usage.calls,
        usage.input_tokens,
        usage.output_tokens,
        usage.cost_micro_usd as f64 / 1e6
    );
    for (role, models) in board.usage() {
        let (calls, tokens) = models.values().fold((0, 0), |(c, t), u| {
            (c + u.calls, t + u.input_tokens + u.output_tokens)
        });
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{calls} calls</td><td>{tokens} tokens</td></tr>",
            escape(role)
        );
    }
    let m = view.metrics();
    let _ = write!(
        out,
        "</table><p>Ledger coverage {} · claims opened {} · resolved {}</p></section>",
        m.ledger_coverage
            .map_or_else(|| "—".to_owned(), |c| format!("{:.0} %", c * 100.0)),
        m.claims_opened,
        m.claims_resolved
    );
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
    out
}

/// The script of the debate page (served as `/static/debate.js`, so a
/// content security policy can forbid inline scripts): it follows the
/// stream, appends new messages as text nodes, shows who is speaking from
/// the tokens, and refetches the panels as events come.
pub const SCRIPT: &str = include_str!("../assets/debate.js");

/// The page of one debate: its transcript (followed live), and its panels.
pub fn debate_page(view: &DebateView, id: &str, status: &str, last_seq: u64) -> String {
    let board = view.board();
    let topic = board.topic().map_or("", |t| t.question.as_str());
    let names: serde_json::Map<String, serde_json::Value> = board
        .personas()
        .iter()
        .map(|p| (p.id.to_string(), serde_json::Value::String(p.name.clone())))
        .collect();
    let names = serde_json::Value::Object(names).to_string();
    let mut body = format!(
        "<header><a href=\"/\">Agon</a> · {protocol} · <span class=\"status\" id=\"status\">{status}</span><h1 style=\"font-size:1.3em;margin:.3em 0\">{topic}</h1></header>\
         <main><div><section><h2>Transcript</h2><div id=\"transcript\">",
        protocol = escape(view.protocol().as_str()),
        status = escape(status),
        topic = escape(topic),
    );
    let mut notes = board.notes().iter().peekable();
    for (i, m) in board.messages().iter().enumerate() {
        while let Some(n) = notes.next_if(|n| n.after_messages <= i) {
            body.push_str(&note_html(n));
        }
        body.push_str(&message_html(board, m));
    }
    for n in notes {
        body.push_str(&note_html(n));
    }
    let finished = status == "finished";
    let _ = write!(
        body,
        "</div><p class=\"live\" id=\"live\"></p></section>\
         <section id=\"questions\" hidden><h2>Clarifying questions</h2><form id=\"answer-form\"></form></section>\
         {steer}{override_form}</div><div id=\"panels\">{}</div></main>",
        panels(view),
        steer = steer_section(finished),
        override_form = override_section(!finished),
    );
    let html = page(
        &format!("Agon: {topic}"),
        &body,
        "<script src=\"/static/debate.js\"></script>",
    );
    // What the script needs: the debate, the last sequence the page
    // shows, the personas' names (escaped as an attribute value).
    html.replacen(
        "<body>",
        &format!(
            "<body data-debate=\"{}\" data-last=\"{last_seq}\" data-names=\"{}\">",
            escape(id),
            escape(&names)
        ),
        1,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use agon_core::DebateEvent;
    use agon_core::synthetic::small;

    use super::*;
    use crate::ReportOptions;

    const HOSTILE: &str = "<script>alert(1)</script> <img src=x onerror=alert(2)> \
                           [click](javascript:alert(3)) \" onmouseover=\"alert(4)";

    fn hostile_view() -> DebateView {
        let mut log = small::log();
        if let DebateEvent::DebateStarted {
            personas, topic, ..
        } = &mut log[0]
        {
            personas[0].name = "<b>Eve</b>".into();
            topic.question = HOSTILE.into();
        }
        if let DebateEvent::MessageAppended { message } = &mut log[2] {
            message.content = HOSTILE.into();
        }
        DebateView::from_log(&log, ReportOptions::default()).unwrap()
    }

    #[test]
    fn escape_covers_what_html_and_attributes_interpret() {
        assert_eq!(
            escape(r#"<a href="x" title='y'>&</a>"#),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;"
        );
        assert_eq!(escape("plain text, ünïcode"), "plain text, ünïcode");
    }

    #[test]
    fn model_written_text_renders_as_text_on_the_page() {
        let page = debate_page(&hostile_view(), "d1", "running", 4);
        for raw in [
            "<script>alert",
            "<img src=x",
            "<b>Eve",
            "\" onmouseover=\"",
            "href=\"javascript:",
        ] {
            assert!(!page.contains(raw), "`{raw}` reached the page raw");
        }
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(
            page.contains("&lt;b&gt;Eve&lt;/b&gt;"),
            "the persona's name, escaped"
        );
        // The only script is the page's own file; no inline script at all.
        assert_eq!(page.matches("<script").count(), 1);
        assert!(page.contains("<script src=\"/static/debate.js\"></script>"));
        // What the script reads is in attributes, escaped.
        assert!(page.contains("data-debate=\"d1\" data-last=\"4\""));
        assert!(
            page.contains("&quot;&lt;b&gt;Eve&lt;/b&gt;&quot;"),
            "names as escaped JSON"
        );
    }

    #[test]
    fn the_stance_graph_draws_each_pair_once_with_names_escaped() {
        use agon_core::Intensity;
        let mut log = small::log();
        if let DebateEvent::DebateStarted { personas, .. } = &mut log[0] {
            personas[0].name = "<b>Ada</b>".into();
        }
        let view = DebateView::from_log(&log, ReportOptions::default()).unwrap();
        assert_eq!(stance_graph(view.board()), None, "nothing recorded yet");
        let disagree = |persona: &str, with: &str| DebateEvent::DisagreementRecorded {
            persona: persona.into(),
            with: with.into(),
            on: "vans".into(),
            intensity: Intensity::Strong,
            round: 1,
        };
        log.extend([
            disagree("ada", "bo"),
            disagree("bo", "ada"),
            DebateEvent::AgreementRecorded {
                persona: "ada".into(),
                with: "bo".into(),
                on: "safety".into(),
                round: 1,
            },
        ]);
        let view = DebateView::from_log(&log, ReportOptions::default()).unwrap();
        let svg = stance_graph(view.board()).unwrap();
        // One pair: one green line (1 agreement), one red (2 disagreements).
        assert_eq!(svg.matches("<line").count(), 2, "{svg}");
        assert!(
            svg.contains("stroke=\"#c0392b\" stroke-width=\"3\""),
            "{svg}"
        );
        assert!(
            svg.contains("stroke=\"#2e8b57\" stroke-width=\"2\""),
            "{svg}"
        );
        assert_eq!(
            svg.matches("<circle").count(),
            2,
            "the debaters, not the judge"
        );
        assert!(svg.contains("&lt;b&gt;Ada&lt;/b&gt;") && !svg.contains("<b>Ada"));
        assert!(panels(&view).contains("<h2>Agreements and disagreements</h2>"));
    }

    #[test]
    fn a_dialectic_round_is_laid_out_per_agent() {
        let mut log = small::log();
        if let DebateEvent::DebateStarted { protocol, .. } = &mut log[0] {
            *protocol = Some(agon_core::ProtocolKind::Dialectic);
        }
        let message =
            |id: &str, persona: &str, kind: MessageKind, text: &str| DebateEvent::MessageAppended {
                message: DialogueMessage {
                    kind,
                    aspect: None,
                    miniround: None,
                    ..small::message(id, persona, text)
                },
            };
        let log: Vec<DebateEvent> = vec![
            log[0].clone(),
            DebateEvent::RoundStarted { round: 1 },
            message("m1", "ada", MessageKind::Proposal, "Ada's <design>"),
            message("m2", "bo", MessageKind::Proposal, "Bo's design"),
            message(
                "m3",
                "bo",
                MessageKind::Critique {
                    target: "ada".into(),
                },
                "Too slow.",
            ),
            message("m4", "ada", MessageKind::Refinement, "Ada's faster design"),
        ];
        let view = DebateView::from_log(&log, ReportOptions::default()).unwrap();
        let rounds = dialectic_rounds(view.board()).unwrap();
        let ada = rounds.find("<h3>Ada</h3>").unwrap();
        let bo = rounds.find("<h3>Bo</h3>").unwrap();
        // Ada's section holds her proposal, Bo's critique of it, her refinement.
        let section = &rounds[ada..bo];
        assert!(section.contains("Ada&#39;s &lt;design&gt;"), "{section}");
        assert!(section.contains("<li>Bo: Too slow.</li>"), "{section}");
        assert!(section.contains("<em>refinement</em>: Ada&#39;s faster design"));
        assert!(
            !rounds[bo..].contains("Too slow."),
            "a critique sits under its target"
        );
        let structured = DebateView::from_log(&small::log(), ReportOptions::default()).unwrap();
        assert_eq!(dialectic_rounds(structured.board()), None);
    }

    #[test]
    fn a_deliberation_shows_its_latest_bids() {
        let mut log = small::log();
        assert_eq!(
            latest_bids(
                DebateView::from_log(&log, ReportOptions::default())
                    .unwrap()
                    .board()
            ),
            None
        );
        let bid = |persona: &str, respond: bool, urgency: u8, reason: &str| agon_core::Bid {
            persona: persona.into(),
            respond,
            urgency,
            reason: reason.into(),
        };
        log.push(DebateEvent::SpeakersEvaluated {
            turn: 2,
            bids: vec![bid("ada", false, 0, "old")],
        });
        log.push(DebateEvent::SpeakersEvaluated {
            turn: 3,
            bids: vec![
                bid("ada", true, 8, "<b>urgent</b>"),
                bid("bo", false, 0, ""),
            ],
        });
        let view = DebateView::from_log(&log, ReportOptions::default()).unwrap();
        let bids = latest_bids(view.board()).unwrap();
        assert!(bids.contains("turn 3"), "{bids}");
        assert!(
            bids.contains("<td>Ada</td><td>yes</td><td>8</td><td>&lt;b&gt;urgent&lt;/b&gt;</td>")
        );
        assert!(!bids.contains("old"), "only the latest turn");
    }

    #[test]
    fn the_page_shows_the_transcript_and_the_panels() {
        let view = DebateView::from_log(&small::log(), ReportOptions::default()).unwrap();
        let page = debate_page(&view, "d1", "finished", 4);
        assert!(page.contains("Cars kill 40 people a year here."));
        assert!(page.contains("Deliveries need vans"));
        assert!(page.contains("<h2>Position ledger</h2>"));
        assert!(page.contains("<h2>Usage</h2>"));
        assert!(
            page.contains("<section id=\"questions\" hidden>"),
            "the answers' form, shown by the script when questions wait"
        );
        let list = list_page(&[ListRow {
            id: "d1".into(),
            topic: "<i>t</i>".into(),
            protocol: "structured".into(),
            status: "finished".into(),
            messages: 2,
            updated: "2026-11-25T00:00:00Z".into(),
        }]);
        assert!(list.contains("<a href=\"/debates/d1\">d1</a>"));
        assert!(list.contains("&lt;i&gt;t&lt;/i&gt;"));
    }

    #[test]
    fn moderator_notes_sit_in_the_transcript_where_they_were_posted() {
        let mut log = small::log();
        // After the first message (log[2] is the first message_appended).
        log.insert(
            3,
            DebateEvent::NoteAdded {
                text: HOSTILE.into(),
                author: Some("<i>Chair</i>".into()),
                time: chrono::DateTime::UNIX_EPOCH,
            },
        );
        let view = DebateView::from_log(&log, ReportOptions::default()).unwrap();
        let page = debate_page(&view, "d1", "running", 5);
        let note = page.find("<div class=\"note\">").unwrap();
        let first = page.find("Cars kill 40 people").unwrap();
        let second = page.find("Deliveries need vans").unwrap();
        assert!(first < note && note < second, "between the messages");
        assert!(page.contains("Moderator (&lt;i&gt;Chair&lt;/i&gt;): </span><span>&lt;script&gt;"));
        assert!(!page.contains("<script>alert"));
        // Running: the steering forms show, the override waits for the end.
        assert!(page.contains("<section id=\"steer\"><h2>Steer</h2>"));
        assert!(page.contains("<section id=\"override\" hidden>"));
        let finished = debate_page(&view, "d1", "finished", 5);
        assert!(finished.contains("<section id=\"steer\" hidden>"));
        assert!(finished.contains("<section id=\"override\"><h2>Override the outcome</h2>"));
    }

    #[test]
    fn the_list_page_has_a_start_form_and_its_own_script() {
        let list = list_page(&[]);
        assert!(list.contains("<form id=\"start-form\">"));
        assert!(list.contains("topic = &quot;Should cities ban private cars"));
        assert!(list.contains("<script src=\"/static/list.js\"></script>"));
        assert_eq!(list.matches("<script").count(), 1);
    }
}
