//! `Blackboard::apply`: every rejection is typed, names the id or field, and
//! leaves the blackboard unchanged.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use crate::common;

use agon_core::{
    ApplyError, Blackboard, ClaimStatus, ClaimTransition, DebateEvent, DebateStatus, Intensity,
    MessageKind, ReflectionTrigger,
};
use common::{board, message, started, t};

fn rejects(board: &mut Blackboard, event: DebateEvent) -> ApplyError {
    let before = board.clone();
    let err = board.apply(&event).unwrap_err();
    assert_eq!(*board, before, "a rejected event changed the blackboard");
    err
}

#[test]
fn events_before_start_and_after_finish_are_rejected() {
    let mut empty = Blackboard::new();
    let err = rejects(&mut empty, DebateEvent::DebateFinished { time: t(0) });
    assert_eq!(
        err,
        ApplyError::NotStarted {
            event: "debate_finished"
        }
    );

    let mut b = board();
    assert_eq!(
        rejects(&mut b, started()),
        ApplyError::AlreadyStarted {
            debate: "d1".into()
        }
    );
    b.apply(&DebateEvent::DebateFinished { time: t(9) })
        .unwrap();
    assert_eq!(b.status(), DebateStatus::Finished);
    let err = rejects(
        &mut b,
        DebateEvent::MessageAppended {
            message: message("m3", "ada", "late"),
        },
    );
    assert_eq!(
        err.to_string(),
        "debate `d1` is finished; event `message_appended` rejected"
    );
}

#[test]
fn unknown_references_name_the_id_and_field() {
    let mut b = board();
    let err = rejects(
        &mut b,
        DebateEvent::MessageAppended {
            message: message("m3", "zed", "hi"),
        },
    );
    assert_eq!(err.to_string(), "unknown persona `zed` in message.persona");
    let mut m = message("m3", "ada", "hi");
    m.reply_to = Some("m99".into());
    let err = rejects(&mut b, DebateEvent::MessageAppended { message: m });
    assert_eq!(err.to_string(), "unknown message `m99` in message.reply_to");
    let mut m = message("m3", "ada", "hi");
    m.aspect = Some("weather".into());
    assert_eq!(
        rejects(&mut b, DebateEvent::MessageAppended { message: m }),
        ApplyError::UnknownAspect {
            id: "weather".into(),
            field: "message.aspect"
        }
    );
    let mut m = message("m3", "ada", "hi");
    m.crux_room = Some("room-x".into());
    assert!(matches!(
        rejects(&mut b, DebateEvent::MessageAppended { message: m }),
        ApplyError::UnknownCruxRoom { .. }
    ));
    let err = rejects(
        &mut b,
        DebateEvent::ClaimStatusChanged {
            claim: "c9".into(),
            transition: ClaimTransition::Abandoned { reason: "x".into() },
        },
    );
    assert_eq!(
        err.to_string(),
        "unknown claim `c9` in claim_status_changed.claim"
    );
}

#[test]
fn duplicate_ids_and_empty_text_are_rejected() {
    let mut b = board();
    assert_eq!(
        rejects(
            &mut b,
            DebateEvent::MessageAppended {
                message: message("m1", "ada", "again")
            }
        ),
        ApplyError::DuplicateId {
            kind: "message",
            id: "m1".into()
        }
    );
    assert_eq!(
        rejects(
            &mut b,
            DebateEvent::MessageAppended {
                message: message("m3", "ada", "   ")
            }
        ),
        ApplyError::EmptyField {
            field: "message.content",
            at: "m3".into()
        }
    );
}

#[test]
fn the_judge_has_no_ledger_and_nobody_pairs_with_themselves() {
    let mut b = board();
    let err = rejects(
        &mut b,
        DebateEvent::ConcessionRecorded {
            persona: "judge".into(),
            text: "x".into(),
            round: 1,
        },
    );
    assert!(matches!(err, ApplyError::NotADebater { .. }), "{err}");
    let err = rejects(
        &mut b,
        DebateEvent::AgreementRecorded {
            persona: "ada".into(),
            with: "ada".into(),
            on: "x".into(),
            round: 1,
        },
    );
    assert!(matches!(err, ApplyError::SelfReference { .. }), "{err}");
    // The judge may still speak.
    let mut synthesis = message("m3", "judge", "Both have a point.");
    synthesis.kind = MessageKind::Synthesis;
    b.apply(&DebateEvent::MessageAppended { message: synthesis })
        .unwrap();
    assert_eq!(b.participation()["judge"].message_count, 1);
}

