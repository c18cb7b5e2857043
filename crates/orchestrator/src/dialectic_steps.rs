//! The interpreter's dialectic steps: clarifying questions and their
//! answers, perspective and judge summaries, the judge's solution.

use std::time::Instant;

use agon_context::perspective::{history_chars, judge_final_round, total_chars};
use agon_context::prompts::dialectic::{self, RoleKind};
use agon_context::{ContextBudget, Phase};
use agon_core::{PersonaId, SummaryScope};
use agon_extract::{ClarifyingQuestions, Payload, SolutionPayload};
use agon_llm::ChatRequest;
use agon_protocol::synthesis::{self, SummaryAnswer};
use agon_protocol::{SummaryJob, clarify};

use crate::answers::Question;
use crate::error::OrchestratorError;
use crate::interpreter::Interpreter;
use crate::models::Role;

/// The larger budget of inputs that are summarized or judged whole
/// (a perspective, the final round): twice the context budget.
fn wide(budget: ContextBudget) -> ContextBudget {
    ContextBudget::new(budget.total() * 2).unwrap_or(budget)
}

impl Interpreter {
    /// Asks every agent for its clarifying questions (concurrently), gets
    /// the user's answers, and appends questions, answers and the start of
    /// round 1 in one batch.
    pub(crate) async fn clarify(
        &self,
        agents: &[PersonaId],
        max: usize,
    ) -> Result<(), OrchestratorError> {
        let asks = agents.iter().map(|agent| async move {
            let prompt = self
                .shared
                .read(|bb| {
                    bb.persona(agent)
                        .map(|p| dialectic::clarification(bb, p, max))
                })
                .await;
            let Some(prompt) = prompt else {
                return (agent.clone(), Err("unknown agent".to_owned()));
            };
            let output = self
                .ctx
                .structured_call_as(
                    Role::Debater,
                    Some(agent),
                    prompt,
                    ClarifyingQuestions::NAME,
                    ClarifyingQuestions::json_schema(),
                )
                .await;
            (agent.clone(), clarify::questions_from_output(output, max))
        });
        let asked = futures::future::join_all(asks).await;
        let questions: Vec<Question> = self
            .shared
            .read(|bb| {
                asked
                    .iter()
                    .filter_map(|(agent, r)| Some((agent, &r.as_ref().ok()?.0)))
                    .flat_map(|(agent, qs)| {
                        let persona = bb.persona(agent);
                        qs.iter().enumerate().map(move |(i, text)| Question {
                            agent: agent.clone(),
                            agent_name: persona
                                .map_or_else(|| agent.to_string(), |p| p.name.clone()),
                            role: persona.and_then(|p| p.specialty.clone()),
                            id: format!("q{}", i + 1),
                            text: text.clone(),
                        })
                    })
                    .collect()
            })
            .await;
        let answers = match (&self.ctx.answerer, questions.is_empty()) {
            (_, true) => Vec::new(),
            (Some(answerer), false) => {
                answerer
                    .answer(&questions)
                    .await
                    .map_err(|e| OrchestratorError::Answers {
                        debate: self.shared.debate.to_string(),
                        source: e,
                    })?
            }
            (None, false) => vec![String::new(); questions.len()],
        };
        let now = chrono::Utc::now();
        self.shared
            .append_with(|bb| {
                (
                    clarify::clarification_events(bb.messages().len(), &asked, &answers, now),
                    (),
                )
            })
            .await
    }

    /// Writes the summaries concurrently; each appends its summary, or a
    /// warning when it failed (the full history is then used).
    pub(crate) async fn summarize(&self, jobs: &[SummaryJob]) -> Result<(), OrchestratorError> {
        let runs = jobs.iter().map(|job| self.summarize_one(job));
        for result in futures::future::join_all(runs).await {
            result?;
        }
        Ok(())
    }

