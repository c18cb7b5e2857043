//! The structured debate's prompt-token split by call kind, shared by
//! `cargo xtask bench debate` (which prints it) and the headline-number
//! tests (which check it).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use agon_config::{AnalysisCadence, DebateConfig};
use agon_context::{TiktokenCounter, TokenCounter};
use agon_llm::{ModelFactory, PriceTable};
use agon_orchestrator::{Orchestrator, RunControl};
use agon_testkit::openai_reply;

/// What the call is for: the payload named in `response_format`, else an
/// utterance (streamed) or another plain call.
pub fn call_kind(body: &serde_json::Value) -> String {
    match body["response_format"]["json_schema"]["name"].as_str() {
        Some(name) => name.to_owned(),
        None if body["stream"].as_bool() == Some(true) => "utterance".to_owned(),
        None => "plain".to_owned(),
    }
}

/// Payloads that keep the memory (the rest run the debate).
pub const MEMORY_CALLS: [&str; 7] = [
    "turn_analysis",
    "position_update",
    "batch_turn_analysis",
    "batch_position_update",
    "disagreement_window",
    "round_record",
    "reflection_batch",
];

/// The prompt tokens of the default structured debate (`agon debate TOPIC
/// --model openai:…`: topic-cast personas, 3 aspects × 3 minirounds, crux
/// rooms, synthesis; memory off, since embeddings send no prompt) by call
/// kind, counted with o200k over the messages and the JSON Schema sent in
/// `response_format`, as a provider bills them.
pub async fn prompt_split(
    server: &wiremock::MockServer,
    orch: &Orchestrator,
    cadence: AnalysisCadence,
) -> Split {
    prompt_split_with(server, orch, cadence, 0).await
}

/// [`prompt_split`] with every utterance `words` words longer (0: the
/// scripted model's one-line answers), as a model writing the default
/// 120-word turns would.
pub async fn prompt_split_with(
    server: &wiremock::MockServer,
    orch: &Orchestrator,
    cadence: AnalysisCadence,
    words: usize,
) -> Split {
    server.reset().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(PaddedStub(words))
        .mount(server)
        .await;
    let mut config = DebateConfig::default();
    config.memory.enabled = false;
    config.analysis.cadence = cadence;
    config.models.default = "openai:gpt-4o-mini".into();
    let base = format!("{}/v1", server.uri());
    let env = move |key: &str| match key {
        "OPENAI_API_KEY" => Some("bench".to_owned()),
        "OPENAI_BASE_URL" => Some(base.clone()),
        _ => None,
    };
    let models =
        agon_app::models_from_config(&config, &ModelFactory::new(), &env, PriceTable::default())
            .unwrap();
    let id = orch.create(&config).await.unwrap();
    orch.run(&id, &models, RunControl::default()).await.unwrap();
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let notes: Vec<String> = bb
        .warnings()
        .iter()
        .map(|w| format!("warning: {} {}", w.step.name(), w.reason))
        .chain(
            bb.repairs()
                .iter()
                .map(|r| format!("repair: {} {}", r.step.name(), r.notes.join("; "))),
        )
        .collect();
    let counter = TiktokenCounter::default();
    let mut split: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    let mut prompts = Vec::new();
    for request in server.received_requests().await.unwrap() {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        prompts.push((call_kind(&body), crate::prefix::request_text(&body)));
        let mut tokens: usize = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| counter.count(m["content"].as_str().unwrap_or_default()))
            .sum();
        if !body["response_format"].is_null() {
            tokens += counter.count(&body["response_format"].to_string());
        }
        let entry = split.entry(call_kind(&body)).or_default();
        entry.0 += 1;
        entry.1 += tokens;
    }
    Split {
        calls: split,
        notes,
        prompts,
    }
}

/// The prompt tokens of one default debate by call kind.
pub struct Split {
    /// Call kind → (calls, prompt tokens).
    pub calls: std::collections::BTreeMap<String, (usize, usize)>,
    /// The debate's warnings and repairs, one line each.
    pub notes: Vec<String>,
    /// Every call's kind and text, in the order sent (prefix stability).
    pub prompts: Vec<(String, String)>,
}

impl Split {
    /// Prompt tokens over every call.
    pub fn total(&self) -> usize {
        self.calls.values().map(|v| v.1).sum()
    }

    /// (calls, prompt tokens) of the memory calls.
    pub fn memory(&self) -> (usize, usize) {
        MEMORY_CALLS
            .iter()
            .filter_map(|k| self.calls.get(*k))
            .fold((0, 0), |a, v| (a.0 + v.0, a.1 + v.1))
    }

    /// (calls, prompt tokens) of the utterances.
    pub fn utterances(&self) -> (usize, usize) {
        self.calls.get("utterance").copied().unwrap_or((0, 0))
    }

    /// What the memory costs per utterance token.
    pub fn memory_ratio(&self) -> f64 {
        self.memory().1 as f64 / self.utterances().1.max(1) as f64
    }
}

/// A stub OpenAI-compatible server answering at once with the scripted
/// model (the timed runs use `timed_stub`).
pub struct Stub;

impl wiremock::Respond for Stub {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        let (content_type, text) = openai_reply(&body);
        wiremock::ResponseTemplate::new(200).set_body_raw(text, content_type)
    }
}

/// The [`Stub`] with `.0` words of filler after each utterance's scripted
/// text (structured answers unchanged); the filler varies with the
/// request, so that no two utterances are alike.
pub struct PaddedStub(pub usize);

impl wiremock::Respond for PaddedStub {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        let (content_type, text) = if self.0 > 0 && body["stream"].as_bool() == Some(true) {
            let (system, user) = agon_testkit::prompt_parts(&body);
            let mut text = agon_testkit::reply(None, &system, &user, None, &[]);
            text.push(' ');
            text.push_str(&padding(self.0, user.len() + system.len()));
            agon_testkit::openai_body(&body, &text)
        } else {
            openai_reply(&body)
        };
        wiremock::ResponseTemplate::new(200).set_body_raw(text, content_type)
    }
}

/// `words` words of plain prose, starting at a place `salt` picks.
fn padding(words: usize, salt: usize) -> String {
    const WORDS: [&str; 24] = [
        "the",
        "centre",
        "would",
        "pay",
        "for",
        "buses",
        "before",
        "any",
        "ban",
        "and",
        "shops",
        "need",
        "deliveries",
        "at",
        "night",
        "while",
        "residents",
        "keep",
        "permits",
        "so",
        "traffic",
        "falls",
        "over",
        "years",
    ];
    (0..words)
        .map(|i| WORDS[(salt * 7 + i * 5 + i / 24) % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}
