//! The deliberation session of `cargo xtask bench deliberation`, shared
//! with the headline-number tests: 4 agents, listening turns, the `long`
//! preset, the scripted model in process (every turn padded to ~90
//! words), SQLite; every call's prompt (system + user) counted with
//! tiktoken o200k on a separate thread.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agon_config::{DebateConfig, PersonaConfig, Preset, ProtocolKind, TurnMode};
use agon_context::{TiktokenCounter, TokenCounter};
use agon_llm::{
    ChatModel, ChatRequest, ChatResponse, ChatStream, JsonResponse, JsonSchema, PriceTable,
    ProviderError,
};
use agon_orchestrator::{Models, RunControl};
use agon_testkit::ScriptedModel;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Speak,
    Listen,
    Summary,
}

/// A call as the model saw it: its kind, its turn (from the `Turn N;`
/// line of the view) and its prompt, counted later.
pub struct Seen {
    pub kind: Kind,
    pub turn: u32,
    pub prompt: String,
}

/// The scripted model, reporting every prompt to the counting thread.
pub struct Counting {
    inner: ScriptedModel,
    seen: mpsc::Sender<Seen>,
}

impl Counting {
    fn report(&self, request: &ChatRequest, listen: bool) {
        let mut prompt = request.system.clone().unwrap_or_default();
        for m in &request.messages {
            prompt.push('\n');
            prompt.push_str(&m.content);
        }
        let kind = if listen {
            Kind::Listen
        } else if prompt.contains("Write one summary of the whole discussion") {
            Kind::Summary
        } else {
            Kind::Speak
        };
        let turn = prompt
            .split("Turn ")
            .nth(1)
            .and_then(|t| t.split(';').next())
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        let _ = self.seen.send(Seen { kind, turn, prompt });
    }
}

#[async_trait::async_trait]
impl ChatModel for Counting {
    fn provider(&self) -> &str {
        "scripted"
    }
    fn model_id(&self) -> &str {
        "scripted"
    }
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ProviderError> {
        self.report(&request, false);
        self.inner.complete(request).await
    }
    async fn complete_json(
        &self,
        request: ChatRequest,
        schema: &JsonSchema,
    ) -> Result<JsonResponse, ProviderError> {
        self.report(&request, schema.name == "listen");
        self.inner.complete_json(request, schema).await
    }
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, ProviderError> {
        self.report(&request, false);
        self.inner.stream(request).await
    }
}

fn persona(name: &str, contract: &str) -> PersonaConfig {
    PersonaConfig {
        corpus: Vec::new(),
        tools: Vec::new(),
        tool_call_limit: None,
        id: None,
        name: name.into(),
        contract: contract.into(),
        voice: "plain".into(),
        model: None,
    }
}

/// A finished session: its configuration, id and store, the counted calls
/// `(kind, turn, prompt tokens)` in arrival order, and its wall time.
pub struct Session {
    /// The configuration run.
    pub config: DebateConfig,
    /// The debate's id.
    pub id: agon_core::DebateId,
    /// The SQLite store's URL.
    pub url: String,
    /// Every call: kind, turn, prompt tokens.
    pub calls: Vec<(Kind, u32, usize)>,
    /// Wall time of the run.
    pub wall: Duration,
}

impl Session {
    /// (calls, prompt tokens) of one kind.
    pub fn sum(&self, kind: Kind) -> (usize, usize) {
        self.calls
            .iter()
            .filter(|(k, _, _)| *k == kind)
            .fold((0, 0), |a, (_, _, n)| (a.0 + 1, a.1 + n))
    }

    /// The prompt tokens of the speaking calls of turns `from..=to`, sorted.
    pub fn speaking(&self, from: u32, to: u32) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .calls
            .iter()
            .filter(|(k, t, _)| *k == Kind::Speak && (from..=to).contains(t))
            .map(|(_, _, n)| *n)
            .collect();
        v.sort_unstable();
        v
    }
}

/// Runs a `turns`-turn session in `dir` with the model answering after
/// `delay`, vector memory (local MiniLM) on or off.
pub async fn session(turns: u32, delay: Duration, memory_on: bool, dir: &Path) -> Session {
    let mut config = DebateConfig {
        protocol: ProtocolKind::Deliberation,
        topic: "How should the city spend its transport budget?".into(),
        personas: vec![
            persona("Ada", "Transit planner: buses and trams first."),
            persona("Bo", "Treasurer: every euro must show a return."),
            persona("Cy", "Cyclist advocate: safe lanes for all ages."),
            persona("Di", "Neighbourhood rep: night service and safety."),
        ],
        ..DebateConfig::default()
    };
    config.memory.enabled = memory_on;
    let d = &mut config.deliberation;
    d.turns = turns;
    d.mode = TurnMode::Listen;
    d.preset = Preset::Long;
    d.stop_on_consensus = false;

    let (tx, rx) = mpsc::channel::<Seen>();
    let counter = std::thread::spawn(move || {
        let tokens = TiktokenCounter::default();
        rx.into_iter()
            .map(|s| (s.kind, s.turn, tokens.count(&s.prompt)))
            .collect::<Vec<_>>()
    });
    let model = Arc::new(Counting {
        inner: ScriptedModel::new(delay).with_padding(80),
        seen: tx,
    });
    let models = Models::uniform(model, PriceTable::with_defaults());
    let url = format!("sqlite://{}", dir.join("bench.db").display());
    let mut orch = agon_app::orchestrator_for(agon_store::open(&url).await.unwrap());
    if memory_on {
        let embedder: Arc<dyn agon_llm::Embedder> =
            Arc::new(agon_local::LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")));
        let index = agon_memory::open(&format!("sqlite://{}", dir.join("memory.db").display()))
            .await
            .unwrap();
        let memory = agon_memory::Memory::open(index, embedder, Default::default())
            .await
            .unwrap();
        orch = orch.with_memory(memory);
    }
    let id = orch.create(&config).await.unwrap();
    let started = Instant::now();
    orch.run(&id, &models, RunControl::default()).await.unwrap();
    let wall = started.elapsed();
    drop(models);
    let calls = counter.join().unwrap();
    Session {
        config,
        id,
        url,
        calls,
        wall,
    }
}
