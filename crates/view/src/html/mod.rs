//! The web page of a debate, rendered from the same view as the reports
//! (so a section added to the view shows everywhere): plain HTML with one
//! small script that follows the live event stream. Every text a model or
//! a person wrote is HTML-escaped, or rendered from Markdown by
//! [`markdown`] (which escapes every character of the text and keeps
//! nothing that runs or loads); the script adds names and notes as text
//! nodes, and a message as the server rendered it.

use agon_core::{Blackboard, DialogueMessage, MessageKind, PersonaId};

use crate::DebateView;
use crate::html;

mod markdown;
mod markup;
mod panels;

pub use markdown::markdown;
pub use markup::{Html, Number, escape};
pub use panels::{dialectic_rounds, latest_bids, panels, stance_graph};

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#f6f6f4}\
header{background:#23262f;color:#fff;padding:.8em 1.5em}header a{color:#9fd3ff}\
main{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:1.2em;padding:1.2em 1.5em}\
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin-bottom:1em}\
h2{font-size:1.05em;margin:.3em 0 .6em}.msg{border-left:3px solid #9bb;padding:.2em .7em;margin:.6em 0}\
.who{font-weight:600}.kind{color:#667;font-size:.85em}.live{color:#667;font-style:italic;white-space:pre-wrap}\
.status{display:inline-block;padding:0 .5em;border-radius:4px;background:#e5eef8;color:#23262f;font-size:.85em}\
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:.25em .4em;text-align:left;vertical-align:top}\
.warn{color:#9a4b00}.note{background:#fff8e1;border-left:3px solid #e0a800;padding:.2em .7em;margin:.6em 0}\
form textarea,form input{width:100%;box-sizing:border-box;margin:.2em 0;font:inherit}button{font:inherit;margin:.2em .3em .2em 0}\
.md p{margin:.3em 0}.md h1,.md h2,.md h3,.md h4{font-size:1em;margin:.5em 0 .2em}.md pre{background:#f3f3f0;padding:.4em;overflow-x:auto}\
.md code{background:#f3f3f0;padding:0 .2em}.md ul,.md ol{margin:.2em 0;padding-left:1.4em}\
.id{white-space:nowrap;font-family:monospace;font-size:.9em}.clamp{display:block;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;max-width:60em}\
details.topic summary{cursor:pointer;list-style:none}details.topic[open] summary .clamp{display:none}details.topic .whole{white-space:pre-wrap}\
.filters select,.filters button{font:inherit;margin-right:.4em}.pages a{margin-right:.8em}";

/// A whole page: `title` (text, escaped here), `body` and its `script`
/// tag, with `body_attributes` on the `<body>` tag.
fn page(title: &str, body_attributes: Html, body: Html, script: Html) -> Html {
    html!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title><style>{}</style></head><body{}>{}{}</body></html>",
        Html::text(title),
        Html::literal(STYLE),
        body_attributes,
        body,
        script
    )
}

/// One row of the debate list.
#[derive(Debug, Clone, PartialEq)]
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
    /// Its recorded model cost in US dollars, when every call was priced.
    pub cost_usd: Option<f64>,
    /// When it was created.
    pub created: chrono::DateTime<chrono::Utc>,
}

/// Topics longer than this (or of more than one line) are clamped to
/// their first line, the whole text a click away.
const TOPIC_LINE_CHARS: usize = 120;

/// A topic (a dialectic problem can be a whole document) as one clamped
/// line; a long one opens to its whole text on demand.
fn topic_html(topic: &str) -> Html {
    let topic = topic.trim();
    let first = topic
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if first.len() == topic.len() && first.chars().count() <= TOPIC_LINE_CHARS {
        return html!("<span class=\"clamp\">{}</span>", Html::text(topic));
    }
    html!(
        "<details class=\"topic\"><summary><span class=\"clamp\">{}</span> <span class=\"kind\">(the whole text, {} characters)</span></summary><div class=\"whole\">{}</div></details>",
        Html::text(first),
        Html::number(topic.chars().count()),
        Html::text(topic)
    )
}

/// How long ago `then` was, in the largest whole unit ("3 min", "2 h").
pub fn age(then: chrono::DateTime<chrono::Utc>, now: chrono::DateTime<chrono::Utc>) -> String {
    let secs = (now - then).num_seconds().max(0);
    match secs {
        0..60 => format!("{secs} s"),
        60..3_600 => format!("{} min", secs / 60),
        3_600..86_400 => format!("{} h", secs / 3_600),
        _ => format!("{} d", secs / 86_400),
    }
}

/// The configuration the start form shows first: a small structured
/// debate on the default models (any configuration `agon debate` reads
/// works, of every protocol; see docs/configuration.md).
pub const START_TEMPLATE: &str = "# Any configuration `agon debate` reads (docs/configuration.md).
# protocol = \"dialectic\" or \"deliberation\" runs the other protocols.
topic = \"Should cities ban private cars from their centres?\"
minirounds = 1
";

/// Debates on one page of the list.
pub const LIST_PAGE_SIZE: usize = 50;

/// What the list shows: the debates of one protocol and one status (any,
/// when `None`), page `page` (1-based) of them. Read from the page's
/// query string (`?protocol=dialectic&status=finished&page=2`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
pub struct ListQuery {
    /// Only debates of this protocol (`structured`, `dialectic`,
    /// `deliberation`).
    #[serde(default, deserialize_with = "empty_is_none")]
    pub protocol: Option<String>,
    /// Only debates with this status (`finished`, `running`, …).
    #[serde(default, deserialize_with = "empty_is_none")]
    pub status: Option<String>,
    /// The page, from 1.
    #[serde(default)]
    pub page: Option<usize>,
}

fn empty_is_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value: Option<String> = serde::Deserialize::deserialize(d)?;
    Ok(value.filter(|v| !v.trim().is_empty()))
}

impl ListQuery {
    /// Whether a debate of `protocol` and `status` is listed.
    pub fn matches(&self, protocol: &str, status: &str) -> bool {
        self.protocol.as_deref().is_none_or(|p| p == protocol)
            && self.status.as_deref().is_none_or(|s| s == status)
    }

    /// The page asked for, from 1.
    pub fn page(&self) -> usize {
        self.page.unwrap_or(1).max(1)
    }

    /// The range of the matching debates (newest first) its page shows.
    pub fn range(&self, matching: usize) -> std::ops::Range<usize> {
        let start = ((self.page() - 1) * LIST_PAGE_SIZE).min(matching);
        start..(start + LIST_PAGE_SIZE).min(matching)
    }

    /// The link to page `page` with the same filter.
    fn href(&self, page: usize) -> Html {
        let mut out = Html::literal("/?");
        if let Some(p) = &self.protocol {
            out.push(html!("protocol={}&amp;", Html::text(p)));
        }
        if let Some(s) = &self.status {
            out.push(html!("status={}&amp;", Html::text(s)));
        }
        out.push(html!("page={}", Html::number(page)));
        out
    }
}

/// The statuses a debate can have, as the list's filter offers them.
const STATUSES: [&str; 7] = [
    "created",
    "queued",
    "running",
    "interrupted",
    "finished",
    "budget",
    "failed",
];

/// The protocols, as the list's filter offers them.
const PROTOCOLS: [&str; 3] = ["structured", "dialectic", "deliberation"];

fn select(name: &'static str, options: &[&'static str], chosen: Option<&str>) -> Html {
    let mut out = html!(
        "<select name=\"{}\"><option value=\"\">any {}</option>",
        Html::literal(name),
        Html::literal(name)
    );
    for o in options {
        let selected = if chosen == Some(*o) { " selected" } else { "" };
        out.push(html!(
            "<option value=\"{}\"{}>{}</option>",
            Html::literal(o),
            Html::literal(selected),
            Html::literal(o)
        ));
    }
    out.push_literal("</select>");
    out
}

/// The page listing debates (`rows`: the page's rows of the `matching`
/// debates `query` picks out), with a filter, page links and a form to
/// start one.
pub fn list_page(
    rows: &[ListRow],
    query: &ListQuery,
    matching: usize,
    now: chrono::DateTime<chrono::Utc>,
) -> String {
    let mut body = html!(
        "<header><strong>Agon</strong> · debates</header><main style=\"display:block\"><section>\
         <form class=\"filters\" method=\"get\" action=\"/\">{}{}<button type=\"submit\">Filter</button></form>\
         <table><tr><th>debate</th><th>topic</th><th>protocol</th><th>status</th><th>messages</th><th>cost</th><th>age</th></tr>",
        select("protocol", &PROTOCOLS, query.protocol.as_deref()),
        select("status", &STATUSES, query.status.as_deref()),
    );
    for r in rows {
        let cost = r
            .cost_usd
            .map_or_else(|| Html::literal("—"), |c| html!("${}", Html::decimal(c, 4)));
        body.push(html!(
            "<tr><td class=\"id\"><a href=\"/debates/{}\">{}</a></td><td>{}</td><td>{}</td>\
             <td><span class=\"status\">{}</span></td><td>{}</td><td>{}</td>\
             <td title=\"{}\">{}</td></tr>",
            Html::text(&r.id),
            Html::text(&r.id),
            topic_html(&r.topic),
            Html::text(&r.protocol),
            Html::text(&r.status),
            Html::number(r.messages),
            cost,
            Html::text(&r.created.to_rfc3339()),
            Html::text(&age(r.created, now)),
        ));
    }
    if rows.is_empty() {
        let empty = if query.protocol.is_some() || query.status.is_some() {
            "No debate matches this filter."
        } else {
            "No debate yet: start one below."
        };
        body.push(html!(
            "<tr><td colspan=\"7\">{}</td></tr>",
            Html::literal(empty)
        ));
    }
    body.push_literal("</table>");
    let range = query.range(matching);
    let pages = matching.div_ceil(LIST_PAGE_SIZE).max(1);
    body.push(html!(
        "<p class=\"pages\"><span class=\"kind\" id=\"shown\">{}–{} of {}</span> ",
        Html::number(if matching == 0 { 0 } else { range.start + 1 }),
        Html::number(range.end),
        Html::number(matching)
    ));
    if query.page() > 1 {
        body.push(html!(
            "<a id=\"newer\" href=\"{}\">← newer</a>",
            query.href((query.page() - 1).min(pages))
        ));
    }
    if range.end < matching {
        body.push(html!(
            "<a id=\"older\" href=\"{}\">older →</a>",
            query.href(query.page() + 1)
        ));
    }
    body.push_literal("</p>");
    body.push(html!(
        "</section><section><h2>Start a debate</h2><form id=\"start-form\">\
         <textarea name=\"toml\" rows=\"8\" spellcheck=\"false\" style=\"font-family:monospace\">{}</textarea>\
         <button type=\"submit\">Start</button> <span class=\"kind\" id=\"start-status\"></span></form></section></main>",
        Html::text(START_TEMPLATE)
    ));
    page(
        "Agon: debates",
        Html::default(),
        body,
        Html::literal("<script src=\"/static/list.js\"></script>"),
    )
    .into_string()
}

/// The script of the debate list (served as `/static/list.js`): posts the
/// start form's configuration and opens the new debate's page.
pub const LIST_SCRIPT: &str = include_str!("../../assets/list.js");

fn name(board: &Blackboard, id: &PersonaId) -> Html {
    Html::text(board.persona_name(id))
}

fn message_html(board: &Blackboard, m: &DialogueMessage) -> Html {
    let what = match &m.kind {
        MessageKind::Critique { target } => html!("critique of {}", name(board, target)),
        k => Html::text(k.label()),
    };
    html!(
        "<div class=\"msg\" id=\"{}\"><span class=\"who\">{}</span> <span class=\"kind\">{} · round {}</span><div class=\"md\">{}</div></div>",
        Html::text(m.id.as_str()),
        name(board, &m.persona),
        what,
        Html::number(m.round),
        Html::markdown(m.content.trim()),
    )
}

fn note_html(note: &agon_core::ModeratorNote) -> Html {
    let by = note
        .author
        .as_deref()
        .map_or_else(Html::default, |a| html!(" ({})", Html::text(a)));
    html!(
        "<div class=\"note\"><span class=\"who\">Moderator{}: </span><span>{}</span></div>",
        by,
        Html::text(&note.text)
    )
}

/// ` hidden` when `hidden`.
fn hidden_if(hidden: bool) -> Html {
    Html::literal(if hidden { " hidden" } else { "" })
}

/// Steering a running debate: a note every agent's next context shows,
/// pause, resume and stop (hidden once the debate is finished).
fn steer_section(hidden: bool) -> Html {
    html!(
        "<section id=\"steer\"{}><h2>Steer</h2><form id=\"note-form\">\
         <textarea name=\"text\" rows=\"2\" maxlength=\"{}\" required placeholder=\"A note every agent sees from its next turn\"></textarea>\
         <input name=\"author\" maxlength=\"80\" placeholder=\"Your name (optional)\">\
         <button type=\"submit\">Post the note</button></form>\
         <p><button type=\"button\" id=\"pause\">Pause</button><button type=\"button\" id=\"resume\">Resume</button>\
         <button type=\"button\" id=\"stop\">Stop</button> <span class=\"kind\" id=\"steer-status\"></span></p></section>",
        hidden_if(hidden),
        Html::number(agon_core::MAX_NOTE_CHARS),
    )
}

/// Recording that a person overrode the outcome (the trust memory infers
/// regret from it); shown once the debate is finished.
fn override_section(hidden: bool) -> Html {
    html!(
        "<section id=\"override\"{}><h2>Override the outcome</h2><form id=\"override-form\">\
         <textarea name=\"decision\" rows=\"2\" required placeholder=\"What you decided instead\"></textarea>\
         <input name=\"agent\" placeholder=\"The one agent it concerns (default: every debater)\">\
         <button type=\"submit\">Record the override</button> <span class=\"kind\" id=\"override-status\"></span></form>\
         <p>Rate the outcome: <button type=\"button\" id=\"rate-up\">👍 up</button><button type=\"button\" id=\"rate-down\">👎 down</button> \
         <span class=\"kind\" id=\"rate-status\"></span></p></section>",
        hidden_if(hidden),
    )
}

/// Forking the debate before its last step (a new debate to note and run
/// on), shown whatever its state.
fn fork_section() -> Html {
    Html::literal(
        "<section id=\"fork-section\"><h2>Try again</h2>\
         <p><button type=\"button\" id=\"fork\">Fork before the last step</button> \
         <span class=\"kind\" id=\"fork-status\"></span></p></section>",
    )
}

/// The script of the debate page (served as `/static/debate.js`, so a
/// content security policy can forbid inline scripts): it follows the
/// stream, appends new messages as text nodes, shows who is speaking from
/// the tokens, and refetches the panels as events come.
pub const SCRIPT: &str = include_str!("../../assets/debate.js");

/// The page of one debate: its transcript (followed live), and its panels.
pub fn debate_page(view: &DebateView, id: &str, status: &str, last_seq: u64) -> String {
    let board = view.board();
    let topic = view.header().topic.as_deref().unwrap_or("");
    // Sorted by id, whatever serde_json's map keeps: the page is the same
    // in every build.
    let names: std::collections::BTreeMap<&str, &str> = board
        .personas()
        .iter()
        .map(|p| (p.id.as_str(), p.name.as_str()))
        .collect();
    let names = serde_json::to_string(&names).unwrap_or_else(|_| "{}".to_owned());
    let mut body = html!(
        "<header><a href=\"/\">Agon</a> · {} · <span class=\"status\" id=\"status\">{}</span><div class=\"title\" style=\"font-size:1.3em;font-weight:600;margin:.3em 0\">{}</div></header>\
         <main><div><section><h2>Transcript</h2><div id=\"transcript\">",
        Html::text(view.protocol().as_str()),
        Html::text(status),
        topic_html(topic),
    );
    let mut notes = board.notes().iter().peekable();
    for (i, m) in board.messages().iter().enumerate() {
        while let Some(n) = notes.next_if(|n| n.after_messages <= i) {
            body.push(note_html(n));
        }
        body.push(message_html(board, m));
    }
    for n in notes {
        body.push(note_html(n));
    }
    let finished = status == "finished";
    body.push(html!(
        "</div><p class=\"live\" id=\"live\"></p></section>\
         <section id=\"questions\" hidden><h2>Clarifying questions</h2><form id=\"answer-form\"></form></section>\
         {}{}{}</div><div id=\"panels\">{}</div></main>",
        steer_section(finished),
        override_section(!finished),
        fork_section(),
        panels::panels_html(view),
    ));
    let title = agon_extract::truncate_chars(
        topic
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or(""),
        TOPIC_LINE_CHARS,
    );
    // What the script needs: the debate, the last sequence the page
    // shows, the personas' names (escaped as attribute values).
    let attributes = html!(
        " data-debate=\"{}\" data-last=\"{}\" data-names=\"{}\"",
        Html::text(id),
        Html::number(last_seq),
        Html::text(&names)
    );
    page(
        &format!("Agon: {title}"),
        attributes,
        body,
        Html::literal("<script src=\"/static/debate.js\"></script>"),
    )
    .into_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use agon_core::DebateEvent;
    use agon_testkit::synthetic::small;

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
        assert_eq!(stance_graph(&view), None, "nothing recorded yet");
        let disagree = |persona: &str, with: &str| DebateEvent::DisagreementRecorded {
            persona: persona.into(),
            with: with.into(),
            on: "vans".into(),
            intensity: Intensity::Strong,
            round: 1,
            criteria: Vec::new(),
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
        let svg = stance_graph(&view).unwrap();
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
    fn the_panels_show_summaries_reactions_repairs_and_the_metrics() {
        let mut log = small::log();
        log.push(DebateEvent::SummaryRecorded {
            summary: agon_core::DebateSummary {
                scope: agon_core::SummaryScope::Rolling,
                span: agon_core::MessageSpan { start: 0, end: 2 },
                text: "Ada wants <b>fewer</b> cars.".into(),
                before_chars: 900,
                after_chars: 120,
                method: "rolling".into(),
                round: None,
                temperature_centi: None,
                latency_ms: None,
                tokens: None,
                model: None,
                time: small::t(4),
            },
        });
        log.push(DebateEvent::ProposalRecorded {
            proposal: agon_core::ProposalId::new("prop-1"),
            proposer: "ada".into(),
            content: "Close the centre on Sundays.".into(),
            time: small::t(5),
        });
        log.push(DebateEvent::ProposalReaction {
            proposal: agon_core::ProposalId::new("prop-1"),
            persona: "bo".into(),
            reaction: agon_core::Reaction::Oppose,
        });
        log.push(DebateEvent::UsageRecorded {
            role: "debater".into(),
            model: "m".into(),
            calls: 3,
            input_tokens: 100,
            output_tokens: 20,
            cached_input_tokens: 0,
            cache_write_tokens: 0,
            cost_micro_usd: Some(12_000),
            cost_without_cache_micro_usd: None,
        });
        // A provider that served 60 input tokens from its prompt cache.
        log.push(DebateEvent::UsageRecorded {
            role: "extractor".into(),
            model: "c".into(),
            calls: 1,
            input_tokens: 100,
            output_tokens: 10,
            cached_input_tokens: 60,
            cache_write_tokens: 0,
            cost_micro_usd: Some(3_000),
            cost_without_cache_micro_usd: Some(4_500),
        });
        log.push(DebateEvent::OutputRepaired {
            step: agon_core::StepId::MemorySetup,
            notes: vec!["dropped <i>junk</i>".into()],
        });
        let view = DebateView::from_log(&log, ReportOptions::default()).unwrap();
        let html = panels(&view);
        assert!(
            html.contains("messages 1–2 in 120 characters (from 900)"),
            "{html}"
        );
        assert!(html.contains("Ada wants &lt;b&gt;fewer&lt;/b&gt; cars."));
        assert!(
            html.contains("✚ prop-1 (Ada, active): Close the centre on Sundays. <span class=\"kind\">−Bo</span>"),
            "{html}"
        );
        assert!(
            html.contains("<h2>Repairs</h2>") && html.contains("dropped &lt;i&gt;junk&lt;/i&gt;")
        );
        assert!(html.contains("<h2>Debate quality</h2>"));
        // Usage and cost by role and model, as the report has it.
        assert!(
            html.contains(
                "<tr><td>debater</td><td>m</td><td>3 calls</td><td>100 in / 20 out tokens</td><td>$0.0120</td></tr>"
            ),
            "{html}"
        );
        assert!(html.contains("<tr><td>ledger coverage</td>"), "{html}");
        assert!(
            html.contains(
                "200 in (60 cached, $0.0015 saved by the prompt cache) / 30 out tokens · $0.0150"
            ),
            "{html}"
        );
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
        let created = chrono::DateTime::UNIX_EPOCH;
        let list = list_page(
            &[ListRow {
                id: "d1".into(),
                topic: "<i>t</i>".into(),
                protocol: "structured".into(),
                status: "finished".into(),
                messages: 2,
                cost_usd: Some(0.0123),
                created,
            }],
            &ListQuery::default(),
            1,
            created + chrono::Duration::minutes(3),
        );
        assert!(list.contains("<td>$0.0123</td>"), "{list}");
        assert!(list.contains(">3 min</td>"), "{list}");
        assert!(list.contains("<td class=\"id\"><a href=\"/debates/d1\">d1</a>"));
        assert!(list.contains("&lt;i&gt;t&lt;/i&gt;"));
        assert!(list.contains("1–1 of 1"), "{list}");
        assert!(!list.contains("id=\"older\""), "one page: {list}");
    }

    #[test]
    fn the_list_filters_and_pages_past_fifty() {
        let query = ListQuery {
            protocol: Some("dialectic".into()),
            status: Some("finished".into()),
            page: Some(2),
        };
        assert!(query.matches("dialectic", "finished"));
        assert!(!query.matches("structured", "finished"));
        assert!(!query.matches("dialectic", "running"));
        assert_eq!(query.range(120), 50..100);
        assert_eq!(query.range(60), 50..60);
        assert_eq!(query.range(10), 10..10, "a page past the end is empty");
        let list = list_page(&[], &query, 120, chrono::DateTime::UNIX_EPOCH);
        assert!(list.contains("51–100 of 120"), "{list}");
        assert!(
            list.contains("href=\"/?protocol=dialectic&amp;status=finished&amp;page=1\">← newer"),
            "{list}"
        );
        assert!(
            list.contains("href=\"/?protocol=dialectic&amp;status=finished&amp;page=3\">older →"),
            "{list}"
        );
        assert!(
            list.contains("<option value=\"dialectic\" selected>"),
            "{list}"
        );
        assert!(
            list.contains("<option value=\"finished\" selected>"),
            "{list}"
        );
        assert!(list.contains("No debate matches this filter."), "{list}");
        let parsed: ListQuery =
            serde_json::from_value(serde_json::json!({"protocol": "", "status": "running"}))
                .unwrap();
        assert_eq!(parsed.protocol, None, "an empty select is no filter");
        assert_eq!(parsed.page(), 1);
    }

    #[test]
    fn a_long_topic_is_clamped_to_a_line_with_the_whole_text_on_demand() {
        let problem = format!("Design a rate limiter\n\n{}", "Requirement. ".repeat(90));
        let html = topic_html(&problem).into_string();
        assert!(html.starts_with("<details class=\"topic\"><summary><span class=\"clamp\">Design a rate limiter</span>"), "{html}");
        assert!(
            html.contains("<div class=\"whole\">Design a rate limiter"),
            "{html}"
        );
        assert_eq!(
            topic_html("<b>Short</b>").as_str(),
            "<span class=\"clamp\">&lt;b&gt;Short&lt;/b&gt;</span>"
        );
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
        let list = list_page(&[], &ListQuery::default(), 0, chrono::DateTime::UNIX_EPOCH);
        assert!(list.contains("<form id=\"start-form\">"));
        assert!(list.contains("topic = &quot;Should cities ban private cars"));
        assert!(list.contains("<script src=\"/static/list.js\"></script>"));
        assert_eq!(list.matches("<script").count(), 1);
    }
}
