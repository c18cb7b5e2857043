//! Summaries with their metadata (seed 004 `DebateSummary`, seed 001 rolling summaries).

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::PersonaId;

/// Whose view a summary is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "scope", rename_all = "snake_case")]
pub enum SummaryScope {
    /// The shared rolling summary of the transcript (seed 001).
    Rolling,
    /// One persona's perspective summary (seed 004).
    Persona {
        /// The persona.
        persona: PersonaId,
    },
    /// The judge's summary of the final round.
    Judge,
}

/// A half-open span `[start, end)` of transcript indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MessageSpan {
    /// First index covered.
    pub start: usize,
    /// One past the last index covered.
    pub end: usize,
}

impl MessageSpan {
    /// Number of messages in the span.
    pub fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }

    /// Whether the span is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A recorded summary and how it was produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DebateSummary {
    /// Whose summary.
    #[serde(flatten)]
    pub scope: SummaryScope,
    /// Which messages it covers.
    pub span: MessageSpan,
    /// The summary text.
    pub text: String,
    /// Characters of the input.
    pub before_chars: usize,
    /// Characters of the output.
    pub after_chars: usize,
    /// How it was made ("length-based", "rolling"; another name is kept
    /// as written).
    pub method: SummaryMethod,
    /// The round at whose start it was made (perspective summaries) or
    /// whose synthesis it serves (the judge's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// Sampling temperature of the call, in hundredths (30 = 0.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_centi: Option<u16>,
    /// Wall time of the summarization call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u64>,
    /// Tokens the call used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Model id that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// When it was recorded.
    pub time: DateTime<Utc>,
}

/// How a summary was made: dialectic's length-based summaries (each
/// agent's perspective, the judge's), a deliberation's rolling summary, or
/// a name a configuration or another writer gave (kept as written). Stored
/// as its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum SummaryMethod {
    /// dialectic's `length-based` summarization (the default).
    LengthBased,
    /// A deliberation's rolling summary of the messages it folds.
    Rolling,
    /// Any other name (a configuration's own, an older log's).
    Other(String),
}

impl SummaryMethod {
    /// Its name, as stored.
    pub fn as_str(&self) -> &str {
        match self {
            Self::LengthBased => "length-based",
            Self::Rolling => "rolling",
            Self::Other(name) => name,
        }
    }
}

impl From<&str> for SummaryMethod {
    fn from(name: &str) -> Self {
        match name {
            "length-based" => Self::LengthBased,
            "rolling" => Self::Rolling,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl From<String> for SummaryMethod {
    fn from(name: String) -> Self {
        Self::from(name.as_str())
    }
}

impl std::fmt::Display for SummaryMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<SummaryMethod> for String {
    fn from(method: SummaryMethod) -> Self {
        match method {
            SummaryMethod::Other(name) => name,
            known => known.as_str().to_owned(),
        }
    }
}

impl JsonSchema for SummaryMethod {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SummaryMethod".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}
