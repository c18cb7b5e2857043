//! Usage and cost accounting: a price table per model id and a ledger that
//! sums usage by caller-chosen scope (a debate, a role, …).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::StreamExt;
use serde::{Deserialize, Serialize};

use tracing::Instrument as _;

use crate::error::ProviderError;
use crate::telemetry;
use crate::traits::{ChatModel, ChatStream};
use crate::types::{ChatRequest, ChatResponse, JsonResponse, JsonSchema, Usage};

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Per million input tokens.
    pub input_per_mtok: f64,
    /// Per million output tokens.
    pub output_per_mtok: f64,
    /// Per million input tokens read from the prompt cache (the input
    /// price when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_per_mtok: Option<f64>,
    /// Per million input tokens written to the prompt cache (the input
    /// price when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_per_mtok: Option<f64>,
}

impl Price {
    /// A price without cache rates (cached tokens cost as much as others).
    pub fn new(input_per_mtok: f64, output_per_mtok: f64) -> Self {
        Self {
            input_per_mtok,
            output_per_mtok,
            cached_input_per_mtok: None,
            cache_write_per_mtok: None,
        }
    }

    /// This price with cache reads at `read` and cache writes at `write`
    /// (USD per million tokens).
    pub fn with_cache(mut self, read: f64, write: f64) -> Self {
        self.cached_input_per_mtok = Some(read);
        self.cache_write_per_mtok = Some(write);
        self
    }

    /// The cost of `usage` had no prompt cache served or written any of
    /// it: every input token at the input rate. Against [`Price::cost`]
    /// it is what the cache saved (less, when writes cost more than reads
    /// saved).
    pub fn cost_without_cache(&self, usage: Usage) -> f64 {
        self.cost(Usage::new(usage.input_tokens, usage.output_tokens))
    }

    /// The cost of `usage` at this price: uncached input, cache reads,
    /// cache writes and output, each at its rate.
    pub fn cost(&self, usage: Usage) -> f64 {
        let read = self.cached_input_per_mtok.unwrap_or(self.input_per_mtok);
        let write = self.cache_write_per_mtok.unwrap_or(self.input_per_mtok);
        (usage.uncached_input_tokens() as f64 * self.input_per_mtok
            + usage.cached_input_tokens as f64 * read
            + usage.cache_write_tokens as f64 * write
            + usage.output_tokens as f64 * self.output_per_mtok)
            / 1e6
    }
}

/// Prices by model id. Lookups match the id exactly, else the longest
/// configured prefix (so `claude-3-5-haiku-20241022` finds `claude-3-5-haiku`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PriceTable {
    prices: HashMap<String, Price>,
}

impl PriceTable {
    /// List prices of common models (USD per million tokens), as published
    /// by the providers, with their prompt-cache rates: Anthropic bills
    /// cache reads at 0.1× and (5-minute) cache writes at 1.25× the input
    /// price; OpenAI bills cached input at 0.5× (GPT-4o) or 0.25×
    /// (GPT-4.1) and has no write charge. Local models cost nothing.
    /// Override with [`PriceTable::set`] (a config's `[prices]`).
    pub fn with_defaults() -> Self {
        let mut table = Self::default();
        for (model, input, output, read, write) in [
            ("claude-3-5-haiku", 0.80, 4.00, 0.08, 1.00),
            ("claude-3-haiku", 0.25, 1.25, 0.03, 0.30),
            ("claude-sonnet-4", 3.00, 15.00, 0.30, 3.75),
            ("claude-3-7-sonnet", 3.00, 15.00, 0.30, 3.75),
            ("claude-3-5-sonnet", 3.00, 15.00, 0.30, 3.75),
            ("claude-opus-4", 15.00, 75.00, 1.50, 18.75),
            ("gpt-4o-mini", 0.15, 0.60, 0.075, 0.15),
            ("gpt-4o", 2.50, 10.00, 1.25, 2.50),
            ("gpt-4.1-mini", 0.40, 1.60, 0.10, 0.40),
            ("gpt-4.1", 2.00, 8.00, 0.50, 2.00),
            ("voyage-3", 0.06, 0.0, 0.06, 0.06),
            ("text-embedding-3-small", 0.02, 0.0, 0.02, 0.02),
            ("SmolLM2", 0.0, 0.0, 0.0, 0.0),
        ] {
            table.set(model, Price::new(input, output).with_cache(read, write));
        }
        table
    }

