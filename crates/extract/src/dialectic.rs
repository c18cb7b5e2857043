//! The dialectic protocol's structured outputs (seed 004): an agent's
//! clarifying questions and the judge's solution.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::text::{Limits, clean, clean_list};
use super::{ExtractionError, Payload, Validated};
use agon_core::DebateEvent;
use agon_core::PersonaId;
use agon_core::{RequirementLedger, Solution};

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
    /// The ids of the major requirements the solution does not meet
    /// (empty when it meets them all).
    #[serde(default)]
    #[schemars(length(max = 24), inner(length(max = 300)))]
    pub unfulfilled_major_requirements: Vec<String>,
    /// Questions the debate leaves open (empty when none).
    #[serde(default)]
    #[schemars(length(max = 8), inner(length(max = 300)))]
    pub open_questions: Vec<String>,
    /// Set by validation: the major requirements reported as met that no
    /// agent's latest proposal covers on the ledger.
    #[serde(skip)]
    #[schemars(skip)]
    pub unverified: Vec<String>,
}

impl Payload for SolutionPayload {
    const NAME: &'static str = "solution";
}

/// The judge's highest confidence while a major requirement is unmet
/// (dialectic 0.7's cap).
pub const CONFIDENCE_CAP_WHEN_MAJORS_UNMET: i64 = 40;

/// The requirement of `ledger` whose text `item` repeats (or contains, or
/// is contained in), for a judge that answered with words instead of ids.
fn requirement_by_text<'a>(item: &str, ledger: &'a RequirementLedger) -> Option<&'a str> {
    let item = item.trim().to_lowercase();
    (item.chars().count() >= 8).then_some(())?;
    ledger
        .requirements
        .iter()
        .find(|r| {
            let text = r.text.to_lowercase();
            text == item || text.contains(&item) || item.contains(&text)
        })
        .map(|r| r.id.as_str())
}

/// The judge's unmet major requirements as ids where they name one of the
/// ledger's (by id or by its text), the judge's cleaned words otherwise;
/// repeats dropped.
fn unfulfilled_ids(
    items: &[String],
    ledger: &RequirementLedger,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = format!("unfulfilledMajorRequirements[{i}]");
        let id = crate::requirement_id(item, ledger).or_else(|| requirement_by_text(item, ledger));
        let kept = match id {
            Some(id) => Some(id.to_owned()),
            None => clean(item, Limits::SENTENCE, &field, notes),
        };
        if let Some(kept) = kept
            && !out.contains(&kept)
        {
            out.push(kept);
        }
    }
    out
}

/// Longest solution description kept, in characters.
const DESCRIPTION_CHARS: usize = 6_000;
/// Items kept per list of a solution.
const SOLUTION_LIST: usize = 8;

