//! Background jobs as calls: the prompts a job asks ([`request`]) and the
//! events its answers become ([`convert`]). The interpreter's background
//! pipeline launches the calls and applies the events in the protocol's
//! order, knowing nothing of what each job is for.

use agon_context::prompts::{self, Prompt};
use agon_core::{AnalysisPart, Blackboard, DebateEvent, StepId};
use agon_extract::{
    BatchPositionUpdate, BatchTurnAnalysis, DeliberationDetection, DisagreementWindow, Payload,
    PositionUpdate, ReflectionBatch, RequirementsPayload, RoundAnalysis, RoundRecordPayload,
    TurnAnalysis, with_message_ids, with_persona_names,
};
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::background::{self, AnalysisOutput};
use crate::extract::ModelOutput;
use crate::question::ModelRole;
use crate::step::{AnalysisMode, Background, BatchShape};

/// Output tokens a round analysis may take for each message beyond its
/// first: an entry (stance, agreement, disagreement, concession, shift,
/// critiques taken in, requirements covered) is ~60-150 tokens, so the
/// structured calls' limit, sized for one answer, would cut a round's.
pub const OUTPUT_TOKENS_PER_ENTRY: u32 = 120;

/// One structured call of a background job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobCall {
    /// Which model answers.
    pub role: ModelRole,
    /// The prompt.
    pub prompt: Prompt,
    /// The schema's name.
    pub name: &'static str,
    /// The JSON schema.
    pub schema: Value,
    /// The step the call is part of (what logs, traces and test models
    /// know it by).
    pub step: StepId,
    /// Output tokens the answer may take beyond the structured calls'
    /// limit (the perspective summaries a round's analysis writes).
    pub extra_output_tokens: u32,
}

impl JobCall {
    fn new<P: Payload>(role: ModelRole, prompt: Prompt, schema: Value, step: StepId) -> Self {
        Self {
            role,
            prompt,
            name: P::NAME,
            schema,
            step,
            extra_output_tokens: 0,
        }
    }
}

/// The step of a message's analysis part.
fn analysis(message: &agon_core::MessageId, part: AnalysisPart) -> StepId {
    StepId::Analysis {
        message: message.clone(),
        part,
    }
}

/// The first of `messages` (a batch is named by its first message).
fn first(messages: &[agon_core::MessageId]) -> agon_core::MessageId {
    messages
        .first()
        .cloned()
        .unwrap_or_else(|| agon_core::MessageId::new(""))
}

/// The calls of a background job: its primary call and, for analyses
/// with a separate detector, the detector's call (made side by side).
#[derive(Debug, Clone, PartialEq)]
pub struct JobRequest {
    /// The primary call.
    pub primary: JobCall,
    /// The separate disagreement detector's call, if the mode has one.
    pub detector: Option<JobCall>,
}

/// What came back from a job's calls.
#[derive(Debug, Clone, PartialEq)]
pub struct JobAnswers {
    /// The primary call's output.
    pub primary: ModelOutput,
    /// The detector's output, if it was asked.
    pub detector: Option<ModelOutput>,
}

/// Display names of the debaters (the values persona fields may take).
fn debater_names(bb: &Blackboard) -> Vec<String> {
    bb.debaters().map(|p| p.name.clone()).collect()
}

/// The separate detector's call judging the window that ends at `last`,
/// when the mode asks for one.
fn detector_call(
    bb: &Blackboard,
    last: &agon_core::MessageId,
    mode: &AnalysisMode,
    names: &[String],
) -> Option<JobCall> {
    let prompt = mode
        .detector
        .then(|| prompts::disagreement_window(bb, last, mode.window))
        .flatten()?;
    Some(JobCall::new::<DisagreementWindow>(
        ModelRole::Detector,
        prompt,
        with_persona_names(&DisagreementWindow::json_schema(), names),
        analysis(last, AnalysisPart::Disagreement),
    ))
}

fn ids(messages: &[agon_core::MessageId]) -> Vec<String> {
    messages.iter().map(ToString::to_string).collect()
}

