//! The seams: [`ChatModel`] and [`Embedder`]. Object-safe; callers hold
//! `Arc<dyn ChatModel>` / `Arc<dyn Embedder>`.

use std::pin::Pin;

use async_trait::async_trait;
use futures::Stream;

use crate::error::ProviderError;
use serde_json::{Value, json};

use crate::types::{
    ChatChunk, ChatRequest, ChatResponse, InputType, JsonResponse, JsonSchema, ToolCall, ToolSpec,
    ToolTurn,
};

/// A stream of completion chunks; an `Err` item ends it.
pub type ChatStream = Pin<Box<dyn Stream<Item = Result<ChatChunk, ProviderError>> + Send>>;

/// A chat model: remote (HTTP providers) or in-process.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// Provider name ("anthropic", "openai", "openrouter", "ollama", "local", …).
    fn provider(&self) -> &str;

    /// The configured model id.
    fn model_id(&self) -> &str;

    /// One completion.
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ProviderError>;

    /// A completion whose output is JSON that validates against `schema`
    /// (structured output where the provider supports it, else prompt +
    /// lenient parse, with one repair attempt that shows the model the
    /// validation errors).
    async fn complete_json(
        &self,
        request: ChatRequest,
        schema: &JsonSchema,
    ) -> Result<JsonResponse, ProviderError>;

    /// A streamed completion. Errors after the first token are not retried.
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, ProviderError>;

    /// One turn of a conversation in which the model may call `tools`: its
    /// answer, or the calls it makes (the caller runs them and asks again
    /// with [`crate::ChatMessage::assistant_calls`] and
    /// [`crate::ChatMessage::tool_result`] appended). OpenAI-compatible
    /// and Anthropic models call natively; the default is a constrained
    /// JSON call ([`json_tool_turn`]) that any model can
    /// answer. `call_number` numbers the JSON path's call ids.
    async fn complete_tools(
        &self,
        request: ChatRequest,
        tools: &[ToolSpec],
        call_number: usize,
    ) -> Result<ToolTurn, ProviderError> {
        json_tool_turn(self, request, tools, call_number).await
    }
}

/// Turns texts into vectors.
#[async_trait]
pub trait Embedder: Send + Sync {
    /// One vector per input, in input order.
    async fn embed(
        &self,
        texts: &[String],
        input_type: InputType,
    ) -> Result<Vec<Vec<f32>>, ProviderError>;

    /// [`embed`](Self::embed) for work that nothing waits on (a memory
    /// writer's batches, a recall done ahead of its turn): the same
    /// vectors, but an embedder that computes them on this machine's CPU
    /// may do so at a lower priority, so that the work a caller is waiting
    /// for (a debate's next step) runs first. The default is `embed`.
    async fn embed_in_background(
        &self,
        texts: &[String],
        input_type: InputType,
    ) -> Result<Vec<Vec<f32>>, ProviderError> {
        self.embed(texts, input_type).await
    }

    /// Length of every vector.
    fn dimensions(&self) -> usize;

    /// Most inputs sent in one request; larger inputs are split.
    fn max_batch(&self) -> usize;

    /// The model id.
    fn model_id(&self) -> &str;
}

/// Rejects an empty input list or an empty text before any work is done
/// (shared by every [`Embedder`]).
pub fn check_embedding_inputs(provider: &str, texts: &[String]) -> Result<(), ProviderError> {
    if texts.is_empty() {
        return Err(ProviderError::InvalidRequest {
            reason: format!("{provider}: nothing to embed (empty input)"),
        });
    }
    if let Some(i) = texts.iter().position(|t| t.trim().is_empty()) {
        return Err(ProviderError::InvalidRequest {
            reason: format!("{provider}: input {i} is empty"),
        });
    }
    Ok(())
}

/// One tool turn through a constrained JSON call: the model answers
/// `{"tool": NAME, "arguments": {…}}` to call a tool or `{"tool": "none",
/// "answer": TEXT}` to answer; the tools and their schemas are described
/// in the system prompt. Used by every model without native tool calling.
pub async fn json_tool_turn<M: ChatModel + ?Sized>(
    model: &M,
    request: ChatRequest,
    tools: &[ToolSpec],
    call_number: usize,
) -> Result<ToolTurn, ProviderError> {
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.push("none");
    let listing: Vec<String> = tools
        .iter()
        .map(|t| {
            format!(
                "- {}: {} Arguments (JSON schema): {}",
                t.name, t.description, t.parameters
            )
        })
        .collect();
    let instruction = format!(
        "You may call one tool before you answer:\n{}\nTo call one, output JSON {{\"tool\": NAME, \"arguments\": {{…}}}}; \
         to answer, output {{\"tool\": \"none\", \"answer\": YOUR ANSWER}}.",
        listing.join("\n")
    );
    let mut request = crate::tools::without_tools(&request);
    request.system = Some(match request.system.take() {
        Some(system) => format!("{system}\n\n{instruction}"),
        None => instruction,
    });
    let schema = JsonSchema::new(
        "tool_turn",
        json!({
            "type": "object",
            "properties": {
                "tool": {"type": "string", "enum": names},
                "arguments": {"type": "object"},
                "answer": {"type": "string"}
            },
            "required": ["tool"]
        }),
    );
    let out = model.complete_json(request, &schema).await?;
    let tool = out
        .value
        .get("tool")
        .and_then(Value::as_str)
        .unwrap_or("none");
    let mut response = out.response;
    if tool == "none" {
        response.content = out
            .value
            .get("answer")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        return Ok(ToolTurn {
            response,
            calls: Vec::new(),
        });
    }
    response.content = String::new();
    Ok(ToolTurn {
        response,
        calls: vec![ToolCall {
            id: format!("call-{call_number}"),
            name: tool.to_owned(),
            arguments: out
                .value
                .get("arguments")
                .cloned()
                .unwrap_or_else(|| json!({})),
        }],
    })
}
