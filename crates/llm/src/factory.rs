//! Building models from specs: the [`ModelFactory`] (one instance per
//! distinct spec), the embedder of an [`EmbedderSpec`], and the seam
//! ([`LocalBackends`]) through which `agon-local` supplies in-process
//! models. The specs themselves are plain data (`spec`, `embed_spec`).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use crate::embed_spec::EmbedderSpec;
use crate::error::ProviderError;
use crate::spec::ModelSpec;
use crate::traits::{ChatModel, Embedder};

/// Builds models from specs, sharing one instance per distinct spec (so the
/// local model is loaded once however many roles use it).
#[derive(Default)]
pub struct ModelFactory {
    built: Mutex<HashMap<ModelSpec, Arc<dyn ChatModel>>>,
    local: Option<Arc<dyn LocalBackends>>,
    gate: Option<Arc<dyn crate::RateGate>>,
}

/// Builds the in-process models that `local` and `llama-cpp` specs name.
/// agon-llm has none of its own: they live in `agon-local`, which
/// implements this trait. A factory without backends answers such specs
/// with an error that says so.
pub trait LocalBackends: Send + Sync {
    /// The chat model of a `local` or `llama-cpp` spec (loading blocks).
    fn chat(&self, spec: &ModelSpec) -> Result<Arc<dyn ChatModel>, ProviderError>;
    /// The embedder of a `local` embedder spec (loading blocks).
    fn embedder(&self, spec: &EmbedderSpec) -> Result<Arc<dyn Embedder>, ProviderError>;
}

/// The error for an in-process spec when no backends are linked in.
pub(crate) fn no_local_backends(spec: &dyn fmt::Display) -> ProviderError {
    ProviderError::InvalidRequest {
        reason: format!(
            "`{spec}` runs an in-process model, and this program was built without them (agon-local)"
        ),
    }
}

impl fmt::Debug for ModelFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelFactory").finish_non_exhaustive()
    }
}

impl ModelFactory {
    /// A factory with nothing built and no in-process backends (HTTP
    /// providers only).
    pub fn new() -> Self {
        Self::default()
    }

    /// This factory, building `local` / `llama-cpp` specs with `backends`.
    pub fn with_local(mut self, backends: Arc<dyn LocalBackends>) -> Self {
        self.local = Some(backends);
        self
    }

    /// This factory, building HTTP models whose requests wait for `gate`
    /// (provider rate limits shared by every process that uses it).
    pub fn with_rate_gate(mut self, gate: Arc<dyn crate::RateGate>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// The model for `spec`, built on first use. Keys are read through
    /// `lookup` (usually the environment). Loading a local model blocks.
    pub fn build(
        &self,
        spec: &ModelSpec,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Arc<dyn ChatModel>, ProviderError> {
        if let Some(model) = self.built.lock().map_err(|_| poisoned())?.get(spec) {
            return Ok(Arc::clone(model));
        }
        let model = match (spec.is_local(), &self.local) {
            (true, Some(local)) => local.chat(spec)?,
            (true, None) => return Err(no_local_backends(spec)),
            (false, _) => build(spec, lookup, self.gate.as_ref())?,
        };
        self.built
            .lock()
            .map_err(|_| poisoned())?
            .insert(spec.clone(), Arc::clone(&model));
        Ok(model)
    }
}

fn poisoned() -> ProviderError {
    ProviderError::InvalidRequest {
        reason: "model factory lock poisoned".into(),
    }
}

#[allow(unused_variables)]
fn build(
    spec: &ModelSpec,
    lookup: &dyn Fn(&str) -> Option<String>,
    gate: Option<&Arc<dyn crate::RateGate>>,
) -> Result<Arc<dyn ChatModel>, ProviderError> {
    #[cfg(feature = "http")]
    let openai = |config| {
        let chat = crate::openai::OpenAiChat::new(config)?;
        Ok::<Arc<dyn ChatModel>, ProviderError>(Arc::new(match gate {
            Some(gate) => chat.with_rate_gate(Arc::clone(gate)),
            None => chat,
        }))
    };
    match spec {
        ModelSpec::Local(_) | ModelSpec::LlamaCpp(_) => Err(no_local_backends(spec)),
        #[cfg(feature = "http")]
        ModelSpec::Anthropic(model) => {
            let chat = crate::anthropic::AnthropicChat::new(
                crate::anthropic::AnthropicConfig::from_lookup(model.clone(), lookup)?,
            )?;
            Ok(Arc::new(match gate {
                Some(gate) => chat.with_rate_gate(Arc::clone(gate)),
                None => chat,
            }))
        }
        #[cfg(feature = "http")]
        ModelSpec::OpenAi(model) => {
            openai(crate::openai::OpenAiConfig::openai(model.clone(), lookup)?)
        }
        #[cfg(feature = "http")]
        ModelSpec::OpenRouter(model) => openai(crate::openai::OpenAiConfig::openrouter(
            model.clone(),
            lookup,
        )?),
        #[cfg(feature = "http")]
        ModelSpec::OpenAiCompatible { model, base_url } => {
            openai(crate::openai::OpenAiConfig::local(
                "openai-compatible",
                base_url.clone(),
                model.clone(),
            ))
        }
        #[allow(unreachable_patterns)]
        other => Err(ProviderError::InvalidRequest {
            reason: format!("model spec `{other}` needs a feature of agon-llm that is not enabled"),
        }),
    }
}

impl EmbedderSpec {
    /// Builds the embedder of an HTTP spec; keys are read through `lookup`
    /// (usually the environment). A `local` spec needs in-process backends:
    /// see [`Self::build_with`].
    pub fn build(
        &self,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Arc<dyn Embedder>, ProviderError> {
        self.build_with(None, lookup)
    }

    /// Builds the embedder, a `local` one with `local` (agon-local's
    /// backends); loading a local model blocks.
    #[allow(unused_variables)]
    pub fn build_with(
        &self,
        local: Option<&dyn LocalBackends>,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Arc<dyn Embedder>, ProviderError> {
        match self {
            Self::Local(_) => match local {
                Some(local) => local.embedder(self),
                None => Err(no_local_backends(self)),
            },
            #[cfg(feature = "http")]
            Self::Voyage { model, dimensions } => {
                let mut config = crate::embeddings::EmbeddingConfig::voyage(lookup)?;
                config.model = model.clone();
                config.dimensions = *dimensions;
                Ok(Arc::new(crate::embeddings::HttpEmbedder::new(config)?))
            }
            #[cfg(feature = "http")]
            Self::OpenAi { model, dimensions } => {
                let mut config = crate::embeddings::EmbeddingConfig::openai(lookup)?;
                config.model = model.clone();
                config.dimensions = *dimensions;
                Ok(Arc::new(crate::embeddings::HttpEmbedder::new(config)?))
            }
            #[cfg(feature = "http")]
            Self::OpenAiCompatible {
                model,
                dimensions,
                base_url,
            } => Ok(Arc::new(crate::embeddings::HttpEmbedder::new(
                crate::embeddings::EmbeddingConfig {
                    provider: "openai-compatible".to_owned(),
                    api: crate::embeddings::EmbeddingApi::OpenAi,
                    base_url: base_url.clone(),
                    api_key: None,
                    key_env: "(none)".to_owned(),
                    model: model.clone(),
                    dimensions: *dimensions,
                    max_batch: 256,
                    http: crate::http::HttpConfig::default(),
                },
            )?)),
            #[allow(unreachable_patterns)]
            other => Err(ProviderError::InvalidRequest {
                reason: format!(
                    "embedder spec `{other}` needs a feature of agon-llm that is not enabled"
                ),
            }),
        }
    }
}
