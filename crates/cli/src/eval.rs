//! `agon eval`: evaluator agents score a finished debate (dialectic's eval
//! command): a debate of the store, or a saved debate-state JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use agon_core::DebateId;
use agon_eval::{
    EvalConfig, EvalError, EvalInput, Evaluator, SYSTEM_PROMPT, USER_PROMPT, evaluate,
};
use agon_store::EventStore;
use anyhow::Context as _;
use clap::Args;

use crate::failure::Failure;

/// `agon eval` arguments.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The evaluators: dialectic's eval-config.json.
    #[arg(long, short)]
    config: PathBuf,
    /// The debate: an id in the store, or a saved debate-state JSON file
    /// (`agon debate --output FILE.json`, or dialectic's own).
    #[arg(
        required_unless_present = "debate_flag",
        conflicts_with = "debate_flag"
    )]
    debate: Option<String>,
    /// The debate, as dialectic's `eval -d/--debate FILE` names it (an id
    /// in the store works too).
    #[arg(long = "debate", short = 'd', value_name = "DEBATE")]
    debate_flag: Option<String>,
    /// FILE.json: averages and every evaluator's answer; FILE.csv: one row
    /// per evaluator; any other FILE: the Markdown table (default: the
    /// table on standard output).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// A model spec for every evaluator, replacing the config's models.
    #[arg(long)]
    model: Option<String>,
}

fn invalid(e: EvalError) -> Failure {
    Failure {
        code: 2,
        error: e.into(),
    }
}

async fn input(store: &dyn EventStore, debate: &str) -> Result<EvalInput, Failure> {
    let path = std::path::Path::new(debate);
    if path.is_file() {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {debate}"))?;
        let state: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            invalid(EvalError::Invalid {
                file: debate.to_owned(),
                field: format!("line {}", e.line()),
                reason: e.to_string(),
            })
        })?;
        return EvalInput::from_state_json(&state, debate).map_err(invalid);
    }
    if path.extension().is_some_and(|e| e == "json") || debate.contains('/') {
        return Err(invalid(EvalError::Invalid {
            file: debate.to_owned(),
            field: "DEBATE".into(),
            reason: "no such file".into(),
        }));
    }
    let (bb, _) = store.load(&DebateId::new(debate)).await?;
    EvalInput::from_blackboard(&bb, debate).map_err(invalid)
}

/// Runs the evaluation and writes its output.
pub async fn run(
    store: &std::sync::Arc<dyn EventStore>,
    args: &EvalArgs,
    verbose: bool,
) -> Result<ExitCode, Failure> {
    let config = EvalConfig::load(&args.config).map_err(invalid)?;
    let debate = args
        .debate
        .as_deref()
        .or(args.debate_flag.as_deref())
        .ok_or_else(|| crate::dialectic::usage_error("DEBATE", "give a debate id or file"))?;
    let input = input(store.as_ref(), debate).await?;
    let file = args.config.display().to_string();
    let mut warnings = Vec::new();
    let mut evaluators = Vec::new();
    for (i, agent) in config
        .agents
        .iter()
        .enumerate()
        .filter(|(_, a)| a.enabled != Some(false))
    {
        let spec = match &args.model {
            Some(spec) => spec.clone(),
            None => agent
                .model_spec(&file, &format!("agents[{i}]"))
                .map_err(invalid)?,
        };
        let what = format!("evaluator {}", agent.id);
        let model = tokio::task::spawn_blocking(move || {
            agon_app::build_chain(&what, &spec, &crate::runtime::model_factory(), &|k| {
                std::env::var(k).ok()
            })
        })
        .await
        .context("loading models")??;
        let system = config.prompt(agent.system_prompt_path.as_deref(), &mut warnings);
        let user = config.prompt(agent.user_prompt_path.as_deref(), &mut warnings);
        if verbose {
            eprintln!(
                "[{}] {} / {} · system prompt: {} · user prompt: {}",
                agent.id,
                model.provider(),
                model.model_id(),
                if system.is_some() { "file" } else { "built-in" },
                if user.is_some() { "file" } else { "built-in" },
            );
        }
        evaluators.push(Evaluator {
            id: agent.id.clone(),
            model,
            system: system.unwrap_or_else(|| SYSTEM_PROMPT.to_owned()),
            user_template: user.unwrap_or_else(|| USER_PROMPT.to_owned()),
            timeout: std::time::Duration::from_millis(agent.timeout.unwrap_or(30_000)),
        });
    }
    // The living rubric's current version (seed 003): accepted changes
    // are scored; the built-in version leaves dialectic's prompt as it is.
    let rubric = agon_app::rubric::RubricStore::new(std::sync::Arc::clone(store))
        .current(agon_core::rubric::DIALECTIC)
        .await?;
    if verbose {
        eprintln!("Scoring by rubric `{}` v{}", rubric.name, rubric.version);
    }
    let report = evaluate(&evaluators, &input, Some(&rubric)).await;
    for w in warnings.iter().chain(&report.warnings) {
        eprintln!("warning: {w}");
    }
    if verbose {
        for r in &report.results {
            eprintln!("[{}] {} ms", r.id, r.latency_ms);
        }
    }
    if report.results.iter().all(|r| r.skipped.is_some()) {
        eprintln!("warning: every evaluator failed; the averages are N/A");
    }
    let text = match args
        .output
        .as_ref()
        .and_then(|p| p.extension())
        .and_then(|e| e.to_str())
    {
        Some("json") => serde_json::to_string_pretty(&report.json()).context("serializing")? + "\n",
        Some("csv") => report.csv(),
        _ => report.markdown(),
    };
    match &args.output {
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("Wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
