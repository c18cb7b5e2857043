//! A long aspect (issue 54): with 45 open challenges and 40 concessions on
//! the speaker's ledger, the analysis prompt still shows a challenge made
//! early and still open, whole, and an analysis that quotes it marks it
//! answered.

use agon_core::{Blackboard, DebateEvent};
use agon_extract::{ExtractionContext, PositionUpdate, parse_payload};
use agon_testkit::synthetic::small;
use serde_json::json;

/// One analysis of `speaker`'s message on `safety`: `raw` validated and
/// its events applied.
fn analyse(board: &mut Blackboard, speaker: &str, raw: serde_json::Value) {
    let update: PositionUpdate = parse_payload(raw).unwrap();
    let speaker = speaker.into();
    let validated = update
        .validate(&ExtractionContext::new(board).with_speaker(&speaker))
        .unwrap();
    for event in validated.into_events(&speaker, Some(&"safety".into()), 1) {
        board.apply(&event).unwrap();
    }
}

fn challenge(i: usize) -> String {
    format!("Who runs the night bus on route {i}?")
}

#[test]
fn an_early_open_challenge_reaches_the_analysis_and_can_be_answered() {
    let mut board = Blackboard::replay(&small::log()).unwrap();
    // 45 challenges (5 a message, the most one update records) and 40
    // concessions, one a message.
    for batch in 0..9 {
        let challenged: Vec<String> = (batch * 5..batch * 5 + 5).map(challenge).collect();
        analyse(
            &mut board,
            "ada",
            json!({"aspectPosition": {"challenged": challenged}}),
        );
    }
    for i in 0..40 {
        analyse(
            &mut board,
            "ada",
            json!({"concession": format!("the fare on line {i} may rise by ten cents")}),
        );
    }
    let open = |b: &Blackboard| {
        b.position(&"ada".into()).unwrap().aspects["safety"]
            .challenged
            .clone()
    };
    assert_eq!(open(&board).len(), 45);
    assert_eq!(board.position(&"ada".into()).unwrap().concessions.len(), 40);

    // Ada speaks again; her analysis prompt shows her state.
    let mut next = small::message(
        "m3",
        "ada",
        "The depot stays open: night buses keep running.",
    );
    next.round = 1;
    board
        .apply(&DebateEvent::MessageAppended { message: next })
        .unwrap();
    let prompt = agon_context::prompts::analysis(&board, &"m3".into(), 0).unwrap();
    assert!(
        prompt.user.contains(&format!("\"{}\"", challenge(0))),
        "the earliest open challenge, whole: {}",
        prompt.user
    );
    assert!(
        !prompt.user.contains('…'),
        "no entry is cut mid-way: {}",
        prompt.user
    );
    let state_line = prompt
        .user
        .lines()
        .nth(1)
        .expect("the state follows its heading");
    let state: serde_json::Value = serde_json::from_str(state_line).expect("whole JSON");
    assert_eq!(
        state["aspects"]["safety"]["challenged"]
            .as_array()
            .unwrap()
            .len(),
        45,
        "every open challenge"
    );

    // The analysis quotes it as listed: the ledger no longer holds it.
    analyse(
        &mut board,
        "ada",
        json!({"aspectPosition": {"answered": [challenge(0)]}}),
    );
    let left = open(&board);
    assert_eq!(left.len(), 44);
    assert!(!left.contains(&challenge(0)));
}
