//! The deliberation planner (seeds 001 + 002) on the simulator: the summary
//! cadence of the presets, contiguous spans, turn order, stops, resume.

use crate::support::{Lag, Script, Sim};

use agon_context::rolling::RollingSummaryPolicy;
use agon_core::{Persona, SummaryScope, Topic};
use agon_protocol::{
    AspectSource, Deliberation, DeliberationRules, Patterns, Start, StopRules, TurnMode,
};

pub(crate) fn rules(turns: u32, every: usize, keep: usize, mode: TurnMode) -> DeliberationRules {
    DeliberationRules {
        start: Start {
            weigh_by_trust: true,
            topic: Topic::new("Transport budget"),
            personas: ["ada", "bo", "cy", "di"]
                .iter()
                .map(|id| Persona::debater(*id, id.to_uppercase(), "citizen", "plain"))
                .collect(),
            cast: None,
            aspects: AspectSource::Configured(vec![]),
        },
        turns,
        mode,
        rolling: RollingSummaryPolicy {
            resummarize_every: every,
            keep_recent_turns: keep,
            ..RollingSummaryPolicy::default()
        },
        patterns: Patterns::default(),
        stop: StopRules::default(),
        analysis: None,
        detection: agon_protocol::DetectionSource::Patterns,
        analysis_every: 12,
        listen_tokens: 1_500,
        skeptic: false,
    }
}

fn spans(s: &Sim) -> Vec<(usize, usize)> {
    s.board
        .summaries()
        .iter()
        .filter(|x| x.scope == SummaryScope::Rolling)
        .map(|x| (x.span.start, x.span.end))
        .collect()
}

fn run(r: DeliberationRules) -> Sim {
    let mut s = Sim::with(
        Box::new(Deliberation::new(r)),
        Script::default(),
        Lag::Eager,
    );
    s.run(100_000);
    s
}

#[test]
fn the_long_preset_summarizes_every_50_after_keeping_50() {
    let s = run(rules(260, 50, 50, TurnMode::RoundRobin));
    assert_eq!(s.board.messages().len(), 260);
    assert_eq!(spans(&s), vec![(0, 50), (50, 100), (100, 150), (150, 200)]);
    // Each summary came exactly when its point was reached: the trace
    // shows it right after message keep + k·every.
    let summarize_at: Vec<usize> = s
        .trace
        .iter()
        .filter(|t| t.contains("summarize"))
        .map(|t| {
            let span = t.rsplit("summarize ").next().unwrap();
            span.split("..").nth(1).unwrap().parse::<usize>().unwrap() + 50
        })
        .collect();
    assert_eq!(summarize_at, vec![100, 150, 200, 250]);
}

#[test]
fn spans_are_contiguous_and_never_overlap_at_any_cadence() {
    for (every, keep) in [(1, 0), (3, 2), (6, 6), (12, 12), (7, 20), (50, 5)] {
        let s = run(rules(150, every, keep, TurnMode::RoundRobin));
        let spans = spans(&s);
        assert!(!spans.is_empty(), "every {every} keep {keep}");
        assert_eq!(spans[0].0, 0);
        for pair in spans.windows(2) {
            assert_eq!(pair[0].1, pair[1].0, "every {every} keep {keep}: {spans:?}");
        }
        for (start, end) in &spans {
            assert_eq!(end - start, every, "every {every} keep {keep}: {spans:?}");
        }
        // After the last summary at most keep + every − 1 messages wait.
        let last = spans.last().unwrap().1;
        assert!(
            150 - last < keep + every + every,
            "every {every} keep {keep}"
        );
    }
}

#[test]
fn round_robin_speaks_in_order_and_listen_never_repeats_a_speaker() {
    let s = run(rules(20, 12, 12, TurnMode::RoundRobin));
    let order: Vec<&str> = s
        .board
        .messages()
        .iter()
        .map(|m| m.persona.as_str())
        .collect();
    assert_eq!(&order[..5], &["ada", "bo", "cy", "di", "ada"]);
    let s = run(rules(20, 12, 12, TurnMode::Listen));
    for pair in s.board.messages().windows(2) {
        assert_ne!(pair[0].persona, pair[1].persona);
    }
    // The simulator's bids: everyone volunteers with urgency by id length,
    // so "ada", "bo"… tie at 2-3: the least recent speaker of the longest id.
    assert_eq!(s.board.bids(2).unwrap().len(), 3);
}

#[test]
fn a_session_resumed_anywhere_ends_with_the_same_log() {
    let whole = run(rules(90, 6, 6, TurnMode::Listen));
    let events = whole.board.clone();
    for cut in [1usize, 7, 23, 50, 89] {
        // Replay the first `cut` messages' worth of the session, then ask on.
        let mut partial = Sim::with(
            Box::new(Deliberation::new(rules(90, 6, 6, TurnMode::Listen))),
            Script::default(),
            Lag::Eager,
        );
        while partial.board.messages().len() < cut {
            partial.run(1);
        }
        let snapshot = partial.board.clone();
        let mut resumed = Sim::with(
            Box::new(Deliberation::new(rules(90, 6, 6, TurnMode::Listen))),
            Script::default(),
            Lag::Eager,
        );
        resumed.board = snapshot;
        resumed.run(100_000);
        assert_eq!(
            serde_json::to_value(&resumed.board).unwrap(),
            serde_json::to_value(&events).unwrap(),
            "cut at {cut}"
        );
    }
}

