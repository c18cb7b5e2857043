//! Evidence from a persona's own corpus: the passages a turn's context
//! shows (EVIDENCE), and the check of the `[E:ID]` citations in what the
//! persona said against its corpus (`evidence_cited`, appended with the
//! message: a resumed debate neither loses nor repeats it).

use agon_context::EvidencePassage;
use agon_core::evidence::{CitedEvidence, cited_ids};
use agon_core::{DebateEvent, DialogueMessage, PersonaId};
use agon_memory::{Memory, MemoryError};

/// Passages shown under EVIDENCE in a turn (most relevant first).
pub(crate) const EVIDENCE_PASSAGES: usize = 3;

/// The passages of `persona`'s corpus for a turn about `query` (none
/// without a corpus).
pub(crate) async fn passages(
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
pub(crate) struct Citations {
    persona: PersonaId,
    cited: Vec<CitedEvidence>,
    rejected: Vec<String>,
}

impl Citations {
    /// The `evidence_cited` event of `message`.
    pub(crate) fn event(&self, message: &DialogueMessage) -> DebateEvent {
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
pub(crate) async fn check(
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
