//! The questions a protocol asks: of models ([`Ask`]), of the person at
//! hand ([`HumanAsk`]) and of the trust memory ([`TrustRead`]).
//!
//! A question step says who is asked with which model and which assembled
//! context ([`Ask::calls`]); the prompt and the answer's form come from
//! [`request`], and the answers become events in [`convert`], both pure.
//! The interpreter only assembles contexts, makes the calls and appends
//! what `convert` returns, so it needs to know nothing of any protocol.
//! A conversion may hand back a follow-up step ([`Outcome::then`]): the
//! crux card after a convergence check that converged, the person's
//! answers after the agents' questions, the judge's next attempt.

use std::fmt;

use agon_context::Phase;
use agon_context::perspective::{history_chars, judge_final_round, total_chars};
use agon_context::prompts::dialectic;
use agon_context::prompts::{self, Prompt, deliberation};
use agon_core::trust::AgentMemory;
use agon_core::{
    Blackboard, ClaimId, CruxRoomId, DebateEvent, DebateId, DebateSummary, MessageSpan, PersonaId,
    ProtocolKind, StepId, SummaryScope,
};
use agon_extract::{
    AspectPlan, ClarifyingQuestions, ConvergenceCheck, CruxCardPayload, ListenAnswer, Payload,
    PersonaCast, SolutionPayload, truncate_chars, with_persona_names,
};
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::clarify::{self, Asked};
use crate::deliberation::{bid_from_output, listen_events};
use crate::extract::{ModelFailure, ModelOutput, step_failed};
use crate::step::{Speak, Start, Step, SummaryJob};
use crate::synthesis;
use crate::{AspectSource, aspects_from_output, cast_from_output, crux, start_event};

/// What a model call is for: which of the debate's models answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ModelRole {
    /// Debaters' utterances (openings, takes, crux turns, closings).
    Debater,
    /// Position extraction (and the combined disagreement judgement).
    Extractor,
    /// Separate disagreement detection.
    Detector,
    /// Round records and reflections.
    Reflector,
    /// Crux convergence checks and cards.
    Crux,
    /// Aspect decomposition and synthesis.
    Judge,
    /// A listening agent's "should I respond?" (deliberation, seed 002):
    /// the cheap model (default: the extractor's).
    Evaluator,
}

impl ModelRole {
    /// Every role.
    pub const ALL: [ModelRole; 7] = [
        ModelRole::Debater,
        ModelRole::Extractor,
        ModelRole::Detector,
        ModelRole::Reflector,
        ModelRole::Crux,
        ModelRole::Judge,
        ModelRole::Evaluator,
    ];

    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debater => "debater",
            Self::Extractor => "extractor",
            Self::Detector => "detector",
            Self::Reflector => "reflector",
            Self::Crux => "crux",
            Self::Judge => "judge",
            Self::Evaluator => "evaluator",
        }
    }
}

impl fmt::Display for ModelRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How large an assembled context may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetNeed {
    /// Twice the run's context budget: inputs that are summarized or
    /// judged whole (a perspective, the final round).
    Double,
    /// This many tokens (the run's budget when it is unusable).
    Tokens(usize),
}

/// An assembled context a prompt is built around.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextNeed {
    /// Whose view.
    pub persona: PersonaId,
    /// Which phase's view.
    pub phase: Phase,
    /// How large.
    pub budget: BudgetNeed,
}

/// One model call of a question step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Which model answers.
    pub role: ModelRole,
    /// Whose own model and temperature are used, when the persona has them.
    pub persona: Option<PersonaId>,
    /// The assembled context handed to [`request`], if the prompt has one.
    pub context: Option<ContextNeed>,
}

impl Call {
    fn plain(role: ModelRole) -> Self {
        Self {
            role,
            persona: None,
            context: None,
        }
    }
}

