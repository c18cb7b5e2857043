//! Shared HTTP plumbing of the providers: client, timeouts, deadline,
//! concurrency limit, status → [`ProviderError`] mapping, retries with
//! backoff honouring `Retry-After`, and SSE decoding.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};
use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use reqwest::header::HeaderMap;
use serde_json::Value;
use tokio::sync::Semaphore;

use crate::error::ProviderError;

/// Timeouts, retries and concurrency of one provider endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// Limit for one HTTP request (default 60 s).
    pub timeout: Duration,
    /// Limit for a whole call, retries included (default 5 min).
    pub deadline: Duration,
    /// Retries after the first attempt (default 4).
    pub max_retries: usize,
    /// First backoff delay (default 500 ms), doubled each retry, with jitter.
    pub min_backoff: Duration,
    /// Largest backoff delay (default 30 s); a longer `Retry-After` is still honoured.
    pub max_backoff: Duration,
    /// Requests in flight at once on this endpoint (default 8).
    pub concurrency: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            deadline: Duration::from_secs(300),
            max_retries: 4,
            min_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            concurrency: 8,
        }
    }
}

/// One provider endpoint: base URL, client, limits.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub provider: String,
    pub base_url: String,
    pub key_env: String,
    client: reqwest::Client,
    config: HttpConfig,
    permits: Arc<Semaphore>,
    gate: Option<Arc<dyn crate::RateGate>>,
}