impl SolutionPayload {
    /// Repairs the solution: bounds text and lists, clamps the confidence to
    /// 0-100, caps it at 40 when a major requirement is unmet (dialectic
    /// 0.7), reads the unmet requirements as `ledger`'s ids, and, when the
    /// ledger `tracked` coverage, notes each major requirement the judge
    /// reports as met that no agent's latest proposal covers (all with
    /// notes). Fails when the description is empty.
    pub fn validate(
        &self,
        ledger: &RequirementLedger,
        tracked: bool,
    ) -> Result<Validated<Self>, ExtractionError> {
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
        let mut confidence = self.confidence.clamp(0, 100);
        if confidence != self.confidence {
            notes.push(format!(
                "confidence: {} clamped to {confidence}",
                self.confidence
            ));
        }
        let unfulfilled = unfulfilled_ids(&self.unfulfilled_major_requirements, ledger, &mut notes);
        if !unfulfilled.is_empty() && confidence > CONFIDENCE_CAP_WHEN_MAJORS_UNMET {
            notes.push(format!(
                "confidence: {confidence} capped at {CONFIDENCE_CAP_WHEN_MAJORS_UNMET} \
                 (a major requirement is unmet: {})",
                unfulfilled.join(", ")
            ));
            confidence = CONFIDENCE_CAP_WHEN_MAJORS_UNMET;
        }
        let unverified: Vec<String> = if tracked {
            ledger
                .requirements
                .iter()
                .filter(|r| r.major && !unfulfilled.contains(&r.id) && !ledger.is_covered(&r.id))
                .map(|r| r.id.clone())
                .collect()
        } else {
            Vec::new()
        };
        if !unverified.is_empty() {
            notes.push(format!(
                "unfulfilledMajorRequirements: {} not listed, but no agent's latest proposal \
                 covers it on the ledger; kept as unverified",
                unverified.join(", ")
            ));
        }
        Ok(Validated::new(
            Self {
                description,
                tradeoffs: list(&self.tradeoffs, "tradeoffs", &mut notes),
                recommendations: list(&self.recommendations, "recommendations", &mut notes),
                confidence,
                unfulfilled_major_requirements: unfulfilled,
                open_questions: list(&self.open_questions, "openQuestions", &mut notes),
                unverified,
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
                unfinished_requirements: Vec::new(),
                unfulfilled_major_requirements: v.unfulfilled_major_requirements,
                open_questions: v.open_questions,
                unverified_requirements: v.unverified,
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
            unfulfilled_major_requirements: vec![],
            open_questions: vec!["null".into()],
            unverified: vec![],
        };
        let v = payload
            .validate(&RequirementLedger::default(), false)
            .unwrap();
        assert_eq!(v.value().description, "Use a token bucket per client.");
        assert_eq!(v.value().tradeoffs, ["memory per client"]);
        assert_eq!(v.value().recommendations.len(), 8);
        assert_eq!(v.value().confidence, 100);
        assert!(v.value().open_questions.is_empty());
        assert!(v.notes().iter().any(|n| n.contains("140 clamped to 100")));
        let DebateEvent::SolutionRecorded { solution } =
            v.into_event(2, &"judge".into(), DateTime::UNIX_EPOCH)
        else {
            panic!("a solution event")
        };
        assert_eq!((solution.round, solution.confidence), (2, Some(100)));
    }

    #[test]
    fn an_unmet_major_requirement_caps_the_confidence_and_an_uncovered_one_is_noted() {
        use agon_core::{Requirement, RequirementMethod, RequirementSource};
        let requirement = |id: &str, text: &str| Requirement {
            id: id.into(),
            text: text.into(),
            source: RequirementSource::Problem { line: None },
            major: true,
        };
        let ledger = RequirementLedger {
            requirements: vec![
                requirement("R1", "Every change must be audited"),
                requirement("R2", "Data must stay in the EU"),
                requirement("R3", "Must serve 10k users"),
            ],
            method: Some(RequirementMethod::Model),
            coverage: vec![],
        };
        let payload = SolutionPayload {
            description: "A ledger service.".into(),
            tradeoffs: vec![],
            recommendations: vec![],
            confidence: 85,
            unfulfilled_major_requirements: vec![
                "R1: audit".into(),
                "data must stay in the EU".into(),
                "r1".into(),
            ],
            open_questions: vec!["Which regions?".into()],
            unverified: vec![],
        };
        let v = payload.validate(&ledger, true).unwrap();
        assert_eq!(v.value().unfulfilled_major_requirements, ["R1", "R2"]);
        assert_eq!(v.value().confidence, 40);
        assert_eq!(v.value().unverified, ["R3"]);
        assert!(v.notes().iter().any(|n| n.contains("capped at 40")));
        let DebateEvent::SolutionRecorded { solution } =
            v.into_event(1, &"judge".into(), DateTime::UNIX_EPOCH)
        else {
            panic!("a solution")
        };
        assert_eq!(solution.unverified_requirements, ["R3"]);
        assert_eq!(solution.open_questions, ["Which regions?"]);
        let untracked = SolutionPayload {
            unfulfilled_major_requirements: vec![],
            ..payload
        };
        let v = untracked.validate(&ledger, false).unwrap();
        assert_eq!((v.value().confidence, v.value().unverified.len()), (85, 0));
    }

    #[test]
    fn empty_solution_is_rejected_and_questions_capped() {
        let empty = SolutionPayload {
            description: " ".into(),
            tradeoffs: vec![],
            recommendations: vec![],
            confidence: 50,
            unfulfilled_major_requirements: vec![],
            open_questions: vec![],
            unverified: vec![],
        };
        assert!(
            empty
                .validate(&RequirementLedger::default(), false)
                .is_err()
        );
        let q = ClarifyingQuestions {
            questions: (0..8).map(|i| format!("Question {i}?")).collect(),
        };
        let v = q.validate(3);
        assert_eq!(v.value().questions.len(), 3);
        assert_eq!(v.notes().len(), 1);
    }
}

/// One dialectic contribution's entry in a round's analysis: the lean
/// subset of a position update that a dialectic ledger keeps (no aspects,
/// evidence lists or contradictions), flat so the schema and the answer
/// stay short.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContributionUpdate {
    /// The message's id, as listed (`msg-12`).
    #[schemars(length(max = 40))]
    pub message: String,
    /// The speaker's updated one-sentence stance, or null.
    #[schemars(length(max = 300))]
    pub overall_stance: Option<String>,
    /// A new agreement, if any.
    pub new_agreement: Option<super::position::AgreementPayload>,
    /// A new disagreement, if any.
    pub new_disagreement: Option<super::position::DisagreementPayload>,
    /// What they conceded, if anything.
    #[schemars(length(max = 300))]
    pub concession: Option<String>,
    /// How their position changed, if it did.
    #[schemars(length(max = 300))]
    pub shift: Option<String>,
    /// How much the message matters, 1-10, or null.
    #[serde(default)]
    #[schemars(range(min = 1, max = 10))]
    pub importance: Option<i64>,
    /// For a refinement whose critiques are listed: the ids of those it
    /// took in (changed the proposal in response to); null otherwise.
    #[serde(default)]
    #[schemars(length(max = 12), inner(length(max = 40)))]
    pub took_in: Option<Vec<String>>,
    /// When requirements are listed: the message's verdict on each one it
    /// addresses; null otherwise.
    #[serde(default)]
    #[schemars(length(max = 24))]
    pub requirements: Option<Vec<crate::RequirementVerdict>>,
}

impl ContributionUpdate {
    /// The entry as a [`super::PositionUpdate`] (the fields a dialectic
    /// ledger keeps; the rest empty), for the shared validation.
    pub fn position(&self) -> super::PositionUpdate {
        super::PositionUpdate {
            overall_stance: self.overall_stance.clone(),
            aspect_position: None,
            new_agreement: self.new_agreement.clone(),
            new_disagreement: self.new_disagreement.clone(),
            concession: self.concession.clone(),
            shift: self.shift.clone(),
            importance: self.importance,
            contradiction: None,
        }
    }

