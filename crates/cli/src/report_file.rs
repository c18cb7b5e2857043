//! `agon report --debate FILE`: the report of a saved debate-state JSON,
//! Agon's own (`agon debate -o FILE.json`, whose `agon` field is the whole
//! blackboard) or one dialectic itself wrote (read back as events by
//! `agon_view::import`), as dialectic's `report --debate` reads it.

use std::path::Path;

use agon_config::DebateConfig;
use agon_core::{Blackboard, DebateEvent};
use agon_view::{DebateView, ReportOptions, report};
use anyhow::Context as _;

use crate::failure::Failure;

fn bad_file(error: impl Into<anyhow::Error>) -> Failure {
    Failure {
        code: 2,
        error: error.into(),
    }
}

/// Names the agents and the judge as `config` (dialectic's
/// debate-config.json or a TOML configuration) names them, matched by id;
/// agents the configuration does not know keep the names the file gave.
fn name_agents(events: &mut [DebateEvent], config: &DebateConfig) {
    let Some(DebateEvent::DebateStarted { personas, .. }) = events.first_mut() else {
        return;
    };
    let agents = &config.dialectic.agents;
    let named = agents
        .iter()
        .map(|a| (a.resolved_id(false), a.resolved_name(false)))
        .chain(std::iter::once((
            config.dialectic.judge.resolved_id(true),
            config.dialectic.judge.resolved_name(true),
        )));
    for (id, name) in named {
        if let Some(p) = personas.iter_mut().find(|p| p.id.as_str() == id) {
            p.name = name;
        }
    }
}

/// The report (Markdown, or with `json` its JSON form) of the debate
/// state saved in `path`; with `config`, the agents are named as it names
/// them.
pub(crate) fn render(
    path: &Path,
    config: Option<&Path>,
    options: ReportOptions,
    json: bool,
) -> Result<String, Failure> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {file}"))?;
    let state: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| bad_file(anyhow::anyhow!("{file}: line {}: {e}", e.line())))?;
    if let Some(board) = state.get("agon") {
        // Agon's own: the whole blackboard.
        let board: Blackboard = serde_json::from_value(board.clone())
            .map_err(|e| bad_file(anyhow::anyhow!("{file}: agon: {e}")))?;
        return Ok(if json {
            serde_json::to_string_pretty(&report::json(&board, options))? + "\n"
        } else {
            format!(
                "{}\n_The debate-quality metrics are computed from the event log: \
                 `agon report ID` on the store the debate ran in shows them._\n",
                report::markdown_with(&board, options)
            )
        });
    }
    let mut events = agon_view::import::dialectic_state_events(&state, &file).map_err(bad_file)?;
    if let Some(config) = config {
        let (config, warnings) = DebateConfig::load_with(config, &|p| std::fs::read_to_string(p))?;
        for w in warnings {
            eprintln!("warning: {w}");
        }
        name_agents(&mut events, &config);
    }
    let view = DebateView::from_log(&events, options)
        .map_err(|e| bad_file(anyhow::anyhow!("{file}: the debate does not replay: {e}")))?;
    Ok(if json {
        serde_json::to_string_pretty(&view.json())? + "\n"
    } else {
        view.markdown()
    })
}
