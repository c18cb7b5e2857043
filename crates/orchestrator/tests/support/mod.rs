//! Shared test helpers: stores, small configs, canonical logs.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::field_reassign_with_default)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agon_config::{AspectConfig, DebateConfig};
use agon_core::Blackboard;
use agon_store::EventStore;
use serde_json::Value;

static COUNTER: AtomicU64 = AtomicU64::new(0);

pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

pub async fn sqlite() -> Arc<dyn EventStore> {
    let dir = std::env::temp_dir().join("agon-orchestrator-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!(
        "sqlite://{}",
        dir.join(format!("{}.db", unique("t"))).display()
    );
    agon_store::open(&url).await.unwrap()
}

/// A fresh database on the server of `AGON_TEST_DATABASE_URL` (fails without it).
pub async fn postgres() -> Arc<dyn EventStore> {
    agon_store::open(&pg_url().await).await.unwrap()
}

/// The URL of a fresh database on the server of `AGON_TEST_DATABASE_URL`.
pub async fn pg_url() -> String {
    use sqlx::Connection;
    let admin = std::env::var("AGON_TEST_DATABASE_URL")
        .expect("AGON_TEST_DATABASE_URL is not set: run the suite with `cargo xtask test`");
    let name = unique("agon_t");
    let mut c = sqlx::PgConnection::connect(&admin)
        .await
        .expect("connect to the test server");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut c)
        .await
        .unwrap();
    let base = admin
        .rsplit_once('/')
        .map_or(admin.as_str(), |(b, _)| b)
        .to_owned();
    format!("{base}/{name}")
}

/// 3 personas × 2 aspects × 2 minirounds, small rooms.
pub fn small_config() -> DebateConfig {
    let mut c = DebateConfig::default();
    c.personas = agon_config::default_personas();
    c.aspects = vec![
        AspectConfig {
            label: "Cost".into(),
            description: "Who pays.".into(),
        },
        AspectConfig {
            label: "Health".into(),
            description: "Air and safety.".into(),
        },
    ];
    c.minirounds = 2;
    c.crux.max_turns = 2;
    c.crux.check_every = 2;
    c.crux.max_rooms = 1;
    c
}

/// The blackboard without times, usage, call metadata (prompt sizes depend
/// on how far background work got), counters and the debate id: what
/// two runs of the same debate must agree on.
pub fn canonical(bb: &Blackboard) -> Value {
    let mut v = serde_json::to_value(bb).unwrap();
    agon_testkit::strip_volatile(&mut v);
    v
}

/// The config of the event-log fixture: 3 personas × 2 aspects × 2
/// minirounds, rooms of 2 positions + 4 exchanges with a convergence check
/// after 2, two rooms (the second one promoted), synthesis on.
pub fn fixture_config() -> DebateConfig {
    let mut c = small_config();
    c.crux.max_turns = 4;
    c.crux.check_every = 2;
    c.crux.max_rooms = 2;
    c.crux.min_rooms = 2;
    c
}

/// Whether an event comes from the background applier (analyses, round
/// records, reflections, the claims they open) rather than the main line.
fn is_background(event: &Value) -> bool {
    let kind = event["type"].as_str().unwrap_or_default();
    match kind {
        "position_updated"
        | "agreement_recorded"
        | "disagreement_recorded"
        | "concession_recorded"
        | "shift_recorded"
        | "claim_opened"
        | "turn_analyzed"
        | "round_recorded"
        | "reflection_added" => true,
        "step_failed" => matches!(
            event["step"].as_str().unwrap_or_default(),
            "turn_analysis"
                | "position_extraction"
                | "disagreement_detection"
                | "round_record"
                | "reflection"
        ),
        _ => false,
    }
}

/// A stored event log without times, token counts and the debate id, split
/// into its two ordered streams: (main line, background). Within each stream
/// the order is deterministic; how the two interleave depends on timing.
pub fn log_streams(events: &[agon_core::DebateEvent]) -> (Vec<Value>, Vec<Value>) {
    let mut main = Vec::new();
    let mut background = Vec::new();
    for event in events {
        let mut v = serde_json::to_value(event).unwrap();
        agon_testkit::strip_volatile(&mut v);
        if let Value::Object(map) = &mut v
            && map.get("type").and_then(Value::as_str) == Some("usage_recorded")
        {
            for key in ["input_tokens", "output_tokens", "cost_micro_usd"] {
                map.remove(key);
            }
        }
        if is_background(&v) {
            background.push(v);
        } else {
            main.push(v);
        }
    }
    (main, background)
}

