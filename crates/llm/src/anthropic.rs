//! Anthropic Messages API (`/v1/messages`, `anthropic-version: 2023-06-01`).
//! Structured output through a forced tool call; streaming through SSE.

use std::time::Instant;

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};

use crate::error::ProviderError;
use crate::http::{Endpoint, HttpConfig, headers};
use crate::json::{Attempt, structured};
use crate::secret::ApiKey;
use crate::stream::{Step, until_done};
use crate::traits::{ChatModel, ChatStream};
use crate::types::{
    ChatChunk, ChatRequest, ChatResponse, JsonResponse, JsonSchema, ToolSpec, ToolTurn, Usage,
};

const PROVIDER: &str = "anthropic";
/// The environment variable holding the key.
pub const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";
const VERSION: &str = "2023-06-01";

/// Settings of an [`AnthropicChat`].
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// Base URL (default `https://api.anthropic.com`).
    pub base_url: String,
    /// The key.
    pub api_key: ApiKey,
    /// Model id (e.g. `claude-3-5-haiku-latest`).
    pub model: String,
    /// Timeouts, retries, concurrency.
    pub http: HttpConfig,
}

/// Characters of a system prompt from which it is marked for Anthropic's
/// prompt cache: about 1,024 tokens at ~4 characters a token, the shortest
/// prefix Sonnet and Opus cache (Haiku models need twice as much,
/// [`cache_min_chars`]). A shorter prefix would not be cached, so it is
/// not marked.
pub const CACHE_MIN_CHARS: usize = 4_096;

/// [`CACHE_MIN_CHARS`] for `model`.
pub fn cache_min_chars(model: &str) -> usize {
    if model.contains("haiku") {
        2 * CACHE_MIN_CHARS
    } else {
        CACHE_MIN_CHARS
    }
}

/// The request's `system` field: the text as is, or, when it is long
/// enough to be cached, one text block with a cache breakpoint
/// (`cache_control: ephemeral`). Agon's prompts put what never changes
/// within a debate (instructions, the role brief, the schema) in the
/// system prompt, so the breakpoint covers the stable prefix and every
/// later call with the same system prompt reads it from the cache (billed
/// at 0.1× the input price; the first write at 1.25×).
fn system_blocks(system: &str, model: &str) -> Value {
    if system.len() >= cache_min_chars(model) {
        json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}])
    } else {
        json!(system)
    }
}

/// The first user message's content: the text as is, or, when the request
/// marks a shared prefix ([`ChatRequest::shared_prefix`]) that is, with the
/// system prompt before it, long enough to be cached, two text blocks with
/// a cache breakpoint after the first. The system prompt is then cached
/// with it (a breakpoint covers everything before it).
fn first_user_blocks(request: &ChatRequest, content: &str, model: &str) -> Value {
    let system = request.system.as_deref().map_or(0, str::len);
    match request.shared_prefix {
        Some(at)
            if at < content.len()
                && content.is_char_boundary(at)
                && system + at >= cache_min_chars(model) =>
        {
            json!([
                {"type": "text", "text": &content[..at], "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": &content[at..]},
            ])
        }
        _ => json!(content),
    }
}

/// Anthropic's usage object as [`Usage`]: `input_tokens` there counts only
/// the uncached prompt tokens; the cache reads and writes are added to it
/// (so the total is the whole prompt) and kept apart.
fn usage(value: &Value) -> Usage {
    let count = |key: &str| value.get(key).and_then(Value::as_u64).unwrap_or(0);
    let read = count("cache_read_input_tokens");
    let write = count("cache_creation_input_tokens");
    Usage {
        input_tokens: count("input_tokens") + read + write,
        output_tokens: count("output_tokens"),
        cached_input_tokens: read,
        cache_write_tokens: write,
    }
}

impl AnthropicConfig {
    /// The public endpoint with `api_key` and `model`.
    pub fn new(api_key: ApiKey, model: impl Into<String>) -> Self {
        Self {
            base_url: "https://api.anthropic.com".to_owned(),
            api_key,
            model: model.into(),
            http: HttpConfig::default(),
        }
    }

    /// Reads `ANTHROPIC_API_KEY` through `lookup`.
    pub fn from_lookup(
        model: impl Into<String>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ProviderError> {
        Ok(Self::new(
            ApiKey::from_lookup(PROVIDER, ANTHROPIC_API_KEY, lookup)?,
            model,
        ))
    }
}

/// A [`ChatModel`] over Anthropic's Messages API.
#[derive(Debug, Clone)]
pub struct AnthropicChat {
    endpoint: Endpoint,
    key: ApiKey,
    model: String,
}

impl AnthropicChat {
    /// This client, asking `gate` before each request (rate limits
    /// shared with other processes, [`crate::RateGate`]).
    #[must_use]
    pub fn with_rate_gate(mut self, gate: std::sync::Arc<dyn crate::RateGate>) -> Self {
        self.endpoint.set_rate_gate(gate);
        self
    }

