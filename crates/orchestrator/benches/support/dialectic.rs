//! The dialectic reference setup, shared by `cargo xtask bench dialectic`
//! (which prints it) and the headline-number tests (which check it): a
//! stub OpenAI-compatible server answers every utterance and summary with
//! a fixed design text (~214 o200k tokens, the answer length of dialectic
//! 0.1.0's reference run; the long variant 2,483 words, 2,821 tokens), 3 agents
//! (architect, performance, KISS), 5 rounds, the problem of
//! `examples/dialectic/kata1.md`; every request's prompt counted with
//! tiktoken o200k at the server (system + user, including the JSON Schema
//! that prompt-mode structured output puts in the system prompt).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agon_config::{DebateConfig, ProtocolKind};
use agon_context::{TiktokenCounter, TokenCounter};
use agon_llm::{ModelFactory, PriceTable};
use agon_orchestrator::RunControl;
use agon_testkit::{openai_reply, prompt_parts, schema_name};
use serde_json::{Value, json};

/// dialectic 0.1.0 on this setup: prompt tokens with its default summarization.
pub const DIALECTIC_TOKENS: u64 = 66_305;
/// … and without summarization.
pub const DIALECTIC_TOKENS_NO_SUMMARY: u64 = 75_302;
/// dialectic 0.1.0's prompt tokens on the same setup with the 2,483-word
/// answers, its default summarization on.
pub const DIALECTIC_TOKENS_LONG: u64 = 389_208;

const PARAGRAPH: &str = "The design puts a submission service in front of a job queue. Students \
upload source files through the web interface, which stores them in object storage with a \
content hash and records the submission in a relational database with the student, the \
assignment and the time. A scheduler takes jobs from the queue and runs each one in an isolated \
container with fixed CPU, memory and time limits and no network access; the container runs the \
instructor's test suite and writes the results and logs back. Grades are computed from the test \
results by a versioned grading policy, stored with the run, and never overwritten: a regrade \
creates a new record, so every grade can be audited. Plagiarism checks run as a separate \
nightly batch that compares normalized token streams of all submissions of an assignment and \
sends each new submission to the external service through a rate-limited adapter. The \
instructor dashboard reads results from a read replica, so heavy grading weeks never slow the \
submission path down. Every component logs with the submission id, so a failed run can be \
traced from upload to grade in one query.";

/// The stub's answer to every utterance and summary.
pub fn answer(long: bool) -> String {
    if !long {
        return PARAGRAPH.to_owned();
    }
    // 2,483 words (2,821 o200k tokens): the paragraph thirteen times, numbered so no two are equal.
    (1..=13)
        .map(|i| format!("Part {i}. {PARAGRAPH}"))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// One call as the server saw it.
#[derive(Debug, Clone)]
pub struct Call {
    /// What the call was for (proposal, critique, analysis, …).
    pub phase: &'static str,
    /// The round its prompt names, if any.
    pub round: Option<u32>,
    /// Prompt tokens (o200k).
    pub tokens: u64,
    /// A repair attempt after output that failed its schema (the error).
    pub repair: Option<String>,
    /// The text a provider reads, first to last (prefix stability).
    pub text: String,
}

fn phase_of(system: &str, user: &str, schema: Option<&str>) -> &'static str {
    match schema {
        Some("solution") => "judge",
        Some("clarifying_questions") => "clarify",
        Some("requirements") => "requirements",
        Some(
            "turn_analysis"
            | "position_update"
            | "disagreement_window"
            | "batch_position_update"
            | "round_analysis",
        ) => "analysis",
        Some(_) => "other",
        None if user.contains("Propose your solution") => "proposal",
        None if user.contains("Critique ") || user.contains("devil's advocate") => "critique",
        None if user.contains("Refine your proposal") => "refinement",
        None if user.contains("Summarize the final round") => "judge summary",
        None if user.contains("Summarize your part") => "summary",
        None if user.contains("Synthesize the best solution") => "judge",
        None if system.is_empty() => "other",
        None => "other",
    }
}

