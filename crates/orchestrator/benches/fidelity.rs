//! `cargo xtask bench fidelity`: does the memory keep what matters?
//!
//! Scripted structured debates (3 and 5 personas, 3 aspects × 3 minirounds,
//! crux rooms on) run through a stub OpenAI-compatible server. Early in the
//! debate every persona plants uniquely coded facts: two pieces of evidence
//! (`EV-2-A`, `EV-2-B`: opening and first take), a concession to the next
//! persona (`CN-2`) and an agreement with the previous one (`AG-2`). The
//! stub's extractor reports them faithfully, so what is measured is what
//! each context keeps, not extraction quality.
//!
//! For every later context (takes of aspects 2 and 3, crux-room entries,
//! closings) the bench checks which relevant planted facts are visible (the
//! code appears in the prompt): the speaker's own facts, the concession made
//! to them and the agreement made with them, and in a crux room also the
//! opponent's evidence. Strategies side by side at equal budgets:
//! - `agon`: the prompt the debater was sent (memory off);
//! - `agon+recall`: the same with vector memory (MiniLM, SQLite);
//! - `window-8`: the last 8 messages verbatim (what a window-only design
//!   gives), oldest dropped until within budget;
//! - `newest-first`: the full transcript cut to the budget, newest first;
//! - `summary+window`: seed 001's design: a rolling summary every 8
//!   messages plus the messages since, newest first. The scripted
//!   summarizer keeps a fixed share (60 %) of the planted facts it is given
//!   (the previous summary's and the new span's), chosen by a stable hash;
//!   the summary gets at most a quarter of the budget.
//!
//! `-- --cadence message` runs the debates with one analysis per message
//! (the default is one per miniround). With `--local`, instead, one debate (3 personas, 1,200 tokens) sends every
//! analysis to the local model (SmolLM2): the share of planted facts that
//! reach the right persona's ledger (extraction recall) and the share of
//! ledger entries that are junk (fewer than half of their content words
//! appear in that persona's own messages).

#![allow(
    missing_docs,
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::field_reassign_with_default
)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use agon_config::{AspectConfig, DebateConfig, PersonaConfig};
use agon_context::{TiktokenCounter, TokenCounter};
use agon_core::{Blackboard, MessageKind};
use agon_llm::{ModelFactory, PriceTable};
use agon_orchestrator::RunControl;
use agon_testkit::{batch_messages, openai_body, openai_reply, prompt_parts, schema_name};
use serde_json::{Value, json};

const NAMES: [&str; 5] = ["Mara", "Theo", "Priya", "Jonas", "Lena"];
const BUDGETS: [usize; 3] = [600, 1_200, 2_400];
/// Share of its input facts the scripted rolling summarizer keeps.
const SUMMARY_KEEPS: f64 = 0.6;
/// Messages per rolling summary.
const SUMMARY_EVERY: usize = 8;

const STATS: [&str; 10] = [
    "a 2019 audit of 14 cities found 31 percent fewer crashes",
    "Ghent lost 12 percent of retail footfall in the first year",
    "bus ridership rose 18 percent within two years in Oslo",
    "delivery costs rose 9 percent for small shops in Madrid",
    "NO2 levels fell 24 percent along the closed streets",
    "property values near the zone rose 6 percent",
    "emergency response times grew by 40 seconds on average",
    "cycling trips doubled on the three main corridors",
    "night-time noise complaints fell by a third",
    "parking revenue, 14 million a year, disappears from the budget",
];

const FILLER: [&str; 8] = [
    "The question is who carries the cost of the change and who sees the benefit first.",
    "Any plan has to survive the first winter, when people judge it on their own commute.",
    "Residents want quieter streets, but shop owners fear the loss of passing trade.",
    "We should be honest that the evidence from other cities is mixed and local.",
    "A phased rollout lets the council measure what happens before it commits fully.",
    "Transit capacity has to be there on day one or the policy loses public trust.",
    "Exemptions for deliveries and disabled drivers decide whether this is fair.",
    "The real test is whether people still come to the centre once the novelty fades.",
];

