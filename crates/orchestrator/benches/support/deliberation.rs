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

/// A fact planted in the session: said at turn `said` (that turn's whole
/// message), asked about at turn `asked` (that turn's whole message, which
/// does not contain the code).
#[derive(Debug, Clone)]
pub struct Plant {
    pub said: u32,
    pub asked: u32,
    pub code: String,
    pub fact: String,
    pub question: String,
}

/// What the planted facts are about (one subject each, so no two facts
/// share their words).
const SUBJECTS: [&str; 20] = [
    "Harbour Street depot roof",
    "Elm Road bridge bearings",
    "tram line 4 signalling upgrade",
    "ferry pier lighting",
    "school street bollards",
    "cargo bike subsidy pilot",
    "Old Mill roundabout redesign",
    "night bus driver overtime",
    "ticket machine replacement at Central",
    "bike parking tower at the station",
    "bus lane cameras on Kingsway",
    "snow clearance contract for cycle paths",
    "electric bus charging at Northgate garage",
    "pedestrian crossing near the hospital",
    "park-and-ride shuttle from Westfield",
    "accessible ramps on the river ferries",
    "traffic light timing study on Queen Avenue",
    "tram depot flood barrier",
    "community transport minibuses for the villages",
    "wayfinding signs in the old town",
];

/// `count` planted facts (at most 20): said evenly over turns
/// `said.0..said.1`, asked evenly over turns `asked.0..asked.1`.
pub fn plants(count: usize, said: (u32, u32), asked: (u32, u32)) -> Vec<Plant> {
    let count = count.min(SUBJECTS.len());
    let step = (said.1 - said.0) / count.max(1) as u32;
    let asked_step = (asked.1 - asked.0) / count.max(1) as u32;
    (0..count)
        .map(|i| {
            let subject = SUBJECTS[i];
            let code = format!("{}-{}", (b'K' + i as u8 % 10) as char, 4_117 + 613 * i);
            Plant {
                said: said.0 + step * i as u32,
                asked: asked.0 + asked_step * i as u32,
                fact: format!(
                    "For the record, the contractor quoted the {subject} at reference {code}, \
                     and that quote holds until the end of next year."
                ),
                question: format!(
                    "Before we vote on it: what did the contractor quote for the {subject}? \
                     I cannot find the reference in my notes."
                ),
                code,
            }
        })
        .collect()
}

/// The scripted model, reporting every prompt to the counting thread, and
/// saying the planted facts and questions at their turns.
pub struct Counting {
    inner: ScriptedModel,
    seen: mpsc::Sender<Seen>,
    plants: Arc<Vec<Plant>>,
}

