//! The room protocol against a scripted host.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;

use agon_context::prompts::Prompt;
use agon_core::{
    Blackboard, ClaimStatus, DebateEvent, DialogueMessage, MessageId, MessageKind, Persona, Topic,
};
use agon_crux::{HostError, RoomConfig, RoomHost, RoomTurn, run_room, turns_taken};
use async_trait::async_trait;
use serde_json::json;

struct Scripted {
    board: Mutex<Blackboard>,
    converge_after: Option<usize>,
    card: Option<serde_json::Value>,
    fail_speak_at: Option<usize>,
    calls: Mutex<Vec<String>>,
}

impl Scripted {
    fn new(converge_after: Option<usize>, card: Option<serde_json::Value>) -> Self {
        let mut bb = Blackboard::new();
        bb.apply(&DebateEvent::DebateStarted {
            debate: "d".into(),
            topic: Topic::new("Ban cars?"),
            aspects: vec![],
            personas: vec![
                Persona::debater("ada", "Ada", "urbanist", "brisk"),
                Persona::debater("bo", "Bo", "driver", "calm"),
            ],
            time: chrono::DateTime::UNIX_EPOCH,
        })
        .unwrap();
        bb.apply(&DebateEvent::ClaimOpened {
            claim: "claim-1".into(),
            text: "Cars are essential downtown".into(),
            personas: ["ada".into(), "bo".into()],
            round: 0,
            source_messages: vec![],
        })
        .unwrap();
        Self {
            board: Mutex::new(bb),
            converge_after,
            card,
            fail_speak_at: None,
            calls: Mutex::new(Vec::new()),
        }
    }
}

#[async_trait]
impl RoomHost for Scripted {
    async fn board(&self) -> Blackboard {
        self.board.lock().unwrap().clone()
    }
    async fn append(&self, events: Vec<DebateEvent>) -> Result<(), HostError> {
        let mut bb = self.board.lock().unwrap();
        for e in &events {
            bb.apply(e)?;
        }
        Ok(())
    }
    async fn speak(&self, turn: RoomTurn) -> Result<Option<MessageId>, HostError> {
        let mut bb = self.board.lock().unwrap();
        let n = bb.messages().len();
        if self.fail_speak_at == Some(n) {
            return Err("provider down".into());
        }
        self.calls
            .lock()
            .unwrap()
            .push(format!("{}:{}", turn.key, turn.persona));
        let id = MessageId::new(format!("msg-{}", n + 1));
        bb.apply(&DebateEvent::MessageAppended {
            message: DialogueMessage {
                id: id.clone(),
                persona: turn.persona,
                kind: turn.kind,
                aspect: None,
                round: 0,
                miniround: None,
                crux_room: Some(turn.room),
                content: format!("turn {n}"),
                time: chrono::DateTime::UNIX_EPOCH,
                reply_to: None,
            },
        })?;
        Ok(Some(id))
    }
    async fn structured(
        &self,
        _prompt: Prompt,
        name: &'static str,
        _schema: serde_json::Value,
    ) -> Result<serde_json::Value, String> {
        let n = self.board.lock().unwrap().messages().len();
        self.calls.lock().unwrap().push(name.to_owned());
        match name {
            "convergence_check" => Ok(json!({
                "converged": self.converge_after.is_some_and(|k| n >= k),
                "reason": "r"
            })),
            "crux_card" => self.card.clone().ok_or_else(|| "model failed".to_owned()),
            other => Err(format!("unexpected {other}")),
        }
    }
}

fn card(resolved: bool) -> serde_json::Value {
    json!({
        "question": "Are cars essential downtown?",
        "positions": [
            {"persona": "Ada", "position": "NO", "reasoning": "transit", "falsifier": "data"},
            {"persona": "Bo", "position": "YES", "reasoning": "deliveries", "falsifier": "vans"}
        ],
        "disagreementType": "evidence",
        "diagnosis": "They read the traffic data differently.",
        "resolved": resolved
    })
}

#[tokio::test]
async fn full_room_alternates_checks_and_abandons_without_convergence() {
    let host = Scripted::new(None, Some(card(false)));
    let out = run_room(&host, &"claim-1".into(), RoomConfig::default())
        .await
        .unwrap();
    assert_eq!(out.turns, 10, "2 positions + 8 exchange turns");
    assert!(!out.resolved && out.card);
    let calls = host.calls.lock().unwrap().clone();
    assert_eq!(calls[0], "crux/room-1/0:ada");
    assert_eq!(calls[1], "crux/room-1/1:bo");
    assert_eq!(
        calls.iter().filter(|c| *c == "convergence_check").count(),
        1,
        "{calls:?}"
    );
    let bb = host.board.lock().unwrap();
    let claim = bb.claim(&"claim-1".into()).unwrap();
    assert_eq!(claim.status, ClaimStatus::Abandoned);
    assert_eq!(bb.crux_cards().len(), 1);
    let kinds: Vec<_> = bb.messages().iter().map(|m| m.kind.clone()).collect();
    assert_eq!(
        kinds[..2],
        [MessageKind::CruxPosition, MessageKind::CruxPosition]
    );
    assert!(kinds[2..].iter().all(|k| *k == MessageKind::CruxExchange));
}

#[tokio::test]
async fn convergence_ends_early_and_resolves() {
    let host = Scripted::new(Some(6), Some(card(true)));
    let out = run_room(&host, &"claim-1".into(), RoomConfig::default())
        .await
        .unwrap();
    assert_eq!(
        out.turns, 6,
        "converged at the first check after 4 exchange turns"
    );
    assert!(out.resolved);
    let bb = host.board.lock().unwrap();
    assert_eq!(
        bb.claim(&"claim-1".into()).unwrap().status,
        ClaimStatus::Resolved
    );
}

#[tokio::test]
async fn a_failed_card_is_recorded_and_the_claim_abandoned() {
    let host = Scripted::new(None, None);
    let out = run_room(
        &host,
        &"claim-1".into(),
        RoomConfig {
            max_turns: 2,
            check_every: 0,
        },
    )
    .await
    .unwrap();
    assert!(!out.card);
    let bb = host.board.lock().unwrap();
    assert_eq!(
        bb.claim(&"claim-1".into()).unwrap().status,
        ClaimStatus::Abandoned
    );
    assert!(bb.step_failed("crux_card", "room-1"));
}

#[tokio::test]
async fn an_interrupted_room_resumes_at_the_next_turn() {
    let mut host = Scripted::new(None, Some(card(false)));
    host.fail_speak_at = Some(3);
    let err = run_room(&host, &"claim-1".into(), RoomConfig::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("claim-1") && err.to_string().contains("provider down"),
        "{err}"
    );
    assert_eq!(
        turns_taken(&host.board.lock().unwrap(), &"room-1".into()),
        3
    );
    host.fail_speak_at = None;
    let out = run_room(&host, &"claim-1".into(), RoomConfig::default())
        .await
        .unwrap();
    assert_eq!(out.room.as_str(), "room-1", "same room");
    assert_eq!(out.turns, 10);
    assert_eq!(
        host.board.lock().unwrap().messages().len(),
        10,
        "no turn repeated or lost"
    );
    let again = run_room(&host, &"claim-1".into(), RoomConfig::default())
        .await
        .unwrap_err();
    assert!(again.to_string().contains("already abandoned"), "{again}");
}
