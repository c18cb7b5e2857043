//! Seed 001's rolling summary as a pure planner: for a transcript of any
//! length and a token budget, which span the rolling summary must cover,
//! which messages stay verbatim, and when a new summary is due.
//!
//! Rule: the messages after the latest summary stay verbatim while they fit
//! the recent budget and number fewer than `keep_recent_turns +
//! resummarize_every`. When either limit is passed a new summary is due; it
//! covers everything before a cut that leaves the last `keep_recent_turns`
//! messages verbatim (fewer if they do not fit the recent budget). With the
//! defaults a summary is made every 50 turns and 50–100 messages stay
//! verbatim, as in seed 001 ("Turn 51-100: summary of 1-50 + full 51-100").

use agon_core::MessageSpan;
use serde::{Deserialize, Serialize};

use crate::error::ContextError;

/// The budgets and cadence of the rolling summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RollingSummaryPolicy {
    /// Tokens of one agent's whole view (default 8000).
    pub total_tokens: usize,
    /// Tokens reserved for the system prompt (default 2000).
    pub system_tokens: usize,
    /// Tokens the summary may take (default 1000).
    pub summary_tokens: usize,
    /// Tokens for verbatim recent messages (default 5000).
    pub recent_tokens: usize,
    /// Summarize again after this many new turns (default 50).
    pub resummarize_every: usize,
    /// Messages kept verbatim right after a summary (default 50).
    pub keep_recent_turns: usize,
}

impl Default for RollingSummaryPolicy {
    fn default() -> Self {
        Self {
            total_tokens: 8_000,
            system_tokens: 2_000,
            summary_tokens: 1_000,
            recent_tokens: 5_000,
            resummarize_every: 50,
            keep_recent_turns: 50,
        }
    }
}

impl RollingSummaryPolicy {
    /// Checks that the parts fit the total and the cadence is positive.
    pub fn validate(&self) -> Result<(), ContextError> {
        let parts = self.system_tokens + self.summary_tokens + self.recent_tokens;
        if parts > self.total_tokens {
            return Err(ContextError::BudgetTooSmall {
                budget: self.total_tokens,
                minimum: parts,
            });
        }
        if self.resummarize_every == 0 || self.recent_tokens == 0 {
            return Err(ContextError::BudgetTooSmall {
                budget: 0,
                minimum: 1,
            });
        }
        Ok(())
    }
}

/// Why a new summary is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DueReason {
    /// `resummarize_every` turns have passed.
    Cadence,
    /// The unsummarized messages no longer fit the recent budget.
    Budget,
}

/// A summary that should be produced now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SummaryDue {
    /// What the new summary must cover: always from the start of the transcript.
    pub covers: MessageSpan,
    /// The messages to fold into the previous summary (the new part).
    pub fold: MessageSpan,
    /// Why.
    pub reason: DueReason,
    /// Maximum tokens of the new summary.
    pub max_tokens: usize,
}

/// What an agent's view of the transcript consists of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TranscriptPlan {
    /// What the summary shown now covers (empty if there is none).
    pub summary: MessageSpan,
    /// Messages shown verbatim (after the due summary, if one is due).
    pub verbatim: MessageSpan,
    /// A summary to produce now, if due.
    pub due: Option<SummaryDue>,
}

/// Plans the view of a transcript whose messages have `message_tokens`
/// tokens each, when the latest summary covers the first `covered` messages.
pub fn plan(
    message_tokens: &[usize],
    covered: usize,
    policy: &RollingSummaryPolicy,
) -> TranscriptPlan {
    let n = message_tokens.len();
    let covered = covered.min(n);
    // Smallest start whose suffix fits the recent budget.
    let mut fit_start = n;
    let mut sum = 0usize;
    while fit_start > 0 && sum + message_tokens[fit_start - 1] <= policy.recent_tokens {
        fit_start -= 1;
        sum += message_tokens[fit_start];
    }
    let reason = if fit_start > covered {
        Some(DueReason::Budget)
    } else if n - covered >= policy.keep_recent_turns + policy.resummarize_every {
        Some(DueReason::Cadence)
    } else {
        None
    };
    match reason {
        None => TranscriptPlan {
            summary: MessageSpan {
                start: 0,
                end: covered,
            },
            verbatim: MessageSpan {
                start: covered,
                end: n,
            },
            due: None,
        },
        Some(reason) => {
            let cut = fit_start
                .max(n.saturating_sub(policy.keep_recent_turns))
                .max(covered);
            TranscriptPlan {
                summary: MessageSpan {
                    start: 0,
                    end: covered,
                },
                verbatim: MessageSpan { start: cut, end: n },
                due: Some(SummaryDue {
                    covers: MessageSpan { start: 0, end: cut },
                    fold: MessageSpan {
                        start: covered,
                        end: cut,
                    },
                    reason,
                    max_tokens: policy.summary_tokens,
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RollingSummaryPolicy {
        RollingSummaryPolicy::default()
    }

    #[test]
    fn short_transcript_is_all_verbatim() {
        let p = plan(&[40; 30], 0, &policy());
        assert_eq!(p.verbatim, MessageSpan { start: 0, end: 30 });
        assert!(p.summary.is_empty());
        assert_eq!(p.due, None);
    }

    #[test]
    fn cadence_fires_at_100_unsummarized_turns_and_keeps_the_last_50() {
        assert_eq!(plan(&[10; 99], 0, &policy()).due, None);
        let p = plan(&[10; 100], 0, &policy());
        let due = p.due.unwrap();
        assert_eq!(due.reason, DueReason::Cadence);
        assert_eq!(due.covers, MessageSpan { start: 0, end: 50 });
        assert_eq!(
            p.verbatim,
            MessageSpan {
                start: 50,
                end: 100
            }
        );
        // After that summary, the next one is due 50 turns later.
        assert_eq!(plan(&[10; 149], 50, &policy()).due, None);
        let next = plan(&[10; 150], 50, &policy()).due.unwrap();
        assert_eq!(next.covers, MessageSpan { start: 0, end: 100 });
        assert_eq!(
            next.fold,
            MessageSpan {
                start: 50,
                end: 100
            }
        );
    }

    #[test]
    fn budget_pressure_fires_early_and_verbatim_fits_the_recent_budget() {
        let tokens = vec![400; 30]; // 12,000 tokens, recent budget 5,000
        let p = plan(&tokens, 0, &policy());
        let due = p.due.unwrap();
        assert_eq!(due.reason, DueReason::Budget);
        let verbatim: usize = tokens[p.verbatim.start..p.verbatim.end].iter().sum();
        assert!(verbatim <= 5_000);
        assert_eq!(p.verbatim.len(), 12);
        assert_eq!(due.covers.end, p.verbatim.start);
    }

    #[test]
    fn a_single_message_over_the_recent_budget_is_summarized() {
        let p = plan(&[6_000], 0, &policy());
        assert_eq!(p.verbatim.len(), 0);
        assert_eq!(p.due.unwrap().covers, MessageSpan { start: 0, end: 1 });
    }

    #[test]
    fn policy_validation_checks_the_parts() {
        assert!(policy().validate().is_ok());
        let bad = RollingSummaryPolicy {
            recent_tokens: 7_000,
            ..policy()
        };
        assert!(bad.validate().is_err());
    }
}
