//! A configuration resolved for its protocol: one variant per protocol
//! with that protocol's rules, and the settings every run has. The file's
//! flat shape (what TOML, dialectic's JSON and the flags fill in, and what
//! is stored with each debate) is read by its protocol in one place,
//! [`DebateConfig::resolve`](crate::DebateConfig::resolve).

use std::sync::Arc;

use agon_core::{PersonaId, ProtocolKind};
use agon_protocol::{
    Deliberation, DeliberationRules, Dialectic, DialecticRules, Protocol, StructuredDebate,
    StructuredRules,
};

/// The protocol a configuration runs, with its rules.
#[derive(Debug, Clone, PartialEq)]
pub enum ProtocolConfig {
    /// Seed 000's structured debate.
    Structured(StructuredRules),
    /// Seed 004's dialectic.
    Dialectic(DialecticRules),
    /// Seeds 001 + 002's deliberation.
    Deliberation(DeliberationRules),
}

impl ProtocolConfig {
    /// Which protocol this is.
    pub fn kind(&self) -> ProtocolKind {
        match self {
            Self::Structured(_) => ProtocolKind::Structured,
            Self::Dialectic(_) => ProtocolKind::Dialectic,
            Self::Deliberation(_) => ProtocolKind::Deliberation,
        }
    }

    /// The protocol, ready to run.
    pub fn into_protocol(self) -> Arc<dyn Protocol> {
        match self {
            Self::Structured(rules) => Arc::new(StructuredDebate::new(rules)),
            Self::Dialectic(rules) => Arc::new(Dialectic::new(rules)),
            Self::Deliberation(rules) => Arc::new(Deliberation::new(rules)),
        }
    }
}

/// What every run has, whatever its protocol, as this protocol sets it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// Tokens of assembled context per utterance call.
    pub context_tokens: usize,
    /// The word limit stated to speakers.
    pub utterance_words: u32,
    /// The most tokens an utterance may generate.
    pub utterance_max_tokens: u32,
    /// Model specs of individual personas (by persona id).
    pub persona_models: Vec<(String, String)>,
    /// The judge's own model spec, if it has one.
    pub judge_model: Option<String>,
    /// The personas with a temperature of their own, with it.
    pub persona_temperatures: Vec<(PersonaId, f32)>,
    /// The agents that may call tools: their tools and the most calls per
    /// contribution.
    pub agent_tools: Vec<(PersonaId, Vec<String>, usize)>,
    /// The directory the file tools are confined to.
    pub context_dir: Option<std::path::PathBuf>,
}

/// A configuration resolved for its protocol.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The protocol and its rules.
    pub protocol: ProtocolConfig,
    /// The settings every run has.
    pub run: RunConfig,
}