/// What form the answer takes.
#[derive(Debug, Clone, PartialEq)]
pub enum AnswerForm {
    /// A JSON value matching `schema` (at most the run's structured tokens).
    Json {
        /// The schema's name.
        name: &'static str,
        /// The JSON schema.
        schema: Value,
    },
    /// Free text of at most `max_tokens`.
    Text {
        /// Most tokens of the answer.
        max_tokens: u32,
    },
}

/// A rendered call: the prompt, the answer's form, and the step it is
/// part of (what a failure is recorded under, and what logs, traces and
/// test models know the call by).
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The prompt.
    pub prompt: Prompt,
    /// The answer's form.
    pub answer: AnswerForm,
    /// The step.
    pub step: StepId,
}

/// The run's limits that text answers are bounded by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most tokens of an utterance.
    pub utterance_max_tokens: u32,
    /// Most tokens of a structured answer.
    pub structured_max_tokens: u32,
}

/// A free-text answer with the metadata of its call.
#[derive(Debug, Clone, PartialEq)]
pub struct TextAnswer {
    /// The text as the model wrote it.
    pub text: String,
    /// The temperature of the call.
    pub temperature: f32,
    /// How long the call took.
    pub latency_ms: u64,
    /// Input and output tokens of the call.
    pub tokens: u64,
    /// The model that answered.
    pub model: String,
}

/// What came back from one call.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A structured call's value, or why it failed.
    Json(ModelOutput),
    /// A text call's answer, or why it failed.
    Text(Result<TextAnswer, ModelFailure>),
    /// The call could not be made (its context could not be assembled,
    /// or [`request`] had no prompt): why.
    NotAsked(String),
}

/// The answers to a question step.
#[derive(Debug, Clone, PartialEq)]
pub enum Answers {
    /// One per [`Ask::calls`], in order.
    Models(Vec<Answer>),
    /// One per [`HumanAsk::questions`], in order (empty: "NA").
    Human(Vec<String>),
    /// The trust memories of [`TrustRead::agents`], in order (`None`: an
    /// agent with no memory yet), or why they could not be read.
    Trust(Result<Vec<Option<AgentMemory>>, String>),
}

/// What a question step's answers became.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// The events to append, in order.
    pub events: Vec<DebateEvent>,
    /// A step to run right after appending them (it belongs to the same
    /// step: a resumed run that stops before it asks again from the start).
    pub then: Option<Step>,
}

impl Outcome {
    fn events(events: Vec<DebateEvent>) -> Self {
        Self { events, then: None }
    }
}

/// Why answers cannot become events: the debate cannot go on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConvertError {
    /// The judge model could not split the topic into aspects.
    #[error("the judge model could not split the topic into aspects ({0})")]
    AspectPlan(String),
    /// A crux room has no claim to write a card for.
    #[error("crux room `{0}` has no claim")]
    RoomWithoutClaim(CruxRoomId),
    /// A call the debate cannot do without failed.
    #[error("{what}: {failure}")]
    Model {
        /// Which call.
        what: String,
        /// Why.
        failure: ModelFailure,
    },
    /// A call the debate cannot do without could not be made.
    #[error("{what}: {reason}")]
    NotAsked {
        /// Which call.
        what: String,
        /// Why.
        reason: String,
    },
    /// The answers do not fit the step (an interpreter's bug).
    #[error("the answers do not fit the step ({0})")]
    Mismatch(String),
}

