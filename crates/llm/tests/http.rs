//! The HTTP providers against a real local HTTP server (wiremock) that
//! answers with bodies shaped exactly like each API's (fixtures/). No test
//! reaches the internet. Request shapes are asserted too.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::time::{Duration, Instant};

use agon_llm::{
    AnthropicChat, AnthropicConfig, ApiKey, ChatModel, ChatRequest, Embedder, EmbeddingApi,
    EmbeddingConfig, Fallback, HttpConfig, HttpEmbedder, InputType, JsonSchema, OpenAiChat,
    OpenAiConfig, ProviderError, StructuredOutput,
};
use futures::StreamExt;
use serde_json::{Value, json};
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn json_fixture(name: &str) -> Value {
    serde_json::from_str(&fixture(name)).unwrap()
}

fn fast_http() -> HttpConfig {
    HttpConfig {
        timeout: Duration::from_secs(5),
        deadline: Duration::from_secs(20),
        max_retries: 3,
        min_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
        concurrency: 4,
    }
}

fn anthropic(server: &MockServer) -> AnthropicChat {
    let mut config =
        AnthropicConfig::new(ApiKey::new("test-anthropic-key"), "claude-3-5-haiku-latest");
    config.base_url = server.uri();
    config.http = fast_http();
    AnthropicChat::new(config).unwrap()
}

fn openai(server: &MockServer, structured: StructuredOutput) -> OpenAiChat {
    let mut config = OpenAiConfig::openai("gpt-4o-mini", |name| match name {
        "OPENAI_API_KEY" => Some("test-openai-key".into()),
        "OPENAI_BASE_URL" => Some(format!("{}/v1", server.uri())),
        _ => None,
    })
    .unwrap();
    config.http = fast_http();
    config.structured = structured;
    OpenAiChat::new(config).unwrap()
}

fn schema() -> JsonSchema {
    JsonSchema::new(
        "position_update",
        json!({
            "type": "object",
            "properties": {
                "overallStance": {"type": ["string", "null"], "maxLength": 300},
                "concession": {"type": ["string", "null"]}
            },
            "required": ["overallStance"]
        }),
    )
}

fn request() -> ChatRequest {
    ChatRequest::new("Should a treasury hold Bitcoin?")
        .with_system("You are Theo, a macro trader.")
        .with_temperature(0.2)
        .with_max_tokens(200)
}

/// [`request`] asking `user`.
fn request_with(user: &str) -> ChatRequest {
    let mut request = request();
    request.messages[0].content = user.to_owned();
    request
}

async fn body_of(server: &MockServer, index: usize) -> Value {
    let requests = server.received_requests().await.unwrap();
    serde_json::from_slice(&requests[index].body).unwrap()
}

mod anthropic {
    use super::*;