impl Endpoint {
    pub fn new(
        provider: &str,
        base_url: &str,
        key_env: &str,
        config: HttpConfig,
    ) -> Result<Self, ProviderError> {
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| ProviderError::Transport {
                provider: provider.to_owned(),
                message: format!("cannot build the HTTP client: {e}"),
            })?;
        Ok(Self {
            provider: provider.to_owned(),
            base_url: base_url.trim_end_matches('/').to_owned(),
            key_env: key_env.to_owned(),
            client,
            permits: Arc::new(Semaphore::new(config.concurrency.max(1))),
            config,
            gate: None,
        })
    }

    /// Every request first waits for `gate`'s admission, and every 429 is
    /// reported to it (limits shared with other processes).
    pub fn set_rate_gate(&mut self, gate: Arc<dyn crate::RateGate>) {
        self.gate = Some(gate);
    }

    fn gate_key(&self) -> String {
        crate::gate_key(&self.provider, &self.base_url)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    fn backoff(&self) -> ExponentialBuilder {
        ExponentialBuilder::default()
            .with_min_delay(self.config.min_backoff)
            .with_max_delay(self.config.max_backoff)
            .with_max_times(self.config.max_retries)
            .with_jitter()
    }

    /// Runs `attempt` with retries (retryable errors only, `Retry-After`
    /// honoured) under the overall deadline.
    async fn with_retries<T, F, Fut>(&self, attempt: F) -> Result<T, ProviderError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, ProviderError>>,
    {
        let provider = self.provider.clone();
        let retried = attempt
            .retry(self.backoff())
            .when(ProviderError::is_retryable)
            .adjust(|error, delay| delay.map(|d| error.retry_after().unwrap_or(d)))
            .notify(move |error, delay| {
                tracing::info!(
                    provider = %provider,
                    error = %error,
                    delay_ms = delay.as_millis() as u64,
                    "retrying"
                );
            });
        tokio::time::timeout(self.config.deadline, retried)
            .await
            .unwrap_or_else(|_| {
                Err(ProviderError::Timeout {
                    provider: self.provider.clone(),
                    after: self.config.deadline,
                })
            })
    }

    async fn send(
        &self,
        path: &str,
        headers: &HeaderMap,
        body: &Value,
        model: &str,
    ) -> Result<reqwest::Response, ProviderError> {
        if let Some(gate) = &self.gate {
            let tokens = crate::estimated_tokens(body.to_string().len());
            gate.admit(&self.gate_key(), tokens).await;
        }
        let response = self
            .client
            .post(self.url(path))
            .headers(headers.clone())
            .json(body)
            .send()
            .await
            .map_err(|e| self.request_error(&e))?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status().as_u16();
        let response_headers = response.headers().clone();
        let text = response.text().await.unwrap_or_default();
        let error = self.status_error(status, &response_headers, &text, model);
        if let (Some(gate), ProviderError::RateLimited { retry_after, .. }) = (&self.gate, &error) {
            gate.throttled(&self.gate_key(), *retry_after).await;
        }
        Err(error)
    }

    /// POSTs `body` and returns the JSON answer, with retries.
    pub async fn post_json(
        &self,
        path: &str,
        headers: &HeaderMap,
        body: &Value,
        model: &str,
    ) -> Result<Value, ProviderError> {
        self.with_retries(|| async {
            let _permit = self
                .permits
                .acquire()
                .await
                .map_err(|e| self.transport(&e))?;
            let response = self.send(path, headers, body, model).await?;
            let text = response.text().await.map_err(|e| self.request_error(&e))?;
            serde_json::from_str(&text).map_err(|e| {
                self.malformed(format!(
                    "response body is not JSON ({e}): {}",
                    preview(&text)
                ))
            })
        })
        .await
    }

    /// POSTs `body` and returns the SSE event stream once the status is OK.
    /// Only opening the stream is retried: once events flow, errors end it.
    pub async fn post_sse(
        &self,
        path: &str,
        headers: &HeaderMap,
        body: &Value,
        model: &str,
    ) -> Result<impl Stream<Item = Result<Event, ProviderError>> + Send + use<>, ProviderError>
    {
        let response = self
            .with_retries(|| async {
                let _permit = self
                    .permits
                    .acquire()
                    .await
                    .map_err(|e| self.transport(&e))?;
                self.send(path, headers, body, model).await
            })
            .await?;
        let provider = self.provider.clone();
        Ok(response.bytes_stream().eventsource().map(move |item| {
            item.map_err(|e| match e {
                EventStreamError::Transport(e) => ProviderError::Transport {
                    provider: provider.clone(),
                    message: e.to_string(),
                },
                EventStreamError::Utf8(e) => ProviderError::MalformedResponse {
                    provider: provider.clone(),
                    message: format!("stream is not UTF-8: {e}"),
                },
                EventStreamError::Parser(e) => ProviderError::MalformedResponse {
                    provider: provider.clone(),
                    message: format!("bad SSE framing: {e}"),
                },
            })
        }))
    }

    /// A reqwest failure: a timeout, or a transport error with its cause chain.
    fn request_error(&self, error: &reqwest::Error) -> ProviderError {
        if error.is_timeout() {
            return ProviderError::Timeout {
                provider: self.provider.clone(),
                after: self.config.timeout,
            };
        }
        let mut message = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        ProviderError::Transport {
            provider: self.provider.clone(),
            message,
        }
    }

    pub fn transport(&self, error: &dyn std::fmt::Display) -> ProviderError {
        ProviderError::Transport {
            provider: self.provider.clone(),
            message: error.to_string(),
        }
    }

    pub fn malformed(&self, message: impl Into<String>) -> ProviderError {
        ProviderError::MalformedResponse {
            provider: self.provider.clone(),
            message: message.into(),
        }
    }

    /// Maps a non-2xx answer to a typed error.
    fn status_error(
        &self,
        status: u16,
        headers: &HeaderMap,
        body: &str,
        model: &str,
    ) -> ProviderError {
        let provider = self.provider.clone();
        let message = error_message(body);
        let lower = format!("{body} {message}").to_lowercase();
        match status {
            401 | 403 => ProviderError::Auth {
                provider,
                message,
                env_var: self.key_env.clone(),
            },
            404 => ProviderError::NotFound {
                provider,
                model: model.to_owned(),
                base_url: self.base_url.clone(),
                message,
            },
            402 => ProviderError::QuotaExhausted { provider, message },
            429 if ["quota", "insufficient", "billing", "credit"]
                .iter()
                .any(|w| lower.contains(w)) =>
            {
                ProviderError::QuotaExhausted { provider, message }
            }
            429 => ProviderError::RateLimited {
                provider,
                message,
                retry_after: retry_after(headers),
            },
            408 | 425 | 500..=599 => ProviderError::Server {
                provider,
                status,
                message,
            },
            _ => ProviderError::BadRequest {
                provider,
                message: format!("HTTP {status}: {message}"),
            },
        }
    }
}

