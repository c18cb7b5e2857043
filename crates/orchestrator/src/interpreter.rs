//! The interpreter: asks the protocol for the next step and executes it,
//! until the debate finishes or a stop is requested. It owns the I/O of
//! every step (context assembly, model calls, appends) and no rule of any
//! protocol: what comes next is always the protocol's answer for the
//! blackboard as it stands, so a resumed run simply asks again.

use std::sync::Arc;

use agon_core::{DebateEvent, StepId};
use agon_protocol::background_job::JobCall;
use agon_protocol::{
    Answer, AnswerForm, Answers, Ask, ConvertError, Deadline, Finish, Next, Progress, Request,
    Speak, Step, TrustRead,
};
use tracing::Instrument;

use crate::calls::RunCtx;
use crate::control::{RunControl, RunOutcome};
use crate::error::OrchestratorError;
use crate::shared::Shared;
use crate::speak::{Speaker, Spoken};
use crate::update::DebateUpdate;
use agon_protocol::RunRequest;

/// Whether the run goes on after a step.
enum Flow {
    Continue,
    Stopped,
}

impl Flow {
    /// The flow after a turn: an aborted turn stops the run.
    fn after(spoken: Spoken) -> Self {
        match spoken {
            Spoken::Aborted => Self::Stopped,
            Spoken::Message | Spoken::Skipped => Self::Continue,
        }
    }
}

/// Whether a call of a question was refused because the budget is spent.
fn refused_by_budget(answer: &Answer) -> bool {
    let failure = match answer {
        Answer::Json(Err(failure)) | Answer::Text(Err(failure)) => failure,
        _ => return false,
    };
    failure.kind == agon_protocol::FailureKind::Budget
}

/// The foreground of one run.
pub(crate) struct Interpreter {
    pub(crate) shared: Arc<Shared>,
    pub(crate) ctx: Arc<RunCtx>,
    pub(crate) control: RunControl,
    /// The deadline clock being timed and when this run first saw it.
    pub(crate) round_clock: std::sync::Mutex<Option<(u32, tokio::time::Instant)>>,
    /// When this run started: a stop request posted before it was meant
    /// for an earlier run.
    pub(crate) started: chrono::DateTime<chrono::Utc>,
}

impl Interpreter {
    fn stop_requested(&self) -> bool {
        self.control.stop.is_cancelled() || self.control.abort.is_cancelled()
    }

    fn debate(&self) -> String {
        self.shared.debate.to_string()
    }

    /// Runs steps until the protocol says the debate is finished or a stop
    /// is requested.
    pub(crate) async fn drive(&self) -> Result<RunOutcome, OrchestratorError> {
        let mut changed = self.shared.subscribe();
        let mut shown: Option<Progress> = None;
        let mut memory_noted = false;
        let mut steps_left = self.control.step_limit;
        loop {
            self.shared.check()?;
            self.record_steering().await?;
            self.check_budget(shown.as_ref()).await?;
            let (next, progress, pending, started) = self
                .shared
                .read(|bb| {
                    let plan = self.ctx.protocol.next(bb);
                    (
                        plan.next,
                        plan.progress,
                        plan.background.len(),
                        bb.topic().is_some(),
                    )
                })
                .await;
            if started && !memory_noted {
                memory_noted = true;
                self.note_memory_unavailable().await?;
            }
            if shown.as_ref() != Some(&progress) {
                self.shared.send(DebateUpdate::Progress(progress.clone()));
                shown = Some(progress.clone());
            }
            match next {
                Next::Finished => return Ok(RunOutcome::Finished),
                // A run in slices (a worker's job) does not hold its slot
                // while the debate is paused: it stops, and is queued again
                // when the debate is resumed.
                Next::Paused if steps_left.is_some() => return Ok(RunOutcome::Paused),
                Next::Wait | Next::Paused => {
                    let paused = matches!(next, Next::Paused);
                    if !paused && pending == 0 {
                        return Err(OrchestratorError::Stalled {
                            debate: self.debate(),
                            phase: progress.phase,
                        });
                    }
                    // Until background work lands, a request is posted (a
                    // resume ends a pause), or a stop.
                    let since = tokio::time::Instant::now();
                    tokio::select! {
                        _ = changed.changed() => {}
                        () = self.control.steering.posted() => {}
                        // Requests other processes posted to the store.
                        () = tokio::time::sleep(crate::control::REQUEST_POLL) => {}
                        () = self.control.stop.cancelled() => return Ok(RunOutcome::Stopped),
                        () = self.control.abort.cancelled() => return Ok(RunOutcome::Stopped),
                    }
                    if paused {
                        // A pause does not count against a round's deadline.
                        self.extend_deadline(since.elapsed());
                    }
                }
                Next::Step(step) => {
                    if step.is_stoppable() && self.stop_requested() {
                        return Ok(RunOutcome::Stopped);
                    }
                    if step.is_stoppable() && steps_left == Some(0) {
                        return Ok(RunOutcome::SliceDone);
                    }
                    if let Some(left) = steps_left.as_mut() {
                        *left = left.saturating_sub(1);
                    }
                    if let Flow::Stopped = self.execute(*step).await? {
                        return Ok(RunOutcome::Stopped);
                    }
                }
            }
        }
    }

