//! A debate's budget: the limits a run checks before every step, and the
//! record of the stop when one is reached
//! ([`crate::DebateEvent::BudgetReached`]), after which every protocol
//! wraps up (its judge or synthesis, where it has one) and finishes.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which limit a debate reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BudgetKind {
    /// Prompt and answer tokens, every call of every run.
    Tokens,
    /// Cost in US dollars of the priced calls.
    Cost,
    /// Minutes since the debate started.
    Minutes,
}

impl BudgetKind {
    /// `value` (in the limit's unit: tokens, dollars, minutes) in the
    /// smallest unit a [`BudgetStop`] records (tokens, millionths of a
    /// dollar, seconds).
    pub fn smallest(self, value: f64) -> u64 {
        let scale = match self {
            Self::Tokens => 1.0,
            Self::Cost => 1e6,
            Self::Minutes => 60.0,
        };
        (value * scale).round().max(0.0) as u64
    }

    /// The limit's unit, for reports.
    pub fn unit(self) -> &'static str {
        match self {
            Self::Tokens => "tokens",
            Self::Cost => "USD",
            Self::Minutes => "minutes",
        }
    }
}

/// The limits of a debate (any may be absent), and the share of each kept
/// for the wrap-up: the stop comes at `(1 − reserve) × limit`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Budget {
    /// Most tokens (prompt + answer) over every call.
    pub max_tokens: Option<u64>,
    /// Most cost in US dollars (priced calls; local models cost nothing).
    pub max_cost_usd: Option<f64>,
    /// Most minutes since the debate started.
    pub max_minutes: Option<f64>,
    /// The share of each limit kept for the wrap-up (0 to 0.5).
    pub reserve: f64,
}

/// What a debate has spent, as the budget counts it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spent {
    /// Tokens, prompt and answer.
    pub tokens: u64,
    /// US dollars.
    pub cost_usd: f64,
    /// Minutes since the start.
    pub minutes: f64,
}

impl Budget {
    /// Whether any limit is set.
    pub fn is_set(&self) -> bool {
        self.max_tokens.is_some() || self.max_cost_usd.is_some() || self.max_minutes.is_some()
    }

    /// The first limit `spent` reached (at its share before the reserve):
    /// which, the limit and what was spent of it.
    pub fn reached(&self, spent: Spent) -> Option<(BudgetKind, f64, f64)> {
        self.reached_share(spent, 1.0 - self.reserve.clamp(0.0, 0.5))
    }

    /// The first limit `spent` reached in full, reserve included: from
    /// then on no model call is made.
    pub fn exhausted(&self, spent: Spent) -> Option<(BudgetKind, f64, f64)> {
        self.reached_share(spent, 1.0)
    }

    fn reached_share(&self, spent: Spent, share: f64) -> Option<(BudgetKind, f64, f64)> {
        let checks = [
            (
                BudgetKind::Tokens,
                self.max_tokens.map(|t| t as f64),
                spent.tokens as f64,
            ),
            (BudgetKind::Cost, self.max_cost_usd, spent.cost_usd),
            (BudgetKind::Minutes, self.max_minutes, spent.minutes),
        ];
        checks.into_iter().find_map(|(kind, limit, used)| {
            let limit = limit?;
            (used >= limit * share).then_some((kind, limit, used))
        })
    }
}

/// The record of a budget stop. Amounts are in the limit's smallest unit:
/// tokens, millionths of a US dollar, seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BudgetStop {
    /// Which limit was reached.
    pub kind: BudgetKind,
    /// The limit.
    pub limit: u64,
    /// What was spent of it when the stop came.
    pub used: u64,
    /// The share kept for the wrap-up, in percent (0 in the record of a
    /// limit reached in full, [`crate::DebateEvent::BudgetExhausted`]).
    pub reserve_percent: u8,
    /// Where the debate stood (its progress line: `round 2/5 ·
    /// critiques`).
    pub at: String,
    /// When.
    pub time: DateTime<Utc>,
}

impl BudgetStop {
    /// One line for reports and logs: `tokens: 9,120 of 10,000 (10 %
    /// reserved for the wrap-up) at round 2/5 · critiques`.
    pub fn describe(&self) -> String {
        let amount = |v: u64| match self.kind {
            BudgetKind::Cost => format!("${:.4}", v as f64 / 1e6),
            BudgetKind::Minutes => format!("{:.1}", v as f64 / 60.0),
            BudgetKind::Tokens => v.to_string(),
        };
        if self.reserve_percent == 0 {
            return format!(
                "{}: {} of {} at {}",
                self.kind.unit(),
                amount(self.used),
                amount(self.limit),
                self.at
            );
        }
        format!(
            "{}: {} of {} ({} % reserved for the wrap-up) at {}",
            self.kind.unit(),
            amount(self.used),
            amount(self.limit),
            self.reserve_percent,
            self.at
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_describes_itself_in_its_unit() {
        let stop = BudgetStop {
            kind: BudgetKind::Cost,
            limit: BudgetKind::Cost.smallest(0.5),
            used: BudgetKind::Cost.smallest(0.4512),
            reserve_percent: 10,
            at: "round 2/5 · critiques".into(),
            time: DateTime::UNIX_EPOCH,
        };
        assert_eq!(
            stop.describe(),
            "USD: $0.4512 of $0.5000 (10 % reserved for the wrap-up) at round 2/5 · critiques"
        );
    }

    #[test]
    fn the_stop_comes_before_the_reserve() {
        let budget = Budget {
            max_tokens: Some(10_000),
            max_cost_usd: Some(0.5),
            max_minutes: None,
            reserve: 0.1,
        };
        let spent = |tokens, cost_usd| Spent {
            tokens,
            cost_usd,
            minutes: 99.0,
        };
        assert_eq!(budget.reached(spent(8_999, 0.1)), None);
        assert_eq!(
            budget.reached(spent(9_000, 0.1)),
            Some((BudgetKind::Tokens, 10_000.0, 9_000.0))
        );
        assert_eq!(
            budget.reached(spent(10, 0.45)),
            Some((BudgetKind::Cost, 0.5, 0.45))
        );
        assert!(!Budget::default().is_set());
        assert_eq!(Budget::default().reached(spent(u64::MAX, 1e9)), None);
    }
}
