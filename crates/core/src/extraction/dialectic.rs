//! The dialectic protocol's structured outputs (seed 004): an agent's
//! clarifying questions and the judge's solution.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::text::{Limits, clean, clean_list};
use super::{ExtractionError, Payload, Validated};
use crate::event::DebateEvent;
use crate::ids::PersonaId;
use crate::solution::Solution;

/// Most clarifying questions an agent may ask (seed 004's default).
pub const MAX_QUESTIONS: usize = 5;

/// An agent's clarifying questions about the problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClarifyingQuestions {
    /// The questions, most important first (an empty list when the problem is clear).
    #[schemars(length(max = 5), inner(length(max = 300)))]
    pub questions: Vec<String>,
}

impl Payload for ClarifyingQuestions {
    const NAME: &'static str = "clarifying_questions";
}

impl ClarifyingQuestions {
    /// Trims and bounds the questions, drops empty and duplicate ones, and
    /// keeps at most `max` (noting what was cut). An empty list is valid.
    pub fn validate(&self, max: usize) -> Validated<Self> {
        let mut notes = Vec::new();
        let questions = clean_list(
            &self.questions,
            max.min(MAX_QUESTIONS),
            Limits::SENTENCE,
            "questions",
            &mut notes,
        );
        Validated::new(Self { questions }, notes, 0)
    }
}

/// The judge's synthesized solution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SolutionPayload {
    /// The recommended solution, complete enough to build from.
    #[schemars(length(max = 6000))]
    pub description: String,
    /// Trade-offs the solution accepts.
    #[serde(default)]
    #[schemars(length(max = 8), inner(length(max = 300)))]
    pub tradeoffs: Vec<String>,
    /// Concrete recommendations.
    #[serde(default)]
    #[schemars(length(max = 8), inner(length(max = 300)))]
    pub recommendations: Vec<String>,
    /// How confident the judge is that the solution is complete and sound, 0-100.
    #[schemars(range(min = 0, max = 100))]
    pub confidence: i64,
    /// Requirements of the problem not met yet (empty when none).
    #[serde(default)]
    #[schemars(length(max = 8), inner(length(max = 300)))]
    pub unfinished_requirements: Vec<String>,
}

impl Payload for SolutionPayload {
    const NAME: &'static str = "solution";
}

/// Longest solution description kept, in characters.
const DESCRIPTION_CHARS: usize = 6_000;
/// Items kept per list of a solution.
const SOLUTION_LIST: usize = 8;

impl SolutionPayload {
    /// Repairs the solution: bounds text and lists, clamps the confidence to
    /// 0-100 (with notes). Fails when the description is empty.
    pub fn validate(&self) -> Result<Validated<Self>, ExtractionError> {
        let mut notes = Vec::new();
        let description = clean(
            &self.description,
            DESCRIPTION_CHARS,
            "description",
            &mut notes,
        )
        .ok_or(ExtractionError::Invalid {
            payload: Self::NAME,
            field: "description",
            reason: "is empty".into(),
        })?;
        let list = |items: &[String], field: &str, notes: &mut Vec<String>| {
            clean_list(items, SOLUTION_LIST, Limits::SENTENCE, field, notes)
        };
        let confidence = self.confidence.clamp(0, 100);
        if confidence != self.confidence {
            notes.push(format!(
                "confidence: {} clamped to {confidence}",
                self.confidence
            ));
        }
        Ok(Validated::new(
            Self {
                description,
                tradeoffs: list(&self.tradeoffs, "tradeoffs", &mut notes),
                recommendations: list(&self.recommendations, "recommendations", &mut notes),
                confidence,
                unfinished_requirements: list(
                    &self.unfinished_requirements,
                    "unfinishedRequirements",
                    &mut notes,
                ),
            },
            notes,
            0,
        ))
    }
}

impl Validated<SolutionPayload> {
    /// The `solution_recorded` event of round `round`, by `judge`.
    pub fn into_event(self, round: u32, judge: &PersonaId, time: DateTime<Utc>) -> DebateEvent {
        let v = self.value;
        DebateEvent::SolutionRecorded {
            solution: Solution {
                round,
                description: v.description,
                tradeoffs: v.tradeoffs,
                recommendations: v.recommendations,
                confidence: u8::try_from(v.confidence).ok(),
                unfinished_requirements: v.unfinished_requirements,
                synthesized_by: judge.clone(),
                time,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn solution_confidence_is_clamped_and_lists_bounded() {
        let payload = SolutionPayload {
            description: "  Use a token bucket per client.  ".into(),
            tradeoffs: vec![
                "memory per client".into(),
                "".into(),
                "memory per client".into(),
            ],
            recommendations: (0..12).map(|i| format!("step {i}")).collect(),
            confidence: 140,
            unfinished_requirements: vec!["null".into()],
        };
        let v = payload.validate().unwrap();
        assert_eq!(v.value().description, "Use a token bucket per client.");
        assert_eq!(v.value().tradeoffs, ["memory per client"]);
        assert_eq!(v.value().recommendations.len(), 8);
        assert_eq!(v.value().confidence, 100);
        assert!(v.value().unfinished_requirements.is_empty());
        assert!(v.notes().iter().any(|n| n.contains("140 clamped to 100")));
        let DebateEvent::SolutionRecorded { solution } =
            v.into_event(2, &"judge".into(), DateTime::UNIX_EPOCH)
        else {
            panic!("a solution event")
        };
        assert_eq!((solution.round, solution.confidence), (2, Some(100)));
    }

    #[test]
    fn empty_solution_is_rejected_and_questions_capped() {
        let empty = SolutionPayload {
            description: " ".into(),
            tradeoffs: vec![],
            recommendations: vec![],
            confidence: 50,
            unfinished_requirements: vec![],
        };
        assert!(empty.validate().is_err());
        let q = ClarifyingQuestions {
            questions: (0..8).map(|i| format!("Question {i}?")).collect(),
        };
        let v = q.validate(3);
        assert_eq!(v.value().questions.len(), 3);
        assert_eq!(v.notes().len(), 1);
    }
}

/// Whether one critique was taken in by its target's refinement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CritiqueImpact {
    /// The critique's message id, as listed (`msg-12`).
    #[schemars(length(max = 40))]
    pub message: String,
    /// Whether the refinement changed the proposal in response to it.
    pub addressed: bool,
}

/// The analysis model's judgement of which critiques a refinement took in
/// (seed 003's dissent impact).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ImpactJudgement {
    /// One entry per critique listed.
    #[schemars(length(max = 12))]
    pub critiques: Vec<CritiqueImpact>,
}

impl Payload for ImpactJudgement {
    const NAME: &'static str = "critique_impact";
}

impl ImpactJudgement {
    /// Keeps the first entry per critique id among `ids`; notes the rest.
    pub fn validate(&self, ids: &[String]) -> Validated<Self> {
        let mut notes = Vec::new();
        let mut critiques: Vec<CritiqueImpact> = Vec::new();
        for c in &self.critiques {
            let id = c.message.trim();
            if !ids.iter().any(|i| i == id) || critiques.iter().any(|k| k.message == id) {
                notes.push(format!(
                    "critiques: dropped {:?} (not listed, or twice)",
                    c.message
                ));
                continue;
            }
            critiques.push(CritiqueImpact {
                message: id.to_owned(),
                addressed: c.addressed,
            });
        }
        Validated::new(Self { critiques }, notes, 0)
    }
}