impl Counting {
    /// Reports the call; for a speaking turn where a plant says something,
    /// what it says.
    fn report(&self, request: &ChatRequest, listen: bool) -> Option<String> {
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
        // The turn is said last, with the task.
        let turn = prompt
            .rsplit("Turn ")
            .next()
            .and_then(|t| t.split(';').next())
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        let _ = self.seen.send(Seen { kind, turn, prompt });
        if kind != Kind::Speak {
            return None;
        }
        self.plants.iter().find_map(|p| {
            if p.said == turn {
                Some(p.fact.clone())
            } else if p.asked == turn {
                Some(p.question.clone())
            } else {
                None
            }
        })
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
        let planted = self.report(&request, false);
        let mut response = self.inner.complete(request).await?;
        if let Some(text) = planted {
            response.content = text;
        }
        Ok(response)
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
        use futures::StreamExt as _;
        let planted = self.report(&request, false);
        let stream = self.inner.stream(request).await?;
        let Some(text) = planted else {
            return Ok(stream);
        };
        // The planted text, then the scripted stream's last chunk (its
        // usage and finish).
        let last = stream.collect::<Vec<_>>().await.pop();
        let chunks = std::iter::once(Ok(agon_llm::ChatChunk {
            delta: text,
            usage: None,
            finish_reason: None,
            model: None,
            timing: None,
        }))
        .chain(last);
        Ok(Box::pin(futures::stream::iter(chunks.collect::<Vec<_>>())))
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
    /// For each speaking call, in arrival order: its turn, whether its
    /// view had a RELEVANT EARLIER CONTEXT section, and the planted codes
    /// its prompt showed.
    pub shown: Vec<(u32, bool, Vec<String>)>,
    /// The configuration run.
    pub config: DebateConfig,
    /// The debate's id.
    pub id: agon_core::DebateId,
    /// The SQLite store's URL.
    pub url: String,
    /// Every call: kind, turn, prompt tokens.
    pub calls: Vec<(Kind, u32, usize)>,
    /// Every call's prompt tokens that repeat the start of one of the 16
    /// prompts sent before it, in the order of `calls`.
    pub shared: Vec<usize>,
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

    /// Of `plants`, how many were shown (their code in the prompt) in a
    /// speaking call of the two turns after the one that asked about them.
    pub fn facts_shown(&self, plants: &[Plant]) -> usize {
        plants
            .iter()
            .filter(|p| {
                self.shown.iter().any(|(turn, _, codes)| {
                    (p.asked + 1..=p.asked + 2).contains(turn) && codes.contains(&p.code)
                })
            })
            .count()
    }

    /// Speaking calls of turns `from..=to`, and how many of them had a
    /// RELEVANT EARLIER CONTEXT section.
    pub fn recalling(&self, from: u32, to: u32) -> (usize, usize) {
        self.shown
            .iter()
            .filter(|(t, _, _)| (from..=to).contains(t))
            .fold((0, 0), |a, (_, r, _)| (a.0 + 1, a.1 + usize::from(*r)))
    }

    /// Of one kind's calls: (prompt tokens, tokens shared with a recent
    /// prompt's start, those in shared starts of 1,024 tokens or more,
    /// the shortest a provider caches).
    pub fn shared(&self, kind: Kind) -> (usize, usize, usize) {
        self.calls
            .iter()
            .zip(&self.shared)
            .filter(|((k, _, _), _)| *k == kind)
            .fold((0, 0, 0), |a, ((_, _, n), s)| {
                let cacheable = if *s >= 1_024 { *s } else { 0 };
                (a.0 + n, a.1 + s, a.2 + cacheable)
            })
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
    session_with(turns, delay, memory_on, &[], PADDING, dir).await
}

/// Words of filler the scripted model appends to each turn (about 90
/// words a turn: a realistic length).
pub const PADDING: usize = 80;

/// [`session`] with `plants` said and asked at their turns, and `padding`
/// words of filler a turn.
pub async fn session_with(
    turns: u32,
    delay: Duration,
    memory_on: bool,
    plants: &[Plant],
    padding: usize,
    dir: &Path,
) -> Session {
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
    let codes: Vec<String> = plants.iter().map(|p| p.code.clone()).collect();
    let counter = std::thread::spawn(move || {
        let tokens = TiktokenCounter::default();
        let mut shown = Vec::new();
        let mut recent = RecentPrompts::default();
        let mut shared = Vec::new();
        let calls = rx
            .into_iter()
            .map(|s| {
                shared.push(recent.shared_tokens(&s.prompt, &tokens));
                if s.kind == Kind::Speak {
                    shown.push((
                        s.turn,
                        s.prompt.contains("RELEVANT EARLIER CONTEXT"),
                        codes
                            .iter()
                            .filter(|c| s.prompt.contains(c.as_str()))
                            .cloned()
                            .collect::<Vec<_>>(),
                    ));
                }
                (s.kind, s.turn, tokens.count(&s.prompt))
            })
            .collect::<Vec<_>>();
        (calls, shown, shared)
    });
    let model = Arc::new(Counting {
        inner: ScriptedModel::new(delay).with_padding(padding),
        seen: tx,
        plants: Arc::new(plants.to_vec()),
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
    let (calls, shown, shared) = counter.join().unwrap();
    Session {
        shown,
        config,
        id,
        url,
        calls,
        shared,
        wall,
    }
}

/// The last prompts sent (a provider's prompt cache keeps a prefix for
/// minutes; a session's calls are seconds apart): how much of a new
/// prompt repeats the start of one of them.
#[derive(Default)]
struct RecentPrompts(std::collections::VecDeque<String>);

impl RecentPrompts {
    /// Prompts compared with.
    const KEPT: usize = 16;

    /// Tokens of `prompt`'s longest start shared with a kept prompt; then
    /// keeps it.
    fn shared_tokens(&mut self, prompt: &str, counter: &TiktokenCounter) -> usize {
        let bytes = self
            .0
            .iter()
            .map(|earlier| crate::prefix::common_prefix(earlier, prompt))
            .max()
            .unwrap_or(0);
        if self.0.len() == Self::KEPT {
            self.0.pop_front();
        }
        self.0.push_back(prompt.to_owned());
        counter.count(&prompt[..bytes])
    }
}
