//! Properties over generated event logs:
//! (a) replaying the accepted events equals applying them incrementally,
//!     also when resuming from a JSON snapshot taken at any point;
//! (b) a rejected event leaves the blackboard unchanged, and no input panics.

use agon_core::{
    Blackboard, ClaimTransition, CruxCard, CruxPosition, CruxStance, DebateAspect, DebateEvent,
    DebateSummary, DialogueMessage, DisagreementType, Intensity, MessageKind, MessageSpan, Persona,
    PersonaRole, Reaction, Reflection, ReflectionKind, SummaryScope, Topic,
};
use chrono::{DateTime, Duration};
use proptest::prelude::*;

fn start() -> DebateEvent {
    DebateEvent::DebateStarted {
        debate: "gen".into(),
        topic: Topic::new("Generated debate"),
        aspects: vec![
            DebateAspect::new("a0", "A0", "first"),
            DebateAspect::new("a1", "A1", "second"),
        ],
        personas: vec![
            Persona::debater("p0", "P0", "c", "v"),
            Persona::debater("p1", "P1", "c", "v"),
            Persona::debater("p2", "P2", "c", "v"),
            Persona {
                role: PersonaRole::Judge,
                ..Persona::debater("judge", "Judge", "c", "v")
            },
        ],
        time: DateTime::UNIX_EPOCH,
        protocol: None,
    }
}

fn persona() -> impl Strategy<Value = String> {
    prop_oneof![8 => prop::sample::select(vec!["p0", "p1", "p2"]), 1 => Just("judge"), 1 => Just("ghost")].prop_map(String::from)
}
fn aspect() -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(
        0.8,
        prop_oneof![9 => prop::sample::select(vec!["a0", "a1"]), 1 => Just("zz")]
            .prop_map(String::from),
    )
}
fn message_id() -> impl Strategy<Value = String> {
    (0u8..60).prop_map(|i| format!("m{i}"))
}
fn claim_id() -> impl Strategy<Value = String> {
    (0u8..5).prop_map(|i| format!("c{i}"))
}
fn room_id() -> impl Strategy<Value = String> {
    (0u8..4).prop_map(|i| format!("r{i}"))
}
fn text() -> impl Strategy<Value = String> {
    prop_oneof![12 => "[a-z]{1,8}( [a-z]{1,8}){0,4}", 1 => Just(String::new()), 1 => Just("  ".to_owned())]
}

fn message() -> impl Strategy<Value = DebateEvent> {
    (
        message_id(),
        persona(),
        prop_oneof![
            Just(MessageKind::Take),
            Just(MessageKind::Opening),
            Just(MessageKind::CruxPosition),
            Just(MessageKind::Proposal),
            persona().prop_map(|p| MessageKind::Critique { target: p.into() }),
        ],
        aspect(),
        prop::option::weighted(0.15, room_id()),
        prop::option::weighted(0.3, message_id()),
        text(),
        0u32..5,
    )
        .prop_map(|(id, persona, kind, aspect, room, reply, content, round)| {
            DebateEvent::MessageAppended {
                message: DialogueMessage {
                    id: id.into(),
                    persona: persona.into(),
                    kind,
                    aspect: aspect.map(Into::into),
                    round,
                    miniround: Some(0),
                    crux_room: room.map(Into::into),
                    content,
                    time: DateTime::UNIX_EPOCH + Duration::seconds(i64::from(round)),
                    reply_to: reply.map(Into::into),
                    meta: None,
                },
            }
        })
}

fn ledger() -> impl Strategy<Value = DebateEvent> {
    (
        persona(),
        persona(),
        text(),
        0u32..5,
        0u8..6,
        any::<bool>(),
        aspect(),
    )
        .prop_map(
            |(p, with, text, round, which, strong, aspect)| match which {
                0 => DebateEvent::AgreementRecorded {
                    persona: p.into(),
                    with: with.into(),
                    on: text,
                    round,
                },
                1 => DebateEvent::DisagreementRecorded {
                    persona: p.into(),
                    with: with.into(),
                    criteria: Vec::new(),
                    on: text,
                    intensity: if strong {
                        Intensity::Strong
                    } else {
                        Intensity::Mild
                    },
                    round,
                },
                2 => DebateEvent::ConcessionRecorded {
                    persona: p.into(),
                    text,
                    round,
                },
                3 => DebateEvent::ShiftRecorded {
                    persona: p.into(),
                    text,
                    round,
                },
                4 => DebateEvent::PositionUpdated {
                    persona: p.into(),
                    round,
                    overall_stance: strong.then(|| text.clone()),
                    aspect: aspect.map(|a| agon_core::AspectPositionUpdate {
                        aspect: a.into(),
                        position: Some(text.clone()),
                        evidence: vec![text.clone()],
                        challenged: vec![with.clone()],
                        answered: if strong { vec![with] } else { vec![] },
                    }),
                },
                _ => DebateEvent::KeyContributionRecorded {
                    persona: p.into(),
                    text,
                },
            },
        )
}

