//! One utterance: recall memories, assemble the context, stream the model's
//! answer to subscribers, clean it, and append it as a message. What the
//! context shows besides the blackboard (memories, evidence) is gathered
//! in [`extras`].

mod extras;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agon_context::prompts::{self, Prompt};
use agon_core::{MessageMeta, PersonaId, StepId, TurnKey};
use agon_extract::clean_utterance;
use agon_llm::{ChatModel, ChatRequest};
use agon_protocol::{Speak, Voice};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::calls::RunCtx;
use crate::error::OrchestratorError;
use crate::models::Role;
use crate::shared::Shared;
use crate::update::DebateUpdate;

/// What became of a turn.
pub(crate) enum Spoken {
    /// The message was appended.
    Message,
    /// Two empty answers: the skip was recorded.
    Skipped,
    /// Aborted mid-generation: nothing was recorded.
    Aborted,
}

/// A turn's generated text, before it is recorded.
enum Generated {
    /// The cleaned utterance, the call behind it, and what cleaning repaired.
    Text(String, MessageMeta, Vec<String>),
    /// Empty twice: the speaker's name and why, for the skip record.
    Empty(String, String),
    /// Not done when the round's time ran out: the speaker's name and the limit.
    TimedOut(String, Duration),
    /// Aborted mid-generation.
    Aborted,
    /// Not asked: the debate's budget is spent (nothing is recorded; the
    /// planner finishes instead).
    Refused,
}

/// One streamed generation: its text, the usage the provider reported, and
/// its wall time.
struct Streamed {
    text: String,
    usage: Option<agon_llm::Usage>,
    /// The model that answered, when a fallback chain says so.
    model: Option<String>,
    /// The provider's finish reason (`length` / `max_tokens`: the token
    /// limit was hit).
    finish: Option<String>,
    latency: Duration,
}

/// The model role of a voice.
pub(crate) fn role_of(voice: Voice) -> Role {
    match voice {
        Voice::Debater | Voice::Agent => Role::Debater,
        Voice::Judge => Role::Judge,
    }
}

/// Speaks one turn.
pub(crate) struct Speaker<'a> {
    pub(crate) shared: &'a Shared,
    pub(crate) ctx: &'a RunCtx,
    pub(crate) abort: &'a CancellationToken,
}

