//! What a turn recalls from vector memory: the query for a persona's turn
//! in a phase (pure; the orchestrator runs the recall).

use agon_core::{Blackboard, PersonaId};

use crate::phase::Phase;

/// The recall query of a turn: what is discussed plus the message being
/// answered (the latest message of someone else in the turn's scope),
/// with its speaker's name (`NAME: MESSAGE`), so memories that mention that
/// persona match.
pub fn recall_query(bb: &Blackboard, persona: &PersonaId, phase: &Phase) -> Option<String> {
    // A phase whose view has no RELEVANT EARLIER CONTEXT section (a
    // deliberation turn, a listening bid, the judge's phases) would pay
    // for an embedding and a search and drop the result.
    let shows_memories = phase
        .shares()
        .iter()
        .any(|(kind, _)| *kind == crate::section::SectionKind::RelevantEarlierContext);
    if !shows_memories {
        return None;
    }
    let (subject, scope): (String, Vec<usize>) = match phase {
        Phase::Opening => return None,
        Phase::Take { aspect, .. } => (
            bb.aspect(aspect)
                .map(|a| format!("{}: {}", a.label, a.description))
                .unwrap_or_default(),
            bb.message_indices_for_aspect(aspect).to_vec(),
        ),
        Phase::CruxEntry { claim } => (
            bb.claim(claim).map(|c| c.claim.clone()).unwrap_or_default(),
            Vec::new(),
        ),
        Phase::CruxExchange { room } => (
            bb.claim_for_room(room)
                .map(|c| c.claim.clone())
                .unwrap_or_default(),
            bb.message_indices_for_room(room).to_vec(),
        ),
        _ => (
            bb.topic().map(|t| t.question.clone()).unwrap_or_default(),
            (0..bb.messages().len()).collect(),
        ),
    };
    let answered = scope
        .iter()
        .rev()
        .map(|&i| &bb.messages()[i])
        .find(|m| &m.persona != persona)
        .map(|m| {
            let speaker = bb
                .persona(&m.persona)
                .map_or(m.persona.as_str(), |p| p.name.as_str());
            format!("{speaker}: {}", m.content)
        })
        .unwrap_or_default();
    let query = format!("{subject}\n{answered}");
    (!query.trim().is_empty()).then_some(query)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agon_core::AspectId;

    #[test]
    fn the_query_names_the_speaker_of_the_message_answered() {
        let mut bb = Blackboard::new();
        for event in agon_core::synthetic::debate(3, 4) {
            bb.apply(&event).unwrap();
        }
        let me = PersonaId::new("p0");
        let phase = Phase::Take {
            aspect: AspectId::new("horizon"),
            miniround: 1,
        };
        let query = recall_query(&bb, &me, &phase).unwrap();
        let answered = bb
            .message_indices_for_aspect(&AspectId::new("horizon"))
            .iter()
            .rev()
            .map(|&i| &bb.messages()[i])
            .find(|m| m.persona != me)
            .unwrap();
        let name = &bb.persona(&answered.persona).unwrap().name;
        assert!(query.starts_with("HORIZON: "), "{query}");
        assert!(
            query.ends_with(&format!("\n{name}: {}", answered.content)),
            "{query}"
        );
        assert_eq!(recall_query(&bb, &me, &Phase::Opening), None);
    }

    #[test]
    fn phases_that_show_no_memories_ask_for_none() {
        let mut bb = Blackboard::new();
        for event in agon_core::synthetic::debate(3, 4) {
            bb.apply(&event).unwrap();
        }
        let me = PersonaId::new("p0");
        for phase in [
            Phase::Deliberate { turn: 4 },
            Phase::Listen { turn: 4 },
            Phase::PerspectiveSummary,
        ] {
            assert_eq!(recall_query(&bb, &me, &phase), None, "{}", phase.label());
        }
        assert!(recall_query(&bb, &me, &Phase::Closing).is_some());
    }
}
