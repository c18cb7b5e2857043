//! The structured round record extracted after each aspect round.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::text::Limits;
use super::{ExtractionContext, ExtractionError, Payload, Validated};
use agon_core::DebateEvent;
use agon_core::{AspectId, PersonaId};
use agon_core::{PersonaTake, RoundRecord};

/// One persona's take in the round, as extracted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TakePayload {
    /// The persona's name.
    #[schemars(length(max = 80))]
    pub persona: String,
    /// Their stance on the aspect.
    #[schemars(length(max = 300))]
    pub position: String,
    /// The strongest argument they made.
    #[schemars(length(max = 300))]
    pub key_argument: String,
    /// Evidence or data they referenced.
    #[serde(default)]
    #[schemars(length(max = 5), inner(length(max = 200)))]
    pub evidence_cited: Vec<String>,
    /// Who they mainly engaged with.
    #[serde(default)]
    #[schemars(length(max = 80))]
    pub targeted_persona: Option<String>,
}

/// Seed 000's round record: per-persona takes plus round-level observations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoundRecordPayload {
    /// One take per persona.
    #[schemars(length(max = 12))]
    pub takes: Vec<TakePayload>,
    /// One or two sentences.
    #[schemars(length(max = 600))]
    pub summary: String,
    /// Disputes that emerged.
    #[serde(default)]
    #[schemars(length(max = 5), inner(length(max = 200)))]
    pub new_disagreements: Vec<String>,
    /// Position changes observed.
    #[serde(default)]
    #[schemars(length(max = 5), inner(length(max = 200)))]
    pub shifts: Vec<String>,
}

impl Payload for RoundRecordPayload {
    const NAME: &'static str = "round_record";
}

impl RoundRecordPayload {
    /// Repairs the payload: resolves persona names (dropping unknown ones and
    /// duplicate takes with a note), bounds text and lists. Fails only when no
    /// take and no summary survive.
    pub fn validate(
        &self,
        ctx: &ExtractionContext<'_>,
    ) -> Result<Validated<Self>, ExtractionError> {
        let cleaner = super::text::Cleaner::for_board(ctx.blackboard());
        let mut notes = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        let mut takes = Vec::new();
        for take in &self.takes {
            let Some(persona) = ctx.resolve_debater(&take.persona) else {
                notes.push(format!("takes: dropped unknown persona {:?}", take.persona));
                continue;
            };
            let persona = persona.to_string();
            if seen.contains(&persona) {
                notes.push(format!("takes: dropped a second take for {persona}"));
                continue;
            }
            let Some(position) = cleaner.clean(
                &take.position,
                Limits::SENTENCE,
                "takes.position",
                &mut notes,
            ) else {
                notes.push(format!(
                    "takes: dropped the take of {persona} (no position)"
                ));
                continue;
            };
            let targeted_persona = take.targeted_persona.as_deref().and_then(|t| {
                // A persona reference, resolved below (not cleaned as text:
                // a bare name is what this field should hold).
                let t = t.trim().trim_matches('"').trim();
                if t.is_empty() || t.eq_ignore_ascii_case("null") || t.eq_ignore_ascii_case("none")
                {
                    return None;
                }
                match ctx.resolve_debater(t) {
                    Some(id) if id.as_str() != persona => Some(id.to_string()),
                    _ => {
                        notes.push(format!(
                            "takes.targetedPersona: dropped {t:?} for {persona}"
                        ));
                        None
                    }
                }
            });
            seen.push(persona.clone());
            takes.push(TakePayload {
                persona,
                position,
                key_argument: cleaner
                    .clean(
                        &take.key_argument,
                        Limits::SENTENCE,
                        "takes.keyArgument",
                        &mut notes,
                    )
                    .unwrap_or_default(),
                evidence_cited: cleaner.clean_list(
                    &take.evidence_cited,
                    Limits::LIST,
                    Limits::ITEM,
                    "takes.evidenceCited",
                    &mut notes,
                ),
                targeted_persona,
            });
        }
        let summary = cleaner
            .clean_opt(
                Some(&self.summary),
                Limits::PARAGRAPH,
                "summary",
                &mut notes,
            )
            .unwrap_or_default();
        if takes.is_empty() && summary.is_empty() {
            return Err(ExtractionError::Invalid {
                payload: Self::NAME,
                field: "takes",
                reason: "has no take of a known persona and the summary is empty".into(),
            });
        }
        let value = Self {
            takes,
            summary,
            new_disagreements: cleaner.clean_list(
                &self.new_disagreements,
                Limits::LIST,
                Limits::ITEM,
                "newDisagreements",
                &mut notes,
            ),
            shifts: cleaner.clean_list(
                &self.shifts,
                Limits::LIST,
                Limits::ITEM,
                "shifts",
                &mut notes,
            ),
        };
        Ok(Validated::new(value, notes, 0))
    }
}

impl Validated<RoundRecordPayload> {
    /// The `round_recorded` event for `aspect` and `round`.
    pub fn into_events(self, aspect: &AspectId, round: u32) -> Vec<DebateEvent> {
        let payload = self.value;
        let takes: BTreeMap<PersonaId, PersonaTake> = payload
            .takes
            .into_iter()
            .map(|t| {
                (
                    PersonaId::new(t.persona),
                    PersonaTake {
                        position: t.position,
                        key_argument: t.key_argument,
                        evidence_cited: t.evidence_cited,
                        targeted_persona: t.targeted_persona.map(PersonaId::new),
                    },
                )
            })
            .collect();
        vec![DebateEvent::RoundRecorded {
            record: RoundRecord {
                aspect: aspect.clone(),
                round,
                takes,
                summary: payload.summary,
                new_disagreements: payload.new_disagreements,
                shifts: payload.shifts,
            },
        }]
    }
}
