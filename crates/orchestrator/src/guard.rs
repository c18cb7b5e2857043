//! The budget's check before every model call: once the debate spent a
//! limit in full (the reserve included), no further call is made. The
//! step-level stop ([`agon_core::DebateEvent::BudgetReached`], short of
//! the reserve) is the interpreter's; this guard catches what one step
//! spends past it (a parallel group, a wrap-up larger than its reserve).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use agon_core::{Budget, BudgetKind, Spent, StepId};
use agon_llm::{ScopeUsage, UsageLedger, UsageScope};
use agon_protocol::{FailureKind, ModelFailure};
use chrono::{DateTime, Utc};

/// The first call the guard refused: which step, which limit, the limit
/// and what was spent of it (in the limit's unit).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    pub(crate) step: StepId,
    pub(crate) kind: BudgetKind,
    pub(crate) limit: f64,
    pub(crate) used: f64,
}

/// A run's spending against its debate's budget.
pub(crate) struct BudgetGuard {
    budget: Budget,
    /// Tokens and dollars earlier runs of the debate recorded.
    before_tokens: u64,
    before_cost: f64,
    /// When the debate started (or this run, for a debate not started).
    started: DateTime<Utc>,
    ledger: Arc<UsageLedger>,
    baseline: BTreeMap<UsageScope, ScopeUsage>,
    refused: Mutex<Option<Refusal>>,
}

impl BudgetGuard {
    /// The guard of a run of a debate whose blackboard is `board`, its
    /// calls metered into `ledger` from `baseline` on.
    pub(crate) fn new(
        budget: Budget,
        board: &agon_core::Blackboard,
        ledger: Arc<UsageLedger>,
        baseline: BTreeMap<UsageScope, ScopeUsage>,
    ) -> Self {
        let before = board.usage_total();
        Self {
            budget,
            before_tokens: before.input_tokens + before.output_tokens,
            before_cost: before.cost_micro_usd as f64 / 1e6,
            started: board.started_at().unwrap_or_else(Utc::now),
            ledger,
            baseline,
            refused: Mutex::new(None),
        }
    }

    /// The debate's limits, checked before every step (the stop short of
    /// the reserve, the interpreter's) and every model call (the limit).
    pub(crate) fn budget(&self) -> Budget {
        self.budget
    }

    /// What the debate spent: earlier runs' recorded usage, this run's
    /// calls so far, the minutes since its start.
    pub(crate) fn spent(&self) -> Spent {
        let this_run = self.ledger.since(&self.baseline);
        let tokens: u64 = this_run
            .values()
            .map(|u| u.usage.input_tokens + u.usage.output_tokens)
            .sum();
        let cost: f64 = this_run.values().map(|u| u.cost_usd).sum();
        Spent {
            tokens: self.before_tokens + tokens,
            cost_usd: self.before_cost + cost,
            minutes: (Utc::now() - self.started).num_milliseconds().max(0) as f64 / 60_000.0,
        }
    }

    /// Lets a call of `step` go, or refuses it when a limit is spent in
    /// full; the first refusal is kept for the interpreter to record.
    pub(crate) fn admit(&self, step: &StepId) -> Result<(), ModelFailure> {
        if !self.budget.is_set() {
            return Ok(());
        }
        let Some((kind, limit, used)) = self.budget.exhausted(self.spent()) else {
            return Ok(());
        };
        if let Ok(mut refused) = self.refused.lock()
            && refused.is_none()
        {
            *refused = Some(Refusal {
                step: step.clone(),
                kind,
                limit,
                used,
            });
        }
        Err(ModelFailure::new(
            FailureKind::Budget,
            format!("not asked: the debate's {} budget is spent", kind.unit()),
        ))
    }

    /// The first refused call, if any.
    pub(crate) fn refusal(&self) -> Option<Refusal> {
        self.refused.lock().ok().and_then(|r| r.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agon_llm::{PriceTable, Usage};

    fn usage(input_tokens: u64) -> Usage {
        Usage::new(input_tokens, 0)
    }

    fn ledger_with(tokens: u64) -> Arc<UsageLedger> {
        let ledger = Arc::new(UsageLedger::new(PriceTable::default()));
        ledger.record("debater", "m", usage(tokens));
        ledger
    }

    #[test]
    fn a_call_is_refused_once_a_limit_is_spent_in_full_and_the_first_refusal_is_kept() {
        let board = agon_core::Blackboard::new();
        let budget = Budget {
            max_tokens: Some(1_000),
            reserve: 0.2,
            ..Budget::default()
        };
        // 900 of 1,000 is past the stop (800) but short of the limit.
        let ledger = ledger_with(900);
        let guard = BudgetGuard::new(budget, &board, Arc::clone(&ledger), BTreeMap::new());
        assert!(guard.admit(&StepId::MemorySetup).is_ok());
        assert_eq!(guard.refusal(), None);
        ledger.record("judge", "m", usage(100));
        let refused = guard.admit(&StepId::Solution(2)).unwrap_err();
        assert_eq!(refused.kind, FailureKind::Budget);
        assert!(
            refused.reason.contains("tokens budget is spent"),
            "{refused:?}"
        );
        guard.admit(&StepId::MemorySetup).unwrap_err();
        let first = guard.refusal().unwrap();
        assert_eq!(first.step, StepId::Solution(2));
        assert_eq!((first.limit, first.used), (1_000.0, 1_000.0));
    }

    #[test]
    fn no_budget_refuses_nothing() {
        let board = agon_core::Blackboard::new();
        let guard = BudgetGuard::new(
            Budget::default(),
            &board,
            ledger_with(u64::MAX / 4),
            BTreeMap::new(),
        );
        assert!(guard.admit(&StepId::MemorySetup).is_ok());
    }
}
