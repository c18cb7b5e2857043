//! Requests, responses and their parts, shared by every provider.

use std::ops::{Add, AddAssign};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ProviderError;

/// Who said a message of the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (the orchestrator's prompt).
    User,
    /// The model.
    Assistant,
}

impl Role {
    /// The role's name on the wire (`user`, `assistant`), as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }
}

/// One message of a chat conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who said it.
    pub role: Role,
    /// What was said (for a tool result: the result).
    pub content: String,
    /// The tools an assistant message called.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Set on the user-side message that carries a tool's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result: Option<ToolResult>,
}

impl ChatMessage {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_result: None,
        }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_result: None,
        }
    }

    /// The assistant's turn that called `calls` (with its text, if any).
    pub fn assistant_calls(content: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        Self {
            tool_calls: calls,
            ..Self::assistant(content)
        }
    }

    /// The result of `call`, as the model is shown it.
    pub fn tool_result(call: &ToolCall, content: impl Into<String>, is_error: bool) -> Self {
        Self {
            tool_result: Some(ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                is_error,
            }),
            ..Self::user(content)
        }
    }
}

/// A chat completion request, provider-neutral.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// System prompt (Anthropic: top-level `system`; OpenAI: a system message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The conversation; must not be empty.
    pub messages: Vec<ChatMessage>,
    /// Sampling temperature; the provider default when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Maximum tokens to generate.
    pub max_tokens: u32,
    /// Stop sequences.
    #[serde(default)]
    pub stop: Vec<String>,
    /// Model id overriding the provider's configured model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What the call is for, as the caller names it (Agon: the step's
    /// stored spelling, `utterance (turn/3)`, `summary (2/arch)`, …). Never
    /// sent to a provider; logs, traces and test models read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    /// Bytes at the start of the first user message that other calls send
    /// alike (the material of the debate and the round, before this call's
    /// own): a provider with explicit cache breakpoints (Anthropic) marks
    /// where they end when the prefix is long enough to be cached. Never
    /// sent as such; providers that cache prefixes by themselves (OpenAI)
    /// need no mark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_prefix: Option<usize>,
}

impl ChatRequest {
    /// Default `max_tokens`.
    pub const DEFAULT_MAX_TOKENS: u32 = 1_024;

    /// A request with one user message.
    pub fn new(user: impl Into<String>) -> Self {
        Self {
            system: None,
            messages: vec![ChatMessage::user(user)],
            temperature: None,
            max_tokens: Self::DEFAULT_MAX_TOKENS,
            stop: Vec::new(),
            model: None,
            purpose: None,
            shared_prefix: None,
        }
    }

    /// The same request with what it is for.
    pub fn with_purpose(mut self, purpose: impl Into<String>) -> Self {
        self.purpose = Some(purpose.into());
        self
    }

    /// The same request with `bytes` of its first user message marked as
    /// shared with other calls ([`ChatRequest::shared_prefix`]; 0 marks
    /// nothing).
    pub fn with_shared_prefix(mut self, bytes: usize) -> Self {
        self.shared_prefix = (bytes > 0).then_some(bytes);
        self
    }

    /// The same request with a system prompt.
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// The same request with a temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The same request with `max_tokens`.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Checks the request before anything is sent: at least one message, no
    /// empty message, a positive `max_tokens`, a temperature in 0..=2.
    pub fn validate(&self) -> Result<(), ProviderError> {
        let invalid = |reason: String| Err(ProviderError::InvalidRequest { reason });
        if self.messages.is_empty() {
            return invalid("the request has no messages".into());
        }
        if let Some(i) = self
            .messages
            .iter()
            .position(|m| m.content.trim().is_empty() && m.tool_calls.is_empty())
        {
            // (An assistant turn that only calls tools has no text.)
            return invalid(format!("message {i} is empty"));
        }
        if self.max_tokens == 0 {
            return invalid("max_tokens must be positive".into());
        }
        if let Some(t) = self.temperature
            && !(0.0..=2.0).contains(&t)
        {
            return invalid(format!("temperature {t} is outside 0..=2"));
        }
        Ok(())
    }
}

