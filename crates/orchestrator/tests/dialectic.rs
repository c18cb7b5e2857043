//! The dialectic protocol (seed 004) end to end on the scripted model:
//! every phase, parallel critiques, summaries and their failures,
//! convergence, clarifications, resume.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agon_llm::{
    ChatModel, ChatRequest, ChatResponse, ChatStream, JsonResponse, JsonSchema, ProviderError,
};

use agon_config::{DebateConfig, ProtocolKind, TerminationKind};
use agon_core::{Blackboard, MessageKind, PersonaId, StepId, SummaryScope};
use agon_llm::PriceTable;
use agon_orchestrator::{Models, RunControl, RunOutcome};
use agon_testkit::{BeforeEachCall, CallKind, ScriptedModel};
use agon_view::{ReportOptions, report};
use futures::FutureExt;
use support::sqlite;

fn scripted(delay: Duration) -> (Models, Arc<ScriptedModel>) {
    let model = Arc::new(ScriptedModel::new(delay));
    (
        Models::uniform(model.clone(), PriceTable::with_defaults()),
        model,
    )
}

/// 3 agents (architect, performance, kiss), `rounds` rounds, analysis off,
/// memory off.
pub fn dialectic_config(rounds: u32) -> DebateConfig {
    let mut c = DebateConfig {
        protocol: ProtocolKind::Dialectic,
        topic: "Design a rate limiting system".into(),
        ..DebateConfig::default()
    };
    c.dialectic.rounds = rounds;
    c.dialectic.analysis = false;
    // Compared across debates: each draws its devil's advocates with a
    // seed of its own id (the devil's tests turn it on).
    c.dialectic.devil_advocate = false;
    c.memory.enabled = false;
    c
}

async fn run(config: &DebateConfig, models: &Models) -> Blackboard {
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(config).await.unwrap();
    let outcome = orch.run(&id, models, RunControl::default()).await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let bb = orch.store().load(&id).await.unwrap().0;
    assert!(
        bb.protocol_recorded(),
        "debate_started records the protocol"
    );
    assert_eq!(bb.protocol(), config.protocol);
    bb
}