impl Speaker<'_> {
    fn debate(&self) -> String {
        self.shared.debate.to_string()
    }

    /// The prompt of a turn: the persona's system prompt and its assembled
    /// context (or, for the judge, the judge's brief), with the bytes at
    /// the start of its user prompt that other calls of the round send
    /// alike (0 when none are).
    async fn prompt_for(
        &self,
        speak: &Speak,
        lookahead: bool,
    ) -> Result<(Prompt, usize), OrchestratorError> {
        let extras = self.extras_for(speak, lookahead).await?;
        let ctx = self.ctx;
        let words = ctx.settings.utterance_words;
        self.shared
            .read(|bb| {
                let persona = bb.persona(&speak.persona).ok_or_else(|| {
                    OrchestratorError::UnknownPersona {
                        debate: self.debate(),
                        persona: speak.persona.to_string(),
                    }
                })?;
                let instruction = prompts::utterance_instruction(bb, persona, &speak.instruction);
                if speak.voice == Voice::Judge {
                    let brief = prompts::judge_brief(bb, ctx.budget.total() * 4);
                    return Ok((
                        Prompt {
                            system: speak.voice.system_prompt(bb, words),
                            user: format!("{brief}\n\n{instruction}"),
                        },
                        0,
                    ));
                }
                let (context, shared, instruction) = match &speak.phase {
                    Some(phase) => {
                        let assembled = ctx
                            .assembler
                            .assemble(bb, speak.persona.as_str(), phase, ctx.budget, &extras)
                            .map_err(|source| OrchestratorError::Context {
                                debate: self.debate(),
                                persona: speak.persona.to_string(),
                                source,
                            })?;
                        let instruction = assembled.instruction(instruction);
                        (assembled.text, assembled.shared_prefix, instruction)
                    }
                    None => (String::new(), 0, instruction),
                };
                let system = speak.voice.system_prompt(bb, words);
                Ok((
                    Prompt {
                        system,
                        user: if context.is_empty() {
                            instruction
                        } else {
                            format!("{context}\n\n{instruction}")
                        },
                    },
                    shared,
                ))
            })
            .await
    }

    /// Generates, streams and appends one utterance.
    pub(crate) async fn speak(&self, speak: &Speak) -> Result<Spoken, OrchestratorError> {
        let generated = self.generate_turn(speak, true).await?;
        self.record(speak, generated).await
    }

    /// Generates several utterances concurrently, then appends them in the
    /// listed order. If one is aborted, none is recorded (all of them are
    /// generated again on resume). A turn not done by `deadline` is
    /// recorded as skipped (the round's time ran out).
    pub(crate) async fn speak_all(
        &self,
        group: &[Speak],
        deadline: Option<(tokio::time::Instant, Duration)>,
    ) -> Result<Spoken, OrchestratorError> {
        let generated = futures::future::try_join_all(group.iter().map(|s| async move {
            let Some((at, limit)) = deadline else {
                return self.generate_turn(s, false).await;
            };
            let late = tokio::time::Instant::now() >= at;
            let generated = if late {
                // The round's time is already up: the turn is not started.
                Err(())
            } else {
                tokio::time::timeout_at(at, self.generate_turn(s, false))
                    .await
                    .map_err(|_| ())
            };
            match generated {
                Ok(generated) => generated,
                Err(()) => {
                    let name = self
                        .shared
                        .read(|bb| bb.persona_name(&s.persona).to_owned())
                        .await;
                    Ok(Generated::TimedOut(name, limit))
                }
            }
        }))
        .await?;
        if generated.iter().any(|g| matches!(g, Generated::Aborted)) {
            return Ok(Spoken::Aborted);
        }
        for (speak, generated) in group.iter().zip(generated) {
            self.record(speak, generated).await?;
        }
        Ok(Spoken::Message)
    }

    /// The model's utterance for a turn (retried once when empty);
    /// `lookahead` for a turn that runs alone: the turn after it is
    /// prepared while it waits on its model.
    async fn generate_turn(
        &self,
        speak: &Speak,
        lookahead: bool,
    ) -> Result<Generated, OrchestratorError> {
        let span = tracing::info_span!("speak", debate = %self.shared.debate, turn = %speak.key);
        self.generate_inner(speak, lookahead).instrument(span).await
    }

    async fn generate_inner(
        &self,
        speak: &Speak,
        lookahead: bool,
    ) -> Result<Generated, OrchestratorError> {
        let (prompt, shared) = self.prompt_for(speak, lookahead).await?;
        let (name, others) = self
            .shared
            .read(|bb| {
                let others: Vec<String> = bb
                    .personas()
                    .iter()
                    .filter(|p| p.id != speak.persona)
                    .map(|p| p.name.clone())
                    .collect();
                (bb.persona_name(&speak.persona).to_owned(), others)
            })
            .await;
        let others: Vec<&str> = others.iter().map(String::as_str).collect();
        let role = role_of(speak.voice);
        let model = self.ctx.models.get(role, Some(&speak.persona));
        let purpose = StepId::Utterance(speak.key.clone()).to_string();
        let request = |user: String| {
            // The shared start is marked while the prompt still begins
            // with it (a retry only adds to the end).
            let shared = if prompt
                .user
                .as_bytes()
                .get(..shared)
                .is_some_and(|start| user.as_bytes().starts_with(start))
            {
                shared
            } else {
                0
            };
            ChatRequest::new(user)
                .with_shared_prefix(shared)
                .with_system(prompt.system.clone())
                .with_temperature(self.ctx.temperature_for(role, Some(&speak.persona)))
                .with_max_tokens(self.ctx.settings.limits.utterance_max_tokens)
                .with_purpose(purpose.clone())
        };
        if speak.voice != Voice::Judge
            && let Some((names, limit)) = self.ctx.settings.tools.get(&speak.persona)
        {
            return self
                .generate_with_tools(
                    speak,
                    request(prompt.user.clone()),
                    &model,
                    (&name, &others),
                    names,
                    *limit,
                )
                .await;
        }
        let mut user = prompt.user.clone();
        let mut discarded: Vec<String> = Vec::new();
        let mut attempt = 0;
        let mut broken_streams = 0;
        while attempt < 2 {
            if !self.begin_turn(speak, &name) {
                return Ok(Generated::Refused);
            }
            let (cleaned, meta) = match self
                .generate(&model, role, request(user.clone()), speak)
                .await
            {
                Ok(Some(streamed)) => {
                    let hit_limit = streamed
                        .finish
                        .as_deref()
                        .is_some_and(agon_llm::is_token_limit_finish);
                    let cleaned = clean_utterance(&streamed.text, &name, &others, hit_limit);
                    let meta = MessageMeta {
                        model: streamed
                            .model
                            .clone()
                            .unwrap_or_else(|| model.model_id().to_owned()),
                        latency_ms: streamed.latency.as_millis() as u64,
                        input_tokens: streamed.usage.map_or(0, |u| u.input_tokens),
                        output_tokens: streamed.usage.map_or(0, |u| u.output_tokens),
                        truncated: cleaned.truncated,
                    };
                    (cleaned, meta)
                }
                Ok(None) => {
                    self.shared.send(DebateUpdate::TurnDiscarded {
                        persona: speak.persona.clone(),
                        turn: speak.key.clone(),
                        reason: "interrupted".into(),
                    });
                    return Ok(Generated::Aborted);
                }
                // Nothing of a turn is recorded before it is complete, so
                // an answer that broke off (a dropped or stalled stream, a
                // truncated or garbled one) is generated again.
                Err(source) if broken_streams < MAX_STREAM_RESTARTS && broke_off(&source) => {
                    broken_streams += 1;
                    self.shared.send(DebateUpdate::TurnDiscarded {
                        persona: speak.persona.clone(),
                        turn: speak.key.clone(),
                        reason: format!("the answer broke off ({source}), generating it again"),
                    });
                    tracing::warn!(turn = %speak.key, error = %source, "the answer broke off; generating it again");
                    continue;
                }
                Err(source) => {
                    return Err(OrchestratorError::Provider {
                        debate: self.debate(),
                        what: format!("utterance of {name} ({})", speak.key),
                        source: Box::new(source),
                    });
                }
            };
            if !cleaned.text.is_empty() {
                self.shared
                    .send(DebateUpdate::Usage(self.ctx.models.ledger().total()));
                return Ok(Generated::Text(cleaned.text, meta, cleaned.notes));
            }
            let why = if cleaned.notes.is_empty() {
                "empty utterance".to_owned()
            } else {
                format!("nothing left after cleaning: {}", cleaned.notes.join("; "))
            };
            self.shared.send(DebateUpdate::TurnDiscarded {
                persona: speak.persona.clone(),
                turn: speak.key.clone(),
                reason: if attempt == 0 {
                    format!("{why}, retrying")
                } else {
                    format!("{why} twice, turn skipped")
                },
            });
            if !cleaned.notes.is_empty() {
                // The retry is told what went wrong (a retry of the same
                // prompt would likely get the same answer).
                user = format!("{}\n\n{}", prompt.user, prompts::speak_only_as(&name));
            }
            discarded.push(why);
            attempt += 1;
        }
        self.shared
            .send(DebateUpdate::Usage(self.ctx.models.ledger().total()));
        Ok(Generated::Empty(name, discarded.join(" / ")))
    }

    /// Admits a model call for `speak` against the debate's budget and
    /// tells subscribers the turn started; `false`: the budget is spent.
    fn begin_turn(&self, speak: &Speak, name: &str) -> bool {
        if self
            .ctx
            .guard
            .admit(&StepId::Utterance(speak.key.clone()))
            .is_err()
        {
            return false;
        }
        self.shared.send(DebateUpdate::TurnStarted {
            persona: speak.persona.clone(),
            name: name.to_owned(),
            key: speak.key.clone(),
        });
        true
    }

    /// A contribution of an agent with tools: not streamed (the model may
    /// call tools first, each call recorded as it returns); the answer is
    /// sent to subscribers whole.
    async fn generate_with_tools(
        &self,
        speak: &Speak,
        request: ChatRequest,
        model: &Arc<dyn ChatModel>,
        (name, others): (&str, &[&str]),
        names: &[String],
        limit: usize,
    ) -> Result<Generated, OrchestratorError> {
        if !self.begin_turn(speak, name) {
            return Ok(Generated::Refused);
        }
        let answered = match crate::tool_turn::answer(
            self.shared,
            self.ctx,
            speak,
            model,
            request,
            names,
            limit,
            self.abort,
        )
        .await?
        {
            crate::tool_turn::ToolTurn::Answered(answered) => answered,
            crate::tool_turn::ToolTurn::Aborted => {
                self.shared.send(DebateUpdate::TurnDiscarded {
                    persona: speak.persona.clone(),
                    turn: speak.key.clone(),
                    reason: "interrupted".into(),
                });
                return Ok(Generated::Aborted);
            }
            crate::tool_turn::ToolTurn::Refused => {
                self.shared.send(DebateUpdate::TurnDiscarded {
                    persona: speak.persona.clone(),
                    turn: speak.key.clone(),
                    reason: "the debate's budget is spent".into(),
                });
                return Ok(Generated::Refused);
            }
        };
        self.shared
            .send(DebateUpdate::Usage(self.ctx.models.ledger().total()));
        let hit_limit = answered
            .finish
            .as_deref()
            .is_some_and(agon_llm::is_token_limit_finish);
        let cleaned = clean_utterance(&answered.text, name, others, hit_limit);
        if cleaned.text.is_empty() {
            return Ok(Generated::Empty(
                name.to_owned(),
                "no usable answer after its tool calls".into(),
            ));
        }
        self.shared.send(DebateUpdate::Token {
            persona: speak.persona.clone(),
            turn: speak.key.clone(),
            delta: cleaned.text.clone(),
        });
        let mut meta = answered.meta;
        meta.truncated = cleaned.truncated;
        Ok(Generated::Text(cleaned.text, meta, cleaned.notes))
    }

    /// Appends a generated turn: its message, or the record of its skip.
    async fn record(
        &self,
        speak: &Speak,
        generated: Generated,
    ) -> Result<Spoken, OrchestratorError> {
        match generated {
            Generated::Aborted => Ok(Spoken::Aborted),
            Generated::Refused => Ok(Spoken::Skipped),
            Generated::Empty(name, why) => {
                self.shared
                    .append(vec![agon_protocol::step_failed(
                        StepId::Utterance(speak.key.clone()),
                        format!("{name} produced no usable utterance twice ({why}); turn skipped"),
                        chrono::Utc::now(),
                    )])
                    .await?;
                Ok(Spoken::Skipped)
            }
            Generated::TimedOut(name, limit) => {
                self.shared
                    .append(vec![agon_protocol::step_failed(
                        StepId::Utterance(speak.key.clone()),
                        format!(
                            "{name} was not done when the round's {} s ran out; turn skipped",
                            limit.as_secs()
                        ),
                        chrono::Utc::now(),
                    )])
                    .await?;
                Ok(Spoken::Skipped)
            }
            Generated::Text(text, meta, notes) => {
                let citations =
                    agon_memory::check_citations(self.ctx.memory.as_ref(), &speak.persona, &text)
                        .await;
                let id = self
                    .shared
                    .append_with(|bb| {
                        let mut message = speak.message(bb, text, chrono::Utc::now());
                        message.meta = Some(meta);
                        let id = message.id.clone();
                        // What the protocol derives from the message by its
                        // own rules (its detection patterns) goes in the same batch.
                        let derived = self.ctx.protocol.message_events(bb, &message);
                        let cited = citations.map(|c| c.event(&message));
                        let mut events = vec![agon_core::DebateEvent::MessageAppended { message }];
                        events.extend(derived);
                        events.extend(cited);
                        if !notes.is_empty() {
                            events.push(agon_core::DebateEvent::OutputRepaired {
                                step: StepId::Utterance(speak.key.clone()),
                                notes,
                            });
                        }
                        (events, id)
                    })
                    .await?;
                tracing::debug!(message = %id, turn = %speak.key, "appended");
                Ok(Spoken::Message)
            }
        }
    }

    /// Streams one generation to subscribers; `None` when aborted.
    async fn generate(
        &self,
        model: &Arc<dyn ChatModel>,
        role: Role,
        request: ChatRequest,
        speak: &Speak,
    ) -> Result<Option<Streamed>, agon_llm::ProviderError> {
        let span = tracing::debug_span!(
            "model_call",
            role = role.as_str(),
            model = model.model_id(),
            streamed = true,
        );
        let started = Instant::now();
        let result = self
            .stream_text(model, request, &speak.persona, &speak.key)
            .instrument(span.clone())
            .await;
        span.in_scope(|| match &result {
            Ok(Some(streamed)) => {
                tracing::debug!(
                    output_chars = streamed.text.len(),
                    latency_ms = started.elapsed().as_millis() as u64,
                    "utterance generated"
                );
                // The raw text, before cleaning (`-vvv`).
                tracing::trace!(output = %streamed.text, finish = ?streamed.finish, "utterance output");
            }
            Ok(None) => tracing::debug!("generation aborted"),
            Err(e) => tracing::warn!(error = %e, "generation failed"),
        });
        result
    }

    async fn stream_text(
        &self,
        model: &Arc<dyn ChatModel>,
        request: ChatRequest,
        persona: &PersonaId,
        turn: &TurnKey,
    ) -> Result<Option<Streamed>, agon_llm::ProviderError> {
        let started = Instant::now();
        let abort = self.abort.clone();
        let mut stream = tokio::select! {
            s = model.stream(request) => s?,
            () = abort.cancelled() => return Ok(None),
        };
        let mut text = String::new();
        let mut usage = None;
        let mut answered_by = None;
        let mut finish = None;
        loop {
            tokio::select! {
                chunk = stream.next() => match chunk {
                    Some(chunk) => {
                        let chunk = chunk?;
                        if chunk.usage.is_some() {
                            usage = chunk.usage;
                        }
                        if chunk.model.is_some() {
                            answered_by = chunk.model.clone();
                        }
                        if chunk.finish_reason.is_some() {
                            finish = chunk.finish_reason.clone();
                        }
                        if !chunk.delta.is_empty() {
                            text.push_str(&chunk.delta);
                            self.shared.send(DebateUpdate::Token { persona: persona.clone(), turn: turn.clone(), delta: chunk.delta });
                        }
                    }
                    None => return Ok(Some(Streamed { text, usage, model: answered_by, finish, latency: started.elapsed() })),
                },
                () = abort.cancelled() => return Ok(None),
            }
        }
    }
}

/// How many times a turn whose answer broke off is generated again.
const MAX_STREAM_RESTARTS: u32 = 2;

/// Whether a failed generation broke off in a way a new attempt may not
/// meet: a dropped connection, a timeout, a server error, a garbled or
/// truncated stream (never a refused key or a bad request).
fn broke_off(error: &agon_llm::ProviderError) -> bool {
    error.is_retryable() || matches!(error, agon_llm::ProviderError::MalformedResponse { .. })
}