/// The calls of `job`, with prompts built from `bb`; `None` when there is
/// nothing to ask (the message is gone, or has no prompt): see
/// [`nothing_to_ask`].
pub fn request(bb: &Blackboard, job: &Background) -> Option<JobRequest> {
    let names = debater_names(bb);
    let single = |primary| {
        Some(JobRequest {
            primary,
            detector: None,
        })
    };
    match job {
        Background::Analyse { message, mode } => {
            let window = if mode.combined { mode.window } else { 0 };
            let prompt = prompts::analysis_with_context(bb, message, window, mode.context)?;
            let primary = if mode.combined {
                JobCall::new::<TurnAnalysis>(
                    ModelRole::Extractor,
                    prompt,
                    with_persona_names(&TurnAnalysis::json_schema(), &names),
                    analysis(message, AnalysisPart::Combined),
                )
            } else {
                JobCall::new::<PositionUpdate>(
                    ModelRole::Extractor,
                    prompt,
                    with_persona_names(&PositionUpdate::json_schema(), &names),
                    analysis(message, AnalysisPart::Position),
                )
            };
            Some(JobRequest {
                primary,
                detector: detector_call(bb, message, mode, &names),
            })
        }
        Background::AnalyseBatch {
            messages,
            mode:
                AnalysisMode {
                    shape: BatchShape::Contributions { impact },
                    ..
                },
            summaries,
        } => {
            let asks: Vec<prompts::dialectic::SummaryAsk> = summaries
                .iter()
                .map(|job| prompts::dialectic::SummaryAsk {
                    persona: job.persona.clone(),
                    max_chars: job.max_chars,
                })
                .collect();
            let writers: Vec<(String, usize)> = summaries
                .iter()
                .map(|job| (bb.persona_name(&job.persona).to_owned(), job.max_chars))
                .collect();
            let schema = RoundAnalysis::schema_with_summaries(
                &with_message_ids(
                    &with_persona_names(&RoundAnalysis::json_schema(), &names),
                    &ids(messages),
                ),
                &writers,
            );
            let mut call = JobCall::new::<RoundAnalysis>(
                ModelRole::Extractor,
                prompts::dialectic::round_analysis(bb, messages, *impact, &asks)?,
                schema,
                analysis(&first(messages), AnalysisPart::Position),
            );
            // Room for an entry per message beyond the first, and as much
            // room as the summaries' own calls would have had.
            let entries = u32::try_from(messages.len().saturating_sub(1)).unwrap_or(u32::MAX);
            call.extra_output_tokens = summaries
                .iter()
                .map(|j| u32::try_from(j.max_chars / 3 + 32).unwrap_or(u32::MAX))
                .fold(
                    entries.saturating_mul(OUTPUT_TOKENS_PER_ENTRY),
                    u32::saturating_add,
                );
            single(call)
        }
        Background::AnalyseBatch { messages, mode, .. } => {
            let window = if mode.combined { mode.window } else { 0 };
            let prompt = prompts::batch_analysis(bb, messages, window, mode.context)?;
            let schema = if mode.combined {
                BatchTurnAnalysis::json_schema()
            } else {
                BatchPositionUpdate::json_schema()
            };
            let schema = with_message_ids(&with_persona_names(&schema, &names), &ids(messages));
            let primary = if mode.combined {
                JobCall::new::<BatchTurnAnalysis>(
                    ModelRole::Extractor,
                    prompt,
                    schema,
                    analysis(&first(messages), AnalysisPart::Combined),
                )
            } else {
                JobCall::new::<BatchPositionUpdate>(
                    ModelRole::Extractor,
                    prompt,
                    schema,
                    analysis(&first(messages), AnalysisPart::Position),
                )
            };
            // A separate detector judges the window the batch ends.
            let detector = messages
                .last()
                .and_then(|last| detector_call(bb, last, mode, &names));
            Some(JobRequest { primary, detector })
        }
        Background::Detect { messages, .. } => single(JobCall::new::<DeliberationDetection>(
            ModelRole::Extractor,
            prompts::deliberation::detection(bb, messages)?,
            with_message_ids(&DeliberationDetection::json_schema(), &ids(messages)),
            StepId::Detection(first(messages)),
        )),
        Background::RoundRecord { aspect, .. } => single(JobCall::new::<RoundRecordPayload>(
            ModelRole::Reflector,
            prompts::round_record(bb, aspect)?,
            with_persona_names(&RoundRecordPayload::json_schema(), &names),
            StepId::RoundRecord(aspect.clone()),
        )),
        Background::Reflect { aspect, .. } => single(JobCall::new::<ReflectionBatch>(
            ModelRole::Reflector,
            prompts::reflection(bb),
            with_persona_names(&ReflectionBatch::json_schema(), &names),
            StepId::Reflection(aspect.clone()),
        )),
        Background::Requirements => single(JobCall::new::<RequirementsPayload>(
            ModelRole::Extractor,
            prompts::dialectic::requirements(bb)?,
            RequirementsPayload::json_schema(),
            StepId::Requirements,
        )),
    }
}

/// Why a job has no prompt ([`request`] returned `None`).
pub fn nothing_to_ask(job: &Background) -> &'static str {
    match job {
        Background::Analyse { .. } | Background::AnalyseBatch { .. } => {
            "the message has nothing to analyse"
        }
        Background::Detect { .. } => "the messages are not in the transcript",
        Background::RoundRecord { .. } => "the aspect has no messages to record",
        Background::Reflect { .. } => "nothing to reflect on",
        Background::Requirements => "the debate has no problem statement",
    }
}

/// The events of an applied job, for `bb` as it is when the job is
/// applied (messages analysed or read since are skipped).
pub fn convert(
    bb: &Blackboard,
    job: &Background,
    answers: JobAnswers,
    now: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let analysis = |mode: &AnalysisMode| AnalysisOutput {
        primary: answers.primary.clone(),
        window: answers.detector.clone(),
        combined: mode.combined,
    };
    match job {
        Background::Analyse { message, mode } => {
            if bb.is_analyzed(message) {
                return Vec::new();
            }
            background::analysis(bb, message, analysis(mode), mode, now)
        }
        Background::AnalyseBatch {
            messages,
            mode,
            summaries,
        } => {
            let open: Vec<_> = messages
                .iter()
                .filter(|m| !bb.is_analyzed(m))
                .cloned()
                .collect();
            let mut events = background::batch_analysis(bb, &open, analysis(mode), mode, now);
            if !open.is_empty() {
                events.extend(crate::synthesis::folded_summaries(
                    bb,
                    summaries,
                    messages,
                    answers.primary.as_ref().ok(),
                    now,
                ));
            }
            events
        }
        Background::Detect { messages, source } => {
            let unread: Vec<_> = messages
                .iter()
                .filter(|m| !bb.is_detected(m))
                .cloned()
                .collect();
            crate::deliberation::detect::model_events(bb, &unread, answers.primary, *source, now)
        }
        Background::RoundRecord { aspect, round } => {
            background::round_record(bb, aspect, *round, answers.primary, now)
        }
        Background::Reflect { aspect, round } => {
            background::reflection(bb, aspect, *round, answers.primary, now)
        }
        Background::Requirements => {
            if bb.requirements().is_recorded() {
                return Vec::new();
            }
            crate::requirements::events(bb, answers.primary, now)
        }
    }
}
