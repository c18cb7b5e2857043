//! Model-call spans (issue 35): every metered call is a `gen_ai` span with
//! OpenTelemetry's GenAI attributes, recorded against a real local HTTP
//! server (wiremock); no key and no prompt text appear in them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use agon_llm::{
    AnthropicChat, AnthropicConfig, ApiKey, ChatModel, ChatRequest, Metered, PriceTable,
    UsageLedger,
};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The fields of every `gen_ai` span, by span, as recorded.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<BTreeMap<u64, BTreeMap<String, String>>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        if attrs.metadata().name() != "gen_ai" {
            return;
        }
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().insert(id.into_u64(), fields);
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        if let Some(fields) = self.0.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Fields(fields));
        }
    }
}

fn fixture(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn metered(server: &MockServer) -> Metered {
    let mut config = AnthropicConfig::new(
        ApiKey::new("sk-ant-secret-key-42"),
        "claude-3-5-haiku-latest",
    );
    config.base_url = server.uri();
    config.http.max_retries = 0;
    Metered::new(
        Arc::new(AnthropicChat::new(config).unwrap()),
        Arc::new(UsageLedger::new(PriceTable::with_defaults())),
        "judge",
    )
}

#[tokio::test]
async fn a_call_is_a_gen_ai_span_with_the_conventions_attributes_and_no_secret() {
    let spans = Spans::default();
    let subscriber = tracing_subscriber::registry().with(spans.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    let server = MockServer::start().await;
    let mut message = fixture("anthropic_message.json");
    message["usage"] = json!({"input_tokens": 40, "output_tokens": 11,
        "cache_read_input_tokens": 2100, "cache_creation_input_tokens": 0});
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(message))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(
            ResponseTemplate::new(401).set_body_json(fixture("anthropic_auth_error.json")),
        )
        .mount(&server)
        .await;
    let model = metered(&server);
    let request = ChatRequest::new("Should a treasury hold Bitcoin? (a private question)")
        .with_system("You are Theo.")
        .with_temperature(0.25)
        .with_max_tokens(200);
    model.complete(request.clone()).await.unwrap();
    assert!(model.complete(request).await.is_err());

    let recorded: Vec<BTreeMap<String, String>> =
        spans.0.lock().unwrap().values().cloned().collect();
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    let ok = &recorded[0];
    for (field, value) in [
        ("otel.name", "chat claude-3-5-haiku-latest"),
        ("otel.kind", "client"),
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.provider.name", "anthropic"),
        ("gen_ai.request.model", "claude-3-5-haiku-latest"),
        ("gen_ai.request.max_tokens", "200"),
        ("gen_ai.request.temperature", "0.25"),
        ("gen_ai.response.model", "claude-3-5-haiku-20241022"),
        ("gen_ai.usage.input_tokens", "2140"),
        ("gen_ai.usage.output_tokens", "11"),
        ("gen_ai.usage.cache_read.input_tokens", "2100"),
        ("gen_ai.usage.cache_creation.input_tokens", "0"),
        ("gen_ai.response.finish_reasons", "[\"end_turn\"]"),
        ("agon.role", "judge"),
    ] {
        assert_eq!(
            ok.get(field).map(String::as_str),
            Some(value),
            "{field}: {ok:?}"
        );
    }
    assert_eq!(
        recorded[1].get("error.type").map(String::as_str),
        Some("auth")
    );
    let all = format!("{recorded:?}");
    assert!(!all.contains("sk-ant-secret"), "no key: {all}");
    assert!(!all.contains("private question"), "no prompt: {all}");
}