    #[tokio::test]
    async fn plain_completion_has_the_messages_api_shape() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .and(header("x-api-key", "test-anthropic-key"))
            .and(header("anthropic-version", "2023-06-01"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json_fixture("anthropic_message.json")),
            )
            .expect(1)
            .mount(&server)
            .await;
        let response = anthropic(&server).complete(request()).await.unwrap();
        assert_eq!(
            response.content,
            "A capped allocation survives a bad quarter."
        );
        assert_eq!(
            (response.usage.input_tokens, response.usage.output_tokens),
            (42, 11)
        );
        assert_eq!(response.provider, "anthropic");
        assert_eq!(response.model, "claude-3-5-haiku-20241022");
        assert_eq!(response.finish_reason.as_deref(), Some("end_turn"));
        let body = body_of(&server, 0).await;
        assert_eq!(body["model"], "claude-3-5-haiku-latest");
        assert_eq!(
            body["system"], "You are Theo, a macro trader.",
            "system is top-level"
        );
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": "Should a treasury hold Bitcoin?"}])
        );
        assert_eq!(body["max_tokens"], 200);
        assert!((body["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
    }

    #[tokio::test]
    async fn structured_output_goes_through_a_forced_tool_call() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json_fixture("anthropic_tool_use.json")),
            )
            .mount(&server)
            .await;
        let out = anthropic(&server)
            .complete_json(request(), &schema())
            .await
            .unwrap();
        assert_eq!(out.value["overallStance"], "Hold at most 5% in Bitcoin.");
        assert!(!out.repaired);
        let body = body_of(&server, 0).await;
        assert_eq!(
            body["tool_choice"],
            json!({"type": "tool", "name": "position_update"})
        );
        assert_eq!(body["tools"][0]["name"], "position_update");
        assert_eq!(body["tools"][0]["input_schema"], schema().schema);
    }

    /// Prompt caching (issue 35): a system prompt long enough to be cached
    /// is sent as one text block with a cache breakpoint (a short one
    /// stays a string), and the cache reads and writes Anthropic reports
    /// apart are counted in the prompt tokens and kept apart, in complete
    /// and streamed calls.
    #[tokio::test]
    async fn a_long_system_prompt_is_cached_and_cache_usage_is_counted() {
        let server = MockServer::start().await;
        let mut message = json_fixture("anthropic_message.json");
        message["usage"] = json!({"input_tokens": 40, "output_tokens": 11,
            "cache_read_input_tokens": 2100, "cache_creation_input_tokens": 0});
        let stream = fixture("anthropic_stream.sse").replace(
            r#""usage":{"input_tokens":25,"output_tokens":1}"#,
            r#""usage":{"input_tokens":25,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":2100}"#,
        );
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .and(body_partial_json(json!({"stream": true})))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "text/event-stream")
                    .set_body_string(stream),
            )
            .mount(&server)
            .await;
        // The first mock that matches answers: calls without `stream`.
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(ResponseTemplate::new(200).set_body_json(message))
            .mount(&server)
            .await;
        // Haiku caches from ~2,048 tokens: 9,000 characters is enough.
        let long = "You track positions in a debate. ".repeat(280);
        let model = anthropic(&server);
        let response = model
            .complete(request().with_system(long.clone()))
            .await
            .unwrap();
        assert_eq!(
            response.usage,
            agon_llm::Usage {
                input_tokens: 2140,
                output_tokens: 11,
                cached_input_tokens: 2100,
                cache_write_tokens: 0,
            }
        );
        let body = body_of(&server, 0).await;
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": long, "cache_control": {"type": "ephemeral"}}])
        );
        let chunks: Vec<_> = model
            .stream(request().with_system(long.clone()))
            .await
            .unwrap()
            .collect()
            .await;
        let usage = chunks.last().unwrap().as_ref().unwrap().usage.unwrap();
        assert_eq!(
            (
                usage.input_tokens,
                usage.cache_write_tokens,
                usage.output_tokens
            ),
            (2125, 2100, 6)
        );
        // A short system prompt would not be cached: sent as a string.
        model.complete(request()).await.unwrap();
        let body = body_of(&server, 2).await;
        assert_eq!(body["system"], "You are Theo, a macro trader.");
    }

    /// A call that marks the start of its user prompt as shared with other
    /// calls (the debate's and the round's material) gets a cache
    /// breakpoint there when, with the system prompt, it is long enough to
    /// be cached; the call's own part follows in a second block. A short
    /// shared start, or none, leaves the prompt a string.
    #[tokio::test]
    async fn a_long_shared_start_of_the_prompt_gets_a_cache_breakpoint() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json_fixture("anthropic_message.json")),
            )
            .mount(&server)
            .await;
        let model = anthropic(&server);
        // Haiku caches from ~2,048 tokens: 9,000 characters is enough.
        let shared = "Problem: grade programming assignments. ".repeat(225);
        let own = "You are Theo. Round 2. Critique the proposal.";
        let user = format!("{shared}\n\n{own}");
        model
            .complete(request_with(&user).with_shared_prefix(shared.len()))
            .await
            .unwrap();
        let body = body_of(&server, 0).await;
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                {"type": "text", "text": shared, "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": format!("\n\n{own}")},
            ])
        );
        assert_eq!(body["system"], "You are Theo, a macro trader.");
        // Too short to be cached, or not marked: a plain string.
        model
            .complete(request_with(&format!("Problem: short.\n\n{own}")).with_shared_prefix(15))
            .await
            .unwrap();
        assert!(body_of(&server, 1).await["messages"][0]["content"].is_string());
        model.complete(request_with(&user)).await.unwrap();
        assert!(body_of(&server, 2).await["messages"][0]["content"].is_string());
    }

    #[tokio::test]
    async fn streaming_yields_text_then_usage() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .and(body_partial_json(json!({"stream": true})))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "text/event-stream")
                    .set_body_string(fixture("anthropic_stream.sse")),
            )
            .mount(&server)
            .await;
        let chunks: Vec<_> = anthropic(&server)
            .stream(request())
            .await
            .unwrap()
            .collect()
            .await;
        let chunks: Vec<_> = chunks.into_iter().map(Result::unwrap).collect();
        let text: String = chunks.iter().map(|c| c.delta.as_str()).collect();
        assert_eq!(text, "Volatility is the price.");
        let last = chunks.last().unwrap();
        assert_eq!(last.usage.unwrap().input_tokens, 25);
        assert_eq!(last.usage.unwrap().output_tokens, 6);
        assert_eq!(last.finish_reason.as_deref(), Some("end_turn"));
    }

    #[tokio::test]
    async fn a_stream_cut_before_message_stop_is_an_error() {
        let server = MockServer::start().await;
        let cut: String = fixture("anthropic_stream.sse")
            .split("event: message_delta")
            .next()
            .unwrap()
            .to_owned();
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "text/event-stream")
                    .set_body_string(cut),
            )
            .mount(&server)
            .await;
        let items: Vec<_> = anthropic(&server)
            .stream(request())
            .await
            .unwrap()
            .collect()
            .await;
        let err = items.last().unwrap().as_ref().unwrap_err();
        assert!(
            err.to_string().contains("ended before `message_stop`"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn auth_error_names_the_variable_and_is_not_retried() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(401).set_body_json(json_fixture("anthropic_auth_error.json")),
            )
            .expect(1)
            .mount(&server)
            .await;
        let err = anthropic(&server).complete(request()).await.unwrap_err();
        assert!(matches!(err, ProviderError::Auth { .. }));
        assert_eq!(
            err.to_string(),
            "anthropic: authentication failed (invalid x-api-key); check ANTHROPIC_API_KEY"
        );
        assert!(
            !err.to_string().contains("test-anthropic-key"),
            "the key never appears"
        );
    }

    #[tokio::test]
    async fn overloaded_529_is_retried() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(529).set_body_json(json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json_fixture("anthropic_message.json")),
            )
            .mount(&server)
            .await;
        assert!(anthropic(&server).complete(request()).await.is_ok());
        assert_eq!(server.received_requests().await.unwrap().len(), 2);
    }

    #[test]
    fn a_missing_key_names_the_variable_and_provider() {
        let err = AnthropicConfig::from_lookup("claude-3-5-haiku-latest", |_| None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "anthropic: no API key: set ANTHROPIC_API_KEY"
        );
    }
}