    /// The critiques among `answered` (the ids of the critiques the
    /// refinement answers) that this entry says were taken in, each with
    /// its verdict; `None` when the entry judged nothing. Ids that are not
    /// among `answered`, or repeated, are dropped with a note.
    pub fn judged(
        &self,
        answered: &[agon_core::MessageId],
        notes: &mut Vec<String>,
    ) -> Option<Vec<agon_core::CritiqueTaken>> {
        let took_in = self.took_in.as_ref()?;
        let mut taken: Vec<&str> = Vec::new();
        for id in took_in {
            let id = id.trim().trim_matches(['[', ']']);
            if answered.iter().any(|a| a.as_str() == id) && !taken.contains(&id) {
                taken.push(id);
            } else {
                notes.push(format!(
                    "tookIn: dropped {id:?} (not a critique this refinement answers, or twice)"
                ));
            }
        }
        Some(
            answered
                .iter()
                .map(|c| agon_core::CritiqueTaken {
                    critique: c.clone(),
                    addressed: taken.contains(&c.as_str()),
                })
                .collect(),
        )
    }
}

/// A dialectic round's analysis in one call: an entry per contribution
/// (proposals, critiques, refinements), each read whole, and for each
/// refinement the critiques it took in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoundAnalysis {
    /// One entry per message listed.
    #[schemars(length(max = 40))]
    pub updates: Vec<ContributionUpdate>,
    /// The perspective summaries the call was asked for (agents whose
    /// history reached their summarization threshold this round), by the
    /// agent's name, written from the same reading as the entries; empty
    /// when none was asked.
    #[serde(default)]
    pub summaries: std::collections::BTreeMap<String, String>,
}

/// The shortest perspective summary a round analysis's schema accepts
/// (unless the summaries' own limit is shorter).
pub const MIN_SUMMARY_CHARS: usize = 20;

