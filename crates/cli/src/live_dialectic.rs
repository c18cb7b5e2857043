//! The live view of a dialectic debate: the round and phase on a progress
//! bar, one spinner per contribution being generated (parallel agents
//! each get theirs, with a running token count), each contribution printed
//! once it is recorded, and notices for summaries, the solution and failed
//! optional steps. Bars draw on standard error; contributions and notices
//! go to standard output.

use std::collections::HashMap;
use std::time::Duration;

use agon_config::DebateConfig;
use agon_core::{DebateEvent, DialogueMessage, MessageKind, TurnKey};
use agon_orchestrator::{DebateUpdate, DebateUpdates};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::live::Display;

/// Display names by persona id, from the configuration.
fn names(config: &DebateConfig) -> HashMap<String, String> {
    let d = &config.dialectic;
    d.enabled_agents()
        .map(|a| (a.resolved_id(false), a.resolved_name(false)))
        .chain(std::iter::once((
            d.judge.resolved_id(true),
            d.judge.resolved_name(true),
        )))
        .collect()
}

/// "System Architect critiquing Performance Engineer (round 2)".
fn describe(key: &TurnKey, names: &HashMap<String, String>) -> String {
    let name = |id: &agon_core::PersonaId| {
        names
            .get(id.as_str())
            .cloned()
            .unwrap_or_else(|| id.to_string())
    };
    match key {
        TurnKey::Proposal { round, persona } => {
            format!("{} proposing (round {round})", name(persona))
        }
        TurnKey::Critique {
            round,
            target,
            persona,
        } => {
            format!(
                "{} critiquing {} (round {round})",
                name(persona),
                name(target)
            )
        }
        TurnKey::Refinement { round, persona } => {
            format!("{} refining (round {round})", name(persona))
        }
        other => other.to_string(),
    }
}

/// The turn key a recorded message answers.
fn key_of(m: &DialogueMessage) -> Option<TurnKey> {
    let persona = m.persona.clone();
    let round = m.round;
    let key = match &m.kind {
        MessageKind::Proposal => TurnKey::Proposal { round, persona },
        MessageKind::Critique { target } => TurnKey::Critique {
            round,
            target: target.clone(),
            persona,
        },
        MessageKind::Refinement => TurnKey::Refinement { round, persona },
        _ => return None,
    };
    Some(key)
}

fn heading(m: &DialogueMessage, names: &HashMap<String, String>, verbose: bool) -> String {
    let name = |id: &agon_core::PersonaId| {
        names
            .get(id.as_str())
            .cloned()
            .unwrap_or_else(|| id.to_string())
    };
    let what = match &m.kind {
        MessageKind::Critique { target } => format!("critique of {}", name(target)),
        k => k.label().to_owned(),
    };
    let mut s = format!(
        "\x1b[1m{}\x1b[0m — {what} (round {})",
        name(&m.persona),
        m.round
    );
    if verbose && let Some(meta) = &m.meta {
        s.push_str(&format!(
            " [{} · {} ms · {} in / {} out tokens]",
            meta.model, meta.latency_ms, meta.input_tokens, meta.output_tokens
        ));
    }
    s
}

/// Starts showing `updates` on `bars` (which the terminal answerer
/// suspends while it asks its questions).
pub fn spawn(
    mut updates: DebateUpdates,
    config: &DebateConfig,
    board: &agon_core::Blackboard,
    quiet: bool,
    verbose: bool,
    bars: MultiProgress,
) -> Display {
    let names = names(config);
    let n = config.dialectic.enabled_agents().count() as u64;
    let rounds = u64::from(config.dialectic.rounds);
    let main = bars.add(ProgressBar::new(rounds * (n + n * n.saturating_sub(1) + n)));
    main.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} contributions · {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    main.enable_steady_tick(Duration::from_millis(200));
    let turn_style = ProgressStyle::with_template("  {spinner} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    let mut board = board.clone();
    let (done, mut done_rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let mut phase = String::from("starting");
        let mut usage = String::new();
        let mut turns: HashMap<TurnKey, (ProgressBar, u64)> = HashMap::new();
        let mut finishing = false;
        while let Some(update) =
            crate::live::next_update(&mut updates, &mut done_rx, &mut finishing).await
        {
            match update {
                DebateUpdate::Progress {
                    aspect,
                    aspects,
                    phase: p,
                    ..
                } => {
                    phase = if aspect > 0 {
                        format!("round {aspect}/{aspects} · {p}")
                    } else {
                        p
                    };
                }
                DebateUpdate::TurnStarted { key, .. } => {
                    let bar = bars.add(ProgressBar::new_spinner());
                    bar.set_style(turn_style.clone());
                    bar.enable_steady_tick(Duration::from_millis(120));
                    bar.set_message(describe(&key, &names));
                    turns.insert(key, (bar, 0));
                }
                DebateUpdate::Token { turn, .. } => {
                    if let Some((bar, tokens)) = turns.get_mut(&turn) {
                        *tokens += 1;
                        bar.set_message(format!("{} · {} tokens", describe(&turn, &names), tokens));
                    }
                }
                DebateUpdate::TurnDiscarded { turn, reason, .. } => {
                    if let Some((bar, _)) = turns.remove(&turn) {
                        bar.finish_and_clear();
                        bars.remove(&bar);
                    }
                    if !quiet {
                        bars.suspend(|| println!("  ({}: {reason})", describe(&turn, &names)));
                    }
                }
                DebateUpdate::Usage(u) => usage = crate::live::usage_line(&u),
                DebateUpdate::Event { event, .. } => {
                    // The view's own blackboard: what every notice is read
                    // against (a resumed debate's starts from the stored one).
                    let _ = board.apply(&event);
                    if let DebateEvent::MessageAppended { message } = event.as_ref() {
                        if let Some((bar, _)) = key_of(message).and_then(|k| turns.remove(&k)) {
                            bar.finish_and_clear();
                            bars.remove(&bar);
                        }
                        match &message.kind {
                            MessageKind::ClarificationQuestion
                            | MessageKind::ClarificationAnswer => {}
                            _ if message.is_carried_proposal() => main.inc(1),
                            _ => {
                                main.inc(1);
                                if !quiet {
                                    bars.suspend(|| {
                                        println!(
                                            "\n{}\n{}",
                                            heading(message, &names, verbose),
                                            message.content.trim()
                                        )
                                    });
                                }
                            }
                        }
                    }
                    let notice = agon_view::live::notice(&board, &event);
                    if let Some(n) = notice
                        && !quiet
                    {
                        bars.suspend(|| println!("  {n}"));
                    }
                }
                DebateUpdate::Lagged(n) => {
                    bars.suspend(|| eprintln!("  (display skipped {n} updates)"));
                }
            }
            main.set_message(format!("{phase} · {usage}"));
        }
        for (bar, _) in turns.into_values() {
            bar.finish_and_clear();
        }
        main.finish_and_clear();
    });
    Display::new(task, done)
}
