//! The questions' conversions: what answers become, on the paths the
//! simulator's happy runs do not take (failures, retries, calls not made).

use agon_core::{
    Blackboard, DebateEvent, DebateId, Persona, PersonaId, PersonaRole, StepId, SummaryScope, Topic,
};
use agon_protocol::{
    Answer, AnswerForm, Answers, Ask, AspectSource, ConvertError, Limits, ModelFailure, ModelRole,
    Outcome, Protocol, Start, Step, SummaryJob, TextAnswer, TrustRead, ask,
};
use serde_json::json;

use crate::support::T0;

const LIMITS: Limits = Limits {
    utterance_max_tokens: 400,
    structured_max_tokens: 1_000,
};

fn start(aspects: AspectSource) -> Start {
    Start {
        weigh_by_trust: true,
        topic: Topic::new("Design a rate limiter"),
        personas: vec![
            Persona::debater("arch", "Architect", "architect brief", ""),
            Persona::debater("perf", "Perf", "performance brief", ""),
            Persona {
                role: PersonaRole::Judge,
                ..Persona::debater("judge", "Judge", "judge brief", "")
            },
        ],
        cast: None,
        aspects,
    }
}

/// A started board with two agents and a judge.
fn board() -> Blackboard {
    let mut bb = Blackboard::new();
    let step = Step::start(start(AspectSource::Configured(vec![])));
    let out = convert(&bb, &step, Answers::Models(vec![])).unwrap();
    for e in &out.events {
        bb.apply(e).unwrap();
    }
    bb
}

fn convert(bb: &Blackboard, step: &Step, answers: Answers) -> Result<Outcome, ConvertError> {
    ask::convert(bb, &DebateId::new("d-ask"), None, step, answers, T0)
}

fn text(t: &str) -> Answer {
    Answer::Text(Ok(TextAnswer {
        text: t.into(),
        temperature: 0.3,
        latency_ms: 12,
        tokens: 40,
        model: "m".into(),
    }))
}

fn failed(reason: &str) -> ModelFailure {
    ModelFailure::other(reason)
}

#[test]
fn the_judge_gets_two_structured_attempts_then_a_plain_text_one() {
    let bb = board();
    let judge = PersonaId::new("judge");
    let first = Step::Ask(Ask::Solution {
        judge: judge.clone(),
        round: 1,
        failures: vec![],
    });
    let calls = match &first {
        Step::Ask(a) => a.calls(),
        _ => unreachable!(),
    };
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].role, ModelRole::Judge);
    assert_eq!(calls[0].persona.as_ref(), Some(&judge));
    // A failed structured attempt is a warning in the log; the planner
    // reads the attempts made from there (so a resumed run goes on).
    let out = convert(
        &bb,
        &first,
        Answers::Models(vec![Answer::Json(Err(failed("timeout")))]),
    )
    .unwrap();
    assert!(out.then.is_none());
    let [DebateEvent::StepFailed { step, reason, .. }] = &out.events[..] else {
        panic!("one warning: {:?}", out.events)
    };
    assert_eq!(step, &StepId::Solution(1));
    assert!(
        reason.contains("attempt 1") && reason.contains("timeout"),
        "{reason}"
    );
    let second = Ask::Solution {
        judge: judge.clone(),
        round: 1,
        failures: vec![reason.clone()],
    };
    let request = ask::request(&bb, &second, 0, Some("the round"), LIMITS).unwrap();
    assert!(matches!(request.answer, AnswerForm::Json { .. }));
    let out = convert(
        &bb,
        &Step::Ask(second),
        Answers::Models(vec![Answer::Json(Ok(json!({"nonsense": true})))]),
    )
    .unwrap();
    let [
        DebateEvent::StepFailed {
            reason: second_reason,
            ..
        },
    ] = &out.events[..]
    else {
        panic!("one warning: {:?}", out.events)
    };
    assert!(second_reason.contains("attempt 2"), "{second_reason}");
    let third = Ask::Solution {
        judge: judge.clone(),
        round: 1,
        failures: vec![reason.clone(), second_reason.clone()],
    };
    // The third is plain text, as long as the longer of the two limits.
    let request = ask::request(&bb, &third, 0, Some("the round"), LIMITS).unwrap();
    assert_eq!(request.answer, AnswerForm::Text { max_tokens: 1_000 });
    let out = convert(
        &bb,
        &Step::Ask(third.clone()),
        Answers::Models(vec![text("Use a token bucket.")]),
    )
    .unwrap();
    assert!(out.then.is_none());
    let DebateEvent::StepFailed {
        step,
        reason: message,
        ..
    } = &out.events[0]
    else {
        panic!("a warning first: {:?}", out.events)
    };
    assert_eq!(step, &StepId::Solution(1));
    assert!(message.contains("timeout"), "{message}");
    let DebateEvent::SolutionRecorded { solution } = &out.events[1] else {
        panic!("then the solution")
    };
    assert_eq!(solution.description, "Use a token bucket.");
    // An empty plain-text synthesis, or a failed one, stops the debate as
    // a provider failure.
    for answer in [text("  "), Answer::Text(Err(failed("503")))] {
        let e = convert(
            &bb,
            &Step::Ask(third.clone()),
            Answers::Models(vec![answer]),
        )
        .unwrap_err();
        assert!(matches!(e, ConvertError::Model { .. }), "{e}");
    }
}