/// The model calls a protocol asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// Start the debate: plan the aspects and cast the debaters when the
    /// start asks for it (no call otherwise), then `debate_started`.
    Start(Start),
    /// Ask the crux model whether the room's parties converged: if they
    /// did, write the card; otherwise take `otherwise`.
    Convergence {
        /// The claim disputed.
        claim: ClaimId,
        /// The room.
        room: CruxRoomId,
        /// The turn to take when they did not converge.
        otherwise: Speak,
    },
    /// Ask the crux model for the room's crux card and close the claim.
    CruxCard {
        /// The claim disputed.
        claim: ClaimId,
        /// The room.
        room: CruxRoomId,
    },
    /// Ask each agent for clarifying questions (concurrently); the user's
    /// answers follow ([`HumanAsk`]), and the questions, the answers and
    /// the `round_started` of round 1 are appended in one batch (so the
    /// phase is never run twice, even when nobody asked anything).
    Clarify {
        /// Who asks, in order.
        agents: Vec<PersonaId>,
        /// Most questions per agent.
        max_questions: usize,
    },
    /// Write summaries concurrently; each becomes its `summary_recorded`,
    /// or a `step_failed` warning (the full history is used instead).
    Summaries(Vec<SummaryJob>),
    /// The judge synthesizes the solution after `round`: a structured
    /// solution; after two failed attempts (`failures`), a plain-text one
    /// and a warning.
    Solution {
        /// The judge.
        judge: PersonaId,
        /// The round synthesized.
        round: u32,
        /// Why each earlier attempt failed.
        failures: Vec<String>,
    },
    /// Ask each agent (concurrently, with the evaluation model) whether it
    /// wants to speak at deliberation turn `turn`, from the brief context,
    /// and record their answers as `speakers_evaluated` (a failed answer is
    /// a decline and a `listen` warning).
    Listen {
        /// The turn.
        turn: u32,
        /// Who is asked, in order.
        agents: Vec<PersonaId>,
        /// Tokens of each agent's brief context.
        budget_tokens: usize,
    },
    /// Fold the messages of `fold` into the rolling summary (seed 001) and
    /// record it as `summary_recorded` with `fold` as its span, or record a
    /// `rolling_summary` warning.
    RollingSummary {
        /// The messages to fold (right after the previous summary's span).
        fold: MessageSpan,
        /// Most tokens of the summary.
        max_tokens: usize,
    },
}

/// Most structured attempts at the judge's solution before the plain-text
/// synthesis replaces it.
const SOLUTION_ATTEMPTS: usize = 2;

/// Words per token assumed when a word limit is derived from tokens.
const WORDS_PER_TOKEN: f64 = 0.75;

impl Ask {
    /// The calls, in the order their answers are passed to [`convert`].
    pub fn calls(&self) -> Vec<Call> {
        match self {
            Self::Start(start) => {
                let planned = matches!(start.aspects, AspectSource::Planned { .. });
                let cast = start.cast.is_some();
                [planned, cast]
                    .into_iter()
                    .filter(|asked| *asked)
                    .map(|_| Call::plain(ModelRole::Judge))
                    .collect()
            }
            Self::Convergence { .. } | Self::CruxCard { .. } => vec![Call::plain(ModelRole::Crux)],
            Self::Clarify { agents, .. } => agents
                .iter()
                .map(|agent| Call {
                    role: ModelRole::Debater,
                    persona: Some(agent.clone()),
                    context: None,
                })
                .collect(),
            Self::Summaries(jobs) => jobs
                .iter()
                .map(|job| Call {
                    role: if job.scope == SummaryScope::Judge {
                        ModelRole::Judge
                    } else {
                        ModelRole::Debater
                    },
                    persona: Some(job.persona.clone()),
                    context: Some(ContextNeed {
                        persona: job.persona.clone(),
                        phase: job.phase.clone(),
                        budget: BudgetNeed::Double,
                    }),
                })
                .collect(),
            Self::Solution { judge, round, .. } => vec![Call {
                role: ModelRole::Judge,
                persona: Some(judge.clone()),
                context: Some(ContextNeed {
                    persona: judge.clone(),
                    phase: Phase::Judgement { round: *round },
                    budget: BudgetNeed::Double,
                }),
            }],
            Self::Listen {
                turn,
                agents,
                budget_tokens,
            } => agents
                .iter()
                .map(|agent| Call {
                    role: ModelRole::Evaluator,
                    persona: None,
                    context: Some(ContextNeed {
                        persona: agent.clone(),
                        phase: Phase::Listen { turn: *turn },
                        budget: BudgetNeed::Tokens(*budget_tokens),
                    }),
                })
                .collect(),
            Self::RollingSummary { .. } => vec![Call::plain(ModelRole::Reflector)],
        }
    }

