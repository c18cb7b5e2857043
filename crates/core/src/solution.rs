//! The judge's synthesized solution of a proposal/critique debate (seed 004).

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::PersonaId;

/// A solution the judge synthesized after a round. In a debate that stops on
/// convergence the judge synthesizes after every round; the last solution
/// recorded is the debate's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Solution {
    /// The round it synthesizes (the debate's last round so far).
    pub round: u32,
    /// The solution itself.
    pub description: String,
    /// Trade-offs the solution accepts.
    #[serde(default)]
    pub tradeoffs: Vec<String>,
    /// Recommendations for whoever builds it.
    #[serde(default)]
    pub recommendations: Vec<String>,
    /// The judge's confidence in it, 0-100 (`None` for a plain-text
    /// synthesis written after the structured one failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<u8>,
    /// Requirements of the problem the solution does not meet yet, in the
    /// judge's words (what solutions recorded before requirements were
    /// tracked carry; new ones leave it empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unfinished_requirements: Vec<String>,
    /// The major requirements the judge says the solution does not meet:
    /// requirement ids (`R2`) where the debate tracks them, the judge's
    /// words otherwise (dialectic 0.7's `unfulfilledMajorRequirements`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unfulfilled_major_requirements: Vec<String>,
    /// Questions the judge says are still open (dialectic 0.7's
    /// `openQuestions`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_questions: Vec<String>,
    /// Major requirements the judge reported as met although no agent's
    /// latest proposal covers them on the ledger (ids); the solution
    /// carries this note instead of the judge's word alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unverified_requirements: Vec<String>,
    /// The judge who wrote it.
    pub synthesized_by: PersonaId,
    /// When it was recorded.
    pub time: DateTime<Utc>,
}