fn round_in(user: &str) -> Option<u32> {
    let at = user.find("Round ")?;
    let digits: String = user[at + 6..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

const AGENTS: [&str; 3] = [
    "System Architect",
    "Performance Engineer",
    "Simplicity Advocate",
];

/// A position update of realistic size for the analysis calls: a stance,
/// and a disagreement with another agent.
fn analysis_reply(
    schema: Option<&str>,
    user: &str,
    body: &Value,
) -> Option<(&'static str, String)> {
    let speaker = user
        .split("Current position state for ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .unwrap_or(AGENTS[0]);
    let other = AGENTS
        .iter()
        .find(|a| **a != speaker)
        .copied()
        .unwrap_or(AGENTS[1]);
    let position = json!({
        "overallStance": format!("{speaker} favours a queue of isolated grading runs with audited, immutable grades."),
        "aspectPosition": null,
        "newAgreement": null,
        "newDisagreement": {"withPersona": other, "on": "how much isolation the grading runners need", "intensity": "mild"},
        "concession": null,
        "shift": null
    });
    let value = match schema? {
        "position_update" => position,
        "turn_analysis" => json!({"position": position, "disagreements": []}),
        "batch_position_update" => {
            let updates: Vec<Value> = agon_testkit::batch_messages(user)
                .into_iter()
                .map(|(id, name)| {
                    let other = AGENTS.iter().find(|a| **a != name).copied().unwrap_or(AGENTS[1]);
                    json!({"message": id, "position": {
                        "overallStance": format!("{name} favours a queue of isolated grading runs with audited, immutable grades."),
                        "aspectPosition": null, "newAgreement": null,
                        "newDisagreement": {"withPersona": other, "on": "how much isolation the grading runners need", "intensity": "mild"},
                        "concession": null, "shift": null}})
                })
                .collect();
            json!({"updates": updates})
        }
        _ => return None,
    };
    let mut fake = body.clone();
    fake["messages"] = json!([]);
    let (ct, _) = openai_reply(&fake);
    let text = value.to_string();
    let reply = json!({"id": "c", "object": "chat.completion", "model": "stub",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 60}});
    Some((ct, reply.to_string()))
}

struct Stub {
    long: bool,
    delay: Duration,
    calls: Arc<Mutex<Vec<Call>>>,
    counter: TiktokenCounter,
}

impl wiremock::Respond for Stub {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let (system, user) = prompt_parts(&body);
        let schema = schema_name(&body, &system);
        let phase = phase_of(&system, &user, schema);
        if std::env::var_os("AGON_BENCH_SHOW").is_some_and(|v| v == phase) {
            eprintln!("──── {phase} ────\n[system]\n{system}\n[user]\n{user}\n");
        }
        let tokens = (self.counter.count(&system) + self.counter.count(&user)) as u64;
        let repair = user
            .split("does not validate against the JSON schema")
            .nth(1)
            .map(|e| e.lines().take(3).collect::<Vec<_>>().join(" "));
        self.calls.lock().unwrap().push(Call {
            phase,
            round: round_in(&user),
            tokens,
            repair,
            text: crate::prefix::request_text(&body),
        });
        let (content_type, text) = if let Some(reply) = analysis_reply(schema, &user, &body) {
            reply
        } else if schema == Some("round_analysis") {
            // The summaries a round's analysis writes are as long as a
            // summary call's answer: the fixed text, cut to the length
            // asked (as a summary call's answer is cut when recorded).
            let (ct, reply) = openai_reply(&body);
            let mut reply: Value = serde_json::from_str(&reply).unwrap();
            let content = reply["choices"][0]["message"]["content"].as_str().unwrap();
            let mut value: Value = serde_json::from_str(content).unwrap();
            if let Some(each) = value["summaries"].as_object_mut() {
                for text in each.values_mut() {
                    *text = json!(answer(self.long).chars().take(2_500).collect::<String>());
                }
            }
            reply["choices"][0]["message"]["content"] = json!(value.to_string());
            (ct, reply.to_string())
        } else if schema.is_some() {
            openai_reply(&body)
        } else {
            // Every utterance and summary: the fixed text.
            let mut fake = body.clone();
            fake["messages"] = json!([]);
            let (ct, _) = openai_reply(&fake);
            let text = answer(self.long);
            let reply = if body["stream"].as_bool() == Some(true) {
                let chunk = json!({"id": "s", "object": "chat.completion.chunk", "model": "stub",
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]});
                let last = json!({"id": "s", "object": "chat.completion.chunk", "model": "stub",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": tokens, "completion_tokens": 200}});
                format!("data: {chunk}\n\ndata: {last}\n\ndata: [DONE]\n\n")
            } else {
                json!({"id": "c", "object": "chat.completion", "model": "stub",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": tokens, "completion_tokens": 200}})
                .to_string()
            };
            (ct, reply)
        };
        wiremock::ResponseTemplate::new(200)
            .set_body_raw(text, content_type)
            .set_delay(self.delay)
    }
}

/// One reference run: its calls as the server saw them, the finished
/// blackboard, the config it ran and its wall time.
pub struct RunReport {
    /// Every call, in arrival order.
    pub calls: Vec<Call>,
    /// The finished debate.
    pub board: agon_core::Blackboard,
    /// The configuration run.
    pub config: DebateConfig,
    /// Wall time of the debate.
    pub wall: Duration,
}

impl RunReport {
    /// Prompt tokens over every call.
    pub fn total(&self) -> u64 {
        self.calls.iter().map(|c| c.tokens).sum()
    }

    /// The run's prefix stability, by phase.
    pub fn stability(&self) -> crate::prefix::Stability {
        let calls: Vec<(String, String)> = self
            .calls
            .iter()
            .map(|c| (c.phase.to_owned(), c.text.clone()))
            .collect();
        crate::prefix::stability(&calls, &agon_context::TiktokenCounter::default())
    }

    /// (calls, prompt tokens, largest prompt) by phase.
    pub fn by_phase(&self) -> BTreeMap<&'static str, (u64, u64, u64)> {
        let mut out: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
        for c in &self.calls {
            let e = out.entry(c.phase).or_default();
            e.0 += 1;
            e.1 += c.tokens;
            e.2 = e.2.max(c.tokens);
        }
        out
    }

    /// The total as a share of dialectic's.
    pub fn ratio(&self) -> f64 {
        self.total() as f64 / DIALECTIC_TOKENS as f64
    }
}

/// Runs the reference debate: `long` answers or not, the memory analysis
/// on or off, its critique-impact judgement on or off, the stub answering
/// after `delay`.
pub async fn run(long: bool, analysis: bool, judge_impact: bool, delay: Duration) -> RunReport {
    run_with(long, analysis, judge_impact, true, delay).await
}

/// [`run`], with requirements tracking on or off.
pub async fn run_with(
    long: bool,
    analysis: bool,
    judge_impact: bool,
    requirements: bool,
    delay: Duration,
) -> RunReport {
    run_custom(long, delay, |config| {
        config.dialectic.analysis = analysis;
        config.dialectic.judge_impact = judge_impact;
        config.dialectic.requirements = requirements;
    })
    .await
}

/// The reference setup with Agon's defaults, changed by `tweak`.
pub async fn run_custom(
    long: bool,
    delay: Duration,
    tweak: impl FnOnce(&mut DebateConfig),
) -> RunReport {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Stub {
            long,
            delay,
            calls: Arc::clone(&calls),
            counter: TiktokenCounter::default(),
        })
        .mount(&server)
        .await;
    let problem = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/dialectic/kata1.md"
    ))
    .unwrap();
    let mut config = DebateConfig {
        protocol: ProtocolKind::Dialectic,
        topic: problem,
        ..DebateConfig::default()
    };
    config.dialectic.rounds = 5;
    config.memory.enabled = false;
    tweak(&mut config);
    config.models.default = format!("openai-compatible:stub@{}/v1", server.uri());

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bench.db");
    let store = agon_store::open(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let orch = agon_app::orchestrator_for(store);
    let models = agon_app::models_from_config(
        &config,
        &ModelFactory::new(),
        &|_| None,
        PriceTable::with_defaults(),
    )
    .unwrap();
    let id = orch.create(&config).await.unwrap();
    let started = std::time::Instant::now();
    orch.run(&id, &models, RunControl::default()).await.unwrap();
    let wall = started.elapsed();
    let (board, _) = orch.store().load(&id).await.unwrap();
    let calls = calls.lock().unwrap().clone();
    RunReport {
        calls,
        board,
        config,
        wall,
    }
}
