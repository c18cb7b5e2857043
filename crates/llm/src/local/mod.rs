//! In-process models (feature `local`): they make Agon run with no API key
//! and no network. Files come from the models directory; nothing is downloaded.

mod chat;
mod embedder;
pub mod files;
mod guidance;
mod llama;
#[cfg(feature = "llama-cpp")]
mod llama_cpp;
mod output;

pub use chat::{GenerationStats, LocalChat, SMOLLM2_FILE, default_chat_path};
pub use embedder::{LocalEmbedder, MINILM_DIR};
pub use llama::cpu_kernels;
#[cfg(feature = "llama-cpp")]
pub use llama_cpp::LlamaCppChat;

use std::path::Path;

use crate::error::ProviderError;

/// The provider name of in-process models.
pub(crate) const PROVIDER: &str = "local";

/// A model file that exists but cannot be used.
pub(crate) fn invalid(path: &Path, message: impl std::fmt::Display) -> ProviderError {
    ProviderError::ModelFileInvalid {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

/// A failure while computing.
pub(crate) fn inference(message: impl std::fmt::Display) -> ProviderError {
    ProviderError::Inference {
        provider: PROVIDER.to_owned(),
        message: message.to_string(),
    }
}