    /// A short name for progress displays and spans.
    pub fn label(&self) -> String {
        match self {
            Self::Start(_) => "start".into(),
            Self::Convergence { room, .. } => format!("convergence check {room}"),
            Self::CruxCard { room, .. } => format!("crux card {room}"),
            Self::Clarify { agents, .. } => {
                format!("clarifying questions of {} agents", agents.len())
            }
            Self::Summaries(jobs) => format!("{} summaries", jobs.len()),
            Self::Solution { round, .. } => format!("solution after round {round}"),
            Self::Listen { turn, agents, .. } => {
                format!("{} agents listening before turn {turn}", agents.len())
            }
            Self::RollingSummary { fold, .. } => format!(
                "rolling summary of messages {}–{}",
                fold.start + 1,
                fold.end
            ),
        }
    }
}

/// The person's answers to the agents' clarifying questions.
#[derive(Debug, Clone, PartialEq)]
pub struct HumanAsk {
    /// The questions, in order.
    pub questions: Vec<Question>,
    /// What each agent asked (or why it asked nothing usable).
    pub asked: Vec<(PersonaId, Asked)>,
}

/// One clarifying question to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The agent who asks.
    pub agent: PersonaId,
    /// Its display name.
    pub agent_name: String,
    /// Its role, if it has one.
    pub role: Option<agon_core::AgentRole>,
    /// `q1`, `q2`, … within the agent's questions.
    pub id: String,
    /// The question.
    pub text: String,
}

/// A read of the agents' trust memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustRead {
    /// Draw the round's devil's advocate (seed 003: trust-weighted, without
    /// low-trust agents or agents on probation) and record
    /// `devils_advocate_chosen`; without the memories everyone counts as
    /// new (a `trust_memory` warning), and the draw still happens.
    DevilsAdvocate {
        /// The round.
        round: u32,
        /// Who may be chosen.
        candidates: Vec<PersonaId>,
    },
}

impl TrustRead {
    /// Whose memories are read, in order.
    pub fn agents(&self) -> &[PersonaId] {
        match self {
            Self::DevilsAdvocate { candidates, .. } => candidates,
        }
    }

    /// A short name for progress displays and spans.
    pub fn label(&self) -> String {
        match self {
            Self::DevilsAdvocate { round, .. } => format!("devil's advocate of round {round}"),
        }
    }
}

fn persona<'a>(board: &'a Blackboard, id: &PersonaId) -> Result<&'a agon_core::Persona, String> {
    board
        .persona(id)
        .ok_or_else(|| format!("unknown persona `{id}`"))
}

fn json<P: Payload>(schema: Value) -> AnswerForm {
    AnswerForm::Json {
        name: P::NAME,
        schema,
    }
}

fn needs(context: Option<&str>) -> Result<&str, String> {
    context.ok_or_else(|| "no context was assembled".to_owned())
}