    /// A client for `config`.
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        Ok(Self {
            endpoint: Endpoint::new(PROVIDER, &config.base_url, ANTHROPIC_API_KEY, config.http)?,
            key: config.api_key,
            model: config.model,
        })
    }

    /// A client with the key from the process environment.
    pub fn from_env(model: impl Into<String>) -> Result<Self, ProviderError> {
        Self::new(AnthropicConfig::from_lookup(model, |name| {
            std::env::var(name).ok()
        })?)
    }

    fn headers(&self) -> Result<reqwest::header::HeaderMap, ProviderError> {
        headers(
            PROVIDER,
            &[
                ("x-api-key", self.key.expose()),
                ("anthropic-version", VERSION),
                ("content-type", "application/json"),
            ],
        )
    }

    fn model_for<'a>(&'a self, request: &'a ChatRequest) -> &'a str {
        request.model.as_deref().unwrap_or(&self.model)
    }

    fn body(&self, request: &ChatRequest) -> Value {
        // Tool calls are `tool_use` blocks of the assistant's message;
        // results are `tool_result` blocks of the next user message (a
        // run of results shares one message: roles must alternate).
        let mut messages: Vec<Value> = Vec::new();
        for m in &request.messages {
            if let Some(result) = &m.tool_result {
                let block = json!({
                    "type": "tool_result",
                    "tool_use_id": result.call_id,
                    "content": m.content,
                    "is_error": result.is_error,
                });
                let last_is_results = messages.last().is_some_and(|l: &Value| {
                    l["role"] == "user"
                        && l["content"]
                            .as_array()
                            .is_some_and(|c| c.iter().all(|b| b["type"] == "tool_result"))
                });
                match messages.last_mut() {
                    Some(last) if last_is_results => {
                        if let Some(blocks) = last["content"].as_array_mut() {
                            blocks.push(block);
                        }
                    }
                    _ => messages.push(json!({"role": "user", "content": [block]})),
                }
                continue;
            }
            let role = m.role.as_str();
            if m.tool_calls.is_empty() {
                let content = if messages.is_empty() && m.role == crate::types::Role::User {
                    first_user_blocks(request, &m.content, self.model_for(request))
                } else {
                    json!(m.content)
                };
                messages.push(json!({"role": role, "content": content}));
            } else {
                let mut blocks: Vec<Value> = Vec::new();
                if !m.content.is_empty() {
                    blocks.push(json!({"type": "text", "text": m.content}));
                }
                blocks.extend(m.tool_calls.iter().map(|c| {
                    json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments})
                }));
                messages.push(json!({"role": role, "content": blocks}));
            }
        }
        let mut body = json!({
            "model": self.model_for(request),
            "max_tokens": request.max_tokens,
            "messages": messages,
        });
        if let Some(system) = &request.system {
            body["system"] = system_blocks(system, self.model_for(request));
        }
        if let Some(t) = request.temperature {
            body["temperature"] = json!(t);
        }
        if !request.stop.is_empty() {
            body["stop_sequences"] = json!(request.stop);
        }
        body
    }

    fn parse_response(
        &self,
        value: &Value,
        started: Instant,
    ) -> Result<(ChatResponse, Option<Value>), ProviderError> {
        let blocks = value
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| self.endpoint.malformed("no `content` array in the message"))?;
        let text: String = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        let tool_input = blocks
            .iter()
            .find(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
            .and_then(|b| b.get("input").cloned());
        let usage = value.get("usage").map(usage).unwrap_or_default();
        Ok((
            ChatResponse {
                content: text,
                usage,
                latency: started.elapsed(),
                provider: PROVIDER.to_owned(),
                model: value
                    .get("model")
                    .and_then(Value::as_str)
                    .unwrap_or(&self.model)
                    .to_owned(),
                finish_reason: value
                    .get("stop_reason")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                timing: None,
            },
            tool_input,
        ))
    }
}

#[async_trait]
impl ChatModel for AnthropicChat {
    fn provider(&self) -> &str {
        PROVIDER
    }

