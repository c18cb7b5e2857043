//! Embedder specifications: one string names an embedder, its provider and
//! its dimension, so configuration files and command lines can choose it.
//!
//! | spec | embedder |
//! |---|---|
//! | `local` | the in-process all-MiniLM-L6-v2 (384-d) from the models directory |
//! | `local:DIR` | another BERT-family model directory (safetensors + tokenizer.json + config.json) |
//! | `voyage[:MODEL[/DIMS]]` | Voyage (`VOYAGE_API_KEY`), default `voyage-3` (1024-d) |
//! | `openai[:MODEL[/DIMS]]` | OpenAI (`OPENAI_API_KEY`, `OPENAI_BASE_URL`), default `text-embedding-3-small` (1536-d) |
//! | `openai-compatible:MODEL/DIMS@URL` | any OpenAI-compatible embeddings server, no key |
//!
//! `/DIMS` may be left out for the models this module knows.

use std::fmt;
use std::str::FromStr;

/// A parsed embedder specification.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EmbedderSpec {
    /// In-process BERT-family model; `None` is the default MiniLM.
    Local(Option<String>),
    /// Voyage.
    Voyage {
        /// Model id.
        model: String,
        /// Vector length.
        dimensions: usize,
    },
    /// OpenAI.
    OpenAi {
        /// Model id.
        model: String,
        /// Vector length.
        dimensions: usize,
    },
    /// An OpenAI-compatible server without a key.
    OpenAiCompatible {
        /// Model id.
        model: String,
        /// Vector length.
        dimensions: usize,
        /// Base URL up to `/v1`.
        base_url: String,
    },
}

/// An embedder spec that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid embedder spec `{spec}`: {reason} (expected local, local:DIR, voyage[:MODEL[/DIMS]], openai[:MODEL[/DIMS]] or openai-compatible:MODEL/DIMS@URL)"
)]
pub struct EmbedderSpecError {
    /// The spec given.
    pub spec: String,
    /// What is wrong.
    pub reason: String,
}

/// Dimensions of the models this module knows.
fn known_dimensions(model: &str) -> Option<usize> {
    Some(match model {
        "voyage-3" | "voyage-3-large" | "voyage-3.5" | "voyage-3.5-lite" | "voyage-code-3" => 1_024,
        "voyage-3-lite" => 512,
        "text-embedding-3-small" | "text-embedding-ada-002" => 1_536,
        "text-embedding-3-large" => 3_072,
        _ => return None,
    })
}

impl FromStr for EmbedderSpec {
    type Err = EmbedderSpecError;

    fn from_str(spec: &str) -> Result<Self, EmbedderSpecError> {
        let err = |reason: String| EmbedderSpecError {
            spec: spec.to_owned(),
            reason,
        };
        let s = spec.trim();
        let (provider, rest) = s.split_once(':').unwrap_or((s, ""));
        let rest = rest.trim();
        // MODEL[/DIMS], with a default model.
        let model_dims = |default: &str| -> Result<(String, usize), EmbedderSpecError> {
            let (model, dims) = match rest.rsplit_once('/') {
                Some((m, d)) => (
                    m.to_owned(),
                    Some(
                        d.parse::<usize>()
                            .ok()
                            .filter(|d| *d > 0)
                            .ok_or_else(|| err(format!("`{d}` is not a dimension")))?,
                    ),
                ),
                None if rest.is_empty() => (default.to_owned(), None),
                None => (rest.to_owned(), None),
            };
            let dims = dims.or_else(|| known_dimensions(&model)).ok_or_else(|| {
                err(format!(
                    "unknown dimension of `{model}`: write {model}/DIMS"
                ))
            })?;
            Ok((model, dims))
        };
        match provider {
            "local" if rest.is_empty() => Ok(Self::Local(None)),
            "local" => Ok(Self::Local(Some(rest.to_owned()))),
            "voyage" => {
                let (model, dimensions) = model_dims("voyage-3")?;
                Ok(Self::Voyage { model, dimensions })
            }
            "openai" => {
                let (model, dimensions) = model_dims("text-embedding-3-small")?;
                Ok(Self::OpenAi { model, dimensions })
            }
            "openai-compatible" => {
                let (left, url) = rest
                    .rsplit_once('@')
                    .ok_or_else(|| err("openai-compatible needs MODEL/DIMS@URL".into()))?;
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(err("openai-compatible needs MODEL/DIMS@http(s)://…".into()));
                }
                let (model, dims) = left
                    .rsplit_once('/')
                    .ok_or_else(|| err("openai-compatible needs MODEL/DIMS@URL".into()))?;
                let dimensions = dims
                    .parse::<usize>()
                    .ok()
                    .filter(|d| *d > 0)
                    .ok_or_else(|| err(format!("`{dims}` is not a dimension")))?;
                if model.is_empty() {
                    return Err(err("the model part is empty".into()));
                }
                Ok(Self::OpenAiCompatible {
                    model: model.to_owned(),
                    dimensions,
                    base_url: url.trim_end_matches('/').to_owned(),
                })
            }
            "" => Err(err("empty".into())),
            other => Err(err(format!("unknown provider `{other}`"))),
        }
    }
}

impl fmt::Display for EmbedderSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Local(None) => f.write_str("local"),
            Self::Local(Some(p)) => write!(f, "local:{p}"),
            Self::Voyage { model, dimensions } => write!(f, "voyage:{model}/{dimensions}"),
            Self::OpenAi { model, dimensions } => write!(f, "openai:{model}/{dimensions}"),
            Self::OpenAiCompatible {
                model,
                dimensions,
                base_url,
            } => write!(f, "openai-compatible:{model}/{dimensions}@{base_url}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_with_known_and_explicit_dimensions() {
        assert_eq!(
            "local".parse::<EmbedderSpec>().unwrap(),
            EmbedderSpec::Local(None)
        );
        assert_eq!(
            "voyage".parse::<EmbedderSpec>().unwrap().to_string(),
            "voyage:voyage-3/1024"
        );
        assert_eq!(
            "openai:text-embedding-3-large"
                .parse::<EmbedderSpec>()
                .unwrap()
                .to_string(),
            "openai:text-embedding-3-large/3072"
        );
        let s = "openai-compatible:nomic/768@http://127.0.0.1:8080/v1";
        assert_eq!(s.parse::<EmbedderSpec>().unwrap().to_string(), s);
        for s in ["local", "local:/m", "voyage:voyage-3/1024", "openai:x/8"] {
            let spec: EmbedderSpec = s.parse().unwrap();
            assert_eq!(spec.to_string().parse::<EmbedderSpec>().unwrap(), spec);
        }
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let e = "voyage:mystery"
            .parse::<EmbedderSpec>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("write mystery/DIMS"), "{e}");
        let e = "openai-compatible:m@http://x"
            .parse::<EmbedderSpec>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("MODEL/DIMS@URL"), "{e}");
        let e = "cohere:x".parse::<EmbedderSpec>().unwrap_err().to_string();
        assert!(e.contains("unknown provider `cohere`"), "{e}");
        let e = "openai:x/zero"
            .parse::<EmbedderSpec>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a dimension"), "{e}");
    }

    #[test]
    fn missing_key_names_the_variable() {
        let spec: EmbedderSpec = "voyage".parse().unwrap();
        let err = spec.build(&|_| None).err().unwrap().to_string();
        assert!(err.contains("VOYAGE_API_KEY"), "{err}");
    }
}
