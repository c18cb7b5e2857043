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
    /// Requirements of the problem the solution does not meet yet.
    #[serde(default)]
    pub unfinished_requirements: Vec<String>,
    /// The judge who wrote it.
    pub synthesized_by: PersonaId,
    /// When it was recorded.
    pub time: DateTime<Utc>,
}
