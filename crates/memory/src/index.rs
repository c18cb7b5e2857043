//! The seam to vector stores: [`MemoryIndex`].

use std::collections::{HashMap, HashSet};

use agon_core::{DebateId, PersonaId};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::MemoryError;
use crate::record::Superseded;
use crate::record::{
    Candidate, EmbeddingSpace, LexicalHit, MemoryFilter, MemoryMeta, MemoryRecord,
};

/// What recall shows about a debate a memory comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DebateInfo {
    /// The debate.
    pub debate: DebateId,
    /// Its topic.
    pub topic: String,
    /// When it started.
    pub started: DateTime<Utc>,
}

/// A store of memories with dense (cosine) and lexical (BM25) search.
///
/// A store is bound to one [`EmbeddingSpace`] (embedder model + dimension)
/// on first use; vectors of another space are refused, never mixed.
#[async_trait]
pub trait MemoryIndex: Send + Sync {
    /// `"embedded"` or `"pgvector"`.
    fn backend(&self) -> &'static str;

    /// The space the store is bound to, if any memory was ever stored.
    async fn space(&self) -> Result<Option<EmbeddingSpace>, MemoryError>;

    /// Binds an unbound store to `space`; fails with
    /// [`MemoryError::EmbedderMismatch`] when it is bound to another.
    async fn bind(&self, space: &EmbeddingSpace) -> Result<(), MemoryError>;

    /// Stores a batch (each record validated, its vector normalized; a bad
    /// record fails the batch with its id). Records whose id is already
    /// stored are skipped. Returns how many were new.
    async fn insert(&self, records: Vec<MemoryRecord>) -> Result<usize, MemoryError>;

    /// Which of `ids` are stored.
    async fn existing(&self, ids: &[String]) -> Result<HashSet<String>, MemoryError>;

    /// The `n` memories nearest to the unit vector `query` that pass
    /// `filter`, most similar first.
    async fn search(
        &self,
        query: &[f32],
        filter: &MemoryFilter,
        n: usize,
    ) -> Result<Vec<Candidate>, MemoryError>;

    /// The `n` best BM25 matches of `query` that pass `filter`.
    async fn lexical(
        &self,
        query: &str,
        filter: &MemoryFilter,
        n: usize,
    ) -> Result<Vec<LexicalHit>, MemoryError>;

    /// The memories `ids` (unknown ids skipped) with their similarity to `query`.
    async fn fetch(&self, ids: &[String], query: &[f32]) -> Result<Vec<Candidate>, MemoryError>;

    /// Number of memories passing `filter`.
    async fn count(&self, filter: &MemoryFilter) -> Result<usize, MemoryError>;

    /// Up to `limit` memories passing `filter`, ordered by (debate, time,
    /// id): a corpus listed source by source, chunk by chunk.
    async fn matching(
        &self,
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<MemoryMeta>, MemoryError>;

    /// The personas with memories passing `filter`, sorted (recall takes
    /// their names out of a query: [`crate::names`]).
    async fn personas(&self, filter: &MemoryFilter) -> Result<Vec<String>, MemoryError>;

    /// Up to `n` memories on each side of memory `id` in its debate, among
    /// those passing `filter`, ordered by time (then id), oldest first; `id`
    /// itself is left out. An unknown id has no neighbours.
    async fn neighbours(
        &self,
        id: &str,
        filter: &MemoryFilter,
        n: usize,
    ) -> Result<Vec<MemoryMeta>, MemoryError>;

    /// Topic and start of the given debates (unknown ones skipped), for the
    /// labels of cross-debate recall. The database backends read the event
    /// store's `debates` table (the memory lives in the store's database).
    async fn debates(&self, ids: &[DebateId]) -> Result<Vec<DebateInfo>, MemoryError>;

    /// Deletes every memory of `debate` (when the debate itself is
    /// deleted) in one transaction; returns how many there were. Other
    /// processes' in-process indexes see the change on their next search.
    async fn delete_debate(&self, debate: &DebateId) -> Result<usize, MemoryError>;

    /// Drops every vector and binds the store to `space` (first step of a
    /// reindex; memories stay, found by BM25 only until re-embedded).
    async fn reset_space(&self, space: &EmbeddingSpace) -> Result<(), MemoryError>;

    /// Up to `limit` memories without a vector.
    async fn unembedded(&self, limit: usize) -> Result<Vec<MemoryMeta>, MemoryError>;

    /// Sets the vectors of stored memories (normalized; NaN or zero vectors
    /// are refused with the memory's id).
    async fn set_embeddings(&self, items: Vec<(String, Vec<f32>)>) -> Result<(), MemoryError>;

    /// Every memory of `persona` on `subject` ([`crate::subject_key`]), in
    /// any order.
    async fn on_subject(
        &self,
        persona: &PersonaId,
        subject: &str,
    ) -> Result<Vec<MemoryMeta>, MemoryError>;

    /// Sets the validity of stored memories: closed by a later one
    /// (`Some`), or current (`None`). Unknown ids are skipped.
    async fn set_superseded(
        &self,
        items: Vec<(String, Option<Superseded>)>,
    ) -> Result<(), MemoryError>;

    /// The memories of `ids` that are closed, with what closed them
    /// (current and unknown ones are left out).
    async fn superseded(&self, ids: &[String]) -> Result<HashMap<String, Superseded>, MemoryError>;
}
