//! One span per model call, with OpenTelemetry's GenAI semantic-convention
//! attributes (`gen_ai.*`, experimental in the conventions): what was asked
//! (operation, provider, model, temperature, max tokens) when the call
//! starts, and what came back (the answering model, the tokens with their
//! cached part, the finish reason, or the error type) when it ends. The
//! span is a plain `tracing` span: `agon -v` logs it, and an OpenTelemetry
//! layer exports it (`otel.name` and `otel.kind` are that layer's fields
//! for the span's name and kind). Prompts and completions are attached
//! (`gen_ai.input.messages`, `gen_ai.output.messages`) only once
//! [`capture_content`] turned it on; keys never are: only the fields
//! below.

use std::sync::atomic::{AtomicBool, Ordering};

use tracing::field::Empty;

static CAPTURE_CONTENT: AtomicBool = AtomicBool::new(false);

/// Whether model-call spans carry the prompts and completions (off by
/// default: they may be sensitive). The CLI's `--otlp-content` sets it.
pub fn capture_content(on: bool) {
    CAPTURE_CONTENT.store(on, Ordering::Relaxed);
}

/// Whether [`capture_content`] is on.
pub(crate) fn capturing() -> bool {
    CAPTURE_CONTENT.load(Ordering::Relaxed)
}

/// The request's messages as the conventions' `gen_ai.input.messages`
/// JSON (role and text parts), the system prompt first.
fn input_messages(request: &ChatRequest) -> String {
    let mut messages = Vec::new();
    if let Some(system) = &request.system {
        messages.push(
            serde_json::json!({"role": "system", "parts": [{"type": "text", "content": system}]}),
        );
    }
    for m in &request.messages {
        let role = m.role.as_str();
        messages.push(
            serde_json::json!({"role": role, "parts": [{"type": "text", "content": m.content}]}),
        );
    }
    serde_json::Value::Array(messages).to_string()
}

/// Records the completion as `gen_ai.output.messages`, when capturing.
pub(crate) fn record_output(span: &tracing::Span, text: &str) {
    if capturing() {
        let output = serde_json::json!([{"role": "assistant", "parts": [{"type": "text", "content": text}]}]);
        span.record("gen_ai.output.messages", output.to_string());
    }
}

use crate::error::ProviderError;
use crate::types::{ChatRequest, Usage};

/// The span of one call of `model` (the request's own model when it names
/// one) at `provider`, for the usage scope `role`.
pub(crate) fn call_span(
    provider: &str,
    model: &str,
    role: &str,
    request: &ChatRequest,
) -> tracing::Span {
    let model = request.model.as_deref().unwrap_or(model);
    let span = tracing::info_span!(
        "gen_ai",
        otel.name = %format!("chat {model}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider,
        gen_ai.request.model = model,
        gen_ai.request.max_tokens = request.max_tokens,
        gen_ai.request.temperature = Empty,
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        error.r#type = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        agon.role = role,
    );
    if let Some(t) = request.temperature {
        // To three decimals: an f32 widened to f64 shows its binary noise.
        span.record(
            "gen_ai.request.temperature",
            (f64::from(t) * 1000.0).round() / 1000.0,
        );
    }
    if capturing() {
        span.record("gen_ai.input.messages", input_messages(request));
    }
    span
}

/// Records what the call returned on its span.
pub(crate) fn record_response(
    span: &tracing::Span,
    model: &str,
    usage: Usage,
    finish_reason: Option<&str>,
) {
    span.record("gen_ai.response.model", model);
    span.record("gen_ai.usage.input_tokens", usage.input_tokens);
    span.record("gen_ai.usage.output_tokens", usage.output_tokens);
    span.record(
        "gen_ai.usage.cache_read.input_tokens",
        usage.cached_input_tokens,
    );
    span.record(
        "gen_ai.usage.cache_creation.input_tokens",
        usage.cache_write_tokens,
    );
    if let Some(reason) = finish_reason {
        // The conventions' value is an array; one call has one reason.
        span.record(
            "gen_ai.response.finish_reasons",
            tracing::field::display(format!("[\"{reason}\"]")),
        );
    }
}

/// Records a failed call's error type on its span.
pub(crate) fn record_error(span: &tracing::Span, error: &ProviderError) {
    span.record("error.type", error.kind_name());
}
