//! A contribution with tools: the agent's model may call its tools
//! (`agon-tools`) before it answers; every call is a `tool_called` event,
//! appended as it returns, so a resumed turn reuses what was called
//! instead of calling again. Results are cut to the context budget's size
//! (four characters a token, half the budget), and after `limit` calls the
//! model answers without tools.

use std::sync::Arc;
use std::time::Instant;

use agon_core::{DebateEvent, MessageMeta, ToolCallRecord};
use agon_llm::{ChatMessage, ChatModel, ChatRequest, ToolSpec, Usage};
use agon_protocol::Speak;
use agon_tools::{ContextDir, ToolBox, ToolError, ToolOutput};

use crate::calls::RunCtx;
use crate::error::OrchestratorError;
use crate::shared::Shared;

/// How a tool turn ended.
pub(crate) enum ToolTurn {
    /// The model answered.
    Answered(Answered),
    /// `abort` fired: the calls made stay recorded, the answer is not (a
    /// resume asks again and reuses them).
    Aborted,
    /// The debate's budget was spent in full before one of the turn's
    /// model calls (the guard keeps the refusal): the calls made stay
    /// recorded, the turn is skipped.
    Refused,
}

/// What a tool turn produced: the raw answer and its call metadata.
pub(crate) struct Answered {
    pub(crate) text: String,
    pub(crate) meta: MessageMeta,
    pub(crate) finish: Option<String>,
}

/// The tools `names` for `speak`'s agent.
async fn toolbox(
    shared: &Shared,
    ctx: &RunCtx,
    speak: &Speak,
    names: &[String],
) -> Result<ToolBox, OrchestratorError> {
    let failure = |source: ToolError| OrchestratorError::Tools {
        debate: shared.debate.to_string(),
        persona: speak.persona.to_string(),
        source,
    };
    let dir = match &ctx.settings.context_dir {
        Some(path) => Some(ContextDir::new(path).map_err(failure)?),
        None => None,
    };
    let memory = ctx.memory.as_ref().map(|m| (m, &shared.debate));
    let mcp = ctx.mcp.as_deref();
    shared
        .read(|board| ToolBox::build(names, dir.as_ref(), memory, mcp, board))
        .await
        .map_err(failure)
}

/// `output` cut to `max_chars` characters, saying so.
fn capped(mut output: ToolOutput, max_chars: usize) -> ToolOutput {
    if let Some((cut, _)) = output.content.char_indices().nth(max_chars) {
        let total = output.content.chars().count();
        output.content.truncate(cut);
        output
            .content
            .push_str(&format!("\n… (cut at {max_chars} of {total} characters)"));
    }
    output
}

/// Runs `speak`'s contribution with tools: asks `model` with the agent's
/// `names` tools, calls what it asks for (at most `limit` calls), and
/// returns its answer. Every model call of the turn is admitted against
/// the debate's budget right before it is made, as every other call is: a
/// turn of `limit` tool calls makes up to `limit` + 1 model calls.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn answer(
    shared: &Shared,
    ctx: &RunCtx,
    speak: &Speak,
    model: &Arc<dyn ChatModel>,
    request: ChatRequest,
    names: &[String],
    limit: usize,
    abort: &tokio_util::sync::CancellationToken,
) -> Result<ToolTurn, OrchestratorError> {
    let tools = toolbox(shared, ctx, speak, names).await?;
    let specs: Vec<ToolSpec> = tools
        .tools()
        .iter()
        .map(|t| ToolSpec {
            name: t.name().to_owned(),
            description: t.description().to_owned(),
            parameters: t.parameters(),
        })
        .collect();
    let recorded: Vec<ToolCallRecord> = shared
        .read(|bb| bb.tool_calls_of(&speak.key).cloned().collect())
        .await;
    let provider = |source: agon_llm::ProviderError| OrchestratorError::Provider {
        debate: shared.debate.to_string(),
        what: format!("contribution with tools ({})", speak.key),
        source: Box::new(source),
    };
    let max_chars = ctx.budget.total() * 2;
    let started = Instant::now();
    let mut usage = Usage::default();
    let mut request = request;
    let mut calls_made = 0usize;
    let step = agon_core::StepId::Utterance(speak.key.clone());
    let (text, finish) = loop {
        if abort.is_cancelled() {
            return Ok(ToolTurn::Aborted);
        }
        // Right before the call: a turn of a parallel group may wait here
        // (the tools are built, the recorded calls read) while the others
        // spend what is left.
        if ctx.guard.admit(&step).is_err() {
            return Ok(ToolTurn::Refused);
        }
        if calls_made >= limit {
            let mut last = agon_llm::tools::without_tools(&request);
            last.messages.push(ChatMessage::user(
                "You have used all your tool calls: give your answer now.",
            ));
            let response = tokio::select! {
                r = model.complete(last) => r.map_err(provider)?,
                () = abort.cancelled() => return Ok(ToolTurn::Aborted),
            };
            usage += response.usage;
            break (response.content, response.finish_reason);
        }
        let turn = tokio::select! {
            t = model.complete_tools(request.clone(), &specs, calls_made) => t.map_err(provider)?,
            () = abort.cancelled() => return Ok(ToolTurn::Aborted),
        };
        usage += turn.response.usage;
        if turn.calls.is_empty() {
            break (turn.response.content, turn.response.finish_reason);
        }
        let calls: Vec<_> = turn.calls.into_iter().take(limit - calls_made).collect();
        request.messages.push(ChatMessage::assistant_calls(
            turn.response.content.clone(),
            calls.clone(),
        ));
        for call in &calls {
            let reused = recorded
                .get(calls_made)
                .filter(|r| r.name == call.name && r.arguments == call.arguments);
            let output = match reused {
                Some(r) => ToolOutput {
                    ok: r.ok,
                    content: r.result.clone(),
                },
                None => {
                    let output = match tools.get(&call.name) {
                        Some(tool) => tool.call(call.arguments.clone()).await,
                        None => ToolOutput::failed(&ToolError::Unavailable {
                            name: call.name.clone(),
                            reason: format!("not one of your tools ({})", tools.names().join(", ")),
                        }),
                    };
                    let output = capped(output, max_chars);
                    shared
                        .append(vec![DebateEvent::ToolCalled {
                            turn: speak.key.clone(),
                            persona: speak.persona.clone(),
                            call: calls_made as u32,
                            name: call.name.clone(),
                            arguments: call.arguments.clone(),
                            ok: output.ok,
                            result: output.content.clone(),
                        }])
                        .await?;
                    output
                }
            };
            request.messages.push(ChatMessage::tool_result(
                call,
                output.content.clone(),
                !output.ok,
            ));
            calls_made += 1;
        }
    };
    Ok(ToolTurn::Answered(Answered {
        text,
        meta: MessageMeta {
            model: model.model_id().to_owned(),
            latency_ms: started.elapsed().as_millis() as u64,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            truncated: false,
        },
        finish,
    }))
}
