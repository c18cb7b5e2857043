//! The terminal's live view of a running debate, for every protocol: it
//! draws what `agon_view::live::LiveView` makes of the run's updates.
//! Ctrl-C handling lives here too.

use std::collections::HashMap;
use std::io::Write as _;
use std::time::Duration;

use agon_core::{Blackboard, TurnKey};
use agon_orchestrator::{DebateUpdate, DebateUpdates, RunControl};
use agon_view::live::{LiveView, Shown};
use futures::StreamExt;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use tokio::task::JoinHandle;

/// First Ctrl-C: finish the current message, then stop. Second: discard it
/// and stop now. Either way the debate stays resumable.
pub fn watch_ctrl_c(control: RunControl) -> JoinHandle<()> {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        eprintln!(
            "\n^C: finishing the current message, then stopping (Ctrl-C again to discard it)"
        );
        control.stop.cancel();
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\n^C: discarding the current message and stopping");
            control.abort.cancel();
        }
    })
}

/// Resolves at Ctrl-C (SIGINT) or SIGTERM: a server or a worker stops
/// gracefully on either.
pub async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The next update to show: `None` once the stream ends, or once `done`
/// fired and no update came for 100 ms (the ones already sent are shown).
pub async fn next_update(
    updates: &mut DebateUpdates,
    done: &mut tokio::sync::oneshot::Receiver<()>,
    finishing: &mut bool,
) -> Option<DebateUpdate> {
    loop {
        if *finishing {
            return tokio::time::timeout(Duration::from_millis(100), updates.next())
                .await
                .ok()
                .flatten();
        }
        tokio::select! {
            u = updates.next() => return u,
            _ = &mut *done => *finishing = true,
        }
    }
}

/// The running usage and cost, as the bars show it.
pub fn usage_line(u: &agon_llm::ScopeUsage) -> String {
    // What the prompt cache saved (or, when writes cost more than the
    // reads saved, what it cost), at the models' cache rates.
    let saving = u.cache_saving_usd();
    let mut notes = Vec::new();
    if u.usage.cached_input_tokens > 0 {
        notes.push(format!("{} cached", u.usage.cached_input_tokens));
    }
    if saving >= 5e-5 {
        notes.push(format!("${saving:.4} saved"));
    } else if saving <= -5e-5 {
        notes.push(format!("cache writes ${:.4} more", -saving));
    }
    let cached = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join(", "))
    };

    format!(
        "{} calls · {} in{cached} / {} out tokens · ${:.4}{}",
        u.calls,
        u.usage.input_tokens,
        u.usage.output_tokens,
        u.cost_usd,
        if u.unpriced_calls > 0 {
            " (+ local)"
        } else {
            ""
        }
    )
}

/// The running display.
pub struct Display {
    task: JoinHandle<()>,
    done: tokio::sync::oneshot::Sender<()>,
}

impl Display {
    /// Stops the display once the updates already sent are shown.
    pub async fn finish(self) {
        let _ = self.done.send(());
        let _ = self.task.await;
    }
}

/// Prints what the view shows (on standard output, the bars suspended).
fn show(bars: &MultiProgress, shown: Vec<Shown>, quiet: bool) {
    if quiet {
        return;
    }
    for item in shown {
        bars.suspend(|| {
            match item {
                Shown::StreamStart(heading) => print!("\n\x1b[1m{heading}\x1b[0m:\n"),
                Shown::StreamText(text) => print!("{text}"),
                Shown::StreamEnd(None) => println!(),
                Shown::StreamEnd(Some(reason)) => println!("\n  (discarded: {reason})"),
                Shown::Message { heading, text } => {
                    println!("\n\x1b[1m{heading}\x1b[0m\n{text}");
                }
                Shown::Notice(notice) => println!("  {notice}"),
            }
            let _ = std::io::stdout().flush();
        });
    }
}