mod openai {
    use super::*;

    #[tokio::test]
    async fn plain_completion_has_the_chat_completions_shape() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .and(header("authorization", "Bearer test-openai-key"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json_fixture("openai_completion.json")),
            )
            .expect(1)
            .mount(&server)
            .await;
        let mut req = request();
        req.stop = vec!["\n\n".into()];
        let response = openai(&server, StructuredOutput::JsonSchema)
            .complete(req)
            .await
            .unwrap();
        assert_eq!(response.content, "T-bills pay 4.3% with no drawdown.");
        assert_eq!(
            (response.usage.input_tokens, response.usage.output_tokens),
            (19, 10)
        );
        assert_eq!(response.provider, "openai");
        let body = body_of(&server, 0).await;
        assert_eq!(body["model"], "gpt-4o-mini");
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "You are Theo, a macro trader."})
        );
        assert_eq!(body["messages"][1]["role"], "user");
        assert_eq!(body["stop"], json!(["\n\n"]));
    }

    /// OpenAI counts cached prompt tokens in `prompt_tokens` and names them
    /// in `prompt_tokens_details.cached_tokens` (issue 35).
    #[tokio::test]
    async fn cached_prompt_tokens_are_read() {
        let server = MockServer::start().await;
        let mut completion = json_fixture("openai_completion.json");
        completion["usage"] = json!({"prompt_tokens": 1900, "completion_tokens": 10,
            "total_tokens": 1910, "prompt_tokens_details": {"cached_tokens": 1536}});
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(ResponseTemplate::new(200).set_body_json(completion))
            .mount(&server)
            .await;
        let response = openai(&server, StructuredOutput::JsonSchema)
            .complete(request())
            .await
            .unwrap();
        assert_eq!(
            response.usage,
            agon_llm::Usage {
                input_tokens: 1900,
                output_tokens: 10,
                cached_input_tokens: 1536,
                cache_write_tokens: 0,
            }
        );
        assert_eq!(response.usage.uncached_input_tokens(), 364);
    }

    #[tokio::test]
    async fn structured_output_sends_response_format_json_schema() {
        let server = MockServer::start().await;
        let mut completion = json_fixture("openai_completion.json");
        completion["choices"][0]["message"]["content"] =
            json!(r#"{"overallStance": "T-bills first.", "concession": null}"#);
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(completion))
            .mount(&server)
            .await;
        let out = openai(&server, StructuredOutput::JsonSchema)
            .complete_json(request(), &schema())
            .await
            .unwrap();
        assert_eq!(out.value["overallStance"], "T-bills first.");
        let body = body_of(&server, 0).await;
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert_eq!(
            body["response_format"]["json_schema"]["name"],
            "position_update"
        );
        assert_eq!(
            body["response_format"]["json_schema"]["schema"],
            schema().schema
        );
    }

    /// Answers with invalid output first, then valid output after the repair prompt.
    struct RepairResponder;
    impl Respond for RepairResponder {
        fn respond(&self, request: &Request) -> ResponseTemplate {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            let messages = body["messages"].as_array().unwrap();
            let content = if messages.len() > 2 {
                "```json\n{\"overallStance\": \"Fixed.\"}\n```"
            } else {
                "Sure! {\"overallStance\": 42}"
            };
            let mut completion = json_fixture("openai_completion.json");
            completion["choices"][0]["message"]["content"] = json!(content);
            ResponseTemplate::new(200).set_body_json(completion)
        }
    }

    #[tokio::test]
    async fn prompt_mode_parses_leniently_and_repairs_once() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(RepairResponder)
            .mount(&server)
            .await;
        let out = openai(&server, StructuredOutput::Prompt)
            .complete_json(request(), &schema())
            .await
            .unwrap();
        assert_eq!(out.value, json!({"overallStance": "Fixed."}));
        assert!(out.repaired);
        assert_eq!(
            out.response.usage.input_tokens, 38,
            "usage sums both attempts"
        );
        let first = body_of(&server, 0).await;
        assert!(first.get("response_format").is_none());
        assert!(
            first["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains("JSON Schema"),
            "schema in the system prompt"
        );
        let second = body_of(&server, 1).await;
        let repair = second["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            repair.contains("/overallStance"),
            "the repair prompt shows the validation error: {repair}"
        );
    }

    #[tokio::test]
    async fn output_that_stays_invalid_is_a_typed_error() {
        let server = MockServer::start().await;
        let mut completion = json_fixture("openai_completion.json");
        completion["choices"][0]["message"]["content"] = json!("no json at all");
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(completion))
            .expect(2)
            .mount(&server)
            .await;
        let err = openai(&server, StructuredOutput::Prompt)
            .complete_json(request(), &schema())
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::SchemaMismatch { .. }), "{err}");
    }

    #[tokio::test]
    async fn streaming_ends_at_done_with_usage() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(body_partial_json(
                json!({"stream": true, "stream_options": {"include_usage": true}}),
            ))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "text/event-stream")
                    .set_body_string(fixture("openai_stream.sse")),
            )
            .mount(&server)
            .await;
        let chunks: Vec<_> = openai(&server, StructuredOutput::JsonSchema)
            .stream(request())
            .await
            .unwrap()
            .collect()
            .await;
        let chunks: Vec<_> = chunks.into_iter().map(Result::unwrap).collect();
        let text: String = chunks.iter().map(|c| c.delta.as_str()).collect();
        assert_eq!(text, "Custody costs add up.");
        assert_eq!(
            chunks
                .iter()
                .rev()
                .find_map(|c| c.usage)
                .unwrap()
                .output_tokens,
            4
        );
    }

    #[tokio::test]
    async fn a_malformed_sse_event_is_an_error_not_an_empty_turn() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "text/event-stream")
                    .set_body_string(fixture("openai_stream_malformed.sse")),
            )
            .mount(&server)
            .await;
        let items: Vec<_> = openai(&server, StructuredOutput::JsonSchema)
            .stream(request())
            .await
            .unwrap()
            .collect()
            .await;
        assert_eq!(items.len(), 2, "{items:?}");
        assert_eq!(items[0].as_ref().unwrap().delta, "Custody ");
        let err = items[1].as_ref().unwrap_err();
        assert!(
            matches!(err, ProviderError::MalformedResponse { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("not JSON"), "{err}");
    }

    #[tokio::test]
    async fn rate_limit_waits_for_retry_after_then_succeeds() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(429)
                    .insert_header("retry-after", "1")
                    .set_body_json(json_fixture("openai_rate_limited.json")),
            )
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json_fixture("openai_completion.json")),
            )
            .mount(&server)
            .await;
        let started = Instant::now();
        let response = openai(&server, StructuredOutput::JsonSchema)
            .complete(request())
            .await
            .unwrap();
        assert!(
            started.elapsed() >= Duration::from_millis(950),
            "Retry-After honoured: {:?}",
            started.elapsed()
        );
        assert!(response.latency >= Duration::from_millis(950));
        assert_eq!(server.received_requests().await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn server_error_then_success() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(500).set_body_string("upstream exploded"))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json_fixture("openai_completion.json")),
            )
            .mount(&server)
            .await;
        assert!(
            openai(&server, StructuredOutput::JsonSchema)
                .complete(request())
                .await
                .is_ok()
        );
        assert_eq!(server.received_requests().await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn retries_give_up_after_max_retries() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(503))
            .expect(4)
            .mount(&server)
            .await;
        let err = openai(&server, StructuredOutput::JsonSchema)
            .complete(request())
            .await
            .unwrap_err();
        assert!(
            matches!(err, ProviderError::Server { status: 503, .. }),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_slow_server_times_out() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json_fixture("openai_completion.json"))
                    .set_delay(Duration::from_secs(3)),
            )
            .mount(&server)
            .await;
        let mut config = OpenAiConfig::local("vllm", format!("{}/v1", server.uri()), "m");
        config.http = HttpConfig {
            timeout: Duration::from_millis(200),
            max_retries: 1,
            ..fast_http()
        };
        let started = Instant::now();
        let err = OpenAiChat::new(config)
            .unwrap()
            .complete(request())
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::Timeout { .. }), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "bounded by the timeout: {:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn the_overall_deadline_bounds_retries() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "5"))
            .mount(&server)
            .await;
        let mut config = OpenAiConfig::local("ollama", format!("{}/v1", server.uri()), "m");
        config.http = HttpConfig {
            deadline: Duration::from_millis(500),
            ..fast_http()
        };
        let started = Instant::now();
        let err = OpenAiChat::new(config)
            .unwrap()
            .complete(request())
            .await
            .unwrap_err();
        assert_eq!(
            err,
            ProviderError::Timeout {
                provider: "ollama".into(),
                after: Duration::from_millis(500)
            }
        );
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn quota_errors_are_not_retried() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(429).set_body_json(json_fixture("openai_quota.json")),
            )
            .expect(1)
            .mount(&server)
            .await;
        let err = openai(&server, StructuredOutput::JsonSchema)
            .complete(request())
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::QuotaExhausted { .. }), "{err}");
        assert!(!err.is_retryable());
    }

    #[tokio::test]
    async fn an_unknown_model_names_the_model_and_base_url() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(404)
                    .set_body_json(json_fixture("openai_model_not_found.json")),
            )
            .expect(1)
            .mount(&server)
            .await;
        let mut req = request();
        req.model = Some("gpt-9".into());
        let err = openai(&server, StructuredOutput::JsonSchema)
            .complete(req)
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("model `gpt-9` not found at")
                && text.contains(&format!("{}/v1", server.uri())),
            "{text}"
        );
    }

    #[tokio::test]
    async fn empty_requests_fail_before_any_request() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200))
            .expect(0)
            .mount(&server)
            .await;
        let mut empty = request();
        empty.messages.clear();
        let model = openai(&server, StructuredOutput::JsonSchema);
        assert!(matches!(
            model.complete(empty.clone()).await,
            Err(ProviderError::InvalidRequest { .. })
        ));
        assert!(matches!(
            model.stream(empty).await,
            Err(ProviderError::InvalidRequest { .. })
        ));
    }

    #[tokio::test]
    async fn fallback_moves_to_the_next_model() {
        let failing = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(401))
            .mount(&failing)
            .await;
        let working = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json_fixture("anthropic_message.json")),
            )
            .mount(&working)
            .await;
        let chain = Fallback::new(vec![
            std::sync::Arc::new(openai(&failing, StructuredOutput::JsonSchema)),
            std::sync::Arc::new(anthropic(&working)),
        ])
        .unwrap();
        let response = chain.complete(request()).await.unwrap();
        assert_eq!(response.provider, "anthropic");
        let all_fail = Fallback::new(vec![
            std::sync::Arc::new(openai(&failing, StructuredOutput::JsonSchema)),
            std::sync::Arc::new(openai(&failing, StructuredOutput::Prompt)),
        ])
        .unwrap();
        assert!(matches!(
            all_fail.complete(request()).await,
            Err(ProviderError::AllFailed { tried: 2, .. })
        ));
    }
}

