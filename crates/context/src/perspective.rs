//! Seed 004's perspective summaries as pure functions: which messages an
//! agent's summary covers, when it must summarize, the judge's final-round
//! filter, and two-level (debate-wide, per-agent) settings.

use agon_core::{Blackboard, DialogueMessage, MessageKind, PersonaId};
use serde::{Deserialize, Serialize};

/// Summarization settings in force for one agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SummarizationSettings {
    /// Whether the agent summarizes at all.
    pub enabled: bool,
    /// Summarize when the perspective reaches this many characters (default 5000).
    pub threshold: usize,
    /// Maximum characters of a summary (default 2500).
    pub max_length: usize,
    /// Strategy name (default "length-based").
    pub method: String,
}

impl Default for SummarizationSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold: 5_000,
            max_length: 2_500,
            method: "length-based".to_owned(),
        }
    }
}

/// Per-agent overrides; `None` keeps the debate-wide value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SummarizationOverride {
    /// Overrides `enabled`.
    pub enabled: Option<bool>,
    /// Overrides `threshold`.
    pub threshold: Option<usize>,
    /// Overrides `max_length`.
    pub max_length: Option<usize>,
    /// Overrides `method`.
    pub method: Option<String>,
}

impl SummarizationSettings {
    /// The debate-wide settings with an agent's overrides applied.
    pub fn with_override(&self, agent: &SummarizationOverride) -> Self {
        Self {
            enabled: agent.enabled.unwrap_or(self.enabled),
            threshold: agent.threshold.unwrap_or(self.threshold),
            max_length: agent.max_length.unwrap_or(self.max_length),
            method: agent.method.clone().unwrap_or_else(|| self.method.clone()),
        }
    }
}

/// An agent's perspective: its own proposals, the critiques it received,
/// and its own refinements, in transcript order.
pub fn agent_perspective<'a>(
    blackboard: &'a Blackboard,
    persona: &PersonaId,
) -> Vec<&'a DialogueMessage> {
    blackboard
        .messages()
        .iter()
        .filter(|m| match &m.kind {
            MessageKind::Proposal | MessageKind::Refinement => &m.persona == persona,
            MessageKind::Critique { target } => target == persona,
            _ => false,
        })
        .collect()
}

/// Total characters of the messages' content.
pub fn total_chars(messages: &[&DialogueMessage]) -> usize {
    messages.iter().map(|m| m.content.chars().count()).sum()
}

/// Whether the agent must summarize its perspective before the next round.
pub fn needs_summary(
    blackboard: &Blackboard,
    persona: &PersonaId,
    settings: &SummarizationSettings,
) -> bool {
    settings.enabled && total_chars(&agent_perspective(blackboard, persona)) >= settings.threshold
}

/// The judge's view for synthesis: proposals and refinements of the final
/// round only (the highest round that has any message).
pub fn judge_final_round(blackboard: &Blackboard) -> Vec<&DialogueMessage> {
    let Some(last) = blackboard.messages().iter().map(|m| m.round).max() else {
        return Vec::new();
    };
    blackboard
        .messages()
        .iter()
        .filter(|m| {
            m.round == last && matches!(m.kind, MessageKind::Proposal | MessageKind::Refinement)
        })
        .collect()
}

/// Whether the judge must summarize the final round before synthesis.
pub fn judge_needs_summary(blackboard: &Blackboard, settings: &SummarizationSettings) -> bool {
    settings.enabled && total_chars(&judge_final_round(blackboard)) >= settings.threshold
}
