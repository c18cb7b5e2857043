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

use std::fmt;
use std::str::FromStr;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModelFactory;
    use std::sync::Arc;

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