/// Delegates to the scripted model and keeps every prompt: the utterances'
/// (streamed and complete), and the structured calls' when `structured`.
pub struct Recording {
    inner: agon_testkit::ScriptedModel,
    structured: bool,
    /// The prompts, system and user text joined, in call order.
    pub prompts: std::sync::Mutex<Vec<String>>,
}

impl Recording {
    pub fn new(inner: agon_testkit::ScriptedModel, structured: bool) -> Self {
        Self {
            inner,
            structured,
            prompts: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn keep(&self, request: &agon_llm::ChatRequest) {
        let text = request
            .messages
            .iter()
            .map(|m| m.content.clone())
            .collect::<Vec<_>>()
            .join("\n");
        self.prompts.lock().unwrap().push(text);
    }
}

#[async_trait::async_trait]
impl agon_llm::ChatModel for Recording {
    fn provider(&self) -> &str {
        self.inner.provider()
    }
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    async fn complete(
        &self,
        request: agon_llm::ChatRequest,
    ) -> Result<agon_llm::ChatResponse, agon_llm::ProviderError> {
        self.keep(&request);
        self.inner.complete(request).await
    }
    async fn complete_json(
        &self,
        request: agon_llm::ChatRequest,
        schema: &agon_llm::JsonSchema,
    ) -> Result<agon_llm::JsonResponse, agon_llm::ProviderError> {
        if self.structured {
            self.keep(&request);
        }
        self.inner.complete_json(request, schema).await
    }
    async fn stream(
        &self,
        request: agon_llm::ChatRequest,
    ) -> Result<agon_llm::ChatStream, agon_llm::ProviderError> {
        self.keep(&request);
        self.inner.stream(request).await
    }
}

/// A model whose every completion is the same text; it keeps the last
/// prompt (an evaluator in tests).
pub struct Canned {
    text: String,
    last: std::sync::Mutex<String>,
}

impl Canned {
    pub fn new(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            last: std::sync::Mutex::new(String::new()),
        }
    }

    /// The last prompt, system and user text joined.
    pub fn last_prompt(&self) -> String {
        self.last.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl agon_llm::ChatModel for Canned {
    fn provider(&self) -> &str {
        "canned"
    }
    fn model_id(&self) -> &str {
        "canned"
    }
    async fn complete(
        &self,
        request: agon_llm::ChatRequest,
    ) -> Result<agon_llm::ChatResponse, agon_llm::ProviderError> {
        let prompt: Vec<String> = request.messages.iter().map(|m| m.content.clone()).collect();
        *self.last.lock().unwrap() = prompt.join("\n");
        Ok(agon_llm::ChatResponse {
            content: self.text.clone(),
            usage: agon_llm::Usage::default(),
            latency: std::time::Duration::ZERO,
            provider: "canned".into(),
            model: "canned".into(),
            finish_reason: None,
            timing: None,
        })
    }
    async fn complete_json(
        &self,
        _request: agon_llm::ChatRequest,
        _schema: &agon_llm::JsonSchema,
    ) -> Result<agon_llm::JsonResponse, agon_llm::ProviderError> {
        Err(self.refused())
    }
    async fn stream(
        &self,
        _request: agon_llm::ChatRequest,
    ) -> Result<agon_llm::ChatStream, agon_llm::ProviderError> {
        Err(self.refused())
    }
}

impl Canned {
    fn refused(&self) -> agon_llm::ProviderError {
        agon_llm::ProviderError::InvalidRequest {
            reason: "the canned model answers plain completions only".into(),
        }
    }
}

/// The scripted model, keeping every streamed request (every utterance's
/// prompt as sent), and the list it keeps them in.
pub fn scripted_keeping_streams() -> (
    agon_orchestrator::Models,
    Arc<std::sync::Mutex<Vec<agon_llm::ChatRequest>>>,
) {
    use agon_testkit::{BeforeEachCall, CallKind, ScriptedModel};
    use futures::FutureExt;
    let kept = Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = Arc::clone(&kept);
    let model = BeforeEachCall::new(
        Arc::new(ScriptedModel::new(std::time::Duration::ZERO)),
        move |kind, request| {
            if kind == CallKind::Stream {
                keep.lock().unwrap().push(request.clone());
            }
            async {}.boxed()
        },
    );
    let models =
        agon_orchestrator::Models::uniform(Arc::new(model), agon_llm::PriceTable::with_defaults());
    (models, kept)
}
