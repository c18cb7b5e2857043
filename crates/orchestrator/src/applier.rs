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

use agon_context::prompts;
use agon_core::{Blackboard, DebateEvent};
use agon_extract::{
    BatchPositionUpdate, BatchTurnAnalysis, DeliberationDetection, DisagreementWindow, Payload,
    PositionUpdate, ReflectionBatch, RoundAnalysis, RoundRecordPayload, TurnAnalysis,
    with_message_ids, with_persona_names,
};
use agon_protocol::background::{self, AnalysisOutput};
use agon_protocol::{Background, BackgroundId, ModelFailure, ModelOutput};
use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::calls::RunCtx;
use crate::error::OrchestratorError;
use crate::models::Role;
use crate::shared::Shared;

/// A launched job's model output.
enum Output {
    Analysis(AnalysisOutput),
    Single(ModelOutput),
}

impl Output {
    /// A single call's output (an analysis's primary call, if that is what
    /// came back).
    fn single(self) -> ModelOutput {
        match self {
            Self::Single(out) => out,
            Self::Analysis(out) => out.primary,
        }
    }

    /// An analysis's output (a single call as its primary call).
    fn analysis(self, mode: &agon_protocol::AnalysisMode) -> AnalysisOutput {
        match self {
            Self::Analysis(out) => out,
            Self::Single(primary) => AnalysisOutput {
                primary,
                window: None,
                combined: mode.combined,
            },
        }
    }
}

/// Display names of the debaters (the values persona fields may take).
pub(crate) fn debater_names(bb: &Blackboard) -> Vec<String> {
    bb.debaters().map(|p| p.name.clone()).collect()
}

/// The separate detector's call judging the window that ends at `last`,
/// when the mode asks for one.
fn detector_call(
    ctx: &RunCtx,
    bb: &Blackboard,
    last: &agon_core::MessageId,
    mode: &agon_protocol::AnalysisMode,
    names: &[String],
) -> Option<futures::future::BoxFuture<'static, ModelOutput>> {
    let prompt = mode
        .detector
        .then(|| prompts::disagreement_window(bb, last, mode.window))
        .flatten()?;
    Some(Box::pin(ctx.structured_call(
        Role::Detector,
        prompt,
        DisagreementWindow::NAME,
        with_persona_names(&DisagreementWindow::json_schema(), names),
    )))
}

/// Spawns an analysis: its primary call and, when there is one, the
/// separate detector's call, side by side.
fn spawn_analysis(
    primary_call: impl std::future::Future<Output = ModelOutput> + Send + 'static,
    detector_call: Option<impl std::future::Future<Output = ModelOutput> + Send + 'static>,
    combined: bool,
) -> JoinHandle<Output> {
    tokio::spawn(async move {
        let (primary, window) = match detector_call {
            Some(d) => {
                let (p, w) = futures::join!(primary_call, d);
                (p, Some(w))
            }
            None => (primary_call.await, None),
        };
        Output::Analysis(AnalysisOutput {
            primary,
            window,
            combined,
        })
    })
}