/// The planted facts of one persona, by code.
fn planted(i: usize, n: usize) -> Vec<(String, String)> {
    let next = NAMES[(i + 1) % n];
    let prev = NAMES[(i + n - 1) % n];
    vec![
        (
            format!("EV-{i}-A"),
            format!("Evidence EV-{i}-A: {}.", STATS[(2 * i) % STATS.len()]),
        ),
        (
            format!("EV-{i}-B"),
            format!("Evidence EV-{i}-B: {}.", STATS[(2 * i + 1) % STATS.len()]),
        ),
        (
            format!("CN-{i}"),
            format!("I concede CN-{i} to {next}: the first year will hurt some shops."),
        ),
        (
            format!("AG-{i}"),
            format!("I agree with {prev} on AG-{i}: deliveries need a morning window."),
        ),
    ]
}

/// The stub: planted utterances, a faithful extractor, the scripted model
/// for everything else. Records every utterance prompt.
#[derive(Clone)]
struct Planter {
    personas: usize,
    /// Where the planted sentence sits in the message.
    placement: Placement,
    state: Arc<Mutex<PlanterState>>,
}

/// Where a planted fact sits in its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// First sentence of a ~40-word message.
    First,
    /// Last sentence of a ~300-word message.
    LastOf300,
    /// Middle of a ~1,900-word message.
    MiddleOf1900,
}

impl Placement {
    /// Every placement, as the bench prints them.
    pub const ALL: [Placement; 3] = [Self::First, Self::LastOf300, Self::MiddleOf1900];

    /// Its name in the tables.
    pub fn label(self) -> &'static str {
        match self {
            Self::First => "first sentence, ~40 words",
            Self::LastOf300 => "last sentence of ~300 words",
            Self::MiddleOf1900 => "middle of ~1,900 words",
        }
    }
}

#[derive(Default)]
struct PlanterState {
    spoken: HashMap<String, usize>,
    /// (speaker name, the prompt sent) by utterance sequence number.
    prompts: Vec<(String, String)>,
}

impl Planter {
    fn new(personas: usize, placement: Placement) -> Self {
        Self {
            personas,
            placement,
            state: Arc::default(),
        }
    }

    fn utterance(&self, system: &str, user: &str) -> String {
        // A debater's turn names it last ("You are NAME.\nWhat you stand
        // for: …"); the judge's system prompt names the judge.
        let name = agon_testkit::debater_named(user)
            .or_else(|| {
                system
                    .split("You are ")
                    .nth(1)
                    .and_then(|r| r.split(',').next())
            })
            .unwrap_or("Judge")
            .to_owned();
        let mut state = self.state.lock().unwrap();
        let k = *state.spoken.entry(name.clone()).or_default();
        state.spoken.insert(name.clone(), k + 1);
        let seq = state.prompts.len();
        state
            .prompts
            .push((name.clone(), format!("{system}\n{user}")));
        let planted = NAMES[..self.personas]
            .iter()
            .position(|n| *n == name)
            .and_then(|i| planted(i, self.personas).into_iter().nth(k))
            .map(|(_, sentence)| sentence)
            .unwrap_or_default();
        // Filler sentences, one paragraph (no line breaks), ~14 words each.
        let filler = |n: usize| -> String {
            (0..n)
                .map(|k| FILLER[(seq * 3 + k * 5 + 1) % FILLER.len()])
                .collect::<Vec<_>>()
                .join(" ")
        };
        match self.placement {
            Placement::First => format!("{planted} {} (ref u{seq})", filler(2)),
            Placement::LastOf300 => format!("{} {planted} (ref u{seq})", filler(20)),
            Placement::MiddleOf1900 => {
                format!("{} {planted} {} (ref u{seq})", filler(68), filler(68))
            }
        }
        .trim()
        .to_owned()
    }
}

