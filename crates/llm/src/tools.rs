//! Tool calling, provider-neutral: what a model may call ([`ToolSpec`]),
//! what it called ([`ToolCall`]), a result's place in the conversation
//! ([`ToolResult`]), and one turn's outcome ([`ToolTurn`]).
//! [`crate::ChatModel::complete_tools`] runs one turn: OpenAI's `tools`
//! and Anthropic's `tool_use` natively; every other model (the local one
//! included) through a constrained JSON call ([`json_tool_turn`]).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::ProviderError;
use crate::traits::ChatModel;
use crate::types::{ChatRequest, ChatResponse, JsonSchema, Role};

/// A tool the model may call.
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
    let mut request = without_tools(&request);
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
