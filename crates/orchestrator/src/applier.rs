//! The background pipeline: runs the protocol's background work off the
//! critical path and applies it strictly in the protocol's order.
//!
//! After every append the applier asks the protocol for its plan. Every
//! listed job not yet running is launched at once (its prompt is built
//! from the blackboard as it is, its model call spawned), so calls overlap
//! with utterances and with each other; only the **head** of the list is
//! ever applied, and the plan is asked again after each application, so
//! the log's background events come in the same order on every run and on
//! resume. A store failure stops the applier and is reported to the
//! interpreter.

use std::collections::HashMap;
use std::sync::Arc;

use agon_protocol::background_job::{self, JobAnswers, JobCall, JobRequest};
use agon_protocol::{BackgroundId, ModelFailure, ModelOutput};
use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::calls::RunCtx;
use crate::error::OrchestratorError;
use crate::shared::Shared;

/// A job's call as a future that owns what it needs (so it can be spawned).
fn call(ctx: &RunCtx, call: JobCall) -> impl Future<Output = ModelOutput> + Send + 'static {
    ctx.structured_call(None, call)
}

/// Spawns the calls of a job: its primary call and, when there is one,
/// the separate detector's call, side by side.
fn launch(ctx: &RunCtx, request: JobRequest) -> JoinHandle<JobAnswers> {
    let primary = call(ctx, request.primary);
    let detector = request.detector.map(|d| call(ctx, d));
    tokio::spawn(async move {
        match detector {
            Some(detector) => {
                let (primary, detector) = futures::join!(primary, detector);
                JobAnswers {
                    primary,
                    detector: Some(detector),
                }
            }
            None => JobAnswers {
                primary: primary.await,
                detector: None,
            },
        }
    })
}

/// The answers of a job whose task died (panicked or was cancelled) or
/// that had nothing to ask: a failure of its step.
fn lost(reason: String) -> JobAnswers {
    JobAnswers {
        primary: Err(ModelFailure::other(reason)),
        detector: None,
    }
}

/// Runs the pipeline until the run ends (the task is aborted) or the store
/// fails (recorded in `shared`).
pub(crate) async fn run(shared: Arc<Shared>, ctx: Arc<RunCtx>) {
    if let Err(e) = pipeline(&shared, &ctx).await {
        shared.failed(e.to_string());
    }
}

async fn pipeline(shared: &Shared, ctx: &RunCtx) -> Result<(), OrchestratorError> {
    let mut changed = shared.subscribe();
    let mut running: HashMap<BackgroundId, JoinHandle<JobAnswers>> = HashMap::new();
    loop {
        // Plan, and launch whatever is listed and not running yet.
        let head = shared
            .read(|bb| {
                let plan = ctx.protocol.next(bb);
                for job in &plan.background {
                    let id = job.id();
                    if !running.contains_key(&id)
                        && let Some(request) = background_job::request(bb, job)
                    {
                        running.insert(id, launch(ctx, request));
                    }
                }
                plan.background.into_iter().next()
            })
            .await;
        let Some(head) = head else {
            if changed.changed().await.is_err() {
                return Ok(());
            }
            continue;
        };
        let id = head.id();
        let output = match running.get_mut(&id) {
            Some(handle) => {
                tokio::select! {
                    joined = handle => {
                        running.remove(&id);
                        joined.unwrap_or_else(|e| lost(format!("task failed: {e}")))
                    }
                    seen = changed.changed() => {
                        if seen.is_err() {
                            return Ok(());
                        }
                        continue;
                    }
                }
            }
            // Nothing to ask the model: the job resolves as a failure of
            // its step.
            None => lost(background_job::nothing_to_ask(&head).into()),
        };
        let span = tracing::debug_span!("background", debate = %shared.debate, job = ?id);
        shared
            .append_with(|bb| {
                // A job whose debate reached its budget or finished while
                // the call ran is dropped: its events would land where the
                // protocol wants none.
                if agon_protocol::background_over(bb) {
                    tracing::debug!(job = ?id, "background result dropped: no longer planned");
                    return (Vec::new(), ());
                }
                (
                    background_job::convert(bb, &head, output, chrono::Utc::now()),
                    (),
                )
            })
            .instrument(span)
            .await?;
    }
}
