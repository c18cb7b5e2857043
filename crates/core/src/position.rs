//! The per-persona position ledger.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{AspectId, PersonaId};

/// How heated a disagreement is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Intensity {
    /// A difference of emphasis.
    #[default]
    Mild,
    /// A direct, heated clash.
    Strong,
}

/// A persona's position on one aspect.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct AspectPosition {
    /// One-sentence position.
    pub position: String,
    /// Evidence and reasoning they cited.
    pub evidence: Vec<String>,
    /// Challenges they face and have not answered.
    pub challenged: Vec<String>,
}

/// "X agrees with Y on Z".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Agreement {
    /// The other persona.
    pub with: PersonaId,
    /// What they agree on.
    pub on: String,
    /// Round in which it was recorded.
    pub round: u32,
}

/// "X disagrees with Y on Z, mildly or strongly".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Disagreement {
    /// The other persona.
    pub with: PersonaId,
    /// What they disagree on.
    pub on: String,
    /// How heated.
    pub intensity: Intensity,
    /// Round in which it was recorded.
    pub round: u32,
    /// The rubric criteria it turns on, as the analysis cited them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub criteria: Vec<String>,
}

/// A dated note (concession or shift).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LedgerNote {
    /// What happened, one sentence.
    pub text: String,
    /// Round in which it was recorded.
    pub round: u32,
}

/// What a persona has said and committed to so far; updated by the orchestrator after each message.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct PersonaPositionState {
    /// One-sentence overall stance on the topic (empty until first extracted).
    pub overall_stance: String,
    /// The first overall stance recorded (empty until one is).
    #[serde(default)]
    pub initial_stance: String,
    /// Per-aspect positions.
    pub aspects: BTreeMap<AspectId, AspectPosition>,
    /// Agreements with other personas, oldest first.
    pub agreements: Vec<Agreement>,
    /// Disagreements with other personas, oldest first.
    pub disagreements: Vec<Disagreement>,
    /// Things the persona backed down on.
    pub concessions: Vec<LedgerNote>,
    /// Positions that evolved, with direction.
    pub shifts: Vec<LedgerNote>,
    /// Round of the last update (staleness).
    pub last_updated_round: u32,
}
