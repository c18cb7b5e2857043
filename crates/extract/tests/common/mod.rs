//! A small debate used by the core tests: two debaters, a judge, two aspects.

use agon_core::{
    Blackboard, DebateAspect, DebateEvent, DialogueMessage, MessageKind, Persona, PersonaRole,
    Topic,
};
use chrono::{DateTime, Utc};

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

/// The small debate after two takes on `safety`.
pub fn board() -> Blackboard {
    let mut board = Blackboard::new();
    board.apply(&started()).unwrap();
    board
        .apply(&DebateEvent::AspectStarted {
            aspect: "safety".into(),
            round: 1,
        })
        .unwrap();
    board
        .apply(&DebateEvent::MessageAppended {
            message: message("m1", "ada", "Cars kill 40 people a year here."),
        })
        .unwrap();
    board
        .apply(&DebateEvent::MessageAppended {
            message: message("m2", "bo", "Deliveries need vans, and vans need roads."),
        })
        .unwrap();
    board
}
