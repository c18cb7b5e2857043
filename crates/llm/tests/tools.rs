//! Tool calling on the wire: OpenAI's `tools` / `tool_calls` / `role:
//! tool`, Anthropic's `tools` / `tool_use` / `tool_result` (against local
//! servers speaking each protocol), and the constrained-JSON turn every
//! other model takes.

use std::sync::Mutex;

use agon_llm::{
    AnthropicChat, AnthropicConfig, ApiKey, ChatMessage, ChatModel, ChatRequest, ChatResponse,
    ChatStream, HttpConfig, JsonResponse, JsonSchema, OpenAiChat, OpenAiConfig, ProviderError,
    ToolSpec, Usage,
};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn http() -> HttpConfig {
    HttpConfig {
        max_retries: 0,
        ..HttpConfig::default()
    }
}

fn file_read() -> ToolSpec {
    ToolSpec {
        name: "file_read".into(),
        description: "Read a file of the context directory.".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }
}

fn request() -> ChatRequest {
    ChatRequest::new("Propose a rate limiter; read docs/limits.md first.")
        .with_system("You are the architect.")
}

async fn body_of(server: &MockServer, index: usize) -> Value {
    let requests = server.received_requests().await.unwrap();
    serde_json::from_slice(&requests[index].body).unwrap()
}

#[tokio::test]
async fn openai_calls_tools_natively_and_reads_their_results() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "model": "gpt-4o-mini",
            "choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_abc", "type": "function",
                    "function": {"name": "file_read", "arguments": "{\"path\": \"docs/limits.md\"}"}},
                  {"id": "call_bad", "type": "function",
                    "function": {"name": "file_read", "arguments": "{not json"}}]}}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 12}
        })))
        .mount(&server)
        .await;
    let mut config = OpenAiConfig::openai("gpt-4o-mini", |name| match name {
        "OPENAI_API_KEY" => Some("test-openai-key".into()),
        "OPENAI_BASE_URL" => Some(format!("{}/v1", server.uri())),
        _ => None,
    })
    .unwrap();
    config.http = http();
    let model = OpenAiChat::new(config).unwrap();
    let turn = model
        .complete_tools(request(), &[file_read()], 0)
        .await
        .unwrap();
    assert_eq!(turn.calls.len(), 2);
    assert_eq!(turn.calls[0].id, "call_abc");
    assert_eq!(turn.calls[0].arguments, json!({"path": "docs/limits.md"}));
    assert_eq!(
        turn.calls[1].arguments,
        json!("{not json"),
        "kept for the tool to refuse"
    );
    assert_eq!(turn.response.content, "");
    assert_eq!(turn.response.usage, Usage::new(40, 12));
    let body = body_of(&server, 0).await;
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "file_read");
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["required"],
        json!(["path"])
    );

    // The next turn carries the call and its result.
    let mut next = request();
    next.messages
        .push(ChatMessage::assistant_calls("", turn.calls[..1].to_vec()));
    next.messages.push(ChatMessage::tool_result(
        &turn.calls[0],
        "Per client: 100 requests per second.",
        false,
    ));
    model.complete_tools(next, &[file_read()], 1).await.unwrap();
    let body = body_of(&server, 1).await;
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["content"], Value::Null);
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_abc");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        "{\"path\":\"docs/limits.md\"}"
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_abc", "content": "Per client: 100 requests per second."})
    );
}

#[tokio::test]
async fn anthropic_calls_tools_with_tool_use_blocks_and_results_share_a_user_turn() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "model": "claude-haiku-4-5",
            "stop_reason": "tool_use",
            "content": [
                {"type": "text", "text": "Let me check the limits."},
                {"type": "tool_use", "id": "toolu_1", "name": "file_read", "input": {"path": "docs/limits.md"}},
                {"type": "tool_use", "id": "toolu_2", "name": "file_read", "input": {"path": "README.md"}}
            ],
            "usage": {"input_tokens": 50, "output_tokens": 20}
        })))
        .mount(&server)
        .await;
    let mut config = AnthropicConfig::new(ApiKey::new("test-anthropic-key"), "claude-haiku-4-5");
    config.base_url = server.uri();
    config.http = http();
    let model = AnthropicChat::new(config).unwrap();
    let turn = model
        .complete_tools(request(), &[file_read()], 0)
        .await
        .unwrap();
    assert_eq!(turn.response.content, "Let me check the limits.");
    assert_eq!(turn.response.finish_reason.as_deref(), Some("tool_use"));
    let ids: Vec<&str> = turn.calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["toolu_1", "toolu_2"]);
    let body = body_of(&server, 0).await;
    assert_eq!(body["tools"][0]["name"], "file_read");
    assert_eq!(
        body["tools"][0]["input_schema"]["required"],
        json!(["path"])
    );
    assert!(body.get("tool_choice").is_none(), "the model chooses");

    let mut next = request();
    next.messages.push(ChatMessage::assistant_calls(
        turn.response.content.clone(),
        turn.calls.clone(),
    ));
    next.messages.push(ChatMessage::tool_result(
        &turn.calls[0],
        "100 requests per second.",
        false,
    ));
    next.messages.push(ChatMessage::tool_result(
        &turn.calls[1],
        "path \"README.md\": not found",
        true,
    ));
    model.complete_tools(next, &[file_read()], 2).await.unwrap();
    let body = body_of(&server, 1).await;
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.len(),
        3,
        "user, assistant with tool_use, one user turn of results"
    );
    assert_eq!(
        messages[1]["content"][0],
        json!({"type": "text", "text": "Let me check the limits."})
    );
    assert_eq!(messages[1]["content"][1]["type"], "tool_use");
    assert_eq!(
        messages[1]["content"][1]["input"],
        json!({"path": "docs/limits.md"})
    );
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "100 requests per second.", "is_error": false})
    );
    assert_eq!(results[1]["is_error"], true);
}

