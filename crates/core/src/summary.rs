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
    /// Strategy name (e.g. "length-based", "rolling").
    pub method: String,
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
