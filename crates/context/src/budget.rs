//! Token budgets.

use serde::Serialize;

use crate::error::ContextError;

/// How many tokens an assembled context may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ContextBudget {
    total: usize,
}

impl ContextBudget {
    /// The smallest budget accepted. Below it the section headings alone
    /// could crowd out the content; at or above it the assembled context is
    /// guaranteed to fit.
    pub const MIN_TOKENS: usize = 128;

    /// Seed 000's estimate of a full context (450-800 tokens) with headroom.
    pub const DEFAULT_TOKENS: usize = 1_200;

    /// A budget of `total` tokens; fails below [`ContextBudget::MIN_TOKENS`].
    pub fn new(total: usize) -> Result<Self, ContextError> {
        if total < Self::MIN_TOKENS {
            return Err(ContextError::BudgetTooSmall {
                budget: total,
                minimum: Self::MIN_TOKENS,
            });
        }
        Ok(Self { total })
    }

    /// The total in tokens.
    pub fn total(&self) -> usize {
        self.total
    }
}

impl Default for ContextBudget {
    fn default() -> Self {
        Self {
            total: Self::DEFAULT_TOKENS,
        }
    }
}
