//! What each question's calls are ([`request`]: the prompt and the
//! answer's form) and what their answers become ([`convert`]: events, and
//! the step that follows, if any), both pure. The interpreter only
//! assembles contexts, makes the calls and appends what `convert` returns,
//! so it needs to know nothing of any protocol. A conversion may hand back
//! a follow-up step ([`Outcome::then`]): the crux card after a convergence
//! check that converged, the person's answers after the agents' questions,
//! the judge's next attempt.

use agon_context::Phase;
use agon_context::perspective::{history_chars, judge_final_round, total_chars};
use agon_context::prompts::dialectic;
use agon_context::prompts::{self, deliberation};
use agon_core::{
    Blackboard, CruxRoomId, DebateEvent, DebateId, DebateSummary, MessageSpan, PersonaId,
    ProtocolKind, StepId, SummaryScope,
};
use agon_extract::{
    AspectPlan, ClarifyingQuestions, ConvergenceCheck, CruxCardPayload, ListenAnswer, Payload,
    PersonaCast, SolutionPayload, truncate_chars, with_persona_names,
};
use agon_trust::AgentMemory;
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::clarify::{self, Asked};
use crate::crux;
use crate::deliberation::listen::{bid_from_output, listen_events};
use crate::extract::{ModelFailure, ModelOutput, step_failed};
use crate::question::{
    Answer, AnswerForm, Answers, Ask, HumanAsk, Limits, Question, Request, TextAnswer, TrustRead,
};
use crate::start::{aspects_from_output, cast_from_output, start_event};
use crate::step::Step;
use crate::synthesis;
use crate::turn::AspectSource;

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

/// Most structured attempts at the judge's solution before the plain-text
/// synthesis replaces it.
const SOLUTION_ATTEMPTS: usize = 2;

/// Words per token assumed when a word limit is derived from tokens.
const WORDS_PER_TOKEN: f64 = 0.75;

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
            round,
            max_rounds,
        } => {
            let agent = agents.get(call).ok_or("no such agent")?;
            Ok(Request {
                prompt: dialectic::clarification(
                    board,
                    persona(board, agent)?,
                    *max_questions,
                    (*round, *max_rounds),
                ),
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
                    prompt: dialectic::synthesis(judge, context, board.rubric(), true),
                    answer: json::<SolutionPayload>(SolutionPayload::json_schema()),
                    step: StepId::Solution(*round),
                })
            } else {
                Ok(Request {
                    prompt: dialectic::synthesis(judge, context, board.rubric(), false),
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
                prompt: deliberation::listen(
                    persona(board, agent)?,
                    needs(context)?,
                    &deliberation::progress(board, *turn),
                ),
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
                (human.round, human.last),
                now,
            ))),
            _ => Err(ConvertError::Mismatch("not the person's answers".into())),
        },
        Step::ReadTrust(TrustRead::Rubric { name }) => {
            let Answers::Rubric(rubric) = answers else {
                return Err(ConvertError::Mismatch("not a rubric".into()));
            };
            Ok(Outcome::events(rubric_events(name, rubric, now)))
        }
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

/// The memories read, or none and the `trust_memory` warning saying
/// `without` (what goes on without them) when they could not be read.
fn memories_or_warning(
    memories: Result<Vec<Option<AgentMemory>>, String>,
    without: &str,
    now: DateTime<Utc>,
    events: &mut Vec<DebateEvent>,
) -> Vec<Option<AgentMemory>> {
    memories.unwrap_or_else(|e| {
        events.push(step_failed(
            StepId::TrustMemory,
            format!("{without}: {e}"),
            now,
        ));
        Vec::new()
    })
}

/// The agents' standings in the memories read for `agents` (in order;
/// agents without one are left out), or the warning that they could not
/// be read and no standings.
fn standings_events(
    agents: &[PersonaId],
    memories: Result<Vec<Option<AgentMemory>>, String>,
    now: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let mut events = Vec::new();
    let known = memories_or_warning(
        memories,
        "feedback is not weighted by trust",
        now,
        &mut events,
    );
    let standings = agents
        .iter()
        .zip(known)
        .filter_map(|(p, m)| Some((p.clone(), m?.standing())))
        .collect();
    events.push(DebateEvent::TrustStandingsRead { standings });
    events
}

/// `rubric_read` with the rubric read, or with the built-in version of
/// `name` after a `trust_memory` warning when it could not be read (or is
/// not the one asked for).
fn rubric_events(
    name: &str,
    rubric: Result<agon_core::rubric::Rubric, String>,
    now: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let rubric = rubric.and_then(|r| {
        if r.name == name && !r.criteria.is_empty() {
            Ok(r)
        } else {
            Err(format!("rubric `{}` read where `{name}` was asked", r.name))
        }
    });
    match rubric {
        Ok(rubric) => vec![DebateEvent::RubricRead { rubric }],
        Err(e) => {
            let mut events = vec![step_failed(
                StepId::TrustMemory,
                format!("judged by the built-in {name} rubric: {e}"),
                now,
            )];
            events.extend(
                agon_core::rubric::Rubric::builtin(name)
                    .map(|rubric| DebateEvent::RubricRead { rubric }),
            );
            events
        }
    }
}