    /// Waits until every background job listed by the protocol is applied
    /// (after a stop: nothing derived from a persisted message is lost).
    pub(crate) async fn drain(&self) -> Result<(), OrchestratorError> {
        let mut changed = self.shared.subscribe();
        loop {
            self.shared.check()?;
            let pending = self
                .shared
                .read(|bb| self.ctx.protocol.next(bb).background.len())
                .await;
            if pending == 0 {
                return Ok(());
            }
            if changed.changed().await.is_err() {
                return self.shared.check();
            }
        }
    }

    /// Takes the requests posted to the store (by this process or any
    /// other) once the debate has started (requests posted before wait for
    /// its start): a note, pause or resume becomes its events, as the
    /// protocol turns it into events, in the transaction that marks it
    /// taken; a stop stops the run before its next step; answers are left
    /// for the question they answer. A request the debate can no longer
    /// take (it finished) is dropped with a log line; a store that cannot
    /// be read now is read again before the next step.
    async fn record_steering(&self) -> Result<(), OrchestratorError> {
        let started = self
            .shared
            .read(|bb| bb.status() != agon_core::DebateStatus::NotStarted)
            .await;
        if !started {
            return Ok(());
        }
        let posted = match self.shared.pending_requests().await {
            Ok(posted) => posted,
            Err(e) => {
                tracing::warn!(debate = %self.shared.debate, error = %e, "reading posted requests failed");
                return Ok(());
            }
        };
        for posted in posted {
            let request = match RunRequest::read(&posted.body, posted.debate.as_str(), posted.id) {
                Ok(request) => request,
                Err(e) => {
                    tracing::warn!(error = %e, "request dropped");
                    self.shared.take(&[posted.id]).await?;
                    continue;
                }
            };
            if matches!(request, RunRequest::Stop { .. }) {
                self.shared.take(&[posted.id]).await?;
                if posted.posted_at >= self.started {
                    self.control.stop.cancel();
                } else {
                    tracing::info!(debate = %self.shared.debate, request = posted.id, "a stop meant for an earlier run is dropped");
                }
                continue;
            }
            let Some(steer) = request.steer() else {
                continue;
            };
            let refused = self
                .shared
                .append_taking(&[posted.id], |bb| {
                    match steer
                        .checked()
                        .and_then(|s| s.events(bb, chrono::Utc::now()))
                    {
                        Ok(events) => (events, None),
                        Err(e) => (Vec::new(), Some(e)),
                    }
                })
                .await?;
            if let Some(e) = refused {
                tracing::warn!(debate = %self.shared.debate, request = posted.id, error = %e, "posted request dropped");
            }
        }
        Ok(())
    }

    /// Records the budget stop when the debate's spending (every earlier
    /// run's recorded usage, this run's ledger, the minutes since the
    /// start) reached a limit, short of its reserve; the protocol then
    /// wraps up. Checked before every step. Records too that a limit was
    /// spent in full when a call was refused ([`crate::guard`]); the
    /// protocol then finishes.
    async fn check_budget(&self, progress: Option<&Progress>) -> Result<(), OrchestratorError> {
        let budget = self.ctx.guard.budget();
        if !budget.is_set() {
            return Ok(());
        }
        let at = progress
            .map(Progress::describe)
            .filter(|line| !line.is_empty())
            .unwrap_or_else(|| "the start".to_owned());
        let now = chrono::Utc::now();
        if let Some(refusal) = self.ctx.guard.refusal() {
            return self.record_exhausted(refusal, at, now).await;
        }
        let spent = self.ctx.guard.spent();
        let reached = self
            .shared
            .append_with(|bb| {
                let running = bb.status() == agon_core::DebateStatus::Running;
                if bb.budget_stop().is_some() || !running {
                    return (Vec::new(), None);
                }
                let Some((kind, limit, used)) = budget.reached(spent) else {
                    return (Vec::new(), None);
                };
                let stop = agon_core::BudgetStop {
                    kind,
                    limit: kind.smallest(limit),
                    used: kind.smallest(used),
                    reserve_percent: (budget.reserve.clamp(0.0, 0.5) * 100.0).round() as u8,
                    at: at.clone(),
                    time: now,
                };
                let line = stop.describe();
                (vec![DebateEvent::BudgetReached { stop }], Some(line))
            })
            .await?;
        if let Some(line) = reached {
            tracing::warn!(debate = %self.shared.debate, "budget reached: {line}");
        }
        Ok(())
    }

