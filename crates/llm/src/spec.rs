//! Model specifications: one string names a chat model and its provider, so
//! configuration files and command lines can choose models per role.
//!
//! | spec | model |
//! |---|---|
//! | `local` | the in-process SmolLM2-135M-Instruct from the models directory |
//! | `local:PATH` | another llama-family GGUF with a ChatML template |
//! | `llama-cpp`, `llama-cpp:PATH` | the same GGUF files on llama.cpp (feature `llama-cpp`) |
//! | `anthropic:MODEL` | Anthropic Messages API (`ANTHROPIC_API_KEY`) |
//! | `openai:MODEL` | OpenAI (`OPENAI_API_KEY`, `OPENAI_BASE_URL`) |
//! | `openrouter:MODEL` | OpenRouter (`OPENROUTER_API_KEY`) |
//! | `openai-compatible:MODEL@URL` | any OpenAI-compatible server (Ollama, vLLM, llama.cpp), no key |

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use crate::error::ProviderError;
use crate::traits::ChatModel;

/// A parsed model specification.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ModelSpec {
    /// In-process GGUF; `None` is the default SmolLM2 file.
    Local(Option<String>),
    /// The same GGUF files on llama.cpp (feature `llama-cpp`); `None` is the
    /// default SmolLM2 file.
    LlamaCpp(Option<String>),
    /// Anthropic, by model id.
    Anthropic(String),
    /// OpenAI, by model id.
    OpenAi(String),
    /// OpenRouter, by model id.
    OpenRouter(String),
    /// An OpenAI-compatible server without a key.
    OpenAiCompatible {
        /// Model id sent to the server.
        model: String,
        /// Base URL, e.g. `http://127.0.0.1:8080/v1`.
        base_url: String,
    },
}

/// A spec string that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid model spec `{spec}`: {reason} (expected local, local:PATH, llama-cpp, llama-cpp:PATH, anthropic:MODEL, openai:MODEL, openrouter:MODEL or openai-compatible:MODEL@URL)"
)]
pub struct SpecError {
    /// The spec given.
    pub spec: String,
    /// What is wrong.
    pub reason: String,
}

impl FromStr for ModelSpec {
    type Err = SpecError;

    fn from_str(spec: &str) -> Result<Self, SpecError> {
        let err = |reason: &str| SpecError {
            spec: spec.to_owned(),
            reason: reason.to_owned(),
        };
        let spec_trim = spec.trim();
        match spec_trim {
            "local" => return Ok(Self::Local(None)),
            "llama-cpp" => return Ok(Self::LlamaCpp(None)),
            _ => {}
        }
        let (provider, rest) = spec_trim
            .split_once(':')
            .ok_or_else(|| err("no provider prefix"))?;
        let rest = rest.trim();
        if rest.is_empty() {
            return Err(err("the model part is empty"));
        }
        match provider {
            "local" => Ok(Self::Local(Some(rest.to_owned()))),
            "llama-cpp" => Ok(Self::LlamaCpp(Some(rest.to_owned()))),
            "anthropic" => Ok(Self::Anthropic(rest.to_owned())),
            "openai" => Ok(Self::OpenAi(rest.to_owned())),
            "openrouter" => Ok(Self::OpenRouter(rest.to_owned())),
            "openai-compatible" => {
                let (model, url) = rest
                    .rsplit_once('@')
                    .ok_or_else(|| err("openai-compatible needs MODEL@URL"))?;
                if model.is_empty() || !(url.starts_with("http://") || url.starts_with("https://"))
                {
                    return Err(err("openai-compatible needs MODEL@http(s)://…"));
                }
                Ok(Self::OpenAiCompatible {
                    model: model.to_owned(),
                    base_url: url.trim_end_matches('/').to_owned(),
                })
            }
            other => Err(err(&format!("unknown provider `{other}`"))),
        }
    }
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Local(None) => f.write_str("local"),
            Self::Local(Some(p)) => write!(f, "local:{p}"),
            Self::LlamaCpp(None) => f.write_str("llama-cpp"),
            Self::LlamaCpp(Some(p)) => write!(f, "llama-cpp:{p}"),
            Self::Anthropic(m) => write!(f, "anthropic:{m}"),
            Self::OpenAi(m) => write!(f, "openai:{m}"),
            Self::OpenRouter(m) => write!(f, "openrouter:{m}"),
            Self::OpenAiCompatible { model, base_url } => {
                write!(f, "openai-compatible:{model}@{base_url}")
            }
        }
    }
}

impl ModelSpec {
    /// Whether the spec runs a model in process (from the models directory).
    pub fn is_local(&self) -> bool {
        matches!(self, Self::Local(_) | Self::LlamaCpp(_))
    }
}

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
    fn embedder(
        &self,
        spec: &crate::EmbedderSpec,
    ) -> Result<Arc<dyn crate::Embedder>, ProviderError>;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_print_back() {
        for s in [
            "local",
            "local:/m/x.gguf",
            "llama-cpp",
            "llama-cpp:/m/x.gguf",
            "anthropic:claude-haiku-4-5",
            "openai:gpt-4o-mini",
            "openrouter:meta/llama",
            "openai-compatible:qwen@http://127.0.0.1:8080/v1",
        ] {
            let spec: ModelSpec = s.parse().unwrap();
            assert_eq!(spec.to_string(), s);
        }
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let e = "gpt4".parse::<ModelSpec>().unwrap_err();
        assert!(e.to_string().contains("no provider prefix"), "{e}");
        let e = "foo:bar".parse::<ModelSpec>().unwrap_err();
        assert!(e.to_string().contains("unknown provider `foo`"), "{e}");
        let e = "openai-compatible:qwen".parse::<ModelSpec>().unwrap_err();
        assert!(e.to_string().contains("MODEL@URL"), "{e}");
        assert!("openai:".parse::<ModelSpec>().is_err());
    }

    #[test]
    fn missing_key_names_the_variable_and_models_are_shared() {
        let factory = ModelFactory::new();
        let spec: ModelSpec = "openai:gpt-4o-mini".parse().unwrap();
        let err = factory.build(&spec, &|_| None).err().unwrap();
        assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
        let spec: ModelSpec = "openai-compatible:m@http://127.0.0.1:9/v1".parse().unwrap();
        let a = factory.build(&spec, &|_| None).unwrap();
        let b = factory.build(&spec, &|_| None).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn in_process_specs_without_backends_say_so() {
        for spec in ["local", "llama-cpp", "local:/m/x.gguf"] {
            let spec: ModelSpec = spec.parse().unwrap();
            let err = ModelFactory::new().build(&spec, &|_| None).err().unwrap();
            assert!(err.to_string().contains("agon-local"), "{err}");
        }
    }
}
