//! # agon-llm
//!
//! The model seam of Agon: the object-safe [`ChatModel`] and [`Embedder`]
//! traits, and their HTTP providers (feature `http`, default):
//! [`AnthropicChat`] (Messages API), [`OpenAiChat`] (OpenAI, OpenRouter,
//! Ollama, vLLM, LM Studio) and [`HttpEmbedder`] (Voyage- and
//! OpenAI-compatible embeddings).
//!
//! Reliability is built in: typed [`ProviderError`]s with
//! [`ProviderError::is_retryable`], retries with exponential backoff and
//! jitter that honour `Retry-After` (408/425/429/5xx and connection errors;
//! never quota or auth errors, never once a stream has produced tokens), a
//! per-request timeout and an overall deadline, a per-endpoint concurrency
//! limit, a [`Fallback`] chain, structured output validated against its JSON
//! Schema with one repair attempt, and usage/cost accounting
//! ([`UsageLedger`], [`Metered`]). Keys live in [`ApiKey`], which never prints.
//!
//! One provider, streaming (here an OpenAI-compatible server on this machine
//! stands in for the real endpoint; point `base_url` at
//! `https://api.openai.com/v1`, Ollama's `http://127.0.0.1:11434/v1`, …):
//!
//! ```
//! # #[cfg(feature = "http")]
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use agon_llm::{ChatModel, ChatRequest, OpenAiChat, OpenAiConfig};
//! use futures::StreamExt;
//! # let server = wiremock::MockServer::start().await;
//! # wiremock::Mock::given(wiremock::matchers::method("POST"))
//! #     .respond_with(wiremock::ResponseTemplate::new(200)
//! #         .insert_header("content-type", "text/event-stream")
//! #         .set_body_string(include_str!("../tests/fixtures/openai_stream.sse")))
//! #     .mount(&server).await;
//! # let base_url = format!("{}/v1", server.uri());
//!
//! // A keyless local server; `OpenAiConfig::openai` reads OPENAI_API_KEY.
//! let config = OpenAiConfig::local("ollama", base_url, "llama3.2");
//! let model = OpenAiChat::new(config)?;
//! let request = ChatRequest::new("Should a treasury hold Bitcoin?")
//!     .with_system("You are Theo, a macro trader.")
//!     .with_max_tokens(200);
//! let mut stream = model.stream(request).await?;
//! let mut text = String::new();
//! while let Some(chunk) = stream.next().await {
//!     let chunk = chunk?;
//!     text.push_str(&chunk.delta); // print it as it comes
//!     if let Some(usage) = chunk.usage {
//!         println!("\n{} prompt + {} generated tokens", usage.input_tokens, usage.output_tokens);
//!     }
//! }
//! assert!(text.starts_with("Custody costs add up."));
//! # Ok::<(), agon_llm::ProviderError>(())
//! # }).unwrap();
//! ```

mod embed_spec;
mod error;
mod factory;
mod fallback;
pub mod json;
mod rate;
mod secret;
mod spec;
mod telemetry;
pub mod tools;
pub use telemetry::capture_content;
mod traits;
mod types;
mod usage;

#[cfg(feature = "http")]
mod anthropic;
#[cfg(feature = "http")]
mod embeddings;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod openai;
#[cfg(feature = "http")]
mod stream;

pub use embed_spec::{EmbedderSpec, EmbedderSpecError};
pub use error::ProviderError;
pub use factory::{LocalBackends, ModelFactory};
pub use fallback::Fallback;
pub use rate::{RateGate, estimated_tokens, gate_key};
pub use secret::ApiKey;
pub use spec::{ModelSpec, SpecError};
pub use traits::{ChatModel, ChatStream, Embedder, check_embedding_inputs, json_tool_turn};
pub use types::{
    CallTiming, ChatChunk, ChatMessage, ChatRequest, ChatResponse, InputType, JsonResponse,
    JsonSchema, Role, ToolCall, ToolResult, ToolSpec, ToolTurn, Usage, is_token_limit_finish,
};
pub use usage::{Metered, ModelTime, Price, PriceTable, ScopeUsage, UsageLedger, UsageScope};

#[cfg(feature = "http")]
pub use anthropic::{ANTHROPIC_API_KEY, AnthropicChat, AnthropicConfig};
#[cfg(feature = "http")]
pub use embeddings::{EmbeddingApi, EmbeddingConfig, HttpEmbedder, VOYAGE_API_KEY};
#[cfg(feature = "http")]
pub use http::HttpConfig;
#[cfg(feature = "http")]
pub use openai::{
    OPENAI_API_KEY, OPENAI_BASE_URL, OPENROUTER_API_KEY, OpenAiChat, OpenAiConfig, StructuredOutput,
};
