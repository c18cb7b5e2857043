//! `ProviderError`: every way a model call can fail, with retry advice.

use std::time::Duration;

/// Why a model call failed. Messages name the provider and, where it helps,
/// the model, base URL or environment variable; they never contain a key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// No API key was configured.
    #[error("{provider}: no API key: set {env_var}")]
    MissingKey {
        /// Provider name.
        provider: String,
        /// The variable to set.
        env_var: String,
    },
    /// The key was rejected (401/403).
    #[error("{provider}: authentication failed ({message}); check {env_var}")]
    Auth {
        /// Provider name.
        provider: String,
        /// The provider's message.
        message: String,
        /// The variable that holds the key.
        env_var: String,
    },
    /// Too many requests (429); retry after the given time if known.
    #[error("{provider}: rate limited ({message})")]
    RateLimited {
        /// Provider name.
        provider: String,
        /// The provider's message.
        message: String,
        /// From `Retry-After` / `retry-after-ms`.
        retry_after: Option<Duration>,
    },
    /// The account is out of credit or quota; retrying does not help.
    #[error("{provider}: quota exhausted ({message})")]
    QuotaExhausted {
        /// Provider name.
        provider: String,
        /// The provider's message.
        message: String,
    },
    /// The provider rejected the request (400/422).
    #[error("{provider}: bad request ({message})")]
    BadRequest {
        /// Provider name.
        provider: String,
        /// The provider's message.
        message: String,
    },
    /// 404: usually an unknown model.
    #[error("{provider}: model `{model}` not found at {base_url} ({message})")]
    NotFound {
        /// Provider name.
        provider: String,
        /// The model asked for.
        model: String,
        /// The endpoint's base URL.
        base_url: String,
        /// The provider's message.
        message: String,
    },
    /// A server-side error (5xx, 408, 425, Anthropic's 529 overloaded).
    #[error("{provider}: server error {status} ({message})")]
    Server {
        /// Provider name.
        provider: String,
        /// HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// No answer within the per-request timeout or the overall deadline.
    #[error("{provider}: timed out after {after:?}")]
    Timeout {
        /// Provider name.
        provider: String,
        /// The limit that was hit.
        after: Duration,
    },
    /// The connection failed.
    #[error("{provider}: transport error: {message}")]
    Transport {
        /// Provider name.
        provider: String,
        /// What failed.
        message: String,
    },
    /// The response could not be understood (bad JSON, bad SSE event, missing field).
    #[error("{provider}: malformed response: {message}")]
    MalformedResponse {
        /// Provider name.
        provider: String,
        /// What was wrong.
        message: String,
    },
    /// Structured output did not validate, even after the repair attempt.
    #[error("{provider}: output does not match schema `{schema}`: {}", .errors.join("; "))]
    SchemaMismatch {
        /// Provider name.
        provider: String,
        /// Schema name.
        schema: String,
        /// Validation errors of the last attempt.
        errors: Vec<String>,
    },
    /// The schema itself is not a valid JSON Schema.
    #[error("schema `{schema}` is invalid: {message}")]
    InvalidSchema {
        /// Schema name.
        schema: String,
        /// Why.
        message: String,
    },
    /// The request was rejected before sending (no messages, empty input, …).
    #[error("invalid request: {reason}")]
    InvalidRequest {
        /// Why.
        reason: String,
    },
    /// A local model file is missing.
    #[error(
        "model file {path} is missing: run `{fetch}` (or point AGON_MODELS_DIR at a directory that has it)"
    )]
    ModelFileMissing {
        /// The expected path.
        path: String,
        /// The command that fetches it.
        fetch: String,
    },
    /// A local model file exists but is unusable (truncated, wrong checksum, wrong format).
    #[error("model file {path} is unusable: {message}")]
    ModelFileInvalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// An in-process model failed while computing.
    #[error("{provider}: inference failed: {message}")]
    Inference {
        /// Provider name ("local").
        provider: String,
        /// What failed.
        message: String,
    },
    /// Every model of a fallback chain failed; the last error is kept.
    #[error("all {tried} models of the fallback chain failed; last: {last}")]
    AllFailed {
        /// How many models were tried.
        tried: usize,
        /// The last model's error.
        last: Box<ProviderError>,
    },
}

impl ProviderError {
    /// Whether retrying the same request may succeed: rate limits, server
    /// errors, timeouts and connection failures. Quota, auth, bad requests,
    /// unknown models and schema problems are permanent.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. }
                | Self::Server { .. }
                | Self::Timeout { .. }
                | Self::Transport { .. }
        )
    }

    /// A short, stable name of the error's kind (`rate_limited`,
    /// `timeout`, …): the `error.type` of a model call's span. It never
    /// carries the message (which may quote the provider's reply).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Self::MissingKey { .. } => "missing_key",
            Self::Auth { .. } => "auth",
            Self::RateLimited { .. } => "rate_limited",
            Self::QuotaExhausted { .. } => "quota_exhausted",
            Self::BadRequest { .. } => "bad_request",
            Self::NotFound { .. } => "not_found",
            Self::Server { .. } => "server",
            Self::Timeout { .. } => "timeout",
            Self::Transport { .. } => "transport",
            Self::MalformedResponse { .. } => "malformed_response",
            Self::SchemaMismatch { .. } => "schema_mismatch",
            Self::InvalidSchema { .. } => "invalid_schema",
            Self::InvalidRequest { .. } => "invalid_request",
            Self::ModelFileMissing { .. } => "model_file_missing",
            Self::ModelFileInvalid { .. } => "model_file_invalid",
            Self::Inference { .. } => "inference",
            Self::AllFailed { .. } => "all_failed",
        }
    }

    /// How long the provider asked us to wait, if it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
