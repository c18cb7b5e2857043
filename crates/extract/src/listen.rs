//! A listening agent's answer to "should you respond now?" (seed 002).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::text::{Limits, clean};
use super::{Payload, Validated};
use agon_core::PersonaId;
use agon_core::{Bid, MAX_URGENCY};

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

/// A decision the group reached, as the analysis model reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DecisionPayload {
    /// What was decided about, a few words.
    #[schemars(length(max = 80))]
    pub topic: String,
    /// What was decided, one sentence.
    #[schemars(length(max = 300))]
    pub outcome: String,
}

/// A reaction to a listed proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReactionPayload {
    /// The proposal's id as listed (`P3`).
    #[schemars(length(max = 12))]
    pub proposal: String,
    /// `support`, `oppose` or `neutral`.
    pub reaction: agon_core::Reaction,
}

/// What one message of a deliberation contributes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MessageDetection {
    /// The message's id, as listed (`msg-12`).
    #[schemars(length(max = 40))]
    pub message: String,
    /// A new proposal the message makes, one sentence (null when none).
    #[serde(default)]
    #[schemars(length(max = 300))]
    pub proposal: Option<String>,
    /// A decision the message records the group as having reached (null
    /// when none).
    #[serde(default)]
    pub decision: Option<DecisionPayload>,
    /// Its reactions to the listed proposals.
    #[serde(default)]
    #[schemars(length(max = 4))]
    pub reactions: Vec<ReactionPayload>,
}

/// The analysis model's reading of a batch of deliberation messages for
/// proposals, decisions and reactions (seed 002, by model instead of by
/// pattern).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DeliberationDetection {
    /// One entry per message listed.
    #[schemars(length(max = 40))]
    pub messages: Vec<MessageDetection>,
}

impl Payload for DeliberationDetection {
    const NAME: &'static str = "deliberation_detection";
}

impl DeliberationDetection {
    /// Cleans every text (junk and placeholders rejected, lengths bounded),
    /// drops a decision without both topic and outcome, reactions to
    /// proposals that are not ids (`P3`), entries without a message id, and
    /// a message's second entry. Always valid: an empty reading is a reading.
    pub fn validate(&self) -> Validated<Self> {
        let mut notes = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut messages = Vec::new();
        for entry in &self.messages {
            let message = entry.message.trim().to_owned();
            if message.is_empty() || !seen.insert(message.clone()) {
                notes.push(format!(
                    "messages: dropped an entry for {:?} (no id, or a second entry)",
                    entry.message
                ));
                continue;
            }
            let proposal = entry
                .proposal
                .as_deref()
                .and_then(|p| clean(p, Limits::SENTENCE, "messages.proposal", &mut notes));
            let decision = entry.decision.as_ref().and_then(|d| {
                let topic = clean(&d.topic, 80, "messages.decision.topic", &mut notes)?;
                let outcome = clean(
                    &d.outcome,
                    Limits::SENTENCE,
                    "messages.decision.outcome",
                    &mut notes,
                )?;
                Some(DecisionPayload { topic, outcome })
            });
            let reactions = entry
                .reactions
                .iter()
                .filter_map(|r| {
                    let id = r.proposal.trim().trim_matches(['[', ']']).to_uppercase();
                    let ok = id.len() > 1
                        && id.starts_with('P')
                        && id[1..].chars().all(|c| c.is_ascii_digit());
                    if !ok {
                        notes.push(format!(
                            "messages.reactions: dropped a reaction to {:?} (not a proposal id)",
                            r.proposal
                        ));
                    }
                    ok.then_some(ReactionPayload {
                        proposal: id,
                        reaction: r.reaction,
                    })
                })
                .take(4)
                .collect();
            messages.push(MessageDetection {
                message,
                proposal,
                decision,
                reactions,
            });
        }
        Validated::new(Self { messages }, notes, 0)
    }
}
