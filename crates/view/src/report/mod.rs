//! The markdown report of a debate, a pure function of its blackboard:
//! the protocol's own body (structured: personas, aspects, crux rooms,
//! closings, synthesis; dialectic: agents, clarifications, rounds of
//! proposals, critiques and refinements, summaries, the solution), then
//! what every debate has (the position ledger and claims when there are
//! any, warnings, repairs, usage and cost).

mod deliberation;
mod dialectic;
mod metrics;

pub use deliberation::stats_markdown;

pub use metrics::{compare_markdown, metrics_markdown};

use std::fmt::Write as _;

use agon_core::{Blackboard, DialogueMessage, MessageKind};

pub use crate::empty::{EmptySections, ReportOptions, empty_sections};
pub use crate::json::json;
pub(crate) use crate::json::json_of;
use crate::sections::{CacheEffect, Header, InRound, Relation, Sections, StepRow, Usage};

/// The line naming the rubric the debate was judged by (empty without
/// one), as the reports print it.
pub(crate) fn rubric_line(header: &Header) -> String {
    header.rubric.as_ref().map_or_else(String::new, |r| {
        format!(
            "Judged by rubric `{}` v{}: {}.\n\n",
            r.name, r.version, r.criteria
        )
    })
}

/// The line under the title: "Debate `ID`{kind}, started …, status: …"
/// with a person's rating when there is one; empty before the debate
/// started.
pub(crate) fn status_line(header: &Header, kind: &str) -> String {
    let Some(id) = &header.debate else {
        return String::new();
    };
    let started = header.started_at.map_or_else(String::new, |t| {
        format!(", started {}", t.format("%Y-%m-%d %H:%M UTC"))
    });
    let feedback = match header.feedback {
        Some(1) => ", user feedback: up (+1)",
        Some(_) => ", user feedback: down (-1)",
        None => "",
    };
    format!(
        "Debate `{id}`{kind}{started}, status: {:?}{feedback}.\n\n",
        header.status
    )
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
    quoted(s, &m.content);
    s.push('\n');
}

/// Writes `text` (a model's or a person's) as a Markdown block quote: every
/// line begins with `>`, so none of it can open a heading, a list or a
/// section of the report.
pub(crate) fn quoted(s: &mut String, text: &str) {
    for line in text.trim().lines() {
        let line = line.trim_end();
        if line.is_empty() {
            s.push_str(">\n");
        } else {
            let _ = writeln!(s, "> {line}");
        }
    }
}

/// The report with every `<` written as `&lt;`. The report's own Markdown
/// writes no HTML, so escaping the whole of it escapes exactly the text
/// models and people wrote, and no site that quotes them can forget to:
/// no viewer that renders HTML in Markdown runs what a model wrote.
fn without_html(report: String) -> String {
    if report.contains('<') {
        report.replace('<', "&lt;")
    } else {
        report
    }
}

/// The budget stop, when the debate reached a limit: which, where it
/// stood, what the wrap-up wrote and what was skipped.
fn budget(s: &mut String, bb: &Blackboard) {
    let Some(stop) = bb.budget_stop() else {
        return;
    };
    let after: Vec<&DialogueMessage> = bb
        .messages()
        .iter()
        .filter(|m| m.time >= stop.time)
        .collect();
    let wrap_up = if let Some(sol) = bb.solutions().iter().find(|s| s.time >= stop.time) {
        format!("the judge's solution of round {}", sol.round)
    } else if after.iter().any(|m| m.kind == MessageKind::Synthesis) {
        "the judge's synthesis".to_owned()
    } else if bb.budget_exhausted().is_some() {
        "nothing (its calls were refused: the limit was spent)".to_owned()
    } else {
        "nothing (the protocol has no judge step left to run)".to_owned()
    };
    let _ = writeln!(
        s,
        "## Stopped at its budget

{}. The wrap-up wrote {wrap_up}; everything the \
         protocol had planned after that point was skipped (no further rounds, takes, \
         closings or turns, and no analysis of messages not analysed by then).\n",
        stop.describe()
    );
    if let Some((refused, spent)) = bb.budget_exhausted() {
        let _ = writeln!(
            s,
            "The limit itself was reached ({}): the call of `{refused}` was refused, \
             and no model was called after it.\n",
            spent.describe()
        );
    }
}