    /// Records that a limit was spent in full: `refusal` is the first
    /// call the guard refused (once per debate; a finished one records
    /// nothing).
    async fn record_exhausted(
        &self,
        refusal: crate::guard::Refusal,
        at: String,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), OrchestratorError> {
        let line = self
            .shared
            .append_with(|bb| {
                let running = bb.status() == agon_core::DebateStatus::Running;
                if bb.budget_exhausted().is_some() || !running {
                    return (Vec::new(), None);
                }
                let stop = agon_core::BudgetStop {
                    kind: refusal.kind,
                    limit: refusal.kind.smallest(refusal.limit),
                    used: refusal.kind.smallest(refusal.used),
                    reserve_percent: 0,
                    at,
                    time: now,
                };
                let line = format!(
                    "{} (the call of {} was refused)",
                    stop.describe(),
                    refusal.step
                );
                (
                    vec![DebateEvent::BudgetExhausted {
                        refused: refusal.step,
                        stop,
                    }],
                    Some(line),
                )
            })
            .await?;
        if let Some(line) = line {
            tracing::warn!(debate = %self.shared.debate, "budget spent: {line}");
        }
        Ok(())
    }

    /// Records once per debate that memory could not be set up.
    async fn note_memory_unavailable(&self) -> Result<(), OrchestratorError> {
        let Some(reason) = &self.ctx.memory_unavailable else {
            return Ok(());
        };
        if self
            .shared
            .read(|bb| bb.step_failed(&StepId::MemorySetup))
            .await
        {
            return Ok(());
        }
        self.shared
            .append(vec![agon_protocol::step_failed(
                StepId::MemorySetup,
                format!("running without memory: {reason}"),
                chrono::Utc::now(),
            )])
            .await
    }

    /// Runs a step, and the steps its answers lead to (a crux card after
    /// a convergence, the person's answers after the agents' questions).
    async fn execute(&self, step: Step) -> Result<Flow, OrchestratorError> {
        let span = tracing::info_span!("step", debate = %self.shared.debate, step = step.label());
        async {
            let mut step = step;
            loop {
                let then = match step {
                    Step::Speak(speak) => return self.speak(&speak).await,
                    Step::Parallel { turns, deadline } => {
                        let deadline = deadline.and_then(|d| self.deadline(d));
                        return Ok(Flow::after(
                            self.speaker().speak_all(&turns, deadline).await?,
                        ));
                    }
                    Step::Record { events, .. } => {
                        self.shared.append(events).await?;
                        return Ok(Flow::Continue);
                    }
                    Step::Finish(finish) => {
                        self.finish(finish).await?;
                        return Ok(Flow::Continue);
                    }
                    Step::Ask(ref ask) => {
                        let answers = self.ask_models(ask).await;
                        if answers.iter().any(refused_by_budget) {
                            // Not converted: the planner, told the budget
                            // is spent, finishes instead of asking again.
                            return Ok(Flow::Continue);
                        }
                        self.settle(&step, Answers::Models(answers)).await?
                    }
                    Step::AskHuman(ref human) => {
                        let answers = self.ask_human(&human.questions).await?;
                        self.settle(&step, Answers::Human(answers)).await?
                    }
                    Step::ReadTrust(TrustRead::Rubric { ref name }) => {
                        let rubric = self.ctx.trust.rubric(name).await;
                        self.settle(&step, Answers::Rubric(rubric)).await?
                    }
                    Step::ReadTrust(ref read) => {
                        let memories = self.read_trust(read).await;
                        self.settle(&step, Answers::Trust(memories)).await?
                    }
                };
                match then {
                    None => return Ok(Flow::Continue),
                    Some(next) if next.is_stoppable() && self.stop_requested() => {
                        return Ok(Flow::Stopped);
                    }
                    Some(next) => step = next,
                }
            }
        }
        .instrument(span)
        .await
    }

    /// Has the protocol turn the answers to `step` into events, appends
    /// them, and returns the step that follows, if any.
    async fn settle(
        &self,
        step: &Step,
        answers: Answers,
    ) -> Result<Option<Step>, OrchestratorError> {
        let converted = self
            .shared
            .append_with(|bb| {
                match self.ctx.protocol.convert(
                    bb,
                    &self.shared.debate,
                    step,
                    answers,
                    chrono::Utc::now(),
                ) {
                    Ok(outcome) => (outcome.events, Ok(outcome.then)),
                    Err(e) => (Vec::new(), Err(e)),
                }
            })
            .await?;
        converted.map_err(|e| self.step_error(e))
    }

    fn step_error(&self, e: ConvertError) -> OrchestratorError {
        let debate = self.debate();
        match e {
            ConvertError::AspectPlan(reason) => OrchestratorError::AspectPlan { debate, reason },
            ConvertError::RoomWithoutClaim(room) => OrchestratorError::RoomWithoutClaim {
                debate,
                room: room.to_string(),
            },
            source => OrchestratorError::Step { debate, source },
        }
    }

