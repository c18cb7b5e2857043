//! Errors of the memory layer.

use crate::space::EmbeddingSpace;

/// Everything that can go wrong storing or retrieving memories.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The store was written with another embedder.
    #[error(
        "the memory store holds vectors of {stored}, but the configured embedder is {given}; \
         vectors of different embedders are never mixed: run `agon memory reindex` to re-embed \
         every memory with {given}, or configure {stored} again"
    )]
    EmbedderMismatch {
        /// The embedder the store's vectors come from.
        stored: EmbeddingSpace,
        /// The embedder used now.
        given: EmbeddingSpace,
    },
    /// A record cannot be stored (empty, bad importance, NaN or zero vector…).
    #[error("memory {id}: {reason}")]
    BadRecord {
        /// The record's id.
        id: String,
        /// What is wrong.
        reason: String,
    },
    /// A request or setting is invalid.
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// Which input.
        what: String,
        /// What is wrong.
        reason: String,
    },
    /// The embedder failed.
    #[error("embedding with {model} failed: {source}")]
    Embedding {
        /// The embedder.
        model: String,
        /// The provider's error.
        #[source]
        source: agon_llm::ProviderError,
    },
    /// The database failed.
    #[error("memory store {url}: {message}")]
    Database {
        /// The store (password redacted).
        url: String,
        /// What failed.
        message: String,
    },
    /// The database could not be opened (see the store's error).
    #[error(transparent)]
    Store(#[from] agon_store::StoreError),
    /// The URL names a backend this build leaves out (a crate feature).
    #[error("`{url}` needs agon-memory's feature `{feature}`, which this build leaves out")]
    NotBuilt {
        /// The URL, password redacted.
        url: String,
        /// The feature.
        feature: &'static str,
    },
    /// The store's URL names no supported backend.
    #[error("unsupported memory store URL {url} (expected sqlite:PATH or postgres://…)")]
    UnsupportedUrl {
        /// The URL (password redacted).
        url: String,
    },
}

impl From<agon_context::ContextError> for MemoryError {
    /// A retrieval setting out of range (the only context error the
    /// memory can meet) keeps its field and reason.
    fn from(e: agon_context::ContextError) -> Self {
        match e {
            agon_context::ContextError::InvalidRetrieval { field, reason } => Self::Invalid {
                what: format!("retrieval setting `{field}`"),
                reason,
            },
            other => Self::Invalid {
                what: "retrieval settings".into(),
                reason: other.to_string(),
            },
        }
    }
}