impl RoundAnalysis {
    /// The schema of a round's analysis asked for the summaries of
    /// `agents` (each a name and its most characters, `max_chars`): the
    /// `summaries` object has one required property per agent (so a
    /// constrained decoder writes each exactly once), of at least
    /// [`MIN_SUMMARY_CHARS`] and at most twice `max_chars` characters (the
    /// prompt asks for `max_chars`, and the text is cut to it when
    /// recorded: a model that overshoots a little must not fail the
    /// round's analysis for it). Without agents the `summaries` field is
    /// left out of the schema (a call asked for no summary pays nothing
    /// for it).
    pub fn schema_with_summaries(
        schema: &serde_json::Value,
        agents: &[(String, usize)],
    ) -> serde_json::Value {
        use serde_json::{Value, json};
        let mut out = schema.clone();
        let Some(root) = out.as_object_mut() else {
            return out;
        };
        if agents.is_empty() {
            if let Some(Value::Object(props)) = root.get_mut("properties") {
                props.remove("summaries");
            }
            return out;
        }
        if let Some(Value::Object(props)) = root.get_mut("properties") {
            // At least a sentence's start: a constrained small model
            // otherwise closes the string at once.
            let text = |max_chars: usize| {
                json!({
                    "type": "string",
                    "minLength": max_chars.min(MIN_SUMMARY_CHARS),
                    "maxLength": max_chars.saturating_mul(2),
                })
            };
            let each: serde_json::Map<String, Value> = agents
                .iter()
                .map(|(name, max_chars)| (name.clone(), text(*max_chars)))
                .collect();
            let names: Vec<&String> = agents.iter().map(|(name, _)| name).collect();
            props.insert(
                "summaries".into(),
                json!({
                    "type": "object",
                    "properties": each,
                    "required": names,
                    "additionalProperties": false,
                }),
            );
        }
        match root.get_mut("required") {
            Some(Value::Array(required)) => {
                if !required.iter().any(|r| r == "summaries") {
                    required.push(json!("summaries"));
                }
            }
            _ => {
                root.insert("required".into(), json!(["updates", "summaries"]));
            }
        }
        out
    }
}

impl Payload for RoundAnalysis {
    const NAME: &'static str = "round_analysis";
}

#[cfg(test)]
mod round_analysis_tests {
    use super::*;

    #[test]
    fn summaries_enter_the_schema_only_when_asked_for() {
        let base = <RoundAnalysis as Payload>::json_schema();
        let none = RoundAnalysis::schema_with_summaries(&base, &[]);
        assert!(none.pointer("/properties/summaries").is_none(), "{none}");
        assert!(!none.to_string().contains("summaries"), "{none}");
        let agents = [("Ada".to_owned(), 2_500), ("Bo".to_owned(), 2_500)];
        let asked = RoundAnalysis::schema_with_summaries(&base, &agents);
        let each = asked.pointer("/properties/summaries").unwrap();
        assert_eq!(each["required"], serde_json::json!(["Ada", "Bo"]));
        assert_eq!(each["additionalProperties"], false);
        assert_eq!(each.pointer("/properties/Bo/maxLength").unwrap(), 5_000);
        assert_eq!(each.pointer("/properties/Bo/minLength").unwrap(), 20);
        assert!(
            asked["required"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r == "summaries")
        );
        // An answer without summaries still parses (an older log, or a
        // call that asked for none).
        let parsed: RoundAnalysis = serde_json::from_str(r#"{"updates": []}"#).unwrap();
        assert!(parsed.summaries.is_empty());
    }

    #[test]
    fn took_in_keeps_answered_critiques_and_notes_the_rest() {
        let entry = ContributionUpdate {
            message: "msg-9".into(),
            overall_stance: None,
            new_agreement: None,
            new_disagreement: None,
            concession: None,
            shift: None,
            importance: None,
            took_in: Some(vec!["[msg-4]".into(), "msg-4".into(), "msg-99".into()]),
            requirements: None,
        };
        let answered = [
            agon_core::MessageId::new("msg-4"),
            agon_core::MessageId::new("msg-6"),
        ];
        let mut notes = Vec::new();
        let judged = entry.judged(&answered, &mut notes).unwrap();
        assert_eq!(
            judged
                .iter()
                .map(|c| (c.critique.as_str(), c.addressed))
                .collect::<Vec<_>>(),
            [("msg-4", true), ("msg-6", false)]
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
        let silent = ContributionUpdate {
            took_in: None,
            ..entry
        };
        assert!(silent.judged(&answered, &mut notes).is_none());
    }
}
