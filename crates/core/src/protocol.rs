//! Which protocol a debate runs, as recorded in its `debate_started`.

use serde::{Deserialize, Serialize};

/// Which protocol a debate runs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ProtocolKind {
    /// Seed 000: personas debate aspects in minirounds, crux rooms, closings, synthesis.
    #[default]
    Structured,
    /// Seed 004: role agents propose, critique and refine; a judge synthesizes.
    Dialectic,
    /// Seeds 001 + 002: a long free-form session with a three-tier memory.
    Deliberation,
}

impl ProtocolKind {
    /// Every protocol.
    pub const ALL: [ProtocolKind; 3] = [Self::Structured, Self::Dialectic, Self::Deliberation];

    /// The name used in configs, on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Structured => "structured",
            Self::Dialectic => "dialectic",
            Self::Deliberation => "deliberation",
        }
    }
}

impl std::fmt::Display for ProtocolKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
