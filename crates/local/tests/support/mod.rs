//! Checks shared by the in-process backends' suites: the request they use,
//! generation limits, streaming and structured output.

#![allow(dead_code)] // each suite uses what it needs
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use agon_extract::{
    CruxCardPayload, MIN_SUMMARY_CHARS, Payload, PositionUpdate, ReflectionBatch, RoundAnalysis,
    RoundRecordPayload, parse_payload,
};
use agon_llm::json::SchemaValidator;
use agon_llm::{ChatModel, ChatRequest, JsonSchema};
use futures::StreamExt;

/// A greedy request with a short system prompt.
pub fn request(text: &str, max_tokens: u32) -> ChatRequest {
    ChatRequest::new(text)
        .with_system("You are a concise assistant.")
        .with_temperature(0.0)
        .with_max_tokens(max_tokens)
}

/// `max_tokens` ends generation with "length" after exactly that many
/// tokens; a stop sequence ends it with "stop" and is cut from the text.
pub async fn max_tokens_and_stop_sequences_end_generation(model: &dyn ChatModel) {
    let long = model
        .complete(request("Count from 1 to 50, separated by commas.", 8))
        .await
        .unwrap();
    assert_eq!(long.finish_reason.as_deref(), Some("length"));
    assert_eq!(long.usage.output_tokens, 8);
    let mut stopped = request("Count from 1 to 50, separated by commas.", 40);
    stopped.stop = vec!["5".into()];
    let response = model.complete(stopped).await.unwrap();
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert!(!response.content.contains('5'), "{:?}", response.content);
}

/// The streamed pieces add up to `complete`'s text; the last chunk has usage.
pub async fn streaming_yields_the_same_text_as_complete(model: &dyn ChatModel) {
    let req = request("Say hello.", 12);
    let whole = model.complete(req.clone()).await.unwrap();
    let chunks: Vec<_> = model.stream(req).await.unwrap().collect().await;
    let chunks: Vec<_> = chunks.into_iter().map(Result::unwrap).collect();
    let text: String = chunks.iter().map(|c| c.delta.as_str()).collect();
    assert_eq!(text, whole.content);
    assert!(chunks.last().unwrap().usage.is_some());
}

fn schema<T: Payload>() -> JsonSchema {
    JsonSchema::new(T::NAME, <T as Payload>::json_schema())
}

const DEBATE: &str = "Debate: should a mid-size company hold Bitcoin as a treasury reserve? \
    Mara (treasurer) argues a capped 5% allocation survives a bad quarter. \
    Theo (trader) says drawdowns arrive with liquidity crunches and covenants are tested quarterly.";

async fn check<T: Payload + serde::de::DeserializeOwned>(
    model: &dyn ChatModel,
    prompt: &str,
    temperature: f32,
) {
    let schema = schema::<T>();
    let mut req = request(&format!("{DEBATE}\n\n{prompt}"), 700);
    req.temperature = Some(temperature);
    let out = model
        .complete_json(req, &schema)
        .await
        .unwrap_or_else(|e| panic!("{} at t={temperature}: {e}", T::NAME));
    assert!(
        SchemaValidator::new(&schema)
            .unwrap()
            .errors(&out.value)
            .is_empty(),
        "{}: {}",
        T::NAME,
        out.value
    );
    parse_payload::<T>(out.value.clone())
        .unwrap_or_else(|e| panic!("{}: {e}: {}", T::NAME, out.value));
}

/// `complete_json` output validates for every agon-core extraction schema,
/// greedy (t = 0) and sampled (t = 0.8). Each schema is asked once, the
/// temperatures alternating: the grammar, not the temperature, keeps the
/// output valid, and both kinds of decoding run through it.
pub async fn every_extraction_schema_validates(model: &dyn ChatModel) {
    check::<PositionUpdate>(model, "Extract Theo's position update as JSON.", 0.0).await;
    check::<RoundRecordPayload>(
        model,
        "Record this round as JSON: each persona's take, a summary.",
        0.8,
    )
    .await;
    check::<ReflectionBatch>(
        model,
        "Give one or two reflections on the debate's dynamics as JSON.",
        0.0,
    )
    .await;
    check::<CruxCardPayload>(model, "Write the crux card for Mara vs Theo as JSON.", 0.8).await;
    // A dialectic round's analysis that also writes two agents' perspective
    // summaries (what round 1's analysis asks when their histories reached
    // the summarization threshold): each summary is written, within its
    // length.
    let schema = JsonSchema::new(
        RoundAnalysis::NAME,
        RoundAnalysis::schema_with_summaries(
            &RoundAnalysis::json_schema(),
            &[("Mara".to_owned(), 120), ("Theo".to_owned(), 120)],
        ),
    );
    let req = request(
        &format!(
            "{DEBATE}\n\nAnalyse this round as JSON: each contribution's update, and a summary \
             of the debate so far from Mara's and from Theo's perspective."
        ),
        700,
    );
    let out = model
        .complete_json(req, &schema)
        .await
        .unwrap_or_else(|e| panic!("round_analysis with summaries: {e}"));
    let analysis = parse_payload::<RoundAnalysis>(out.value.clone())
        .unwrap_or_else(|e| panic!("round_analysis: {e}: {}", out.value));
    for name in ["Mara", "Theo"] {
        let summary = &analysis.summaries[name];
        assert!(
            (MIN_SUMMARY_CHARS..=240).contains(&summary.chars().count()),
            "{name}: {summary:?}"
        );
    }
}

/// A schema llguidance cannot compile is an error naming the schema.
pub async fn an_uncompilable_schema_is_a_typed_error(model: &dyn ChatModel) {
    let bad = JsonSchema::new(
        "broken",
        serde_json::json!({"type": "object", "properties": {"x": {"$ref": "#/nowhere"}}, "required": ["x"]}),
    );
    let err = model
        .complete_json(request("anything", 16), &bad)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("broken"), "{err}");
}
