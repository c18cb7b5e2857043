//! A persona's corpus (seed 000, phase 5): its essays, posts and papers,
//! cut into chunks ([`chunk`]), embedded and stored beside the debate
//! memories as [`MemoryKind::Corpus`] records, and searched for evidence
//! while the persona speaks ([`Memory::evidence`]).
//!
//! A chunk's id is `corpus/PERSONA/HASH`: HASH (8 hex digits of the
//! SHA-256 of the persona and the chunk's text) is what a persona cites
//! (`[E:HASH]`), so adding the same file twice adds nothing. Its `debate`
//! is its source ([`source_id`]: `corpus/PERSONA/FILE`), its `round` its
//! position in the file, and its time the time it was added plus its
//! position in milliseconds (so a chunk's neighbours are the chunks around
//! it in its file).

mod chunk;

use std::collections::BTreeMap;

use agon_core::{DebateId, PersonaId};
use agon_llm::InputType;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use chunk::{CorpusChunk, CorpusFormat, MAX_CHUNK_WORDS, OVERLAP_WORDS, chunk};

use crate::error::MemoryError;
use crate::memory::Memory;
use crate::names::split_names_as;
use crate::record::{MemoryFilter, MemoryKind, MemoryMeta};
use crate::score::{RetrievalConfig, ScoredMemory};

/// Importance of every corpus chunk (evidence is ranked by relevance alone).
pub const CHUNK_IMPORTANCE: u8 = 5;

/// Share of BM25 in an evidence search's relevance (the rest is cosine
/// similarity). Lower than recall's 0.3: a corpus holds near-duplicates
/// that share every word but a number or a place, which BM25 ranks too
/// high for a question asked in other words (`cargo xtask bench evidence`:
/// recall@5 0.93 at 0.2, 0.85 at 0.3, 0.96 at 0; recall@1 0.56, 0.59, 0.44).
pub const EVIDENCE_LEXICAL_SHARE: f32 = 0.2;

/// Most chunks a listing or a citation check reads.
const MAX_LISTED: usize = 100_000;

/// The prefix of every corpus chunk's id and source.
const PREFIX: &str = "corpus/";

/// The source id of `file` in `persona`'s corpus (`corpus/PERSONA/FILE`).
pub fn source_id(persona: &PersonaId, file: &str) -> DebateId {
    DebateId::new(format!("{PREFIX}{persona}/{file}"))
}

/// The file name of a source id (what follows `corpus/PERSONA/`).
pub fn source_file<'a>(persona: &PersonaId, source: &'a DebateId) -> &'a str {
    let prefix = format!("{PREFIX}{persona}/");
    source
        .as_str()
        .strip_prefix(&prefix)
        .unwrap_or(source.as_str())
}

/// The citable id of a chunk of `persona` with `content`: 8 hex digits.
pub fn chunk_hash(persona: &PersonaId, content: &str) -> String {
    let digest = Sha256::new()
        .chain_update(persona.as_str().as_bytes())
        .chain_update([0u8])
        .chain_update(content.as_bytes())
        .finalize();
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

/// The memory id of `persona`'s chunk `hash`.
pub fn chunk_memory_id(persona: &PersonaId, hash: &str) -> String {
    format!("{PREFIX}{persona}/{hash}")
}

/// The citable hash of a corpus chunk's memory id (its last segment).
pub fn hash_of(memory_id: &str) -> &str {
    memory_id.rsplit('/').next().unwrap_or(memory_id)
}

/// The records to store for `chunks` of `file` in `persona`'s corpus, added
/// at `added`. A chunk repeated within the file is kept once.
pub fn drafts(
    persona: &PersonaId,
    file: &str,
    chunks: &[CorpusChunk],
    added: DateTime<Utc>,
) -> Vec<MemoryMeta> {
    let source = source_id(persona, file);
    let mut seen = std::collections::HashSet::new();
    chunks
        .iter()
        .filter_map(|c| {
            let content = c.content();
            let hash = chunk_hash(persona, &content);
            seen.insert(hash.clone()).then(|| MemoryMeta {
                id: chunk_memory_id(persona, &hash),
                debate: source.clone(),
                persona: persona.clone(),
                content,
                kind: MemoryKind::Corpus,
                importance: CHUNK_IMPORTANCE,
                round: c.position,
                created: added + chrono::Duration::milliseconds(i64::from(c.position)),
                subject: None,
            })
        })
        .collect()
}

/// One source of a persona's corpus, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CorpusSource {
    /// Whose corpus.
    pub persona: PersonaId,
    /// The file name it was added as.
    pub file: String,
    /// Its chunks.
    pub chunks: usize,
    /// When it was added.
    pub added: DateTime<Utc>,
}

/// A chunk found as evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The citable hash (`[E:HASH]`).
    pub hash: String,
    /// The file it comes from.
    pub file: String,
    /// Its position in the file.
    pub position: u32,
    /// The passage.
    pub content: String,
    /// Relevance to the query, 0-1 (min-max over the candidates).
    pub relevance: f32,
}

impl Evidence {
    fn of(meta: &MemoryMeta, relevance: f32) -> Self {
        Self {
            hash: hash_of(&meta.id).to_owned(),
            file: source_file(&meta.persona, &meta.debate).to_owned(),
            position: meta.round,
            content: meta.content.clone(),
            relevance,
        }
    }
}

impl Memory {
    /// Adds `chunks` of `file` to `persona`'s corpus (embedded in batches);
    /// returns how many chunks were new (0 when the file was added before).
    pub async fn add_corpus(
        &self,
        persona: &PersonaId,
        file: &str,
        chunks: &[CorpusChunk],
        added: DateTime<Utc>,
    ) -> Result<usize, MemoryError> {
        if file.trim().is_empty() || file.contains('/') {
            return Err(MemoryError::Invalid {
                what: format!("corpus source {file:?} of {persona}"),
                reason: "a source is named by its file name (no `/`)".into(),
            });
        }
        self.remember(drafts(persona, file, chunks, added)).await
    }

