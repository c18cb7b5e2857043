//! The fixture debate (`tests/fixtures/debate.json`): 3 personas × 3 aspects
//! × 3 minirounds, with claims, a crux room and card, round records and reflections.

use agon_core::{Blackboard, DebateEvent};

/// The fixture's events, in order.
pub fn events() -> Vec<DebateEvent> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/debate.json");
    let text = std::fs::read_to_string(path).expect("read fixture");
    serde_json::from_str(&text).expect("parse fixture")
}

/// The fixture's blackboard, with every event applied.
pub fn blackboard() -> Blackboard {
    Blackboard::replay(&events()).expect("fixture replays")
}

/// The blackboard after the first `n` events.
pub fn blackboard_after(n: usize) -> Blackboard {
    Blackboard::replay(&events()[..n]).expect("fixture prefix replays")
}

/// Index of the first event matching `predicate`.
pub fn position(predicate: impl Fn(&DebateEvent) -> bool) -> usize {
    events()
        .iter()
        .position(predicate)
        .expect("event in fixture")
}
