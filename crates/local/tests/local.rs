//! The in-process embedder on the real MiniLM files (fetched by
//! `cargo xtask models`, which `cargo xtask test` runs first).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::sync::OnceLock;

use agon_llm::{Embedder, InputType, ProviderError};
use agon_local::files::models_dir;
use agon_local::{LocalEmbedder, Precision};

fn embedder() -> &'static LocalEmbedder {
    static EMBEDDER: OnceLock<LocalEmbedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")))
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn texts(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test]
async fn embeddings_are_384_dimensional_unit_vectors() {
    let e = embedder();
    assert_eq!(
        (e.dimensions(), e.max_batch(), e.model_id()),
        (384, 64, "all-MiniLM-L6-v2")
    );
    let vectors = e.embed(&texts(&["Bitcoin is volatile.", "Short.", "A much longer sentence about treasury policy, covenants and the board's appetite for risk."]), InputType::Document).await.unwrap();
    assert_eq!(vectors.len(), 3);
    for v in &vectors {
        assert_eq!(v.len(), 384);
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
    }
}

#[tokio::test]
async fn a_paraphrase_scores_above_an_unrelated_sentence() {
    let v = embedder()
        .embed(
            &texts(&[
                "The company should keep a small part of its cash in Bitcoin.",
                "Holding a little Bitcoin in the corporate treasury makes sense.",
                "The recipe needs two eggs and a cup of flour.",
            ]),
            InputType::Query,
        )
        .await
        .unwrap();
    let paraphrase = cosine(&v[0], &v[1]);
    let unrelated = cosine(&v[0], &v[2]);
    assert!(
        paraphrase > unrelated + 0.3,
        "paraphrase {paraphrase} vs unrelated {unrelated}"
    );
}

#[tokio::test]
async fn large_inputs_are_batched_and_keep_their_order() {
    let inputs: Vec<String> = (0..150)
        .map(|i| format!("Sentence number {i} about topic {}", i % 7))
        .collect();
    let all = embedder()
        .embed(&inputs, InputType::Document)
        .await
        .unwrap();
    assert_eq!(all.len(), 150);
    let one = embedder()
        .embed(&inputs[137..138], InputType::Document)
        .await
        .unwrap();
    assert!(
        cosine(&all[137], &one[0]) > 0.9999,
        "batched and single embeddings agree"
    );
}

/// Work done in the background (a memory writer's batch, a recall ahead
/// of its turn) runs at a lower CPU priority and gives the same bits, one
/// text and several.
#[tokio::test]
async fn background_embeddings_are_the_same_bits() {
    let e = embedder();
    for items in [
        &["One recall query about parking revenue."][..],
        &[
            "Bitcoin is volatile.",
            "Short.",
            "A much longer sentence about treasury policy, covenants and risk.",
        ][..],
    ] {
        let batch = texts(items);
        let waited = e.embed(&batch, InputType::Document).await.unwrap();
        let background = e
            .embed_in_background(&batch, InputType::Document)
            .await
            .unwrap();
        assert_eq!(waited, background);
    }
    assert!(
        e.embed_in_background(&[], InputType::Query).await.is_err(),
        "an empty input is rejected in the background too"
    );
}

#[tokio::test]
async fn empty_input_is_rejected() {
    assert!(matches!(
        embedder().embed(&[], InputType::Query).await,
        Err(ProviderError::InvalidRequest { .. })
    ));
}

#[test]
fn a_missing_model_directory_names_the_file_and_the_fetch_command() {
    let err = LocalEmbedder::load(&models_dir().join("no-such-model")).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("no-such-model/model.safetensors") && text.contains("cargo xtask models"),
        "{text}"
    );
}

/// The float64 NumPy implementation of the same model
/// (tests/fixtures/minilm_reference.py, sharing no code with ours): four
/// texts of different lengths and scripts and their vectors.
fn float64_reference() -> (Vec<String>, Vec<Vec<f32>>) {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/minilm_reference.json")).unwrap();
    (
        serde_json::from_value(fixture["texts"].clone()).unwrap(),
        serde_json::from_value(fixture["vectors"].clone()).unwrap(),
    )
}

/// Each text's largest difference from the reference in any dimension, and
/// its cosine with the reference.
async fn against_the_reference(embedder: &LocalEmbedder) -> Vec<(String, f32, f32)> {
    let (texts, expected) = float64_reference();
    let vectors = embedder.embed(&texts, InputType::Document).await.unwrap();
    assert_eq!(vectors.len(), expected.len());
    texts
        .into_iter()
        .zip(&vectors)
        .zip(&expected)
        .map(|((text, ours), reference)| {
            let worst = ours
                .iter()
                .zip(reference)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            (text, worst, cosine(ours, reference))
        })
        .collect()
}

/// With f32 products the vectors agree with the float64 reference to
/// within f32 rounding.
#[tokio::test]
async fn f32_embeddings_match_an_independent_float64_reference() {
    let e = LocalEmbedder::minilm_at(Precision::F32).unwrap();
    for (text, worst, cosine) in against_the_reference(&e).await {
        assert!(worst < 2e-5, "{text:?}: largest difference {worst}");
        assert!(cosine > 0.99999, "{text:?}: cosine {cosine}");
    }
}

/// With int8 products (the default on AVX-512 VNNI) the vectors stay
/// within a cosine of 0.995 of the float64 reference (0.9975–0.9991 on
/// these texts, the shortest the farthest: docs/memory.md).
#[tokio::test]
async fn int8_embeddings_stay_close_to_the_float64_reference() {
    let e = LocalEmbedder::minilm_at(Precision::Int8).unwrap();
    for (text, worst, cosine) in against_the_reference(&e).await {
        assert!(worst < 0.02, "{text:?}: largest difference {worst}");
        assert!(cosine > 0.995, "{text:?}: cosine {cosine}");
        assert!(
            cosine < 0.99999,
            "{text:?}: as close as f32: not quantized?"
        );
    }
}
