//! Where a debate meets its agents' trust memory: dissents, rubric
//! citations, rounds taken part in (`agon_protocol::trust_harvest`).

use agon_core::{Blackboard, DebateEvent, DialogueMessage, MessageKind, Persona, Topic};
use agon_protocol::trust_harvest::{citations, dissents, rounds_participated, word_cosine};
use agon_trust::AgentMemory;
use chrono::{DateTime, TimeZone, Utc};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

fn message(n: usize, persona: &str, kind: MessageKind, round: u32, text: &str) -> DebateEvent {
    DebateEvent::MessageAppended {
        message: DialogueMessage {
            id: format!("msg-{n}").into(),
            persona: persona.into(),
            kind,
            aspect: None,
            round,
            miniround: None,
            crux_room: None,
            content: text.into(),
            time: t0(),
            reply_to: None,
            meta: None,
        },
    }
}

/// A dialectic round: Ada's critique is taken in by Bo's refinement;
/// Bo's critique is ignored by Ada's.
fn board() -> Blackboard {
    let mut bb = Blackboard::new();
    let critique = |target: &str| MessageKind::Critique {
        target: target.into(),
    };
    for e in [
        DebateEvent::DebateStarted {
            debate: "d-9".into(),
            topic: Topic::new("Design a rate limiter"),
            aspects: vec![],
            personas: vec![
                Persona::debater("ada", "Ada", "architect", "plain"),
                Persona::debater("bo", "Bo", "security", "plain"),
            ],
            time: t0(),
            protocol: Some(agon_core::ProtocolKind::Dialectic),
        },
        DebateEvent::RoundStarted { round: 1 },
        message(
            1,
            "ada",
            MessageKind::Proposal,
            1,
            "A token bucket per client in Redis.",
        ),
        message(
            2,
            "bo",
            MessageKind::Proposal,
            1,
            "A fixed window counter in memory.",
        ),
        message(
            3,
            "ada",
            critique("bo"),
            1,
            "The fixed window counter allows bursts at window edges and loses state on restart; test it under load.",
        ),
        message(
            4,
            "bo",
            critique("ada"),
            1,
            "Redis adds network latency to every single request the gateway handles.",
        ),
        message(
            5,
            "ada",
            MessageKind::Refinement,
            1,
            "A token bucket per client in Redis, unchanged.",
        ),
        message(
            6,
            "bo",
            MessageKind::Refinement,
            1,
            "A sliding window counter persisted on restart, so bursts at window edges are gone; load test added.",
        ),
    ] {
        bb.apply(&e).unwrap();
    }
    bb
}

#[test]
fn critiques_are_dissents_with_impact_when_the_refinement_takes_them_in() {
    let bb = board();
    let found = dissents(&bb, &"d-9".into());
    assert_eq!(found.len(), 2);
    let ada = &found[0];
    assert_eq!(
        (ada.agent.as_str(), ada.round_id.as_str()),
        ("Ada", "d-9/round_1")
    );
    assert!(ada.impact && ada.feedback_incorporated);
    assert_eq!(ada.citations, ["Performance & Scalability", "Testability"]);
    let bo = &found[1];
    assert_eq!(bo.agent, "Bo");
    assert!(!bo.impact, "Ada's refinement ignores it");
    assert_eq!(bo.citations, ["Performance & Scalability"]);
    let rounds = rounds_participated(&bb);
    assert_eq!(rounds["Ada"], 1);
    assert_eq!(rounds["Bo"], 1);
}

