//! What a turn recalls from vector memory: the query for a persona's turn
//! in a phase (pure; the orchestrator runs the recall).

use agon_core::{Blackboard, PersonaId};

use crate::phase::Phase;

/// The recall query of a turn: what is discussed plus the message being
/// answered (the latest message of someone else in the turn's scope).
pub fn recall_query(bb: &Blackboard, persona: &PersonaId, phase: &Phase) -> Option<String> {
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
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let query = format!("{subject}\n{answered}");
    (!query.trim().is_empty()).then_some(query)
}
