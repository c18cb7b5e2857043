//! The live view of a running debate: a progress bar for aspects and
//! minirounds, each utterance streamed under its speaker's name, a running
//! token and cost count, and notices for claims, crux cards, reflections and
//! failed optional steps. Ctrl-C handling lives here too.

use std::io::Write as _;
use std::time::Duration;

use agon_config::DebateConfig;
use agon_core::{Blackboard, DebateEvent};
use agon_orchestrator::{DebateUpdate, DebateUpdates, RunControl};
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};
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
    format!(
        "{} calls · {} in / {} out tokens · ${:.4}{}",
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
    /// A display run by `task`, told to finish through `done`.
    pub fn new(task: JoinHandle<()>, done: tokio::sync::oneshot::Sender<()>) -> Self {
        Self { task, done }
    }

    /// Stops the display once the updates already sent are shown.
    pub async fn finish(self) {
        let _ = self.done.send(());
        let _ = self.task.await;
    }
}

/// The turns the bar counts: openings, takes and closings of `debaters`
/// over `aspects`, and the synthesis.
fn expected_turns(config: &DebateConfig, debaters: usize, aspects: usize) -> u64 {
    if config.protocol == agon_config::ProtocolKind::Deliberation {
        return u64::from(config.deliberation.turns);
    }
    let debaters = debaters as u64;
    debaters * 2
        + aspects as u64 * u64::from(config.minirounds) * debaters
        + u64::from(config.synthesis)
}

/// Starts showing `updates` of the debate whose blackboard is `board` (as
/// loaded before the run: empty for a new debate).
pub fn spawn(
    mut updates: DebateUpdates,
    config: &DebateConfig,
    board: &Blackboard,
    quiet: bool,
) -> Display {
    // A started debate knows its cast and aspects; a new one will have
    // what the configuration lists or asks for.
    let (debaters, aspects) = if board.topic().is_some() {
        (board.debaters().count(), board.aspects().len())
    } else {
        (
            match config.personas.len() {
                0 => config.persona_count,
                n => n,
            },
            match config.aspects.len() {
                0 => config.aspect_count,
                n => n,
            },
        )
    };
    let bar = ProgressBar::new(expected_turns(config, debaters, aspects));
    bar.set_position(
        board
            .messages()
            .iter()
            .filter(|m| m.crux_room.is_none())
            .count() as u64,
    );
    let mut board = board.clone();
    let config = config.clone();
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} turns · {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let (done, mut done_rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let mut phase = String::from("starting");
        let mut usage = String::new();
        let mut finishing = false;
        while let Some(update) = next_update(&mut updates, &mut done_rx, &mut finishing).await {
            match update {
                DebateUpdate::Progress {
                    aspect,
                    aspects,
                    miniround,
                    phase: p,
                } => {
                    phase = if aspect > 0 && p == "takes" {
                        format!("aspect {aspect}/{aspects} · miniround {}", miniround + 1)
                    } else {
                        p
                    };
                }
                DebateUpdate::TurnStarted { name, key, .. } if !quiet => {
                    bar.suspend(|| {
                        print!("\n\x1b[1m{name}\x1b[0m ({key}):\n");
                        let _ = std::io::stdout().flush();
                    });
                }
                DebateUpdate::Token { delta, .. } if !quiet => {
                    bar.suspend(|| {
                        print!("{delta}");
                        let _ = std::io::stdout().flush();
                    });
                }
                DebateUpdate::TurnDiscarded { reason, .. } if !quiet => {
                    bar.suspend(|| println!("\n  (discarded: {reason})"));
                }
                DebateUpdate::Usage(u) => usage = usage_line(&u),
                DebateUpdate::Event { event, .. } => {
                    // The view's own blackboard: what every notice is read
                    // against (a resumed debate's starts from the stored one).
                    let _ = board.apply(&event);
                    match event.as_ref() {
                        DebateEvent::MessageAppended { message } => {
                            if message.crux_room.is_none() {
                                bar.inc(1);
                            }
                            if !quiet {
                                bar.suspend(|| println!());
                            }
                        }
                        DebateEvent::DebateStarted {
                            personas, aspects, ..
                        } => {
                            let debaters = personas.iter().filter(|p| p.is_debater()).count();
                            bar.set_length(expected_turns(&config, debaters, aspects.len()));
                        }
                        _ => {}
                    }
                    let notice = agon_view::live::notice(&board, &event);
                    if let Some(n) = notice
                        && !quiet
                    {
                        bar.suspend(|| println!("  {n}"));
                    }
                }
                DebateUpdate::Lagged(n) => {
                    bar.suspend(|| eprintln!("  (display skipped {n} updates)"))
                }
                _ => {}
            }
            bar.set_message(format!("{phase} · {usage}"));
        }
        bar.finish_and_clear();
    });
    Display { task, done }
}
