//! Recording a run's model usage in the debate log.

use std::collections::BTreeMap;

use agon_core::{DebateEvent, DebateStatus};
use agon_llm::{ScopeUsage, UsageScope};

use crate::error::OrchestratorError;
use crate::models::Models;
use crate::shared::Shared;

/// The `usage_recorded` events of what the models used since `baseline`
/// (every scope is a role and the model that answered).
fn events(usage: BTreeMap<UsageScope, ScopeUsage>) -> Vec<DebateEvent> {
    usage
        .into_iter()
        .map(|(scope, u)| DebateEvent::UsageRecorded {
            role: scope.role.into(),
            model: scope.model.unwrap_or_default(),
            calls: u.calls,
            input_tokens: u.usage.input_tokens,
            output_tokens: u.usage.output_tokens,
            cached_input_tokens: u.usage.cached_input_tokens,
            cache_write_tokens: u.usage.cache_write_tokens,
            cost_micro_usd: (u.unpriced_calls < u.calls).then(|| (u.cost_usd * 1e6).round() as u64),
            cost_without_cache_micro_usd: (u.unpriced_calls < u.calls
                && u.usage.cached_input_tokens + u.usage.cache_write_tokens > 0)
                .then(|| (u.cost_without_cache_usd * 1e6).round() as u64),
        })
        .collect()
}

/// Appends this run's usage (everything since `baseline`), unless the
/// debate is already finished.
pub(crate) async fn record(
    shared: &Shared,
    models: &Models,
    baseline: &BTreeMap<UsageScope, ScopeUsage>,
) -> Result<(), OrchestratorError> {
    let usage = models.ledger().since(baseline);
    shared
        .append_with(|bb| {
            let events = if bb.status() == DebateStatus::Finished {
                Vec::new()
            } else {
                events(usage)
            };
            (events, ())
        })
        .await
}
