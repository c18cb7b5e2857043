//! What a memory is: [`MemoryRecord`], its [`MemoryKind`], the
//! [`MemoryFilter`] of a search and the [`EmbeddingSpace`] a store is bound to.

use std::fmt;
use std::str::FromStr;

use agon_core::{DebateId, PersonaId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::MemoryError;
pub use crate::space::EmbeddingSpace;

/// What kind of thing a memory remembers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    /// A high-importance message (importance ≥ 7).
    Message,
    /// A snapshot of a persona's position after it changed.
    Position,
    /// A reflection about the persona.
    Reflection,
    /// A crux card the persona was a party to.
    CruxCard,
    /// A chunk of the persona's own corpus (its essays, posts, papers):
    /// evidence it argues from, not something said in a debate. Searches
    /// whose filter names no kinds never return it (see
    /// [`MemoryFilter::kinds`]); its `debate` is the corpus source
    /// ([`crate::corpus::source_id`]) and its `round` the chunk's position.
    Corpus,
}

impl MemoryKind {
    /// Every kind a debate remembers, in a fixed order (what a filter
    /// without kinds searches).
    pub const ALL: [MemoryKind; 4] = [
        MemoryKind::Message,
        MemoryKind::Position,
        MemoryKind::Reflection,
        MemoryKind::CruxCard,
    ];

    /// Whether the kind is a corpus chunk (searched only when asked for).
    pub fn is_corpus(self) -> bool {
        self == Self::Corpus
    }

    /// The stored name (`message`, `position`, `reflection`, `crux_card`,
    /// `corpus`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Message => "message",
            Self::Position => "position",
            Self::Reflection => "reflection",
            Self::CruxCard => "crux_card",
            Self::Corpus => "corpus",
        }
    }

    /// A small integer code, used by the in-process index.
    pub(crate) fn code(self) -> u8 {
        match self {
            Self::Message => 0,
            Self::Position => 1,
            Self::Reflection => 2,
            Self::CruxCard => 3,
            Self::Corpus => 4,
        }
    }
}

impl fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MemoryKind {
    type Err = MemoryError;

    fn from_str(s: &str) -> Result<Self, MemoryError> {
        Self::ALL
            .into_iter()
            .chain([Self::Corpus])
            .find(|k| k.as_str() == s)
            .ok_or_else(|| MemoryError::Invalid {
                what: "memory kind".into(),
                reason: format!(
                    "unknown kind {s:?} (expected message, position, reflection, crux_card or corpus)"
                ),
            })
    }
}

/// One remembered item of one persona, with its embedding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecord {
    /// Unique, deterministic id (`DEBATE/KIND/…`), so re-harvesting a debate
    /// after a resume inserts nothing twice.
    pub id: String,
    /// The debate it comes from.
    pub debate: DebateId,
    /// Whose memory it is.
    pub persona: PersonaId,
    /// The remembered text.
    pub content: String,
    /// What it is.
    pub kind: MemoryKind,
    /// 1-10 (Generative Agents' poignancy scale).
    pub importance: u8,
    /// Round of the debate it comes from (0 = openings).
    pub round: u32,
    /// When it happened.
    pub created: DateTime<Utc>,
    /// What it records a persona holding a stance on ([`crate::subject_key`]
    /// of a topic or an aspect), when it does: a later memory of the same
    /// persona on the same subject supersedes it ([`crate::validity`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Its vector (unit length for cosine search).
    pub embedding: Vec<f32>,
}

/// When and by what a memory stopped holding ([`crate::validity`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Superseded {
    /// The id of the memory that replaced it.
    pub by: String,
    /// When it stopped holding (the replacing memory's time).
    pub until: DateTime<Utc>,
}

/// A memory without its vector: what searches return, and (as
/// [`MemoryDraft`](crate::MemoryDraft)) what the harvester produces before
/// embedding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryMeta {
    /// Unique id.
    pub id: String,
    /// The debate it comes from.
    pub debate: DebateId,
    /// Whose memory it is.
    pub persona: PersonaId,
    /// The remembered text.
    pub content: String,
    /// What it is.
    pub kind: MemoryKind,
    /// 1-10.
    pub importance: u8,
    /// Round of the debate.
    pub round: u32,
    /// When it happened.
    pub created: DateTime<Utc>,
    /// What it records a persona holding a stance on, when it does
    /// ([`crate::validity`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

impl MemoryMeta {
    /// The record, with its vector.
    pub fn into_record(self, embedding: Vec<f32>) -> MemoryRecord {
        MemoryRecord {
            id: self.id,
            debate: self.debate,
            persona: self.persona,
            content: self.content,
            kind: self.kind,
            importance: self.importance,
            round: self.round,
            created: self.created,
            subject: self.subject,
            embedding,
        }
    }
}

