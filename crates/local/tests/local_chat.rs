//! The in-process chat model on the real SmolLM2 GGUF (fetched by
//! `cargo xtask models`, which `cargo xtask test` runs first). Outputs are
//! kept short: these run in the debug profile.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::sync::OnceLock;

use agon_llm::{ChatModel, ProviderError};
use agon_local::LocalChat;
use agon_local::files::models_dir;

fn chat() -> &'static LocalChat {
    static CHAT: OnceLock<LocalChat> = OnceLock::new();
    CHAT.get_or_init(|| LocalChat::smollm2().unwrap_or_else(|e| panic!("{e}")))
}

use crate::support;
use support::request;

#[tokio::test]
async fn a_short_completion_is_non_empty_and_stops_at_the_end_of_turn() {
    let response = chat()
        .complete(request(
            "What is the capital of France? Answer in one word.",
            24,
        ))
        .await
        .unwrap();
    assert!(!response.content.trim().is_empty());
    assert!(response.content.contains("Paris"), "{:?}", response.content);
    assert_eq!(
        response.finish_reason.as_deref(),
        Some("stop"),
        "ended at <|im_end|>: {:?}",
        response.content
    );
    assert!(!response.content.contains("<|im_end|>"));
    assert!(response.usage.input_tokens > 10 && response.usage.output_tokens >= 1);
    assert_eq!(
        (response.provider.as_str(), response.model.as_str()),
        ("local", "SmolLM2-135M-Instruct.Q4_1")
    );
}

#[tokio::test]
async fn max_tokens_and_stop_sequences_end_generation() {
    support::max_tokens_and_stop_sequences_end_generation(chat()).await;
}

#[tokio::test]
async fn the_prefix_checkpoint_changes_nothing_in_greedy_output() {
    let model = LocalChat::smollm2().unwrap(); // a fresh model: no checkpoints yet
    let req = request("Name a primary colour.", 12);
    let (cold, _, cold_stats) = model.generate_blocking(&req, |_| {}).unwrap();
    let (warm, _, warm_stats) = model.generate_blocking(&req, |_| {}).unwrap();
    assert_eq!(cold_stats.reused_tokens, 0);
    assert!(warm_stats.reused_tokens > 0, "the system prefix was reused");
    assert_eq!(cold, warm);
}

/// A prompt that shares more than the system turn with an earlier one
/// (the debate's rules and material first, the task last) starts from the
/// earlier prompt's state, and writes what it writes from an empty cache.
#[tokio::test]
async fn a_prompt_starts_from_the_longest_prefix_read_before_and_changes_nothing() {
    let shared = "Debate rules: speak briefly and answer the question asked. \
                  Material: the city of Lyon closed its centre to private cars in 2023; \
                  shops reported 4% more visitors and air quality improved.\n\n";
    let first = request(&format!("{shared}Task: say who gained."), 12);
    let second = request(&format!("{shared}Task: name one cost."), 12);
    let cold_model = LocalChat::smollm2().unwrap(); // fresh: no checkpoints yet
    let (cold, _, cold_stats) = cold_model.generate_blocking(&second, |_| {}).unwrap();
    assert_eq!(cold_stats.reused_tokens, 0);

    let model = LocalChat::smollm2().unwrap();
    let (_, _, first_stats) = model.generate_blocking(&first, |_| {}).unwrap();
    let (warm, _, warm_stats) = model.generate_blocking(&second, |_| {}).unwrap();
    let system = model.encode(&LocalChat::chatml(&first).0).unwrap().len();
    assert!(first_stats.prompt_tokens > system + 40);
    assert!(
        warm_stats.reused_tokens > system + 30,
        "the shared material was reused too: {} of {} tokens ({system} the system turn)",
        warm_stats.reused_tokens,
        warm_stats.prompt_tokens
    );
    assert!(warm_stats.reused_tokens < warm_stats.prompt_tokens);
    assert_eq!(cold, warm);
}

#[tokio::test]
async fn streaming_yields_the_same_text_as_complete() {
    support::streaming_yields_the_same_text_as_complete(chat()).await;
}