/// The position update a faithful extractor gives for `text`.
fn faithful(text: &str) -> Value {
    let mut evidence = Vec::new();
    let mut concession = Value::Null;
    let mut agreement = Value::Null;
    for sentence in text.split_inclusive('.') {
        let sentence = sentence.trim();
        if let Some(rest) = sentence.strip_prefix("Evidence ") {
            evidence.push(rest.trim_end_matches('.').to_owned());
        } else if let Some(rest) = sentence.strip_prefix("I concede ") {
            concession = json!(rest.trim_end_matches('.'));
        } else if let Some(rest) = sentence.strip_prefix("I agree with ")
            && let Some((with, on)) = rest.split_once(" on ")
        {
            agreement = json!({"withPersona": with, "on": on.trim_end_matches('.')});
        }
    }
    json!({
        "overallStance": null,
        "aspectPosition": {"position": null, "evidence": evidence, "challenged": [], "answered": []},
        "newAgreement": agreement,
        "newDisagreement": null,
        "concession": concession,
        "shift": null,
        "importance": 5,
        "contradiction": null
    })
}

/// The text of each `[id] Name (kind): "…"` line of a batch prompt.
fn batch_texts(user: &str) -> HashMap<String, String> {
    user.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix('[')?;
            let (id, rest) = rest.split_once("] ")?;
            let (_, quoted) = rest.split_once("): \"")?;
            Some((id.to_owned(), quoted.trim_end_matches('"').to_owned()))
        })
        .collect()
}

impl wiremock::Respond for Planter {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let (system, user) = prompt_parts(&body);
        let schema = schema_name(&body, &system).map(str::to_owned);
        let answer = |value: Value| openai_body(&body, &value.to_string());
        let (content_type, text) = match schema.as_deref() {
            None if body["stream"].as_bool() == Some(true) => {
                openai_body(&body, &self.utterance(&system, &user))
            }
            Some(kind @ ("batch_turn_analysis" | "batch_position_update")) => {
                let texts = batch_texts(&user);
                let listed = batch_messages(&user);
                let updates: Vec<Value> = listed
                    .iter()
                    .map(|(id, _)| json!({"message": id, "position": faithful(&texts[id])}))
                    .collect();
                let mut value = json!({ "updates": updates });
                if kind == "batch_turn_analysis" {
                    let names: Vec<&String> = {
                        let mut seen = Vec::new();
                        for (_, n) in &listed {
                            if !seen.contains(&n) {
                                seen.push(n);
                            }
                        }
                        seen
                    };
                    value["disagreements"] = match names.as_slice() {
                        [a, b, ..] => {
                            json!([{"between": [a, b], "claim": format!("{a} and {b} disagree on who pays"), "confidence": 90}])
                        }
                        _ => json!([]),
                    };
                }
                answer(value)
            }
            Some(kind @ ("turn_analysis" | "position_update")) => {
                let said = user
                    .split("just said (on \"")
                    .nth(1)
                    .and_then(|r| r.split_once("\"):\n\""))
                    .map(|(_, t)| t.split("\"\n").next().unwrap_or(t))
                    .unwrap_or_default();
                let position = faithful(said);
                // The same judgement as a batch's: the first two participants.
                let names: Vec<&str> = system
                    .split("pairs of participants (")
                    .nth(1)
                    .and_then(|r| r.split(')').next())
                    .map(|r| r.split(", ").collect())
                    .unwrap_or_default();
                let judged = match names.as_slice() {
                    [a, b, ..] => {
                        json!([{"between": [a, b], "claim": format!("{a} and {b} disagree on who pays"), "confidence": 90}])
                    }
                    _ => json!([]),
                };
                answer(if kind == "turn_analysis" {
                    json!({"position": position, "disagreements": judged})
                } else {
                    position
                })
            }
            _ => openai_reply(&body),
        };
        wiremock::ResponseTemplate::new(200).set_body_raw(text, content_type)
    }
}

