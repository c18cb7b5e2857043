//! `cargo xtask bench deliberation`: what a 10,000-turn deliberation costs
//! (seeds 001 + 002), against the naive full-history baseline.
//!
//! Setup: the scripted model in process (every turn padded to ~90 words, a
//! realistic length), 4 agents, listening turns, the `long` preset (a
//! summary every 50 messages, the last 50 verbatim, an 8,000-token view),
//! SQLite in a temporary directory. Every call's prompt (system + user) is
//! counted with tiktoken o200k on a separate thread, so counting does not
//! slow the session. Reported: prompt tokens per speaking call for turns
//! 1–100, 1,000–1,100 and 9,900–10,000 (min / median / max), summary and
//! evaluation calls and their tokens, prompt tokens per turn, the
//! orchestration time per turn around turn 100 and turn 10,000 (medians of
//! the gaps between consecutive messages, the model's delay taken off),
//! peak RSS, the store's size, and the time to load the session again from
//! its latest snapshot. The baseline is computed from the same transcript:
//! every turn sends the whole history so far, up to an 8,000-token window.
//!
//! `-- --turns N --delay-ms D` change the run (defaults: 10,000 and 0; the
//! 50 ms variant: `-- --turns 1000 --delay-ms 50`, since 10,000 turns at
//! two 50 ms calls a turn take 17 minutes). The session runs with the
//! defaults, vector memory on (local MiniLM, SQLite); `-- --no-memory`
//! turns it off. Orchestration time per turn is reported as median, mean
//! and p95.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "support/deliberation.rs"]
mod support;

#[path = "support/prefix.rs"]
mod prefix;

use std::time::{Duration, Instant};

use agon_context::{TiktokenCounter, TokenCounter};
use agon_core::SummaryScope;
use support::Kind;

/// The model window of the baseline (and the view of the `long` preset).
const WINDOW: usize = 8_000;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

/// `-- --planted`: facts said early (turns 100–500 of 10,000) and asked
/// about late (5,000–9,800), with the vector memory on (the defaults)
/// against summaries alone (memory off): how many reach the view of the
/// turns that answer, and how many turns pay for a RELEVANT EARLIER
/// CONTEXT section.
async fn run_planted(turns: u32, delay: Duration, dir: &std::path::Path) {
    let scale = |at: u32| (u64::from(at) * u64::from(turns) / 10_000) as u32;
    let plants = support::plants(20, (scale(100), scale(500)), (scale(5_000), scale(9_800)));
    println!(
        "planted facts: {turns} turns, 4 agents, listen, long preset, model delay {} ms; \
         {} facts said at turns {}–{}, asked at {}–{}",
        delay.as_millis(),
        plants.len(),
        plants[0].said,
        plants[plants.len() - 1].said,
        plants[0].asked,
        plants[plants.len() - 1].asked,
    );
    println!(
        "| setup | facts shown | speaking turns with RELEVANT EARLIER CONTEXT | wall | ms per turn |"
    );
    println!("|---|---|---|---|---|");
    for memory_on in [false, true] {
        let run_dir = dir.join(if memory_on { "on" } else { "off" });
        std::fs::create_dir_all(&run_dir).unwrap();
        let s = support::session_with(turns, delay, memory_on, &plants, support::PADDING, &run_dir)
            .await;
        let (speaking, recalling) = s.recalling(1, turns);
        println!(
            "| {} | {} of {} | {recalling} of {speaking} ({:.2} %) | {:.1} s | {:.2} |",
            if memory_on {
                "vector memory on (defaults)"
            } else {
                "summaries alone (memory off)"
            },
            s.facts_shown(&plants),
            plants.len(),
            100.0 * recalling as f64 / speaking.max(1) as f64,
            s.wall.as_secs_f64(),
            s.wall.as_secs_f64() * 1e3 / f64::from(turns),
        );
    }
}

