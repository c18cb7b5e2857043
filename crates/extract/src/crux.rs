//! The crux card produced at the end of a crux room.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::text::Limits;
use super::{ExtractionContext, ExtractionError, Payload, Validated};
use agon_core::ClaimTransition;
use agon_core::DebateEvent;
use agon_core::{ClaimId, CruxCardId, CruxRoomId, PersonaId};
use agon_core::{CruxCard, CruxPosition, CruxStance, DisagreementType};

/// One party's position on the crux, as extracted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CruxPositionPayload {
    /// The persona's name.
    #[schemars(length(max = 80))]
    pub persona: String,
    /// YES, NO or NUANCED.
    pub position: CruxStance,
    /// Why.
    #[schemars(length(max = 600))]
    pub reasoning: String,
    /// What would change their mind.
    #[schemars(length(max = 300))]
    pub falsifier: String,
}

/// A crux card, as extracted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CruxCardPayload {
    /// The crux question, answerable YES / NO / NUANCED.
    #[schemars(length(max = 300))]
    pub question: String,
    /// Each party's position (both parties).
    #[schemars(length(min = 2, max = 2))]
    pub positions: Vec<CruxPositionPayload>,
    /// What kind of disagreement it is.
    pub disagreement_type: DisagreementType,
    /// Diagnosis of the disagreement.
    #[schemars(length(max = 600))]
    pub diagnosis: String,
    /// Whether the parties converged.
    pub resolved: bool,
}

impl Payload for CruxCardPayload {
    const NAME: &'static str = "crux_card";
}

impl CruxCardPayload {
    /// Repairs the card: bounds text, resolves persona names (when the context
    /// names a claim, only its two parties count), drops duplicates and
    /// unknown personas with a note. Fails when the question is empty or no
    /// known party's position survives.
    pub fn validate(
        &self,
        ctx: &ExtractionContext<'_>,
        claim: Option<&ClaimId>,
    ) -> Result<Validated<Self>, ExtractionError> {
        let cleaner = super::text::Cleaner::for_board(ctx.blackboard());
        let mut notes = Vec::new();
        let Some(question) =
            cleaner.clean(&self.question, Limits::SENTENCE, "question", &mut notes)
        else {
            return Err(ExtractionError::Invalid {
                payload: Self::NAME,
                field: "question",
                reason: "is empty".into(),
            });
        };
        let parties = claim
            .and_then(|c| ctx.blackboard().claim(c))
            .map(|c| c.personas.clone());
        let mut positions: Vec<CruxPositionPayload> = Vec::new();
        for p in &self.positions {
            let Some(id) = ctx.resolve_debater(&p.persona) else {
                notes.push(format!(
                    "positions: dropped unknown persona {:?}",
                    p.persona
                ));
                continue;
            };
            if parties
                .as_ref()
                .is_some_and(|parties| !parties.contains(&id))
            {
                notes.push(format!("positions: dropped {id}, not a party to the claim"));
                continue;
            }
            if positions.iter().any(|q| q.persona == id.as_str()) {
                notes.push(format!("positions: dropped a second position for {id}"));
                continue;
            }
            positions.push(CruxPositionPayload {
                persona: id.to_string(),
                position: p.position,
                reasoning: cleaner
                    .clean(
                        &p.reasoning,
                        Limits::PARAGRAPH,
                        "positions.reasoning",
                        &mut notes,
                    )
                    .unwrap_or_default(),
                falsifier: cleaner
                    .clean(
                        &p.falsifier,
                        Limits::SENTENCE,
                        "positions.falsifier",
                        &mut notes,
                    )
                    .unwrap_or_default(),
            });
        }
        if positions.is_empty() {
            return Err(ExtractionError::Invalid {
                payload: Self::NAME,
                field: "positions",
                reason: "has no position of a known party".into(),
            });
        }
        let value = Self {
            question,
            positions,
            disagreement_type: self.disagreement_type,
            diagnosis: cleaner
                .clean(&self.diagnosis, Limits::PARAGRAPH, "diagnosis", &mut notes)
                .unwrap_or_default(),
            resolved: self.resolved,
        };
        let base = ctx.blackboard().crux_cards().len();
        Ok(Validated::new(value, notes, base))
    }
}

impl Validated<CruxCardPayload> {
    /// A `crux_card_added` event (id `card-N`), followed, when the card is for
    /// a claim, by the claim's transition: resolved if the parties converged,
    /// abandoned otherwise (the card still records the crux).
    pub fn into_events(
        self,
        claim: Option<&ClaimId>,
        room: Option<&CruxRoomId>,
        round: u32,
    ) -> Vec<DebateEvent> {
        let card = self.value;
        let id = CruxCardId::new(format!("card-{}", self.base + 1));
        let transition = match (claim, card.resolved) {
            (None, _) => None,
            (Some(_), true) => Some(ClaimTransition::Resolved {
                resolution: if card.diagnosis.is_empty() {
                    card.question.clone()
                } else {
                    card.diagnosis.clone()
                },
            }),
            (Some(_), false) => Some(ClaimTransition::Abandoned {
                reason: format!("no convergence in the crux room; crux: {}", card.question),
            }),
        };
        let mut events = vec![DebateEvent::CruxCardAdded {
            card: CruxCard {
                id,
                claim: claim.cloned(),
                room: room.cloned(),
                question: card.question,
                positions: card
                    .positions
                    .into_iter()
                    .map(|p| CruxPosition {
                        persona: PersonaId::new(p.persona),
                        stance: p.position,
                        reasoning: p.reasoning,
                        falsifier: p.falsifier,
                    })
                    .collect(),
                disagreement_type: card.disagreement_type,
                diagnosis: card.diagnosis,
                resolved: card.resolved,
                round,
            },
        }];
        if let (Some(claim), Some(transition)) = (claim, transition) {
            events.push(DebateEvent::ClaimStatusChanged {
                claim: claim.clone(),
                transition,
            });
        }
        events
    }
}
