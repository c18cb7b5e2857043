//! A worker: runs queued debates one step per job.
//!
//! A job loads the debate's log, runs the step the protocol plans next
//! (and the background work it starts: the analyses of its messages), and
//! queues the debate's next job before it completes. Since everything a
//! step did is in the log, the job is idempotent: a retried or duplicated
//! job plans again and runs what is left, never a step twice.

use std::time::Duration;
use tracing::Instrument as _;

use agon_app::App;
use agon_core::DebateId;
use agon_orchestrator::{RunControl, RunOutcome, RunRequest};
use agon_store::StoreError;
use graphile_worker::{
    IntoTaskHandlerResult, JobComplete, JobCompleteContext, TaskHandler, WorkerContext,
    WorkerOptions,
};

use crate::error::WorkerError;
use crate::job::{AdvanceDebate, SCHEMA, TASK};

/// How a worker runs.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerSettings {
    /// Debates advanced at once by this worker (default 4).
    pub concurrency: usize,
    /// Critical-path steps per job (default 1: the unit of work is one
    /// step, so debates interleave fairly and a lost job loses one step).
    pub steps_per_job: u32,
    /// The run lease a job holds on its debate (default 20 s, renewed
    /// while the step runs).
    pub lease_ttl: Duration,
    /// How often the worker tells the queue it is alive (default 5 s).
    pub heartbeat: Duration,
    /// After how long without a heartbeat a worker counts as dead and its
    /// jobs are given to others (default 30 s).
    pub dead_after: Duration,
    /// How often an idle job slot looks at the queue besides its
    /// notifications (default 200 ms; one indexed query per look).
    pub poll_interval: Duration,
    /// How long a stopping worker lets the steps in flight finish (default
    /// 120 s); a step cut off then is given back to the queue at once and
    /// run again from its start.
    pub grace: Duration,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        Self {
            concurrency: 4,
            steps_per_job: 1,
            lease_ttl: Duration::from_secs(20),
            heartbeat: Duration::from_secs(5),
            dead_after: Duration::from_secs(30),
            poll_interval: Duration::from_millis(200),
            grace: Duration::from_secs(120),
        }
    }
}

/// The worker's state, shared by its jobs.
#[derive(Clone, Debug)]
struct WorkerState {
    /// The application: the store, the runtime debates run with.
    app: App,
    /// Where the debate's next job goes (the store's database).
    queue: crate::JobQueue,
    settings: WorkerSettings,
}

/// A job's failure, as graphile_worker records it in `last_error`.
struct JobFailure(String);

impl std::fmt::Debug for JobFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl TaskHandler for AdvanceDebate {
    const IDENTIFIER: &'static str = TASK;

    async fn run(self, ctx: WorkerContext) -> impl IntoTaskHandlerResult {
        let Some(state) = ctx.get_ext::<WorkerState>() else {
            return Err(JobFailure("the worker has no debate runtime".into()));
        };
        state
            .advance(
                &DebateId::new(self.debate),
                self.resume,
                *ctx.job().id(),
                ctx.worker_id(),
            )
            .await
            .map_err(JobFailure)
    }
}