#[test]
fn a_summary_that_cannot_be_written_is_a_warning_not_a_stop() {
    let bb = board();
    let job = SummaryJob {
        persona: PersonaId::new("arch"),
        scope: SummaryScope::Persona {
            persona: PersonaId::new("arch"),
        },
        round: 1,
        phase: agon_context::Phase::PerspectiveSummary,
        max_chars: 100,
        method: "length-based".into(),
        prompt: None,
    };
    let step = Step::Ask(Ask::Summaries(vec![job.clone(), job.clone()]));
    let out = convert(
        &bb,
        &step,
        Answers::Models(vec![
            Answer::NotAsked("no context".into()),
            text(&"x".repeat(300)),
        ]),
    )
    .unwrap();
    assert_eq!(out.events.len(), 2);
    assert!(
        matches!(&out.events[0], DebateEvent::StepFailed { reason, .. } if reason.contains("no context"))
    );
    let DebateEvent::SummaryRecorded { summary } = &out.events[1] else {
        panic!("the second is written")
    };
    assert_eq!(summary.text.chars().count(), 100, "cut to max_chars");
    assert_eq!(summary.tokens, Some(40));
}

#[test]
fn a_listener_whose_call_was_not_made_declines_with_a_warning() {
    let bb = board();
    let step = Step::Ask(Ask::Listen {
        turn: 2,
        agents: vec![PersonaId::new("arch"), PersonaId::new("perf")],
        budget_tokens: 300,
    });
    let out = convert(
        &bb,
        &step,
        Answers::Models(vec![
            Answer::NotAsked("unknown agent".into()),
            Answer::Json(Ok(json!({"respond": true, "urgency": 7, "reason": "x"}))),
        ]),
    )
    .unwrap();
    let Some(DebateEvent::SpeakersEvaluated { bids, .. }) = out.events.last() else {
        panic!("bids recorded")
    };
    assert_eq!(
        bids.iter().map(|b| b.respond).collect::<Vec<_>>(),
        [false, true]
    );
    assert!(matches!(&out.events[0], DebateEvent::StepFailed { .. }));
}

#[test]
fn a_convergence_check_leads_to_the_card_or_the_next_turn() {
    let bb = board();
    let otherwise = agon_protocol::Speak {
        key: agon_core::TurnKey::Crux {
            room: "room-1".into(),
            turn: 3,
        },
        persona: PersonaId::new("arch"),
        kind: agon_core::MessageKind::CruxExchange,
        phase: None,
        instruction: agon_context::prompts::Utterance::Closing,
        aspect: None,
        miniround: None,
        room: Some("room-1".into()),
        voice: agon_protocol::Voice::Debater,
    };
    let step = Step::Ask(Ask::Convergence {
        claim: "claim-1".into(),
        room: "room-1".into(),
        otherwise: otherwise.clone(),
    });
    let yes = convert(
        &bb,
        &step,
        Answers::Models(vec![Answer::Json(Ok(
            json!({"converged": true, "reason": "agreed"}),
        ))]),
    )
    .unwrap();
    assert!(matches!(yes.then, Some(Step::Ask(Ask::CruxCard { .. }))));
    let failed_check = convert(
        &bb,
        &step,
        Answers::Models(vec![Answer::Json(Err(failed("429")))]),
    )
    .unwrap();
    assert_eq!(failed_check.then, Some(Step::Speak(otherwise.clone())));
    assert!(matches!(
        &failed_check.events[..],
        [DebateEvent::StepFailed {
            step: StepId::ConvergenceCheck(_),
            ..
        }]
    ));
    // A room with nothing to judge has not converged, and says nothing.
    let nothing = convert(
        &bb,
        &step,
        Answers::Models(vec![Answer::NotAsked("no turns".into())]),
    )
    .unwrap();
    assert!(nothing.events.is_empty());
    assert_eq!(nothing.then, Some(Step::Speak(otherwise)));
}

