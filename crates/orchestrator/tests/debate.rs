//! Full debates on the scripted model: every protocol step, resume,
//! degradation, the live subscription, and a run through a local
//! OpenAI-compatible HTTP server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use agon_core::{ClaimStatus, DebateEvent, MessageKind};
use agon_llm::{ChatModel, ModelFactory, PriceTable};
use agon_orchestrator::{DebateUpdate, Models, RunControl, RunOutcome};
use agon_testkit::{ScriptedModel, openai_reply};
use agon_view::report;
use futures::StreamExt;
use support::{canonical, small_config, sqlite};

fn scripted() -> Models {
    Models::uniform(
        Arc::new(ScriptedModel::new(Duration::ZERO)),
        PriceTable::with_defaults(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_debate_runs_every_step_of_the_protocol() {
    let orch = agon_app::orchestrator_for(sqlite().await);
    let mut updates = orch.subscribe();
    let id = orch.create(&small_config()).await.unwrap();
    let outcome = orch
        .run(&id, &scripted(), RunControl::default())
        .await
        .unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let (bb, _) = orch.store().load(&id).await.unwrap();

    let kinds = |k: MessageKind| bb.messages().iter().filter(|m| m.kind == k).count();
    assert_eq!(kinds(MessageKind::Opening), 3);
    assert_eq!(kinds(MessageKind::Take), 2 * 2 * 3);
    assert_eq!(kinds(MessageKind::CruxPosition), 2);
    assert_eq!(kinds(MessageKind::CruxExchange), 2);
    assert_eq!(kinds(MessageKind::Closing), 3);
    assert_eq!(kinds(MessageKind::Synthesis), 1);
    // Every debater's message analysed exactly once (not the judge's synthesis).
    let debater_messages = bb
        .messages()
        .iter()
        .filter(|m| m.kind != MessageKind::Synthesis)
        .count();
    assert!(
        bb.messages()
            .iter()
            .filter(|m| m.kind != MessageKind::Synthesis)
            .all(|m| bb.is_analyzed(&m.id))
    );
    assert_eq!(bb.analyzed_turns().len(), debater_messages);
    // Claims: Mara and Theo judged at 90% in every window → claim after 2 windows.
    let claim = &bb.claims()[0];
    assert_eq!(claim.personas, ["mara".into(), "theo".into()]);
    assert_eq!(claim.source_messages.len(), 2);
    assert_eq!(
        claim.status,
        ClaimStatus::Abandoned,
        "scripted card: not resolved"
    );
    assert_eq!(bb.crux_cards().len(), 1);
    // Round records per aspect, reflections when the trigger fired.
    assert_eq!(bb.rounds().len(), 2);
    assert!(!bb.reflections().is_empty());
    assert!(bb.warnings().is_empty(), "{:?}", bb.warnings());
    assert!(!bb.usage().is_empty());
    let ledger = bb.position(&"mara".into()).unwrap();
    assert!(!ledger.initial_stance.is_empty() && !ledger.disagreements.is_empty());

    let md = report::markdown(&bb);
    for heading in [
        "## Personas",
        "## Aspect: Cost",
        "## Position ledger",
        "## Contested claims",
        "Crux card card-1",
        "## Reflections",
        "## Closings",
        "## Synthesis",
        "## Usage and cost",
    ] {
        assert!(md.contains(heading), "report lacks {heading}");
    }

    // The subscription saw every persisted event, in sequence, and tokens.
    let mut seqs = Vec::new();
    let mut tokens = 0;
    while let Ok(Some(update)) =
        tokio::time::timeout(Duration::from_millis(50), updates.next()).await
    {
        match update {
            DebateUpdate::Event { seq, .. } => seqs.push(seq),
            DebateUpdate::Token { .. } => tokens += 1,
            _ => {}
        }
    }
    let stored = orch.store().events_after(&id, 0).await.unwrap();
    assert_eq!(seqs, stored.iter().map(|e| e.seq).collect::<Vec<_>>());
    assert!(tokens > bb.messages().len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_and_resuming_matches_an_uninterrupted_run() {
    let orch = agon_app::orchestrator_for(sqlite().await);
    let reference = orch.create(&small_config()).await.unwrap();
    orch.run(&reference, &scripted(), RunControl::default())
        .await
        .unwrap();
    let (expected, _) = orch.store().load(&reference).await.unwrap();

    for stop_after in [1usize, 5, 14, 19, 22] {
        let id = orch.create(&small_config()).await.unwrap();
        let control = RunControl::default();
        let mut updates = orch.subscribe();
        let stop = control.stop.clone();
        let watcher = tokio::spawn(async move {
            let mut messages = 0;
            while let Some(u) = updates.next().await {
                if let DebateUpdate::Event { event, .. } = u
                    && matches!(*event, DebateEvent::MessageAppended { .. })
                {
                    messages += 1;
                    if messages == stop_after {
                        stop.cancel();
                        return;
                    }
                }
            }
        });
        let first = orch.run(&id, &scripted(), control).await.unwrap();
        watcher.abort();
        assert_eq!(first, RunOutcome::Stopped, "stop after {stop_after}");
        let status = orch.store().debate(&id).await.unwrap().status;
        assert_eq!(status.as_str(), "interrupted");
        let second = orch
            .run(&id, &scripted(), RunControl::default())
            .await
            .unwrap();
        assert_eq!(second, RunOutcome::Finished);
        let (bb, _) = orch.store().load(&id).await.unwrap();
        assert_eq!(
            canonical(&bb),
            canonical(&expected),
            "stop after {stop_after}"
        );
    }
}

/// A debate run one step at a time (as a worker's jobs run it) hands
/// each slice over as `queued`, never `interrupted` (a page following it
/// would take that for its end), and ends as the uninterrupted run does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_in_slices_hands_over_as_queued_and_matches_an_uninterrupted_run() {
    let orch = agon_app::orchestrator_for(sqlite().await);
    let reference = orch.create(&small_config()).await.unwrap();
    orch.run(&reference, &scripted(), RunControl::default())
        .await
        .unwrap();
    let (expected, _) = orch.store().load(&reference).await.unwrap();

    let id = orch.create(&small_config()).await.unwrap();
    let mut slices = 0;
    loop {
        let outcome = orch
            .run(&id, &scripted(), RunControl::with_step_limit(1))
            .await
            .unwrap();
        slices += 1;
        let status = orch.store().debate(&id).await.unwrap().status;
        if outcome == RunOutcome::Finished {
            assert_eq!(status.as_str(), "finished");
            break;
        }
        assert_eq!(outcome, RunOutcome::SliceDone, "slice {slices}");
        assert_eq!(status.as_str(), "queued", "slice {slices}");
        assert!(slices < 200, "the slices never end");
    }
    assert!(slices > 5, "one step a slice: {slices} slices");
    let (bb, _) = orch.store().load(&id).await.unwrap();
    assert_eq!(canonical(&bb), canonical(&expected));
}

/// A model that answers utterances with whitespace for one persona and
/// malformed JSON for every structured call.
struct Broken(ScriptedModel);

#[async_trait::async_trait]
impl ChatModel for Broken {
    fn provider(&self) -> &str {
        "broken"
    }
    fn model_id(&self) -> &str {
        "broken"
    }
    async fn complete(
        &self,
        r: agon_llm::ChatRequest,
    ) -> Result<agon_llm::ChatResponse, agon_llm::ProviderError> {
        self.0.complete(r).await
    }
    async fn complete_json(
        &self,
        _r: agon_llm::ChatRequest,
        s: &agon_llm::JsonSchema,
    ) -> Result<agon_llm::JsonResponse, agon_llm::ProviderError> {
        Err(agon_llm::ProviderError::InvalidRequest {
            reason: format!("no valid JSON for {}", s.name),
        })
    }
    async fn stream(
        &self,
        r: agon_llm::ChatRequest,
    ) -> Result<agon_llm::ChatStream, agon_llm::ProviderError> {
        // Priya's turns: her instruction names her.
        if r.messages
            .last()
            .is_some_and(|m| m.content.contains("You are Priya.\nWhat you stand for"))
        {
            let chunk = agon_llm::ChatChunk {
                delta: "   ".into(),
                usage: None,
                finish_reason: Some("stop".into()),
                model: None,
                timing: None,
            };
            return Ok(Box::pin(futures::stream::iter(vec![Ok(chunk)])));
        }
        self.0.stream(r).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_optional_steps_and_empty_utterances_degrade_without_losing_messages() {
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&small_config()).await.unwrap();
    let models = Models::uniform(
        Arc::new(Broken(ScriptedModel::default())),
        PriceTable::default(),
    );
    assert_eq!(
        orch.run(&id, &models, RunControl::default()).await.unwrap(),
        RunOutcome::Finished
    );
    let (bb, _) = orch.store().load(&id).await.unwrap();
    // Priya's turns are skipped (after one retry) and recorded; others spoke.
    assert!(bb.messages().iter().all(|m| m.persona.as_str() != "priya"));
    let skipped = bb
        .warnings()
        .iter()
        .filter(|w| w.step.name() == "utterance")
        .count();
    assert_eq!(skipped, 1 + 2 * 2 + 1, "opening, 4 takes, closing");
    // Every analysis failed → a warning per message, and the message is still marked analysed.
    let spoken = bb
        .messages()
        .iter()
        .filter(|m| m.kind != MessageKind::Synthesis);
    assert!(spoken.clone().all(|m| bb.is_analyzed(&m.id)));
    let failed = bb
        .warnings()
        .iter()
        .filter(|w| matches!(w.step.name(), "turn_analysis" | "position_extraction"))
        .count();
    assert_eq!(failed, spoken.count());
    assert!(
        bb.warnings()
            .iter()
            .any(|w| w.step.name() == "round_record")
    );
    assert!(bb.claims().is_empty(), "no judgement, no claim");
    assert!(report::markdown(&bb).contains("## Warnings"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aspects_are_decomposed_by_the_judge_when_not_configured() {
    let orch = agon_app::orchestrator_for(sqlite().await);
    let mut config = small_config();
    config.aspects.clear();
    config.aspect_count = 2;
    config.minirounds = 1;
    config.crux.enabled = false;
    config.synthesis = false;
    let id = orch.create(&config).await.unwrap();
    orch.run(&id, &scripted(), RunControl::default())
        .await
        .unwrap();
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let labels: Vec<_> = bb.aspects().iter().map(|a| a.label.as_str()).collect();
    assert_eq!(labels, ["Costs", "Benefits"]);
    assert!(bb.persona(&"judge".into()).is_none());
}

/// A short debate without configured personas on `topic`.
fn uncast(topic: &str) -> agon_config::DebateConfig {
    let mut config = small_config();
    config.topic = topic.into();
    config.personas.clear();
    config.minirounds = 1;
    config.crux.enabled = false;
    config.synthesis = false;
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn personas_are_cast_for_the_topic_when_none_are_configured() {
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&uncast("Should we tax sugar?")).await.unwrap();
    orch.run(&id, &scripted(), RunControl::default())
        .await
        .unwrap();
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let cast: Vec<(&str, &str)> = bb
        .debaters()
        .map(|p| (p.name.as_str(), p.contract.as_str()))
        .collect();
    assert_eq!(cast.len(), 3, "{cast:?}");
    assert_eq!(cast[0].0, "Lena");
    assert!(
        cast.iter().all(|(_, c)| c.contains("Should we tax sugar?")),
        "every stance is about the topic: {cast:?}"
    );
    assert!(bb.warnings().is_empty(), "{:?}", bb.warnings());
    // The cast debated: an opening and a closing each.
    for p in bb.debaters() {
        let spoke = bb.messages().iter().filter(|m| m.persona == p.id).count();
        assert!(spoke >= 2, "{} spoke {spoke} times", p.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_cast_falls_back_to_topic_neutral_personas_with_a_warning() {
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&uncast("Should we tax sugar?")).await.unwrap();
    let models = Models::uniform(
        Arc::new(Broken(ScriptedModel::default())),
        PriceTable::default(),
    );
    orch.run(&id, &models, RunControl::default()).await.unwrap();
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let names: Vec<&str> = bb.debaters().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["Advocate", "Skeptic", "Pragmatist"]);
    let warning = bb
        .warnings()
        .iter()
        .find(|w| w.step.name() == "persona_cast")
        .expect("the failed cast is recorded");
    assert!(
        warning.reason.contains("topic-neutral"),
        "{}",
        warning.reason
    );
    assert!(!bb.messages().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_runner_cannot_take_a_running_debate() {
    let store = sqlite().await;
    let orch = agon_app::orchestrator_for(Arc::clone(&store));
    let id = orch.create(&small_config()).await.unwrap();
    store
        .acquire_lease(&id, "elsewhere:1", Duration::from_secs(60))
        .await
        .unwrap();
    let err = orch
        .run(&id, &scripted(), RunControl::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("elsewhere:1"), "{err}");
}

/// A wiremock responder speaking the OpenAI protocol with the scripted model.
struct OpenAiStub;

impl wiremock::Respond for OpenAiStub {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        let (content_type, text) = openai_reply(&body);
        wiremock::ResponseTemplate::new(200).set_body_raw(text, content_type)
    }
}

/// Runs the small debate against a local OpenAI-compatible server answering
/// with `responder`, the model named `model`: the finished blackboard and
/// the server (for the requests it saw).
async fn run_on_server(
    responder: impl wiremock::Respond + 'static,
    model: &str,
) -> (agon_core::Blackboard, wiremock::MockServer) {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v1/chat/completions"))
        .respond_with(responder)
        .mount(&server)
        .await;
    let mut config = small_config();
    config.models.default = format!("openai-compatible:{model}@{}/v1", server.uri());
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&config).await.unwrap();
    let models = agon_app::models_from_config(
        &config,
        &ModelFactory::new(),
        &|_| None,
        PriceTable::with_defaults(),
    )
    .unwrap();
    assert_eq!(
        orch.run(&id, &models, RunControl::default()).await.unwrap(),
        RunOutcome::Finished
    );
    (orch.store().load(&id).await.unwrap().0, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debate_runs_through_a_local_openai_compatible_server() {
    let (bb, server) = run_on_server(OpenAiStub, "stub").await;
    assert!(bb.warnings().is_empty(), "{:?}", bb.warnings());
    assert_eq!(bb.crux_cards().len(), 1);
    let usage = bb.usage();
    assert!(usage["debater"]["stub"].calls >= 20 && usage["extractor"]["stub"].input_tokens > 0);
    // Every debater message is analysed, in fewer calls than messages
    // (one per group of turns).
    let debater_messages = bb
        .messages()
        .iter()
        .filter(|m| m.kind != agon_core::MessageKind::Synthesis)
        .count();
    assert_eq!(bb.analyzed_turns().len(), debater_messages);
    let requests = server.received_requests().await.unwrap();
    let analyses = requests
        .iter()
        .filter(|r| String::from_utf8_lossy(&r.body).contains("batch_turn_analysis"))
        .count();
    assert!(analyses > 0 && analyses < debater_messages, "{analyses}");
    assert!(requests.len() > bb.messages().len());
}

/// A wiremock responder speaking the OpenAI protocol with the scripted
/// model that, like OpenAI's automatic prompt caching, reports the prompt
/// tokens a request shares with an earlier one as cached
/// (`prompt_tokens_details.cached_tokens`, in steps of 128 tokens at ~4
/// characters a token; the stub caches prefixes from 128 tokens on, where
/// OpenAI needs 1,024, so that a short test debate shows some).
#[derive(Default)]
struct CachingOpenAiStub {
    seen: std::sync::Mutex<Vec<String>>,
}

impl wiremock::Respond for CachingOpenAiStub {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        let (content_type, text) = openai_reply(&body);
        let (system, user) = agon_testkit::prompt_parts(&body);
        let prompt = format!("{system}{user}");
        let mut seen = self.seen.lock().unwrap();
        let shared = seen
            .iter()
            .map(|earlier| {
                earlier
                    .bytes()
                    .zip(prompt.bytes())
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
            .unwrap_or(0);
        seen.push(prompt.clone());
        let prompt_tokens = prompt.len() / 4;
        let cached = ((shared / 4) / 128 * 128).min(prompt_tokens);
        let text = text.replacen(
            "\"usage\":{",
            &format!("\"usage\":{{\"prompt_tokens_details\":{{\"cached_tokens\":{cached}}},"),
            1,
        );
        wiremock::ResponseTemplate::new(200).set_body_raw(text, content_type)
    }
}

/// Issue 35: the cached prompt tokens a provider reports are recorded per
/// role and model, priced at the model's cache rate, and shown in the
/// report with the share of the input they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_prompt_tokens_are_priced_in_the_report() {
    // gpt-4o-mini's list price: $0.15 input, $0.075 cached, $0.60 output.
    let (bb, _) = run_on_server(CachingOpenAiStub::default(), "gpt-4o-mini").await;
    let total = bb.usage_total();
    assert!(
        total.cached_input_tokens > 0 && total.cached_input_tokens < total.input_tokens,
        "{total:?}"
    );
    let expected = ((total.input_tokens - total.cached_input_tokens) as f64 * 0.15
        + total.cached_input_tokens as f64 * 0.075
        + total.output_tokens as f64 * 0.60)
        / 1e6;
    let cost = total.cost_micro_usd as f64 / 1e6;
    // Each role's cost is rounded to a millionth of a dollar.
    assert!((cost - expected).abs() < 1e-5, "{cost} vs {expected}");
    let uncached = (total.input_tokens as f64 * 0.15 + total.output_tokens as f64 * 0.60) / 1e6;
    assert!(cost < uncached, "caching saves: {cost} < {uncached}");
    let md = report::markdown(&bb);
    assert!(
        md.contains("| Role | Model | Calls | Input tokens | Output tokens | Cached input | Cache writes | Cost |"),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "| **total** | | {} | {} | {} | {} | 0 | ${:.4} |",
            total.calls, total.input_tokens, total.output_tokens, total.cached_input_tokens, cost
        )),
        "{md}"
    );
    // What the cache saved: the cached tokens at the input rate less the
    // cache rate (gpt-4o-mini writes nothing).
    let saved = total.cached_input_tokens as f64 * (0.15 - 0.075) / 1e6;
    assert!(
        (total.cache_saving_micro_usd() as f64 / 1e6 - saved).abs() < 1e-5,
        "{total:?}"
    );
    assert!(
        md.contains(&format!(
            "; the cache saved ${:.4} against the same input uncached",
            total.cache_saving_micro_usd() as f64 / 1e6
        )),
        "{md}"
    );
    assert!(
        md.contains("% of the input was read from a prompt cache"),
        "{md}"
    );
}

/// The scripted 3-persona debate (crux rooms, a convergence check, a promoted
/// claim, synthesis) writes the same event log as the one recorded in
/// `tests/fixtures/structured_log.json` (set `AGON_UPDATE_FIXTURES=1` to
/// rewrite it). Both streams of the log (main line and background) must
/// match event for event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_log_matches_the_recorded_fixture() {
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&support::fixture_config()).await.unwrap();
    orch.run(&id, &scripted(), RunControl::default())
        .await
        .unwrap();
    let events: Vec<DebateEvent> = orch
        .store()
        .events_after(&id, 0)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event)
        .collect();
    let (main, background) = support::log_streams(&events);
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/structured_log.json");
    if std::env::var_os("AGON_UPDATE_FIXTURES").is_some() {
        let text = serde_json::to_string_pretty(&serde_json::json!({
            "main": main, "background": background
        }))
        .unwrap();
        std::fs::write(&path, text + "\n").unwrap();
    }
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let expected_main = fixture["main"].as_array().unwrap();
    let expected_background = fixture["background"].as_array().unwrap();
    assert_eq!(main.len(), expected_main.len(), "main-line events");
    for (i, (got, want)) in main.iter().zip(expected_main).enumerate() {
        assert_eq!(got, want, "main-line event {i}");
    }
    assert_eq!(
        background.len(),
        expected_background.len(),
        "background events"
    );
    for (i, (got, want)) in background.iter().zip(expected_background).enumerate() {
        assert_eq!(got, want, "background event {i}");
    }
}

/// The markdown report of the workspace's fixture debate
/// (`tests/fixtures/debate.json`: 3 personas × 3 aspects, claims, a crux
/// room and card, round records, reflections).
#[test]
fn the_markdown_report_of_the_fixture_debate() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/debate.json"
    );
    let events: Vec<DebateEvent> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let bb = agon_core::Blackboard::replay(&events).unwrap();
    insta::assert_snapshot!(report::markdown(&bb));
}

/// The run lease is renewed on a timer, not only between turns: with a
/// 2 s lease and model calls of 2.5 s (each call outlives the lease),
/// another process can never take the debate while it runs, and can once
/// it is over. (The margin is for loaded CI machines: renewed every third
/// of its TTL, the lease lapses only when the renewals stall for more than
/// 1.33 s. CI runs beside the local-model tests saw stalls of 530 ms with
/// a 700 ms lease, and over 870 ms with a 1.2 s one. A CI run of 83fe074
/// saw the lease lapse 2.04 s into the run: renewals then started only
/// after the run's setup; they now start when the lease is taken.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_is_renewed_on_a_timer_while_the_run_lasts() {
    let store = sqlite().await;
    let orch =
        agon_app::orchestrator_for(Arc::clone(&store)).with_lease_ttl(Duration::from_millis(2_000));
    let mut config = small_config();
    config.personas.truncate(2);
    config.minirounds = 1;
    config.aspects.truncate(1);
    config.crux.enabled = false;
    config.synthesis = false;
    let id = orch.create(&config).await.unwrap();
    let models = Models::uniform(
        Arc::new(ScriptedModel::new(Duration::from_millis(2_500))),
        PriceTable::default(),
    );
    let run = {
        let id = id.clone();
        tokio::spawn(async move { orch.run(&id, &models, RunControl::default()).await })
    };
    let started = std::time::Instant::now();
    let mut attempts = 0;
    while !run.is_finished() {
        tokio::time::sleep(Duration::from_millis(250)).await;
        if run.is_finished() {
            break;
        }
        attempts += 1;
        let taken = store
            .acquire_lease(&id, "elsewhere:1", Duration::from_secs(5))
            .await;
        if let Ok(ours) = taken {
            // The run sets its final status, then releases its lease, then
            // its task ends: a check that lands between the release and the
            // task's end takes a lease the run gave up, not one that lapsed.
            let status = store.debate(&id).await.unwrap().status;
            assert_ne!(
                status,
                agon_store::RunStatus::Running,
                "the lease lapsed {:?} into the run",
                started.elapsed()
            );
            store.release_lease(&ours).await.unwrap();
            break;
        }
    }
    assert!(
        attempts >= 4,
        "the run was too short to test renewal ({attempts} checks)"
    );
    assert_eq!(run.await.unwrap().unwrap(), RunOutcome::Finished);
    store
        .acquire_lease(&id, "elsewhere:1", Duration::from_secs(5))
        .await
        .expect("released at the end");
}

/// A protocol of its own, run by the same interpreter: every debater opens
/// at once (one parallel group), then the debate finishes.
struct RoundTable {
    start: agon_protocol::Start,
}

impl agon_protocol::Protocol for RoundTable {
    fn plan(&self, board: &agon_core::Blackboard) -> agon_protocol::Plan {
        use agon_protocol::{Next, Speak, Step, Voice};
        let next = if board.topic().is_none() {
            Next::step(Step::start(self.start.clone()))
        } else if board.status() == agon_core::DebateStatus::Finished {
            Next::Finished
        } else if board.messages().is_empty() {
            Next::step(Step::Parallel {
                turns: board
                    .debaters()
                    .map(|p| Speak {
                        key: agon_core::TurnKey::Opening {
                            persona: p.id.clone(),
                        },
                        persona: p.id.clone(),
                        kind: MessageKind::Opening,
                        phase: Some(agon_context::Phase::Opening),
                        instruction: agon_context::prompts::Utterance::Opening,
                        aspect: None,
                        miniround: None,
                        room: None,
                        voice: Voice::Debater,
                    })
                    .collect(),
                deadline: None,
            })
        } else {
            Next::step(Step::Finish(agon_protocol::Finish::default()))
        };
        agon_protocol::Plan {
            background: Vec::new(),
            next,
            progress: agon_protocol::Progress::default(),
        }
    }
}

/// Counts how many utterances are being generated at once.
struct Overlap {
    inner: ScriptedModel,
    now: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
}

#[async_trait::async_trait]
impl ChatModel for Overlap {
    fn provider(&self) -> &str {
        "overlap"
    }
    fn model_id(&self) -> &str {
        "overlap"
    }
    async fn complete(
        &self,
        r: agon_llm::ChatRequest,
    ) -> Result<agon_llm::ChatResponse, agon_llm::ProviderError> {
        self.inner.complete(r).await
    }
    async fn complete_json(
        &self,
        r: agon_llm::ChatRequest,
        s: &agon_llm::JsonSchema,
    ) -> Result<agon_llm::JsonResponse, agon_llm::ProviderError> {
        self.inner.complete_json(r, s).await
    }
    async fn stream(
        &self,
        r: agon_llm::ChatRequest,
    ) -> Result<agon_llm::ChatStream, agon_llm::ProviderError> {
        use std::sync::atomic::Ordering;
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        let stream = self.inner.stream(r).await; // the scripted delay is here
        self.now.fetch_sub(1, Ordering::SeqCst);
        stream
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_protocol_runs_on_the_interpreter_and_parallel_turns_overlap() {
    let orch = agon_app::orchestrator_for(sqlite().await);
    let mut config = small_config();
    config.synthesis = false;
    let id = orch.create(&config).await.unwrap();
    let model = Arc::new(Overlap {
        inner: ScriptedModel::new(Duration::from_millis(100)),
        now: Default::default(),
        most: Default::default(),
    });
    let models = Models::uniform(
        Arc::clone(&model) as Arc<dyn ChatModel>,
        PriceTable::default(),
    );
    let protocol = Arc::new(RoundTable {
        start: config.rules().start,
    });
    let outcome = orch
        .run_protocol(&id, protocol, &models, RunControl::default())
        .await
        .unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let speakers: Vec<&str> = bb.messages().iter().map(|m| m.persona.as_str()).collect();
    assert_eq!(
        speakers,
        ["mara", "theo", "priya"],
        "appended in the listed order"
    );
    let ids: Vec<&str> = bb.messages().iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["msg-1", "msg-2", "msg-3"]);
    assert_eq!(
        model.most.load(std::sync::atomic::Ordering::SeqCst),
        3,
        "the three openings were generated at once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_posted_before_the_start_is_recorded_once_the_debate_starts() {
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&small_config()).await.unwrap();
    let control = RunControl::default();
    let note = agon_orchestrator::RunRequest::Note {
        text: "Early: keep it short.".into(),
        author: None,
    };
    orch.store()
        .post_request(&id, &note.to_json())
        .await
        .unwrap();
    // A resume of a debate that is not paused records nothing.
    let resume = agon_orchestrator::RunRequest::Resume { by: None };
    orch.store()
        .post_request(&id, &resume.to_json())
        .await
        .unwrap();
    let outcome = orch.run(&id, &scripted(), control).await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let events = orch.log(&id).await.unwrap();
    assert_eq!(events[1].name(), "note_added", "right after the start");
    assert!(!events.iter().any(|e| e.name() == "debate_resumed"));
    let (bb, _) = orch.store().load(&id).await.unwrap();
    assert_eq!(bb.notes()[0].after_messages, 0);
}

/// Ids are the second and 16 random bits: many debates created in one
/// second may draw the same, and a taken id is drawn again.
#[tokio::test]
async fn a_debate_id_drawn_twice_is_drawn_again() {
    let orch = agon_app::orchestrator_for(support::sqlite().await);
    let config = support::small_config();
    fastrand::seed(7);
    let first = orch.create(&config).await.unwrap();
    fastrand::seed(7);
    let second = orch.create(&config).await.unwrap();
    assert_ne!(first, second);
    for id in [&first, &second] {
        assert_eq!(orch.store().debate(id).await.unwrap().topic, config.topic);
    }
}

/// Tools in a structured debate: a persona with `file_read` reads the file
/// its topic names in each of its turns and cites it; the others call none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persona_with_tools_reads_the_context_dir_in_a_structured_debate() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("parking.md"),
        "Central parking revenue: 4.2 million euros a year.\n",
    )
    .unwrap();
    let mut config = small_config();
    config.topic = "Should cities ban private cars from their centres? See parking.md.".into();
    config.context_dir = Some(dir.path().to_owned());
    config.personas[0].tools = vec!["file_read".into()];
    config.validate_tools("test").unwrap();
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&config).await.unwrap();
    let outcome = orch
        .run(&id, &scripted(), RunControl::default())
        .await
        .unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let mara = agon_core::PersonaId::new("mara");
    let turns = bb.messages().iter().filter(|m| m.persona == mara).count();
    assert_eq!(bb.tool_calls().len(), turns, "one read per turn of Mara's");
    assert!(bb.tool_calls().iter().all(|c| c.persona == mara && c.ok));
    assert!(
        bb.messages().iter().filter(|m| m.persona == mara).all(|m| m
            .content
            .contains("As parking.md says: \"Central parking revenue")),
        "Mara cites the file"
    );
    // Without a context directory the file tools are refused up front.
    let mut bare = small_config();
    bare.personas[0].tools = vec!["file_read".into()];
    let err = bare.validate_tools("x.toml").unwrap_err().to_string();
    assert!(
        err.contains("personas[0].tools[0]") && err.contains("context directory"),
        "{err}"
    );
    bare.personas[0].tools = vec!["shell".into()];
    let err = bare.validate_tools("x.toml").unwrap_err().to_string();
    assert!(err.contains("`shell` is not a tool Agon has"), "{err}");
}

/// docs/crates/context.md, "Rendering order": every debater's turn has the
/// same system prompt; a take's prompt opens with what the miniround's
/// speakers read alike (the state, earlier rounds, the exchange), marks
/// where that part ends, and says who speaks after it. The second speaker
/// of a miniround starts with everything the first one's shared part says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debaters_turns_share_their_start_and_say_who_speaks_last() {
    use agon_llm::ChatRequest;
    let (models, kept) = support::scripted_keeping_streams();
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&small_config()).await.unwrap();
    orch.run(&id, &models, RunControl::default()).await.unwrap();
    let requests = kept.lock().unwrap().clone();
    let debaters: Vec<&ChatRequest> = requests
        .iter()
        .filter(|r| r.messages[0].content.contains("\nWhat you stand for: "))
        .collect();
    // Openings, takes, crux turns and closings: all but the synthesis.
    assert_eq!(debaters.len(), requests.len() - 1);
    let systems: std::collections::BTreeSet<_> = debaters.iter().map(|r| &r.system).collect();
    assert_eq!(systems.len(), 1, "{systems:?}");
    let takes: Vec<&ChatRequest> = debaters
        .iter()
        .copied()
        .filter(|r| r.purpose.as_deref().unwrap_or_default().contains("take"))
        .collect();
    assert_eq!(takes.len(), 2 * 2 * 3);
    for take in &takes {
        let user = &take.messages[0].content;
        let at = take.shared_prefix.expect("a take marks its shared start");
        assert!(!user[..at].contains("You are"), "{}", &user[..at]);
        assert!(user[at..].contains("You are"), "{}", &user[at..]);
        assert!(!user.contains("(you)"), "{user}");
    }
    // A miniround's first and second speakers (takes come in threes): the
    // second reads the first one's shared part, then the first one's words.
    for three in takes.chunks(3) {
        let first = &three[0].messages[0].content[..three[0].shared_prefix.unwrap()];
        let second = &three[1].messages[0].content;
        assert!(second.starts_with(first), "{first}\n-----\n{second}");
    }
}
