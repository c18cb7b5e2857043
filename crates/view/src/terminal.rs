//! The terminal's formats of a debate (`agon show`): plain text, read in
//! a shell, of the same blackboard the reports and the page read.

use agon_core::Blackboard;

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
pub fn board_summary(bb: &Blackboard) -> String {
    let mut out = format!(
        "{}\n\nPOSITIONS\n",
        bb.topic().map_or("", |t| t.question.as_str())
    );
    for p in bb.debaters() {
        if let Some(s) = bb.position(&p.id) {
            out.push_str(&format!(
                "- {}: {}\n  concessions: {}, shifts: {}, agreements: {}, disagreements: {}\n",
                p.name,
                if s.overall_stance.is_empty() {
                    "(none recorded)"
                } else {
                    &s.overall_stance
                },
                s.concessions.len(),
                s.shifts.len(),
                s.agreements.len(),
                s.disagreements.len()
            ));
        }
    }
    out.push_str("\nCLAIMS\n");
    for c in bb.claims() {
        out.push_str(&format!(
            "- {} [{}] {} vs {}: {}\n",
            c.id,
            c.status.label(),
            bb.persona_name(&c.personas[0]),
            bb.persona_name(&c.personas[1]),
            c.claim
        ));
    }
    out.push_str("\nCRUX CARDS\n");
    for c in bb.crux_cards() {
        out.push_str(&format!(
            "- {}: {} ({})\n",
            c.id,
            c.question,
            c.disagreement_type.label()
        ));
    }
    out.push_str("\nREFLECTIONS\n");
    for r in bb.reflections() {
        out.push_str(&format!("- [{}] {}\n", r.importance, r.content));
    }
    out.push_str(&format!(
        "\nROUND RECORDS: {}  WARNINGS: {}\n",
        bb.rounds().len(),
        bb.warnings().len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transcript_and_the_summary_show_the_debate() {
        let bb = Blackboard::replay(&agon_testkit::synthetic::small::log()).unwrap();
        let text = transcript(&bb);
        assert!(text.contains("Cars kill 40 people a year here."), "{text}");
        assert!(
            text.starts_with("[m1] Ada (take · Safety · miniround 0):\n"),
            "{text}"
        );
        let summary = board_summary(&bb);
        assert!(summary.contains("POSITIONS\n"), "{summary}");
        assert!(summary.contains("\nCLAIMS\n"), "{summary}");
    }
}