/// The plan of every blackboard of a listening deliberation with model
/// detection, summaries and early stops off: a change to the planner shows
/// up as a reviewed diff.
#[test]
fn the_plan_of_every_board_of_a_deliberation() {
    let mut r = rules(30, 8, 4, TurnMode::Listen);
    r.analysis = Some(agon_protocol::DetectionRules::default());
    r.detection = agon_protocol::DetectionSource::Both;
    r.analysis_every = 5;
    let mut s = Sim::with(Box::new(Deliberation::new(r)), Script::default(), Lag::Lazy);
    s.run(10_000);
    assert!(s.finished());
    insta::assert_snapshot!(s.trace.join("\n"));
}

/// Every deliberation prompt, built from the board of a simulated session.
#[test]
fn every_deliberation_prompt() {
    use agon_context::prompts::{Prompt, deliberation as p};
    let s = run(rules(30, 8, 4, TurnMode::RoundRobin));
    let bb = &s.board;
    let show = |name: &str, prompt: &Prompt| {
        format!(
            "===== {name} / system =====\n{}\n===== {name} / user =====\n{}\n",
            prompt.system, prompt.user
        )
    };
    let ada = bb.persona(&agon_core::PersonaId::new("ada")).unwrap();
    let last: Vec<agon_core::MessageId> = bb
        .messages()
        .iter()
        .rev()
        .take(5)
        .rev()
        .map(|m| m.id.clone())
        .collect();
    let mut out = format!(
        "===== turn instruction =====\n{}\n===== skeptic's turn instruction =====\n{}\n",
        p::turn_instruction(false),
        p::turn_instruction(true)
    );
    out.push_str(&show(
        "listen",
        &p::listen(
            ada,
            "RECENT EXCHANGE\nBO: We should fund buses first.",
            "Turn 7; 6 messages so far.",
        ),
    ));
    out.push_str(&show(
        "rolling summary",
        &p::rolling_summary(bb, agon_core::MessageSpan { start: 0, end: 8 }, 200).unwrap(),
    ));
    out.push_str(&show("detection", &p::detection(bb, &last).unwrap()));
    insta::assert_snapshot!(out);
}

/// Runs `s` until its next step is a turn, and returns that turn (not run).
fn next_turn(s: &mut Sim) -> agon_protocol::Speak {
    loop {
        let plan = s.protocol.next(&s.board);
        match plan.next {
            agon_protocol::Next::Step(step) => match *step {
                agon_protocol::Step::Speak(speak) => return speak,
                other => s.execute(other),
            },
            agon_protocol::Next::Wait => assert!(s.apply_background()),
            other => panic!("no further turn: {other:?}"),
        }
    }
}

fn skeptical(speak: &agon_protocol::Speak) -> bool {
    matches!(
        speak.instruction,
        agon_context::prompts::Utterance::Deliberation { skeptic: true, .. }
    )
}

#[test]
fn the_skeptic_is_drawn_at_the_start_and_speaks_up_when_the_group_converges() {
    let mut r = rules(40, 12, 12, TurnMode::Listen);
    r.skeptic = true;
    let mut s = Sim::with(
        Box::new(Deliberation::new(r)),
        Script::default(),
        Lag::Eager,
    );
    let first = next_turn(&mut s);
    let skeptic = s
        .board
        .devils_advocate(0)
        .cloned()
        .expect("drawn before the first turn");
    // No convergence: the most urgent volunteer speaks, plainly.
    assert!(!skeptical(&first));
    s.execute(agon_protocol::Step::Speak(first));
    for _ in 0..4 {
        let turn = next_turn(&mut s);
        assert!(!skeptical(&turn), "{turn:?}");
        s.execute(agon_protocol::Step::Speak(turn));
    }
    // Three of four back a decision: the group converges.
    let supporting: Vec<agon_core::PersonaId> = ["ada", "bo", "cy", "di"]
        .into_iter()
        .map(agon_core::PersonaId::new)
        .filter(|p| *p != skeptic)
        .collect();
    s.board
        .apply(&agon_core::DebateEvent::DecisionRecorded {
            decision: agon_core::Decision {
                id: agon_core::DecisionId::new("decision-1"),
                topic: "buses".into(),
                outcome: "Fund buses first.".into(),
                supporting,
                source_message: None,
                time: chrono::DateTime::UNIX_EPOCH,
            },
        })
        .unwrap();
    assert!(agon_protocol::deliberation::drifting_to_consensus(&s.board));
    // The skeptic speaks next (or right after, when it just spoke and was
    // not asked), with the skeptic's brief.
    let mut turn = next_turn(&mut s);
    if turn.persona != skeptic {
        assert_eq!(
            s.board.messages().last().map(|m| &m.persona),
            Some(&skeptic),
            "only a skeptic who just spoke waits a turn"
        );
        s.execute(agon_protocol::Step::Speak(turn));
        turn = next_turn(&mut s);
    }
    assert_eq!(turn.persona, skeptic);
    assert!(skeptical(&turn));
    // Drawn once.
    assert_eq!(s.board.devils_advocates().len(), 1);
}
