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
    let mut out = format!("===== turn instruction =====\n{}\n", p::turn_instruction());
    out.push_str(&show(
        "listen",
        &p::listen(ada, "RECENT EXCHANGE\nBO: We should fund buses first."),
    ));
    out.push_str(&show(
        "rolling summary",
        &p::rolling_summary(bb, agon_core::MessageSpan { start: 0, end: 8 }, 200).unwrap(),
    ));
    out.push_str(&show("detection", &p::detection(bb, &last).unwrap()));
    insta::assert_snapshot!(out);
}
