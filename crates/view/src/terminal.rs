//! The terminal's formats of a debate (`agon show`, the solution a
//! dialectic run prints): plain text, read in a shell, of the same view the
//! reports and the page lay out.

use agon_core::Blackboard;

use crate::DebateView;

/// The solution as plain text (what `agon dialectic` prints and writes to
/// `--output`): the judge's solution with its lists and confidence, else a
/// structured debate's synthesis; `None` before either.
pub fn solution_text(view: &DebateView) -> Option<String> {
    if let Some(s) = &view.sections().solution {
        let mut text = s.description.trim().to_owned();
        for (title, items) in &s.lists {
            text.push_str(&format!("\n\n{title}:\n"));
            for item in items {
                text.push_str(&format!("- {item}\n"));
            }
        }
        if let Some(c) = s.confidence {
            text.push_str(&format!("\n\nConfidence: {c}/100"));
        }
        return Some(text.trim_end().to_owned() + "\n");
    }
    view.board()
        .messages()
        .iter()
        .rev()
        .find(|m| m.kind == agon_core::MessageKind::Synthesis)
        .map(|m| m.content.trim().to_owned() + "\n")
}

/// The transcript as `agon show` prints it: each message with its id,
/// speaker, kind, aspect, miniround and room, then its text.
pub fn transcript(bb: &Blackboard) -> String {
    let mut out = String::new();
    for m in bb.messages() {
        let mut tag = m.kind.label().to_owned();
        if let Some(a) = m.aspect.as_ref().and_then(|a| bb.aspect(a)) {
            tag.push_str(&format!(" · {}", a.label));
        }
        if let Some(mr) = m.miniround {
            tag.push_str(&format!(" · miniround {mr}"));
        }
        if let Some(room) = &m.crux_room {
            tag.push_str(&format!(" · {room}"));
        }
        out.push_str(&format!(
            "[{}] {} ({tag}):\n{}\n\n",
            m.id,
            bb.persona_name(&m.persona),
            m.content.trim()
        ));
    }
    out
}

/// The blackboard in brief, as `agon show --blackboard` prints it: the
/// topic, each debater's stance and counts, the claims, the crux cards,
/// the reflections, and how many round records and warnings there are.
pub fn board_summary(view: &DebateView) -> String {
    let sections = view.sections();
    let mut out = format!(
        "{}\n\nPOSITIONS\n",
        view.header().topic.as_deref().unwrap_or("")
    );
    for row in &sections.ledger {
        out.push_str(&format!(
            "- {}: {}\n  concessions: {}, shifts: {}, agreements: {}, disagreements: {}\n",
            row.persona,
            if row.end.is_empty() {
                "(none recorded)"
            } else {
                &row.end
            },
            row.concessions.len(),
            row.shifts.len(),
            row.agreements.len(),
            row.disagreements.len()
        ));
    }
    out.push_str("\nCLAIMS\n");
    for c in &sections.claims {
        out.push_str(&format!(
            "- {} [{}] {} vs {}: {}\n",
            c.id, c.status, c.between[0], c.between[1], c.claim
        ));
    }
    out.push_str("\nCRUX CARDS\n");
    for c in &sections.crux_cards {
        out.push_str(&format!("- {}: {} ({})\n", c.id, c.question, c.kind));
    }
    out.push_str("\nREFLECTIONS\n");
    for r in &sections.reflections {
        out.push_str(&format!("- [{}] {}\n", r.importance, r.content));
    }
    out.push_str(&format!(
        "\nROUND RECORDS: {}  WARNINGS: {}\n",
        sections.round_records.len(),
        sections.warnings.len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transcript_and_the_summary_show_the_debate() {
        let view = DebateView::from_log(
            &agon_testkit::synthetic::small::log(),
            crate::ReportOptions::default(),
        )
        .unwrap();
        let text = transcript(view.board());
        assert!(text.contains("Cars kill 40 people a year here."), "{text}");
        assert!(
            text.starts_with("[m1] Ada (take · Safety · miniround 0):\n"),
            "{text}"
        );
        let summary = board_summary(&view);
        assert!(summary.contains("POSITIONS\n"), "{summary}");
        assert!(summary.contains("\nCLAIMS\n"), "{summary}");
    }
}