/// The provider's error message: `error.message` (OpenAI, Anthropic,
/// Voyage `detail`), else the body's start.
fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let found = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("detail"))
            .or_else(|| v.get("message"))
            .or_else(|| v.get("error"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    found.unwrap_or_else(|| preview(body))
}

/// At most 300 characters of `text`.
pub(crate) fn preview(text: &str) -> String {
    let mut out: String = text.trim().chars().take(300).collect();
    if text.trim().chars().count() > 300 {
        out.push('…');
    }
    out
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok();
    let duration =
        |secs: f64| (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    number("retry-after-ms")
        .and_then(|ms| duration(ms / 1000.0))
        .or_else(|| number("retry-after").and_then(duration))
}

/// Builds a header map from static names and values; invalid values
/// (a key with a newline, say) become a typed error that does not echo them.
pub(crate) fn headers(
    provider: &str,
    pairs: &[(&'static str, &str)],
) -> Result<HeaderMap, ProviderError> {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        let value = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
            ProviderError::InvalidRequest {
                reason: format!("{provider}: header `{name}` has characters HTTP does not allow"),
            }
        })?;
        map.insert(*name, value);
    }
    Ok(map)
}

/// JSON content type plus `authorization: Bearer KEY` when there is a key
/// (OpenAI-compatible chat and embeddings, Voyage).
pub(crate) fn bearer_headers(
    provider: &str,
    key: Option<&crate::secret::ApiKey>,
) -> Result<HeaderMap, ProviderError> {
    let bearer = key.map(|k| format!("Bearer {}", k.expose()));
    let mut pairs = vec![("content-type", "application/json")];
    if let Some(bearer) = &bearer {
        pairs.push(("authorization", bearer.as_str()));
    }
    headers(provider, &pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_milliseconds() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        let mut date = HeaderMap::new();
        date.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&date), None);
    }

    #[test]
    fn error_messages_come_from_the_body() {
        assert_eq!(
            error_message(r#"{"error": {"type": "x", "message": "bad model"}}"#),
            "bad model"
        );
        assert_eq!(error_message(r#"{"detail": "Invalid key"}"#), "Invalid key");
        assert_eq!(error_message("plain text"), "plain text");
    }

    #[test]
    fn statuses_map_to_typed_errors() {
        let e = Endpoint::new(
            "openai",
            "http://x/v1/",
            "OPENAI_API_KEY",
            HttpConfig::default(),
        )
        .unwrap();
        assert_eq!(e.base_url, "http://x/v1");
        let none = HeaderMap::new();
        assert!(matches!(
            e.status_error(401, &none, "{}", "m"),
            ProviderError::Auth { .. }
        ));
        assert!(matches!(
            e.status_error(
                429,
                &none,
                r#"{"error":{"message":"You exceeded your current quota"}}"#,
                "m"
            ),
            ProviderError::QuotaExhausted { .. }
        ));
        assert!(e.status_error(429, &none, "{}", "m").is_retryable());
        assert!(e.status_error(529, &none, "overloaded", "m").is_retryable());
        assert!(e.status_error(408, &none, "", "m").is_retryable());
        assert!(!e.status_error(400, &none, "", "m").is_retryable());
        let nf = e.status_error(404, &none, "{}", "gpt-9");
        assert_eq!(
            nf.to_string(),
            "openai: model `gpt-9` not found at http://x/v1 ({})"
        );
    }
}