    /// Sets (or overrides) a model's price.
    pub fn set(&mut self, model: impl Into<String>, price: Price) {
        self.prices.insert(model.into(), price);
    }

    /// The price of `model`, if known.
    pub fn price(&self, model: &str) -> Option<Price> {
        self.prices.get(model).copied().or_else(|| {
            self.prices
                .iter()
                .filter(|(prefix, _)| model.starts_with(prefix.as_str()))
                .max_by_key(|(prefix, _)| prefix.len())
                .map(|(_, price)| *price)
        })
    }
}

/// Totals of one scope.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ScopeUsage {
    /// Calls recorded.
    pub calls: u64,
    /// Tokens.
    pub usage: Usage,
    /// Cost of the priced calls, USD.
    pub cost_usd: f64,
    /// What the priced calls would have cost had no prompt cache served
    /// or written any input, USD ([`Price::cost_without_cache`]).
    #[serde(default)]
    pub cost_without_cache_usd: f64,
    /// Calls whose model has no price (not in `cost_usd`).
    pub unpriced_calls: u64,
    /// Where the calls' time went.
    #[serde(default)]
    pub time: ModelTime,
}

/// The time of a scope's calls: their wall time as the caller waited
/// (queueing and retries included), and, for models that report it, the
/// compute spent on prompts and on generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ModelTime {
    /// Wall time of the calls, summed (calls that overlap count twice).
    pub wall: std::time::Duration,
    /// Compute the models reported, summed.
    pub compute: crate::types::CallTiming,
}

impl ModelTime {
    /// These times less `earlier` ones (never below zero).
    pub fn minus(&self, earlier: &ModelTime) -> ModelTime {
        ModelTime {
            wall: self.wall.saturating_sub(earlier.wall),
            compute: crate::types::CallTiming {
                prompt: self.compute.prompt.saturating_sub(earlier.compute.prompt),
                generation: self
                    .compute
                    .generation
                    .saturating_sub(earlier.compute.generation),
            },
        }
    }
}

impl std::ops::AddAssign for ModelTime {
    fn add_assign(&mut self, rhs: ModelTime) {
        self.wall += rhs.wall;
        self.compute = self.compute + rhs.compute;
    }
}

impl ScopeUsage {
    /// What prompt caching saved on the priced calls, USD: negative when
    /// cache writes (Anthropic's 1.25×) cost more than the reads saved.
    pub fn cache_saving_usd(&self) -> f64 {
        self.cost_without_cache_usd - self.cost_usd
    }

    /// These totals less `earlier` ones of the same scope (never below zero).
    pub fn minus(&self, earlier: &ScopeUsage) -> ScopeUsage {
        ScopeUsage {
            calls: self.calls.saturating_sub(earlier.calls),
            usage: self.usage.saturating_sub(&earlier.usage),
            cost_usd: (self.cost_usd - earlier.cost_usd).max(0.0),
            cost_without_cache_usd: (self.cost_without_cache_usd - earlier.cost_without_cache_usd)
                .max(0.0),
            unpriced_calls: self.unpriced_calls.saturating_sub(earlier.unpriced_calls),
            time: self.time.minus(&earlier.time),
        }
    }
}

/// Where a call's usage is summed: a caller-chosen role (a debate's role,
/// `debate-1/debater`, …) and, for per-model scopes, the model that
/// answered (a fallback chain's second model when the first failed, a
/// provider's versioned id).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UsageScope {
    /// The role (or any caller-chosen name).
    pub role: String,
    /// The model that answered, for per-model scopes.
    pub model: Option<String>,
}

impl UsageScope {
    /// A scope for `role` alone.
    pub fn new(role: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            model: None,
        }
    }

    /// `role`'s scope for calls `model` answered.
    pub fn per_model(role: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            model: Some(model.into()),
        }
    }
}

impl std::fmt::Display for UsageScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.model {
            Some(model) => write!(f, "{} ({model})", self.role),
            None => f.write_str(&self.role),
        }
    }
}

