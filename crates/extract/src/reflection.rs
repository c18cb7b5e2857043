//! The reflection batch generated when the reflection trigger fires.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::text::{Limits, clamp_importance};
use super::{ExtractionContext, ExtractionError, Payload, Validated};
use agon_core::DebateEvent;
use agon_core::{MessageId, PersonaId, ReflectionId};
use agon_core::{Reflection, ReflectionKind};

/// One reflection, as extracted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReflectionPayload {
    /// The insight.
    #[schemars(length(max = 600))]
    pub content: String,
    /// pattern, shift, convergence or escalation.
    #[serde(rename = "type")]
    pub kind: ReflectionKind,
    /// Names of the personas it is about.
    #[serde(default)]
    #[schemars(length(max = 8), inner(length(max = 80)))]
    pub about_personas: Vec<String>,
    /// 1-10.
    #[schemars(range(min = 1, max = 10))]
    pub importance: i64,
}

/// Seed 000's reflection output: the 2-3 most important dynamics.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReflectionBatch {
    /// The reflections.
    #[schemars(length(max = 3))]
    pub reflections: Vec<ReflectionPayload>,
}

impl Payload for ReflectionBatch {
    const NAME: &'static str = "reflection_batch";
}

impl ReflectionBatch {
    /// Repairs the batch: clamps importance to 1-10, bounds text, drops
    /// empty reflections and unknown personas (with notes), keeps at most 3.
    /// Fails when no reflection survives.
    pub fn validate(
        &self,
        ctx: &ExtractionContext<'_>,
    ) -> Result<Validated<Self>, ExtractionError> {
        let cleaner = super::text::Cleaner::for_board(ctx.blackboard());
        let mut notes = Vec::new();
        let mut reflections = Vec::new();
        for (i, r) in self.reflections.iter().enumerate() {
            let Some(content) = cleaner.clean(
                &r.content,
                Limits::PARAGRAPH,
                "reflections.content",
                &mut notes,
            ) else {
                notes.push(format!("reflections[{i}]: dropped (empty content)"));
                continue;
            };
            let mut about_personas: Vec<String> = Vec::new();
            for name in &r.about_personas {
                match ctx.resolve_debater(name) {
                    Some(id) if !about_personas.contains(&id.to_string()) => {
                        about_personas.push(id.to_string())
                    }
                    Some(_) => {}
                    None => notes.push(format!(
                        "reflections[{i}].aboutPersonas: dropped unknown persona {name:?}"
                    )),
                }
            }
            reflections.push(ReflectionPayload {
                content,
                kind: r.kind,
                about_personas,
                importance: i64::from(clamp_importance(
                    r.importance,
                    "reflections.importance",
                    &mut notes,
                )),
            });
        }
        if reflections.len() > Limits::REFLECTIONS {
            notes.push(format!(
                "reflections: kept the first {} of {}",
                Limits::REFLECTIONS,
                reflections.len()
            ));
            reflections.truncate(Limits::REFLECTIONS);
        }
        if reflections.is_empty() {
            return Err(ExtractionError::Invalid {
                payload: Self::NAME,
                field: "reflections",
                reason: "has no usable reflection".into(),
            });
        }
        let base = ctx.blackboard().reflections().len();
        Ok(Validated::new(Self { reflections }, notes, base))
    }
}

impl Validated<ReflectionBatch> {
    /// One `reflection_added` event per reflection, ids `reflection-N`
    /// numbered after the blackboard's existing reflections.
    pub fn into_events(self, round: u32, source_messages: &[MessageId]) -> Vec<DebateEvent> {
        let base = self.base;
        self.value
            .reflections
            .into_iter()
            .enumerate()
            .map(|(i, r)| DebateEvent::ReflectionAdded {
                reflection: Reflection {
                    id: ReflectionId::new(format!("reflection-{}", base + i + 1)),
                    content: r.content,
                    kind: r.kind,
                    about: r.about_personas.into_iter().map(PersonaId::new).collect(),
                    source_messages: source_messages.to_vec(),
                    round,
                    importance: u8::try_from(r.importance).unwrap_or(1),
                },
            })
            .collect()
    }
}
