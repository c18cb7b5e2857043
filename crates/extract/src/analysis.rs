//! Per-message analysis: the position update plus the disagreement
//! judgement over the window that the message ends, in one payload (one model
//! call per message), or the judgement alone for a separate detector.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::position::PositionUpdate;
use super::text::{Limits, clean};
use super::{ExtractionContext, ExtractionError, Payload, Validated};
use agon_core::DebateEvent;
use agon_core::JudgedDisagreement;
use agon_core::{AspectId, MessageId, PersonaId};

/// One disagreement between two participants, as judged by a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisagreementJudgmentPayload {
    /// The two participants' names.
    #[schemars(length(min = 2, max = 2), inner(length(max = 80)))]
    pub between: Vec<String>,
    /// The disputed statement, one sentence.
    #[schemars(length(max = 200))]
    pub claim: String,
    /// How sure the judge is that they really disagree, 0-100.
    #[schemars(range(min = 0, max = 100))]
    pub confidence: i64,
}

/// A detector's judgement of a window of recent messages.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct DisagreementWindow {
    /// Disagreements seen in the window (empty when there are none).
    #[schemars(length(max = 3))]
    pub disagreements: Vec<DisagreementJudgmentPayload>,
}

impl Payload for DisagreementWindow {
    const NAME: &'static str = "disagreement_window";
}

/// Position update and disagreement judgement in one payload.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct TurnAnalysis {
    /// What changed in the speaker's position state.
    pub position: PositionUpdate,
    /// Disagreements seen in the recent messages (empty when there are none).
    #[schemars(length(max = 2))]
    pub disagreements: Vec<DisagreementJudgmentPayload>,
}

impl Payload for TurnAnalysis {
    const NAME: &'static str = "turn_analysis";
}

/// The analysis of several messages in one call (a miniround of a
/// structured debate): each message's position update, and the
/// disagreements judged over the messages shown, once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BatchTurnAnalysis {
    /// One entry per message listed.
    #[schemars(length(max = 40))]
    pub updates: Vec<super::position::MessagePositionUpdate>,
    /// Disagreements seen in the messages (empty when there are none).
    #[serde(default)]
    #[schemars(length(max = 3))]
    pub disagreements: Vec<DisagreementJudgmentPayload>,
}

impl Payload for BatchTurnAnalysis {
    const NAME: &'static str = "batch_turn_analysis";
}

/// Validates judgements: both names must resolve to distinct debaters,
/// confidence is clamped to 0-100, the claim must not be empty; a pair judged
/// twice keeps its highest confidence.
fn validate_judgments(
    items: &[DisagreementJudgmentPayload],
    ctx: &ExtractionContext<'_>,
    notes: &mut Vec<String>,
) -> Vec<JudgedDisagreement> {
    let cleaner = super::text::Cleaner::for_board(ctx.blackboard());
    let mut out: Vec<JudgedDisagreement> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let ids: Vec<PersonaId> = item
            .between
            .iter()
            .filter_map(|name| {
                let id = ctx.resolve_debater(name);
                if id.is_none() {
                    notes.push(format!(
                        "disagreements[{i}].between: unknown persona {name:?}"
                    ));
                }
                id
            })
            .collect();
        let [a, b] = ids.as_slice() else {
            notes.push(format!(
                "disagreements[{i}]: dropped (needs exactly two known personas)"
            ));
            continue;
        };
        if a == b {
            notes.push(format!(
                "disagreements[{i}]: dropped (a persona cannot disagree with itself)"
            ));
            continue;
        }
        let Some(claim) = cleaner.clean(&item.claim, Limits::ITEM, "disagreements.claim", notes)
        else {
            notes.push(format!("disagreements[{i}]: dropped (empty claim)"));
            continue;
        };
        let confidence = item.confidence.clamp(0, 100);
        if confidence != item.confidence {
            notes.push(format!(
                "disagreements[{i}].confidence: clamped {} to {confidence}",
                item.confidence
            ));
        }
        let judged = JudgedDisagreement::new(a.clone(), b.clone(), claim, confidence as u8);
        match out.iter_mut().find(|d| d.personas == judged.personas) {
            Some(existing) if existing.confidence >= judged.confidence => {}
            Some(existing) => *existing = judged,
            None => out.push(judged),
        }
    }
    out
}

/// Judgements that passed validation, ready to be recorded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ValidJudgments(pub Vec<JudgedDisagreement>);

impl DisagreementWindow {
    /// Repairs the judgements (see the module docs); never fails.
    pub fn validate(&self, ctx: &ExtractionContext<'_>) -> Validated<ValidJudgments> {
        let mut notes = Vec::new();
        let judged = validate_judgments(&self.disagreements, ctx, &mut notes);
        Validated::new(ValidJudgments(judged), notes, 0)
    }
}

impl TurnAnalysis {
    /// Repairs the position update (as [`PositionUpdate::validate`]) and the
    /// judgements. Fails only when the context has no speaker.
    pub fn validate(
        &self,
        ctx: &ExtractionContext<'_>,
    ) -> Result<(Validated<PositionUpdate>, Validated<ValidJudgments>), ExtractionError> {
        let position = self.position.validate(ctx)?;
        let mut notes = Vec::new();
        let judged = validate_judgments(&self.disagreements, ctx, &mut notes);
        Ok((position, Validated::new(ValidJudgments(judged), notes, 0)))
    }
}