async fn run() {
    let turns = u32::try_from(arg("--turns", 10_000)).unwrap();
    let delay = Duration::from_millis(arg("--delay-ms", 0));
    if std::env::args().any(|a| a == "--planted") {
        let dir = std::env::temp_dir().join(format!("agon-bench-planted-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        run_planted(turns, delay, &dir).await;
        std::fs::remove_dir_all(&dir).ok();
        return;
    }
    let memory_on = !std::env::args().any(|a| a == "--no-memory");
    let dir = std::env::temp_dir().join(format!("agon-bench-deliberation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    println!(
        "deliberation: {turns} turns, 4 agents, listen, long preset, model delay {} ms, vector memory {}",
        delay.as_millis(),
        if memory_on { "on" } else { "off" }
    );
    let session = support::session(turns, delay, memory_on, &dir).await;
    let (config, id, url, wall) = (&session.config, &session.id, &session.url, session.wall);
    let rss = peak_rss_mib();

    let store_bytes: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    // Resume: a fresh store handle loads the session (latest snapshot +
    // the events after it).
    let reopened = agon_store::open(url).await.unwrap();
    let load_started = Instant::now();
    let (bb, seq) = reopened.load(id).await.unwrap();
    let resume = load_started.elapsed();
    let replay_started = Instant::now();
    let events: Vec<agon_core::DebateEvent> = reopened
        .events_after(id, 0)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event)
        .collect();
    let replayed = agon_core::Blackboard::replay(&events).unwrap();
    let replay = replay_started.elapsed();
    assert_eq!(replayed.messages().len(), bb.messages().len());

    println!(
        "{} messages, {seq} events in {:.1} s ({:.2} ms per turn on average)",
        bb.messages().len(),
        wall.as_secs_f64(),
        wall.as_secs_f64() * 1e3 / f64::from(turns)
    );

    // Prompt tokens of speaking calls by turn range.
    println!("\nprompt tokens per speaking call (system + view + instruction):");
    println!("| turns | calls | min | median | max |\n|---|---|---|---|---|");
    let mut ranges = vec![(1u32, 100u32)];
    if turns >= 2_000 {
        ranges.push((1_000, 1_100));
    }
    if turns > 200 {
        ranges.push((turns - 100, turns));
    }
    for (from, to) in ranges {
        let sorted = session.speaking(from, to);
        if sorted.is_empty() {
            continue;
        }
        println!(
            "| {from}–{to} | {} | {} | {} | {} |",
            sorted.len(),
            sorted[0],
            sorted[sorted.len() / 2],
            sorted[sorted.len() - 1]
        );
    }
    let (speak_n, speak_t) = session.sum(Kind::Speak);
    let (listen_n, listen_t) = session.sum(Kind::Listen);
    let (summary_n, summary_t) = session.sum(Kind::Summary);
    let total = speak_t + listen_t + summary_t;
    println!("\n| calls | count | prompt tokens | per turn |\n|---|---|---|---|");
    for (label, n, t) in [
        ("speaking", speak_n, speak_t),
        ("evaluation (listen)", listen_n, listen_t),
        ("rolling summary", summary_n, summary_t),
        ("all", speak_n + listen_n + summary_n, total),
    ] {
        println!(
            "| {label} | {n} | {t} | {:.0} |",
            t as f64 / f64::from(turns)
        );
    }
    // Prefix stability: each call against the 16 prompts sent before it.
    println!(
        "\nprompt tokens repeating the start of one of the 16 prompts sent before \
         (in starts of ≥ 1,024 tokens, the shortest a provider caches):"
    );
    println!("| calls | prompt tokens | shared | cacheable |\n|---|---|---|---|");
    let mut all = (0, 0, 0);
    for (label, kind) in [
        ("speaking", Kind::Speak),
        ("evaluation (listen)", Kind::Listen),
        ("rolling summary", Kind::Summary),
    ] {
        let (t, shared, cacheable) = session.shared(kind);
        all = (all.0 + t, all.1 + shared, all.2 + cacheable);
        println!(
            "| {label} | {t} | {shared} ({:.1} %) | {cacheable} ({:.1} %) |",
            100.0 * shared as f64 / t.max(1) as f64,
            100.0 * cacheable as f64 / t.max(1) as f64
        );
    }
    println!(
        "| all | {} | {} ({:.1} %) | {} ({:.1} %) |",
        all.0,
        all.1,
        100.0 * all.1 as f64 / all.0.max(1) as f64,
        all.2,
        100.0 * all.2 as f64 / all.0.max(1) as f64
    );
    println!(
        "rolling summaries recorded: {} (turns ÷ 50 = {})",
        bb.summaries()
            .iter()
            .filter(|s| s.scope == SummaryScope::Rolling)
            .count(),
        turns / 50
    );

    // Orchestration time per turn: gaps between consecutive messages,
    // less the model time on the critical path (listen + speak).
    let times: Vec<_> = bb.messages().iter().map(|m| m.time).collect();
    let gaps = |from: usize, to: usize| -> Vec<f64> {
        let model_ms = 2.0 * delay.as_secs_f64() * 1e3;
        (from.max(1)..to.min(times.len()))
            .map(|i| {
                (times[i] - times[i - 1]).num_microseconds().unwrap_or(0) as f64 / 1e3 - model_ms
            })
            .collect()
    };
    let stats = |v: Vec<f64>| -> (f64, f64, f64) {
        let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
        let mut sorted = v.clone();
        sorted.sort_by(f64::total_cmp);
        let p95 = sorted
            .get((sorted.len() * 95 / 100).min(sorted.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0);
        (median(v), mean, p95)
    };
    let largest = |from: usize, to: usize| -> (f64, usize) {
        gaps(from, to)
            .into_iter()
            .enumerate()
            .map(|(k, g)| (g, from.max(1) + k + 1))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap_or((0.0, 0))
    };
    // Windows of 100 turns (around turn 100, the last 100) and of 1,000
    // (turns 51-1,050, the last 1,000): rare periodic work (a SQLite WAL
    // checkpoint, a snapshot) falls in a 100-turn window or not by chance.
    println!("\norchestration time per turn (median / mean / p95, ms):");
    for window in [100usize, 1_000] {
        if times.len() < 51 + window {
            continue;
        }
        let (early, early_mean, early_p95) = stats(gaps(51, 51 + window));
        let late_from = times.len().saturating_sub(window);
        let (late, late_mean, late_p95) = stats(gaps(late_from, times.len()));
        let (early_max, early_at) = largest(51, 51 + window);
        let (late_max, late_at) = largest(late_from, times.len());
        println!(
            "  {window} turns: {early:.2} / {early_mean:.2} / {early_p95:.2} from turn 51, \
             {late:.2} / {late_mean:.2} / {late_p95:.2} at the end ({:.2}× / {:.2}× / {:.2}×); \
             largest gap {early_max:.1} (message {early_at}) and {late_max:.1} (message {late_at})",
            late / early.max(1e-6),
            late_mean / early_mean.max(1e-6),
            late_p95 / early_p95.max(1e-6)
        );
    }
    println!(
        "peak RSS {rss:.0} MiB; store {:.1} MiB; load from the latest snapshot {:.0} ms \
         (full replay of {} events {:.0} ms)",
        store_bytes as f64 / (1024.0 * 1024.0),
        resume.as_secs_f64() * 1e3,
        events.len(),
        replay.as_secs_f64() * 1e3
    );
    // The event store alone (the directory above also holds the memory
    // index), before and after `agon compact`.
    let (before, after) = reopened.compact().await.unwrap();
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    println!(
        "event store {:.1} MiB ({:.0} KB per 1,000 events); after compaction {:.1} MiB ({:+.1} %)",
        mib(before),
        before as f64 / 1024.0 / (events.len() as f64 / 1000.0),
        mib(after),
        (after as f64 / before.max(1) as f64 - 1.0) * 100.0
    );

    // The pure part of a turn (the plan, one speaking view and three
    // listening views), on the board at message 100 and at the end.
    let protocol = config.protocol();
    let assembler = agon_context::Assembler::default();
    let pure = |board: &agon_core::Blackboard| -> f64 {
        let turn = u32::try_from(board.messages().len() + 1).unwrap();
        let reps = 50;
        let started = Instant::now();
        for _ in 0..reps {
            std::hint::black_box(protocol.plan(board));
            for (i, phase) in [
                agon_context::Phase::Deliberate { turn },
                agon_context::Phase::Listen { turn },
                agon_context::Phase::Listen { turn },
                agon_context::Phase::Listen { turn },
            ]
            .iter()
            .enumerate()
            {
                let who = ["ada", "bo", "cy", "di"][i];
                let budget =
                    agon_context::ContextBudget::new(if i == 0 { 6_000 } else { 1_500 }).unwrap();
                std::hint::black_box(
                    assembler
                        .assemble(board, who, phase, budget, &Default::default())
                        .unwrap(),
                );
            }
        }
        started.elapsed().as_secs_f64() * 1e3 / f64::from(reps)
    };
    let mut at_100 = agon_core::Blackboard::new();
    for e in &events {
        if at_100.messages().len() >= 100 {
            break;
        }
        at_100.apply(e).unwrap();
    }
    let (pure_early, pure_late) = (pure(&at_100), pure(&bb));
    println!(
        "pure work per turn (plan + 4 views, warm caches): {pure_early:.2} ms at message 100, \
         {pure_late:.2} ms at message {} ({:.2}×)",
        bb.messages().len(),
        pure_late / pure_early.max(1e-6)
    );

    // The naive baseline: every speaking turn sends the whole transcript
    // so far (plus the same system prompt), up to the window.
    let tokens = TiktokenCounter::default();
    let system = 150usize;
    let mut history = 0usize;
    let mut naive_total = 0usize;
    let mut naive_uncapped = 0usize;
    let mut overflow = None;
    for (i, m) in bb.messages().iter().enumerate() {
        let prompt = system + history;
        naive_uncapped += prompt;
        naive_total += prompt.min(WINDOW);
        if prompt > WINDOW && overflow.is_none() {
            overflow = Some(i + 1);
        }
        history += tokens.count(&format!("{}: {}", m.persona, m.content)) + 1;
    }
    println!(
        "\nbaseline (whole history each turn): {naive_uncapped} prompt tokens uncapped, \
         {naive_total} capped at the {WINDOW}-token window; it overflows the window at turn {}",
        overflow.map_or_else(|| "never".to_owned(), |t| t.to_string())
    );
    println!(
        "agon speaking calls: {speak_t} prompt tokens ({:.2}× the capped baseline, {:.3}× the \
         uncapped one); with evaluations and summaries: {total}",
        speak_t as f64 / naive_total.max(1) as f64,
        speak_t as f64 / naive_uncapped.max(1) as f64
    );
    let _ = std::fs::remove_dir_all(&dir);
}