fn count(bb: &Blackboard, round: u32, pred: impl Fn(&MessageKind) -> bool) -> usize {
    bb.messages()
        .iter()
        .filter(|m| m.round == round && pred(&m.kind))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_round_proposes_critiques_refines_and_the_judge_synthesizes() {
    let (models, model) = scripted(Duration::ZERO);
    let bb = run(&dialectic_config(2), &models).await;
    for round in 1..=2 {
        assert_eq!(count(&bb, round, |k| *k == MessageKind::Proposal), 3);
        assert_eq!(
            count(&bb, round, |k| matches!(k, MessageKind::Critique { .. })),
            6,
            "N×(N−1) critiques"
        );
        assert_eq!(count(&bb, round, |k| *k == MessageKind::Refinement), 3);
    }
    // Round 2's proposals are round 1's refinements, carried without a call.
    for p in bb
        .messages()
        .iter()
        .filter(|m| m.round == 2 && m.kind == MessageKind::Proposal)
    {
        let refinement = bb.message(p.reply_to.as_ref().unwrap()).unwrap();
        assert_eq!(
            (refinement.kind.clone(), refinement.round),
            (MessageKind::Refinement, 1)
        );
        assert_eq!(
            (&refinement.persona, &refinement.content),
            (&p.persona, &p.content)
        );
        assert_eq!(p.meta.as_ref().unwrap().output_tokens, 0);
    }
    // Every critique targets another agent, each pair once per round.
    for m in bb.messages() {
        if let MessageKind::Critique { target } = &m.kind {
            assert_ne!(target, &m.persona);
            assert!(m.meta.as_ref().is_some_and(|meta| meta.input_tokens > 0));
        }
    }
    // 3 proposals + 2×6 critiques + 2×3 refinements + 1 solution = 22
    // calls (analysis off: no impact judgements for the trust memory).
    assert_eq!(model.calls(), 22);
    let solution = bb.solution().unwrap();
    assert_eq!((solution.round, solution.confidence), (2, Some(90)));
    assert_eq!(solution.synthesized_by, PersonaId::new("judge-main"));
    assert!(bb.warnings().is_empty(), "{:?}", bb.warnings());
    assert_eq!(bb.debaters().count(), 3);
    let md = report::markdown_with(
        &bb,
        ReportOptions {
            verbose: true,
            ..ReportOptions::default()
        },
    );
    for expected in [
        "## Problem Description",
        "| agent-architect | System Architect | architect | scripted |",
        "### Round 2",
        "#### Critiques",
        "#### Performance Engineer — critique of System Architect _(model scripted, latency",
        "(the refinement of round 1, carried over)",
        "_By Technical Judge after round 2; confidence 90/100._",
        "### Trade-offs",
        "## Usage and cost",
    ] {
        assert!(md.contains(expected), "report lacks {expected:?}:\n{md}");
    }
    assert!(!md.contains("## Position ledger"), "analysis was off");
    assert_eq!(
        bb.debaters()
            .map(|p| p.specialty.unwrap().as_str())
            .collect::<Vec<_>>(),
        ["architect", "performance", "kiss"]
    );
}

/// Counts the calls in flight at once (the most seen).
struct InFlight {
    inner: ScriptedModel,
    now: AtomicUsize,
    most: AtomicUsize,
}

impl InFlight {
    async fn around<T>(&self, call: impl std::future::Future<Output = T>) -> T {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(n, Ordering::SeqCst);
        let out = call.await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        out
    }
}

#[async_trait::async_trait]
impl ChatModel for InFlight {
    fn provider(&self) -> &str {
        "scripted"
    }
    fn model_id(&self) -> &str {
        "scripted"
    }
    async fn complete(&self, r: ChatRequest) -> Result<ChatResponse, ProviderError> {
        self.around(self.inner.complete(r)).await
    }
    async fn complete_json(
        &self,
        r: ChatRequest,
        s: &JsonSchema,
    ) -> Result<JsonResponse, ProviderError> {
        self.around(self.inner.complete_json(r, s)).await
    }
    async fn stream(&self, r: ChatRequest) -> Result<ChatStream, ProviderError> {
        self.around(self.inner.stream(r)).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn critiques_of_a_round_run_concurrently() {
    // Every call takes 100 ms, so calls started together overlap.
    let probe = Arc::new(InFlight {
        inner: ScriptedModel::new(Duration::from_millis(100)),
        now: AtomicUsize::new(0),
        most: AtomicUsize::new(0),
    });
    let models = Models::uniform(probe.clone(), PriceTable::with_defaults());
    let bb = run(&dialectic_config(1), &models).await;
    assert_eq!(
        count(&bb, 1, |k| matches!(k, MessageKind::Critique { .. })),
        6
    );
    assert_eq!(
        probe.most.load(Ordering::SeqCst),
        6,
        "the 6 critiques of the round were generated at once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn convergence_stops_when_the_judge_is_confident_enough() {
    let (models, _) = scripted(Duration::ZERO);
    let mut config = dialectic_config(5);
    config.dialectic.termination = TerminationKind::Convergence;
    config.dialectic.convergence_threshold = 85;
    let bb = run(&config, &models).await;
    // The scripted judge's confidence is 70 after round 1, 90 after round 2.
    let confidences: Vec<_> = bb
        .solutions()
        .iter()
        .map(|s| (s.round, s.confidence))
        .collect();
    assert_eq!(confidences, [(1, Some(70)), (2, Some(90))]);
    assert_eq!(bb.current_round(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_perspectives_are_summarized_at_the_start_of_a_round() {
    let (models, _) = scripted(Duration::ZERO);
    let mut config = dialectic_config(3);
    // Scripted answers are ~90 characters: round 1 gives each agent a
    // perspective of 1 proposal + 2 critiques + 1 refinement.
    config.dialectic.summarization.threshold = 300;
    config.dialectic.summarization.max_length = 120;
    config.dialectic.agents[1].summarization.enabled = Some(false);
    let bb = run(&config, &models).await;
    let summaries: Vec<(String, Option<u32>)> = bb
        .summaries()
        .iter()
        .map(|s| match &s.scope {
            SummaryScope::Persona { persona } => (persona.to_string(), s.round),
            other => (format!("{other:?}"), s.round),
        })
        .collect();
    for round in [2, 3] {
        for agent in ["agent-architect", "agent-kiss"] {
            assert!(
                summaries.contains(&(agent.into(), Some(round))),
                "{summaries:?}"
            );
        }
    }
    assert!(
        !summaries.iter().any(|(p, _)| p == "agent-performance"),
        "performance's summarization is off"
    );
    for s in bb.summaries() {
        assert!(s.after_chars <= 120 && s.before_chars >= 300, "{s:?}");
        assert_eq!(s.method, agon_core::SummaryMethod::LengthBased);
        assert!(s.latency_ms.is_some() && s.tokens.is_some() && s.model.is_some());
        let expected = if s.scope == SummaryScope::Judge {
            30
        } else {
            80
        };
        assert_eq!(
            s.temperature_centi,
            Some(expected),
            "debater 0.8, judge 0.3"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clarifications_come_from_the_answerer_and_reach_the_report() {
    let (models, _) = scripted(Duration::ZERO);
    let mut config = dialectic_config(1);
    config.dialectic.clarify = true;
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.json");
    std::fs::write(
        &answers,
        r#"{"architect": ["10k requests/s", "", "sustained, twice that at peak"], "kiss": ["internal"]}"#,
    )
    .unwrap();
    let orch = agon_app::orchestrator_for(sqlite().await)
        .with_answerer(Arc::new(agon_app::AnswersFile::load(&answers).unwrap()));
    let id = orch.create(&config).await.unwrap();
    orch.run(&id, &models, RunControl::default()).await.unwrap();
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let qa: Vec<(String, String)> = bb
        .messages()
        .iter()
        .filter(|m| m.kind == MessageKind::ClarificationAnswer)
        .map(|a| (a.persona.to_string(), a.content.clone()))
        .collect();
    assert_eq!(
        qa,
        [
            ("agent-architect".into(), "10k requests/s".into()),
            ("agent-architect".into(), "NA".into()),
            ("agent-performance".into(), "NA".into()),
            ("agent-performance".into(), "NA".into()),
            ("agent-kiss".into(), "internal".into()),
            ("agent-kiss".into(), "NA".into()),
            // The follow-up round: each agent saw the answers and asked
            // again; the architect's third answer answers its third question.
            (
                "agent-architect".into(),
                "sustained, twice that at peak".into()
            ),
            ("agent-performance".into(), "NA".into()),
            ("agent-kiss".into(), "NA".into()),
        ]
    );
    assert_eq!(
        count(&bb, 0, |k| *k == MessageKind::ClarificationQuestion),
        9
    );
    // Round 1 asked 6, the follow-up 3, the second follow-up nothing
    // (the default allows 3 rounds): then round 1 of the debate.
    assert_eq!(bb.clarification_rounds(), [6, 3, 0]);
    let md = agon_view::report::markdown(&bb);
    assert!(md.contains("Is that load sustained or a peak?"), "{md}");
    assert!(!bb.step_failed(&StepId::Clarification("agent-kiss".into())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_analysis_on_every_contribution_reaches_the_ledger() {
    let (models, _) = scripted(Duration::ZERO);
    let mut config = dialectic_config(2);
    config.dialectic.analysis = true;
    let bb = run(&config, &models).await;
    // Every proposal, critique and refinement is analysed, except the
    // proposals carried over (they repeat a refinement already analysed).
    for m in bb.messages() {
        let carried = m.kind == MessageKind::Proposal && m.reply_to.is_some();
        assert_eq!(bb.is_analyzed(&m.id), !carried, "{} {:?}", m.id, m.kind);
    }
    let ledger = bb.position(&"agent-kiss".into()).unwrap();
    assert!(
        !ledger.overall_stance.is_empty(),
        "{ledger:?} {:?}",
        bb.warnings()
    );
    let md = report::markdown(&bb);
    assert!(md.contains("## Position ledger"), "{md}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_and_resuming_matches_an_uninterrupted_run() {
    let (models, _) = scripted(Duration::ZERO);
    let mut config = dialectic_config(2);
    config.dialectic.analysis = true;
    config.dialectic.clarify = true;
    config.dialectic.summarization.threshold = 300;
    let orch = agon_app::orchestrator_for(sqlite().await);
    let reference = orch.create(&config).await.unwrap();
    orch.run(&reference, &models, RunControl::default())
        .await
        .unwrap();
    let (expected, _) = orch.store().load(&reference).await.unwrap();
    let total = expected.messages().len();
    for stop_after in [1usize, 7, 12, 19, 26, total - 1] {
        // A store of its own: the debates before would have changed the
        // agents' trust memories, which the prompts show.
        let orch = agon_app::orchestrator_for(sqlite().await);
        let id = orch.create(&config).await.unwrap();
        let control = RunControl::default();
        let mut updates = orch.subscribe();
        let stop = control.stop.clone();
        let watcher = tokio::spawn(async move {
            let mut messages = 0;
            while let Some(u) = futures::StreamExt::next(&mut updates).await {
                if let agon_orchestrator::DebateUpdate::Event { event, .. } = u
                    && matches!(*event, agon_core::DebateEvent::MessageAppended { .. })
                {
                    messages += 1;
                    if messages >= stop_after {
                        stop.cancel();
                        return;
                    }
                }
            }
        });
        let first = orch.run(&id, &models, control).await.unwrap();
        watcher.abort();
        assert_eq!(first, RunOutcome::Stopped, "stop after {stop_after}");
        let second = orch.run(&id, &models, RunControl::default()).await.unwrap();
        assert_eq!(second, RunOutcome::Finished);
        let (bb, _) = orch.store().load(&id).await.unwrap();
        assert_eq!(
            support::canonical(&bb),
            support::canonical(&expected),
            "stop after {stop_after} messages"
        );
    }
}

/// A scripted model that fails some calls: the judge's structured solution
/// (invalid JSON), summaries (a provider error), and answers critiques
/// only after a delay.
struct Flaky {
    inner: ScriptedModel,
    critique_delay: Duration,
}

#[async_trait::async_trait]
impl ChatModel for Flaky {
    fn provider(&self) -> &str {
        "scripted"
    }
    fn model_id(&self) -> &str {
        "scripted"
    }
    async fn complete(&self, r: ChatRequest) -> Result<ChatResponse, ProviderError> {
        let user: String = r.messages.iter().map(|m| m.content.as_str()).collect();
        if user.contains("Summarize") {
            return Err(ProviderError::Timeout {
                provider: "scripted".into(),
                after: Duration::from_secs(1),
            });
        }
        self.inner.complete(r).await
    }
    async fn complete_json(
        &self,
        r: ChatRequest,
        s: &JsonSchema,
    ) -> Result<JsonResponse, ProviderError> {
        if s.name == "solution" {
            let mut response = self.inner.complete_json(r, s).await?;
            response.value = serde_json::json!({"description": "  ", "confidence": 50});
            return Ok(response);
        }
        self.inner.complete_json(r, s).await
    }
    async fn stream(&self, r: ChatRequest) -> Result<ChatStream, ProviderError> {
        let user: String = r.messages.iter().map(|m| m.content.as_str()).collect();
        if user.contains("Critique ") {
            tokio::time::sleep(self.critique_delay).await;
        }
        self.inner.stream(r).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_summaries_and_judge_degrade_with_warnings_and_a_plain_solution() {
    let flaky = Arc::new(Flaky {
        inner: ScriptedModel::new(Duration::ZERO),
        critique_delay: Duration::ZERO,
    });
    let models = Models::uniform(flaky, PriceTable::with_defaults());
    let mut config = dialectic_config(3);
    config.dialectic.summarization.threshold = 300;
    let bb = run(&config, &models).await;
    // Summaries failed: warnings, no summary, and the debate went on.
    assert!(bb.summaries().is_empty());
    for agent in ["agent-architect", "agent-performance", "agent-kiss"] {
        assert!(bb.step_failed(&StepId::Summary {
            persona: Some(agent.into()),
            round: 2
        }));
    }
    assert_eq!(count(&bb, 3, |k| *k == MessageKind::Refinement), 3);
    // The judge's structured solution failed twice: a plain-text one.
    assert!(bb.step_failed(&StepId::Solution(3)));
    let solution = bb.solution().unwrap();
    assert_eq!(solution.confidence, None);
    assert!(!solution.description.trim().is_empty());
    let md = report::markdown(&bb);
    assert!(
        md.contains("not given (plain-text synthesis)") && md.contains("## Warnings"),
        "{md}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_a_round_has_no_time_left_for_are_skipped_and_the_debate_goes_on() {
    let flaky = Arc::new(Flaky {
        inner: ScriptedModel::new(Duration::ZERO),
        critique_delay: Duration::from_secs(5),
    });
    let models = Models::uniform(flaky, PriceTable::with_defaults());
    let mut config = dialectic_config(1);
    config.dialectic.timeout_per_round_secs = 1;
    config.dialectic.summarization.enabled = false;
    config.dialectic.judge.summarization.enabled = Some(false);
    let bb = run(&config, &models).await;
    assert_eq!(
        count(&bb, 1, |k| matches!(k, MessageKind::Critique { .. })),
        0
    );
    let skipped: Vec<&str> = bb
        .warnings()
        .iter()
        .filter(|w| {
            matches!(
                &w.step,
                StepId::Utterance(agon_core::TurnKey::Critique { .. })
            )
        })
        .map(|w| w.reason.as_str())
        .collect();
    assert_eq!(skipped.len(), 6, "{:?}", bb.warnings());
    assert!(skipped[0].contains("round's 1 s ran out"), "{}", skipped[0]);
    // The refinements come after the round's time is up: skipped without
    // a call. The judge still synthesizes, from the proposals.
    assert_eq!(count(&bb, 1, |k| *k == MessageKind::Refinement), 0);
    let refinements_skipped = bb
        .warnings()
        .iter()
        .filter(|w| {
            matches!(
                &w.step,
                StepId::Utterance(agon_core::TurnKey::Refinement { .. })
            )
        })
        .count();
    assert_eq!(refinements_skipped, 3);
    assert!(bb.solution().is_some());
}

/// A local OpenAI-compatible server: model `bad` is refused (401), any
/// other gets the scripted reply.
struct RefusesBad;

impl wiremock::Respond for RefusesBad {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        if body["model"] == "bad" {
            return wiremock::ResponseTemplate::new(401)
                .set_body_json(serde_json::json!({"error": {"message": "invalid key"}}));
        }
        let (content_type, text) = agon_testkit::openai_reply(&body);
        wiremock::ResponseTemplate::new(200).set_body_raw(text, content_type)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fallback_chain_answers_over_http_and_the_usage_names_the_model_that_did() {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(RefusesBad)
        .mount(&server)
        .await;
    let url = format!("{}/v1", server.uri());
    let mut config = dialectic_config(1);
    config.models.default = format!("openai-compatible:stub@{url}");
    config.dialectic.agents[0].model = Some(format!(
        "openai-compatible:bad@{url},openai-compatible:good@{url}"
    ));
    let models = agon_app::models_from_config(
        &config,
        &agon_llm::ModelFactory::new(),
        &|_| None,
        PriceTable::with_defaults(),
    )
    .unwrap();
    let bb = run(&config, &models).await;
    let architect: Vec<&str> = bb
        .messages()
        .iter()
        .filter(|m| m.persona.as_str() == "agent-architect")
        .map(|m| m.meta.as_ref().unwrap().model.as_str())
        .collect();
    assert_eq!(
        architect,
        ["good", "good", "good", "good"],
        "proposal, 2 critiques, refinement"
    );
    let debater = &bb.usage()["debater"];
    assert!(
        debater.contains_key("good") && debater.contains_key("stub"),
        "{debater:?}"
    );
    assert!(
        !debater.contains_key("bad"),
        "the refused model answered nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_whose_critiques_keep_clashing_meet_in_a_crux_room() {
    let (models, _) = scripted(Duration::ZERO);
    let mut config = dialectic_config(2);
    config.dialectic.analysis = true;
    config.dialectic.crux_rooms = true;
    config.crux.max_turns = 2;
    config.crux.check_every = 2;
    config.crux.max_rooms = 1;
    let bb = run(&config, &models).await;
    assert_eq!(bb.claims().len(), 1, "{:?}", bb.warnings());
    let claim = &bb.claims()[0];
    assert_eq!(
        claim.personas,
        ["agent-architect".into(), "agent-performance".into()]
    );
    assert_eq!(bb.crux_cards().len(), 1);
    let room = claim.crux_room.as_ref().unwrap();
    assert_eq!(
        bb.message_indices_for_room(room).len(),
        4,
        "2 positions, 2 exchanges"
    );
    let md = report::markdown(&bb);
    assert!(
        md.contains("## Contested claims and crux cards") && md.contains("Crux room `room-1`"),
        "{md}"
    );
}

/// The scripted model, pausing the run (a request posted to the store)
/// when the first proposal is asked for.
fn pauses_at_proposals(
    store: Arc<dyn agon_store::EventStore>,
    debate: agon_core::DebateId,
) -> BeforeEachCall {
    let paused = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let inner = Arc::new(ScriptedModel::new(Duration::from_millis(100)));
    BeforeEachCall::new(inner, move |kind, r| {
        let user: String = r.messages.iter().map(|m| m.content.as_str()).collect();
        let first = kind == CallKind::Stream
            && user.contains("Propose your solution")
            && !paused.swap(true, Ordering::SeqCst);
        let (store, debate) = (Arc::clone(&store), debate.clone());
        async move {
            if first {
                let pause = agon_orchestrator::RunRequest::Pause { by: None }.to_json();
                store.post_request(&debate, &pause).await.unwrap();
            }
        }
        .boxed()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_does_not_count_against_the_rounds_deadline() {
    let control = RunControl::default();
    let mut config = dialectic_config(1);
    config.dialectic.timeout_per_round_secs = 2;
    config.dialectic.summarization.enabled = false;
    config.dialectic.judge.summarization.enabled = Some(false);
    let store = sqlite().await;
    let orch = agon_app::orchestrator_for(Arc::clone(&store));
    let id = orch.create(&config).await.unwrap();
    let model = pauses_at_proposals(Arc::clone(&store), id.clone());
    let models = Models::uniform(Arc::new(model), PriceTable::with_defaults());
    // Held for longer than the round may take, then resumed.
    let (resumer, debate) = (Arc::clone(&store), id.clone());
    let resume = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let request = agon_orchestrator::RunRequest::Resume { by: None }.to_json();
        resumer.post_request(&debate, &request).await.unwrap();
    });
    let outcome = orch.run(&id, &models, control).await.unwrap();
    resume.await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let events = orch.log(&id).await.unwrap();
    let at = |name: &str| events.iter().position(|e| e.name() == name).unwrap();
    let critiques = events
        .iter()
        .position(|e| {
            matches!(e, agon_core::DebateEvent::MessageAppended { message }
                if matches!(message.kind, MessageKind::Critique { .. }))
        })
        .unwrap();
    assert!(at("debate_paused") < at("debate_resumed") && at("debate_resumed") < critiques);
    let bb = orch.store().load(&id).await.unwrap().0;
    assert_eq!(
        count(&bb, 1, |k| matches!(k, MessageKind::Critique { .. })),
        6,
        "no critique skipped: {:?}",
        bb.warnings()
    );
    assert_eq!(count(&bb, 1, |k| *k == MessageKind::Refinement), 3);
}

/// The architect may read files of a context directory: each of its
/// contributions reads the file the problem names and cites it; every call
/// is an event, listed in the report; a turn aborted after its call reuses
/// it on resume instead of calling again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_reads_a_file_of_the_context_dir_and_cites_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("limits.md"),
        "Per client: 100 requests per second, bursts of 20.\nGlobal: 10k/s.\n",
    )
    .unwrap();
    let mut config = dialectic_config(1);
    config.topic = "Design a rate limiting system. The limits are in limits.md.".into();
    config.context_dir = Some(dir.path().to_owned());
    for a in &mut config.dialectic.agents {
        if a.role == "architect" {
            a.tools = vec!["file_read".into(), "list_files".into()];
            a.tool_call_limit = Some(3);
        }
    }
    config.validate_tools("test").unwrap();
    // Slow enough that the abort lands while the turn's next call runs.
    let (models, _) = scripted(Duration::from_millis(300));
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&config).await.unwrap();
    // Abort at the first tool call: the call stays, the turn does not.
    let control = RunControl::default();
    let mut updates = orch.subscribe();
    let abort = control.abort.clone();
    let watcher = tokio::spawn(async move {
        while let Some(u) = futures::StreamExt::next(&mut updates).await {
            if let agon_orchestrator::DebateUpdate::Event { event, .. } = u
                && matches!(*event, agon_core::DebateEvent::ToolCalled { .. })
            {
                abort.cancel();
                return;
            }
        }
    });
    let first = orch.run(&id, &models, control).await.unwrap();
    watcher.abort();
    assert_eq!(first, RunOutcome::Stopped);
    let (bb, _) = orch.store().load(&id).await.unwrap();
    assert_eq!(bb.tool_calls().len(), 1);
    assert_eq!(
        count(&bb, 1, |k| *k == MessageKind::Proposal),
        0,
        "the turn was not recorded"
    );
    let second = orch.run(&id, &models, RunControl::default()).await.unwrap();
    assert_eq!(second, RunOutcome::Finished);
    let (bb, _) = orch.store().load(&id).await.unwrap();

    let architect = agon_core::PersonaId::new("agent-architect");
    let contributions = bb
        .messages()
        .iter()
        .filter(|m| m.persona == architect && m.round == 1)
        .count();
    // One read per contribution (proposal, 2 critiques, refinement): the
    // resumed proposal reused its recorded call.
    assert_eq!(
        bb.tool_calls().len(),
        contributions,
        "{:#?}",
        bb.tool_calls()
    );
    for c in bb.tool_calls() {
        assert_eq!(c.persona, architect);
        assert_eq!((c.name.as_str(), c.call), ("file_read", 0));
        assert_eq!(c.arguments, serde_json::json!({"path": "limits.md"}));
        assert!(
            c.ok && c.result.starts_with("Per client: 100 requests"),
            "{c:?}"
        );
    }
    let proposal = bb
        .messages()
        .iter()
        .find(|m| m.persona == architect && m.kind == MessageKind::Proposal)
        .unwrap();
    assert!(
        proposal
            .content
            .contains("As limits.md says: \"Per client: 100 requests per second, bursts of 20.\""),
        "{}",
        proposal.content
    );
    // Agents without tools call none.
    assert!(bb.tool_calls().iter().all(|c| c.persona == architect));
    let md = agon_view::report::markdown(&bb);
    assert!(md.contains("## Tool calls\n\n4 call(s)"), "{md}");
    assert!(
        md.contains("- System Architect (proposal/1/agent-architect): `file_read({\"path\":\"limits.md\"})` → Per client: 100 requests"),
        "{md}"
    );
}

/// dialectic's `context_search` with the vector memory off (as in its own
/// `debate-config_context_search_no_history.json`): the tool searches the
/// debate's messages, and the debate runs as dialectic's does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_search_without_the_memory_searches_what_was_said() {
    let mut config = dialectic_config(1);
    assert!(!config.memory.enabled);
    for a in &mut config.dialectic.agents {
        if a.role == "architect" {
            a.tools = vec!["context_search".into()];
            a.tool_call_limit = Some(2);
        }
    }
    config.validate_tools("test").unwrap();
    let (models, _) = scripted(Duration::ZERO);
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&config).await.unwrap();
    let outcome = orch.run(&id, &models, RunControl::default()).await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let calls = bb.tool_calls();
    // The proposal, two critiques and the refinement each searched once.
    assert_eq!(calls.len(), 4, "{calls:#?}");
    assert!(
        calls
            .iter()
            .all(|c| c.name == "context_search" && c.ok && c.persona.as_str() == "agent-architect"),
        "{calls:#?}"
    );
    // Before anyone spoke there was nothing to find; once the proposals
    // were in, the search found them by their words.
    assert_eq!(calls[0].result, "(nothing said so far matches)");
    assert!(
        calls[1..]
            .iter()
            .all(|c| c.result.starts_with("(round 1, ")),
        "{calls:#?}"
    );
    assert!(bb.warnings().is_empty(), "{:?}", bb.warnings());
}

/// Issue 53: a contribution's prompt runs from what the whole debate
/// shares (the rules, the problem) to what the round shares (the proposal
/// under review, the critiques of it) to the call's own (the agent's
/// ledger, its role and task), and marks where the shared part ends. Every
/// agent gets the same system prompt; the critiques of one proposal and
/// the refinement that answers them start with the same text, up to the
/// proposal under review.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contributions_share_their_start_and_mark_where_it_ends() {
    // Each streamed contribution's request, kept.
    let (models, kept) = support::scripted_keeping_streams();
    run(&dialectic_config(2), &models).await;
    let requests = kept.lock().unwrap().clone();
    let purpose = |r: &ChatRequest| r.purpose.clone().unwrap_or_default();
    let systems: std::collections::BTreeSet<_> =
        requests.iter().map(|r| r.system.clone()).collect();
    assert_eq!(
        systems.len(),
        1,
        "one system prompt for every agent: {systems:?}"
    );
    fn shared(r: &ChatRequest) -> &str {
        let at = r
            .shared_prefix
            .unwrap_or_else(|| panic!("no shared start: {:?}", r.purpose));
        &r.messages[0].content[..at]
    }
    // Round 2: the two critiques of the architect's proposal (their steps
    // name the target, then the critic) and the architect's refinement.
    let round2: Vec<&ChatRequest> = requests
        .iter()
        .filter(|r| purpose(r).contains("/2/"))
        .collect();
    let of_architect: Vec<&ChatRequest> = round2
        .iter()
        .copied()
        .filter(|r| {
            let p = purpose(r);
            p.contains("critique/2/agent-architect/") || p.contains("refinement/2/agent-architect")
        })
        .collect();
    assert_eq!(
        of_architect.len(),
        3,
        "{:?}",
        round2.iter().map(|r| purpose(r)).collect::<Vec<_>>()
    );
    let critique = shared(of_architect[0]);
    assert!(
        critique.contains("UNDER REVIEW")
            && critique.contains("System Architect's proposal (round 2)"),
        "{critique}"
    );
    assert!(
        !critique.contains("You are"),
        "the agent's own part comes after: {critique}"
    );
    for r in &of_architect[1..] {
        let user = &r.messages[0].content;
        let common = critique
            .bytes()
            .zip(user.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let review = critique.find("UNDER REVIEW").unwrap();
        assert!(
            common > review + 40,
            "{} shares the proposal under review: {common}",
            purpose(r)
        );
    }
    for r in &requests {
        let user = &r.messages[0].content;
        assert!(
            user[r.shared_prefix.unwrap_or(0)..].contains("You are"),
            "{}",
            purpose(r)
        );
    }
}
