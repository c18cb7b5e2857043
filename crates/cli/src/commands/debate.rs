//! `agon debate` and `agon resume`: run a debate in this terminal, live.

use std::process::ExitCode;
use std::sync::Arc;

use agon_app::{App, Resumed};
use agon_config::{DebateConfig, ProtocolKind};
use agon_core::DebateId;
use agon_orchestrator::{RunControl, RunOutcome};
use agon_view::ReportOptions;

use crate::args::{DebateArgs, ViewArgs};
use crate::dialectic::invoked_as_dialectic;
use crate::failure::Failure;
use crate::view::first_line;
use crate::{dialectic, live, queue};

/// `agon debate`: creates the debate and runs it here (or, with
/// `--detach`, queues it for the workers).
pub(crate) async fn start(
    app: &App,
    url: &str,
    args: DebateArgs,
    verbose: bool,
) -> Result<ExitCode, Failure> {
    let config = args.flags.config(invoked_as_dialectic())?;
    if args.detach {
        let queue = agon_worker::JobQueue::connect(url).await?;
        let id = app
            .clone()
            .with_queue(Arc::new(queue))
            .submit(&config)
            .await?;
        queue::detached(&id, &config.topic);
        return Ok(ExitCode::SUCCESS);
    }
    let id = app.orchestrator().create(&config).await?;
    eprintln!("Debate {id}: {}", first_line(&config.topic));
    // Ctrl-C is handled from here on, while models load too.
    let control = RunControl::default();
    let interrupts = live::watch_ctrl_c(control.clone());
    run(app, &id, &config, &args.view, verbose, control, interrupts).await
}

/// `agon resume`: continues an interrupted debate here; a debate another
/// process runs gets the resume as a request; `--detach` queues it.
pub(crate) async fn resume(
    app: &App,
    url: &str,
    id: String,
    force: bool,
    detach: bool,
    view: ViewArgs,
    verbose: bool,
) -> Result<ExitCode, Failure> {
    let id = DebateId::new(id);
    let orch = app.orchestrator();
    let config = orch.config_of(&id).await?;
    if detach {
        let queue = agon_worker::JobQueue::connect(url).await?;
        queue.resume(&id).await?;
        eprintln!("Queued debate {id}: {}", first_line(&config.topic));
        return Ok(ExitCode::SUCCESS);
    }
    if force && let Some(taken) = orch.take_over_lease(&id).await? {
        eprintln!(
            "warning: debate {id}: took the run lease over from `{}` (held since {}, \
             until {}); if that runner is alive, it stops at its next lease renewal \
             (within {} s)",
            taken.holder,
            taken.acquired_at.format("%Y-%m-%d %H:%M:%S UTC"),
            taken.expires_at.format("%H:%M:%S UTC"),
            orch.lease_ttl().as_secs().div_ceil(3).max(1)
        );
    }
    // The resume is a request in the store: it lifts a pause the debate
    // is in, whoever runs it (a resume of a debate that was not paused
    // records nothing).
    let paused = app.store().load(&id).await?.0.is_paused();
    let resumed = match app.resume(&id, None, false).await {
        Ok(resumed) => resumed,
        // Finished: running it here says so and prints the outcome.
        Err(agon_app::AppError::Conflict { .. }) => Resumed::Idle,
        Err(e) => return Err(e.into()),
    };
    match resumed {
        Resumed::Running if !force => {
            // Another process runs it: that run takes the resume before
            // its next step; this one does not run it too.
            if let Some(lease) = app.store().lease(&id).await? {
                if paused {
                    eprintln!(
                        "Resumed debate {id}: its run in `{}` goes on before its next step.",
                        lease.holder
                    );
                    return Ok(ExitCode::SUCCESS);
                }
                return Err(agon_store::StoreError::Leased {
                    debate: id.to_string(),
                    holder: lease.holder,
                    since: lease.acquired_at,
                    until: lease.expires_at,
                }
                .into());
            }
            eprintln!("Debate {id} waits for a worker, which takes the resume.");
            return Ok(ExitCode::SUCCESS);
        }
        Resumed::Queued => {
            eprintln!(
                "Queued debate {id} for the workers: {}",
                first_line(&config.topic)
            );
            return Ok(ExitCode::SUCCESS);
        }
        Resumed::Running | Resumed::Started | Resumed::Idle => {}
    }
    eprintln!("Resuming debate {id}: {}", first_line(&config.topic));
    let control = RunControl::default();
    let interrupts = live::watch_ctrl_c(control.clone());
    run(app, &id, &config, &view, verbose, control, interrupts).await
}

/// Runs `id` here with a live view, then writes its outputs.
async fn run(
    app: &App,
    id: &DebateId,
    config: &DebateConfig,
    view: &ViewArgs,
    verbose: bool,
    control: RunControl,
    interrupts: tokio::task::JoinHandle<()>,
) -> Result<ExitCode, Failure> {
    let dialectic = config.protocol == ProtocolKind::Dialectic;
    let bars = indicatif::MultiProgress::new();
    let orch = app.runtime().equip(app.orchestrator(), config).await;
    let orch = orch.with_answerer(dialectic::answerer(view.answers.as_deref(), &bars)?);
    let models = app.runtime().models(config).await.map_err(|e| Failure {
        code: 4,
        error: anyhow::anyhow!("{e}"),
    })?;
    let (board, _) = orch.store().load(id).await?;
    let display = live::spawn(orch.subscribe(), &board, view.quiet, verbose, bars);
    // Every run of one debate (the first and each resume) is in the same
    // trace: the run's span hangs under one derived from the debate id.
    let baseline = models.ledger().snapshot();
    let started = std::time::Instant::now();
    let outcome = {
        use tracing::Instrument as _;
        orch.run(id, &models, control)
            .instrument(app.runtime().run_span(id))
            .await
    };
    let wall = started.elapsed();
    interrupts.abort();
    display.finish().await;
    eprintln!(
        "\n{}",
        crate::profile::time_profile(wall, &models.ledger().since(&baseline))
    );
    match outcome? {
        RunOutcome::Finished => {
            let options = ReportOptions {
                verbose,
                reflection_threshold: Some(config.reflection_threshold),
            };
            let debate = app.report_view(id, options).await?;
            let outputs = dialectic::Outputs {
                output: view.output.clone(),
                report: view.report.clone(),
            };
            outputs.write(&debate, dialectic)?;
            eprintln!("\nDebate {id} finished. Read it with: agon report {id}");
            Ok(ExitCode::SUCCESS)
        }
        RunOutcome::Stopped | RunOutcome::Paused | RunOutcome::SliceDone => {
            eprintln!("\nDebate {id} stopped; continue it with: agon resume {id}");
            Ok(ExitCode::from(130))
        }
    }
}