fn config(personas: usize, budget: usize, server: &str) -> DebateConfig {
    let mut c = DebateConfig::default();
    c.personas = NAMES[..personas]
        .iter()
        .map(|n| PersonaConfig {
            corpus: Vec::new(),
            tools: Vec::new(),
            tool_call_limit: None,
            id: None,
            name: (*n).into(),
            contract: format!("{n} argues about a car-free centre from their own experience."),
            voice: "plain".into(),
            model: None,
        })
        .collect();
    c.aspects = ["Cost", "Health", "Fairness"]
        .iter()
        .map(|l| AspectConfig {
            label: (*l).into(),
            description: format!("{l} of a car-free centre."),
        })
        .collect();
    c.minirounds = 3;
    c.crux.enabled = true;
    c.crux.min_rooms = 1;
    c.synthesis = false;
    c.budget.context_tokens = budget;
    // `--cadence message` measures the per-message analyses instead.
    if std::env::args().any(|a| a == "message") {
        c.analysis.cadence = agon_config::AnalysisCadence::Message;
    }
    c.models.default = format!("openai-compatible:stub@{server}/v1");
    c
}

/// One debate: its blackboard and the utterance prompts by message index.
pub struct Run {
    board: Blackboard,
    /// (message index, speaker name, prompt).
    calls: Vec<(usize, String, String)>,
}

pub async fn debate(
    personas: usize,
    budget: usize,
    recall: Option<&Arc<dyn agon_llm::Embedder>>,
    extractor: Option<&str>,
    placement: Placement,
) -> Run {
    let planter = Planter::new(personas, placement);
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(planter.clone())
        .mount(&server)
        .await;
    let mut c = config(personas, budget, &server.uri());
    if let Some(spec) = extractor {
        c.models.extractor = Some(spec.to_owned());
    }
    let dir = tempfile::tempdir().unwrap();
    let store = agon_store::open(&format!("sqlite://{}", dir.path().join("d.db").display()))
        .await
        .unwrap();
    let mut orch = agon_app::orchestrator_for(store);
    c.memory.enabled = recall.is_some();
    if let Some(embedder) = recall {
        let index = agon_memory::open(&format!("sqlite://{}", dir.path().join("m.db").display()))
            .await
            .unwrap();
        let memory = agon_memory::Memory::open(index, Arc::clone(embedder), Default::default())
            .await
            .unwrap();
        orch = orch.with_memory(memory);
    }
    let factory = ModelFactory::new().with_local(Arc::new(agon_local::Backends));
    let models =
        agon_app::models_from_config(&c, &factory, &|_| None, PriceTable::default()).unwrap();
    let id = orch.create(&c).await.unwrap();
    orch.run(&id, &models, RunControl::default()).await.unwrap();
    let (board, _) = orch.store().load(&id).await.unwrap();
    let prompts = std::mem::take(&mut planter.state.lock().unwrap().prompts);
    let calls = prompts
        .into_iter()
        .enumerate()
        .filter_map(|(seq, (name, prompt))| {
            let marker = format!("(ref u{seq})");
            let index = board
                .messages()
                .iter()
                .position(|m| m.content.contains(&marker))?;
            Some((index, name, prompt))
        })
        .collect();
    Run { board, calls }
}

/// Where a later context is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    LaterTakes,
    CruxEntry,
    Closings,
}

impl Phase {
    fn of(board: &Blackboard, index: usize) -> Option<Self> {
        let m = &board.messages()[index];
        match m.kind {
            MessageKind::Take => {
                let aspect = m.aspect.as_ref()?;
                let k = board.aspects().iter().position(|a| &a.id == aspect)?;
                (k >= 1).then_some(Self::LaterTakes)
            }
            MessageKind::CruxPosition => Some(Self::CruxEntry),
            MessageKind::Closing => Some(Self::Closings),
            _ => None,
        }
    }
}

