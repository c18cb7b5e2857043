//! Helpers of tool calling (its types are in `types.rs`, the turn in
//! [`crate::ChatModel::complete_tools`]): a conversation with its tool
//! messages written out as text ([`without_tools`]), and provider
//! arguments parsed.

use serde_json::Value;

use crate::types::{ChatRequest, Role};

/// Arguments a provider sent as a JSON string, parsed (kept as the string
/// when they are not JSON, for the tool to refuse).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn parse_arguments(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
}

/// The request with its tool messages written out as text, for a model
/// without native tool calling (or a last call made without tools).
pub fn without_tools(request: &ChatRequest) -> ChatRequest {
    let mut out = request.clone();
    for m in &mut out.messages {
        if !m.tool_calls.is_empty() {
            let calls: Vec<String> = m
                .tool_calls
                .iter()
                .map(|c| {
                    format!(
                        "{{\"tool\": \"{}\", \"arguments\": {}}}",
                        c.name, c.arguments
                    )
                })
                .collect();
            m.content = format!("{}\n{}", m.content, calls.join("\n"))
                .trim()
                .to_owned();
            m.tool_calls.clear();
        }
        if let Some(r) = m.tool_result.take() {
            let status = if r.is_error { "failed" } else { "returned" };
            m.content = format!("Tool {} {status}:\n{}", r.name, m.content);
            m.role = Role::User;
        }
    }
    out
}

/// The `i`-th call of a provider's answer: its id (`call-I` when the
/// provider gave none), tool name (empty when missing: the tool lookup
/// refuses it) and arguments.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn call_of(
    i: usize,
    id: Option<&str>,
    name: Option<&str>,
    arguments: Value,
) -> crate::types::ToolCall {
    crate::types::ToolCall {
        id: id.map_or_else(|| format!("call-{i}"), str::to_owned),
        name: name.unwrap_or_default().to_owned(),
        arguments,
    }
}
