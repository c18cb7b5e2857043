//! The embedder a store's vectors were made with (its checks, which can
//! fail with a `MemoryError`, are in `record.rs`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The embedder a store's vectors were made with. A store is bound to one
/// space; queries and inserts from another are refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddingSpace {
    /// The embedder's model id.
    pub model: String,
    /// Vector length.
    pub dimensions: usize,
}

impl EmbeddingSpace {
    /// The space of `embedder`.
    pub fn of(embedder: &dyn agon_llm::Embedder) -> Self {
        Self {
            model: embedder.model_id().to_owned(),
            dimensions: embedder.dimensions(),
        }
    }
}

impl fmt::Display for EmbeddingSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}-d)", self.model, self.dimensions)
    }
}