mod accounting_and_limits {
    use std::sync::Arc;

    use agon_llm::{Metered, PriceTable, UsageLedger};

    use super::*;

    #[tokio::test]
    async fn metered_calls_are_summed_by_scope_with_cost() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json_fixture("openai_completion.json")),
            )
            .mount(&server)
            .await;
        let ledger = Arc::new(UsageLedger::new(PriceTable::with_defaults()));
        let model: Arc<dyn ChatModel> = Arc::new(openai(&server, StructuredOutput::JsonSchema));
        let debater = Metered::new(Arc::clone(&model), Arc::clone(&ledger), "debate-1/debater");
        debater.complete(request()).await.unwrap();
        debater.complete(request()).await.unwrap();
        let scope = ledger.scope("debate-1/debater");
        assert_eq!(scope.calls, 2);
        assert_eq!(scope.usage.input_tokens, 38);
        let expected = 2.0 * (19.0 * 0.15 + 10.0 * 0.60) / 1e6;
        assert!(
            (scope.cost_usd - expected).abs() < 1e-12,
            "{}",
            scope.cost_usd
        );
    }

    #[tokio::test]
    async fn the_concurrency_limit_queues_requests() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json_fixture("openai_completion.json"))
                    .set_delay(Duration::from_millis(300)),
            )
            .mount(&server)
            .await;
        let mut config = OpenAiConfig::local("vllm", format!("{}/v1", server.uri()), "m");
        config.http = HttpConfig {
            concurrency: 1,
            ..fast_http()
        };
        let model = OpenAiChat::new(config).unwrap();
        let started = Instant::now();
        let (a, b) = tokio::join!(model.complete(request()), model.complete(request()));
        assert!(a.is_ok() && b.is_ok());
        assert!(
            started.elapsed() >= Duration::from_millis(600),
            "one at a time: {:?}",
            started.elapsed()
        );
    }
}