impl WorkerState {
    /// Runs `id`'s next step and queues the one after it.
    async fn advance(
        &self,
        id: &DebateId,
        resume: bool,
        job: i64,
        worker: &str,
    ) -> Result<(), String> {
        let record = match self.app.store().debate(id).await {
            Ok(record) => record,
            Err(StoreError::DebateNotFound { .. }) => {
                tracing::warn!(debate = %id, "a queued debate is not in the store (deleted?); its job is dropped");
                return Ok(());
            }
            Err(e) => return Err(format!("debate {id}: {e}")),
        };
        if record.status.is_done() {
            return Ok(());
        }
        let config = self
            .app
            .orchestrator()
            .config_of(id)
            .await
            .map_err(|e| format!("debate {id}: {e}"))?;
        // Equipped by the one runtime, its clarifying questions answered
        // through the store (the API, the page, `agon answer`).
        let (orch, models) = self
            .app
            .prepare(id, &config)
            .await
            .map_err(|e| e.to_string())?;
        let orch = orch.with_lease_ttl(self.settings.lease_ttl);
        let control = RunControl::with_step_limit(self.settings.steps_per_job);
        if resume {
            // `agon resume --detach`: a request the run records before its
            // step (a debate that was not paused records nothing).
            let request = RunRequest::Resume { by: None }.to_json();
            if let Err(e) = self.app.store().post_request(id, &request).await {
                tracing::warn!(debate = %id, error = %e, "the resume was not recorded");
            }
        }
        let outcome = orch
            .run(id, &models, control.clone())
            .instrument(self.app.runtime().run_span(id))
            .await
            .map_err(|e| format!("debate {id} (worker {worker}): {e}"))?;
        match outcome {
            RunOutcome::Finished => {
                tracing::info!(debate = %id, worker, "debate finished");
                return Ok(());
            }
            RunOutcome::Paused => {
                tracing::info!(debate = %id, "debate paused; a resume (API, page, `agon resume`) queues it again");
                return Ok(());
            }
            // A stop request (API, page, `agon stop`): no next job.
            RunOutcome::Stopped => {
                tracing::info!(debate = %id, "debate stopped on request; a resume queues it again");
                return Ok(());
            }
            RunOutcome::SliceDone => {}
        }
        // The status and the next job commit together. The step's own
        // events were appended before: should this worker die in between,
        // this job is not complete, so it is run again (after
        // `dead_after`) and finds the step done in the log. The same holds
        // when this worker was only taken for dead (its heartbeats late):
        // the job was given back to the queue, so nothing is queued beside
        // it, and this run ends as a failure, which leaves the job to the
        // worker that runs it now (a failure is recorded only by the job's
        // holder).
        let queued = self
            .queue
            .queue_next(id, job, worker)
            .await
            .map_err(|e| format!("debate {id}: queuing its next step: {e}"))?;
        if !queued {
            tracing::warn!(debate = %id, worker, "this worker was taken for dead and its job given back; the job continues the debate");
            return Err(format!(
                "debate {id}: job {job} was given back to the queue while this worker ran it                  (no heartbeat for the dead-after time); it runs again from the log"
            ));
        }
        Ok(())
    }
}

/// Runs a worker on `queue` ([`crate::JobQueue::connect`] installed its
/// schema) until `shutdown` resolves (or SIGINT / SIGTERM): jobs in flight
/// finish their step first, within [`WorkerSettings::grace`].
pub async fn run_worker(
    queue: &crate::JobQueue,
    app: App,
    settings: WorkerSettings,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), WorkerError> {
    // The worker's own pool, to the queue's database: its job slots and
    // their notifications.
    let connections = u32::try_from(settings.concurrency.saturating_mul(2) + 4).unwrap_or(64);
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(connections)
        .connect_lazy_with((*queue.pool().connect_options()).clone());
    // A debate's next job is added while its queue is still locked by the
    // job adding it, so the insert's notification finds nothing to run;
    // once the job is complete (its queue unlocked) the workers are woken
    // again, rather than at their next poll.
    let waker = queue.pool().clone();
    let wake_on_complete = move |ctx: JobCompleteContext| {
        let pool = waker.clone();
        async move {
            if ctx.job.task_identifier() == TASK {
                let woken = sqlx::query("SELECT pg_notify('jobs:insert', '')")
                    .execute(&pool)
                    .await;
                if let Err(e) = woken {
                    tracing::debug!(error = %e, "waking the workers failed; they poll");
                }
            }
        }
    };
    let worker = WorkerOptions::default()
        .pg_pool(pool)
        .schema(SCHEMA)
        .concurrency(settings.concurrency.max(1))
        .poll_interval(settings.poll_interval)
        .define_job::<AdvanceDebate>()
        .on(JobComplete, wake_on_complete)
        .add_extension(WorkerState {
            app,
            queue: queue.clone(),
            settings: settings.clone(),
        })
        .heartbeat_interval(settings.heartbeat)
        .sweep_interval(settings.heartbeat)
        .sweep_threshold(settings.dead_after)
        .recovery_delay(Duration::ZERO)
        .shutdown_signal(shutdown)
        .shutdown_grace_period(settings.grace)
        .shutdown_interrupted_job_retry_delay(Duration::ZERO)
        .init()
        .await
        .map_err(|e| WorkerError::queue("starting the worker", e))?;
    queue
        .register_worker(worker.worker_id(), &agon_orchestrator::this_process())
        .await?;
    tracing::info!(worker = %worker.worker_id(), "worker started");
    worker
        .run()
        .await
        .map_err(|e| WorkerError::queue("running the worker", e))
}
