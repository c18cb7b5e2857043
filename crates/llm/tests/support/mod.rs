//! Structured-output checks shared by the in-process backends' suites.

#![allow(dead_code)] // each suite uses what it needs
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use agon_core::extraction::{
    CruxCardPayload, Payload, PositionUpdate, ReflectionBatch, RoundRecordPayload, parse_payload,
};
use agon_llm::json::SchemaValidator;
use agon_llm::{ChatModel, ChatRequest, JsonSchema};

/// Builds a request with `max_tokens` for a prompt.
pub type Request = fn(&str, u32) -> ChatRequest;

fn schema<T: Payload>() -> JsonSchema {
    JsonSchema::new(T::NAME, <T as Payload>::json_schema())
}

const DEBATE: &str = "Debate: should a mid-size company hold Bitcoin as a treasury reserve? \
    Mara (treasurer) argues a capped 5% allocation survives a bad quarter. \
    Theo (trader) says drawdowns arrive with liquidity crunches and covenants are tested quarterly.";

async fn check<T: Payload + serde::de::DeserializeOwned>(
    model: &dyn ChatModel,
    request: Request,
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

/// `complete_json` output validates for every agon-core extraction schema at
/// temperatures 0 and 0.8.
pub async fn every_extraction_schema_validates(model: &dyn ChatModel, request: Request) {
    for t in [0.0, 0.8] {
        check::<PositionUpdate>(model, request, "Extract Theo's position update as JSON.", t).await;
        check::<RoundRecordPayload>(
            model,
            request,
            "Record this round as JSON: each persona's take, a summary.",
            t,
        )
        .await;
        check::<ReflectionBatch>(
            model,
            request,
            "Give one or two reflections on the debate's dynamics as JSON.",
            t,
        )
        .await;
        check::<CruxCardPayload>(
            model,
            request,
            "Write the crux card for Mara vs Theo as JSON.",
            t,
        )
        .await;
    }
}

/// A schema llguidance cannot compile is an error naming the schema.
pub async fn an_uncompilable_schema_is_a_typed_error(model: &dyn ChatModel, request: Request) {
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