/// The planted codes relevant to `name` speaking at `index`.
fn relevant(board: &Blackboard, personas: usize, name: &str, index: usize) -> Vec<String> {
    let Some(i) = NAMES[..personas].iter().position(|n| *n == name) else {
        return Vec::new();
    };
    let mut codes = vec![
        format!("EV-{i}-A"),
        format!("EV-{i}-B"),
        format!("CN-{i}"),
        format!("AG-{i}"),
        // The concession made to them, the agreement made with them.
        format!("CN-{}", (i + personas - 1) % personas),
        format!("AG-{}", (i + 1) % personas),
    ];
    let m = &board.messages()[index];
    if let Some(room) = &m.crux_room
        && let Some(claim) = board
            .claims()
            .iter()
            .find(|c| c.crux_room.as_ref() == Some(room))
    {
        for p in &claim.personas {
            let other = board.persona_name(p);
            if other != name
                && let Some(j) = NAMES.iter().position(|n| *n == other)
            {
                codes.push(format!("EV-{j}-A"));
                codes.push(format!("EV-{j}-B"));
            }
        }
    }
    // Only what was said before this turn.
    let said: String = board.messages()[..index]
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    codes.retain(|c| said.contains(c.as_str()));
    codes
}

fn line(board: &Blackboard, m: &agon_core::DialogueMessage) -> String {
    format!("{}: {}\n", board.persona_name(&m.persona), m.content)
}

/// Newest messages first while they fit `budget`, shown oldest first.
fn newest_first(
    board: &Blackboard,
    messages: &[agon_core::DialogueMessage],
    budget: usize,
) -> String {
    let counter = TiktokenCounter::default();
    let mut used = 0;
    let mut kept = Vec::new();
    for m in messages.iter().rev() {
        let l = line(board, m);
        let t = counter.count(&l);
        if used + t > budget {
            break;
        }
        used += t;
        kept.push(l);
    }
    kept.reverse();
    kept.concat()
}

/// A stable pseudo-random number in [0, 1) for a fact at a fold.
fn unit(code: &str, fold: usize) -> f64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ fold as u64;
    for b in code.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    (h % 10_000) as f64 / 10_000.0
}

/// Seed 001's view: a rolling summary of everything before the last
/// multiple of `SUMMARY_EVERY`, then the messages since, newest first.
fn summary_window(board: &Blackboard, index: usize, budget: usize) -> String {
    let messages = &board.messages()[..index];
    let folds = messages.len() / SUMMARY_EVERY;
    let mut kept: BTreeMap<String, String> = BTreeMap::new(); // code → sentence
    for fold in 0..folds {
        for m in &messages[fold * SUMMARY_EVERY..(fold + 1) * SUMMARY_EVERY] {
            for sentence in m.content.split_inclusive('.') {
                let sentence = sentence.trim();
                if let Some(code) = sentence
                    .split_whitespace()
                    .find(|w| w.starts_with("EV-") || w.starts_with("CN-") || w.starts_with("AG-"))
                {
                    let who = board.persona_name(&m.persona);
                    kept.insert(
                        code.trim_end_matches(':').to_owned(),
                        format!("{who}: {sentence}"),
                    );
                }
            }
        }
        // The summary keeps a fixed share of the facts it is given.
        let mut ranked: Vec<(String, String)> = std::mem::take(&mut kept).into_iter().collect();
        ranked.sort_by(|a, b| unit(&a.0, fold).total_cmp(&unit(&b.0, fold)));
        let keep = (ranked.len() as f64 * SUMMARY_KEEPS).ceil() as usize;
        kept = ranked.into_iter().take(keep).collect();
    }
    let counter = TiktokenCounter::default();
    let mut summary =
        String::from("SUMMARY SO FAR: The participants weighed costs, health and fairness.\n");
    for sentence in kept.values() {
        let next = format!("{summary}{sentence}\n");
        if counter.count(&next) > budget / 4 {
            break;
        }
        summary = next;
    }
    let rest = budget.saturating_sub(counter.count(&summary));
    let window = newest_first(board, &messages[folds * SUMMARY_EVERY..], rest);
    format!("{summary}{window}")
}

#[derive(Default)]
pub struct Tally {
    /// phase → (visible, relevant)
    by_phase: BTreeMap<Phase, (usize, usize)>,
    tokens: Vec<usize>,
}

