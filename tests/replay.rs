//! Replay determinism and the fixture's integrity.

use agon_core::{Blackboard, ClaimStatus, DebateStatus};

use crate::fixture;

#[test]
fn fixture_replays_to_the_expected_shape() {
    let board = fixture::blackboard();
    assert_eq!(board.status(), DebateStatus::Running);
    assert_eq!(board.personas().len(), 3);
    assert_eq!(board.aspects().len(), 3);
    assert_eq!(board.messages().len(), 34);
    assert_eq!(board.rounds().len(), 3);
    assert_eq!(board.reflections().len(), 3);
    assert_eq!(board.crux_cards().len(), 1);
    let statuses: Vec<ClaimStatus> = board.claims().iter().map(|c| c.status).collect();
    assert_eq!(
        statuses,
        [
            ClaimStatus::Abandoned,
            ClaimStatus::Active,
            ClaimStatus::Active
        ]
    );
    assert!(board.claims()[0].card.is_some());
    let mara = board.position(&"mara".into()).unwrap();
    assert_eq!(mara.concessions.len(), 3);
    assert_eq!(mara.shifts.len(), 2);
    assert!(
        mara.aspects["horizon"].challenged.is_empty(),
        "answered challenge was removed"
    );
}

#[test]
fn snapshot_round_trips_through_json_to_an_equal_blackboard() {
    let board = fixture::blackboard();
    let json = serde_json::to_string(&board).unwrap();
    let back: Blackboard = serde_json::from_str(&json).unwrap();
    assert_eq!(back, board);
    // The rebuilt indexes work: lookups and further applies behave the same.
    assert_eq!(back.message(&"m10".into()), board.message(&"m10".into()));
    assert_eq!(
        back.claim_for_room(&"room-1".into()).map(|c| &c.id),
        Some(&"claim-1".into())
    );
    let events = fixture::events();
    let mut a = Blackboard::replay(&events[..40]).unwrap();
    let snapshot: Blackboard = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
    let mut b = snapshot;
    for event in &events[40..] {
        a.apply(event).unwrap();
        b.apply(event).unwrap();
    }
    assert_eq!(a, b);
    assert_eq!(a, board);
}

#[test]
fn every_fixture_event_round_trips_through_json() {
    for event in fixture::events() {
        let json = serde_json::to_value(&event).unwrap();
        let back: agon_core::DebateEvent = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back, event, "{json}");
    }
}
