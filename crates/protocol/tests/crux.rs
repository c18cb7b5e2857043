//! The crux room, nested in a debate.

use agon_core::{
    Blackboard, ClaimStatus, DebateAspect, DebateEvent, MessageKind, Persona, StepId, Topic,
    TurnKey,
};
use agon_protocol::crux::{room_step, turns_taken};
use agon_protocol::{CruxRules, Step};

use crate::support::{Lag, Script, Sim, T0, describe_step, rules};

/// A board with two debaters and claim-1 between them, in room-1.
fn board_with_room() -> Blackboard {
    let mut bb = Blackboard::new();
    for e in [
        DebateEvent::DebateStarted {
            debate: "d".into(),
            topic: Topic::new("Ban cars?"),
            aspects: vec![DebateAspect::new("aspect-1", "Cost", "Who pays")],
            personas: vec![
                Persona::debater("ada", "Ada", "urbanist", "brisk"),
                Persona::debater("bo", "Bo", "driver", "calm"),
            ],
            time: T0,
            protocol: None,
        },
        DebateEvent::ClaimOpened {
            claim: "claim-1".into(),
            text: "Cars are essential downtown".into(),
            personas: ["ada".into(), "bo".into()],
            round: 0,
            source_messages: vec![],
        },
        agon_protocol::crux::open_room(&Blackboard::new(), &"claim-1".into()),
    ] {
        bb.apply(&e).unwrap();
    }
    bb
}

/// Plays `n` turns of the room as plain messages.
fn play(bb: &mut Blackboard, rules: CruxRules, n: usize) -> Vec<String> {
    let mut steps = Vec::new();
    for _ in 0..n {
        let step = room_step(bb, &"claim-1".into(), &"room-1".into(), rules);
        steps.push(describe_step(&step));
        let speak = match step {
            Step::Speak(s) | Step::Ask(agon_protocol::Ask::Convergence { otherwise: s, .. }) => s,
            _ => break,
        };
        let message = speak.message(bb, format!("{} speaks", speak.persona), T0);
        bb.apply(&DebateEvent::MessageAppended { message }).unwrap();
    }
    steps
}

#[test]
fn a_full_room_alternates_positions_exchanges_checks_and_ends_with_the_card() {
    let mut bb = board_with_room();
    let steps = play(&mut bb, CruxRules::default(), 20);
    insta::assert_snapshot!(steps.join("\n"), @r"
    speak crux/room-1/0
    speak crux/room-1/1
    speak crux/room-1/2
    speak crux/room-1/3
    speak crux/room-1/4
    speak crux/room-1/5
    check room-1 else speak crux/room-1/6
    speak crux/room-1/7
    speak crux/room-1/8
    speak crux/room-1/9
    card room-1
    ");
    let kinds: Vec<MessageKind> = bb.messages().iter().map(|m| m.kind.clone()).collect();
    assert_eq!(
        kinds[..2],
        [MessageKind::CruxPosition, MessageKind::CruxPosition]
    );
    assert!(kinds[2..].iter().all(|k| *k == MessageKind::CruxExchange));
    let speakers: Vec<&str> = bb.messages().iter().map(|m| m.persona.as_str()).collect();
    assert_eq!(speakers[..4], ["ada", "bo", "ada", "bo"]);
}

#[test]
fn an_interrupted_room_resumes_at_its_next_turn_counting_skips() {
    let mut bb = board_with_room();
    play(&mut bb, CruxRules::default(), 3);
    bb.apply(&agon_protocol::step_failed(
        StepId::Utterance(TurnKey::Crux {
            room: "room-1".into(),
            turn: 3,
        }),
        "empty twice",
        T0,
    ))
    .unwrap();
    assert_eq!(turns_taken(&bb, &"room-1".into()), 4);
    let resumed: Blackboard = serde_json::from_str(&serde_json::to_string(&bb).unwrap()).unwrap();
    let next = room_step(
        &resumed,
        &"claim-1".into(),
        &"room-1".into(),
        CruxRules::default(),
    );
    assert_eq!(describe_step(&next), "speak crux/room-1/4");
}

#[test]
fn convergence_ends_the_room_early_and_resolves_the_claim() {
    let script = Script {
        converge_at_check: Some(1),
        ..Script::default()
    };
    let crux = CruxRules {
        enabled: true,
        max_turns: 8,
        check_every: 2,
        max_rooms: 1,
        min_rooms: 0,
    };
    let mut sim = Sim::new(rules(1, 2, crux, false), script, Lag::Eager);
    sim.run(10_000);
    assert!(sim.finished());
    let room: Vec<_> = sim
        .board
        .messages()
        .iter()
        .filter(|m| m.crux_room.is_some())
        .collect();
    assert_eq!(room.len(), 4, "2 positions + 2 exchanges, then converged");
    assert_eq!(sim.board.claims()[0].status, ClaimStatus::Resolved);
}

#[test]
fn a_failed_card_is_recorded_and_the_claim_abandoned() {
    let mut bb = board_with_room();
    let events = agon_protocol::crux::card_events(
        &bb,
        &"claim-1".into(),
        &"room-1".into(),
        Ok(serde_json::json!({"question": "", "positions": []})),
        T0,
    );
    for e in &events {
        bb.apply(e).unwrap();
    }
    assert!(bb.step_failed(&StepId::CruxCard("room-1".into())));
    assert_eq!(bb.claims()[0].status, ClaimStatus::Abandoned);
    assert!(bb.crux_cards().is_empty());
}

#[test]
fn a_failed_convergence_check_counts_as_not_converged_and_is_recorded() {
    let failed = agon_protocol::crux::convergence(
        &"room-1".into(),
        Err(agon_protocol::ModelFailure::new(
            agon_protocol::FailureKind::Timeout,
            "timeout",
        )),
        T0,
    );
    assert!(!failed.converged);
    match failed.failure {
        Some(DebateEvent::StepFailed { step, reason, .. }) => {
            assert_eq!(step, StepId::ConvergenceCheck("room-1".into()));
            assert_eq!(reason, "timeout");
        }
        other => panic!("{other:?}"),
    }
    let ok = agon_protocol::crux::convergence(
        &"room-1".into(),
        Ok(serde_json::json!({"converged": true, "reason": "agreed"})),
        T0,
    );
    assert!(ok.converged && ok.failure.is_none());
}