impl Tally {
    fn add(&mut self, phase: Phase, text: &str, codes: &[String]) {
        let entry = self.by_phase.entry(phase).or_default();
        entry.1 += codes.len();
        entry.0 += codes.iter().filter(|c| text.contains(c.as_str())).count();
        self.tokens.push(TiktokenCounter::default().count(text));
    }

    pub fn share(v: (usize, usize)) -> f64 {
        if v.1 == 0 {
            1.0
        } else {
            v.0 as f64 / v.1 as f64
        }
    }

    /// The share of relevant facts visible over every phase.
    pub fn overall(&self) -> f64 {
        Self::share(
            self.by_phase
                .values()
                .fold((0, 0), |a, v| (a.0 + v.0, a.1 + v.1)),
        )
    }

    fn row(&self, name: &str, budget: usize) -> String {
        let overall = self
            .by_phase
            .values()
            .fold((0, 0), |a, v| (a.0 + v.0, a.1 + v.1));
        let phases: Vec<String> = [Phase::LaterTakes, Phase::CruxEntry, Phase::Closings]
            .iter()
            .map(|p| {
                self.by_phase.get(p).map_or("—".to_owned(), |v| {
                    format!("{:.0} %", Self::share(*v) * 100.0)
                })
            })
            .collect();
        let mean = self.tokens.iter().sum::<usize>() / self.tokens.len().max(1);
        format!(
            "| {name} | {budget} | {} | **{:.0} %** | {mean} |",
            phases.join(" | "),
            Self::share(overall) * 100.0
        )
    }
}

/// The strategies' visibility over one debate's later contexts.
pub fn tally(run: &Run, personas: usize, budget: usize) -> (Tally, [Tally; 3]) {
    let board = &run.board;
    let mut agon = Tally::default();
    let mut others: [Tally; 3] = Default::default();
    for (index, name, prompt) in &run.calls {
        let Some(phase) = Phase::of(board, *index) else {
            continue;
        };
        let codes = relevant(board, personas, name, *index);
        if std::env::var("AGON_FIDELITY_DEBUG").is_ok() {
            let missing: Vec<&String> = codes
                .iter()
                .filter(|c| !prompt.contains(c.as_str()))
                .collect();
            eprintln!("--- {phase:?} {name} at {index}: missing {missing:?}\n{prompt}");
        }
        agon.add(phase, prompt, &codes);
        let before = &board.messages()[..*index];
        let window = &before[before.len().saturating_sub(8)..];
        others[0].add(phase, &newest_first(board, window, budget), &codes);
        others[1].add(phase, &newest_first(board, before, budget), &codes);
        others[2].add(phase, &summary_window(board, *index, budget), &codes);
    }
    (agon, others)
}

/// Ledger entries of `persona` with the planted codes they carry.
fn ledger_entries(board: &Blackboard, persona: &agon_core::PersonaId) -> Vec<String> {
    let Some(state) = board.position(persona) else {
        return Vec::new();
    };
    let mut out: Vec<String> = state
        .aspects
        .values()
        .flat_map(|a| a.evidence.iter().cloned())
        .collect();
    out.extend(state.concessions.iter().map(|c| c.text.clone()));
    out.extend(state.agreements.iter().map(|a| a.on.clone()));
    out.extend(state.disagreements.iter().map(|d| d.on.clone()));
    out
}

fn content_words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| w.chars().count() >= 4)
        .map(str::to_lowercase)
        .collect()
}

