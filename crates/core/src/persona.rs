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

/// A built-in agent role (dialectic's roles, seed 004), stored by its
/// lower-case name.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AgentRole {
    /// System design: components, boundaries, data flow, evolution.
    Architect,
    /// Latency, throughput, resource use, scaling.
    Performance,
    /// Threats, trust boundaries, data protection.
    Security,
    /// Testability, verification strategy, failure detection.
    Testing,
    /// Simplicity: challenges every piece of complexity.
    Kiss,
    /// Data and domain modeling: entities, schemas, persistence,
    /// consistency (dialectic's `datamodeling`).
    #[serde(rename = "datamodeling")]
    DataModeling,
    /// A balanced generalist (the judge's default role).
    Generalist,
}

impl AgentRole {
    /// Every built-in role.
    pub const ALL: [AgentRole; 7] = [
        Self::Architect,
        Self::Performance,
        Self::Security,
        Self::Testing,
        Self::Kiss,
        Self::DataModeling,
        Self::Generalist,
    ];

    /// The role's name in configs, logs and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Architect => "architect",
            Self::Performance => "performance",
            Self::Security => "security",
            Self::Testing => "testing",
            Self::Kiss => "kiss",
            Self::DataModeling => "datamodeling",
            Self::Generalist => "generalist",
        }
    }

    /// The default display name of an agent in this role.
    pub fn display_name(self) -> &'static str {
        match self {
            Self::Architect => "System Architect",
            Self::Performance => "Performance Engineer",
            Self::Security => "Security Specialist",
            Self::Testing => "Test Engineer",
            Self::Kiss => "Simplicity Advocate",
            Self::DataModeling => "Data Modeling Specialist",
            Self::Generalist => "Generalist",
        }
    }
}

impl std::fmt::Display for AgentRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A role name that is not built in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown role `{0}` (built-in roles: architect, performance, security, testing, kiss, datamodeling, generalist)"
)]
pub struct UnknownRole(pub String);

impl std::str::FromStr for AgentRole {
    type Err = UnknownRole;

    /// A role by its name, in any case, surrounding spaces ignored;
    /// `data-modeling` and `data_modeling` name `datamodeling`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase();
        let bare: String = s.chars().filter(|c| !matches!(c, '-' | '_')).collect();
        Self::ALL
            .into_iter()
            .find(|r| r.as_str() == s || (*r == Self::DataModeling && r.as_str() == bare))
            .ok_or(UnknownRole(s))
    }
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
    /// The functional role a dialectic agent plays (architect, security,
    /// …), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub specialty: Option<AgentRole>,
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn agent_roles_are_stored_by_their_names_and_parsed_leniently() {
        for role in AgentRole::ALL {
            let stored = serde_json::to_value(role).unwrap();
            assert_eq!(stored, serde_json::json!(role.as_str()));
            assert_eq!(serde_json::from_value::<AgentRole>(stored).unwrap(), role);
            assert_eq!(
                format!(" {} ", role.as_str().to_uppercase()).parse(),
                Ok(role)
            );
        }
        let e = "wizard".parse::<AgentRole>().unwrap_err();
        assert!(e.to_string().contains("unknown role `wizard`"), "{e}");
        // A persona written before roles were typed reads the same.
        let persona: Persona = serde_json::from_value(serde_json::json!({
            "id": "agent-kiss", "name": "Simplicity Advocate", "contract": "brief",
            "voice": "", "role": "debater", "specialty": "kiss"
        }))
        .unwrap();
        assert_eq!(persona.specialty, Some(AgentRole::Kiss));
    }
}