/// Checks a batch before a backend stores it: the store must be bound to an
/// embedding space (`space`), and every record must validate against it
/// (vectors normalized in place). Returns the space.
pub(crate) fn prepare_batch<'a>(
    space: Option<&'a EmbeddingSpace>,
    records: &mut [MemoryRecord],
) -> Result<&'a EmbeddingSpace, MemoryError> {
    let space = space.ok_or_else(|| MemoryError::Invalid {
        what: "memory insert".into(),
        reason: "the store is bound to no embedder yet (call bind first)".into(),
    })?;
    for r in records.iter_mut() {
        r.validate(space)?;
    }
    Ok(space)
}

impl MemoryRecord {
    /// The record without its vector.
    pub fn meta(&self) -> MemoryMeta {
        MemoryMeta {
            id: self.id.clone(),
            debate: self.debate.clone(),
            persona: self.persona.clone(),
            content: self.content.clone(),
            kind: self.kind,
            importance: self.importance,
            round: self.round,
            created: self.created,
            subject: self.subject.clone(),
        }
    }

    /// Checks the record before it is stored: non-empty id and content,
    /// importance 1-10, the space's dimension, finite non-zero vector.
    /// The vector is normalized to unit length in place.
    pub fn validate(&mut self, space: &EmbeddingSpace) -> Result<(), MemoryError> {
        let bad = |reason: String| MemoryError::BadRecord {
            id: self.id.clone(),
            reason,
        };
        if self.id.trim().is_empty() {
            return Err(bad("the id is empty".into()));
        }
        if self.content.trim().is_empty() {
            return Err(bad("the content is empty".into()));
        }
        if !(1..=10).contains(&self.importance) {
            return Err(bad(format!(
                "importance {} is outside 1-10",
                self.importance
            )));
        }
        space.prepare(&self.id, &mut self.embedding)
    }
}

/// Scales `v` to unit length; rejects NaN, infinite and zero vectors.
pub fn normalize(v: &mut [f32]) -> Result<(), String> {
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(format!("embedding component {i} is {} (not finite)", v[i]));
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return Err("embedding is the zero vector".into());
    }
    v.iter_mut().for_each(|x| *x /= norm);
    Ok(())
}

/// Which memories a search may return. Empty fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryFilter {
    /// Only this persona's memories.
    pub persona: Option<PersonaId>,
    /// Only memories of this debate.
    pub debate: Option<DebateId>,
    /// Only these kinds (empty = every kind a debate remembers,
    /// [`MemoryKind::ALL`]: corpus chunks only when named).
    pub kinds: Vec<MemoryKind>,
    /// Never memories of this debate (cross-debate recall).
    pub exclude_debate: Option<DebateId>,
}

impl MemoryFilter {
    /// Only `persona`'s memories.
    pub fn persona(persona: impl Into<PersonaId>) -> Self {
        Self {
            persona: Some(persona.into()),
            ..Self::default()
        }
    }

    /// Whether `meta` passes the filter.
    pub fn accepts(&self, persona: &str, debate: &str, kind: MemoryKind) -> bool {
        self.persona.as_ref().is_none_or(|p| p.as_str() == persona)
            && self.debate.as_ref().is_none_or(|d| d.as_str() == debate)
            && self
                .exclude_debate
                .as_ref()
                .is_none_or(|d| d.as_str() != debate)
            && if self.kinds.is_empty() {
                !kind.is_corpus()
            } else {
                self.kinds.contains(&kind)
            }
    }

    /// Only `persona`'s corpus chunks.
    pub fn corpus(persona: impl Into<PersonaId>) -> Self {
        Self {
            persona: Some(persona.into()),
            kinds: vec![MemoryKind::Corpus],
            ..Self::default()
        }
    }
}

impl EmbeddingSpace {
    /// Checks a vector for memory `id` (this space's dimension, finite,
    /// non-zero) and normalizes it to unit length in place.
    pub fn prepare(&self, id: &str, v: &mut [f32]) -> Result<(), MemoryError> {
        let bad = |reason: String| MemoryError::BadRecord {
            id: id.to_owned(),
            reason,
        };
        if v.len() != self.dimensions {
            return Err(bad(format!(
                "embedding has {} dimensions, the store's embedder {} has {}",
                v.len(),
                self.model,
                self.dimensions
            )));
        }
        normalize(v).map_err(bad)
    }

    /// Fails with [`MemoryError::EmbedderMismatch`] unless `other` is this space.
    pub fn check(&self, other: &EmbeddingSpace) -> Result<(), MemoryError> {
        if self == other {
            Ok(())
        } else {
            Err(MemoryError::EmbedderMismatch {
                stored: self.clone(),
                given: other.clone(),
            })
        }
    }
}

/// A candidate of a search: the memory and how it matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The memory.
    pub memory: MemoryMeta,
    /// Cosine similarity to the query vector.
    pub similarity: f32,
}

/// A lexical (BM25) hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LexicalHit {
    /// The memory's id.
    pub id: String,
    /// Its BM25 score for the query.
    pub score: f32,
}