    /// The sources of `persona`'s corpus (every persona's when `None`),
    /// by persona and file.
    pub async fn corpus_sources(
        &self,
        persona: Option<&PersonaId>,
    ) -> Result<Vec<CorpusSource>, MemoryError> {
        let filter = MemoryFilter {
            persona: persona.cloned(),
            kinds: vec![MemoryKind::Corpus],
            ..MemoryFilter::default()
        };
        let mut by_source: BTreeMap<(String, String), CorpusSource> = BTreeMap::new();
        for m in self.index().matching(&filter, MAX_LISTED).await? {
            let file = source_file(&m.persona, &m.debate).to_owned();
            let entry = by_source
                .entry((m.persona.to_string(), file.clone()))
                .or_insert_with(|| CorpusSource {
                    persona: m.persona.clone(),
                    file,
                    chunks: 0,
                    added: m.created,
                });
            entry.chunks += 1;
            entry.added = entry.added.min(m.created);
        }
        Ok(by_source.into_values().collect())
    }

    /// Whether `persona` has a corpus.
    pub async fn has_corpus(&self, persona: &PersonaId) -> Result<bool, MemoryError> {
        Ok(self
            .index()
            .count(&MemoryFilter::corpus(persona.clone()))
            .await?
            > 0)
    }

    /// Removes `file` from `persona`'s corpus; returns how many chunks it had.
    pub async fn remove_corpus(
        &self,
        persona: &PersonaId,
        file: &str,
    ) -> Result<usize, MemoryError> {
        let removed = self.index().delete_debate(&source_id(persona, file)).await;
        self.wrote();
        removed
    }

    /// `persona`'s chunks among `hashes` (unknown ones left out): what a
    /// citation is checked against.
    pub async fn corpus_chunks(
        &self,
        persona: &PersonaId,
        hashes: &[String],
    ) -> Result<Vec<Evidence>, MemoryError> {
        if hashes.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = hashes.iter().map(|h| chunk_memory_id(persona, h)).collect();
        // Any unit vector of the space: the similarity is not used.
        let mut probe = vec![0.0; self.space().dimensions];
        if let Some(first) = probe.first_mut() {
            *first = 1.0;
        }
        Ok(self
            .index()
            .fetch(&ids, &probe)
            .await?
            .iter()
            .filter(|c| c.memory.kind == MemoryKind::Corpus && &c.memory.persona == persona)
            .map(|c| Evidence::of(&c.memory, 0.0))
            .collect())
    }

    /// The `k` chunks of `persona`'s corpus most relevant to `query`: BM25
    /// and dense rankings fused, ranked by relevance alone
    /// ([`EVIDENCE_LEXICAL_SHARE`] BM25; no recency, no importance: a
    /// corpus is not a memory of the debate). Empty when the persona has no
    /// corpus.
    pub async fn evidence(
        &self,
        persona: &PersonaId,
        query: &str,
        k: usize,
    ) -> Result<Vec<Evidence>, MemoryError> {
        let query = query.trim();
        if query.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let filter = MemoryFilter::corpus(persona.clone());
        if !self.has_corpus_kept(persona).await? {
            return Ok(Vec::new());
        }
        let named = split_names_as(query, &[], &[]);
        let mut qv = self
            .embed(std::slice::from_ref(&named.dense), InputType::Query)
            .await?
            .pop()
            .unwrap_or_default();
        crate::record::normalize(&mut qv).map_err(|reason| MemoryError::Invalid {
            what: format!("evidence query embedding from {}", self.space().model),
            reason,
        })?;
        let config = RetrievalConfig {
            k,
            candidates: self.config().candidates.max(k),
            recency_weight: 0.0,
            importance_weight: 0.0,
            speaker_weight: 0.0,
            relevance_weight: 1.0,
            lexical_share: EVIDENCE_LEXICAL_SHARE,
            neighbours: 0,
            ..*self.config()
        };
        let scored: Vec<ScoredMemory> = self.score(&named, &qv, &filter, &config).await?;
        Ok(scored
            .iter()
            .take(k)
            .map(|s| Evidence::of(&s.memory, s.relevance))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_short_stable_and_per_persona() {
        let mara = PersonaId::new("mara");
        let h = chunk_hash(&mara, "NO2 fell by a third.");
        assert_eq!(h.len(), 8);
        assert_eq!(h, chunk_hash(&mara, "NO2 fell by a third."));
        assert_ne!(
            h,
            chunk_hash(&PersonaId::new("theo"), "NO2 fell by a third.")
        );
        let id = chunk_memory_id(&mara, &h);
        assert_eq!(hash_of(&id), h);
        let src = source_id(&mara, "essays.md");
        assert_eq!(source_file(&mara, &src), "essays.md");
    }

    #[test]
    fn drafts_keep_a_repeated_chunk_once_in_file_order() {
        let mara = PersonaId::new("mara");
        let posts = "{\"text\": \"One.\"}\n{\"text\": \"Two.\"}\n{\"text\": \"One.\"}\n";
        let chunks = chunk(posts, CorpusFormat::JsonLines, "a.jsonl").unwrap();
        assert_eq!(chunks.len(), 3);
        let at = DateTime::<Utc>::from_timestamp(1_700_000_000, 0).unwrap();
        let d = drafts(&mara, "a.jsonl", &chunks, at);
        assert_eq!(d.len(), 2);
        assert!(d.iter().all(|m| m.kind == MemoryKind::Corpus));
        assert!(d[0].created < d[1].created);
        assert_eq!(d[1].round, 1);
    }
}