/// Starts showing `updates` of the debate whose blackboard is `board` (as
/// loaded before the run: empty for a new debate), for every protocol: a
/// bar of the contributions planned, a turn that runs alone streamed
/// under its speaker's name, turns that run side by side as spinners with
/// their token counts (each printed once recorded), the running usage and
/// cost, and notices. Bars draw on standard error (`bars`, which the
/// terminal answerer suspends while it asks its questions); text goes to
/// standard output, none of it when `quiet`.
pub fn spawn(
    mut updates: DebateUpdates,
    board: &Blackboard,
    quiet: bool,
    verbose: bool,
    bars: MultiProgress,
) -> Display {
    let mut view = LiveView::new(board.clone(), verbose);
    let main = bars.add(ProgressBar::new(0));
    main.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} contributions · {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    main.set_position(view.done());
    main.enable_steady_tick(Duration::from_millis(200));
    let turn_style = ProgressStyle::with_template("  {spinner} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    let (done, mut done_rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let mut usage = String::new();
        let mut spinners: HashMap<TurnKey, ProgressBar> = HashMap::new();
        let mut finishing = false;
        while let Some(update) = next_update(&mut updates, &mut done_rx, &mut finishing).await {
            let shown = match update {
                DebateUpdate::Progress(progress) => {
                    view.progress(progress);
                    Vec::new()
                }
                DebateUpdate::TurnStarted { key, persona, .. } => view.turn_started(key, persona),
                DebateUpdate::Token { turn, delta, .. } => view.token(&turn, &delta),
                DebateUpdate::TurnDiscarded { turn, reason, .. } => {
                    view.turn_discarded(&turn, &reason)
                }
                DebateUpdate::Usage(u) => {
                    usage = usage_line(&u);
                    Vec::new()
                }
                DebateUpdate::Event { event, .. } => view.event(&event),
                DebateUpdate::Lagged(n) => {
                    bars.suspend(|| eprintln!("  (display skipped {n} updates)"));
                    Vec::new()
                }
            };
            show(&bars, shown, quiet);
            // One spinner per turn running beside others.
            spinners.retain(|key, bar| {
                let running = view.active().any(|(k, _)| k == key);
                if !running {
                    bar.finish_and_clear();
                    bars.remove(bar);
                }
                running
            });
            for (key, turn) in view.active() {
                let bar = spinners.entry(key.clone()).or_insert_with(|| {
                    let bar = bars.add(ProgressBar::new_spinner());
                    bar.set_style(turn_style.clone());
                    bar.enable_steady_tick(Duration::from_millis(120));
                    bar
                });
                bar.set_message(format!("{} · {} tokens", turn.label, turn.tokens));
            }
            if let Some(planned) = view.planned() {
                main.set_length(planned.max(view.done()));
            }
            main.set_position(view.done());
            main.set_message(format!("{} · {usage}", view.phase()));
        }
        for bar in spinners.into_values() {
            bar.finish_and_clear();
        }
        main.finish_and_clear();
    });
    Display { task, done }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agon_llm::{PriceTable, Usage, UsageLedger};

    #[test]
    fn the_usage_line_says_what_the_cache_saved() {
        let ledger = UsageLedger::new(PriceTable::with_defaults());
        let usage = Usage {
            cached_input_tokens: 800_000,
            ..Usage::new(1_000_000, 0)
        };
        ledger.record("debater", "claude-sonnet-4-20250514", usage);
        // 800k tokens at $0.30 instead of $3.00 per million: $2.16 saved.
        assert_eq!(
            usage_line(&ledger.total()),
            "1 calls · 1000000 in (800000 cached, $2.1600 saved) / 0 out tokens · $0.8400"
        );
        let written = UsageLedger::new(PriceTable::with_defaults());
        written.record(
            "debater",
            "claude-sonnet-4-20250514",
            Usage {
                cache_write_tokens: 1_000_000,
                ..Usage::new(1_000_000, 0)
            },
        );
        assert_eq!(
            usage_line(&written.total()),
            "1 calls · 1000000 in (cache writes $0.7500 more) / 0 out tokens · $3.7500"
        );
        let plain = UsageLedger::new(PriceTable::with_defaults());
        plain.record("debater", "gpt-4o-mini", Usage::new(1_000, 10));
        assert!(!usage_line(&plain.total()).contains('('));
    }
}
