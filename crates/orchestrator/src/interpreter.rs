//! The interpreter: asks the protocol for the next step and executes it,
//! until the debate finishes or a stop is requested. It owns the I/O of
//! every step (context assembly, model calls, appends) and no rule of any
//! protocol: what comes next is always the protocol's answer for the
//! blackboard as it stands, so a resumed run simply asks again.

use std::sync::Arc;

use agon_context::prompts;
use agon_core::{ClaimId, CruxRoomId, DebateEvent, StepId};
use agon_extract::{
    AspectPlan, ConvergenceCheck, CruxCardPayload, Payload, PersonaCast, with_persona_names,
};
use agon_protocol::{
    AspectSource, Deadline, Finish, ModelOutput, Next, Progress, Speak, Start, Step,
    aspects_from_output, cast_from_output, crux, start_event,
};
use tracing::Instrument;

use crate::calls::RunCtx;
use crate::control::{RunControl, RunOutcome};
use crate::error::OrchestratorError;
use crate::models::Role;
use crate::shared::Shared;
use crate::speak::{Speaker, Spoken};
use crate::update::DebateUpdate;

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

/// The foreground of one run.
pub(crate) struct Interpreter {
    pub(crate) shared: Arc<Shared>,
    pub(crate) ctx: Arc<RunCtx>,
    pub(crate) control: RunControl,
    /// The deadline clock being timed and when this run first saw it.
    pub(crate) round_clock: std::sync::Mutex<Option<(u32, tokio::time::Instant)>>,
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
        loop {
            self.shared.check()?;
            let (next, progress, pending, started) = self
                .shared
                .read(|bb| {
                    let plan = self.ctx.protocol.plan(bb);
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
                self.shared.send(DebateUpdate::Progress {
                    aspect: progress.aspect,
                    aspects: progress.aspects,
                    miniround: progress.miniround,
                    phase: progress.phase.clone(),
                });
                shown = Some(progress.clone());
            }
            match next {
                Next::Finished => return Ok(RunOutcome::Finished),
                Next::Wait => {
                    if pending == 0 {
                        return Err(OrchestratorError::Stalled {
                            debate: self.debate(),
                            phase: progress.phase,
                        });
                    }
                    tokio::select! {
                        _ = changed.changed() => {}
                        () = self.control.stop.cancelled() => return Ok(RunOutcome::Stopped),
                        () = self.control.abort.cancelled() => return Ok(RunOutcome::Stopped),
                    }
                }
                Next::Step(step) => {
                    if step.is_stoppable() && self.stop_requested() {
                        return Ok(RunOutcome::Stopped);
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
                .read(|bb| self.ctx.protocol.plan(bb).background.len())
                .await;
            if pending == 0 {
                return Ok(());
            }
            if changed.changed().await.is_err() {
                return self.shared.check();
            }
        }
    }

    /// Draws the round's devil's advocate from the trust memory and records
    /// it; when the trust memory cannot be read, everyone counts as new (a
    /// `trust_memory` warning), and the draw still happens.
    async fn choose_devils_advocate(
        &self,
        round: u32,
        candidates: &[agon_core::PersonaId],
    ) -> Result<(), OrchestratorError> {
        let names: Vec<(agon_core::PersonaId, String)> = self
            .shared
            .read(|bb| {
                candidates
                    .iter()
                    .map(|p| (p.clone(), bb.persona_name(p).to_owned()))
                    .collect()
            })
            .await;
        let mut events = Vec::new();
        // `None` only without candidates, which the protocols never ask for.
        let chosen = match self
            .ctx
            .trust
            .devils_advocate(&self.shared.debate, round, &names)
            .await
        {
            Ok(event) => event,
            Err(e) => {
                events.push(agon_protocol::step_failed(
                    StepId::TrustMemory,
                    format!("devil's advocate of round {round} drawn without trust scores: {e}"),
                    chrono::Utc::now(),
                ));
                crate::trust::draw(&self.shared.debate, round, &names, &[])
            }
        };
        events.extend(chosen);
        self.shared.append(events).await
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

    async fn execute(&self, step: Step) -> Result<Flow, OrchestratorError> {
        let span =
            tracing::info_span!("step", debate = %self.shared.debate, step = step_label(&step));
        async {
            match step {
                Step::Start(start) => self.start(&start).await.map(|()| Flow::Continue),
                Step::Speak(speak) => self.speak(&speak).await,
                Step::Parallel { turns, deadline } => {
                    let deadline = deadline.and_then(|d| self.deadline(d));
                    Ok(Flow::after(
                        self.speaker().speak_all(&turns, deadline).await?,
                    ))
                }
                Step::Clarify {
                    agents,
                    max_questions,
                } => self
                    .clarify(&agents, max_questions)
                    .await
                    .map(|()| Flow::Continue),
                Step::Summarize(jobs) => self.summarize(&jobs).await.map(|()| Flow::Continue),
                Step::Judge { judge, round } => {
                    self.judge(&judge, round).await.map(|()| Flow::Continue)
                }
                Step::Record { events, .. } => {
                    self.shared.append(events).await?;
                    Ok(Flow::Continue)
                }
                Step::CheckConvergence {
                    claim,
                    room,
                    otherwise,
                } => {
                    if self.converged(&room).await? {
                        self.crux_card(&claim, &room).await?;
                        Ok(Flow::Continue)
                    } else if self.stop_requested() {
                        Ok(Flow::Stopped)
                    } else {
                        self.speak(&otherwise).await
                    }
                }
                Step::CruxCard { claim, room } => {
                    self.crux_card(&claim, &room).await?;
                    Ok(Flow::Continue)
                }
                Step::ChooseDevilsAdvocate { round, candidates } => {
                    self.choose_devils_advocate(round, &candidates).await?;
                    Ok(Flow::Continue)
                }
                Step::Listen {
                    turn,
                    agents,
                    budget_tokens,
                } => {
                    self.listen(turn, &agents, budget_tokens).await?;
                    Ok(Flow::Continue)
                }
                Step::RollingSummary { fold, max_tokens } => {
                    self.rolling_summary(fold, max_tokens).await?;
                    Ok(Flow::Continue)
                }
                Step::Finish(finish) => {
                    self.finish(finish).await?;
                    Ok(Flow::Continue)
                }
            }
        }
        .instrument(span)
        .await
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

    /// Plans the aspects if asked to, then records `debate_started`.
    async fn start(&self, start: &Start) -> Result<(), OrchestratorError> {
        let (planned, mut after) = match start.aspects {
            AspectSource::Configured(_) => (None, Vec::new()),
            AspectSource::Planned { count } => {
                let output = self
                    .ctx
                    .structured_call(
                        Role::Judge,
                        prompts::aspect_plan(&start.topic.question, count),
                        AspectPlan::NAME,
                        AspectPlan::json_schema(),
                    )
                    .await;
                let (aspects, repaired) = aspects_from_output(count, output).map_err(|e| {
                    OrchestratorError::AspectPlan {
                        debate: self.debate(),
                        reason: e.to_string(),
                    }
                })?;
                (Some(aspects), repaired)
            }
        };
        let (cast, cast_after) = match start.cast {
            None => (None, Vec::new()),
            Some(count) => {
                let output = self
                    .ctx
                    .structured_call(
                        Role::Judge,
                        prompts::persona_cast(
                            &start.topic.question,
                            start.topic.context.as_deref(),
                            count,
                        ),
                        PersonaCast::NAME,
                        PersonaCast::json_schema(),
                    )
                    .await;
                cast_from_output(start, output, chrono::Utc::now())
            }
        };
        let event = start_event(
            &self.shared.debate,
            start,
            planned,
            cast,
            chrono::Utc::now(),
            self.ctx.protocol.kind(),
        );
        after.extend(cast_after);
        let mut events = vec![event];
        events.extend(after);
        self.shared.append(events).await
    }

    /// Asks the crux model whether the room's parties converged; a failed
    /// check is recorded and counts as "not converged".
    async fn converged(&self, room: &CruxRoomId) -> Result<bool, OrchestratorError> {
        let Some(prompt) = self.shared.read(|bb| prompts::convergence(bb, room)).await else {
            return Ok(false);
        };
        let output = self
            .ctx
            .structured_call(
                Role::Crux,
                prompt,
                ConvergenceCheck::NAME,
                ConvergenceCheck::json_schema(),
            )
            .await;
        let found = crux::convergence(room, output, chrono::Utc::now());
        if let Some(failure) = found.failure {
            self.shared.append(vec![failure]).await?;
        }
        Ok(found.converged)
    }

    /// Writes the room's crux card (or records its failure and abandons
    /// the claim).
    async fn crux_card(&self, claim: &ClaimId, room: &CruxRoomId) -> Result<(), OrchestratorError> {
        let built = self
            .shared
            .read(|bb| {
                let prompt = prompts::crux_card(bb, room)?;
                let parties: Vec<String> = bb
                    .claim(claim)
                    .map(|c| {
                        c.personas
                            .iter()
                            .map(|p| bb.persona_name(p).to_owned())
                            .collect()
                    })
                    .unwrap_or_default();
                Some((prompt, parties))
            })
            .await;
        let Some((prompt, parties)) = built else {
            return Err(OrchestratorError::RoomWithoutClaim {
                debate: self.debate(),
                room: room.to_string(),
            });
        };
        let schema = with_persona_names(&CruxCardPayload::json_schema(), &parties);
        let output: ModelOutput = self
            .ctx
            .structured_call(Role::Crux, prompt, CruxCardPayload::NAME, schema)
            .await;
        self.shared
            .append_with(|bb| {
                (
                    crux::card_events(bb, claim, room, output, chrono::Utc::now()),
                    (),
                )
            })
            .await
    }

    /// Stores the harvested memories, records the run's usage, the debate
    /// in its agents' trust memory and `debate_finished`.
    async fn finish(&self, finish: Finish) -> Result<(), OrchestratorError> {
        self.shared.flush_memory().await;
        crate::usage::record(&self.shared, &self.ctx.models, &self.ctx.usage_baseline).await?;
        self.record_trust(finish).await?;
        self.shared
            .append(vec![DebateEvent::DebateFinished {
                time: chrono::Utc::now(),
            }])
            .await
    }
}

/// A short name of a step for spans.
fn step_label(step: &Step) -> String {
    match step {
        Step::Start(_) => "start".into(),
        Step::Speak(speak) => speak.key.to_string(),
        Step::Parallel { turns, .. } => format!("{} turns in parallel", turns.len()),
        Step::Record { label, .. } => label.clone(),
        Step::CheckConvergence { room, .. } => format!("convergence check {room}"),
        Step::CruxCard { room, .. } => format!("crux card {room}"),
        Step::Clarify { agents, .. } => format!("clarifying questions of {} agents", agents.len()),
        Step::Summarize(jobs) => format!("{} summaries", jobs.len()),
        Step::Judge { round, .. } => format!("solution after round {round}"),
        Step::ChooseDevilsAdvocate { round, .. } => format!("devil's advocate of round {round}"),
        Step::Listen { turn, agents, .. } => {
            format!("{} agents listening before turn {turn}", agents.len())
        }
        Step::RollingSummary { fold, .. } => {
            format!(
                "rolling summary of messages {}–{}",
                fold.start + 1,
                fold.end
            )
        }
        Step::Finish(_) => "finish".into(),
    }
}
