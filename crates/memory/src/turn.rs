//! What a debate's turn reads from the vector memory: a persona's
//! memories labelled for its context (RELEVANT EARLIER CONTEXT), the
//! passages of its own corpus (EVIDENCE), and the check of the `[E:ID]`
//! citations in what it said (`evidence_cited`, appended with the message:
//! a resumed debate neither loses nor repeats it).

use std::collections::HashMap;

use agon_context::{EvidencePassage, RetrievedMemory, TurnRecall};
use agon_core::evidence::{CitedEvidence, cited_ids};
use agon_core::{DebateEvent, DebateId, DialogueMessage, PersonaId};

use crate::{DebateInfo, Memory, MemoryError, MemoryFilter, MemoryKind};

/// Recalls for a coming turn ahead of it (the filter, `k` and names
/// [`recall_labelled`] will use), so that the turn finds its result kept
/// ([`Memory::recall_ahead`]): called while the turn before it waits on its
/// model.
pub async fn recall_turn_ahead(
    memory: &Memory,
    debate: &DebateId,
    turn: &TurnRecall,
    cross_debate: bool,
) -> Result<(), MemoryError> {
    let filter = turn_filter(debate, &turn.persona, cross_debate);
    let aliases = [(turn.persona.clone(), turn.aliases.clone())];
    memory
        .recall_ahead(&turn.query, &filter, memory.config().k, &aliases)
        .await
}

/// The memories a turn of `persona` may recall: its own, of this debate
/// or (`cross_debate`) of every debate.
fn turn_filter(debate: &DebateId, persona: &PersonaId, cross_debate: bool) -> MemoryFilter {
    MemoryFilter {
        persona: Some(persona.clone()),
        debate: (!cross_debate).then(|| debate.clone()),
        ..MemoryFilter::default()
    }
}

/// Recalls `persona`'s memories for `query` and labels them: memories of
/// this debate by round, of earlier debates by topic and date. `aliases`
/// are the persona's other names (its display name, a role agent's
/// role), taken out of the query as its id is.
pub async fn recall_labelled(
    memory: &Memory,
    debate: &DebateId,
    persona: &PersonaId,
    aliases: Vec<String>,
    query: &str,
    cross_debate: bool,
) -> Result<Vec<RetrievedMemory>, MemoryError> {
    let filter = turn_filter(debate, persona, cross_debate);
    let aliases = [(persona.clone(), aliases)];
    let recall = memory
        .recall_aliased(query, &filter, memory.config().k, &aliases)
        .await?;
    // Each hit, then the memories around it (`Recall::expanded`): the
    // context assembler cuts from the end when its share runs out.
    let recalled = recall.expanded();
    let others: Vec<DebateId> = recalled
        .iter()
        .map(|m| m.debate.clone())
        .filter(|d| d != debate)
        .collect();
    let infos: HashMap<DebateId, DebateInfo> = if others.is_empty() {
        HashMap::new()
    } else {
        memory
            .debate_infos(&others)
            .await?
            .into_iter()
            .map(|i| (i.debate.clone(), i))
            .collect()
    };
    Ok(recalled
        .into_iter()
        .map(|m| {
            let kind = match m.kind {
                MemoryKind::Message => "you said",
                MemoryKind::Position => "your position",
                MemoryKind::Reflection => "reflection",
                MemoryKind::CruxCard => "crux card",
                MemoryKind::Corpus => "your source",
            };
            let label = if &m.debate == debate {
                format!("round {}, {kind}", m.round)
            } else {
                match infos.get(&m.debate) {
                    Some(i) => format!(
                        "earlier debate \"{}\", {}, {kind}",
                        i.topic,
                        i.started.format("%Y-%m-%d")
                    ),
                    None => format!("earlier debate {}, {kind}", m.debate),
                }
            };
            RetrievedMemory {
                label,
                content: m.content.clone(),
            }
        })
        .collect())
}

/// Passages shown under EVIDENCE in a turn (most relevant first).
pub const EVIDENCE_PASSAGES: usize = 3;

/// The passages of `persona`'s corpus for a turn about `query` (none
/// without a corpus).
pub async fn evidence_passages(
    memory: &Memory,
    persona: &PersonaId,
    query: &str,
) -> Result<Vec<EvidencePassage>, MemoryError> {
    Ok(memory
        .evidence(persona, query, EVIDENCE_PASSAGES)
        .await?
        .into_iter()
        .map(|e| EvidencePassage {
            id: e.hash,
            source: e.file,
            content: e.content,
        })
        .collect())
}

/// What the check found of a message's citations.
pub struct Citations {
    persona: PersonaId,
    cited: Vec<CitedEvidence>,
    rejected: Vec<String>,
}

impl Citations {
    /// The `evidence_cited` event of `message`.
    pub fn event(&self, message: &DialogueMessage) -> DebateEvent {
        DebateEvent::EvidenceCited {
            message: message.id.clone(),
            persona: self.persona.clone(),
            cited: self.cited.clone(),
            rejected: self.rejected.clone(),
        }
    }
}

/// Checks the `[E:ID]` citations of `text` against `persona`'s corpus:
/// `None` when it cites nothing. Without memory (`--no-memory`) no corpus
/// can be read, so every citation is rejected; a failed lookup records
/// nothing (the message itself is kept) and is logged.
pub async fn check_citations(
    memory: Option<&Memory>,
    persona: &PersonaId,
    text: &str,
) -> Option<Citations> {
    let ids = cited_ids(text);
    if ids.is_empty() {
        return None;
    }
    let found = match memory {
        Some(memory) => match memory.corpus_chunks(persona, &ids).await {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(%persona, error = %e, "checking citations failed");
                return None;
            }
        },
        None => Vec::new(),
    };
    let mut cited = Vec::new();
    let mut rejected = Vec::new();
    for id in ids {
        match found.iter().find(|e| e.hash == id) {
            Some(e) => cited.push(CitedEvidence {
                id,
                source: e.file.clone(),
                passage: e.content.clone(),
            }),
            None => rejected.push(id),
        }
    }
    Some(Citations {
        persona: persona.clone(),
        cited,
        rejected,
    })
}