/// The prompt and answer form of call `call` of `ask`, for `board`, around
/// the assembled `context` when the call has one; why not, when the call
/// cannot be made.
pub fn request(
    board: &Blackboard,
    ask: &Ask,
    call: usize,
    context: Option<&str>,
    limits: Limits,
) -> Result<Request, String> {
    match ask {
        Ask::Start(start) => {
            let planned = match start.aspects {
                AspectSource::Planned { count } => Some(count),
                AspectSource::Configured(_) => None,
            };
            match (planned, call) {
                (Some(count), 0) => Ok(Request {
                    prompt: prompts::aspect_plan(&start.topic.question, count),
                    answer: json::<AspectPlan>(AspectPlan::json_schema()),
                    step: StepId::AspectPlan,
                }),
                _ => Ok(Request {
                    prompt: prompts::persona_cast(
                        &start.topic.question,
                        start.topic.context.as_deref(),
                        start.cast.unwrap_or(0),
                    ),
                    answer: json::<PersonaCast>(PersonaCast::json_schema()),
                    step: StepId::PersonaCast,
                }),
            }
        }
        Ask::Convergence { room, .. } => Ok(Request {
            prompt: prompts::convergence(board, room)
                .ok_or_else(|| format!("crux room `{room}` has no turns"))?,
            answer: json::<ConvergenceCheck>(ConvergenceCheck::json_schema()),
            step: StepId::ConvergenceCheck(room.clone()),
        }),
        Ask::CruxCard { claim, room } => {
            let prompt = prompts::crux_card(board, room)
                .ok_or_else(|| format!("crux room `{room}` has no claim"))?;
            let parties: Vec<String> = board
                .claim(claim)
                .map(|c| {
                    c.personas
                        .iter()
                        .map(|p| board.persona_name(p).to_owned())
                        .collect()
                })
                .unwrap_or_default();
            Ok(Request {
                prompt,
                answer: json::<CruxCardPayload>(with_persona_names(
                    &CruxCardPayload::json_schema(),
                    &parties,
                )),
                step: StepId::CruxCard(room.clone()),
            })
        }
        Ask::Clarify {
            agents,
            max_questions,
        } => {
            let agent = agents.get(call).ok_or("no such agent")?;
            Ok(Request {
                prompt: dialectic::clarification(board, persona(board, agent)?, *max_questions),
                answer: json::<ClarifyingQuestions>(ClarifyingQuestions::json_schema()),
                step: StepId::Clarification(agent.clone()),
            })
        }
        Ask::Summaries(jobs) => {
            let job = jobs.get(call).ok_or("no such summary")?;
            let writer = persona(board, &job.persona)?;
            let content = needs(context)?;
            let prompt = if job.scope == SummaryScope::Judge {
                dialectic::judge_summary(writer, content, job.max_chars, job.prompt.as_deref())
            } else {
                let role = writer.specialty;
                dialectic::summary(writer, role, content, job.max_chars, job.prompt.as_deref())
            };
            let max_tokens = u32::try_from(job.max_chars / 3 + 32).unwrap_or(u32::MAX);
            Ok(Request {
                prompt,
                answer: AnswerForm::Text {
                    max_tokens: max_tokens.min(limits.utterance_max_tokens.max(256)),
                },
                step: job.step_id(),
            })
        }
        Ask::Solution {
            judge,
            round,
            failures,
        } => {
            let judge = persona(board, judge)?;
            let context = needs(context)?;
            if failures.len() < SOLUTION_ATTEMPTS {
                Ok(Request {
                    prompt: dialectic::synthesis(judge, context, true),
                    answer: json::<SolutionPayload>(SolutionPayload::json_schema()),
                    step: StepId::Solution(*round),
                })
            } else {
                Ok(Request {
                    prompt: dialectic::synthesis(judge, context, false),
                    answer: AnswerForm::Text {
                        max_tokens: limits
                            .utterance_max_tokens
                            .max(limits.structured_max_tokens),
                    },
                    step: StepId::Solution(*round),
                })
            }
        }
        Ask::Listen { turn, agents, .. } => {
            let agent = agents.get(call).ok_or("no such agent")?;
            Ok(Request {
                prompt: deliberation::listen(persona(board, agent)?, needs(context)?),
                answer: json::<ListenAnswer>(ListenAnswer::json_schema()),
                step: StepId::Listen {
                    turn: *turn,
                    persona: agent.clone(),
                },
            })
        }
        Ask::RollingSummary { fold, max_tokens } => {
            let max_words = ((*max_tokens as f64) * WORDS_PER_TOKEN).max(50.0) as usize;
            let prompt =
                deliberation::rolling_summary(board, *fold, max_words).ok_or_else(|| {
                    format!(
                        "messages {}–{} are not in the transcript",
                        fold.start + 1,
                        fold.end
                    )
                })?;
            Ok(Request {
                prompt,
                answer: AnswerForm::Text {
                    max_tokens: u32::try_from(*max_tokens).unwrap_or(u32::MAX).max(64),
                },
                step: StepId::RollingSummary {
                    at: board.messages().len(),
                },
            })
        }
    }
}