fn extraction_quality(run: &Run, personas: usize) {
    let board = &run.board;
    let mut planted_total = 0;
    let mut reached = 0;
    let mut entries_total = 0;
    let mut junk = 0;
    for p in board.debaters() {
        let Some(i) = NAMES.iter().position(|n| *n == p.name) else {
            continue;
        };
        let entries = ledger_entries(board, &p.id);
        let said: String = board
            .messages()
            .iter()
            .filter(|m| m.persona == p.id)
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        for (code, _) in planted(i, personas) {
            if said.contains(code.as_str()) {
                planted_total += 1;
                reached += usize::from(entries.iter().any(|e| e.contains(&code)));
            }
        }
        let own = content_words(&said);
        for e in &entries {
            let words = content_words(e);
            entries_total += 1;
            let grounded = words.iter().filter(|w| own.contains(*w)).count();
            junk += usize::from(words.is_empty() || grounded * 2 < words.len());
        }
    }
    let failures: Vec<&agon_core::StepWarning> = board
        .warnings()
        .iter()
        .filter(|w| matches!(w.step, agon_core::StepId::Analysis { .. }))
        .collect();
    let failed = failures.len();
    let mut reasons: Vec<&str> = failures.iter().map(|w| w.reason.as_str()).collect();
    reasons.dedup();
    for reason in reasons.iter().take(3) {
        println!("analysis failure: {reason}");
    }
    println!(
        "extraction recall {reached}/{planted_total} = {:.0} %; junk {junk}/{entries_total} ledger entries = {:.0} %; analyses failed: {failed} of {} messages",
        reached as f64 * 100.0 / planted_total.max(1) as f64,
        junk as f64 * 100.0 / entries_total.max(1) as f64,
        board.messages().len()
    );
}

fn main() {
    let local = std::env::args().any(|a| a == "--local");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let embedder: Arc<dyn agon_llm::Embedder> =
            Arc::new(agon_local::LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")));
        for personas in [3, 5] {
            if local {
                break;
            }
            println!("\n### {personas} personas\n");
            println!("| strategy | budget | takes, aspects 2-3 | crux-room entry | closings | overall | tokens per call |");
            println!("|---|---|---|---|---|---|---|");
            let mut rows: BTreeMap<(usize, usize), String> = BTreeMap::new();
            for budget in BUDGETS {
                let plain = debate(personas, budget, None, None, Placement::First).await;
                let recalled =
                    debate(personas, budget, Some(&embedder), None, Placement::First).await;
                let (agon, others) = tally(&plain, personas, budget);
                let (agon_recall, _) = tally(&recalled, personas, budget);
                // The strongest fair baseline first: the whole transcript
                // cut to the same budget.
                rows.insert((0, budget), others[1].row("newest-first", budget));
                rows.insert((1, budget), agon.row("agon", budget));
                rows.insert((2, budget), agon_recall.row("agon+recall", budget));
                rows.insert((3, budget), others[0].row("window-8", budget));
                rows.insert((4, budget), others[2].row("summary+window", budget));
                if budget == BUDGETS[0] {
                    let contexts = plain
                        .calls
                        .iter()
                        .filter(|(i, ..)| Phase::of(&plain.board, *i).is_some())
                        .count();
                    eprintln!(
                        "{personas} personas: {} messages, {} crux rooms, {contexts} later contexts",
                        plain.board.messages().len(),
                        plain.board.crux_cards().len()
                    );
                }
            }
            for row in rows.values() {
                println!("{row}");
            }
        }
        if !local {
            println!("\n### facts late in long messages (3 personas, 1,200 tokens)\n");
            println!("| placement | strategy | budget | takes, aspects 2-3 | crux-room entry | closings | overall | tokens per call |");
            println!("|---|---|---|---|---|---|---|---|");
            for placement in [Placement::LastOf300, Placement::MiddleOf1900] {
                let run = debate(3, 1_200, None, None, placement).await;
                let (agon, others) = tally(&run, 3, 1_200);
                for (name, t) in [("newest-first", &others[1]), ("agon", &agon), ("window-8", &others[0])] {
                    println!("| {} {}", placement.label(), t.row(name, 1_200));
                }
            }
        }
        if local {
            println!("\n### local model (SmolLM2) as extractor, 3 personas, 1,200 tokens\n");
            let run = debate(3, 1_200, None, Some("local"), Placement::First).await;
            extraction_quality(&run, 3);
            let (agon, _) = tally(&run, 3, 1_200);
            println!("| strategy | budget | takes, aspects 2-3 | crux-room entry | closings | overall | tokens per call |");
            println!("|---|---|---|---|---|---|---|");
            println!("{}", agon.row("agon, local extractor", 1_200));
        }
    });
}