mod embeddings {
    use super::*;

    /// Answers each batch with its data in reverse order (indices say where
    /// each belongs) and vector = [input length, 1, 0, 0].
    struct Reversed;
    impl Respond for Reversed {
        fn respond(&self, request: &Request) -> ResponseTemplate {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            let inputs = body["input"].as_array().unwrap();
            let data: Vec<Value> = inputs
                .iter()
                .enumerate()
                .rev()
                .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": [text.as_str().unwrap().len() as f64, 1.0, 0.0, 0.0]}))
                .collect();
            ResponseTemplate::new(200).set_body_json(json!({"object": "list", "data": data, "model": "voyage-3", "usage": {"total_tokens": 10}}))
        }
    }

    fn voyage(server: &MockServer, max_batch: usize) -> HttpEmbedder {
        let mut config = EmbeddingConfig::voyage(|_| Some("test-voyage-key".into())).unwrap();
        config.base_url = format!("{}/v1", server.uri());
        config.dimensions = 4;
        config.max_batch = max_batch;
        config.http = fast_http();
        HttpEmbedder::new(config).unwrap()
    }

    #[tokio::test]
    async fn batches_preserve_input_order() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/embeddings"))
            .and(header("authorization", "Bearer test-voyage-key"))
            .and(body_partial_json(
                json!({"model": "voyage-3", "input_type": "document"}),
            ))
            .respond_with(Reversed)
            .expect(3)
            .mount(&server)
            .await;
        let texts: Vec<String> = ["a", "bb", "ccc", "dddd", "eeeee"]
            .map(String::from)
            .to_vec();
        let embedder = voyage(&server, 2);
        assert_eq!(
            (
                embedder.dimensions(),
                embedder.max_batch(),
                embedder.model_id()
            ),
            (4, 2, "voyage-3")
        );
        let vectors = embedder.embed(&texts, InputType::Document).await.unwrap();
        let lengths: Vec<f32> = vectors.iter().map(|v| v[0]).collect();
        assert_eq!(lengths, [1.0, 2.0, 3.0, 4.0, 5.0]);
        let sizes: Vec<usize> = futures::future::join_all((0..3).map(|i| body_of(&server, i)))
            .await
            .iter()
            .map(|b| b["input"].as_array().unwrap().len())
            .collect();
        assert_eq!(sizes, [2, 2, 1]);
    }

    #[tokio::test]
    async fn query_input_type_is_sent_and_openai_dialect_omits_it() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(Reversed)
            .mount(&server)
            .await;
        voyage(&server, 8)
            .embed(&["q".into()], InputType::Query)
            .await
            .unwrap();
        assert_eq!(body_of(&server, 0).await["input_type"], "query");
        let mut config =
            EmbeddingConfig::openai(|name| (name == "OPENAI_API_KEY").then(|| "k".into())).unwrap();
        config.base_url = format!("{}/v1", server.uri());
        config.dimensions = 4;
        config.api = EmbeddingApi::OpenAi;
        HttpEmbedder::new(config)
            .unwrap()
            .embed(&["q".into()], InputType::Query)
            .await
            .unwrap();
        assert!(body_of(&server, 1).await.get("input_type").is_none());
    }

    #[tokio::test]
    async fn wrong_dimensions_are_a_malformed_response() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(Reversed)
            .mount(&server)
            .await;
        let mut config = EmbeddingConfig::voyage(|_| Some("k".into())).unwrap();
        config.base_url = format!("{}/v1", server.uri());
        let err = HttpEmbedder::new(config)
            .unwrap()
            .embed(&["x".into()], InputType::Query)
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("has 4 dimensions, model `voyage-3` is configured for 1024"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn empty_input_fails_before_any_request() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(Reversed)
            .expect(0)
            .mount(&server)
            .await;
        let embedder = voyage(&server, 2);
        assert!(matches!(
            embedder.embed(&[], InputType::Query).await,
            Err(ProviderError::InvalidRequest { .. })
        ));
        assert!(matches!(
            embedder
                .embed(&["ok".into(), " ".into()], InputType::Query)
                .await,
            Err(ProviderError::InvalidRequest { .. })
        ));
    }

    #[test]
    fn a_missing_voyage_key_names_the_variable() {
        let err = EmbeddingConfig::voyage(|_| None).unwrap_err();
        assert_eq!(err.to_string(), "voyage: no API key: set VOYAGE_API_KEY");
    }
}