fn trust_events(
    board: &Blackboard,
    debate: &DebateId,
    read: &TrustRead,
    memories: Result<Vec<Option<AgentMemory>>, String>,
    now: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let (round, candidates) = match read {
        TrustRead::DevilsAdvocate { round, candidates } => (round, candidates),
        TrustRead::Standings { agents } => return standings_events(agents, memories, now),
        TrustRead::Rubric { .. } => return Vec::new(),
    };
    let names: Vec<(PersonaId, String)> = candidates
        .iter()
        .map(|p| (p.clone(), board.persona_name(p).to_owned()))
        .collect();
    let mut events = Vec::new();
    let known = memories_or_warning(
        memories,
        &format!("devil's advocate of round {round} drawn without trust scores"),
        now,
        &mut events,
    );
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
            round,
            max_rounds,
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
                    // Numbered after the agent's questions of earlier rounds.
                    let before = board
                        .messages()
                        .iter()
                        .filter(|m| {
                            m.kind == agon_core::MessageKind::ClarificationQuestion
                                && &m.persona == agent
                        })
                        .count();
                    qs.iter().enumerate().map(move |(i, text)| Question {
                        agent: agent.clone(),
                        agent_name: persona.map_or_else(|| agent.to_string(), |p| p.name.clone()),
                        role: persona.and_then(|p| p.specialty),
                        id: format!("q{}", before + i + 1),
                        number: before + i + 1,
                        text: text.clone(),
                    })
                })
                .collect();
            Ok(Outcome {
                events: Vec::new(),
                then: Some(Step::AskHuman(HumanAsk {
                    questions,
                    asked,
                    round: *round,
                    last: *round >= *max_rounds,
                })),
            })
        }
        Ask::Summaries(jobs) => {
            let end = board.messages().len();
            let events = jobs
                .iter()
                .zip(answers)
                .flat_map(|(job, answer)| {
                    let before_chars = match &job.phase {
                        Phase::JudgeSummary { .. } => total_chars(&judge_final_round(board)),
                        _ => history_chars(board, &job.persona),
                    };
                    synthesis::summary_event(board, job, end, before_chars, text(answer), now)
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
                    match synthesis::solution_events(board, *round, judge, out, now) {
                        Ok(events) => Ok(Outcome::events(events)),
                        // Recorded, so the planner asks again with one
                        // more failure (and a resumed run too).
                        Err(reason) => Ok(Outcome::events(vec![step_failed(
                            StepId::Solution(*round),
                            format!("structured attempt {} failed: {reason}", failures.len() + 1),
                            now,
                        )])),
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
            Ok(Outcome::events(rolling_summary_event(
                board,
                *fold,
                *max_tokens,
                answer,
                now,
            )))
        }
    }
}

/// The event of a rolling summary: `summary_recorded` with `fold` as its
/// span (the text cut to the share's characters, about 4 per token, so a
/// long summary cannot crowd out the window), or a `rolling_summary`
/// warning (the view then cuts the window to fit; the session goes on).
/// The text is cleaned as a text field of `board`; its repairs follow it
/// (`output_repaired`), and junk is the warning.
fn rolling_summary_event(
    board: &Blackboard,
    fold: MessageSpan,
    max_tokens: usize,
    answer: Answer,
    now: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let messages = board.messages();
    let at = messages.len();
    let step = StepId::RollingSummary { at };
    let answer = match answer {
        Answer::NotAsked(reason) => {
            return vec![step_failed(
                StepId::RollingSummary { at: fold.end },
                reason,
                now,
            )];
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
            let valid = agon_extract::SummaryText::validate(
                &truncate_chars(a.text.trim(), max_chars),
                max_chars,
                "rolling summary",
                board,
            );
            let Some(text) = valid.value().as_ref().map(|t| t.0.clone()) else {
                return vec![step_failed(
                    step,
                    format!("the summary was unusable ({})", valid.notes().join("; ")),
                    now,
                )];
            };
            let repaired = (!valid.notes().is_empty()).then(|| DebateEvent::OutputRepaired {
                step: step.clone(),
                notes: valid.notes().to_vec(),
            });
            let recorded = DebateEvent::SummaryRecorded {
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
            };
            std::iter::once(recorded).chain(repaired).collect()
        }
        Ok(_) => vec![step_failed(step, "the summary came back empty", now)],
        Err(reason) => vec![step_failed(step, reason, now)],
    }
}
