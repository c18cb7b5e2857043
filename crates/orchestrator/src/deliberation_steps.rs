//! The interpreter's deliberation steps (seeds 001 + 002): the listening
//! agents' "should I respond?" and the rolling summary.

use std::time::Instant;

use agon_context::Phase;
use agon_context::prompts::deliberation as prompts;
use agon_core::{DebateEvent, DebateSummary, MessageSpan, PersonaId, StepId, SummaryScope};
use agon_extract::{ListenAnswer, Payload, truncate_chars};
use agon_llm::ChatRequest;
use agon_protocol::deliberation::{bid_from_output, listen_events};
use agon_protocol::step_failed;

use crate::error::OrchestratorError;
use crate::interpreter::Interpreter;
use crate::models::Role;

/// Characters per token assumed when a word limit is derived from tokens.
const WORDS_PER_TOKEN: f64 = 0.75;

impl Interpreter {
    /// Asks every agent (concurrently, with the evaluation model) whether
    /// it wants to speak at `turn`, from the brief context; records the
    /// answers as `speakers_evaluated` in the order asked. A failed answer
    /// counts as a decline and is a `listen` warning.
    pub(crate) async fn listen(
        &self,
        turn: u32,
        agents: &[PersonaId],
        budget_tokens: usize,
    ) -> Result<(), OrchestratorError> {
        let ctx = &self.ctx;
        let budget = agon_context::ContextBudget::new(budget_tokens).unwrap_or(ctx.budget);
        let asks = agents.iter().map(|agent| async move {
            let prompt = self
                .shared
                .read(|bb| {
                    let persona = bb.persona(agent)?;
                    let context = ctx.assembler.assemble(
                        bb,
                        agent.as_str(),
                        &Phase::Listen { turn },
                        budget,
                        &Default::default(),
                    );
                    Some(context.map(|c| prompts::listen(persona, &c.text)))
                })
                .await;
            let prompt = match prompt {
                None => return Err("unknown agent".to_owned()),
                Some(Err(e)) => return Err(e.to_string()),
                Some(Ok(prompt)) => prompt,
            };
            let output = ctx
                .structured_call(
                    Role::Evaluator,
                    prompt,
                    ListenAnswer::NAME,
                    ListenAnswer::json_schema(),
                )
                .await;
            Ok(output)
        });
        let answers = futures::future::join_all(asks).await;
        let heard = agents
            .iter()
            .zip(answers)
            .map(|(agent, answer)| {
                let heard = answer.and_then(|output| bid_from_output(agent, output));
                (agent.clone(), heard)
            })
            .collect();
        self.shared
            .append(listen_events(turn, heard, chrono::Utc::now()))
            .await
    }

    /// Folds the messages of `fold` into the rolling summary (seed 001)
    /// with the reflector's model; records the summary with `fold` as its
    /// span, or a `rolling_summary` warning (the view then cuts the window
    /// to fit; the session goes on).
    pub(crate) async fn rolling_summary(
        &self,
        fold: MessageSpan,
        max_tokens: usize,
    ) -> Result<(), OrchestratorError> {
        let ctx = &self.ctx;
        let max_words = ((max_tokens as f64) * WORDS_PER_TOKEN).max(50.0) as usize;
        let built = self
            .shared
            .read(|bb| {
                let at = bb.messages().len();
                let before: usize = bb.messages()
                    [fold.start.min(bb.messages().len())..fold.end.min(bb.messages().len())]
                    .iter()
                    .map(|m| m.content.chars().count())
                    .sum();
                prompts::rolling_summary(bb, fold, max_words).map(|p| (p, before, at))
            })
            .await;
        let now = chrono::Utc::now();
        let Some((prompt, before_chars, at)) = built else {
            return self
                .shared
                .append(vec![step_failed(
                    StepId::RollingSummary { at: fold.end },
                    format!(
                        "messages {}–{} are not in the transcript",
                        fold.start + 1,
                        fold.end
                    ),
                    now,
                )])
                .await;
        };
        let step = StepId::RollingSummary { at };
        let role = Role::Reflector;
        let temperature = ctx.temperature(role);
        let request = ChatRequest::new(prompt.user)
            .with_system(prompt.system)
            .with_temperature(temperature)
            .with_max_tokens(u32::try_from(max_tokens).unwrap_or(u32::MAX).max(64));
        let started = Instant::now();
        let result = ctx.models.get(role, None).complete(request).await;
        let now = chrono::Utc::now();
        // A summary longer than its share would crowd out the window: it is
        // cut to the share's characters (about 4 per token).
        let max_chars = max_tokens.saturating_mul(4).max(200);
        let event = match result {
            Ok(response) if !response.content.trim().is_empty() => {
                let text = truncate_chars(response.content.trim(), max_chars);
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
                            (temperature * 100.0).round().clamp(0.0, 1000.0) as u16
                        ),
                        latency_ms: Some(started.elapsed().as_millis() as u64),
                        tokens: Some(response.usage.input_tokens + response.usage.output_tokens),
                        model: Some(response.model),
                        time: now,
                    },
                }
            }
            Ok(_) => step_failed(step, "the summary came back empty", now),
            Err(e) => step_failed(step, e.to_string(), now),
        };
        self.shared.append(vec![event]).await
    }
}
