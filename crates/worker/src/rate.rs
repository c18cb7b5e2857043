//! Provider rate limits shared by every worker: a token bucket per
//! provider key in PostgreSQL ([`PgRateGate`], an [`agon_llm::RateGate`]).
//!
//! Each bucket holds one second of requests (at least one) and ten seconds
//! of tokens. A request takes one request and its estimated tokens; when
//! the bucket is short it waits for the refill. A 429 empties the bucket
//! and pauses the key for the provider's `Retry-After` (5 s without one),
//! so every worker slows, not just the one that was refused. Bucket rows
//! are locked (`FOR UPDATE`) while read and written, so two workers never
//! spend the same allowance.

use std::time::Duration;

use agon_llm::RateGate;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::error::WorkerError;

/// The pause after a 429 that gave no `Retry-After`.
const DEFAULT_PAUSE: Duration = Duration::from_secs(5);

/// The longest a request waits between two looks at its bucket.
const MAX_WAIT: Duration = Duration::from_secs(5);

/// One provider's limits, per minute.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RateLimit {
    /// Requests per minute (`None`: unlimited).
    pub requests_per_minute: Option<f64>,
    /// Prompt tokens per minute (`None`: unlimited).
    pub tokens_per_minute: Option<f64>,
}

/// A named limit: `PROVIDER=120/min,200000tok/min` (the name is a
/// provider, `openai`, or one endpoint, `openai-compatible@http://host/v1`).
#[derive(Debug, Clone, PartialEq)]
pub struct NamedRateLimit {
    /// The provider or the provider key it limits.
    pub name: String,
    /// The limits.
    pub limit: RateLimit,
}

impl std::str::FromStr for NamedRateLimit {
    type Err = WorkerError;

    fn from_str(spec: &str) -> Result<Self, WorkerError> {
        let bad = |reason: &str| WorkerError::RateLimit {
            spec: spec.to_owned(),
            reason: reason.to_owned(),
        };
        let (name, rates) = spec.split_once('=').ok_or_else(|| {
            bad("expected PROVIDER=RATE[,RATE], e.g. openai=500/min,200000tok/min")
        })?;
        if name.trim().is_empty() {
            return Err(bad("the provider name is empty"));
        }
        let mut limit = RateLimit::default();
        for rate in rates.split(',').map(str::trim) {
            let (amount, per) = rate
                .split_once('/')
                .ok_or_else(|| bad("a rate is N/s, N/min, Ntok/s or Ntok/min"))?;
            let seconds = match per {
                "s" | "sec" => 1.0,
                "min" | "m" => 60.0,
                _ => return Err(bad("the period is /s or /min")),
            };
            let (number, tokens) = match amount.strip_suffix("tok") {
                Some(n) => (n, true),
                None => (amount, false),
            };
            let value: f64 = number
                .trim()
                .parse()
                .map_err(|_| bad("the amount is not a number"))?;
            if !(value.is_finite() && value > 0.0) {
                return Err(bad("the amount must be positive"));
            }
            let per_minute = value * 60.0 / seconds;
            if tokens {
                limit.tokens_per_minute = Some(per_minute);
            } else {
                limit.requests_per_minute = Some(per_minute);
            }
        }
        Ok(Self {
            name: name.trim().to_owned(),
            limit,
        })
    }
}

/// The shared token buckets, in the queue's database.
#[derive(Debug, Clone)]
pub struct PgRateGate {
    pool: PgPool,
}

/// A bucket as stored.
#[derive(Debug, sqlx::FromRow)]
struct Bucket {
    name: String,
    requests_per_minute: Option<f64>,
    tokens_per_minute: Option<f64>,
    requests: f64,
    tokens: f64,
    updated_at: DateTime<Utc>,
    paused_until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
}

/// What a bucket decides for one request.
#[derive(Debug, PartialEq)]
enum Decision {
    Admit {
        requests: f64,
        tokens: f64,
    },
    Wait {
        requests: f64,
        tokens: f64,
        wait: Duration,
    },
}

impl Bucket {
    fn request_capacity(&self) -> Option<f64> {
        self.requests_per_minute.map(|r| (r / 60.0).max(1.0))
    }

    fn token_capacity(&self) -> Option<f64> {
        self.tokens_per_minute.map(|t| (t / 6.0).max(1.0))
    }

