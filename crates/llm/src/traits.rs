//! The seams: [`ChatModel`] and [`Embedder`]. Object-safe; callers hold
//! `Arc<dyn ChatModel>` / `Arc<dyn Embedder>`.

use std::pin::Pin;

use async_trait::async_trait;
use futures::Stream;

use crate::error::ProviderError;
use crate::tools::{ToolSpec, ToolTurn};
use crate::types::{ChatChunk, ChatRequest, ChatResponse, InputType, JsonResponse, JsonSchema};

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
    /// JSON call ([`crate::tools::json_tool_turn`]) that any model can
    /// answer. `call_number` numbers the JSON path's call ids.
    async fn complete_tools(
        &self,
        request: ChatRequest,
        tools: &[ToolSpec],
        call_number: usize,
    ) -> Result<ToolTurn, ProviderError> {
        crate::tools::json_tool_turn(self, request, tools, call_number).await
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