/// Renders the report with the default options.
pub fn markdown(bb: &Blackboard) -> String {
    markdown_with(bb, ReportOptions::default())
}

/// Renders the report: the protocol's body, then the position ledger
/// (start → end stance, concessions, shifts), claims and crux cards,
/// reflections, warnings, repairs, usage and cost.
pub fn markdown_with(bb: &Blackboard, options: ReportOptions) -> String {
    render(bb, &Header::of(bb), &Sections::of(bb, options), options)
}

/// The report of `bb` from its computed header and sections.
pub(crate) fn render(
    bb: &Blackboard,
    header: &Header,
    sections: &Sections,
    options: ReportOptions,
) -> String {
    use agon_core::ProtocolKind;
    let mut s = match header.protocol {
        ProtocolKind::Dialectic => dialectic::body(bb, header, sections, options),
        ProtocolKind::Deliberation => deliberation::body(bb, header, sections, options),
        ProtocolKind::Structured => structured_body(bb, header, sections),
    };
    if header.protocol == ProtocolKind::Structured
        || !bb.analyzed_turns().is_empty()
        || !sections.claims.is_empty()
    {
        ledger_and_claims(&mut s, bb, sections);
    }
    tail(&mut s, bb, sections);
    without_html(s)
}

fn structured_body(bb: &Blackboard, header: &Header, sections: &Sections) -> String {
    let empty = &sections.empty;
    let mut s = String::new();
    let topic = header.topic.as_deref().unwrap_or("(not started)");
    let _ = writeln!(s, "# {topic}\n");
    s.push_str(&status_line(header, ""));
    if let Some(ctx) = &header.context {
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
    s.push_str(&rubric_line(header));

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
        if let Some(r) = sections
            .round_records
            .iter()
            .find(|r| r.aspect == aspect.label)
        {
            let _ = writeln!(s, "**Round record.** {}\n", one_line(&r.summary));
            for take in &r.takes {
                let _ = write!(s, "- {}: {}", take.persona, one_line(&take.position));
                if !take.key_argument.is_empty() {
                    let _ = write!(s, " — {}", one_line(&take.key_argument));
                }
                if !take.evidence.is_empty() {
                    let _ = write!(s, " (evidence: {})", take.evidence.join("; "));
                }
                s.push('\n');
            }
            s.push('\n');
        }
    }

    for (title, kind, why) in [
        ("Closings", MessageKind::Closing, &empty.closings),
        ("Synthesis", MessageKind::Synthesis, &empty.synthesis),
    ] {
        let msgs: Vec<&DialogueMessage> = bb.messages().iter().filter(|m| m.kind == kind).collect();
        let _ = writeln!(s, "## {title}\n");
        for m in &msgs {
            quote_block(&mut s, bb, m);
        }
        if let Some(why) = why {
            let _ = writeln!(s, "_{}_\n", capitalized(why));
        }
    }
    s
}