/// The events recording one message's analysis: the speaker's position
/// events (if any) followed by `turn_analyzed`, which marks the message done.
pub fn analysis_events(
    message: &MessageId,
    speaker: &PersonaId,
    aspect: Option<&AspectId>,
    round: u32,
    position: Option<Validated<PositionUpdate>>,
    judgments: Option<Validated<ValidJudgments>>,
) -> Vec<DebateEvent> {
    let importance = position
        .as_ref()
        .and_then(|p| p.value.importance)
        .and_then(|i| u8::try_from(i.clamp(1, 10)).ok());
    let contradiction = position
        .as_ref()
        .and_then(|p| p.value.contradiction.clone());
    let mut events = position
        .map(|p| p.into_events(speaker, aspect, round))
        .unwrap_or_default();
    events.push(DebateEvent::TurnAnalyzed {
        message: message.clone(),
        disagreements: judgments.map(|j| j.value.0).unwrap_or_default(),
        importance,
        contradiction,
        window_end: true,
    });
    events
}

/// A crux room's convergence check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConvergenceCheck {
    /// Whether the two parties have converged (agree, or agree on exactly
    /// why they disagree) so that more exchange would not help.
    pub converged: bool,
    /// Why, one sentence.
    #[schemars(length(max = 200))]
    pub reason: String,
}

impl Payload for ConvergenceCheck {
    const NAME: &'static str = "convergence_check";
}

/// One aspect proposed by a model when decomposing a topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AspectPayload {
    /// A short label (a few words).
    #[schemars(length(max = 60))]
    pub label: String,
    /// What the aspect covers, one sentence.
    #[schemars(length(max = 200))]
    pub description: String,
}

/// A topic decomposed into aspects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AspectPlan {
    /// The aspects, in debate order.
    #[schemars(length(max = 6))]
    pub aspects: Vec<AspectPayload>,
}

impl Payload for AspectPlan {
    const NAME: &'static str = "aspect_plan";
}

impl AspectPlan {
    /// Trims labels and descriptions, drops empty and duplicate labels, keeps
    /// at most `max`. Fails when no aspect survives.
    pub fn validate(&self, max: usize) -> Result<Validated<Self>, ExtractionError> {
        let mut notes = Vec::new();
        let mut aspects: Vec<AspectPayload> = Vec::new();
        for a in &self.aspects {
            let Some(label) = clean(&a.label, 60, "aspects.label", &mut notes) else {
                notes.push("aspects: dropped an aspect without a label".into());
                continue;
            };
            if aspects.iter().any(|x| x.label.eq_ignore_ascii_case(&label)) {
                notes.push(format!("aspects: dropped duplicate {label:?}"));
                continue;
            }
            let description = clean(
                &a.description,
                Limits::ITEM,
                "aspects.description",
                &mut notes,
            )
            .unwrap_or_else(|| label.clone());
            aspects.push(AspectPayload { label, description });
        }
        if aspects.len() > max {
            notes.push(format!(
                "aspects: kept the first {max} of {}",
                aspects.len()
            ));
            aspects.truncate(max);
        }
        if aspects.is_empty() {
            return Err(ExtractionError::Invalid {
                payload: Self::NAME,
                field: "aspects",
                reason: "has no usable aspect".into(),
            });
        }
        Ok(Validated::new(Self { aspects }, notes, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agon_core::Blackboard;

    fn board() -> Blackboard {
        crate::test_board()
    }

    #[test]
    fn judgments_resolve_names_clamp_and_dedupe() {
        let bb = board();
        let window = DisagreementWindow {
            disagreements: vec![
                DisagreementJudgmentPayload {
                    between: vec!["Bo".into(), "ada".into()],
                    claim: "Cars are needed".into(),
                    confidence: 140,
                },
                DisagreementJudgmentPayload {
                    between: vec!["Ada".into(), "Bo".into()],
                    claim: "weaker".into(),
                    confidence: 50,
                },
                DisagreementJudgmentPayload {
                    between: vec!["Ada".into(), "Zed".into()],
                    claim: "x".into(),
                    confidence: 90,
                },
            ],
        };
        let v = window.validate(&ExtractionContext::new(&bb));
        assert_eq!(
            v.value().0,
            vec![JudgedDisagreement::new(
                "ada".into(),
                "bo".into(),
                "Cars are needed",
                100
            )]
        );
        assert!(v.notes().iter().any(|n| n.contains("clamped 140")));
        assert!(v.notes().iter().any(|n| n.contains("Zed")));
    }

    #[test]
    fn aspect_plan_drops_duplicates_and_caps() {
        let plan = AspectPlan {
            aspects: vec![
                AspectPayload {
                    label: "Cost".into(),
                    description: "money".into(),
                },
                AspectPayload {
                    label: "cost".into(),
                    description: "again".into(),
                },
                AspectPayload {
                    label: " ".into(),
                    description: "none".into(),
                },
                AspectPayload {
                    label: "Safety".into(),
                    description: "".into(),
                },
                AspectPayload {
                    label: "Time".into(),
                    description: "t".into(),
                },
            ],
        };
        let v = plan.validate(2).unwrap();
        let labels: Vec<_> = v.value().aspects.iter().map(|a| a.label.as_str()).collect();
        assert_eq!(labels, ["Cost", "Safety"]);
        assert_eq!(v.value().aspects[1].description, "Safety");
        assert!(AspectPlan { aspects: vec![] }.validate(3).is_err());
    }
}
