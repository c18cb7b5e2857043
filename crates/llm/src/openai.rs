//! OpenAI-compatible chat completions: OpenAI, OpenRouter, Ollama's and
//! vLLM's OpenAI endpoints, LM Studio.

use std::time::Instant;

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};

use crate::error::ProviderError;
use crate::http::{Endpoint, HttpConfig, bearer_headers};
use crate::json::{Attempt, extract_json, structured, with_schema_instruction};
use crate::secret::ApiKey;
use crate::stream::{Step, until_done};
use crate::traits::{ChatModel, ChatStream};
use crate::types::{
    ChatChunk, ChatRequest, ChatResponse, JsonResponse, JsonSchema, ToolSpec, ToolTurn, Usage,
};

/// The environment variable holding OpenAI's key.
pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
/// The environment variable overriding OpenAI's base URL.
pub const OPENAI_BASE_URL: &str = "OPENAI_BASE_URL";
/// The environment variable holding OpenRouter's key.
pub const OPENROUTER_API_KEY: &str = "OPENROUTER_API_KEY";

/// How structured output is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StructuredOutput {
    /// `response_format: {type: "json_schema", …}` (OpenAI, OpenRouter, recent vLLM and Ollama).
    #[default]
    JsonSchema,
    /// The schema in the system prompt and a lenient parse of the reply.
    Prompt,
}

/// Settings of an [`OpenAiChat`].
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Provider name used in errors and usage ("openai", "openrouter", "ollama", …).
    pub provider: String,
    /// Base URL up to `/v1` (default `https://api.openai.com/v1`).
    pub base_url: String,
    /// The key; local servers need none.
    pub api_key: Option<ApiKey>,
    /// The variable errors point to when the key is rejected.
    pub key_env: String,
    /// Model id.
    pub model: String,
    /// How structured output is obtained.
    pub structured: StructuredOutput,
    /// Timeouts, retries, concurrency.
    pub http: HttpConfig,
}

impl OpenAiConfig {
    /// OpenAI with `OPENAI_API_KEY` and optional `OPENAI_BASE_URL`, read through `lookup`.
    pub fn openai(
        model: impl Into<String>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ProviderError> {
        let api_key = ApiKey::from_lookup("openai", OPENAI_API_KEY, &lookup)?;
        Ok(Self {
            provider: "openai".to_owned(),
            base_url: lookup(OPENAI_BASE_URL)
                .unwrap_or_else(|| "https://api.openai.com/v1".to_owned()),
            api_key: Some(api_key),
            key_env: OPENAI_API_KEY.to_owned(),
            model: model.into(),
            structured: StructuredOutput::JsonSchema,
            http: HttpConfig::default(),
        })
    }

    /// OpenRouter with `OPENROUTER_API_KEY`, read through `lookup`.
    pub fn openrouter(
        model: impl Into<String>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ProviderError> {
        Ok(Self {
            provider: "openrouter".to_owned(),
            base_url: "https://openrouter.ai/api/v1".to_owned(),
            api_key: Some(ApiKey::from_lookup(
                "openrouter",
                OPENROUTER_API_KEY,
                lookup,
            )?),
            key_env: OPENROUTER_API_KEY.to_owned(),
            model: model.into(),
            structured: StructuredOutput::JsonSchema,
            http: HttpConfig::default(),
        })
    }

    /// A keyless local server (Ollama: `http://localhost:11434/v1`, vLLM,
    /// LM Studio) that may not support `json_schema`: structured output by prompt.
    pub fn local(
        provider: impl Into<String>,
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            provider: provider.into(),
            base_url: base_url.into(),
            api_key: None,
            key_env: "(none: local server)".to_owned(),
            model: model.into(),
            structured: StructuredOutput::Prompt,
            http: HttpConfig::default(),
        }
    }
}

/// A [`ChatModel`] over an OpenAI-compatible `/chat/completions` endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiChat {
    endpoint: Endpoint,
    key: Option<ApiKey>,
    model: String,
    structured: StructuredOutput,
}

impl OpenAiChat {
    /// This client, asking `gate` before each request (rate limits
    /// shared with other processes, [`crate::RateGate`]).
    #[must_use]
    pub fn with_rate_gate(mut self, gate: std::sync::Arc<dyn crate::RateGate>) -> Self {
        self.endpoint.set_rate_gate(gate);
        self
    }

