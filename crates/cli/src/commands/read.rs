//! The read commands: `agon show`, `agon compare`, `agon report`, `agon
//! export`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use agon_app::App;
use agon_core::DebateId;
use agon_store::EventStore;
use agon_view::{ReportOptions, report};
use anyhow::Context as _;

use crate::failure::Failure;

/// What `agon show` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shown {
    /// The transcript (`--json`: the blackboard), the default.
    Default,
    /// The transcript (`--json`: its messages).
    Transcript,
    /// The blackboard.
    Blackboard,
    /// The debate-quality metrics.
    Metrics,
    /// The memory statistics.
    Stats,
}

/// `agon show`.
pub(crate) async fn show(
    app: &App,
    id: String,
    what: Shown,
    json: bool,
) -> Result<ExitCode, Failure> {
    let id = DebateId::new(id);
    let store = app.store();
    match what {
        Shown::Metrics => {
            let view = app.view(&id, ReportOptions::default()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(view.metrics())?);
            } else {
                print!("{}", view.metrics_markdown());
            }
        }
        Shown::Stats => {
            let (bb, _) = store.load(&id).await?;
            if json {
                let stats = agon_view::MemoryStats::of(&bb);
                println!("{}", serde_json::to_string_pretty(&stats)?);
            } else {
                print!("{}", report::stats_markdown(&bb));
            }
        }
        Shown::Blackboard if !json => {
            let view = app.view(&id, ReportOptions::default()).await?;
            print!("{}", agon_view::terminal::board_summary(&view));
        }
        Shown::Default | Shown::Transcript | Shown::Blackboard => {
            let (bb, _) = store.load(&id).await?;
            if json && what == Shown::Transcript {
                println!("{}", serde_json::to_string_pretty(bb.messages())?);
            } else if json {
                println!("{}", serde_json::to_string_pretty(&bb)?);
            } else {
                print!("{}", agon_view::terminal::transcript(&bb));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `agon compare`: the metrics side by side; for two debates, where they
/// part first.
pub(crate) async fn compare(app: &App, ids: Vec<String>, json: bool) -> Result<ExitCode, Failure> {
    let divergence = match ids.as_slice() {
        [a, b] => Some(
            app.divergence(&DebateId::new(a.clone()), &DebateId::new(b.clone()))
                .await?,
        ),
        _ => None,
    };
    let mut all = Vec::with_capacity(ids.len());
    for id in ids {
        let view = app
            .view(&DebateId::new(id.clone()), ReportOptions::default())
            .await?;
        all.push((id, view.metrics().clone()));
    }
    if json {
        let list: Vec<serde_json::Value> = all
            .iter()
            .map(|(id, m)| serde_json::json!({"debate": id, "metrics": m}))
            .collect();
        match divergence {
            Some(divergence) => println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "debates": list,
                    "divergence": divergence,
                }))?
            ),
            None => println!("{}", serde_json::to_string_pretty(&list)?),
        }
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", report::compare_markdown(&all));
    if let Some(divergence) = &divergence {
        print!("\n{}", divergence_text(&all[0].0, &all[1].0, divergence));
    }
    Ok(ExitCode::SUCCESS)
}

/// Where two debates part, as `agon compare` prints it.
fn divergence_text(a: &str, b: &str, d: &agon_app::Divergence) -> String {
    let mut out = format!(
        "## Where {a} and {b} part\n\nTheir logs hold the same first {} events; their transcripts the same first {} messages.\n\n",
        d.common_events, d.common_messages
    );
    match &d.first {
        None => out.push_str("Their transcripts are the same.\n\n"),
        Some((left, right)) => {
            for (id, said) in [(a, left), (b, right)] {
                match said {
                    Some(m) => out.push_str(&format!(
                        "- {id}, message {} ({}, {}):\n\n  > {}\n\n",
                        m.index,
                        m.speaker,
                        m.kind,
                        crate::view::first_line(&m.text)
                    )),
                    None => out.push_str(&format!("- {id}: its transcript ends there\n\n")),
                }
            }
        }
    }
    out
}

/// `agon report`.
pub(crate) async fn report(
    app: &App,
    id: Option<String>,
    debate: Option<PathBuf>,
    config: Option<PathBuf>,
    output: Option<PathBuf>,
    verbose: bool,
    json: bool,
) -> Result<ExitCode, Failure> {
    let orch = app.orchestrator();
    let md = match (id, debate) {
        (_, Some(file)) => {
            let options = ReportOptions {
                verbose,
                reflection_threshold: None,
            };
            crate::report_file::render(&file, config.as_deref(), options, json)?
        }
        (Some(id), None) => {
            let id = DebateId::new(id);
            let options = ReportOptions {
                verbose,
                reflection_threshold: orch
                    .config_of(&id)
                    .await
                    .ok()
                    .map(|c| c.reflection_threshold),
            };
            let view = app.report_view(&id, options).await?;
            if json {
                serde_json::to_string_pretty(&view.json())?
            } else {
                view.markdown()
            }
        }
        (None, None) => {
            return Err(crate::dialectic::usage_error(
                "ID",
                "give a debate id, or a saved debate with --debate FILE",
            ));
        }
    };
    match output {
        Some(path) => {
            std::fs::write(&path, md).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("Report written to {}", path.display());
        }
        None => print!("{md}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `agon export`: the event log as JSON.
pub(crate) async fn export(store: &Arc<dyn EventStore>, id: String) -> Result<ExitCode, Failure> {
    let id = DebateId::new(id);
    store.debate(&id).await?;
    let events = store.events_after(&id, 0).await?;
    println!("{}", serde_json::to_string_pretty(&events)?);
    Ok(ExitCode::SUCCESS)
}