impl From<&str> for UsageScope {
    fn from(role: &str) -> Self {
        Self::new(role)
    }
}

/// Sums usage and cost by scope. Shared (`Arc`) by everyone who records.
#[derive(Debug, Default)]
pub struct UsageLedger {
    prices: PriceTable,
    totals: Mutex<BTreeMap<UsageScope, ScopeUsage>>,
}

impl UsageLedger {
    /// A ledger pricing with `prices`.
    pub fn new(prices: PriceTable) -> Self {
        Self {
            prices,
            totals: Mutex::new(BTreeMap::new()),
        }
    }

    /// Records one call of `model` under `scope`.
    pub fn record(&self, scope: impl Into<UsageScope>, model: &str, usage: Usage) {
        self.record_timed(scope, model, usage, ModelTime::default());
    }

    /// Records one call of `model` under `scope`, with its time.
    pub fn record_timed(
        &self,
        scope: impl Into<UsageScope>,
        model: &str,
        usage: Usage,
        time: ModelTime,
    ) {
        let price = self.prices.price(model);
        if let Ok(mut totals) = self.totals.lock() {
            let entry = totals.entry(scope.into()).or_default();
            entry.calls += 1;
            entry.usage += usage;
            entry.time += time;
            match price {
                Some(price) => {
                    entry.cost_usd += price.cost(usage);
                    entry.cost_without_cache_usd += price.cost_without_cache(usage);
                }
                None => entry.unpriced_calls += 1,
            }
        }
    }

    /// Totals of one scope.
    pub fn scope(&self, scope: impl Into<UsageScope>) -> ScopeUsage {
        let scope = scope.into();
        self.totals
            .lock()
            .ok()
            .and_then(|t| t.get(&scope).copied())
            .unwrap_or_default()
    }

    /// Totals of every scope.
    pub fn snapshot(&self) -> BTreeMap<UsageScope, ScopeUsage> {
        self.totals.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// What was recorded since `baseline` (an earlier [`Self::snapshot`]),
    /// by scope; scopes with no call since are left out.
    pub fn since(
        &self,
        baseline: &BTreeMap<UsageScope, ScopeUsage>,
    ) -> BTreeMap<UsageScope, ScopeUsage> {
        self.snapshot()
            .into_iter()
            .map(|(scope, now)| {
                let delta = match baseline.get(&scope) {
                    Some(before) => now.minus(before),
                    None => now,
                };
                (scope, delta)
            })
            .filter(|(_, delta)| delta.calls > 0)
            .collect()
    }

    /// The sum over every scope.
    pub fn total(&self) -> ScopeUsage {
        self.snapshot()
            .values()
            .fold(ScopeUsage::default(), |mut acc, s| {
                acc.calls += s.calls;
                acc.usage += s.usage;
                acc.cost_usd += s.cost_usd;
                acc.cost_without_cache_usd += s.cost_without_cache_usd;
                acc.unpriced_calls += s.unpriced_calls;
                acc.time += s.time;
                acc
            })
    }
}

/// A [`ChatModel`] that records every call's usage in a ledger under a scope.
#[derive(Clone)]
pub struct Metered {
    inner: Arc<dyn ChatModel>,
    ledger: Arc<UsageLedger>,
    role: String,
    /// Whether the scope names the answering model too.
    per_model: bool,
}

impl std::fmt::Debug for Metered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metered")
            .field("model", &self.inner.model_id())
            .field("role", &self.role)
            .finish()
    }
}

impl Metered {
    /// Wraps `inner`, recording under the scope of `role`.
    pub fn new(
        inner: Arc<dyn ChatModel>,
        ledger: Arc<UsageLedger>,
        role: impl Into<String>,
    ) -> Self {
        Self {
            inner,
            ledger,
            role: role.into(),
            per_model: false,
        }
    }

    /// Wraps `inner`, recording under `role` and the model that answered
    /// ([`UsageScope::per_model`]): a fallback chain's second model when
    /// the first failed, a provider's versioned id, not the one configured.
    pub fn per_model(
        inner: Arc<dyn ChatModel>,
        ledger: Arc<UsageLedger>,
        role: impl Into<String>,
    ) -> Self {
        Self {
            per_model: true,
            ..Self::new(inner, ledger, role)
        }
    }

