//! Agon's vector memory.
//!
//! - **What is remembered** ([`harvest`]): position snapshots when a
//!   persona's position changes, reflections, crux cards, and messages of
//!   importance ≥ 7, as [`MemoryDraft`]s with deterministic ids.
//! - **Indexes** ([`MemoryIndex`]): PostgreSQL + pgvector with HNSW
//!   ([`PgMemory`]); the embedded SQLite store with exact search in process
//!   ([`SqliteMemory`] over [`ExactIndex`]); and [`InMemoryIndex`].
//! - **Retrieval** ([`Memory::recall`]): persona names taken out of the
//!   query ([`names`]), BM25 and dense cosine rankings fused by reciprocal
//!   rank into N candidates, scored
//!   `0.5·recency + 3.0·relevance + 2.0·importance + 0.25·speaker`
//!   (relevance = `0.7·cos + 0.3·bm25`, min-max normalized; recency halves
//!   every week), top K returned ([`score`]), each with its neighbouring
//!   memories as context.
//! - **Corpus** ([`corpus`]): a persona's own sources, chunked on their
//!   structure, stored as [`MemoryKind::Corpus`] records (never returned
//!   unless asked for), searched by relevance for EVIDENCE.
//! - **Harness** (module `locomo`, feature `locomo`): evidence recall on LoCoMo-format data.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use agon_memory::{Memory, MemoryFilter, RetrievalConfig};
//! let index = agon_memory::open("sqlite:agon.db").await?;
//! // Any embedder: local MiniLM, Voyage, OpenAI-compatible.
//! let embedder: Arc<dyn agon_llm::Embedder> = "local".parse::<agon_llm::EmbedderSpec>()?.build(&|k| std::env::var(k).ok())?;
//! let memory = Memory::open(index, embedder, RetrievalConfig::default()).await?;
//! let recall = memory.recall("car ban and air quality", &MemoryFilter::persona("mara"), 8).await?;
//! for m in recall.memories {
//!     println!("{:.2} {}", m.score, m.memory.content);
//! }
//! # Ok(()) }
//! ```

mod bm25;
pub mod corpus;
mod error;
mod exact;
mod harvest;
mod index;
mod inmemory;
#[cfg(feature = "locomo")]
pub mod locomo;
mod memory;
pub mod names;
mod open;
mod postgres;
mod query_cache;
mod record;
mod score;
mod space;
mod sql;
mod sqlite;
mod text;
mod turn;
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
pub use open::open;
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
pub use writer::{MemoryMsg, Warn, spawn_writer};
