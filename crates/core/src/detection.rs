//! Disagreement detection → contested claims.
//!
//! After each message a model judges the window of recent messages that ends
//! with it and reports the disagreements it sees, each with a confidence.
//! Those judgements are recorded on the blackboard ([`AnalyzedTurn`], from
//! [`crate::DebateEvent::TurnAnalyzed`]). `agon_protocol::ClaimDetector` turns them into
//! claims with Faultline's published rule: a claim opens for a pair of
//! personas when the confidence is at least 0.8 in 2 consecutive windows,
//! unless the pair already has an open claim or had one surface within the
//! cooldown. The rule is a pure function of the blackboard, so a resumed
//! debate opens exactly the claims an uninterrupted one would.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{MessageId, PersonaId};

/// One disagreement judged in a window: between whom, about what, how sure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JudgedDisagreement {
    /// The two parties, in id order.
    pub personas: [PersonaId; 2],
    /// The disputed statement, one sentence.
    pub claim: String,
    /// Confidence in percent (0-100).
    pub confidence: u8,
}

impl JudgedDisagreement {
    /// A judgement with the pair put in id order (so `(a, b)` and `(b, a)`
    /// are the same pair).
    pub fn new(a: PersonaId, b: PersonaId, claim: impl Into<String>, confidence: u8) -> Self {
        let personas = if a <= b { [a, b] } else { [b, a] };
        Self {
            personas,
            claim: claim.into(),
            confidence: confidence.min(100),
        }
    }
}

/// A message's analysis as recorded on the blackboard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalyzedTurn {
    /// The message analysed (the last message of its window).
    pub message: MessageId,
    /// Disagreements judged in the window.
    pub disagreements: Vec<JudgedDisagreement>,
    /// Whether the message ends a judged window (`false`: an earlier
    /// message of a batch, judged with the batch's last one).
    #[serde(default = "crate::serde_flags::yes")]
    pub window_end: bool,
}

impl AnalyzedTurn {
    /// A borrowed view of the turn.
    pub fn view(&self) -> TurnAnalyzedView<'_> {
        TurnAnalyzedView {
            message: &self.message,
            disagreements: &self.disagreements,
        }
    }
}

/// A borrowed analysed turn: recorded ([`AnalyzedTurn::view`]) or about to
/// be (the fields of a `turn_analyzed` event not yet applied).
#[derive(Debug, Clone, Copy)]
pub struct TurnAnalyzedView<'a> {
    /// The message analysed.
    pub message: &'a MessageId,
    /// Disagreements judged in its window.
    pub disagreements: &'a [JudgedDisagreement],
}
