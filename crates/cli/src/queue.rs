//! The scale-out commands: `agon worker`, `agon submit`, `agon debate
//! --detach`, and the queue's column of `agon list` (agon-worker, on a
//! PostgreSQL store).

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use agon_core::DebateId;
use agon_store::EventStore;
use agon_worker::{JobQueue, NamedRateLimit, PgRateGate, QueuedJob, WorkerSettings};
use clap::Args;

use crate::debate_args::{DebateFlags, ProtocolArg};
use crate::failure::Failure;

/// `agon worker`'s flags.
#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    /// Debates this worker advances at once.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Critical-path steps a job runs before it queues the debate again
    /// (1: one step per job, the fairest interleaving).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    steps_per_job: u32,
    /// A provider rate limit every worker shares (repeatable):
    /// `PROVIDER=RATE[,RATE]`, a rate being N/s, N/min, Ntok/s or Ntok/min
    /// (`openai=500/min,200000tok/min`; a provider key
    /// `openai-compatible@http://host/v1=5/s` limits one endpoint).
    #[arg(long = "rate-limit", value_name = "PROVIDER=RATE")]
    rate_limits: Vec<String>,
    /// How often, in milliseconds, an idle worker looks at the queue
    /// besides the notifications it gets (each look is one indexed query).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    poll_ms: u64,
    /// Seconds a stopping worker (Ctrl-C, SIGTERM) gives the steps in
    /// flight to finish; a step cut off then goes back to the queue.
    #[arg(long, default_value_t = 120)]
    grace_secs: u64,
    /// Seconds without a heartbeat after which a worker counts as dead and
    /// its jobs go to the others.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(2..))]
    dead_after: u64,
    /// Seconds a debate's clarifying questions wait for answers (the API,
    /// the page, `agon answer`) before they are answered "NA".
    #[arg(long, default_value_t = 600)]
    answer_wait_secs: u64,
}

/// `agon submit`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct SubmitArgs {
    /// Configuration files (TOML, or dialectic's debate-config.json) or
    /// topics: an input that names a file is read as a configuration.
    #[arg(required = true, num_args = 1..)]
    inputs: Vec<String>,
    /// The protocol (default: each configuration's, else structured).
    #[arg(long, value_enum)]
    protocol: Option<ProtocolArg>,
    /// Model spec for every role.
    #[arg(long)]
    model: Option<String>,
    /// Queue each input this many times (sweeps: the same question, many runs).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    repeat: u32,
}

/// Runs a worker until Ctrl-C or SIGTERM.
pub(crate) async fn worker(
    store: Arc<dyn EventStore>,
    url: &str,
    args: WorkerArgs,
) -> Result<ExitCode, Failure> {
    let queue = JobQueue::connect(url).await?;
    let limits = args
        .rate_limits
        .iter()
        .map(|s| s.parse::<NamedRateLimit>())
        .collect::<Result<Vec<_>, _>>()?;
    let gate = PgRateGate::open(queue.pool().clone())
        .await
        .map_err(|e| Failure {
            code: 5,
            error: anyhow::Error::from(e).context("creating the shared rate-limit table"),
        })?;
    for limit in &limits {
        gate.configure(limit).await.map_err(|e| Failure {
            code: 5,
            error: anyhow::Error::from(e)
                .context(format!("setting the rate limit of {}", limit.name)),
        })?;
    }
    let settings = WorkerSettings {
        concurrency: args.concurrency.max(1),
        steps_per_job: args.steps_per_job,
        dead_after: std::time::Duration::from_secs(args.dead_after),
        heartbeat: std::time::Duration::from_secs((args.dead_after / 4).max(1)),
        poll_interval: std::time::Duration::from_millis(args.poll_ms),
        grace: std::time::Duration::from_secs(args.grace_secs),
        ..WorkerSettings::default()
    };
    eprintln!(
        "Worker on {} ({} at once); stop it with Ctrl-C (steps in flight finish first)",
        store.url(),
        settings.concurrency
    );
    // Every HTTP model behind the shared rate limits.
    let runtime = Arc::new(crate::runtime::CliRuntime::new(
        url,
        crate::runtime::model_factory().with_rate_gate(Arc::new(gate)),
    ));
    let app = agon_app::App::new(store, runtime)
        .with_queue(Arc::new(queue.clone()))
        .with_answer_wait(std::time::Duration::from_secs(args.answer_wait_secs));
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    agon_worker::run_worker(&queue, app, settings, shutdown).await?;
    Ok(ExitCode::SUCCESS)
}

/// Says a debate was queued: its id on standard output, where to follow
/// it on standard error.
pub(crate) fn detached(id: &DebateId, topic: &str) {
    println!("{id}");
    eprintln!(
        "Queued debate {id}: {}  (watch: agon list; read: agon report {id})",
        crate::view::first_line(topic)
    );
}

/// `agon submit`: creates and queues a debate per input (and repeat).
pub(crate) async fn submit(
    app: &agon_app::App,
    url: &str,
    args: SubmitArgs,
    dialectic_by_default: bool,
) -> Result<ExitCode, Failure> {
    let app = app
        .clone()
        .with_queue(Arc::new(JobQueue::connect(url).await?));
    // Every configuration is read and checked before anything is queued.
    let mut configs = Vec::with_capacity(args.inputs.len());
    for input in &args.inputs {
        let mut flags = DebateFlags {
            protocol: args.protocol,
            model: args.model.clone(),
            ..DebateFlags::default()
        };
        if Path::new(input).is_file() {
            flags.config = Some(input.into());
        } else {
            flags.topic = Some(input.clone());
        }
        configs.push(flags.config(dialectic_by_default)?);
    }
    for config in &configs {
        for _ in 0..args.repeat {
            let id = app.submit(config).await?;
            detached(&id, &config.topic);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The queue's job of each debate (none when the store is not PostgreSQL
/// or no worker was ever set up there).
pub(crate) async fn jobs(url: &str) -> HashMap<DebateId, QueuedJob> {
    if !agon_worker::is_postgres(url) {
        return HashMap::new();
    }
    let Ok(Some(queue)) = JobQueue::open_existing(url).await else {
        return HashMap::new();
    };
    match queue.jobs().await {
        Ok(jobs) => jobs.into_iter().map(|j| (j.debate.clone(), j)).collect(),
        Err(e) => {
            eprintln!("warning: the job queue cannot be read: {e}");
            HashMap::new()
        }
    }
}

/// How `agon list` shows a debate's job: its state and worker.
pub(crate) fn job_state(job: &QueuedJob) -> (&'static str, String) {
    if let Some(worker) = &job.locked_by {
        return ("running", format!("on {worker}"));
    }
    if job.failed() {
        let error = job.last_error.as_deref().unwrap_or("");
        return (
            "failed",
            format!(
                "after {} tries: {}",
                job.attempts,
                crate::view::first_line(error)
            ),
        );
    }
    match &job.last_error {
        Some(error) if job.attempts > 0 => (
            "retrying",
            format!(
                "try {}/{} at {}: {}",
                job.attempts + 1,
                job.max_attempts,
                job.run_at.format("%H:%M:%S"),
                crate::view::first_line(error)
            ),
        ),
        _ => ("queued", String::new()),
    }
}