    async fn summarize_one(&self, job: &SummaryJob) -> Result<(), OrchestratorError> {
        let ctx = &self.ctx;
        let is_judge = job.scope == SummaryScope::Judge;
        let built = self
            .shared
            .read(|bb| {
                let persona = bb.persona(&job.persona)?.clone();
                let before_chars = match &job.phase {
                    Phase::JudgeSummary { .. } => total_chars(&judge_final_round(bb)),
                    _ => history_chars(bb, &job.persona),
                };
                let content = ctx
                    .assembler
                    .assemble(
                        bb,
                        job.persona.as_str(),
                        &job.phase,
                        wide(ctx.budget),
                        &Default::default(),
                    )
                    .map(|c| c.text);
                Some((persona, before_chars, content, bb.messages().len()))
            })
            .await;
        let Some((persona, before_chars, content, end)) = built else {
            return Err(OrchestratorError::UnknownPersona {
                debate: self.shared.debate.to_string(),
                persona: job.persona.to_string(),
            });
        };
        let content = content.map_err(|source| OrchestratorError::Context {
            debate: self.shared.debate.to_string(),
            persona: job.persona.to_string(),
            source,
        })?;
        let prompt = if is_judge {
            dialectic::judge_summary(&persona, &content, job.max_chars, job.prompt.as_deref())
        } else {
            let role = persona
                .specialty
                .as_deref()
                .and_then(|r| r.parse::<RoleKind>().ok());
            dialectic::summary(
                &persona,
                role,
                &content,
                job.max_chars,
                job.prompt.as_deref(),
            )
        };
        let role = if is_judge { Role::Judge } else { Role::Debater };
        let temperature = ctx.temperature_for(role, Some(&job.persona));
        let model = ctx.models.get(role, Some(&job.persona));
        let max_tokens = u32::try_from(job.max_chars / 3 + 32).unwrap_or(u32::MAX);
        let request = ChatRequest::new(prompt.user)
            .with_system(prompt.system)
            .with_temperature(temperature)
            .with_max_tokens(max_tokens.min(ctx.config.utterance_max_tokens().max(256)));
        let started = Instant::now();
        let answer = model
            .complete(request)
            .await
            .map(|response| SummaryAnswer {
                text: response.content,
                temperature,
                latency_ms: started.elapsed().as_millis() as u64,
                tokens: response.usage.input_tokens + response.usage.output_tokens,
                model: response.model,
            })
            .map_err(|e| e.to_string());
        let event = synthesis::summary_event(job, end, before_chars, answer, chrono::Utc::now());
        self.shared.append(vec![event]).await
    }

    /// The judge's solution after `round`: structured (retried once), else
    /// a plain-text synthesis recorded with a warning.
    pub(crate) async fn judge(
        &self,
        judge: &PersonaId,
        round: u32,
    ) -> Result<(), OrchestratorError> {
        let ctx = &self.ctx;
        let built = self
            .shared
            .read(|bb| {
                let persona = bb.persona(judge)?.clone();
                let context = ctx
                    .assembler
                    .assemble(
                        bb,
                        judge.as_str(),
                        &Phase::Judgement { round },
                        wide(ctx.budget),
                        &Default::default(),
                    )
                    .map(|c| c.text);
                Some((persona, context))
            })
            .await;
        let Some((persona, context)) = built else {
            return Err(OrchestratorError::UnknownPersona {
                debate: self.shared.debate.to_string(),
                persona: judge.to_string(),
            });
        };
        let context = context.map_err(|source| OrchestratorError::Context {
            debate: self.shared.debate.to_string(),
            persona: judge.to_string(),
            source,
        })?;
        let mut failures = Vec::new();
        for _ in 0..2 {
            let output = ctx
                .structured_call_as(
                    Role::Judge,
                    Some(judge),
                    dialectic::synthesis(&persona, &context, true),
                    SolutionPayload::NAME,
                    SolutionPayload::json_schema(),
                )
                .await;
            match synthesis::solution_events(round, judge, output, chrono::Utc::now()) {
                Ok(events) => return self.shared.append(events).await,
                Err(reason) => failures.push(reason),
            }
        }
        let prompt = dialectic::synthesis(&persona, &context, false);
        let request = ChatRequest::new(prompt.user)
            .with_system(prompt.system)
            .with_temperature(ctx.temperature_for(Role::Judge, Some(judge)))
            .with_max_tokens(
                ctx.config
                    .utterance_max_tokens()
                    .max(ctx.config.budget.structured_max_tokens),
            );
        let response = ctx
            .models
            .get(Role::Judge, Some(judge))
            .complete(request)
            .await
            .map_err(|source| OrchestratorError::Provider {
                debate: self.shared.debate.to_string(),
                what: format!("plain-text synthesis of round {round}"),
                source: Box::new(source),
            })?;
        let Some(events) = synthesis::plain_solution_events(
            round,
            judge,
            &failures,
            &response.content,
            chrono::Utc::now(),
        ) else {
            return Err(OrchestratorError::Provider {
                debate: self.shared.debate.to_string(),
                what: format!("synthesis of round {round}"),
                source: Box::new(agon_llm::ProviderError::MalformedResponse {
                    provider: response.provider,
                    message: "the plain-text synthesis was empty".into(),
                }),
            });
        };
        self.shared.append(events).await
    }
}
