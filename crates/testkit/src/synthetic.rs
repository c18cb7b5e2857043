//! Deterministic synthetic debates of any size, for benchmarks and load tests
//! (moved here from agon-core, which keeps only the data model). The same
//! arguments always give the same events.

use chrono::{DateTime, Duration};

use agon_core::ClaimTransition;
use agon_core::Intensity;
use agon_core::PersonaId;
use agon_core::RoundRecord;
use agon_core::{AspectPositionUpdate, DebateEvent};
use agon_core::{CruxCard, CruxPosition, CruxStance, DisagreementType};
use agon_core::{DebateAspect, Persona, Topic};
use agon_core::{DialogueMessage, MessageKind};
use agon_core::{Reflection, ReflectionKind};

const SENTENCES: [&str; 8] = [
    "The evidence from the last three cycles points the other way, and the base rate matters more than the anecdote.",
    "If we take the long view the volatility washes out, but the board reports every quarter and cannot wait.",
    "I concede the accounting point, yet the covenant test is what actually binds the treasury in a bad quarter.",
    "Your numbers assume the drawdown and the revenue shock never coincide, which is exactly what happened in 2020.",
    "A capped allocation changes the argument: the question becomes governance, not market risk.",
    "Custody, audit and amendment costs add up to more than one percent a year before any return is earned.",
    "History offers many fixed-supply assets that failed as money; scarcity alone is not a store of value.",
    "We agree on the stress test and differ only on what a passing result would license us to do.",
];

