//! Crux cards: the structured outcome of a crux room.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{ClaimId, CruxCardId, CruxRoomId, PersonaId};

/// A persona's answer to the crux question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CruxStance {
    /// Yes.
    Yes,
    /// No.
    No,
    /// It depends.
    Nuanced,
}

impl CruxStance {
    /// Uppercase label, as serialized.
    pub fn label(self) -> &'static str {
        match self {
            Self::Yes => "YES",
            Self::No => "NO",
            Self::Nuanced => "NUANCED",
        }
    }
}

/// What the disagreement is really about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DisagreementType {
    /// Different time horizons.
    Horizon,
    /// Different readings of the evidence.
    Evidence,
    /// Different values or priorities.
    Values,
    /// Different definitions of terms.
    Definition,
    /// A disputed factual claim.
    Claim,
    /// A disputed underlying premise.
    Premise,
}

impl DisagreementType {
    /// Lowercase label, as serialized.
    pub fn label(self) -> &'static str {
        match self {
            Self::Horizon => "horizon",
            Self::Evidence => "evidence",
            Self::Values => "values",
            Self::Definition => "definition",
            Self::Claim => "claim",
            Self::Premise => "premise",
        }
    }
}

/// One persona's side of a crux card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CruxPosition {
    /// The persona.
    pub persona: PersonaId,
    /// YES, NO or NUANCED.
    pub stance: CruxStance,
    /// Why.
    pub reasoning: String,
    /// What would change their mind.
    pub falsifier: String,
}

/// The distilled result of a crux room.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CruxCard {
    /// Unique id within the debate.
    pub id: CruxCardId,
    /// The claim it settles, if it came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<ClaimId>,
    /// The room that produced it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub room: Option<CruxRoomId>,
    /// The crux question, answerable YES / NO / NUANCED.
    pub question: String,
    /// Each party's position.
    pub positions: Vec<CruxPosition>,
    /// What kind of disagreement it is.
    pub disagreement_type: DisagreementType,
    /// One-paragraph diagnosis of the disagreement.
    pub diagnosis: String,
    /// Whether the parties converged.
    pub resolved: bool,
    /// Round in which it was produced.
    pub round: u32,
}