#[test]
fn the_tokenizer_handles_special_tokens_digits_unicode_and_whitespace() {
    let model = chat();
    let start = model.encode("<|im_start|>").unwrap();
    assert_eq!(start.len(), 1, "special token is one id: {start:?}");
    assert_eq!(model.encode("<|im_end|>").unwrap().len(), 1);
    let digits = model.encode("12345").unwrap();
    assert_eq!(digits.len(), 5, "digits are split one by one: {digits:?}");
    for text in [
        "Hello, world!",
        "  leading and  double  spaces\n\ttabs",
        "Ünïcödé — 数字 🙂",
        "x=3.14, y=-2e10",
        "<|im_start|>user\nhi<|im_end|>\n",
    ] {
        let ids = model.encode(text).unwrap();
        assert_eq!(model.decode(&ids).unwrap(), text, "round trip of {text:?}");
    }
    let hello = model.encode("Hello").unwrap();
    let spaced = model.encode(" Hello").unwrap();
    assert_ne!(hello, spaced, "no prefix space is added");
}

#[tokio::test]
async fn a_prompt_over_the_context_window_is_a_typed_error() {
    let huge = "word ".repeat(9_000);
    let err = chat().complete(request(&huge, 16)).await.unwrap_err();
    assert!(matches!(err, ProviderError::InvalidRequest { .. }), "{err}");
    assert!(
        err.to_string().contains("context window of 8192 tokens"),
        "{err}"
    );
}

#[test]
fn missing_and_foreign_files_are_typed_errors() {
    let err = LocalChat::load(&models_dir().join("absent.gguf")).unwrap_err();
    assert!(
        err.to_string().contains("absent.gguf") && err.to_string().contains("cargo xtask models"),
        "{err}"
    );
    let err = LocalChat::load(&models_dir().join("all-MiniLM-L6-v2/config.json")).unwrap_err();
    assert!(
        matches!(err, ProviderError::ModelFileInvalid { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("not a GGUF file"), "{err}");
}

mod structured {
    use super::chat;

    #[tokio::test]
    async fn every_extraction_schema_validates_greedy_and_sampled() {
        super::support::every_extraction_schema_validates(chat()).await;
    }

    #[tokio::test]
    async fn a_schema_llguidance_cannot_compile_is_a_typed_error() {
        super::support::an_uncompilable_schema_is_a_typed_error(chat()).await;
    }
}

/// The local model calls tools through the constrained JSON turn: whatever
/// it decides, the turn is a call of an offered tool with object arguments,
/// or an answer.
#[tokio::test]
async fn the_local_model_takes_a_constrained_tool_turn() {
    let tools = [agon_llm::ToolSpec {
        name: "file_read".into(),
        description: "Read a file of the context directory.".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }];
    let turn = chat()
        .complete_tools(
            request("Read the file limits.md, then say what the limit is.", 48),
            &tools,
            0,
        )
        .await
        .unwrap();
    match turn.calls.as_slice() {
        [] => assert!(!turn.response.content.trim().is_empty(), "{turn:?}"),
        [call] => {
            assert_eq!(
                (call.id.as_str(), call.name.as_str()),
                ("call-0", "file_read")
            );
            assert!(call.arguments.is_object(), "{call:?}");
        }
        more => panic!("one call at most per JSON turn: {more:?}"),
    }
}

/// The tokens a grammar forces (a JSON key with its quotes and colon) are
/// read in one forward pass with the token before them; the output is the
/// same valid JSON, and the response says where the time went.
#[tokio::test]
async fn forced_json_tokens_are_read_in_one_pass_and_timed() {
    let schema = agon_llm::JsonSchema {
        name: "city".into(),
        schema: serde_json::json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "maxLength": 20},
                "country": {"type": "string", "maxLength": 20},
                "population_in_millions": {"type": "integer"}
            },
            "required": ["city", "country", "population_in_millions"]
        }),
    };
    let req = request("Name a large city in Europe as JSON.", 60);
    let (text, _, stats) = chat().generate_json_blocking(&req, &schema).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    for key in ["city", "country", "population_in_millions"] {
        assert!(value.get(key).is_some(), "{text}");
    }
    assert!(
        stats.forced_tokens >= 6 && stats.forced_tokens < stats.generated_tokens,
        "the keys are forced: {stats:?}"
    );
    let response = chat().complete_json(req, &schema).await.unwrap();
    let timing = response
        .response
        .timing
        .expect("a local model times its calls");
    assert!(
        timing.prompt > std::time::Duration::ZERO && timing.generation > std::time::Duration::ZERO
    );
}