fn models(answers: Answers, expected: usize) -> Result<Vec<Answer>, ConvertError> {
    match answers {
        Answers::Models(answers) if answers.len() == expected => Ok(answers),
        Answers::Models(answers) => Err(ConvertError::Mismatch(format!(
            "{} answers to {expected} calls",
            answers.len()
        ))),
        _ => Err(ConvertError::Mismatch("not model answers".into())),
    }
}

/// A structured answer's output (a text answer or a call not made count as
/// failures).
fn output(answer: Answer) -> ModelOutput {
    match answer {
        Answer::Json(output) => output,
        Answer::Text(_) => Err(ModelFailure::other("a text answer where JSON was asked")),
        Answer::NotAsked(reason) => Err(ModelFailure::other(reason)),
    }
}

/// A text answer (a structured answer or a call not made count as
/// failures, by their reason).
fn text(answer: Answer) -> Result<TextAnswer, String> {
    match answer {
        Answer::Text(result) => result.map_err(|f| f.to_string()),
        Answer::Json(_) => Err("a JSON answer where text was asked".into()),
        Answer::NotAsked(reason) => Err(reason),
    }
}

/// The events the answers to a question `step` become (and the step that
/// follows, if any), for `board` as it is after the calls. `protocol` is
/// recorded in `debate_started`.
pub fn convert(
    board: &Blackboard,
    debate: &DebateId,
    protocol: Option<ProtocolKind>,
    step: &Step,
    answers: Answers,
    now: DateTime<Utc>,
) -> Result<Outcome, ConvertError> {
    match step {
        Step::Ask(ask) => {
            let answers = models(answers, ask.calls().len())?;
            convert_models(board, debate, protocol, ask, answers, now)
        }
        Step::AskHuman(human) => match answers {
            Answers::Human(given) => Ok(Outcome::events(clarify::clarification_events(
                board.messages().len(),
                &human.asked,
                &given,
                now,
            ))),
            _ => Err(ConvertError::Mismatch("not the person's answers".into())),
        },
        Step::ReadTrust(read) => {
            let Answers::Trust(memories) = answers else {
                return Err(ConvertError::Mismatch("not trust memories".into()));
            };
            Ok(Outcome::events(trust_events(
                board, debate, read, memories, now,
            )))
        }
        _ => Err(ConvertError::Mismatch("the step asks nothing".into())),
    }
}

fn trust_events(
    board: &Blackboard,
    debate: &DebateId,
    read: &TrustRead,
    memories: Result<Vec<Option<AgentMemory>>, String>,
    now: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let TrustRead::DevilsAdvocate { round, candidates } = read;
    let names: Vec<(PersonaId, String)> = candidates
        .iter()
        .map(|p| (p.clone(), board.persona_name(p).to_owned()))
        .collect();
    let mut events = Vec::new();
    let known = match memories {
        Ok(known) => known,
        Err(e) => {
            events.push(step_failed(
                StepId::TrustMemory,
                format!("devil's advocate of round {round} drawn without trust scores: {e}"),
                now,
            ));
            Vec::new()
        }
    };
    // `None` only without candidates, which the protocols never ask for.
    events.extend(crate::trust_harvest::draw(debate, *round, &names, &known));
    events
}

