//! The position update extracted after each message (seed 000's prompt).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::text::Limits;
use super::{ExtractionContext, ExtractionError, Payload, Validated};
use agon_core::Intensity;
use agon_core::{AspectId, PersonaId};
use agon_core::{AspectPositionUpdate, DebateEvent};

/// A speaker's position on the current aspect, as extracted.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AspectPositionPayload {
    /// Their stance on this aspect, one sentence.
    #[schemars(length(max = 300))]
    pub position: Option<String>,
    /// New evidence or reasoning cited.
    #[serde(default)]
    #[schemars(length(max = 5), inner(length(max = 200)))]
    pub evidence: Vec<String>,
    /// New challenges they face.
    #[serde(default)]
    #[schemars(length(max = 5), inner(length(max = 200)))]
    pub challenged: Vec<String>,
    /// Challenges from their current state that this message answers,
    /// quoted as listed there.
    #[serde(default)]
    #[schemars(length(max = 5), inner(length(max = 200)))]
    pub answered: Vec<String>,
}

/// "The speaker now agrees with X on Y".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgreementPayload {
    /// The other persona's name.
    #[schemars(length(max = 80))]
    pub with_persona: Option<String>,
    /// What they agree on.
    #[schemars(length(max = 300))]
    pub on: String,
}

/// "The speaker now disagrees with X on Y".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisagreementPayload {
    /// The other persona's name.
    #[schemars(length(max = 80))]
    pub with_persona: Option<String>,
    /// What they disagree on.
    #[schemars(length(max = 300))]
    pub on: String,
    /// How heated (default mild).
    #[serde(default)]
    pub intensity: Intensity,
    /// Rubric criteria it turns on.
    //
    // (Kept short: the schema is sent with every analysis call. The
    // names must be the debate's rubric's; others are dropped.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 3), inner(length(max = 60)))]
    pub criteria: Vec<String>,
}

/// Seed 000's position update: what changed in the speaker's position state
/// after one message. `null` fields mean "unchanged".
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PositionUpdate {
    /// Updated one-sentence overall stance, or null if unchanged.
    #[schemars(length(max = 300))]
    pub overall_stance: Option<String>,
    /// Their position on the current aspect.
    pub aspect_position: Option<AspectPositionPayload>,
    /// A new agreement, if any.
    pub new_agreement: Option<AgreementPayload>,
    /// A new disagreement, if any.
    pub new_disagreement: Option<DisagreementPayload>,
    /// What they conceded, if anything.
    #[schemars(length(max = 300))]
    pub concession: Option<String>,
    /// How their position changed, if it did.
    #[schemars(length(max = 300))]
    pub shift: Option<String>,
    /// How much the message matters to the debate, 1 (small talk) to 10 (a
    /// turning point), or null.
    #[serde(default)]
    #[schemars(range(min = 1, max = 10))]
    pub importance: Option<i64>,
    /// What in the speaker's own earlier position this message
    /// contradicts, one sentence, or null.
    #[serde(default)]
    #[schemars(length(max = 300))]
    pub contradiction: Option<String>,
}

impl Payload for PositionUpdate {
    const NAME: &'static str = "position_update";
}

impl PositionUpdate {
    /// Repairs the payload: trims and bounds text, caps lists, and resolves
    /// `withPersona` to a debater other than the speaker (dropping the
    /// agreement or disagreement, with a note, when it does not resolve).
    pub fn validate(
        &self,
        ctx: &ExtractionContext<'_>,
    ) -> Result<Validated<Self>, ExtractionError> {
        let cleaner = super::text::Cleaner::for_board(ctx.blackboard());
        if ctx.speaker.is_none() {
            return Err(ExtractionError::Invalid {
                payload: Self::NAME,
                field: "speaker",
                reason: "must be set on the extraction context".into(),
            });
        }
        let mut notes = Vec::new();
        let overall_stance = cleaner.clean_opt(
            self.overall_stance.as_deref(),
            Limits::SENTENCE,
            "overallStance",
            &mut notes,
        );
        let aspect_position = self.aspect_position.as_ref().and_then(|a| {
            let cleaned = AspectPositionPayload {
                position: cleaner.clean_opt(
                    a.position.as_deref(),
                    Limits::SENTENCE,
                    "aspectPosition.position",
                    &mut notes,
                ),
                evidence: cleaner.clean_list(
                    &a.evidence,
                    Limits::LIST,
                    Limits::ITEM,
                    "aspectPosition.evidence",
                    &mut notes,
                ),
                challenged: cleaner.clean_list(
                    &a.challenged,
                    Limits::LIST,
                    Limits::ITEM,
                    "aspectPosition.challenged",
                    &mut notes,
                ),
                answered: answered_challenges(
                    &cleaner.clean_list(
                        &a.answered,
                        Limits::LIST,
                        Limits::ITEM,
                        "aspectPosition.answered",
                        &mut notes,
                    ),
                    ctx,
                    &mut notes,
                ),
            };
            (cleaned != AspectPositionPayload::default()).then_some(cleaned)
        });
        let new_agreement = self.new_agreement.as_ref().and_then(|a| {
            let on = cleaner.clean(&a.on, Limits::SENTENCE, "newAgreement.on", &mut notes)?;
            let with = ctx.resolve_other(
                a.with_persona.as_deref()?,
                "newAgreement.withPersona",
                &mut notes,
            )?;
            Some(AgreementPayload {
                with_persona: Some(with.to_string()),
                on,
            })
        });
        let new_disagreement = self.new_disagreement.as_ref().and_then(|d| {
            let on = cleaner.clean(&d.on, Limits::SENTENCE, "newDisagreement.on", &mut notes)?;
            let with = ctx.resolve_other(
                d.with_persona.as_deref()?,
                "newDisagreement.withPersona",
                &mut notes,
            )?;
            Some(DisagreementPayload {
                with_persona: Some(with.to_string()),
                on,
                intensity: d.intensity,
                criteria: ctx.rubric_criteria(&d.criteria, "newDisagreement.criteria", &mut notes),
            })
        });
        let value = Self {
            overall_stance,
            aspect_position,
            new_agreement,
            new_disagreement,
            concession: cleaner.clean_opt(
                self.concession.as_deref(),
                Limits::SENTENCE,
                "concession",
                &mut notes,
            ),
            shift: cleaner.clean_opt(self.shift.as_deref(), Limits::SENTENCE, "shift", &mut notes),
            importance: self.importance.map(|i| {
                let clamped = i.clamp(1, 10);
                if clamped != i {
                    notes.push(format!("importance: clamped {i} to {clamped}"));
                }
                clamped
            }),
            contradiction: cleaner.clean_opt(
                self.contradiction.as_deref(),
                Limits::SENTENCE,
                "contradiction",
                &mut notes,
            ),
        };
        Ok(Validated::new(value, notes, 0))
    }
}

