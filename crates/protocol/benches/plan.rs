//! `cargo xtask bench plan`: what asking the planner again costs as a
//! deliberation grows. The interpreter recomputes the plan after every
//! append; this runs a round-robin deliberation of 10,000 turns (the
//! `long` preset's rolling summaries, patterns detecting decisions and
//! proposals) on the planner alone, and times `plan(&board)` on the board
//! of every turn. Reported: the median, mean and p95 of `plan` per
//! 1,000-turn window, and the ratio of the last window to the first.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use agon_context::rolling::RollingSummaryPolicy;
use agon_core::{Blackboard, DebateEvent, DebateSummary, Persona, SummaryScope, Topic};
use agon_protocol::{
    Ask, AspectSource, Deliberation, DeliberationRules, Next, Patterns, Protocol, Start, Step,
    StopRules, TurnMode, start_event,
};
use chrono::DateTime;

const TURNS: u32 = 10_000;
const WINDOW: usize = 1_000;

fn rules() -> DeliberationRules {
    DeliberationRules {
        start: Start {
            weigh_by_trust: true,
            topic: Topic::new("How should the city spend its transport budget?"),
            personas: ["ada", "bo", "cy", "di"]
                .iter()
                .map(|id| Persona::debater(*id, id.to_uppercase(), "citizen", "plain"))
                .collect(),
            cast: None,
            aspects: AspectSource::Configured(vec![]),
        },
        turns: TURNS,
        mode: TurnMode::RoundRobin,
        rolling: RollingSummaryPolicy {
            resummarize_every: 50,
            keep_recent_turns: 50,
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

fn stats(mut xs: Vec<Duration>) -> (Duration, Duration, Duration) {
    xs.sort();
    let n = xs.len().max(1);
    let mean = xs.iter().sum::<Duration>() / n as u32;
    (xs[n / 2], mean, xs[(n * 95 / 100).min(n - 1)])
}

fn main() {
    let protocol = Deliberation::new(rules());
    let mut board = Blackboard::new();
    let mut per_turn: Vec<Duration> = Vec::new();
    let t0 = DateTime::UNIX_EPOCH;
    loop {
        let started = Instant::now();
        let plan = protocol.plan(&board);
        let took = started.elapsed();
        let events = match plan.next {
            Next::Finished => break,
            Next::Wait | Next::Paused => panic!("nothing runs in the background or pauses here"),
            Next::Step(step) => match *step {
                Step::Ask(Ask::Start(start)) => vec![start_event(
                    &"d-bench".into(),
                    &start,
                    None,
                    None,
                    t0,
                    protocol.kind(),
                )],
                Step::Speak(speak) => {
                    per_turn.push(took);
                    let n = board.messages().len();
                    let text = if n.is_multiple_of(40) {
                        format!("I propose we fund bus lane {n} first.")
                    } else {
                        format!(
                            "{} on point {n}: buses before trams, as I said.",
                            speak.persona
                        )
                    };
                    let message = speak.message(&board, text, t0);
                    let derived = protocol.message_events(&board, &message);
                    let mut events = vec![DebateEvent::MessageAppended { message }];
                    events.extend(derived);
                    events
                }
                Step::Ask(Ask::RollingSummary { fold, .. }) => vec![DebateEvent::SummaryRecorded {
                    summary: DebateSummary {
                        scope: SummaryScope::Rolling,
                        span: fold,
                        text: format!("summary up to {}", fold.end),
                        before_chars: 0,
                        after_chars: 0,
                        method: "rolling".into(),
                        round: None,
                        temperature_centi: None,
                        latency_ms: None,
                        tokens: None,
                        model: None,
                        time: t0,
                    },
                }],
                Step::Finish(_) => vec![DebateEvent::DebateFinished { time: t0 }],
                Step::Record { events, .. } => events,
                other => panic!("unexpected step {other:?}"),
            },
        };
        for e in &events {
            board.apply(e).unwrap();
        }
    }
    println!(
        "{} turns, {} rolling summaries",
        board.messages().len(),
        board
            .summaries()
            .iter()
            .filter(|s| s.scope == SummaryScope::Rolling)
            .count()
    );
    println!("| turns | median µs | mean µs | p95 µs |");
    println!("|---|---|---|---|");
    let windows: Vec<(Duration, Duration, Duration)> =
        per_turn.chunks(WINDOW).map(|w| stats(w.to_vec())).collect();
    for (i, (median, mean, p95)) in windows.iter().enumerate() {
        println!(
            "| {}–{} | {:.1} | {:.1} | {:.1} |",
            i * WINDOW + 1,
            (i + 1) * WINDOW,
            median.as_secs_f64() * 1e6,
            mean.as_secs_f64() * 1e6,
            p95.as_secs_f64() * 1e6
        );
    }
    if let (Some(first), Some(last)) = (windows.first(), windows.last()) {
        println!(
            "last window ÷ first: median {:.2}, mean {:.2}, p95 {:.2}",
            last.0.as_secs_f64() / first.0.as_secs_f64(),
            last.1.as_secs_f64() / first.1.as_secs_f64(),
            last.2.as_secs_f64() / first.2.as_secs_f64()
        );
    }
}
