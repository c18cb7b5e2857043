//! Personas, the topic and its aspects: the static frame of a debate.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{AspectId, PersonaId};

/// What a persona does in the debate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PersonaRole {
    /// Takes part in the debate; has a position ledger.
    #[default]
    Debater,
    /// Synthesizes at the end; has no position ledger.
    Judge,
}

/// A participant: who it is, what it stands for (contract) and how it speaks (voice).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Persona {
    /// Stable id, unique within the debate.
    pub id: PersonaId,
    /// Display name, as other personas address it.
    pub name: String,
    /// The persona's commitments: beliefs, priorities, what it argues for.
    pub contract: String,
    /// Style of speech.
    pub voice: String,
    /// Debater (default) or judge.
    #[serde(default)]
    pub role: PersonaRole,
    /// The functional role a dialectic agent plays ("architect",
    /// "security", …), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub specialty: Option<String>,
}

impl Persona {
    /// A debater with the given id, name, contract and voice.
    pub fn debater(
        id: impl Into<PersonaId>,
        name: impl Into<String>,
        contract: impl Into<String>,
        voice: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            contract: contract.into(),
            voice: voice.into(),
            role: PersonaRole::Debater,
            specialty: None,
        }
    }

    /// Whether this persona debates (and so has a position ledger).
    pub fn is_debater(&self) -> bool {
        self.role == PersonaRole::Debater
    }
}

/// The question under debate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Topic {
    /// The question itself, one line.
    pub question: String,
    /// Optional background the debaters should know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl Topic {
    /// A topic with no background text.
    pub fn new(question: impl Into<String>) -> Self {
        Self {
            question: question.into(),
            context: None,
        }
    }
}

/// One aspect of the topic; each aspect is debated in its own round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DebateAspect {
    /// Stable id, unique within the debate.
    pub id: AspectId,
    /// Short label ("Time horizon").
    pub label: String,
    /// One-sentence description of the sub-question.
    pub description: String,
}

impl DebateAspect {
    /// An aspect from its id, label and description.
    pub fn new(
        id: impl Into<AspectId>,
        label: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            label: label.into(),
            description: description.into(),
        }
    }
}