    /// The GenAI span of a call of this model.
    fn span(&self, request: &ChatRequest) -> tracing::Span {
        telemetry::call_span(
            self.inner.provider(),
            self.inner.model_id(),
            &self.role,
            request,
        )
    }

    /// Records a completed call: its span's response attributes and
    /// `output` (the text, or the JSON value), and its usage in the ledger.
    fn record(&self, span: &tracing::Span, response: &ChatResponse, output: &str) {
        telemetry::record_response(
            span,
            &response.model,
            response.usage,
            response.finish_reason.as_deref(),
        );
        telemetry::record_output(span, output);
        self.ledger.record_timed(
            self.scope_of(&response.model),
            &response.model,
            response.usage,
            ModelTime {
                wall: response.latency,
                compute: response.timing.unwrap_or_default(),
            },
        );
    }

    fn scope_of(&self, model: &str) -> UsageScope {
        if self.per_model {
            UsageScope::per_model(self.role.clone(), model)
        } else {
            UsageScope::new(self.role.clone())
        }
    }
}

#[async_trait]
impl ChatModel for Metered {
    fn provider(&self) -> &str {
        self.inner.provider()
    }

    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ProviderError> {
        let span = self.span(&request);
        let response = self
            .inner
            .complete(request)
            .instrument(span.clone())
            .await
            .inspect_err(|e| telemetry::record_error(&span, e))?;
        self.record(&span, &response, &response.content);
        Ok(response)
    }

    async fn complete_tools(
        &self,
        request: ChatRequest,
        tools: &[crate::types::ToolSpec],
        call_number: usize,
    ) -> Result<crate::types::ToolTurn, ProviderError> {
        let span = self.span(&request);
        let turn = self
            .inner
            .complete_tools(request, tools, call_number)
            .instrument(span.clone())
            .await
            .inspect_err(|e| telemetry::record_error(&span, e))?;
        self.record(&span, &turn.response, &turn.response.content);
        Ok(turn)
    }