/// `text` with its first letter in upper case.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn ledger_and_claims(s: &mut String, bb: &Blackboard, sections: &Sections) {
    let empty = &sections.empty;
    s.push_str("## Position ledger\n\n");
    if let Some(why) = &empty.ledger {
        let _ = writeln!(s, "_{}_\n", capitalized(why));
    }
    s.push_str("| Persona | Start stance | End stance | Concessions | Shifts | Agreements | Disagreements |\n|---|---|---|---|---|---|---|\n");
    let list = |items: Vec<String>| {
        if items.is_empty() {
            "—".to_owned()
        } else {
            cell(&items.join("; "))
        }
    };
    let dated = |items: &[InRound]| {
        list(
            items
                .iter()
                .map(|n| format!("r{}: {}", n.round, n.text))
                .collect(),
        )
    };
    let related = |items: &[Relation]| {
        list(
            items
                .iter()
                .map(|r| format!("{} on {}", r.with, r.on))
                .collect(),
        )
    };
    for row in &sections.ledger {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            row.persona,
            cell(&row.start),
            cell(&row.end),
            dated(&row.concessions),
            dated(&row.shifts),
            related(&row.agreements),
            related(&row.disagreements),
        );
    }
    s.push('\n');

    s.push_str("## Contested claims and crux cards\n\n");
    if sections.claims.is_empty() {
        s.push_str("No claim was contested strongly enough to open.\n\n");
    } else if let Some(why) = &empty.crux_cards {
        let _ = writeln!(s, "_{}_\n", capitalized(why));
    }
    for c in &sections.claims {
        let _ = writeln!(
            s,
            "### {} — {} vs {} ({})\n\n\"{}\"\n",
            c.id,
            c.between[0],
            c.between[1],
            c.status,
            one_line(&c.claim)
        );
        if let Some(room) = &c.room {
            let _ = writeln!(s, "Crux room `{room}`:\n");
            for &i in &c.room_messages {
                quote_block(s, bb, &bb.messages()[i]);
            }
        }
        if let Some(res) = &c.outcome {
            let _ = writeln!(s, "Outcome: {}\n", one_line(res));
        }
    }
    for card in &sections.crux_cards {
        let _ = writeln!(
            s,
            "**Crux card {}** — {} _({} disagreement, {})_\n",
            card.id,
            one_line(&card.question),
            card.kind,
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
                p.persona,
                p.stance,
                one_line(&p.reasoning),
                one_line(&p.falsifier)
            );
        }
        let _ = writeln!(s, "\nDiagnosis: {}\n", one_line(&card.diagnosis));
    }

    if let Some(why) = &empty.reflections {
        let _ = writeln!(s, "## Reflections\n\n_{}_\n", capitalized(why));
    }
    if !sections.reflections.is_empty() {
        s.push_str("## Reflections\n\n");
        for r in &sections.reflections {
            let _ = writeln!(
                s,
                "- ({}, importance {}, round {}) {}",
                r.kind,
                r.importance,
                r.round,
                one_line(&r.content)
            );
        }
        s.push('\n');
    }
}

/// Each persona's sources as cited (`[E:ID]`, the file, the passage), and
/// the citations that named no chunk of its corpus.
fn sources_cited(s: &mut String, sections: &Sections) {
    if sections.sources.is_empty() {
        return;
    }
    s.push_str("## Sources cited\n\n");
    for row in &sections.sources {
        let _ = writeln!(s, "### {}\n", row.persona);
        for (id, source, passage) in &row.cited {
            let _ = writeln!(
                s,
                "- `[E:{id}]` {}: \"{}\"",
                one_line(source),
                one_line(passage)
            );
        }
        if !row.rejected.is_empty() {
            let ids: Vec<String> = row
                .rejected
                .iter()
                .map(|id| format!("`[E:{id}]`"))
                .collect();
            let _ = writeln!(
                s,
                "- Rejected (no such chunk in {}'s corpus): {}",
                row.persona,
                ids.join(", ")
            );
        }
        s.push('\n');
    }
}

/// Every tool call: who, in which turn, the tool and its arguments, and
/// what it returned (its first line) or why it failed.
fn tool_calls(s: &mut String, sections: &Sections) {
    if sections.tool_calls.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "## Tool calls\n\n{} call(s) by the agents while they contributed.\n",
        sections.tool_calls.len()
    );
    for c in &sections.tool_calls {
        let _ = writeln!(
            s,
            "- {} ({}): `{}({})` {} {}",
            c.persona,
            c.turn,
            c.tool,
            c.arguments,
            if c.ok { "→" } else { "failed:" },
            one_line(&c.result)
        );
    }
    s.push('\n');
}

fn step_rows(s: &mut String, rows: &[StepRow]) {
    for r in rows {
        let _ = writeln!(s, "- {} {}: {}", r.step, r.subject, one_line(&r.text));
    }
    s.push('\n');
}

