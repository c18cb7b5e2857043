//! What a debate's turn reads from the vector memory: a persona's
//! memories labelled for its context (RELEVANT EARLIER CONTEXT), the
//! passages of its own corpus (EVIDENCE), and the check of the `[E:ID]`
//! citations in what it said (`evidence_cited`, appended with the message:
//! a resumed debate neither loses nor repeats it).

use std::collections::HashMap;

use agon_context::{EvidencePassage, RecallScope, RetrievedMemory, TurnRecall};
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
    let filter = turn_filter(debate, turn, cross_debate);
    let aliases = [(turn.persona.clone(), turn.aliases.clone())];
    memory
        .recall_ahead(&turn.query, &filter, memory.config().k, &aliases)
        .await
}

/// The memories a turn may recall: the persona's own, of this debate or
/// (`cross_debate`) of every debate; a long session's turn, every
/// participant's memories of this debate.
fn turn_filter(debate: &DebateId, turn: &TurnRecall, cross_debate: bool) -> MemoryFilter {
    match turn.scope {
        RecallScope::Own => MemoryFilter {
            persona: Some(turn.persona.clone()),
            debate: (!cross_debate).then(|| debate.clone()),
            ..MemoryFilter::default()
        },
        RecallScope::Session => MemoryFilter {
            debate: Some(debate.clone()),
            ..MemoryFilter::default()
        },
    }
}

/// Recalls the memories of `turn` and labels them: memories of this
/// debate by round, of earlier debates by topic and date, a long
/// session's by when and by whom; relative times in what was said
/// ("yesterday", "last month") carry the date they name
/// ([`crate::dates::annotated`]). The persona's other names (its display
/// name, a role agent's role) are taken out of the query as its id is. A
/// long session's turn ([`RecallScope::Session`]) keeps only the hits
/// that stand out ([`agon_context::session_recall_bar`]), so most of its
/// turns show none.
pub async fn recall_labelled(
    memory: &Memory,
    debate: &DebateId,
    turn: &TurnRecall,
    cross_debate: bool,
) -> Result<Vec<RetrievedMemory>, MemoryError> {
    let filter = turn_filter(debate, turn, cross_debate);
    let aliases = [(turn.persona.clone(), turn.aliases.clone())];
    // A long session's turn searches by meaning only when the words of
    // its query single out a few memories (a BM25 search, no embedding):
    // most of its turns pay nothing.
    if turn.scope == RecallScope::Session {
        let hits = memory
            .index()
            .lexical(&turn.query, &filter, agon_context::SESSION_CANDIDATES)
            .await?;
        let scores: Vec<f32> = hits.iter().map(|h| h.score).collect();
        if !agon_context::session_words_stand_out(&scores) {
            return Ok(Vec::new());
        }
    }
    let k = memory.config().k;
    let recall = match turn.scope {
        RecallScope::Own => {
            memory
                .recall_aliased(&turn.query, &filter, k, &aliases)
                .await?
        }
        RecallScope::Session => {
            // The session's background for the query: its best matches,
            // of which the `k` best that stand out are kept.
            let mut recall = memory
                .recall_aliased(
                    &turn.query,
                    &filter,
                    agon_context::SESSION_CANDIDATES.max(k),
                    &aliases,
                )
                .await?;
            let similarities: Vec<f32> = recall.memories.iter().map(|h| h.similarity).collect();
            let bar = agon_context::session_recall_bar(&similarities);
            recall.memories.retain(|hit| hit.similarity >= bar);
            recall.memories.truncate(k);
            recall
        }
    };
    // Each hit, then the memories around it (`Recall::expanded`): the
    // context assembler cuts from the end when its share runs out.
    let recalled = recall.expanded();
    // A memory that no longer holds is shown with what replaced it.
    let successors: HashMap<&str, &crate::Successor> = recall
        .memories
        .iter()
        .filter_map(|hit| Some((hit.memory.id.as_str(), hit.successor.as_ref()?)))
        .collect();
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
                MemoryKind::Message if m.persona != turn.persona => "said",
                MemoryKind::Message => "you said",
                MemoryKind::Position => "your position",
                MemoryKind::Reflection => "reflection",
                MemoryKind::CruxCard => "crux card",
                MemoryKind::Corpus => "your source",
            };
            let label = if &m.debate != debate {
                match infos.get(&m.debate) {
                    Some(i) => format!(
                        "earlier debate \"{}\", {}, {kind}",
                        i.topic,
                        i.started.format("%Y-%m-%d")
                    ),
                    None => format!("earlier debate {}, {kind}", m.debate),
                }
            } else if turn.scope == RecallScope::Session {
                // A long session's turns have no rounds: when it was said
                // (the text names who said it).
                format!(
                    "earlier, {} UTC, {kind}",
                    m.created.format("%Y-%m-%d %H:%M")
                )
            } else {
                format!("round {}, {kind}", m.round)
            };
            // Relative times ("last Friday") resolved against the day the
            // memory was said (a turn's filter names no kinds, so no corpus
            // chunk, whose time is when it was read, comes back here).
            let said = crate::dates::annotated(&m.content, m.created.date_naive());
            let content = match successors.get(m.id.as_str()) {
                Some(successor) => format!("{said} [{}]", successor.note()),
                None => said.into_owned(),
            };
            RetrievedMemory { label, content }
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