fn claims() -> impl Strategy<Value = DebateEvent> {
    (
        claim_id(),
        persona(),
        persona(),
        text(),
        prop::collection::vec(message_id(), 0..3),
        0u8..4,
        room_id(),
    )
        .prop_map(|(claim, a, b, text, sources, which, room)| match which {
            0 => DebateEvent::ClaimOpened {
                claim: claim.into(),
                text,
                personas: [a.into(), b.into()],
                round: 1,
                source_messages: sources.into_iter().map(Into::into).collect(),
            },
            1 => DebateEvent::ClaimStatusChanged {
                claim: claim.into(),
                transition: ClaimTransition::InCruxRoom { room: room.into() },
            },
            2 => DebateEvent::ClaimStatusChanged {
                claim: claim.into(),
                transition: ClaimTransition::Resolved { resolution: text },
            },
            _ => DebateEvent::ClaimStatusChanged {
                claim: claim.into(),
                transition: ClaimTransition::Abandoned { reason: text },
            },
        })
}

fn derived() -> impl Strategy<Value = DebateEvent> {
    (
        0u8..8,
        text(),
        persona(),
        persona(),
        claim_id(),
        room_id(),
        0u8..13,
        0usize..45,
        0u32..4,
    )
        .prop_map(
            |(which, text, p, q, claim, room, importance, n, round)| match which {
                0 => DebateEvent::ReflectionAdded {
                    reflection: Reflection {
                        id: format!("refl{n}").into(),
                        content: text,
                        kind: ReflectionKind::Pattern,
                        about: vec![p.into()],
                        source_messages: vec![format!("m{n}").into()],
                        round,
                        importance,
                    },
                },
                1 => DebateEvent::CruxCardAdded {
                    card: CruxCard {
                        id: format!("card{n}").into(),
                        claim: Some(claim.into()),
                        room: (importance % 2 == 0).then(|| room.into()),
                        question: text.clone(),
                        positions: vec![CruxPosition {
                            persona: p.into(),
                            stance: CruxStance::Nuanced,
                            reasoning: text.clone(),
                            falsifier: text,
                        }],
                        disagreement_type: DisagreementType::Values,
                        diagnosis: String::new(),
                        resolved: importance > 6,
                        round,
                    },
                },
                2 => DebateEvent::AspectStarted {
                    aspect: if n % 2 == 0 { "a0".into() } else { "a1".into() },
                    round,
                },
                3 => DebateEvent::ProposalRecorded {
                    proposal: format!("pr{}", n % 4).into(),
                    proposer: p.into(),
                    content: text,
                    time: DateTime::UNIX_EPOCH,
                },
                4 => DebateEvent::ProposalReaction {
                    proposal: format!("pr{}", n % 4).into(),
                    persona: q.into(),
                    reaction: Reaction::Support,
                },
                5 => DebateEvent::SummaryRecorded {
                    summary: DebateSummary {
                        scope: if importance % 2 == 0 {
                            SummaryScope::Rolling
                        } else {
                            SummaryScope::Persona { persona: p.into() }
                        },
                        span: MessageSpan {
                            start: n / 3,
                            end: n,
                        },
                        text,
                        before_chars: n * 100,
                        after_chars: n,
                        method: "rolling".into(),
                        round: None,
                        temperature_centi: None,
                        latency_ms: Some(5),
                        tokens: None,
                        model: None,
                        time: DateTime::UNIX_EPOCH,
                    },
                },
                6 => DebateEvent::StepFailed {
                    step: if importance % 2 == 0 {
                        agon_core::StepId::Analysis {
                            message: format!("m{n}").into(),
                            part: agon_core::AnalysisPart::Position,
                        }
                    } else {
                        agon_core::StepId::RoundRecord(format!("a{n}").into())
                    },
                    reason: text,
                    time: DateTime::UNIX_EPOCH,
                },
                _ => {
                    if importance == 12 {
                        DebateEvent::DebateFinished {
                            time: DateTime::UNIX_EPOCH,
                        }
                    } else {
                        start()
                    }
                }
            },
        )
}

fn event() -> impl Strategy<Value = DebateEvent> {
    prop_oneof![6 => message(), 4 => ledger(), 3 => claims(), 3 => derived()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn replay_equals_incremental_and_rejections_change_nothing(
        events in prop::collection::vec(event(), 0..160),
        cut in 0.0f64..1.0,
    ) {
        let mut board = Blackboard::new();
        let mut accepted = Vec::new();
        for event in std::iter::once(start()).chain(events) {
            let before = board.clone();
            match board.apply(&event) {
                Ok(()) => accepted.push(event),
                Err(_) => prop_assert_eq!(&board, &before),
            }
        }
        let replayed = Blackboard::replay(&accepted).unwrap();
        prop_assert_eq!(&replayed, &board);

        let at = ((accepted.len() as f64) * cut) as usize;
        let prefix = Blackboard::replay(&accepted[..at]).unwrap();
        let mut resumed: Blackboard = serde_json::from_str(&serde_json::to_string(&prefix).unwrap()).unwrap();
        for event in &accepted[at..] {
            resumed.apply(event).unwrap();
        }
        prop_assert_eq!(&resumed, &board);

        let json = serde_json::to_string(&accepted).unwrap();
        let back: Vec<DebateEvent> = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back, accepted);
    }
}