    async fn complete_json(
        &self,
        request: ChatRequest,
        schema: &JsonSchema,
    ) -> Result<JsonResponse, ProviderError> {
        let span = self.span(&request);
        let response = self
            .inner
            .complete_json(request, schema)
            .instrument(span.clone())
            .await
            .inspect_err(|e| telemetry::record_error(&span, e))?;
        self.record(&span, &response.response, &response.value.to_string());
        Ok(response)
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, ProviderError> {
        let span = self.span(&request);
        let stream = self
            .inner
            .stream(request)
            .instrument(span.clone())
            .await
            .inspect_err(|e| telemetry::record_error(&span, e))?;
        let metered = self.clone();
        let model = self.inner.model_id().to_owned();
        let started = std::time::Instant::now();
        let mut text = String::new();
        // The span lives as long as the stream: it ends with the last
        // chunk, which carries the usage.
        Ok(Box::pin(stream.inspect(move |chunk| match chunk {
            Ok(chunk) => {
                if telemetry::capturing() {
                    text.push_str(&chunk.delta);
                }
                if chunk.finish_reason.is_some() {
                    telemetry::record_output(&span, &text);
                }
                if let Some(usage) = chunk.usage
                    && chunk.finish_reason.is_some()
                {
                    let answered = chunk.model.as_deref().unwrap_or(&model);
                    telemetry::record_response(
                        &span,
                        answered,
                        usage,
                        chunk.finish_reason.as_deref(),
                    );
                    metered.ledger.record_timed(
                        metered.scope_of(answered),
                        answered,
                        usage,
                        ModelTime {
                            wall: started.elapsed(),
                            compute: chunk.timing.unwrap_or_default(),
                        },
                    );
                }
            }
            Err(e) => telemetry::record_error(&span, e),
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_match_exactly_or_by_longest_prefix() {
        let table = PriceTable::with_defaults();
        assert_eq!(
            table
                .price("gpt-4o-mini-2024-07-18")
                .unwrap()
                .input_per_mtok,
            0.15
        );
        assert_eq!(
            table.price("gpt-4o-2024-08-06").unwrap().input_per_mtok,
            2.50
        );
        assert!(table.price("mystery-model").is_none());
    }

    #[test]
    fn the_ledger_sums_by_scope_and_counts_unpriced_calls() {
        let ledger = UsageLedger::new(PriceTable::with_defaults());
        let usage = Usage::new(1_000_000, 500_000);
        ledger.record("debate-1/debater", "claude-3-5-haiku-latest", usage);
        ledger.record("debate-1/debater", "claude-3-5-haiku-latest", usage);
        ledger.record("debate-1/extractor", "mystery", usage);
        let debater = ledger.scope("debate-1/debater");
        assert_eq!(debater.calls, 2);
        assert!(
            (debater.cost_usd - 2.0 * (0.80 + 2.0)).abs() < 1e-9,
            "{}",
            debater.cost_usd
        );
        let total = ledger.total();
        assert_eq!(total.calls, 3);
        assert_eq!(total.unpriced_calls, 1);
        assert_eq!(total.usage.input_tokens, 3_000_000);
    }

    #[test]
    fn cached_and_written_tokens_are_priced_at_their_rates() {
        let table = PriceTable::with_defaults();
        let sonnet = table.price("claude-sonnet-4-20250514").unwrap();
        // 1M prompt tokens: 600k read from the cache, 100k written to it,
        // 300k neither; 10k out.
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 10_000,
            cached_input_tokens: 600_000,
            cache_write_tokens: 100_000,
        };
        let expected = 0.3 * 3.00 + 0.6 * 0.30 + 0.1 * 3.75 + 0.01 * 15.00;
        assert!(
            (sonnet.cost(usage) - expected).abs() < 1e-9,
            "{}",
            sonnet.cost(usage)
        );
        // Without cache rates, cached tokens cost as much as the others.
        let plain = Price::new(3.00, 15.00);
        assert!((plain.cost(usage) - (3.00 + 0.15)).abs() < 1e-9);
        // OpenAI: cached input at half price, nothing written.
        let gpt = table.price("gpt-4o-2024-08-06").unwrap();
        let cached = Usage {
            cached_input_tokens: 400_000,
            ..Usage::new(1_000_000, 0)
        };
        assert!((gpt.cost(cached) - (0.6 * 2.50 + 0.4 * 1.25)).abs() < 1e-9);
        // What the cache saved: the same input, uncached, less the cost.
        assert!((sonnet.cost_without_cache(usage) - (3.00 + 0.15)).abs() < 1e-9);
        let ledger = UsageLedger::new(table);
        ledger.record("extractor", "claude-sonnet-4-20250514", usage);
        ledger.record("extractor", "gpt-4o-2024-08-06", cached);
        ledger.record("extractor", "mystery-model", cached);
        let total = ledger.total();
        let saved = (3.15 - expected) + (2.50 - (0.6 * 2.50 + 0.4 * 1.25));
        assert!((total.cache_saving_usd() - saved).abs() < 1e-9, "{total:?}");
        // Writes that cost more than the reads saved: a negative saving.
        let written = Usage {
            cache_write_tokens: 1_000_000,
            ..Usage::new(1_000_000, 0)
        };
        assert!(sonnet.cost(written) > sonnet.cost_without_cache(written));
    }

    #[test]
    fn per_model_scopes_are_typed_and_separate_from_the_roles_own() {
        let ledger = UsageLedger::new(PriceTable::with_defaults());
        let usage = Usage::new(10, 5);
        // A role name may hold any character: the model is a field, not a
        // suffix parsed back.
        ledger.record(
            UsageScope::per_model("judge|x", "gpt-4o-mini"),
            "gpt-4o-mini",
            usage,
        );
        ledger.record(UsageScope::per_model("judge|x", "claude"), "claude", usage);
        ledger.record("judge|x", "gpt-4o-mini", usage);
        let snapshot = ledger.snapshot();
        assert_eq!(snapshot.len(), 3);
        let scope = UsageScope::per_model("judge|x", "claude");
        assert_eq!(ledger.scope(scope.clone()).calls, 1);
        assert_eq!(scope.to_string(), "judge|x (claude)");
        assert_eq!(ledger.scope("judge|x").calls, 1, "the role's own scope");
        let since = ledger.since(&snapshot);
        assert!(since.is_empty(), "nothing since the snapshot");
    }
}
