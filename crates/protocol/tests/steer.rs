//! Steering: a paused debate of any protocol plans no critical-path step,
//! background work still runs, and after the resume the debate ends with
//! the same transcript as one never paused (the notes are recorded beside it).

use agon_core::{DebateEvent, DialogueMessage};
use agon_protocol::{Next, Steer, TurnMode};
use chrono::DateTime;

use crate::support::{Lag, Script, Sim, rules};

/// A protocol's name and how to start a simulation of it.
type NewSim = (&'static str, fn() -> Sim);

fn protocols() -> Vec<NewSim> {
    fn structured() -> Sim {
        Sim::new(
            rules(2, 1, agon_protocol::CruxRules::default(), true),
            Script::default(),
            Lag::Lazy,
        )
    }
    fn dialectic() -> Sim {
        Sim::with(
            Box::new(agon_protocol::Dialectic::new(crate::dialectic::rules(2))),
            Script::default(),
            Lag::Lazy,
        )
    }
    fn deliberation() -> Sim {
        Sim::with(
            Box::new(agon_protocol::Deliberation::new(
                crate::deliberation::rules(12, 50, 50, TurnMode::RoundRobin),
            )),
            Script::default(),
            Lag::Lazy,
        )
    }
    vec![
        ("structured", structured),
        ("dialectic", dialectic),
        ("deliberation", deliberation),
    ]
}

fn steer(sim: &mut Sim, steer: Steer) {
    for event in steer.events(&sim.board, DateTime::UNIX_EPOCH).unwrap() {
        sim.board.apply(&event).unwrap();
    }
}

fn texts(messages: &[DialogueMessage]) -> Vec<(String, String)> {
    messages
        .iter()
        .map(|m| (m.persona.to_string(), m.content.clone()))
        .collect()
}

#[test]
fn a_pause_holds_every_protocol_and_a_resume_ends_it_as_if_never_paused() {
    for (name, new) in protocols() {
        let mut whole = new();
        whole.run(10_000);
        assert!(whole.finished(), "{name}");

        let mut steered = new();
        steered.run(4);
        steer(
            &mut steered,
            Steer::Note {
                text: "Keep to the budget.".into(),
                author: Some("moderator".into()),
            },
        );
        steer(&mut steered, Steer::Pause { by: None });
        let before = steered.board.messages().len();
        steered.run(10_000);
        assert_eq!(
            steered
                .trace
                .last()
                .map(String::as_str)
                .and_then(|t| t.split(" -> ").last()),
            Some("paused"),
            "{name}: the paused plan"
        );
        assert!(matches!(
            steered.protocol.next(&steered.board).next,
            Next::Paused
        ));
        // Background work still runs while paused.
        while steered.apply_background() {}
        assert_eq!(
            steered.board.messages().len(),
            before,
            "{name}: spoke while paused"
        );
        steer(&mut steered, Steer::Resume { by: None });
        steered.run(10_000);
        assert!(steered.finished(), "{name}");
        assert_eq!(
            texts(steered.board.messages()),
            texts(whole.board.messages()),
            "{name}: the transcript"
        );
        assert_eq!(steered.board.notes().len(), 1, "{name}");
        assert!(!steered.board.is_paused());
    }
}

#[test]
fn the_start_is_never_held_and_a_finished_debate_cannot_be_paused() {
    let (_, new) = protocols()[0];
    let mut sim = new();
    // Not started: nothing to pause, the first step is the start.
    let plan = sim.protocol.next(&sim.board);
    assert!(matches!(plan.next, Next::Step(_)));
    sim.run(10_000);
    assert!(sim.finished());
    assert!(
        sim.board
            .apply(&DebateEvent::DebatePaused {
                by: None,
                time: DateTime::UNIX_EPOCH
            })
            .is_err()
    );
}