fn tail(s: &mut String, bb: &Blackboard, sections: &Sections) {
    budget(s, bb);
    tool_calls(s, sections);
    sources_cited(s, sections);
    if !sections.notes.is_empty() {
        s.push_str("## Moderator notes\n\nShown to every agent from the next context on.\n\n");
        for n in &sections.notes {
            let by = n
                .author
                .as_deref()
                .map_or_else(String::new, |a| format!(" — {}", one_line(a)));
            let _ = writeln!(
                s,
                "- after message {}: {}{by}",
                n.after_messages,
                one_line(&n.text)
            );
        }
        s.push('\n');
    }
    if !sections.warnings.is_empty() {
        let _ = writeln!(
            s,
            "## Warnings\n\n{} optional step(s) failed; the debate continued.\n",
            sections.warnings.len()
        );
        step_rows(s, &sections.warnings);
    }
    if !sections.repairs.is_empty() {
        let notes: usize = sections.repairs.iter().map(|r| r.notes).sum();
        let _ = writeln!(
            s,
            "## Repairs\n\nValidation repaired {} model output(s) ({notes} note(s)) before they were recorded.\n",
            sections.repairs.len()
        );
        step_rows(s, &sections.repairs);
    }
    usage(s, &sections.usage);
}

fn usage(s: &mut String, usage: &Usage) {
    let total = &usage.total;
    // The prompt-cache columns appear once a provider reported cache use.
    let cached = usage.cached();
    let cache_cells = |u: &agon_core::UsageTotals| {
        if cached {
            format!(" {} | {} |", u.cached_input_tokens, u.cache_write_tokens)
        } else {
            String::new()
        }
    };
    s.push_str(if cached {
        "## Usage and cost\n\n| Role | Model | Calls | Input tokens | Output tokens | Cached input | Cache writes | Cost |\n|---|---|---|---|---|---|---|---|\n"
    } else {
        "## Usage and cost\n\n| Role | Model | Calls | Input tokens | Output tokens | Cost |\n|---|---|---|---|---|---|\n"
    });
    for row in &usage.rows {
        let u = &row.totals;
        let cost = if u.unpriced && u.cost_micro_usd == 0 {
            "unpriced".to_owned()
        } else {
            format!("${:.4}", u.cost_micro_usd as f64 / 1e6)
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |{} {cost} |",
            row.role,
            row.model,
            u.calls,
            u.input_tokens,
            u.output_tokens,
            cache_cells(u)
        );
    }
    let _ = writeln!(
        s,
        "| **total** | | {} | {} | {} |{} ${:.4}{} |",
        total.calls,
        total.input_tokens,
        total.output_tokens,
        cache_cells(total),
        total.cost_micro_usd as f64 / 1e6,
        if total.unpriced {
            " + unpriced (local) calls"
        } else {
            ""
        }
    );
    if cached {
        let effect = match usage.cache_effect() {
            CacheEffect::Saved { usd, share } => format!(
                "; the cache saved ${usd:.4} against the same input uncached, {:.0} % of the cost",
                100.0 * share
            ),
            CacheEffect::WritesCostMore { usd } => {
                format!("; cache writes cost ${usd:.4} more than the reads saved")
            }
            CacheEffect::None => String::new(),
        };
        let _ = writeln!(
            s,
            "\nInput tokens include the cached ones; cached input and cache writes are priced at the provider's cache rates ({:.0} % of the input was read from a prompt cache{effect}).",
            100.0 * total.cached_input_tokens as f64 / total.input_tokens.max(1) as f64
        );
    }
    s.push_str(&usage_split(usage));
}

