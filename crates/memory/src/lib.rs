//! Agon's vector memory.
//!
//! - **What is remembered** ([`Harvester`]): position snapshots when a
//!   persona's position changes, reflections, crux cards, and messages of
//!   importance ≥ 7, as [`MemoryDraft`]s with deterministic ids.
//! - **Validity** ([`validity`]): a memory of what a persona holds names its
//!   subject; a later one on the same subject closes it (`superseded_by`),
//!   and recall shows current memories first, a superseded one only with
//!   its successor.
//! - **Indexes** ([`MemoryIndex`]): PostgreSQL + pgvector with HNSW
//!   ([`PgMemory`]); the embedded SQLite store with exact search in process
//!   ([`SqliteMemory`] over [`ExactIndex`]); and [`InMemoryIndex`].
//! - **Retrieval** ([`Memory::recall`]): persona names taken out of the
//!   query ([`names`]), BM25 and dense cosine rankings fused by reciprocal
//!   rank into N candidates, scored
//!   `0.5·recency + 3.0·relevance + 2.0·importance + 0.25·speaker`
//!   (relevance = `0.7·cos + 0.3·bm25`, min-max normalized; recency halves
//!   every week), top K returned ([`RetrievalConfig`]), each with its neighbouring
//!   memories as context.
//! - **Corpus** ([`corpus`]): a persona's own sources, chunked on their
//!   structure, stored as [`MemoryKind::Corpus`] records (never returned
//!   unless asked for), searched by relevance for EVIDENCE.
//! - **Harness** (module `locomo`, feature `locomo`): evidence recall on LoCoMo-format data.
//!
//! Remember and recall without the rest of Agon (an in-memory index and a
//! toy embedder here; `agon_memory::open("sqlite:agon.db")` or a
//! `postgres://` URL for a stored index, and any [`agon_llm::Embedder`]:
//! the local MiniLM through `"local".parse::<agon_llm::EmbedderSpec>()`,
//! Voyage, OpenAI-compatible):
//!
//! ```
//! use std::sync::Arc;
//! use agon_core::{DebateId, PersonaId};
//! use agon_memory::{InMemoryIndex, Memory, MemoryFilter, MemoryKind, MemoryMeta, RetrievalConfig};
//!
//! /// A toy embedder: how often each letter occurs.
//! struct Letters;
//! #[async_trait::async_trait]
//! impl agon_llm::Embedder for Letters {
//!     async fn embed(
//!         &self,
//!         texts: &[String],
//!         _: agon_llm::InputType,
//!     ) -> Result<Vec<Vec<f32>>, agon_llm::ProviderError> {
//!         Ok(texts
//!             .iter()
//!             .map(|t| {
//!                 let mut v = vec![0.1_f32; 26];
//!                 for b in t.to_lowercase().bytes().filter(u8::is_ascii_lowercase) {
//!                     v[usize::from(b - b'a')] += 1.0;
//!                 }
//!                 v
//!             })
//!             .collect())
//!     }
//!     fn dimensions(&self) -> usize { 26 }
//!     fn max_batch(&self) -> usize { 64 }
//!     fn model_id(&self) -> &str { "letters" }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let memory = Memory::open(Arc::new(InMemoryIndex::new()), Arc::new(Letters), RetrievalConfig::default())
//!     .await?;
//! let said = |id: &str, text: &str| MemoryMeta {
//!     id: id.into(),
//!     debate: DebateId::new("d-1"),
//!     persona: PersonaId::new("mara"),
//!     content: text.into(),
//!     kind: MemoryKind::Message,
//!     importance: 5,
//!     round: 1,
//!     created: chrono::Utc::now(),
//!     subject: None,
//! };
//! memory
//!     .remember(vec![
//!         said("d-1/1", "Air quality improved once the square closed to cars."),
//!         said("d-1/2", "Shop takings fell in the first six months."),
//!     ])
//!     .await?;
//! let filter = MemoryFilter { persona: Some(PersonaId::new("mara")), ..MemoryFilter::default() };
//! let recall = memory.recall("What happened to air quality?", &filter, 1).await?;
//! assert_eq!(recall.memories[0].memory.id, "d-1/1");
//! # Ok::<(), agon_memory::MemoryError>(())
//! # }).unwrap();
//! ```

mod bm25;
pub mod corpus;
pub mod dates;
mod error;
mod exact;
mod harvest;
mod index;
mod inmemory;
#[cfg(feature = "locomo")]
pub mod locomo;
mod memory;
mod migrations;
pub mod names;
mod open;
#[cfg(feature = "postgres")]
mod postgres;
mod query_cache;
mod record;
mod score;
mod space;
mod sql;
mod sqlite;
mod text;
mod turn;
pub mod validity;
mod writer;

pub use bm25::{B, Bm25, K1};
pub use corpus::{CorpusChunk, CorpusFormat, CorpusSource, Evidence};
pub use error::MemoryError;
pub use exact::{ExactIndex, dot};
pub use harvest::{
    CRUX_CARD_IMPORTANCE, Harvester, MAX_CONTENT_CHARS, MESSAGE_THRESHOLD, MemoryDraft,
    message_importance,
};
pub use index::{DebateInfo, MemoryIndex};
pub use inmemory::InMemoryIndex;
pub use memory::{Memory, Recall};
pub use open::{WITH_POSTGRES, open};
#[cfg(feature = "postgres")]
pub use postgres::{EF_SEARCH, PgMemory};
pub use record::{
    Candidate, EmbeddingSpace, LexicalHit, MemoryFilter, MemoryKind, MemoryMeta, MemoryRecord,
    normalize,
};
pub use score::{
    MAX_NEIGHBOURS, MAX_RESULTS, RetrievalConfig, ScoredMemory, ScoringInput, fuse, min_max,
    recency_by_time,
};
pub use sqlite::SqliteMemory;
pub use text::Analyzer;
pub use turn::{
    Citations, EVIDENCE_PASSAGES, check_citations, evidence_passages, recall_labelled,
    recall_turn_ahead,
};
pub use validity::{
    StanceChange, Successor, Superseded, asks_about_change, forget_debate, rechain, stance_changes,
    subject_key,
};
pub use writer::{MemoryMsg, Warn, spawn_writer};