    /// Makes the calls of `ask` concurrently: each call's context is
    /// assembled and its prompt rendered from the blackboard as it is.
    async fn ask_models(&self, ask: &Ask) -> Vec<Answer> {
        let ctx = &self.ctx;
        let calls = ask.calls();
        let asks = calls.iter().enumerate().map(|(i, call)| async move {
            let request = self
                .shared
                .read(|bb| {
                    let context = call
                        .context
                        .as_ref()
                        .map(|need| ctx.context_for(bb, need))
                        .transpose()?;
                    ctx.protocol
                        .request(bb, ask, i, context.as_deref(), ctx.limits())
                })
                .await;
            let call_persona = call.persona.as_ref();
            match request {
                Err(reason) => Answer::NotAsked(reason),
                Ok(Request {
                    prompt,
                    answer: AnswerForm::Json { name, schema },
                    step,
                }) => {
                    let call = JobCall {
                        role: call.role,
                        prompt,
                        name,
                        schema,
                        step,
                        extra_output_tokens: 0,
                    };
                    Answer::Json(ctx.structured_call(call_persona, call).await)
                }
                Ok(Request {
                    prompt,
                    answer: AnswerForm::Text { max_tokens },
                    step,
                }) => Answer::Text(
                    ctx.text_call(call.role, call_persona, prompt, max_tokens, &step)
                        .await,
                ),
            }
        });
        futures::future::join_all(asks).await
    }

    /// The person's answers (none asked: none given; no person at hand:
    /// every answer "NA").
    async fn ask_human(
        &self,
        questions: &[agon_protocol::Question],
    ) -> Result<Vec<String>, OrchestratorError> {
        match (&self.ctx.answerer, questions.is_empty()) {
            (_, true) => Ok(Vec::new()),
            (Some(answerer), false) => {
                answerer
                    .answer(questions)
                    .await
                    .map_err(|e| OrchestratorError::Answers {
                        debate: self.debate(),
                        source: e,
                    })
            }
            (None, false) => Ok(vec![String::new(); questions.len()]),
        }
    }

    /// The trust memories of the agents `read` names, by their names, as
    /// the run's trust memory has them now (after seed 003's regret
    /// inference), so a draw or a debate's standings never read stale
    /// trust.
    async fn read_trust(
        &self,
        read: &TrustRead,
    ) -> Result<Vec<Option<agon_trust::AgentMemory>>, String> {
        let names: Vec<String> = self
            .shared
            .read(|bb| {
                read.agents()
                    .iter()
                    .map(|p| bb.persona_name(p).to_owned())
                    .collect()
            })
            .await;
        self.ctx.trust.read(&names, chrono::Utc::now()).await
    }

    /// When a group under `deadline` must be done: its clock starts when
    /// this run first runs a group with that clock.
    fn deadline(&self, deadline: Deadline) -> Option<(tokio::time::Instant, std::time::Duration)> {
        let limit = std::time::Duration::from_secs(deadline.secs);
        let mut clock = self.round_clock.lock().ok()?;
        let started = match *clock {
            Some((c, at)) if c == deadline.clock => at,
            _ => {
                let now = tokio::time::Instant::now();
                *clock = Some((deadline.clock, now));
                now
            }
        };
        Some((started + limit, limit))
    }

    /// Moves the running deadline clock's start `by` later (the time the
    /// debate was paused).
    fn extend_deadline(&self, by: std::time::Duration) {
        if let Ok(mut clock) = self.round_clock.lock()
            && let Some((_, started)) = clock.as_mut()
        {
            *started += by;
        }
    }

    fn speaker(&self) -> Speaker<'_> {
        Speaker {
            shared: &self.shared,
            ctx: &self.ctx,
            abort: &self.control.abort,
        }
    }

    async fn speak(&self, speak: &Speak) -> Result<Flow, OrchestratorError> {
        Ok(Flow::after(self.speaker().speak(speak).await?))
    }

    /// Stores the harvested memories, records the run's usage, the debate
    /// in its agents' trust memory and `debate_finished`. The memory's last
    /// batch is stored while the usage and trust are recorded (neither
    /// reads the other), and both are done before `debate_finished`.
    async fn finish(&self, finish: Finish) -> Result<(), OrchestratorError> {
        let record = async {
            crate::usage::record(&self.shared, &self.ctx.models, &self.ctx.usage_baseline).await?;
            self.record_trust(finish).await
        };
        let ((), recorded) = tokio::join!(self.shared.flush_memory(), record);
        recorded?;
        self.shared
            .append(vec![DebateEvent::DebateFinished {
                time: chrono::Utc::now(),
            }])
            .await
    }
}