#[test]
fn claim_lifecycle_allows_only_legal_transitions() {
    let mut b = board();
    b.apply(&DebateEvent::ClaimOpened {
        claim: "c1".into(),
        text: "A ban hurts shops".into(),
        personas: ["ada".into(), "bo".into()],
        round: 1,
        source_messages: vec!["m1".into(), "m2".into()],
    })
    .unwrap();
    b.apply(&DebateEvent::ClaimStatusChanged {
        claim: "c1".into(),
        transition: ClaimTransition::InCruxRoom { room: "r1".into() },
    })
    .unwrap();
    let err = rejects(
        &mut b,
        DebateEvent::ClaimStatusChanged {
            claim: "c1".into(),
            transition: ClaimTransition::InCruxRoom { room: "r2".into() },
        },
    );
    assert_eq!(
        err.to_string(),
        "claim `c1` cannot go from in_crux_room to in_crux_room"
    );
    b.apply(&DebateEvent::ClaimStatusChanged {
        claim: "c1".into(),
        transition: ClaimTransition::Resolved {
            resolution: "They agree on a trial".into(),
        },
    })
    .unwrap();
    assert_eq!(b.claim(&"c1".into()).unwrap().status, ClaimStatus::Resolved);
    let err = rejects(
        &mut b,
        DebateEvent::ClaimStatusChanged {
            claim: "c1".into(),
            transition: ClaimTransition::Abandoned { reason: "x".into() },
        },
    );
    assert_eq!(
        err,
        ApplyError::IllegalClaimTransition {
            claim: "c1".into(),
            from: ClaimStatus::Resolved,
            to: ClaimStatus::Abandoned
        }
    );
    // A room id names exactly one claim.
    b.apply(&DebateEvent::ClaimOpened {
        claim: "c2".into(),
        text: "Vans need roads".into(),
        personas: ["bo".into(), "ada".into()],
        round: 1,
        source_messages: vec![],
    })
    .unwrap();
    let err = rejects(
        &mut b,
        DebateEvent::ClaimStatusChanged {
            claim: "c2".into(),
            transition: ClaimTransition::InCruxRoom { room: "r1".into() },
        },
    );
    assert_eq!(
        err,
        ApplyError::DuplicateId {
            kind: "crux room",
            id: "r1".into()
        }
    );
}

#[test]
fn importance_out_of_range_is_rejected() {
    let mut b = board();
    let reflection = agon_core::Reflection {
        id: "r1".into(),
        content: "They talk past each other".into(),
        kind: agon_core::ReflectionKind::Pattern,
        about: vec!["ada".into()],
        source_messages: vec!["m1".into()],
        round: 1,
        importance: 11,
    };
    assert_eq!(
        rejects(&mut b, DebateEvent::ReflectionAdded { reflection }),
        ApplyError::ImportanceOutOfRange {
            id: "r1".into(),
            value: 11
        }
    );
}

#[test]
fn rounds_must_move_forward() {
    let mut b = board();
    assert_eq!(
        rejects(
            &mut b,
            DebateEvent::AspectStarted {
                aspect: "trade".into(),
                round: 1
            }
        ),
        ApplyError::RoundOutOfOrder {
            aspect: "trade".into(),
            round: 1,
            current: 1
        }
    );
    b.apply(&DebateEvent::AspectStarted {
        aspect: "trade".into(),
        round: 2,
    })
    .unwrap();
    assert_eq!(b.current_aspect().unwrap().label, "Trade");
}

#[test]
fn ledger_updates_are_idempotent_and_feed_the_reflection_trigger() {
    let mut b = board();
    let trigger = ReflectionTrigger::default();
    let disagree = DebateEvent::DisagreementRecorded {
        persona: "bo".into(),
        with: "ada".into(),
        on: "whether vans need roads".into(),
        intensity: Intensity::Mild,
        round: 1,
        criteria: vec!["Evidence".into()],
    };
    b.apply(&disagree).unwrap();
    b.apply(&disagree).unwrap(); // same disagreement again: no new weight
    assert_eq!(b.weight_since_reflection(), 3);
    b.apply(&DebateEvent::ConcessionRecorded {
        persona: "bo".into(),
        text: "cars are dangerous".into(),
        round: 1,
    })
    .unwrap();
    b.apply(&DebateEvent::ShiftRecorded {
        persona: "bo".into(),
        text: "now backs a trial".into(),
        round: 1,
    })
    .unwrap();
    assert_eq!(b.weight_since_reflection(), 12);
    assert!(!trigger.is_due(&b));
    b.apply(&DebateEvent::ShiftRecorded {
        persona: "ada".into(),
        text: "accepts delivery windows".into(),
        round: 1,
    })
    .unwrap();
    assert_eq!(b.weight_since_reflection(), 17);
    assert!(trigger.is_due(&b));
    assert!(
        !ReflectionTrigger::new(17).is_due(&b),
        "fires only above the threshold"
    );
    b.apply(&DebateEvent::ReflectionAdded {
        reflection: agon_core::Reflection {
            id: "r1".into(),
            content: "Bo is converging".into(),
            kind: agon_core::ReflectionKind::Convergence,
            about: vec!["bo".into()],
            source_messages: vec![],
            round: 1,
            importance: 6,
        },
    })
    .unwrap();
    assert_eq!(b.weight_since_reflection(), 0);
    let strong = DebateEvent::DisagreementRecorded {
        persona: "bo".into(),
        with: "ada".into(),
        on: "whether vans need roads".into(),
        intensity: Intensity::Strong,
        round: 2,
        criteria: vec!["Evidence".into(), "Feasibility".into()],
    };
    b.apply(&strong).unwrap();
    let bo = b.position(&"bo".into()).unwrap();
    assert_eq!(bo.disagreements.len(), 1);
    assert_eq!(
        bo.disagreements[0].intensity,
        Intensity::Strong,
        "intensity escalates in place"
    );
    assert_eq!(
        bo.disagreements[0].criteria,
        ["Evidence", "Feasibility"],
        "the criteria cited accumulate, each once"
    );
}

