//! Looking one turn ahead (`agon_protocol::turns_after`): the turn planned
//! on a board where the current turn's message is already appended is the
//! turn that runs next, so what it reads can be prepared while the current
//! turn waits on its model.

use agon_protocol::{Next, Step, turns_after};

use crate::support::{Lag, Script, Sim, T0, rules};

#[test]
fn the_turn_planned_ahead_is_the_turn_that_runs_next() {
    let mut sim = Sim::new(
        rules(2, 2, agon_protocol::CruxRules::default(), true),
        Script::default(),
        Lag::Eager,
    );
    let (mut made, mut hits, mut misses) = (0, 0, Vec::new());
    let mut predicted: Option<agon_protocol::Speak> = None;
    for _ in 0..500 {
        while sim.apply_background() {}
        let Next::Step(step) = sim.protocol.next(&sim.board).next else {
            break;
        };
        match step.as_ref() {
            Step::Speak(turn) => {
                if let Some(ahead) = predicted.take() {
                    if ahead == *turn {
                        hits += 1;
                    } else {
                        misses.push(format!("{} planned, {} ran", ahead.key, turn.key));
                    }
                }
                let mut board = sim.board.clone();
                let next = turns_after(sim.protocol.as_ref(), &mut board, turn, T0);
                assert_eq!(board.messages().len(), sim.board.messages().len() + 1);
                if let Some(next) = next.into_iter().next() {
                    made += 1;
                    predicted = Some(next);
                }
            }
            // A protocol record (an aspect starts) is planned ahead too.
            Step::Record { .. } => {}
            _ => predicted = None,
        }
        sim.execute(*step);
    }
    assert!(sim.finished());
    assert!(made >= 10, "{made} turns planned ahead");
    // A turn can change what comes next (a claim it makes opens a crux
    // room): a miss costs only the work done ahead.
    assert!(
        hits >= made - 2 && hits + misses.len() <= made,
        "{hits} of {made} ahead: {misses:?}"
    );
}