/// Tokens a call used. `input_tokens` counts every prompt token, the
/// ones read from the provider's prompt cache and the ones written to it
/// included (OpenAI counts them so; Anthropic reports them apart and they
/// are added up here), so budgets and totals see the whole prompt; the
/// cached and written parts are priced at their own rates
/// ([`crate::Price::cost`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, cached and written ones included.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Of the prompt tokens, those read from the provider's prompt cache
    /// (OpenAI `prompt_tokens_details.cached_tokens`, Anthropic
    /// `cache_read_input_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// Of the prompt tokens, those written to the provider's prompt cache
    /// (Anthropic `cache_creation_input_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Usage of `input` prompt and `output` generated tokens, none cached.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            ..Self::default()
        }
    }

    /// The prompt tokens neither read from nor written to a cache.
    pub fn uncached_input_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_sub(self.cached_input_tokens)
            .saturating_sub(self.cache_write_tokens)
    }

    /// These totals less `earlier` ones (never below zero).
    pub fn saturating_sub(&self, earlier: &Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_sub(earlier.input_tokens),
            output_tokens: self.output_tokens.saturating_sub(earlier.output_tokens),
            cached_input_tokens: self
                .cached_input_tokens
                .saturating_sub(earlier.cached_input_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_sub(earlier.cache_write_tokens),
        }
    }
}

impl Add for Usage {
    type Output = Usage;

    fn add(self, rhs: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens + rhs.input_tokens,
            output_tokens: self.output_tokens + rhs.output_tokens,
            cached_input_tokens: self.cached_input_tokens + rhs.cached_input_tokens,
            cache_write_tokens: self.cache_write_tokens + rhs.cache_write_tokens,
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        *self = *self + rhs;
    }
}

/// A completed chat call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The generated text.
    pub content: String,
    /// Tokens used.
    pub usage: Usage,
    /// Wall time of the call, retries included.
    pub latency: Duration,
    /// Provider name ("anthropic", "openai", …).
    pub provider: String,
    /// Model id that answered.
    pub model: String,
    /// Why generation stopped, as the provider said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Where the model's own time went, when it says (the in-process
    /// models do; a remote provider's latency is all the caller sees).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<CallTiming>,
}

/// A call's compute time, split the way a local model spends it: reading
/// the prompt (the part a prefix cache spares) and generating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CallTiming {
    /// Time spent on the prompt.
    pub prompt: Duration,
    /// Time spent generating.
    pub generation: Duration,
}

impl Add for CallTiming {
    type Output = Self;
    fn add(self, rhs: Self) -> Self {
        Self {
            prompt: self.prompt + rhs.prompt,
            generation: self.generation + rhs.generation,
        }
    }
}

/// The result of [`crate::ChatModel::complete_json`]: a value that validates
/// against the schema, and the call(s) that produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonResponse {
    /// The validated value.
    pub value: serde_json::Value,
    /// The last call's response (its `usage` sums every attempt).
    pub response: ChatResponse,
    /// Whether a repair attempt was needed.
    pub repaired: bool,
}

/// Whether a finish reason says generation stopped at the token limit:
/// `length` (OpenAI-compatible servers, the in-process models) or
/// `max_tokens` (Anthropic).
pub fn is_token_limit_finish(reason: &str) -> bool {
    matches!(reason, "length" | "max_tokens")
}

/// A piece of a streamed completion.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatChunk {
    /// New text.
    pub delta: String,
    /// Usage, when the provider reports it (usually on the last chunks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Why generation stopped, on the final chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The model that answered, when it is not the one asked (a fallback
    /// chain names the model it fell back to on the final chunk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Where the model's own time went, on the final chunk, when it says
    /// (as [`ChatResponse::timing`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<CallTiming>,
}

/// A named JSON Schema for structured output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonSchema {
    /// Name (a tool name for Anthropic, `json_schema.name` for OpenAI): `[a-zA-Z0-9_-]`.
    pub name: String,
    /// The schema document.
    pub schema: serde_json::Value,
}

impl JsonSchema {
    /// A schema with a name.
    pub fn new(name: impl Into<String>, schema: serde_json::Value) -> Self {
        Self {
            name: name.into(),
            schema,
        }
    }
}

/// What an embedding is for; asymmetric models embed queries and documents differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputType {
    /// A search query.
    Query,
    /// A document to be searched.
    Document,
}

impl InputType {
    /// The wire name (`query` / `document`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Query => "query",
            Self::Document => "document",
        }
    }
}

/// A tool the model may call ([`crate::ChatModel::complete_tools`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Its name (`file_read`).
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON schema of its arguments (an object).
    pub parameters: Value,
}

/// A call the model made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id of the call (results refer to it).
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments as the model wrote them (untrusted: the tool checks
    /// them; arguments that are not JSON are kept as a string).
    pub arguments: Value,
}

/// Marks a message as the result of a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The call's id.
    pub call_id: String,
    /// The tool.
    pub name: String,
    /// Whether the tool failed (its content says why).
    pub is_error: bool,
}

/// One turn of a conversation with tools: the response (its text, usage,
/// finish reason) and the calls it asks for (none: the text is the answer).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolTurn {
    /// The response; `content` is the text (empty when it only calls).
    pub response: ChatResponse,
    /// The calls, in order.
    pub calls: Vec<ToolCall>,
}
