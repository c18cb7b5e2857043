//! An agent's standing in the trust memory (seed 003) as a debate reads
//! it: a snapshot the `trust_read` event records. The memory itself, and
//! how it scores, lives in `agon-trust`.

use serde::{Deserialize, Serialize};

/// Below this trust an agent's feedback is marked low-trust in the prompts
/// it reaches (the initial trust is 0.6; an agent falls
/// below this only after its dissents were ignored or its overrides
/// regretted).
pub const LOW_TRUST: f64 = 0.4;

/// An agent's standing in the trust memory when a debate read it: what
/// the prompts that weigh its feedback show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrustStanding {
    /// Its trust score in thousandths (0–1000).
    pub trust_milli: u16,
    /// Whether it is on probation (too few rounds behind it).
    pub on_probation: bool,
}

impl TrustStanding {
    /// Its trust score, 0–1.
    pub fn trust(&self) -> f64 {
        f64::from(self.trust_milli.min(1000)) / 1000.0
    }

    /// Whether its feedback is marked low-trust (below [`LOW_TRUST`]).
    pub fn is_low(&self) -> bool {
        self.trust() < LOW_TRUST
    }

    /// The label prompts show after the agent's name: `trust 0.82`,
    /// `low trust 0.15`, `trust 0.55, on probation`.
    pub fn label(&self) -> String {
        let trust = if self.is_low() {
            format!("low trust {:.2}", self.trust())
        } else {
            format!("trust {:.2}", self.trust())
        };
        if self.on_probation {
            format!("{trust}, on probation")
        } else {
            trust
        }
    }
}