#[test]
fn an_unusable_aspect_plan_stops_the_start_and_answers_must_fit_the_step() {
    let bb = Blackboard::new();
    let step = Step::start(start(AspectSource::Planned { count: 3 }));
    let e = convert(
        &bb,
        &step,
        Answers::Models(vec![Answer::Json(Ok(json!({"aspects": []})))]),
    )
    .unwrap_err();
    assert!(matches!(e, ConvertError::AspectPlan(_)), "{e}");
    let e = convert(&bb, &step, Answers::Human(vec![])).unwrap_err();
    assert!(matches!(e, ConvertError::Mismatch(_)), "{e}");
    let e = convert(&bb, &step, Answers::Models(vec![])).unwrap_err();
    assert!(matches!(e, ConvertError::Mismatch(_)), "{e}");
}

#[test]
fn unreadable_trust_memories_still_draw_a_devils_advocate_with_a_warning() {
    let bb = board();
    let read = TrustRead::DevilsAdvocate {
        round: 1,
        candidates: vec![PersonaId::new("arch"), PersonaId::new("perf")],
    };
    let out = convert(
        &bb,
        &Step::ReadTrust(read),
        Answers::Trust(Err("database is locked".into())),
    )
    .unwrap();
    assert!(
        matches!(&out.events[0], DebateEvent::StepFailed { step: StepId::TrustMemory, reason, .. } if reason.contains("locked"))
    );
    assert!(matches!(
        &out.events[1],
        DebateEvent::DevilsAdvocateChosen { round: 1, .. }
    ));
}

#[test]
fn the_protocols_convert_through_the_same_pure_functions() {
    // `Protocol::convert` is `ask::convert` with the protocol's kind in
    // `debate_started`.
    let protocol = agon_protocol::Dialectic::new(crate::dialectic::rules(1));
    let bb = Blackboard::new();
    let out = protocol
        .convert(
            &bb,
            &DebateId::new("d-ask"),
            &Step::start(start(AspectSource::Configured(vec![]))),
            Answers::Models(vec![]),
            T0,
        )
        .unwrap();
    let DebateEvent::DebateStarted { protocol: kind, .. } = &out.events[0] else {
        panic!("debate_started")
    };
    assert_eq!(*kind, Some(agon_core::ProtocolKind::Dialectic));
}

#[test]
fn the_judges_attempts_are_read_from_the_log() {
    use crate::support::{Lag, Script, Sim};
    let mut sim = Sim::with(
        Box::new(agon_protocol::Dialectic::new(crate::dialectic::rules(1))),
        Script::default(),
        Lag::Eager,
    );
    let solution = |sim: &Sim| match sim.protocol.plan(&sim.board).next {
        agon_protocol::Next::Step(step) => match *step {
            Step::Ask(Ask::Solution { failures, .. }) => Some(failures),
            _ => None,
        },
        _ => None,
    };
    for _ in 0..100 {
        if solution(&sim).is_some() {
            break;
        }
        while sim.apply_background() {}
        let agon_protocol::Next::Step(step) = sim.protocol.plan(&sim.board).next else {
            break;
        };
        sim.execute(*step);
    }
    assert_eq!(solution(&sim), Some(vec![]), "the first attempt");
    sim.board
        .apply(&agon_protocol::step_failed(
            StepId::Solution(1),
            "structured attempt 1 failed: timeout",
            T0,
        ))
        .unwrap();
    assert_eq!(
        solution(&sim),
        Some(vec!["structured attempt 1 failed: timeout".to_owned()]),
        "a resumed run knows the attempt was made"
    );
}