/// A debate with `personas` debaters over 3 aspects and `messages` takes:
/// after every take a position update; every 7th take a disagreement, every
/// 11th an agreement, every 13th evidence, every 50th a concession and a
/// shift; a claim every 40 takes that is resolved 40 takes later (every
/// third through a crux room with 4 room messages and a crux card); a
/// reflection every 100 takes; a round record at each aspect change.
pub fn debate(personas: usize, messages: usize) -> Vec<DebateEvent> {
    let personas = personas.max(2);
    let ids: Vec<PersonaId> = (0..personas)
        .map(|i| PersonaId::new(format!("p{i}")))
        .collect();
    let aspects = ["horizon", "accounting", "opportunity"];
    let t0 = DateTime::UNIX_EPOCH;
    let mut events = vec![DebateEvent::DebateStarted {
        debate: "synthetic".into(),
        topic: Topic::new("Should a mid-size company hold Bitcoin as a treasury reserve asset?"),
        aspects: aspects
            .iter()
            .map(|a| {
                DebateAspect::new(
                    *a,
                    a.to_uppercase(),
                    format!("The {a} aspect of the question."),
                )
            })
            .collect(),
        personas: ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                Persona::debater(
                    id.clone(),
                    format!("Persona {i}"),
                    "Argues a consistent line.",
                    "Plain.",
                )
            })
            .collect(),
        time: t0,
        protocol: None,
    }];
    let per_aspect = messages.div_ceil(aspects.len()).max(1);
    let mut claims = 0usize;
    let mut rooms = 0usize;
    let mut cards = 0usize;
    for n in 0..messages {
        let aspect_index = (n / per_aspect).min(aspects.len() - 1);
        let aspect = aspects[aspect_index];
        let round = aspect_index as u32 + 1;
        if n % per_aspect == 0 {
            if n > 0 {
                events.push(round_record(aspects[aspect_index - 1], round - 1, &ids));
            }
            events.push(DebateEvent::AspectStarted {
                aspect: aspect.into(),
                round,
            });
        }
        let speaker = ids[n % personas].clone();
        let other = ids[(n + 1) % personas].clone();
        let id = format!("m{n}");
        events.push(DebateEvent::MessageAppended {
            message: DialogueMessage {
                id: id.clone().into(),
                persona: speaker.clone(),
                kind: MessageKind::Take,
                aspect: Some(aspect.into()),
                round,
                miniround: Some(((n % per_aspect) / personas) as u32),
                crux_room: None,
                content: format!("{} (point {n})", SENTENCES[n % SENTENCES.len()]),
                time: t0 + Duration::seconds(n as i64),
                reply_to: (n > 0).then(|| format!("m{}", n - 1).into()),
                meta: None,
            },
        });
        events.push(DebateEvent::PositionUpdated {
            persona: speaker.clone(),
            round,
            overall_stance: Some(format!(
                "Stance of {speaker} as of point {n}: {}",
                SENTENCES[(n + 3) % 8]
            )),
            aspect: Some(AspectPositionUpdate {
                aspect: aspect.into(),
                position: Some(format!("Position at point {n}: {}", SENTENCES[(n + 5) % 8])),
                evidence: if n % 13 == 0 {
                    vec![format!("Evidence item {n}")]
                } else {
                    vec![]
                },
                challenged: if n % 17 == 0 {
                    vec![format!("Challenge {n}")]
                } else {
                    vec![]
                },
                answered: if n % 17 == 5 {
                    vec![format!("Challenge {}", n - 5)]
                } else {
                    vec![]
                },
            }),
        });
        if n % 7 == 0 {
            events.push(DebateEvent::DisagreementRecorded {
                persona: speaker.clone(),
                with: other.clone(),
                criteria: Vec::new(),
                on: format!("disputed point {n}"),
                intensity: if n % 14 == 0 {
                    Intensity::Strong
                } else {
                    Intensity::Mild
                },
                round,
            });
        }
        if n % 11 == 0 {
            events.push(DebateEvent::AgreementRecorded {
                persona: speaker.clone(),
                with: other.clone(),
                on: format!("shared point {n}"),
                round,
            });
        }
        if n % 50 == 49 {
            events.push(DebateEvent::ConcessionRecorded {
                persona: speaker.clone(),
                text: format!("conceded point {n}"),
                round,
            });
            events.push(DebateEvent::ShiftRecorded {
                persona: speaker.clone(),
                text: format!("shifted at point {n}"),
                round,
            });
        }
        if n % 40 == 39 {
            claims += 1;
            events.push(DebateEvent::ClaimOpened {
                claim: format!("claim-{claims}").into(),
                text: format!("Claim {claims}: {}", SENTENCES[claims % 8]),
                personas: [speaker.clone(), other.clone()],
                round,
                source_messages: vec![id.clone().into()],
            });
            if claims > 1 {
                let old = claims - 1;
                if old.is_multiple_of(3) {
                    rooms += 1;
                    events.extend(crux_room(
                        &mut cards,
                        old,
                        rooms,
                        [&speaker, &other],
                        round,
                        t0 + Duration::seconds(n as i64),
                    ));
                } else {
                    events.push(DebateEvent::ClaimStatusChanged {
                        claim: format!("claim-{old}").into(),
                        transition: ClaimTransition::Abandoned {
                            reason: "dropped".into(),
                        },
                    });
                }
            }
        }
        if n % 100 == 99 {
            events.push(DebateEvent::ReflectionAdded {
                reflection: Reflection {
                    id: format!("reflection-{}", n / 100 + 1).into(),
                    content: format!("Around point {n}, {}", SENTENCES[(n / 100) % 8]),
                    kind: ReflectionKind::Pattern,
                    about: vec![speaker.clone(), other.clone()],
                    source_messages: vec![id.into()],
                    round,
                    importance: (n / 100 % 10) as u8 + 1,
                },
            });
        }
    }
    events
}

fn round_record(aspect: &str, round: u32, ids: &[PersonaId]) -> DebateEvent {
    DebateEvent::RoundRecorded {
        record: RoundRecord {
            aspect: aspect.into(),
            round,
            takes: ids
                .iter()
                .map(|id| {
                    (
                        id.clone(),
                        agon_core::PersonaTake {
                            position: format!("{id} held the line on {aspect}."),
                            key_argument: SENTENCES[round as usize % 8].to_owned(),
                            evidence_cited: vec![format!("Evidence for {aspect}")],
                            targeted_persona: None,
                        },
                    )
                })
                .collect(),
            summary: format!("The {aspect} round ended without agreement."),
            new_disagreements: vec![format!("{aspect} dispute")],
            shifts: vec![],
        },
    }
}

