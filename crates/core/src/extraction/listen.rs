//! A listening agent's answer to "should you respond now?" (seed 002).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::text::{Limits, clean};
use super::{Payload, Validated};
use crate::deliberation::{Bid, MAX_URGENCY};
use crate::ids::PersonaId;

/// Whether an agent wants the next turn of a deliberation, and how urgently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListenAnswer {
    /// Whether you want to speak next.
    pub respond: bool,
    /// How urgently, 0 (no need) to 10 (must answer now).
    #[schemars(range(max = 10))]
    pub urgency: u8,
    /// Why, one sentence.
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub reason: String,
}

impl Payload for ListenAnswer {
    const NAME: &'static str = "listen";
}

impl ListenAnswer {
    /// Clamps the urgency to 0–10 and bounds the reason; an agent that
    /// declines gets urgency 0, one that volunteers at least 1. Always valid.
    pub fn validate(&self) -> Validated<Self> {
        let mut notes = Vec::new();
        let mut urgency = self.urgency;
        if urgency > MAX_URGENCY {
            notes.push(format!("urgency: clamped {urgency} to {MAX_URGENCY}"));
            urgency = MAX_URGENCY;
        }
        if !self.respond {
            urgency = 0;
        } else if urgency == 0 {
            notes.push("urgency: a volunteer's urgency 0 raised to 1".into());
            urgency = 1;
        }
        let reason =
            clean(&self.reason, Limits::SENTENCE, "reason", &mut notes).unwrap_or_default();
        Validated::new(
            Self {
                respond: self.respond,
                urgency,
                reason,
            },
            notes,
            0,
        )
    }

    /// The bid of `persona` this answer makes.
    pub fn bid(&self, persona: &PersonaId) -> Bid {
        Bid {
            persona: persona.clone(),
            respond: self.respond,
            urgency: self.urgency.min(MAX_URGENCY),
            reason: self.reason.clone(),
        }
    }
}