fn convert_models(
    board: &Blackboard,
    debate: &DebateId,
    protocol: Option<ProtocolKind>,
    ask: &Ask,
    answers: Vec<Answer>,
    now: DateTime<Utc>,
) -> Result<Outcome, ConvertError> {
    let mut answers = answers.into_iter();
    match ask {
        Ask::Start(start) => {
            let (planned, mut events_after) = match start.aspects {
                AspectSource::Configured(_) => (None, Vec::new()),
                AspectSource::Planned { count } => {
                    let output = answers
                        .next()
                        .map_or_else(|| Err(ModelFailure::other("no answer")), output);
                    let (aspects, repaired) = aspects_from_output(count, output)
                        .map_err(|e| ConvertError::AspectPlan(e.to_string()))?;
                    (Some(aspects), repaired)
                }
            };
            let (cast, cast_after) = match start.cast {
                None => (None, Vec::new()),
                Some(_) => {
                    let output = answers
                        .next()
                        .map_or_else(|| Err(ModelFailure::other("no answer")), output);
                    cast_from_output(start, output, now)
                }
            };
            events_after.extend(cast_after);
            let mut events = vec![start_event(debate, start, planned, cast, now, protocol)];
            events.extend(events_after);
            Ok(Outcome::events(events))
        }
        Ask::Convergence {
            claim,
            room,
            otherwise,
        } => {
            let then_speak = Outcome {
                events: Vec::new(),
                then: Some(Step::Speak(otherwise.clone())),
            };
            // A room with no turns to judge has not converged (nothing to record).
            let Some(Answer::Json(out)) = answers.next() else {
                return Ok(then_speak);
            };
            let found = crux::convergence(room, out, now);
            Ok(Outcome {
                events: found.failure.into_iter().collect(),
                then: Some(if found.converged {
                    Step::Ask(Ask::CruxCard {
                        claim: claim.clone(),
                        room: room.clone(),
                    })
                } else {
                    Step::Speak(otherwise.clone())
                }),
            })
        }
        Ask::CruxCard { claim, room } => match answers.next() {
            Some(Answer::NotAsked(_)) | None => Err(ConvertError::RoomWithoutClaim(room.clone())),
            Some(answer) => Ok(Outcome::events(crux::card_events(
                board,
                claim,
                room,
                output(answer),
                now,
            ))),
        },
        Ask::Clarify {
            agents,
            max_questions,
        } => {
            let asked: Vec<(PersonaId, Asked)> = agents
                .iter()
                .zip(answers)
                .map(|(agent, answer)| {
                    let asked = match answer {
                        Answer::NotAsked(reason) => Err(reason),
                        answer => clarify::questions_from_output(output(answer), *max_questions),
                    };
                    (agent.clone(), asked)
                })
                .collect();
            let questions = asked
                .iter()
                .filter_map(|(agent, r)| Some((agent, &r.as_ref().ok()?.0)))
                .flat_map(|(agent, qs)| {
                    let persona = board.persona(agent);
                    qs.iter().enumerate().map(move |(i, text)| Question {
                        agent: agent.clone(),
                        agent_name: persona.map_or_else(|| agent.to_string(), |p| p.name.clone()),
                        role: persona.and_then(|p| p.specialty),
                        id: format!("q{}", i + 1),
                        text: text.clone(),
                    })
                })
                .collect();
            Ok(Outcome {
                events: Vec::new(),
                then: Some(Step::AskHuman(HumanAsk { questions, asked })),
            })
        }
        Ask::Summaries(jobs) => {
            let end = board.messages().len();
            let events = jobs
                .iter()
                .zip(answers)
                .map(|(job, answer)| {
                    let before_chars = match &job.phase {
                        Phase::JudgeSummary { .. } => total_chars(&judge_final_round(board)),
                        _ => history_chars(board, &job.persona),
                    };
                    synthesis::summary_event(job, end, before_chars, text(answer), now)
                })
                .collect();
            Ok(Outcome::events(events))
        }
        Ask::Solution {
            judge,
            round,
            failures,
        } => {
            let what = format!("synthesis of round {round}");
            match answers.next() {
                None => Err(ConvertError::Mismatch("no answer".into())),
                Some(Answer::NotAsked(reason)) => Err(ConvertError::NotAsked { what, reason }),
                Some(Answer::Json(out)) => {
                    match synthesis::solution_events(*round, judge, out, now) {
                        Ok(events) => Ok(Outcome::events(events)),
                        Err(reason) => {
                            let mut failures = failures.clone();
                            failures.push(reason);
                            Ok(Outcome {
                                events: Vec::new(),
                                then: Some(Step::Ask(Ask::Solution {
                                    judge: judge.clone(),
                                    round: *round,
                                    failures,
                                })),
                            })
                        }
                    }
                }
                Some(Answer::Text(Err(failure))) => Err(ConvertError::Model {
                    what: format!("plain-text {what}"),
                    failure,
                }),
                Some(Answer::Text(Ok(answer))) => {
                    synthesis::plain_solution_events(*round, judge, failures, &answer.text, now)
                        .map(Outcome::events)
                        .ok_or_else(|| ConvertError::Model {
                            what,
                            failure: ModelFailure::new(
                                crate::FailureKind::Malformed,
                                "the plain-text synthesis was empty",
                            ),
                        })
                }
            }
        }
        Ask::Listen { turn, agents, .. } => {
            let heard = agents
                .iter()
                .zip(answers)
                .map(|(agent, answer)| {
                    let heard = match answer {
                        Answer::NotAsked(reason) => Err(reason),
                        answer => bid_from_output(agent, output(answer)),
                    };
                    (agent.clone(), heard)
                })
                .collect();
            Ok(Outcome::events(listen_events(*turn, heard, now)))
        }
        Ask::RollingSummary { fold, max_tokens } => {
            let answer = answers
                .next()
                .unwrap_or_else(|| Answer::NotAsked("no answer".into()));
            Ok(Outcome::events(vec![rolling_summary_event(
                board,
                *fold,
                *max_tokens,
                answer,
                now,
            )]))
        }
    }
}