fn crux_room(
    cards: &mut usize,
    claim: usize,
    room: usize,
    parties: [&PersonaId; 2],
    round: u32,
    time: DateTime<chrono::Utc>,
) -> Vec<DebateEvent> {
    let claim_id = format!("claim-{claim}");
    let room_id = format!("room-{room}");
    let mut events = vec![DebateEvent::ClaimStatusChanged {
        claim: claim_id.clone().into(),
        transition: ClaimTransition::InCruxRoom {
            room: room_id.clone().into(),
        },
    }];
    for turn in 0..4 {
        events.push(DebateEvent::MessageAppended {
            message: DialogueMessage {
                id: format!("{room_id}-t{turn}").into(),
                persona: parties[turn % 2].clone(),
                kind: if turn < 2 {
                    MessageKind::CruxPosition
                } else {
                    MessageKind::CruxExchange
                },
                aspect: None,
                round,
                miniround: None,
                crux_room: Some(room_id.clone().into()),
                content: SENTENCES[(claim + turn) % 8].to_owned(),
                time,
                reply_to: None,
                meta: None,
            },
        });
    }
    *cards += 1;
    events.push(DebateEvent::CruxCardAdded {
        card: CruxCard {
            id: format!("card-{cards}").into(),
            claim: Some(claim_id.clone().into()),
            room: Some(room_id.into()),
            question: format!("Does claim {claim} hold over a quarter?"),
            positions: parties
                .iter()
                .enumerate()
                .map(|(i, p)| CruxPosition {
                    persona: (*p).clone(),
                    stance: if i == 0 {
                        CruxStance::Yes
                    } else {
                        CruxStance::No
                    },
                    reasoning: SENTENCES[i].to_owned(),
                    falsifier: "A quarter that breaks the pattern.".to_owned(),
                })
                .collect(),
            disagreement_type: DisagreementType::Horizon,
            diagnosis: "They weigh horizons differently.".to_owned(),
            resolved: false,
            round,
        },
    });
    events.push(DebateEvent::ClaimStatusChanged {
        claim: claim_id.into(),
        transition: ClaimTransition::Abandoned {
            reason: "no convergence".into(),
        },
    });
    events
}

#[cfg(test)]
mod tests {
    use agon_core::Blackboard;

    #[test]
    fn synthetic_debates_replay() {
        for (personas, messages) in [(3, 100), (8, 1_000), (2, 0)] {
            let events = super::debate(personas, messages);
            let board = Blackboard::replay(&events).unwrap();
            assert_eq!(
                board
                    .messages()
                    .iter()
                    .filter(|m| m.kind == agon_core::MessageKind::Take)
                    .count(),
                messages
            );
        }
    }
}

/// A small hand-written debate for tests across the crates: two debaters
/// and a judge, two aspects, two takes on `safety`.
pub mod small {
    use chrono::{DateTime, Utc};

    use agon_core::DebateEvent;
    use agon_core::{DebateAspect, Persona, PersonaRole, Topic};
    use agon_core::{DialogueMessage, MessageKind};

    /// `minute` minutes after the Unix epoch.
    pub fn t(minute: i64) -> DateTime<Utc> {
        DateTime::UNIX_EPOCH + chrono::Duration::minutes(minute)
    }

    /// The `debate_started` event of the small debate.
    pub fn started() -> DebateEvent {
        DebateEvent::DebateStarted {
            debate: "d1".into(),
            topic: Topic::new("Should the city ban cars from the centre?"),
            aspects: vec![
                DebateAspect::new("safety", "Safety", "Does it save lives?"),
                DebateAspect::new("trade", "Trade", "What happens to shops?"),
            ],
            personas: vec![
                Persona::debater("ada", "Ada", "urbanist", "brisk"),
                Persona::debater("bo", "Bo", "shop owner", "warm"),
                Persona {
                    role: PersonaRole::Judge,
                    ..Persona::debater("judge", "Judge", "neutral", "dry")
                },
            ],
            time: t(0),
            protocol: None,
        }
    }

    /// A take on `safety` in round 1.
    pub fn message(id: &str, persona: &str, content: &str) -> DialogueMessage {
        DialogueMessage {
            id: id.into(),
            persona: persona.into(),
            kind: MessageKind::Take,
            aspect: Some("safety".into()),
            round: 1,
            miniround: Some(0),
            crux_room: None,
            content: content.into(),
            time: t(1),
            reply_to: None,
            meta: None,
        }
    }

    /// The small debate's log up to two takes on `safety`.
    pub fn log() -> Vec<DebateEvent> {
        vec![
            started(),
            DebateEvent::AspectStarted {
                aspect: "safety".into(),
                round: 1,
            },
            DebateEvent::MessageAppended {
                message: message("m1", "ada", "Cars kill 40 people a year here."),
            },
            DebateEvent::MessageAppended {
                message: message("m2", "bo", "Deliveries need vans, and vans need roads."),
            },
        ]
    }
}