/// One line splitting the input tokens by what they were for: the
/// utterances, the memory (analyses; round records and reflections) and the
/// rest, with the memory's cost as a multiple of the utterances'.
fn usage_split(usage: &Usage) -> String {
    let [utterances, analysis, records, other] = usage.by_purpose;
    if utterances + analysis + records + other == 0 {
        return String::new();
    }
    let ratio = if utterances == 0 {
        String::new()
    } else {
        format!(
            "; memory ÷ utterances {:.2}×",
            (analysis + records) as f64 / utterances as f64
        )
    };
    format!(
        "\nInput tokens by purpose: utterances {utterances} · analyses {analysis} · round records and reflections {records} · crux rooms, judge and summaries {other}{ratio} (embeddings run on the local embedder and are not metered).\n"
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use agon_core::{DebateEvent, Persona, PersonaRole, Topic};

    fn started(judge: bool) -> Blackboard {
        let mut personas = vec![
            Persona::debater("ada", "Ada", "For.", "plain"),
            Persona::debater("bo", "Bo", "Against.", "plain"),
        ];
        if judge {
            personas.push(Persona {
                role: PersonaRole::Judge,
                ..Persona::debater("judge", "Judge", "Impartial.", "measured")
            });
        }
        let mut bb = Blackboard::new();
        bb.apply(&DebateEvent::DebateStarted {
            debate: "d-1".into(),
            topic: Topic::new("Should we tax sugar?"),
            aspects: vec![],
            personas,
            time: chrono::DateTime::UNIX_EPOCH,
            protocol: None,
        })
        .unwrap();
        bb
    }

    #[test]
    fn the_usage_section_splits_input_tokens_by_purpose() {
        let mut bb = started(false);
        for (role, input) in [
            ("debater", 1_000),
            ("extractor", 500),
            ("reflector", 250),
            ("crux", 100),
        ] {
            bb.apply(&DebateEvent::UsageRecorded {
                role: role.into(),
                model: "m".into(),
                calls: 1,
                input_tokens: input,
                output_tokens: 10,
                cached_input_tokens: 0,
                cache_write_tokens: 0,
                cost_micro_usd: None,
                cost_without_cache_micro_usd: None,
            })
            .unwrap();
        }
        let md = markdown_with(&bb, ReportOptions::default());
        assert!(
            md.contains("Input tokens by purpose: utterances 1000 · analyses 500 · round records and reflections 250 · crux rooms, judge and summaries 100; memory ÷ utterances 0.75×"),
            "{md}"
        );
    }

    #[test]
    fn empty_sections_say_why_and_the_report_shows_them() {
        let bb = started(false);
        let options = ReportOptions {
            reflection_threshold: Some(15),
            ..ReportOptions::default()
        };
        let why = empty_sections(&bb, options);
        assert_eq!(
            why.reflections.as_deref().unwrap(),
            "no reflection: the trigger reached 0 of 15 (disagreements ×3, concessions ×4, shifts ×5; it fires above 15)"
        );
        assert_eq!(
            why.synthesis.as_deref().unwrap(),
            "no synthesis: synthesis is off for this debate"
        );
        assert_eq!(
            why.closings.as_deref().unwrap(),
            "no closing: not reached yet (the debate is running)"
        );
        assert_eq!(
            why.crux_cards.as_deref().unwrap(),
            "no crux card: no claim was contested strongly enough to open"
        );
        let md = markdown_with(&bb, options);
        assert!(
            md.contains("## Reflections\n\n_No reflection: the trigger reached 0 of 15"),
            "{md}"
        );
        assert!(md.contains("## Synthesis\n\n_No synthesis"), "{md}");
        let json = json(&bb, options);
        assert_eq!(
            json["empty_sections"]["synthesis"],
            why.synthesis.as_deref().unwrap()
        );
        assert_eq!(json["protocol"], "structured");
        // With a judge, a missing synthesis is one not reached yet.
        let with_judge = empty_sections(&started(true), options);
        assert!(with_judge.synthesis.unwrap().contains("not reached yet"));
    }

    #[test]
    fn moderator_notes_are_listed_where_they_were_posted() {
        let mut bb = started(false);
        bb.apply(&DebateEvent::NoteAdded {
            text: "Weigh the\nadministration cost.".into(),
            author: Some("Chair".into()),
            time: chrono::DateTime::UNIX_EPOCH,
        })
        .unwrap();
        let md = markdown(&bb);
        assert!(
            md.contains("## Moderator notes\n\nShown to every agent from the next context on.\n\n- after message 0: Weigh the administration cost. — Chair\n"),
            "{md}"
        );
        let json = json(&bb, ReportOptions::default());
        assert_eq!(json["moderator_notes"][0]["author"], "Chair");
        assert_eq!(json["paused"], false);
    }
}
