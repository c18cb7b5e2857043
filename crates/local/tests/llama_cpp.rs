//! The llama.cpp backend (feature `llama-cpp`) on the real SmolLM2 GGUF, and
//! llama.cpp as the reference tokenizer for the in-process backend (its
//! tokenizer built from the GGUF metadata). Run with
//! `cargo xtask test --llama-cpp` (needs cmake and libclang to build).

#![cfg(feature = "llama-cpp")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::sync::OnceLock;

use agon_llm::{ChatModel, ProviderError};
use agon_local::files::models_dir;
use agon_local::{LlamaCppChat, LocalChat};

fn chat() -> &'static LlamaCppChat {
    static CHAT: OnceLock<LlamaCppChat> = OnceLock::new();
    CHAT.get_or_init(|| LlamaCppChat::smollm2().unwrap_or_else(|e| panic!("{e}")))
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
    assert!(response.content.contains("Paris"), "{:?}", response.content);
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert!(!response.content.contains("<|im_end|>"));
    assert!(response.usage.input_tokens > 10 && response.usage.output_tokens >= 1);
    assert_eq!(response.model, "SmolLM2-135M-Instruct.Q4_1");
}

#[tokio::test]
async fn max_tokens_and_stop_sequences_end_generation() {
    support::max_tokens_and_stop_sequences_end_generation(chat()).await;
}

#[test]
fn the_cached_prefix_changes_nothing_in_greedy_output() {
    let model = LlamaCppChat::smollm2().unwrap(); // its own context: nothing cached yet
    let req = request("Name a primary colour.", 12);
    let other = request("Name a planet.", 12);
    let (cold, _, cold_stats) = model.generate_blocking(&req, None, |_| {}).unwrap();
    let _ = model.generate_blocking(&other, None, |_| {}).unwrap();
    let (warm, _, warm_stats) = model.generate_blocking(&req, None, |_| {}).unwrap();
    assert_eq!(cold_stats.reused_tokens, 0);
    assert!(
        warm_stats.reused_tokens > 10,
        "the shared system turn was reused: {warm_stats:?}"
    );
    assert_eq!(cold, warm);
}

#[tokio::test]
async fn streaming_yields_the_same_text_as_complete() {
    support::streaming_yields_the_same_text_as_complete(chat()).await;
}

#[test]
fn the_gguf_tokenizer_tokenizes_exactly_as_llama_cpp() {
    let ours = LocalChat::smollm2().unwrap();
    for text in [
        "Hello, world!",
        "  leading and  double  spaces\n\ttabs",
        "Ünïcödé — 数字 🙂",
        "x=3.14, y=-2e10, 1234567",
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
        "don't STOP: it's 9:45pm!!",
    ] {
        assert_eq!(
            ours.encode(text).unwrap(),
            chat().encode(text).unwrap(),
            "token ids of {text:?}"
        );
    }
}

#[tokio::test]
async fn a_prompt_over_the_context_window_is_a_typed_error() {
    let huge = "word ".repeat(9_000);
    let err = chat().complete(request(&huge, 16)).await.unwrap_err();
    assert!(matches!(err, ProviderError::InvalidRequest { .. }), "{err}");
    assert!(err.to_string().contains("context window"), "{err}");
}

#[test]
fn missing_and_foreign_files_are_typed_errors() {
    let err = LlamaCppChat::load(&models_dir().join("absent.gguf")).unwrap_err();
    assert!(
        err.to_string().contains("absent.gguf") && err.to_string().contains("cargo xtask models"),
        "{err}"
    );
    let err = LlamaCppChat::load(&models_dir().join("all-MiniLM-L6-v2/config.json")).unwrap_err();
    assert!(
        matches!(err, ProviderError::ModelFileInvalid { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("config.json"), "{err}");
}

#[tokio::test]
async fn every_extraction_schema_validates_greedy_and_sampled() {
    support::every_extraction_schema_validates(chat()).await;
}

#[tokio::test]
async fn a_schema_llguidance_cannot_compile_is_a_typed_error() {
    support::an_uncompilable_schema_is_a_typed_error(chat()).await;
}
