//! The blackboard's lookup tables: derived from its data, never stored.

use std::collections::{HashMap, HashSet};

use super::BlackboardData;
use crate::ids::{AspectId, ClaimId, CruxRoomId, MessageId, PersonaId, ProposalId};
use crate::message::DialogueMessage;
use crate::persona::{DebateAspect, Persona};

/// Lookup tables derived from [`BlackboardData`]; rebuilt after deserialization.
#[derive(Debug, Clone, Default)]
pub(super) struct Index {
    pub(super) personas: HashMap<PersonaId, usize>,
    pub(super) aspects: HashMap<AspectId, usize>,
    pub(super) messages: HashMap<MessageId, usize>,
    pub(super) messages_by_aspect: HashMap<AspectId, Vec<usize>>,
    pub(super) messages_by_room: HashMap<CruxRoomId, Vec<usize>>,
    pub(super) claims: HashMap<ClaimId, usize>,
    pub(super) rooms: HashMap<CruxRoomId, usize>,
    pub(super) proposals: HashMap<ProposalId, usize>,
    pub(super) reflections: HashSet<String>,
    pub(super) cards: HashSet<String>,
    pub(super) decisions: HashSet<String>,
    pub(super) analyzed: HashSet<MessageId>,
}

impl Index {
    pub(super) fn build(data: &BlackboardData) -> Self {
        let mut index = Self::default();
        index.index_frame(&data.personas, &data.aspects);
        for (i, message) in data.messages.iter().enumerate() {
            index.index_message(i, message);
        }
        for (i, claim) in data.claims.iter().enumerate() {
            index.claims.insert(claim.id.clone(), i);
            if let Some(room) = &claim.crux_room {
                index.rooms.insert(room.clone(), i);
            }
        }
        for (i, proposal) in data.proposals.iter().enumerate() {
            index.proposals.insert(proposal.id.clone(), i);
        }
        index.reflections = data.reflections.iter().map(|r| r.id.to_string()).collect();
        index.cards = data.crux_cards.iter().map(|c| c.id.to_string()).collect();
        index.decisions = data.decisions.iter().map(|d| d.id.to_string()).collect();
        index.analyzed = data.analyzed.iter().map(|a| a.message.clone()).collect();
        index
    }

    pub(super) fn index_frame(&mut self, personas: &[Persona], aspects: &[DebateAspect]) {
        self.personas = personas
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id.clone(), i))
            .collect();
        self.aspects = aspects
            .iter()
            .enumerate()
            .map(|(i, a)| (a.id.clone(), i))
            .collect();
    }

    pub(super) fn index_message(&mut self, position: usize, message: &DialogueMessage) {
        self.messages.insert(message.id.clone(), position);
        if let Some(aspect) = &message.aspect {
            self.messages_by_aspect
                .entry(aspect.clone())
                .or_default()
                .push(position);
        }
        if let Some(room) = &message.crux_room {
            self.messages_by_room
                .entry(room.clone())
                .or_default()
                .push(position);
        }
    }
}
