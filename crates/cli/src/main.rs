//! `agon`: run memory-backed multi-agent debates from the command line.
//! This file dispatches; each command lives in `commands/` (or its own
//! module), an adapter over the application (`agon-app`).
//!
//! Exit codes: 0 success; 1 internal error; 2 usage error; 3 configuration
//! error; 4 model/provider error; 5 store error; 130 stopped by Ctrl-C (the
//! debate is resumable with `agon resume ID`).

mod agents;
mod args;
mod commands;
mod corpus;
mod debate_args;
mod dialectic;
mod eval;
mod failure;
mod live;
mod memory;
mod profile;
mod queue;
mod report_file;
mod retention;
mod rubric;
mod runtime;
mod serve;
mod telemetry;
mod view;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use agon_app::App;
use agon_store::EventStore;
use anyhow::Context as _;
use clap::Parser as _;

use crate::args::{Cli, Command, MemoryCommand};
use crate::failure::Failure;
use crate::failure::error_text;
use crate::runtime::model_factory;

fn default_store_url() -> anyhow::Result<String> {
    let var = |n: &str| {
        std::env::var_os(n)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = var("XDG_DATA_HOME")
        .map(|d| d.join("agon"))
        .or_else(|| var("HOME").map(|h| h.join(".local/share/agon")))
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(format!("sqlite://{}", dir.join("agon.db").display()))
}

async fn open_store(url: Option<&str>) -> Result<Arc<dyn EventStore>, Failure> {
    let url = match url {
        Some(u) => u.to_owned(),
        None => default_store_url()?,
    };
    Ok(agon_store::open(&url).await?)
}

/// The application over `store`: debates run with the binary's one
/// runtime; on a PostgreSQL store where workers ran, resumes of their
/// debates are queued for them.
async fn app(store: Arc<dyn EventStore>, url: &str) -> App {
    let runtime = Arc::new(runtime::CliRuntime::new(url, model_factory()));
    let app = App::new(store, runtime);
    if !agon_worker::is_postgres(url) {
        return app;
    }
    match agon_worker::JobQueue::open_existing(url).await {
        Ok(Some(queue)) => app.with_queue(Arc::new(queue)),
        _ => app,
    }
}

async fn main_inner(cli: Cli) -> Result<ExitCode, Failure> {
    if let Some(file) = &cli.env_file {
        dotenvy::from_path(file).map_err(|e| {
            dialectic::usage_error("--env-file", format!("cannot load {}: {e}", file.display()))
        })?;
    }
    let verbose = cli.verbose > 0;
    let json = cli.json;
    // The store is opened before any model is loaded or called.
    let url = match cli.store.as_deref() {
        Some(u) => u.to_owned(),
        None => default_store_url()?,
    };
    if json && !cli.command.reads() {
        return Err(dialectic::usage_error(
            "--json",
            "is for the read commands: list, show, compare, report, recall, export and agents \
             (`agon eval` writes JSON with `-o FILE.json`)",
        ));
    }
    let store = open_store(Some(&url)).await?;
    let app = app(Arc::clone(&store), &url).await;
    match cli.command {
        Command::Debate(args) => commands::debate::start(&app, &url, *args, verbose).await,
        Command::Resume {
            id,
            force,
            detach,
            view,
        } => commands::debate::resume(&app, &url, id, force, detach, view, verbose).await,
        Command::Worker(args) => queue::worker(store, &url, args).await,
        Command::Submit(args) => {
            queue::submit(&app, &url, args, dialectic::invoked_as_dialectic()).await
        }
        Command::Serve {
            addr,
            grace_secs,
            mcp,
        } => {
            let grace = std::time::Duration::from_secs(grace_secs);
            serve::run(store, url, addr, grace, mcp).await
        }
        Command::Mcp => {
            // The session ends when the client closes stdin; the debates it
            // started stop at their next step and resume with `agon resume`.
            agon_mcp::serve_stdio(app.clone()).await?;
            app.shutdown(std::time::Duration::from_secs(30)).await;
            Ok(ExitCode::SUCCESS)
        }
        Command::Note { id, text, author } => commands::steer::note(&app, id, text, author).await,
        Command::Pause { id, by } => commands::steer::pause(&app, id, by).await,
        Command::Stop { id } => commands::steer::stop(&app, id).await,
        Command::Answer { id, answers } => commands::steer::answer(&app, id, answers).await,
        Command::Fork {
            id,
            at,
            model,
            rounds,
            minirounds,
        } => {
            let settings = commands::fork::ForkSettings {
                model,
                rounds,
                minirounds,
            };
            commands::fork::run(&app, id, at, settings).await
        }
        Command::List => commands::list::run(&store, &url, json).await,
        Command::Show {
            id,
            transcript,
            blackboard,
            metrics,
            stats,
        } => {
            use commands::read::Shown;
            let what = match (transcript, blackboard, metrics, stats) {
                (_, _, true, _) => Shown::Metrics,
                (_, _, _, true) => Shown::Stats,
                (_, true, _, _) => Shown::Blackboard,
                (true, ..) => Shown::Transcript,
                _ => Shown::Default,
            };
            commands::read::show(&app, id, what, json).await
        }
        Command::Compare { ids } => commands::read::compare(&app, ids, json).await,
        Command::Report {
            id,
            debate,
            config,
            output,
        } => commands::read::report(&app, id, debate, config, output, verbose, json).await,
        Command::Export { id } => commands::read::export(&store, id).await,
        Command::Delete { ids, dry_run } => commands::upkeep::delete(&app, ids, dry_run).await,
        Command::Compact => commands::upkeep::compact(&app).await,
        Command::Prune {
            older_than,
            status,
            dry_run,
        } => {
            let statuses = status.into_iter().map(Into::into).collect();
            commands::upkeep::prune(&app, older_than, statuses, dry_run).await
        }
        Command::Feedback { id, rating } => commands::steer::feedback(&app, id, rating).await,
        Command::Recall {
            query,
            persona,
            debate,
            k,
            embedder,
        } => {
            memory::recall(
                &url,
                &query,
                &persona,
                debate.as_deref(),
                k,
                &embedder,
                json,
            )
            .await
        }
        Command::Memory(MemoryCommand::Reindex { embedder }) => {
            memory::reindex(&url, &embedder).await
        }
        Command::Corpus(command) => corpus::run(&url, command, json).await,
        Command::Eval(args) => eval::run(&store, &args, verbose).await,
        Command::Agents { command: None } => agents::list(store, json).await,
        Command::Agents {
            command: Some(command),
        } => agents::run(store, command, json).await,
        Command::Override {
            id,
            file,
            agent,
            criterion,
            drop_criterion,
        } => {
            let (criterion, drop_criterion) = (criterion.as_deref(), drop_criterion.as_deref());
            agents::override_output(
                &app,
                &id,
                &file,
                agent.as_deref(),
                criterion,
                drop_criterion,
            )
            .await
        }
        Command::Rubric(command) => rubric::run(&app, command, json).await,
        Command::Trust(agents::TrustCommand::Check) => agents::check(store).await,
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    if cli.env_file.is_none() {
        let _ = dotenvy::dotenv();
    }
    // Kept to the end: dropping it flushes the spans still queued.
    let _telemetry = telemetry::init_logging(cli.verbose, cli.otlp.clone(), cli.otlp_content);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(main_inner(cli)) {
        Ok(code) => code,
        Err(Failure { code, error }) => {
            eprintln!("error: {}", error_text(&error));
            ExitCode::from(code)
        }
    }
}