/// The event of a rolling summary: `summary_recorded` with `fold` as its
/// span (the text cut to the share's characters, about 4 per token, so a
/// long summary cannot crowd out the window), or a `rolling_summary`
/// warning (the view then cuts the window to fit; the session goes on).
fn rolling_summary_event(
    board: &Blackboard,
    fold: MessageSpan,
    max_tokens: usize,
    answer: Answer,
    now: DateTime<Utc>,
) -> DebateEvent {
    let messages = board.messages();
    let at = messages.len();
    let step = StepId::RollingSummary { at };
    let answer = match answer {
        Answer::NotAsked(reason) => {
            return step_failed(StepId::RollingSummary { at: fold.end }, reason, now);
        }
        answer => text(answer),
    };
    let before_chars: usize = messages[fold.start.min(at)..fold.end.min(at)]
        .iter()
        .map(|m| m.content.chars().count())
        .sum();
    let max_chars = max_tokens.saturating_mul(4).max(200);
    match answer {
        Ok(a) if !a.text.trim().is_empty() => {
            let text = truncate_chars(a.text.trim(), max_chars);
            DebateEvent::SummaryRecorded {
                summary: DebateSummary {
                    scope: SummaryScope::Rolling,
                    span: fold,
                    after_chars: text.chars().count(),
                    text,
                    before_chars,
                    method: "rolling".into(),
                    round: None,
                    temperature_centi: Some(
                        (a.temperature * 100.0).round().clamp(0.0, 1000.0) as u16
                    ),
                    latency_ms: Some(a.latency_ms),
                    tokens: Some(a.tokens),
                    model: Some(a.model),
                    time: now,
                },
            }
        }
        Ok(_) => step_failed(step, "the summary came back empty", now),
        Err(reason) => step_failed(step, reason, now),
    }
}
