//! Structured round records (one per aspect round).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{AspectId, PersonaId};

/// One persona's structured take in a round.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct PersonaTake {
    /// Their stance on the aspect.
    pub position: String,
    /// The strongest argument they made.
    pub key_argument: String,
    /// Specific evidence or data they referenced.
    pub evidence_cited: Vec<String>,
    /// Who they mainly engaged with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targeted_persona: Option<PersonaId>,
}

/// What happened in one aspect round, per persona (replaces a lossy 1-2 sentence summary).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoundRecord {
    /// The aspect debated.
    pub aspect: AspectId,
    /// Round number.
    pub round: u32,
    /// Per-persona takes.
    pub takes: BTreeMap<PersonaId, PersonaTake>,
    /// One or two sentences for quick reference.
    pub summary: String,
    /// Disputes that emerged in the round.
    pub new_disagreements: Vec<String>,
    /// Position changes observed in the round.
    pub shifts: Vec<String>,
}