    fn model_id(&self) -> &str {
        &self.model
    }

    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ProviderError> {
        request.validate()?;
        let started = Instant::now();
        let value = self
            .endpoint
            .post_json(
                "/v1/messages",
                &self.headers()?,
                &self.body(&request),
                self.model_for(&request),
            )
            .await?;
        Ok(self.parse_response(&value, started)?.0)
    }

    async fn complete_json(
        &self,
        request: ChatRequest,
        schema: &JsonSchema,
    ) -> Result<JsonResponse, ProviderError> {
        request.validate()?;
        let headers = self.headers()?;
        structured(PROVIDER, schema, request, |request| {
            let headers = headers.clone();
            async move {
                let started = Instant::now();
                let mut body = self.body(&request);
                body["tools"] = json!([{
                    "name": schema.name,
                    "description": format!("Record the answer as `{}`.", schema.name),
                    "input_schema": schema.schema,
                }]);
                body["tool_choice"] = json!({"type": "tool", "name": schema.name});
                let value = self
                    .endpoint
                    .post_json("/v1/messages", &headers, &body, self.model_for(&request))
                    .await?;
                let (response, input) = self.parse_response(&value, started)?;
                let raw = input
                    .as_ref()
                    .map_or_else(|| response.content.clone(), Value::to_string);
                Ok(Attempt {
                    value: input,
                    raw,
                    response,
                })
            }
        })
        .await
    }

    async fn complete_tools(
        &self,
        request: ChatRequest,
        tools: &[ToolSpec],
        _call_number: usize,
    ) -> Result<ToolTurn, ProviderError> {
        request.validate()?;
        let started = Instant::now();
        let mut body = self.body(&request);
        body["tools"] = tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        let value = self
            .endpoint
            .post_json(
                "/v1/messages",
                &self.headers()?,
                &body,
                self.model_for(&request),
            )
            .await?;
        let (response, _) = self.parse_response(&value, started)?;
        let calls = value
            .get("content")
            .and_then(Value::as_array)
            .map(|blocks| {
                blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                    .enumerate()
                    .map(|(i, b)| {
                        crate::tools::call_of(
                            i,
                            b.get("id").and_then(Value::as_str),
                            b.get("name").and_then(Value::as_str),
                            b.get("input").cloned().unwrap_or_else(|| json!({})),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(ToolTurn { response, calls })
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, ProviderError> {
        request.validate()?;
        let mut body = self.body(&request);
        body["stream"] = json!(true);
        let events = self
            .endpoint
            .post_sse(
                "/v1/messages",
                &self.headers()?,
                &body,
                self.model_for(&request),
            )
            .await?;
        let endpoint = self.endpoint.clone();
        let mut prompt = Usage::default();
        let steps = events
            .map(move |event| -> Option<Result<Step, ProviderError>> {
                let event = match event {
                    Ok(event) => event,
                    Err(e) => return Some(Err(e)),
                };
                let data: Value = match serde_json::from_str(&event.data) {
                    Ok(data) => data,
                    Err(e) => {
                        return Some(Err(endpoint.malformed(format!(
                            "SSE event `{}` is not JSON ({e}): {}",
                            event.event, event.data
                        ))));
                    }
                };
                let chunk = |chunk: ChatChunk| Some(Ok(Step::Chunk(chunk)));
                match data
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or(event.event.as_str())
                {
                    "message_start" => {
                        prompt = data
                            .pointer("/message/usage")
                            .map(usage)
                            .unwrap_or_default();
                        None
                    }
                    "content_block_delta" => chunk(ChatChunk {
                        delta: data
                            .pointer("/delta/text")
                            .and_then(Value::as_str)?
                            .to_owned(),
                        ..ChatChunk::default()
                    }),
                    "message_delta" => chunk(ChatChunk {
                        delta: String::new(),
                        usage: Some(Usage {
                            output_tokens: data
                                .pointer("/usage/output_tokens")
                                .and_then(Value::as_u64)
                                .unwrap_or(0),
                            ..prompt
                        }),
                        finish_reason: data
                            .pointer("/delta/stop_reason")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        model: None,
                        timing: None,
                    }),
                    "message_stop" => Some(Ok(Step::Done)),
                    "error" => Some(Err(ProviderError::Server {
                        provider: PROVIDER.to_owned(),
                        status: 200,
                        message: data
                            .pointer("/error/message")
                            .and_then(Value::as_str)
                            .unwrap_or("stream error")
                            .to_owned(),
                    })),
                    _ => None,
                }
            })
            .filter_map(std::future::ready);
        Ok(until_done(steps, PROVIDER, "message_stop"))
    }
}