    /// Refills by the time elapsed, then takes one request of `tokens`
    /// (a request larger than the bucket waits for a full bucket).
    fn decide(&self, tokens: u32) -> Decision {
        let elapsed = (self.now - self.updated_at)
            .to_std()
            .unwrap_or_default()
            .as_secs_f64();
        let refill = |held: f64, per_minute: Option<f64>, capacity: Option<f64>| match (
            per_minute, capacity,
        ) {
            (Some(rate), Some(cap)) => (held + elapsed * rate / 60.0).min(cap),
            _ => held,
        };
        let requests = refill(
            self.requests,
            self.requests_per_minute,
            self.request_capacity(),
        );
        let held_tokens = refill(self.tokens, self.tokens_per_minute, self.token_capacity());
        if let Some(until) = self.paused_until.filter(|u| *u > self.now) {
            let wait = (until - self.now).to_std().unwrap_or_default();
            return Decision::Wait {
                requests: 0.0,
                tokens: held_tokens,
                wait,
            };
        }
        let need_tokens = self
            .token_capacity()
            .map_or(0.0, |cap| f64::from(tokens).min(cap));
        let short_requests = self.requests_per_minute.map_or(0.0, |_| 1.0 - requests);
        let short_tokens = self
            .tokens_per_minute
            .map_or(0.0, |_| need_tokens - held_tokens);
        if short_requests <= 1e-9 && short_tokens <= 1e-9 {
            return Decision::Admit {
                requests: self.requests_per_minute.map_or(0.0, |_| requests - 1.0),
                tokens: self
                    .tokens_per_minute
                    .map_or(0.0, |_| held_tokens - need_tokens),
            };
        }
        let seconds = |short: f64, per_minute: Option<f64>| match per_minute {
            Some(rate) if short > 0.0 => short * 60.0 / rate,
            _ => 0.0,
        };
        let wait = seconds(short_requests, self.requests_per_minute)
            .max(seconds(short_tokens, self.tokens_per_minute));
        Decision::Wait {
            requests,
            tokens: held_tokens,
            wait: Duration::from_secs_f64(wait).min(MAX_WAIT),
        }
    }
}

/// The provider of a gate key (`openai@https://…` → `openai`): a limit
/// set for the provider covers every endpoint of it without one of its own.
fn provider_of(key: &str) -> &str {
    key.split_once('@').map_or(key, |(p, _)| p)
}

impl PgRateGate {
    /// The gate on `pool`'s database, creating its table if needed.
    pub async fn open(pool: PgPool) -> Result<Self, sqlx::Error> {
        crate::queue::create_tables(&pool).await?;
        Ok(Self { pool })
    }

