//! The reflection trigger of seed 000: reflections fire when meaningful
//! epistemic events accumulate, not on a timer.

use serde::{Deserialize, Serialize};

/// Weights of the epistemic events counted towards the next reflection.
#[derive(Debug)]
pub struct EpistemicWeights;

impl EpistemicWeights {
    /// Each new disagreement.
    pub const DISAGREEMENT: u32 = 3;
    /// Each new concession.
    pub const CONCESSION: u32 = 4;
    /// Each new shift.
    pub const SHIFT: u32 = 5;
}

/// Fires when `disagreements×3 + concessions×4 + shifts×5` since the last
/// reflection is above `threshold`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReflectionTrigger {
    /// The weight must exceed this (default 15).
    pub threshold: u32,
}

impl Default for ReflectionTrigger {
    fn default() -> Self {
        Self {
            threshold: Self::DEFAULT_THRESHOLD,
        }
    }
}

impl ReflectionTrigger {
    /// Seed 000's example threshold.
    pub const DEFAULT_THRESHOLD: u32 = 15;

    /// A trigger with the given threshold.
    pub fn new(threshold: u32) -> Self {
        Self { threshold }
    }

    /// Whether a reflection is due for this weight.
    pub fn fires_at(&self, weight: u32) -> bool {
        weight > self.threshold
    }
}
