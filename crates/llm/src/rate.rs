//! Provider rate limits shared beyond one process: the [`RateGate`] seam.
//!
//! Every HTTP provider asks its gate before each request and tells it about
//! every 429, so a gate shared by several processes (Agon's workers keep
//! one in PostgreSQL, `agon-worker`) keeps all of them under a provider's
//! requests- and tokens-per-minute limits, and one worker's 429 slows every
//! worker. A gate never fails a call: when it cannot decide (its database is
//! down) it lets the request through and says so in the log.

use std::time::Duration;

use async_trait::async_trait;

/// Admission control for the requests of one provider key.
#[async_trait]
pub trait RateGate: Send + Sync + std::fmt::Debug {
    /// Waits until a request of about `tokens` prompt tokens may be sent
    /// with `key` (provider and endpoint).
    async fn admit(&self, key: &str, tokens: u32);

    /// The provider refused a request with 429: every user of `key` waits
    /// `retry_after` (the provider's `Retry-After`, or the gate's own
    /// pause when it sent none).
    async fn throttled(&self, key: &str, retry_after: Option<Duration>);
}

/// The gate key of an endpoint: its provider name and base URL (two keys
/// of one provider on different endpoints are limited apart).
pub fn gate_key(provider: &str, base_url: &str) -> String {
    format!("{provider}@{base_url}")
}

/// About how many tokens a request body holds (4 bytes a token), for the
/// tokens-per-minute limit before the provider has counted them.
pub fn estimated_tokens(body_bytes: usize) -> u32 {
    u32::try_from(body_bytes.div_ceil(4)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_provider_and_endpoint_and_tokens_round_up() {
        assert_eq!(
            gate_key("openai", "https://api.openai.com/v1"),
            "openai@https://api.openai.com/v1"
        );
        assert_eq!(estimated_tokens(0), 0);
        assert_eq!(estimated_tokens(5), 2);
        assert_eq!(estimated_tokens(4000), 1000);
    }
}
