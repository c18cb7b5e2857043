//! The questions a protocol asks: of models ([`Ask`]), of the person at
//! hand ([`HumanAsk`]) and of the trust memory ([`TrustRead`]), the calls
//! they make and the answers that come back. What each call's prompt is and
//! what its answers become is in [`crate::ask`].

use agon_context::Phase;
use agon_context::prompts::Prompt;
pub use agon_core::ModelRole;
use agon_core::{ClaimId, CruxRoomId, MessageSpan, PersonaId, StepId, SummaryScope};
use agon_trust::AgentMemory;
use serde_json::Value;

use crate::clarify::Asked;
use crate::extract::{ModelFailure, ModelOutput};
use crate::turn::{AspectSource, Speak, Start, SummaryJob};

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
    /// The assembled context handed to [`crate::ask::request`], if the prompt has one.
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
    /// or [`crate::ask::request`] had no prompt): why.
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
    /// The rubric [`TrustRead::Rubric`] names, or why it could not be read.
    Rubric(Result<agon_core::rubric::Rubric, String>),
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
    /// `clarification_round_ended` are appended in one batch (so a round is
    /// never run twice, even when nobody asked anything), with the
    /// `round_started` of round 1 when it is the last clarification round
    /// (nobody asked anything, or `round` reached `max_rounds`). Rounds
    /// after the first are follow-ups: the agents see every earlier
    /// question with its answer.
    Clarify {
        /// Who asks, in order.
        agents: Vec<PersonaId>,
        /// Most questions per agent.
        max_questions: usize,
        /// This clarification round (1: the first asking).
        round: u32,
        /// Clarification rounds at most (dialectic's
        /// `clarificationsMaxIterations`).
        max_rounds: u32,
    },
    /// Write summaries concurrently; each becomes its `summary_recorded`,
    /// or a `step_failed` warning (the full history is used instead).
    Summaries(Vec<SummaryJob>),
    /// The judge synthesizes the solution after `round`: a structured
    /// solution; after two failed attempts (`failures`, the warnings the
    /// log holds for the round's solution), a plain-text one and a
    /// warning.
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

impl Ask {
    /// The calls, in the order their answers are passed to [`crate::ask::convert`].
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
    /// The clarification round (1: the first asking).
    pub round: u32,
    /// Whether no follow-up round may come after this one.
    pub last: bool,
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
    /// `q1`, `q2`, … within the agent's questions, numbered across the
    /// clarification rounds (a follow-up's first question after two
    /// earlier ones is `q3`).
    pub id: String,
    /// The question's number among the agent's questions (1-based, across
    /// rounds): an answers file's list is read at this position.
    pub number: usize,
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
    /// Read the agents' standings once, when the debate started, and
    /// record `trust_standings_read`: prompts that show an agent's
    /// feedback order and label it by trust. Without the memories, a
    /// `trust_memory` warning and no standings.
    Standings {
        /// The debate's agents.
        agents: Vec<PersonaId>,
    },
    /// Read the current version of the living rubric `name` once, when the
    /// debate started, and record `rubric_read`. Without the store's
    /// rubric, a `trust_memory` warning and the built-in version.
    Rubric {
        /// Which rubric (`dialectic`, `structured`).
        name: String,
    },
}

impl TrustRead {
    /// Whose memories are read, in order.
    pub fn agents(&self) -> &[PersonaId] {
        match self {
            Self::DevilsAdvocate { candidates, .. } => candidates,
            Self::Standings { agents } => agents,
            Self::Rubric { .. } => &[],
        }
    }

    /// A short name for progress displays and spans.
    pub fn label(&self) -> String {
        match self {
            Self::DevilsAdvocate { round, .. } => format!("devil's advocate of round {round}"),
            Self::Standings { .. } => "the agents' trust".to_owned(),
            Self::Rubric { name } => format!("the {name} rubric"),
        }
    }
}