    /// A client for `config`.
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        Ok(Self {
            endpoint: Endpoint::new(
                &config.provider,
                &config.base_url,
                &config.key_env,
                config.http,
            )?,
            key: config.api_key,
            model: config.model,
            structured: config.structured,
        })
    }

    fn headers(&self) -> Result<reqwest::header::HeaderMap, ProviderError> {
        bearer_headers(&self.endpoint.provider, self.key.as_ref())
    }

    fn model_for<'a>(&'a self, request: &'a ChatRequest) -> &'a str {
        request.model.as_deref().unwrap_or(&self.model)
    }

    fn body(&self, request: &ChatRequest) -> Value {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(system) = &request.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for m in &request.messages {
            if let Some(result) = &m.tool_result {
                messages.push(json!({
                    "role": "tool",
                    "tool_call_id": result.call_id,
                    "content": m.content,
                }));
                continue;
            }
            let role = m.role.as_str();
            if m.tool_calls.is_empty() {
                messages.push(json!({"role": role, "content": m.content}));
            } else {
                let calls: Vec<Value> = m
                    .tool_calls
                    .iter()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments.to_string()},
                        })
                    })
                    .collect();
                let content = (!m.content.is_empty()).then_some(m.content.as_str());
                messages.push(json!({"role": role, "content": content, "tool_calls": calls}));
            }
        }
        let mut body = json!({
            "model": self.model_for(request),
            "messages": messages,
            "max_tokens": request.max_tokens,
        });
        if let Some(t) = request.temperature {
            body["temperature"] = json!(t);
        }
        if !request.stop.is_empty() {
            body["stop"] = json!(request.stop);
        }
        body
    }

    fn parse(&self, value: &Value, started: Instant) -> Result<ChatResponse, ProviderError> {
        let choice = value
            .pointer("/choices/0")
            .ok_or_else(|| self.endpoint.malformed("no `choices[0]` in the completion"))?;
        // A turn that only calls tools may have no content.
        let calls = choice
            .pointer("/message/tool_calls")
            .and_then(Value::as_array)
            .is_some_and(|c| !c.is_empty());
        let content = match choice.pointer("/message/content").and_then(Value::as_str) {
            Some(content) => content,
            None if calls => "",
            None => {
                return Err(self
                    .endpoint
                    .malformed("no `choices[0].message.content` in the completion"));
            }
        };
        Ok(ChatResponse {
            content: content.to_owned(),
            usage: usage(value),
            latency: started.elapsed(),
            provider: self.endpoint.provider.clone(),
            model: value
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or(&self.model)
                .to_owned(),
            finish_reason: choice
                .get("finish_reason")
                .and_then(Value::as_str)
                .map(str::to_owned),
            timing: None,
        })
    }

    async fn call(&self, body: &Value, model: &str) -> Result<ChatResponse, ProviderError> {
        let started = Instant::now();
        let value = self
            .endpoint
            .post_json("/chat/completions", &self.headers()?, body, model)
            .await?;
        self.parse(&value, started)
    }
}

/// A response's (or a stream's last chunk's) usage: `prompt_tokens`
/// counts the cached ones, which `prompt_tokens_details.cached_tokens`
/// names (OpenAI's automatic prompt caching; no write charge).
fn usage(value: &Value) -> Usage {
    let count = |pointer: &str| value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let input_tokens = count("/usage/prompt_tokens");
    Usage {
        input_tokens,
        output_tokens: count("/usage/completion_tokens"),
        cached_input_tokens: count("/usage/prompt_tokens_details/cached_tokens").min(input_tokens),
        cache_write_tokens: 0,
    }
}

#[async_trait]
impl ChatModel for OpenAiChat {
    fn provider(&self) -> &str {
        &self.endpoint.provider
    }

    fn model_id(&self) -> &str {
        &self.model
    }

    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ProviderError> {
        request.validate()?;
        self.call(&self.body(&request), self.model_for(&request))
            .await
    }

    async fn complete_json(
        &self,
        request: ChatRequest,
        schema: &JsonSchema,
    ) -> Result<JsonResponse, ProviderError> {
        request.validate()?;
        let mode = self.structured;
        let request = if mode == StructuredOutput::Prompt {
            with_schema_instruction(request, schema)
        } else {
            request
        };
        structured(self.provider(), schema, request, |request| async move {
            let mut body = self.body(&request);
            if mode == StructuredOutput::JsonSchema {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": {"name": schema.name, "schema": schema.schema, "strict": false},
                });
            }
            let response = self.call(&body, self.model_for(&request)).await?;
            Ok(Attempt {
                value: extract_json(&response.content),
                raw: response.content.clone(),
                response,
            })
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
        let mut body = self.body(&request);
        body["tools"] = tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                })
            })
            .collect();
        let started = Instant::now();
        let value = self
            .endpoint
            .post_json(
                "/chat/completions",
                &self.headers()?,
                &body,
                self.model_for(&request),
            )
            .await?;
        let response = self.parse(&value, started)?;
        let calls = value
            .pointer("/choices/0/message/tool_calls")
            .and_then(Value::as_array)
            .map(|calls| {
                calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        crate::tools::call_of(
                            i,
                            c.get("id").and_then(Value::as_str),
                            c.pointer("/function/name").and_then(Value::as_str),
                            crate::tools::parse_arguments(
                                c.pointer("/function/arguments")
                                    .and_then(Value::as_str)
                                    .unwrap_or("{}"),
                            ),
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
        body["stream_options"] = json!({"include_usage": true});
        let events = self
            .endpoint
            .post_sse(
                "/chat/completions",
                &self.headers()?,
                &body,
                self.model_for(&request),
            )
            .await?;
        let endpoint = self.endpoint.clone();
        let steps = events.map(move |event| -> Result<Step, ProviderError> {
            let event = event?;
            if event.data.trim() == "[DONE]" {
                return Ok(Step::Done);
            }
            let data: Value = serde_json::from_str(&event.data).map_err(|e| {
                endpoint.malformed(format!("SSE data is not JSON ({e}): {}", event.data))
            })?;
            if let Some(message) = data.pointer("/error/message").and_then(Value::as_str) {
                return Err(endpoint.malformed(format!("error event in the stream: {message}")));
            }
            Ok(Step::Chunk(ChatChunk {
                delta: data
                    .pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                usage: data
                    .get("usage")
                    .filter(|u| u.is_object())
                    .map(|_| usage(&data)),
                finish_reason: data
                    .pointer("/choices/0/finish_reason")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                model: None,
                timing: None,
            }))
        });
        Ok(until_done(steps, self.provider(), "[DONE]"))
    }
}