#[test]
fn a_debate_is_recorded_once_with_depths_from_novelty() {
    let bb = board();
    let found = dissents(&bb, &"d-9".into());
    let mine: Vec<_> = found.iter().filter(|d| d.agent == "Ada").cloned().collect();
    let mut m = AgentMemory::new("Ada", "m", t0());
    assert!(m.record_debate("d-9", 1, &mine, t0()));
    assert!(
        !m.record_debate("d-9", 1, &mine, t0()),
        "twice changes nothing"
    );
    assert_eq!(m.rounds_participated, 1);
    assert_eq!(m.dissent_history.len(), 1);
    // 18 words → 0.36, 2 citations → 0.4, no past dissents → novelty 0.
    assert!((m.dissent_history[0].depth_score - 0.76).abs() < 1e-12);
    // The same dissent in another debate: novelty 1 − 1 = 0 again;
    // a different one: novelty close to 1.
    assert!(m.record_debate("d-10", 1, &mine, t0()));
    assert!((m.dissent_history[1].depth_score - 0.76).abs() < 1e-9);
    assert_eq!(m.debates, ["d-9", "d-10"]);
}

#[test]
fn citations_and_word_cosine() {
    let dialectic = Some(agon_core::rubric::DIALECTIC);
    assert_eq!(citations(dialectic, "nothing to see"), Vec::<String>::new());
    assert_eq!(
        citations(dialectic, "Security: auth is missing"),
        ["Functional Completeness", "Security"]
    );
    assert_eq!(
        citations(
            Some(agon_core::rubric::STRUCTURED),
            "The data says otherwise; a costly trade-off"
        ),
        ["Evidence", "Trade-offs"]
    );
    assert!(citations(None, "Security: auth is missing").is_empty());
    // Every name is a criterion of its built-in rubric.
    for (rubric, name, _) in agon_protocol::trust_harvest::CRITERION_WORDS {
        let builtin = agon_core::rubric::Rubric::builtin(rubric).unwrap();
        assert!(builtin.find(name).is_some(), "{rubric}: {name}");
    }
    assert!((word_cosine("alpha beta", "alpha beta") - 1.0).abs() < 1e-12);
    assert_eq!(word_cosine("alpha beta", "gamma delta"), 0.0);
    assert_eq!(word_cosine("", "alpha"), 0.0);
}

#[test]
fn an_oppose_reaction_in_a_deliberation_is_a_dissent() {
    use agon_core::{ProposalStatus, Reaction};
    let mut bb = Blackboard::new();
    let turn = MessageKind::Deliberation;
    for e in [
        DebateEvent::DebateStarted {
            debate: "d-5".into(),
            topic: Topic::new("Transport budget"),
            aspects: vec![],
            personas: vec![
                Persona::debater("ada", "Ada", "planner", "plain"),
                Persona::debater("bo", "Bo", "treasurer", "plain"),
                Persona::debater("cy", "Cy", "cyclist", "plain"),
            ],
            time: t0(),
            protocol: None,
        },
        message(1, "ada", turn.clone(), 0, "I propose a tram line."),
        DebateEvent::ProposalRecorded {
            proposal: "P1".into(),
            proposer: "ada".into(),
            content: "a tram line".into(),
            time: t0(),
        },
        message(2, "bo", turn.clone(), 0, "Unrelated remark on fares."),
        message(
            3,
            "bo",
            turn.clone(),
            0,
            "There is a problem with P1: the cost is not tested.",
        ),
        DebateEvent::ProposalReaction {
            proposal: "P1".into(),
            persona: "bo".into(),
            reaction: Reaction::Oppose,
        },
        DebateEvent::ProposalReaction {
            proposal: "P1".into(),
            persona: "cy".into(),
            reaction: Reaction::Support,
        },
        DebateEvent::ProposalStatusChanged {
            proposal: "P1".into(),
            status: ProposalStatus::Modified,
        },
    ] {
        bb.apply(&e).unwrap();
    }
    let found = dissents(&bb, &"d-5".into());
    assert_eq!(found.len(), 1, "{found:?}");
    let d = &found[0];
    assert_eq!((d.agent.as_str(), d.round_id.as_str()), ("Bo", "d-5/P1"));
    // The message that names the proposal, not the first one after it.
    assert!(d.text.contains("problem with P1"));
    assert!(d.impact && d.feedback_incorporated);
    // A deliberation is judged by no rubric: nothing to cite.
    assert!(d.citations.is_empty(), "{:?}", d.citations);
}