/// The speaker's unanswered challenges, on every aspect.
fn open_challenges(ctx: &ExtractionContext<'_>) -> Vec<String> {
    ctx.speaker
        .and_then(|speaker| ctx.blackboard().position(speaker))
        .map(|state| {
            state
                .aspects
                .values()
                .flat_map(|a| a.challenged.iter().cloned())
                .collect()
        })
        .unwrap_or_default()
}

/// A challenge's words, for matching a model's quote to the listed text.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Share of the smaller word set found in the other (1 = one contains the other).
fn overlap(a: &[String], b: &[String]) -> f64 {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if small.is_empty() {
        return 0.0;
    }
    let found = small.iter().filter(|w| large.contains(w)).count();
    found as f64 / small.len() as f64
}

/// Least word overlap for a quoted challenge to count as a listed one.
const ANSWERED_MATCH: f64 = 0.75;

/// Maps each quoted challenge to the listed challenge it names (the
/// listed text, so the ledger can remove it): the same words, or the
/// listed challenge sharing at least three quarters of the shorter one's
/// words. A quote that names no listed challenge is dropped with a note:
/// nothing a model says can remove a challenge the speaker was not facing.
fn answered_challenges(
    quoted: &[String],
    ctx: &ExtractionContext<'_>,
    notes: &mut Vec<String>,
) -> Vec<String> {
    if quoted.is_empty() {
        return Vec::new();
    }
    let open = open_challenges(ctx);
    let mut out: Vec<String> = Vec::new();
    for q in quoted {
        let qw = words(q);
        let best = open
            .iter()
            .map(|c| (overlap(&qw, &words(c)), c))
            .filter(|(score, _)| *score >= ANSWERED_MATCH)
            .max_by(|a, b| a.0.total_cmp(&b.0));
        match best {
            Some((_, listed)) if !out.contains(listed) => out.push(listed.clone()),
            Some(_) => {}
            None => notes.push(format!(
                "aspectPosition.answered: dropped {q:?} (not one of the speaker's open challenges)"
            )),
        }
    }
    out
}

impl Validated<PositionUpdate> {
    /// The events this update amounts to for `speaker`, said on `aspect` in `round`.
    /// An update that changes nothing yields no events.
    pub fn into_events(
        self,
        speaker: &PersonaId,
        aspect: Option<&AspectId>,
        round: u32,
    ) -> Vec<DebateEvent> {
        let update = self.value;
        let mut events = Vec::new();
        let aspect_update = match (aspect, update.aspect_position) {
            (Some(aspect), Some(a)) => Some(AspectPositionUpdate {
                aspect: aspect.clone(),
                position: a.position,
                evidence: a.evidence,
                challenged: a.challenged,
                answered: a.answered,
            }),
            _ => None,
        };
        if update.overall_stance.is_some() || aspect_update.is_some() {
            events.push(DebateEvent::PositionUpdated {
                persona: speaker.clone(),
                round,
                overall_stance: update.overall_stance,
                aspect: aspect_update,
            });
        }
        if let Some(AgreementPayload {
            with_persona: Some(with),
            on,
        }) = update.new_agreement
        {
            events.push(DebateEvent::AgreementRecorded {
                persona: speaker.clone(),
                with: PersonaId::new(with),
                on,
                round,
            });
        }
        if let Some(DisagreementPayload {
            with_persona: Some(with),
            on,
            intensity,
            criteria,
        }) = update.new_disagreement
        {
            events.push(DebateEvent::DisagreementRecorded {
                persona: speaker.clone(),
                with: PersonaId::new(with),
                on,
                intensity,
                round,
                criteria,
            });
        }
        if let Some(text) = update.concession {
            events.push(DebateEvent::ConcessionRecorded {
                persona: speaker.clone(),
                text,
                round,
            });
        }
        if let Some(text) = update.shift {
            events.push(DebateEvent::ShiftRecorded {
                persona: speaker.clone(),
                text,
                round,
            });
        }
        events
    }
}

/// One message's entry in a [`BatchPositionUpdate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MessagePositionUpdate {
    /// The message's id, as listed in the prompt (`msg-12`).
    #[schemars(length(max = 40))]
    pub message: String,
    /// What changed in its speaker's position state.
    pub position: PositionUpdate,
}

/// Position updates for several messages in one call: one analysis call
/// per phase of a dialectic round instead of one per message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BatchPositionUpdate {
    /// One entry per message listed.
    #[schemars(length(max = 40))]
    pub updates: Vec<MessagePositionUpdate>,
}

impl super::Payload for BatchPositionUpdate {
    const NAME: &'static str = "batch_position_update";
}
