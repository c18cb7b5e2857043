//! Which model a call is for ([`ModelRole`]) and the role a usage record
//! is filed under ([`UsageRole`]): types, not strings, from the planner's
//! calls to the report's usage table.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a model call is for: which of the debate's models answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelRole {
    /// Debaters' utterances (openings, takes, crux turns, closings).
    Debater,
    /// Position extraction (and the combined disagreement judgement).
    Extractor,
    /// Separate disagreement detection.
    Detector,
    /// Round records and reflections.
    Reflector,
    /// Crux convergence checks and cards.
    Crux,
    /// Aspect decomposition and synthesis.
    Judge,
    /// A listening agent's "should I respond?" (deliberation, seed 002):
    /// the cheap model (default: the extractor's).
    Evaluator,
}

impl ModelRole {
    /// Every role.
    pub const ALL: [ModelRole; 7] = [
        ModelRole::Debater,
        ModelRole::Extractor,
        ModelRole::Detector,
        ModelRole::Reflector,
        ModelRole::Crux,
        ModelRole::Judge,
        ModelRole::Evaluator,
    ];

    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debater => "debater",
            Self::Extractor => "extractor",
            Self::Detector => "detector",
            Self::Reflector => "reflector",
            Self::Crux => "crux",
            Self::Judge => "judge",
            Self::Evaluator => "evaluator",
        }
    }
}

impl fmt::Display for ModelRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ModelRole {
    type Err = UnknownModelRole;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|r| r.as_str() == s.trim())
            .ok_or_else(|| UnknownModelRole(s.to_owned()))
    }
}

/// A name that is not one of Agon's model roles.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a model role (debater, extractor, detector, reflector, crux, judge, evaluator)"
)]
pub struct UnknownModelRole(pub String);

/// The role a `usage_recorded` event files its usage under: one of Agon's
/// model roles, or a name another writer recorded (an older log, an
/// imported file), kept as written so no usage is lost. Stored as its name;
/// compared, ordered and hashed by it (so a map keyed by it is looked up
/// by name).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum UsageRole {
    /// One of Agon's model roles.
    Model(ModelRole),
    /// Any other name.
    Other(String),
}

impl UsageRole {
    /// Its name, as stored.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Model(role) => role.as_str(),
            Self::Other(name) => name,
        }
    }

    /// The model role, when it is one.
    pub fn model_role(&self) -> Option<ModelRole> {
        match self {
            Self::Model(role) => Some(*role),
            Self::Other(_) => None,
        }
    }
}

impl From<ModelRole> for UsageRole {
    fn from(role: ModelRole) -> Self {
        Self::Model(role)
    }
}

impl From<&str> for UsageRole {
    fn from(name: &str) -> Self {
        name.parse()
            .map_or_else(|_| Self::Other(name.to_owned()), Self::Model)
    }
}

impl From<String> for UsageRole {
    fn from(name: String) -> Self {
        name.parse().map_or(Self::Other(name), Self::Model)
    }
}

impl fmt::Display for UsageRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for UsageRole {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for UsageRole {}

impl std::hash::Hash for UsageRole {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl std::borrow::Borrow<str> for UsageRole {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialOrd for UsageRole {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for UsageRole {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl From<UsageRole> for String {
    fn from(role: UsageRole) -> Self {
        match role {
            UsageRole::Model(role) => role.as_str().to_owned(),
            UsageRole::Other(name) => name,
        }
    }
}

impl schemars::JsonSchema for UsageRole {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "UsageRole".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn roles_read_back_as_written_and_unknown_names_are_kept() {
        for role in ModelRole::ALL {
            assert_eq!(role.as_str().parse::<ModelRole>(), Ok(role));
            let json = serde_json::to_string(&UsageRole::from(role)).unwrap();
            assert_eq!(json, format!("\"{}\"", role.as_str()));
            let back: UsageRole = serde_json::from_str(&json).unwrap();
            assert_eq!(back, UsageRole::Model(role));
        }
        let other: UsageRole = serde_json::from_str("\"summarizer\"").unwrap();
        assert_eq!(other, UsageRole::Other("summarizer".into()));
        assert_eq!(serde_json::to_string(&other).unwrap(), "\"summarizer\"");
        assert!(
            "poet"
                .parse::<ModelRole>()
                .unwrap_err()
                .to_string()
                .contains("`poet`")
        );
        // Ordered by name, as the usage table lists them.
        let mut roles = [
            UsageRole::from("judge"),
            UsageRole::from("crux"),
            UsageRole::from("debater"),
        ];
        roles.sort();
        assert_eq!(roles[0].as_str(), "crux");
    }
}
