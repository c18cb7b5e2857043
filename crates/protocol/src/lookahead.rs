//! Looking one turn ahead: a protocol is a pure function of the board, so
//! the turns that follow a turn can be planned before its message exists,
//! on a copy of the board where it is already appended (with a stand-in
//! text). The interpreter uses this to prepare what those turns will read
//! while the turn waits on its model (their recall from the vector
//! memory); nothing planned here is ever run or recorded.

use agon_core::{Blackboard, DebateEvent};
use chrono::{DateTime, Utc};

use crate::{Next, Protocol, Speak, Step, Voice};

/// Protocol records (an aspect starts, a room opens) applied on the way to
/// the next turn, at most.
const RECORDS_AHEAD: usize = 3;

/// The turns that will run alone right after `turn`. `ahead` is a copy of
/// the board `turn` starts from (the caller makes it, and only for turns
/// that need it: a copy per turn is what a 10,000-turn session cannot
/// afford); it becomes the board those turns will start from: `turn`'s
/// message appended (a stand-in text) and the protocol records planned
/// before them applied. Empty when the protocol would wait for background
/// work, run a group of turns, ask, or finish first (what it plans then
/// may depend on what the turn says).
pub fn turns_after(
    protocol: &dyn Protocol,
    ahead: &mut Blackboard,
    turn: &Speak,
    time: DateTime<Utc>,
) -> Vec<Speak> {
    // A stand-in text: the board refuses an empty message, and nothing
    // planned here reads what the turn says.
    let message = turn.message(ahead, "…".to_owned(), time);
    if ahead
        .apply(&DebateEvent::MessageAppended { message })
        .is_err()
    {
        return Vec::new();
    }
    for _ in 0..=RECORDS_AHEAD {
        let Next::Step(step) = protocol.next(ahead).next else {
            break;
        };
        match *step {
            Step::Speak(next) => return vec![next],
            Step::Record { events, .. } => {
                if events.iter().any(|e| ahead.apply(e).is_err()) {
                    break;
                }
            }
            _ => break,
        }
    }
    Vec::new()
}

/// The recalls of the turns [`turns_after`] plans (a judge's turn recalls
/// nothing), each on the board that turn will start from: what the
/// interpreter recalls ahead while `turn` waits on its model.
pub fn recalls_after(
    protocol: &dyn Protocol,
    ahead: &mut Blackboard,
    turn: &Speak,
    time: DateTime<Utc>,
) -> Vec<agon_context::TurnRecall> {
    turns_after(protocol, ahead, turn, time)
        .iter()
        .filter(|t| t.voice != Voice::Judge)
        .filter_map(|t| agon_context::turn_recall(ahead, &t.persona, t.phase.as_ref()?))
        .collect()
}
