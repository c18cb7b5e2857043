//! `agon agents`, `agon override` and `agon trust check`: the agent trust
//! memory (seed 003) kept in the store across debates.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use agon_app::trust::TrustStore;
use agon_core::DebateId;
use agon_store::EventStore;
use agon_trust::AgentMemory;
use anyhow::Context;
use clap::Subcommand;

use crate::failure::Failure;

/// `agon agents …`.
#[derive(Debug, Subcommand)]
pub(crate) enum AgentsCommand {
    /// One agent's memory: metadata, trust history (with a chart), dissents
    /// and overrides.
    Show {
        /// The agent's name.
        name: String,
    },
    /// Print an agent's memory as JSON in seed 003's `memory/<agent>.json`
    /// layout.
    Export {
        /// The agent's name.
        name: String,
    },
    /// Load a memory file in seed 003's layout (replaces the agent's
    /// memory; nothing is written when the file is invalid).
    Import {
        /// The file.
        file: PathBuf,
    },
}

/// `agon trust …`.
#[derive(Debug, Subcommand)]
pub(crate) enum TrustCommand {
    /// Run regret inference now: overrides past their 24 h deadline whose
    /// decision is no longer the output are marked regretted.
    Check,
}

/// `agon agents` without a subcommand: one line per agent.
pub(crate) async fn list(store: Arc<dyn EventStore>, json: bool) -> Result<ExitCode, Failure> {
    let all = TrustStore::new(store).all().await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(ExitCode::SUCCESS);
    }
    if all.is_empty() {
        eprintln!(
            "No agent memory yet (it is written by `agon override`, `agon agents import`, and by debates)."
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<16} {:>5}  {:<9} {:>8} {:>6} {:>5} {:>9} {:>6} {:>9} {:>6} {:>7} {:>6}",
        "agent",
        "trust",
        "probation",
        "dissents",
        "impact",
        "depth",
        "escalated",
        "useful",
        "overrides",
        "regret",
        "controv",
        "rounds"
    );
    for m in &all {
        let x = Cells::of(m);
        println!(
            "{:<16} {:>5.2}  {:<9} {:>8} {:>6} {:>5} {:>9} {:>6} {:>9} {:>6} {:>7} {:>6}",
            m.agent_name,
            m.trust_score,
            if m.on_probation() { "yes" } else { "no" },
            x.dissents,
            x.impact,
            x.depth,
            x.escalations,
            x.useful,
            x.overrides,
            x.regret,
            x.controversy,
            m.rounds_participated
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Seed 003's metrics of one agent, as printed (`–` for a ratio without
/// the events it divides).
struct Cells {
    dissents: u64,
    impact: String,
    depth: String,
    escalations: usize,
    useful: String,
    overrides: u64,
    regret: String,
    controversy: String,
    debates: usize,
}

impl Cells {
    fn of(m: &AgentMemory) -> Self {
        let percent = |r: Option<f64>| r.map_or("–".to_owned(), |r| format!("{:.0}%", r * 100.0));
        let decimal = |r: Option<f64>| r.map_or("–".to_owned(), |r| format!("{r:.2}"));
        let x = m.metrics(chrono::Utc::now());
        Self {
            dissents: x.dissents,
            impact: percent(x.impact_ratio),
            depth: decimal(x.mean_depth),
            escalations: x.escalations,
            useful: percent(x.escalation_usefulness),
            overrides: x.overrides,
            regret: percent(x.regret_rate),
            controversy: decimal(x.controversy),
            debates: x.debates,
        }
    }
}

/// Seed 003's metrics of `m`, two lines for `agon agents show`.
fn metrics_lines(m: &AgentMemory) -> String {
    let x = Cells::of(m);
    format!(
        "dissents {} · impact {} · mean depth {} · escalated to a crux room {} (useful {})\n\
         overrides {} · regret {} · controversy {} per debate over {} debates\n",
        x.dissents,
        x.impact,
        x.depth,
        x.escalations,
        x.useful,
        x.overrides,
        x.regret,
        x.controversy,
        x.debates
    )
}

/// A one-line chart of scores in [0, 1].
pub(crate) fn sparkline(scores: &[f64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    scores
        .iter()
        .map(|s| BARS[((s.clamp(0.0, 1.0) * 7.0).round() as usize).min(7)])
        .collect()
}

fn show_text(m: &AgentMemory) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "{}", m.agent_name);
    let _ = writeln!(
        s,
        "model {} · role {} · {} rounds · {}",
        if m.model.is_empty() { "?" } else { &m.model },
        if m.primary_role.is_empty() {
            "?"
        } else {
            &m.primary_role
        },
        m.rounds_participated,
        if m.on_probation() {
            "on probation"
        } else {
            "off probation"
        }
    );
    s.push_str(&metrics_lines(m));
    let scores: Vec<f64> = m.trust_score_history.iter().map(|p| p.score).collect();
    let _ = writeln!(
        s,
        "\ntrust {:.3}  {}  (0 ▁ … █ 1, {} changes)",
        m.trust_score,
        sparkline(&scores),
        scores.len()
    );
    for p in m.trust_score_history.iter().rev().take(10) {
        let _ = writeln!(
            s,
            "  {}  {:.3}  {}",
            p.timestamp.format("%Y-%m-%d %H:%M"),
            p.score,
            p.reason
        );
    }
    let _ = writeln!(s, "\ndissents ({})", m.dissent_history.len());
    for d in m.dissent_history.iter().rev().take(10) {
        let _ = writeln!(
            s,
            "  {}  {}  depth {:.2}  {}  {}",
            d.timestamp.format("%Y-%m-%d"),
            d.round_id,
            d.depth_score,
            if d.impact { "impact" } else { "no impact" },
            crate::view::first_line(&d.dissent_text)
        );
    }
    let _ = writeln!(s, "\noverrides ({})", m.override_history.len());
    for o in m.override_history.iter().rev().take(10) {
        let _ = writeln!(
            s,
            "  {}  {}  {}{}",
            o.timestamp.format("%Y-%m-%d %H:%M"),
            o.round_id,
            if o.regret { "regretted" } else { "standing" },
            o.reverted_by
                .as_deref()
                .map(|by| format!(" (reverted by {by})"))
                .unwrap_or_default()
        );
    }
    s
}

/// `agon agents show|export|import`.
pub(crate) async fn run(
    store: Arc<dyn EventStore>,
    command: AgentsCommand,
    json: bool,
) -> Result<ExitCode, Failure> {
    let trust = TrustStore::new(store);
    match command {
        AgentsCommand::Show { name } => {
            let m = trust.require(&name).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&m)?);
            } else {
                print!("{}", show_text(&m));
            }
        }
        AgentsCommand::Export { name } => {
            let m = trust.require(&name).await?;
            println!("{}", serde_json::to_string_pretty(&m)?);
        }
        AgentsCommand::Import { file } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let m = trust
                .import(&file.display().to_string(), &text, chrono::Utc::now())
                .await?;
            eprintln!(
                "Imported {}: trust {:.3}, {} dissents, {} overrides",
                m.agent_name,
                m.trust_score,
                m.dissent_history.len(),
                m.override_history.len()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `agon override ID --file F [--agent NAME] [--criterion "NAME: …" |
/// --drop-criterion NAME]`.
pub(crate) async fn override_output(
    app: &agon_app::App,
    id: &str,
    file: &PathBuf,
    agent: Option<&str>,
    criterion: Option<&str>,
    drop_criterion: Option<&str>,
) -> Result<ExitCode, Failure> {
    let decision =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let id = DebateId::new(id);
    let ask = match (criterion, drop_criterion) {
        (_, Some(name)) => Some(agon_app::RubricAsk::Drop(name.to_owned())),
        (Some(text), None) => Some(agon_app::RubricAsk::Criterion(text.to_owned())),
        (None, None) => None,
    };
    let done = app.override_output(&id, &decision, agent, ask).await?;
    eprintln!(
        "Recorded the override of debate {id} for {} (regret is checked after 24 h: `agon trust check`).",
        done.agents.join(", ")
    );
    if let Some(p) = done.proposal {
        eprintln!(
            "Proposed to rubric `{}` as #{} (on behalf of {}): `agon rubric accept {} --rubric {}` adopts it.",
            p.rubric, p.id, p.by, p.id, p.rubric
        );
    }
    if let Some(reason) = done.not_proposed {
        eprintln!("No rubric change proposed: {reason}.");
    }
    Ok(ExitCode::SUCCESS)
}

/// `agon trust check`.
pub(crate) async fn check(store: Arc<dyn EventStore>) -> Result<ExitCode, Failure> {
    let marked = TrustStore::new(store).check(chrono::Utc::now()).await?;
    eprintln!("{marked} override(s) marked regretted.");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sparkline_spans_0_to_1() {
        assert_eq!(sparkline(&[0.0, 0.5, 1.0, 2.0, -1.0]), "▁▅██▁");
    }
}
