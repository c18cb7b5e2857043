//! `cargo xtask bench dialectic`: what a dialectic debate costs in prompt
//! tokens, against dialectic 0.1.0 on the same setup (see
//! `support/dialectic.rs` for the reference setup; the headline numbers
//! are also checked by `tests/headline.rs`).
//!
//! Five runs, the stub answering after 50 ms: ~214-token answers with the
//! memory analysis off, on without and on with the critique-impact
//! judgement (the default), and ~1,900-word answers off and on. Reported
//! per run: calls and prompt tokens per phase and per round, the total
//! against dialectic's (66,305 with its default summarization), the largest
//! prompt per phase, wall time.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "support/dialectic.rs"]
mod support;

#[path = "support/prefix.rs"]
mod prefix;

use std::collections::BTreeMap;
use std::time::Duration;

use agon_context::{TiktokenCounter, TokenCounter};
use support::{
    DIALECTIC_TOKENS, DIALECTIC_TOKENS_LONG, DIALECTIC_TOKENS_NO_SUMMARY, answer, run_custom,
    run_with,
};

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let counter = TiktokenCounter::default();
        println!(
            "dialectic benchmark: 3 agents (architect, performance, kiss), 5 rounds, kata1, 50 ms stub, tiktoken o200k"
        );
        println!(
            "stub answers: {} tokens (short), {} tokens (long)",
            counter.count(&answer(false)),
            counter.count(&answer(true))
        );
        println!(
            "dialectic 0.1.0 on this setup: {DIALECTIC_TOKENS} prompt tokens with its summarization, {DIALECTIC_TOKENS_NO_SUMMARY} without\n"
        );
        for (long, analysis, impact, requirements) in [
            (false, false, false, false),
            (false, true, false, true),
            (false, true, true, false),
            (false, true, true, true),
            (true, false, false, false),
            (true, true, true, false),
            (true, true, true, true),
        ] {
            print_run(long, analysis, impact, requirements).await;
        }
        // The long answers with the analysis batch the defaults give an
        // Anthropic, OpenAI or OpenRouter analysis model (the stub is an
        // OpenAI-compatible server, whose window the defaults cannot know).
        let api = run_custom(true, Duration::from_millis(50), |c| {
            c.dialectic.analysis_batch_chars =
                Some(agon_config::LARGE_WINDOW_ANALYSIS_BATCH_CHARS);
        })
        .await;
        println!(
            "(next: the defaults as an API analysis model resolves them, analysis_batch_chars {})",
            agon_config::LARGE_WINDOW_ANALYSIS_BATCH_CHARS
        );
        print_report(&api, true, true, true, true);
        // The defaults without the devil's advocate, for its cost.
        let tame = run_custom(false, Duration::from_millis(50), |c| {
            c.dialectic.devil_advocate = false;
        })
        .await;
        print_report(&tame, false, true, true, true);
    });
}

async fn print_run(long: bool, analysis: bool, impact: bool, requirements: bool) {
    let report = run_with(
        long,
        analysis,
        impact,
        requirements,
        Duration::from_millis(50),
    )
    .await;
    print_report(&report, long, analysis, impact, requirements);
}

fn print_report(
    report: &support::RunReport,
    long: bool,
    analysis: bool,
    impact: bool,
    requirements: bool,
) {
    let mut by_round: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for c in &report.calls {
        if let Some(r) = c
            .round
            .filter(|_| !matches!(c.phase, "analysis" | "summary" | "judge summary"))
        {
            let e = by_round.entry(r).or_default();
            e.0 += 1;
            e.1 += c.tokens;
        }
    }
    let largest = report.calls.iter().map(|c| c.tokens).max().unwrap_or(0);
    let baseline = if long {
        DIALECTIC_TOKENS_LONG
    } else {
        DIALECTIC_TOKENS
    };
    let repairs: Vec<_> = report.calls.iter().filter(|c| c.repair.is_some()).collect();
    println!(
        "== answers {}, memory analysis {}{}, requirements {}, devil's advocate {} ==",
        if long { "~1,900 words" } else { "~214 tokens" },
        if analysis { "on" } else { "off" },
        match (analysis, impact) {
            (true, true) => ", judge_impact on (default)",
            (true, false) => ", judge_impact off",
            _ => "",
        },
        if requirements { "on (default)" } else { "off" },
        if report.config.dialectic.devil_advocate {
            "on (default)"
        } else {
            "off"
        }
    );
    println!("phase            calls   prompt tokens   largest prompt");
    for (phase, (n, tokens, max)) in report.by_phase() {
        println!("{phase:<16} {n:>5}   {tokens:>13}   {max:>14}");
    }
    if let Some(first) = repairs.first() {
        println!(
            "repair attempts: {} (first: {})",
            repairs.len(),
            first.repair.as_deref().unwrap_or_default()
        );
    }
    println!("round            calls   prompt tokens (proposals, critiques, refinements)");
    for (round, (n, tokens)) in &by_round {
        println!("{round:<16} {n:>5}   {tokens:>13}");
    }
    if analysis && impact && requirements && report.config.dialectic.devil_advocate {
        // The defaults: how much of each prompt repeats an earlier one.
        let stability = report.stability();
        println!(
            "prefix stability (prompt tokens shared with a prompt sent earlier in the debate, by phase):\n{}{}",
            stability.table(),
            stability.projection()
        );
    }
    println!(
        "total: {} calls, {} prompt tokens = {:.2}× dialectic's {baseline}; largest prompt {largest} (context budget {} + system and instruction; summary inputs: twice the budget); critiques judged: {}; wall {:.1} s\n",
        report.calls.len(),
        report.total(),
        report.total() as f64 / baseline as f64,
        report.config.dialectic.context_tokens,
        report.board.critique_impacts().len(),
        report.wall.as_secs_f64()
    );
}