/// A model without native tool calling: it answers the JSON turn.
struct JsonOnly {
    replies: Mutex<Vec<Value>>,
    seen: Mutex<Vec<ChatRequest>>,
}

#[async_trait::async_trait]
impl ChatModel for JsonOnly {
    fn provider(&self) -> &str {
        "json-only"
    }
    fn model_id(&self) -> &str {
        "json-only"
    }
    async fn complete(&self, _: ChatRequest) -> Result<ChatResponse, ProviderError> {
        unreachable!("the JSON turn asks for JSON")
    }
    async fn complete_json(
        &self,
        request: ChatRequest,
        schema: &JsonSchema,
    ) -> Result<JsonResponse, ProviderError> {
        assert_eq!(
            schema.schema["properties"]["tool"]["enum"],
            json!(["file_read", "none"])
        );
        self.seen.lock().unwrap().push(request);
        let value = self.replies.lock().unwrap().remove(0);
        Ok(JsonResponse {
            response: ChatResponse {
                content: value.to_string(),
                usage: Usage::new(10, 5),
                latency: std::time::Duration::ZERO,
                provider: "json-only".into(),
                model: "json-only".into(),
                finish_reason: Some("stop".into()),
                timing: None,
            },
            value,
            repaired: false,
        })
    }
    async fn stream(&self, _: ChatRequest) -> Result<ChatStream, ProviderError> {
        unreachable!()
    }
}

#[tokio::test]
async fn a_model_without_native_tools_takes_a_constrained_json_turn() {
    let model = JsonOnly {
        replies: Mutex::new(vec![
            json!({"tool": "file_read", "arguments": {"path": "docs/limits.md"}}),
            json!({"tool": "none", "answer": "A token bucket of 100 requests per second."}),
        ]),
        seen: Mutex::new(Vec::new()),
    };
    let turn = model
        .complete_tools(request(), &[file_read()], 3)
        .await
        .unwrap();
    assert_eq!(turn.calls.len(), 1);
    assert_eq!(
        (turn.calls[0].id.as_str(), turn.calls[0].name.as_str()),
        ("call-3", "file_read")
    );
    assert_eq!(turn.calls[0].arguments, json!({"path": "docs/limits.md"}));
    let mut next = request();
    next.messages
        .push(ChatMessage::assistant_calls("", turn.calls.clone()));
    next.messages.push(ChatMessage::tool_result(
        &turn.calls[0],
        "100 requests per second.",
        false,
    ));
    let answer = model.complete_tools(next, &[file_read()], 4).await.unwrap();
    assert!(answer.calls.is_empty());
    assert_eq!(
        answer.response.content,
        "A token bucket of 100 requests per second."
    );
    // The tools were described in the system prompt, the history written out.
    let seen = model.seen.lock().unwrap();
    assert!(
        seen[0]
            .system
            .as_deref()
            .unwrap()
            .contains("- file_read: Read a file")
    );
    let second: Vec<&str> = seen[1]
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert!(
        second[1]
            .contains("{\"tool\": \"file_read\", \"arguments\": {\"path\":\"docs/limits.md\"}}"),
        "{second:?}"
    );
    assert!(
        second[2].starts_with("Tool file_read returned:\n100 requests"),
        "{second:?}"
    );
    assert!(
        seen[1]
            .messages
            .iter()
            .all(|m| m.tool_calls.is_empty() && m.tool_result.is_none())
    );
}