/// Spawns the model calls of `job`, with prompts built from `bb`; `None`
/// when there is nothing to ask (the message is gone, or has no prompt).
fn launch(ctx: &RunCtx, bb: &Blackboard, job: &Background) -> Option<JoinHandle<Output>> {
    let names = debater_names(bb);
    match job {
        Background::Analyse { message, mode } => {
            let window = if mode.combined { mode.window } else { 0 };
            let primary = prompts::analysis_with_context(bb, message, window, mode.context)?;
            let (name, schema) = if mode.combined {
                (TurnAnalysis::NAME, TurnAnalysis::json_schema())
            } else {
                (PositionUpdate::NAME, PositionUpdate::json_schema())
            };
            let primary_call = ctx.structured_call(
                Role::Extractor,
                primary,
                name,
                with_persona_names(&schema, &names),
            );
            let detector_call = detector_call(ctx, bb, message, mode, &names);
            Some(spawn_analysis(primary_call, detector_call, mode.combined))
        }
        Background::AnalyseBatch {
            messages,
            mode:
                agon_protocol::AnalysisMode {
                    shape: agon_protocol::BatchShape::Contributions { impact },
                    ..
                },
        } => {
            let prompt = prompts::dialectic::round_analysis(bb, messages, *impact)?;
            let ids: Vec<String> = messages.iter().map(ToString::to_string).collect();
            let call = ctx.structured_call(
                Role::Extractor,
                prompt,
                RoundAnalysis::NAME,
                with_message_ids(
                    &with_persona_names(&RoundAnalysis::json_schema(), &names),
                    &ids,
                ),
            );
            Some(tokio::spawn(async move { Output::Single(call.await) }))
        }
        Background::AnalyseBatch { messages, mode } => {
            let window = if mode.combined { mode.window } else { 0 };
            let prompt = prompts::batch_analysis(bb, messages, window, mode.context)?;
            let (name, schema) = if mode.combined {
                (BatchTurnAnalysis::NAME, BatchTurnAnalysis::json_schema())
            } else {
                (
                    BatchPositionUpdate::NAME,
                    BatchPositionUpdate::json_schema(),
                )
            };
            let ids: Vec<String> = messages.iter().map(ToString::to_string).collect();
            let primary_call = ctx.structured_call(
                Role::Extractor,
                prompt,
                name,
                with_message_ids(&with_persona_names(&schema, &names), &ids),
            );
            // A separate detector judges the window the batch ends.
            let detector_call = messages
                .last()
                .and_then(|last| detector_call(ctx, bb, last, mode, &names));
            Some(spawn_analysis(primary_call, detector_call, mode.combined))
        }
        Background::Detect { messages, .. } => {
            let ids: Vec<String> = messages.iter().map(ToString::to_string).collect();
            let call = ctx.structured_call(
                Role::Extractor,
                prompts::deliberation::detection(bb, messages)?,
                DeliberationDetection::NAME,
                with_message_ids(&DeliberationDetection::json_schema(), &ids),
            );
            Some(tokio::spawn(async move { Output::Single(call.await) }))
        }
        Background::RoundRecord { aspect, .. } => {
            let call = ctx.structured_call(
                Role::Reflector,
                prompts::round_record(bb, aspect)?,
                RoundRecordPayload::NAME,
                with_persona_names(&RoundRecordPayload::json_schema(), &names),
            );
            Some(tokio::spawn(async move { Output::Single(call.await) }))
        }
        Background::Reflect { .. } => {
            let call = ctx.structured_call(
                Role::Reflector,
                prompts::reflection(bb),
                ReflectionBatch::NAME,
                with_persona_names(&ReflectionBatch::json_schema(), &names),
            );
            Some(tokio::spawn(async move { Output::Single(call.await) }))
        }
    }
}

/// The events of an applied job.
fn convert(bb: &Blackboard, job: &Background, output: Output) -> Vec<DebateEvent> {
    let now = chrono::Utc::now();
    match job {
        Background::Analyse { message, mode } => {
            if bb.is_analyzed(message) {
                return Vec::new();
            }
            background::analysis(bb, message, output.analysis(mode), mode, now)
        }
        Background::AnalyseBatch { messages, mode } => {
            let open: Vec<_> = messages
                .iter()
                .filter(|m| !bb.is_analyzed(m))
                .cloned()
                .collect();
            background::batch_analysis(bb, &open, output.analysis(mode), mode, now)
        }
        Background::Detect { messages, source } => {
            let unread: Vec<_> = messages
                .iter()
                .filter(|m| !bb.is_detected(m))
                .cloned()
                .collect();
            agon_protocol::deliberation::detect::model_events(
                bb,
                &unread,
                output.single(),
                *source,
                now,
            )
        }
        Background::RoundRecord { aspect, round } => {
            background::round_record(bb, aspect, *round, output.single(), now)
        }
        Background::Reflect { aspect, round } => {
            background::reflection(bb, aspect, *round, output.single(), now)
        }
    }
}

/// The output of a job whose task died (panicked or was cancelled) or that
/// had nothing to ask: a failure of its step.
fn lost(reason: String) -> Output {
    Output::Single(Err(ModelFailure::other(reason)))
}

/// Why a job has no prompt.
fn nothing_to_ask(job: &Background) -> &'static str {
    match job {
        Background::Analyse { .. } | Background::AnalyseBatch { .. } => {
            "the message has nothing to analyse"
        }
        Background::Detect { .. } => "the messages are not in the transcript",
        Background::RoundRecord { .. } => "the aspect has no messages to record",
        Background::Reflect { .. } => "nothing to reflect on",
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
    let mut running: HashMap<BackgroundId, JoinHandle<Output>> = HashMap::new();
    loop {
        // Plan, and launch whatever is listed and not running yet.
        let head = shared
            .read(|bb| {
                let plan = ctx.protocol.plan(bb);
                for job in &plan.background {
                    let id = job.id();
                    if !running.contains_key(&id)
                        && let Some(handle) = launch(ctx, bb, job)
                    {
                        running.insert(id, handle);
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
            None => lost(nothing_to_ask(&head).into()),
        };
        let span = tracing::debug_span!("background", debate = %shared.debate, job = ?id);
        shared
            .append_with(|bb| (convert(bb, &head, output), ()))
            .instrument(span)
            .await?;
    }
}