    /// Sets the limits of `name` (a provider, or one provider key) for
    /// every worker, starting from a full bucket.
    pub async fn configure(&self, limit: &NamedRateLimit) -> Result<(), sqlx::Error> {
        let capacity = |per_minute: Option<f64>, seconds: f64| {
            per_minute.map_or(0.0, |r| (r * seconds / 60.0).max(1.0))
        };
        sqlx::query(
            "INSERT INTO agon_rate_limits
                 (name, requests_per_minute, tokens_per_minute, requests, tokens, updated_at)
             VALUES ($1, $2, $3, $4, $5, clock_timestamp())
             ON CONFLICT (name) DO UPDATE SET
                 requests_per_minute = EXCLUDED.requests_per_minute,
                 tokens_per_minute = EXCLUDED.tokens_per_minute,
                 requests = LEAST(agon_rate_limits.requests, EXCLUDED.requests),
                 tokens = LEAST(agon_rate_limits.tokens, EXCLUDED.tokens)",
        )
        .bind(&limit.name)
        .bind(limit.limit.requests_per_minute)
        .bind(limit.limit.tokens_per_minute)
        .bind(capacity(limit.limit.requests_per_minute, 1.0))
        .bind(capacity(limit.limit.tokens_per_minute, 10.0))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// One look at the bucket of `key`: admitted (`None`) or how long to
    /// wait before looking again.
    async fn try_admit(&self, key: &str, tokens: u32) -> Result<Option<Duration>, sqlx::Error> {
        let provider = provider_of(key);
        let mut tx = self.pool.begin().await?;
        let bucket: Option<Bucket> = sqlx::query_as(
            "SELECT name, requests_per_minute, tokens_per_minute, requests, tokens, updated_at,
                    paused_until, clock_timestamp() AS now
             FROM agon_rate_limits WHERE name = $1 OR name = $2
             ORDER BY length(name) DESC LIMIT 1 FOR UPDATE",
        )
        .bind(key)
        .bind(provider)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(bucket) = bucket else {
            return Ok(None);
        };
        let (requests, tokens, wait) = match bucket.decide(tokens) {
            Decision::Admit { requests, tokens } => (requests, tokens, None),
            Decision::Wait {
                requests,
                tokens,
                wait,
            } => (requests, tokens, Some(wait)),
        };
        sqlx::query(
            "UPDATE agon_rate_limits SET requests = $2, tokens = $3, updated_at = $4
             WHERE name = $1",
        )
        .bind(&bucket.name)
        .bind(requests)
        .bind(tokens)
        .bind(bucket.now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(wait)
    }

    async fn pause(&self, key: &str, pause: Duration) -> Result<(), sqlx::Error> {
        let provider = provider_of(key);
        let seconds = pause.as_secs_f64();
        // The key's own limit if it has one, else its provider's; a key
        // with neither gets a row of its own (no limit, the pause only).
        let updated = sqlx::query(
            "UPDATE agon_rate_limits SET requests = 0,
                 paused_until = GREATEST(COALESCE(paused_until, clock_timestamp()),
                                         clock_timestamp() + make_interval(secs => $3))
             WHERE name = (SELECT name FROM agon_rate_limits WHERE name = $1 OR name = $2
                           ORDER BY length(name) DESC LIMIT 1)",
        )
        .bind(key)
        .bind(provider)
        .bind(seconds)
        .execute(&self.pool)
        .await?;
        if updated.rows_affected() == 0 {
            sqlx::query(
                "INSERT INTO agon_rate_limits (name, paused_until)
                 VALUES ($1, clock_timestamp() + make_interval(secs => $2))
                 ON CONFLICT (name) DO UPDATE SET paused_until = EXCLUDED.paused_until",
            )
            .bind(key)
            .bind(seconds)
            .execute(&self.pool)
            .await?;
        }
        Ok(())
    }
}

#[async_trait]
impl RateGate for PgRateGate {
    async fn admit(&self, key: &str, tokens: u32) {
        loop {
            match self.try_admit(key, tokens).await {
                Ok(None) => return,
                Ok(Some(wait)) => tokio::time::sleep(wait.max(Duration::from_millis(5))).await,
                Err(e) => {
                    tracing::warn!(key, error = %e, "the shared rate limit cannot be read; sending without it");
                    return;
                }
            }
        }
    }

    async fn throttled(&self, key: &str, retry_after: Option<Duration>) {
        let pause = retry_after.unwrap_or(DEFAULT_PAUSE);
        if let Err(e) = self.pause(key, pause).await {
            tracing::warn!(key, error = %e, "a 429 could not be shared with the other workers");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(
        rpm: Option<f64>,
        tpm: Option<f64>,
        requests: f64,
        tokens: f64,
        elapsed_ms: i64,
    ) -> Bucket {
        let now = Utc::now();
        Bucket {
            name: "p".into(),
            requests_per_minute: rpm,
            tokens_per_minute: tpm,
            requests,
            tokens,
            updated_at: now - chrono::Duration::milliseconds(elapsed_ms),
            paused_until: None,
            now,
        }
    }

    #[test]
    fn limits_parse_per_second_and_per_minute() {
        let l: NamedRateLimit = "openai=500/min,200000tok/min".parse().unwrap();
        assert_eq!(l.name, "openai");
        assert_eq!(l.limit.requests_per_minute, Some(500.0));
        assert_eq!(l.limit.tokens_per_minute, Some(200_000.0));
        let l: NamedRateLimit = "openai-compatible@http://h/v1=5/s".parse().unwrap();
        assert_eq!(l.name, "openai-compatible@http://h/v1");
        assert_eq!(l.limit.requests_per_minute, Some(300.0));
        for bad in [
            "openai",
            "=5/s",
            "openai=5",
            "openai=5/h",
            "openai=x/s",
            "openai=-1/s",
        ] {
            let e = bad.parse::<NamedRateLimit>().unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
    }

    #[test]
    fn a_full_bucket_admits_and_an_empty_one_waits_for_the_refill() {
        // 60/min = 1/s: a full bucket (1 request) admits one.
        let b = bucket(Some(60.0), None, 1.0, 0.0, 0);
        assert!(matches!(b.decide(100), Decision::Admit { requests, .. } if requests.abs() < 1e-9));
        // Empty, 250 ms later: a quarter refilled, wait the other 750 ms.
        let b = bucket(Some(60.0), None, 0.0, 0.0, 250);
        match b.decide(100) {
            Decision::Wait { wait, requests, .. } => {
                assert!((requests - 0.25).abs() < 0.01, "{requests}");
                assert!((wait.as_secs_f64() - 0.75).abs() < 0.01, "{wait:?}");
            }
            other => panic!("{other:?}"),
        }
        // The refill never exceeds one second's requests.
        let b = bucket(Some(60.0), None, 0.0, 0.0, 60_000);
        assert!(matches!(b.decide(1), Decision::Admit { requests, .. } if requests.abs() < 1e-9));
    }

    #[test]
    fn tokens_limit_too_and_a_pause_holds_everyone() {
        // 6,000 tok/min: capacity 1,000, refilled 100/s.
        let b = bucket(None, Some(6000.0), 0.0, 400.0, 0);
        match b.decide(600) {
            Decision::Wait { wait, .. } => assert!((wait.as_secs_f64() - 2.0).abs() < 0.01),
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(b.decide(300), Decision::Admit { tokens, .. } if (tokens - 100.0).abs() < 1e-9)
        );
        let mut b = bucket(Some(600.0), None, 10.0, 0.0, 0);
        b.paused_until = Some(b.now + chrono::Duration::seconds(3));
        match b.decide(1) {
            Decision::Wait { wait, .. } => assert!(wait >= Duration::from_millis(2900)),
            other => panic!("{other:?}"),
        }
    }
}
