//! Steering any debate, wherever it runs: a note, a pause, a resume or a
//! stop is recorded in the store; the process holding the run's lease
//! takes it before its next step.

use agon_core::DebateId;
use agon_protocol::RunRequest;
use agon_protocol::Steer;
use agon_store::DebateRecord;
use serde::Serialize;

use crate::{App, AppError};

/// Where a debate runs now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "where", rename_all = "snake_case")]
pub enum RunsWhere {
    /// In this process.
    Here,
    /// In another process, which holds its run lease.
    Elsewhere {
        /// The lease holder (`host:pid`).
        holder: String,
    },
    /// In the job queue: the next worker to take it runs its next step.
    Queued,
    /// Nowhere: a request waits for the next run.
    Idle,
}

/// A request recorded for a debate's run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Posted {
    /// The debate.
    pub debate: DebateId,
    /// The request's id in the store.
    pub request: u64,
    /// Where the debate runs, so who takes the request.
    pub runs: RunsWhere,
}

/// What a resume did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resumed {
    /// The run that holds the debate takes the resume (here, in another
    /// process, or the next worker).
    Running,
    /// Nothing ran it: its next step was queued for the workers.
    Queued,
    /// Nothing ran it: it runs in this process now.
    Started,
    /// Nothing runs it and this caller runs it itself (the CLI's `agon
    /// resume`): the resume waits in the store for that run.
    Idle,
}

impl App {
    /// Where `id` runs now.
    pub async fn runs_where(&self, id: &DebateId) -> Result<RunsWhere, AppError> {
        let record = self.store().debate(id).await?;
        self.runs_where_of(&record).await
    }

    async fn runs_where_of(&self, record: &DebateRecord) -> Result<RunsWhere, AppError> {
        if self.runs_here(&record.id) {
            return Ok(RunsWhere::Here);
        }
        if let Some(lease) = self.store().lease(&record.id).await?
            && lease.expires_at > chrono::Utc::now()
            && !agon_orchestrator::holder_is_dead(&lease.holder)
        {
            return Ok(RunsWhere::Elsewhere {
                holder: lease.holder,
            });
        }
        if record.status == agon_store::RunStatus::Queued {
            return Ok(RunsWhere::Queued);
        }
        Ok(RunsWhere::Idle)
    }

    /// Records `request` for `id`'s run (refused for a finished debate),
    /// and wakes the run if it is in this process.
    pub(crate) async fn post(
        &self,
        id: &DebateId,
        request: RunRequest,
    ) -> Result<Posted, AppError> {
        let (_, runs) = self.unfinished(id).await?;
        self.record(id, runs, request).await
    }

    /// `id`'s record and where it runs; refused when it is finished.
    async fn unfinished(&self, id: &DebateId) -> Result<(DebateRecord, RunsWhere), AppError> {
        let record = self.store().debate(id).await?;
        if record.status.is_done() {
            return Err(AppError::conflict(id, "it is not running: it is finished"));
        }
        let runs = self.runs_where_of(&record).await?;
        Ok((record, runs))
    }

    /// Records `request` for the run of `id` that `runs`.
    async fn record(
        &self,
        id: &DebateId,
        runs: RunsWhere,
        request: RunRequest,
    ) -> Result<Posted, AppError> {
        let request = self.store().post_request(id, &request.to_json()).await?;
        if let Some(control) = self.inner.runs.control(id) {
            control.steering.wake();
        }
        Ok(Posted {
            debate: id.clone(),
            request,
            runs,
        })
    }

    /// Checks a steering request and records it.
    async fn steer(&self, id: &DebateId, steer: Steer) -> Result<Posted, AppError> {
        self.post(id, checked(id, steer)?).await
    }

    /// A moderator's note every agent's next context shows. A debate that
    /// runs nowhere now takes it when it runs again.
    pub async fn note(
        &self,
        id: &DebateId,
        text: impl Into<String>,
        author: Option<String>,
    ) -> Result<Posted, AppError> {
        let text = text.into();
        self.steer(id, Steer::Note { text, author }).await
    }

    /// Holds the debate before its next critical-path step, until resumed.
    /// A worker-run debate that is paused runs no job until then.
    pub async fn pause(&self, id: &DebateId, by: Option<String>) -> Result<Posted, AppError> {
        self.steer(id, Steer::Pause { by }).await
    }

    /// Lifts a pause. A debate that runs nowhere is run again: queued for
    /// the workers if they ran it, in this process when `start_here`,
    /// otherwise left to the caller ([`Resumed::Idle`]).
    pub async fn resume(
        &self,
        id: &DebateId,
        by: Option<String>,
        start_here: bool,
    ) -> Result<Resumed, AppError> {
        let request = checked(id, Steer::Resume { by })?;
        let (record, runs) = self.unfinished(id).await?;
        let posted = self.record(id, runs, request).await?;
        if posted.runs != RunsWhere::Idle {
            return Ok(Resumed::Running);
        }
        if record.on_workers {
            let Some(queue) = &self.inner.queue else {
                return Err(AppError::Unavailable(format!(
                    "debate `{id}` runs on the workers, and this process has no job queue \
                     (a PostgreSQL store where `agon worker` ran): `agon resume {id} --detach` queues it"
                )));
            };
            queue
                .submit(id)
                .await
                .map_err(|e| AppError::Unavailable(format!("debate `{id}`: queuing it: {e}")))?;
            return Ok(Resumed::Queued);
        }
        if start_here {
            self.spawn(id).await?;
            return Ok(Resumed::Started);
        }
        Ok(Resumed::Idle)
    }

    /// Asks the run of `id` to stop after its current step (resumable).
    /// Refused when nothing runs it.
    pub async fn stop(&self, id: &DebateId, by: Option<String>) -> Result<Posted, AppError> {
        let (_, runs) = self.unfinished(id).await?;
        if runs == RunsWhere::Idle {
            return Err(AppError::conflict(id, "it is not running"));
        }
        let posted = self.record(id, runs, RunRequest::Stop { by }).await?;
        if let Some(control) = self.inner.runs.control(id) {
            // Here: stopped at once, and the request is done.
            control.stop.cancel();
            self.store().take_requests(id, &[posted.request]).await?;
        }
        Ok(posted)
    }
}

/// A steering request checked (trimmed; an empty or over-long note, a bad
/// name refused, naming the debate) as the request the store records.
fn checked(id: &DebateId, steer: Steer) -> Result<RunRequest, AppError> {
    steer
        .checked()
        .map(RunRequest::from_steer)
        .map_err(|e| AppError::invalid(id, e.to_string()))
}