#[test]
fn replay_reports_the_position_of_the_first_bad_event() {
    let events = vec![
        started(),
        DebateEvent::AspectStarted {
            aspect: "nope".into(),
            round: 1,
        },
    ];
    let (at, err) = Blackboard::replay(&events).unwrap_err();
    assert_eq!(at, 1);
    assert!(matches!(err, ApplyError::UnknownAspect { .. }));
}

#[test]
fn the_protocol_is_the_recorded_one_else_read_from_the_debates_shape() {
    use agon_core::ProtocolKind;
    // A log written before the protocol was recorded: inferred.
    let bb = board();
    assert!(!bb.protocol_recorded());
    assert_eq!(bb.protocol(), ProtocolKind::Structured);
    let mut dialectic = started();
    if let DebateEvent::DebateStarted { personas, .. } = &mut dialectic {
        personas[0].specialty = Some(agon_core::AgentRole::Architect);
    }
    assert_eq!(
        Blackboard::replay(&[dialectic.clone()]).unwrap().protocol(),
        ProtocolKind::Dialectic
    );
    // Recorded: the record wins over the shape, and survives a snapshot.
    for kind in ProtocolKind::ALL {
        let mut event = dialectic.clone();
        if let DebateEvent::DebateStarted { protocol, .. } = &mut event {
            *protocol = Some(kind);
        }
        let bb = Blackboard::replay(&[event]).unwrap();
        assert!(bb.protocol_recorded());
        assert_eq!(bb.protocol(), kind);
        let snapshot: Blackboard =
            serde_json::from_str(&serde_json::to_string(&bb).unwrap()).unwrap();
        assert_eq!(snapshot.protocol(), kind);
    }
}

#[test]
fn moderator_notes_and_pauses_are_checked_and_survive_a_snapshot() {
    let mut b = board();
    let before = b.messages().len();
    b.apply(&DebateEvent::NoteAdded {
        text: "Stay on cost; ignore branding.".into(),
        author: Some("mod".into()),
        time: t(5),
    })
    .unwrap();
    assert_eq!(b.notes().len(), 1);
    assert_eq!(b.notes()[0].after_messages, before);
    assert_eq!(b.notes()[0].author.as_deref(), Some("mod"));

    let err = rejects(
        &mut b,
        DebateEvent::NoteAdded {
            text: "  ".into(),
            author: None,
            time: t(6),
        },
    );
    assert_eq!(err.to_string(), "text must not be empty (in note_added)");
    let err = rejects(
        &mut b,
        DebateEvent::NoteAdded {
            text: "x".repeat(agon_core::MAX_NOTE_CHARS + 1),
            author: None,
            time: t(6),
        },
    );
    assert!(err.to_string().contains("2001 characters"), "{err}");

    assert!(!b.is_paused());
    let err = rejects(
        &mut b,
        DebateEvent::DebateResumed {
            by: None,
            time: t(6),
        },
    );
    assert_eq!(
        err.to_string(),
        "debate `d1` is not paused; `debate_resumed` rejected"
    );
    b.apply(&DebateEvent::DebatePaused {
        by: None,
        time: t(7),
    })
    .unwrap();
    assert!(b.is_paused());
    let err = rejects(
        &mut b,
        DebateEvent::DebatePaused {
            by: None,
            time: t(8),
        },
    );
    assert_eq!(
        err.to_string(),
        "debate `d1` is already paused; `debate_paused` rejected"
    );
    let snapshot: Blackboard = serde_json::from_str(&serde_json::to_string(&b).unwrap()).unwrap();
    assert_eq!(snapshot, b);
    assert!(snapshot.is_paused());
    b.apply(&DebateEvent::DebateResumed {
        by: Some("mod".into()),
        time: t(9),
    })
    .unwrap();
    assert!(!b.is_paused());
}

#[test]
fn feedback_is_the_one_event_a_finished_debate_accepts() {
    let mut b = board();
    b.apply(&DebateEvent::DebateFinished { time: t(9) })
        .unwrap();
    b.apply(&DebateEvent::FeedbackRecorded {
        value: 1,
        time: t(10),
    })
    .unwrap();
    b.apply(&DebateEvent::FeedbackRecorded {
        value: -1,
        time: t(11),
    })
    .unwrap();
    assert_eq!(b.user_feedback(), Some(-1), "the latest counts");
    let err = rejects(
        &mut b,
        DebateEvent::FeedbackRecorded {
            value: 3,
            time: t(12),
        },
    );
    assert_eq!(
        err.to_string(),
        "feedback_recorded: value 3 is not 1 (up) or -1 (down)"
    );
    let err = rejects(
        &mut b,
        DebateEvent::NoteAdded {
            text: "late".into(),
            author: None,
            time: t(12),
        },
    );
    assert!(err.to_string().contains("is finished"), "{err}");
}
