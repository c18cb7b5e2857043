//! The trust memory in the store: overrides of real (scripted) debates,
//! regret with a fake clock, concurrent updates, import and export — on
//! SQLite and PostgreSQL.

use std::sync::Arc;
use std::time::Duration as StdDuration;

use agon_app::trust::{TrustStore, TrustStoreError, final_round_id};
use agon_core::DebateId;
use agon_llm::PriceTable;
use agon_orchestrator::{Models, RunControl};
use agon_store::EventStore;
use agon_testkit::ScriptedModel;
use agon_trust::{AgentMemory, Dissent, EventContext};
use chrono::{DateTime, Duration, TimeZone, Utc};

use crate::support::{postgres, small_config, sqlite};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 5, 1, 9, 0, 0).unwrap()
}

/// A finished scripted debate (with its synthesis) in `store`.
async fn finished_debate(store: &Arc<dyn EventStore>) -> DebateId {
    let orch = agon_app::orchestrator_for(Arc::clone(store));
    let mut config = small_config();
    config.minirounds = 1;
    config.aspects.truncate(1);
    config.crux.enabled = false;
    let id = orch.create(&config).await.unwrap();
    let models = Models::uniform(
        Arc::new(ScriptedModel::new(StdDuration::ZERO)),
        PriceTable::default(),
    );
    orch.run(&id, &models, RunControl::default()).await.unwrap();
    id
}

async fn overrides_and_regret(store: Arc<dyn EventStore>) {
    let id = finished_debate(&store).await;
    let (bb, _) = store.load(&id).await.unwrap();
    let trust = TrustStore::new(Arc::clone(&store));

    // Without --agent every debater's memory records the override.
    let changed = trust
        .record_override(&id, &bb, "Ban cars on weekends only.", None, t0())
        .await
        .unwrap();
    assert_eq!(changed, ["Mara", "Theo", "Priya"]);
    let mara = trust.require("Mara").await.unwrap();
    let o = &mara.override_history[0];
    assert_eq!(o.round_id, final_round_id(&id));
    assert!(
        o.agent_output.contains("speaks"),
        "the synthesis: {}",
        o.agent_output
    );
    assert_eq!(o.human_decision, "Ban cars on weekends only.");
    assert_eq!(o.auto_check_deadline, t0() + Duration::hours(24));
    assert_eq!(o.context.artifact_type.as_deref(), Some("synthesis"));

    // A later override by Theo alone: Theo's earlier one is reverted at
    // once; its agent output is the decision it replaces.
    let later = t0() + Duration::hours(2);
    trust
        .record_override(&id, &bb, "Ban cars on Sundays.", Some("theo"), later)
        .await
        .unwrap();
    let theo = trust.require("Theo").await.unwrap();
    assert_eq!(theo.override_history.len(), 2);
    assert!(theo.override_history[0].regret);
    assert_eq!(
        theo.override_history[0].reverted_by.as_deref(),
        Some("human")
    );
    assert_eq!(
        theo.override_history[1].agent_output,
        "Ban cars on weekends only."
    );

    // Before the deadline nothing is inferred for Mara and Priya.
    assert_eq!(trust.check(t0() + Duration::hours(23)).await.unwrap(), 0);
    // After it, their decision is no longer the output: regretted.
    let before = trust.require("Mara").await.unwrap().trust_score;
    assert_eq!(trust.check(t0() + Duration::hours(25)).await.unwrap(), 2);
    let mara = trust.require("Mara").await.unwrap();
    assert!(mara.override_history[0].regret);
    assert_eq!(
        mara.override_history[0].reverted_by.as_deref(),
        Some("system")
    );
    assert!(mara.trust_score < before);
    // Theo's latest override is the output: not regretted, ever.
    assert_eq!(trust.check(t0() + Duration::hours(50)).await.unwrap(), 0);
    assert!(!trust.require("Theo").await.unwrap().override_history[1].regret);

    // Bad input: an agent who was not there, an empty decision.
    let err = trust
        .record_override(&id, &bb, "x", Some("Zed"), later)
        .await
        .unwrap_err();
    assert!(
        matches!(err, TrustStoreError::NotAParticipant { .. }) && err.to_string().contains("Mara"),
        "{err}"
    );
    assert!(matches!(
        trust.record_override(&id, &bb, "  ", None, later).await,
        Err(TrustStoreError::EmptyDecision { .. })
    ));
    let err = trust.require("Nobody").await.unwrap_err().to_string();
    assert!(err.contains("Nobody") && err.contains("Priya"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overrides_revert_and_regret_on_sqlite() {
    overrides_and_regret(sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overrides_revert_and_regret_on_postgres() {
    overrides_and_regret(postgres().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debate_without_a_final_output_cannot_be_overridden() {
    let store = sqlite().await;
    let orch = agon_app::orchestrator_for(Arc::clone(&store));
    let id = orch.create(&small_config()).await.unwrap();
    let (bb, _) = store.load(&id).await.unwrap();
    let err = TrustStore::new(store)
        .record_override(&id, &bb, "x", None, t0())
        .await
        .unwrap_err();
    assert!(
        matches!(err, TrustStoreError::NoFinalOutput { .. }),
        "{err}"
    );
    assert!(err.to_string().contains(id.as_str()), "{err}");
}

async fn concurrent(store: Arc<dyn EventStore>) {
    // Two debates finishing at once log dissents for the same agent.
    let trust = TrustStore::new(store);
    let mut tasks = Vec::new();
    for debate in 0..2 {
        let trust = trust.clone();
        tasks.push(tokio::spawn(async move {
            for round in 0..15 {
                trust
                    .update("Mara", "m", t0(), &|m| {
                        m.log_dissent(
                            Dissent {
                                round_id: format!("d-{debate}/round_{round}"),
                                timestamp: t0(),
                                context: EventContext::default(),
                                dissent_text: "No.".into(),
                                rubric_citations: vec![],
                                impact: debate == 0,
                                depth_score: 0.5,
                                feedback_incorporated: false,
                                embedding: None,
                            },
                            t0(),
                        );
                    })
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let m = trust.require("Mara").await.unwrap();
    assert_eq!(m.dissent_history.len(), 30, "no update lost");
    assert_eq!(m.trust_parts(t0()).impact_ratio, Some(0.5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_updates_lose_nothing_on_sqlite() {
    concurrent(sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_updates_lose_nothing_on_postgres() {
    concurrent(postgres().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_then_import_round_trips_and_bad_files_write_nothing() {
    let store = sqlite().await;
    let trust = TrustStore::new(Arc::clone(&store));
    let mut m = AgentMemory::new("Lena", "gpt-4o-mini", t0());
    m.participated(7);
    m.log_override("d-1/final", EventContext::default(), "a", "b", t0());
    let text = serde_json::to_string_pretty(&m).unwrap();
    let imported = trust.import("Lena.json", &text, t0()).await.unwrap();
    assert_eq!(imported, m);
    let exported = serde_json::to_string_pretty(&trust.require("Lena").await.unwrap()).unwrap();
    assert_eq!(exported, text);

    // A file that does not fit names the field; nothing is written.
    let err = trust
        .import(
            "bad.json",
            r#"{"agent_name": "Kai", "trust_score": "high"}"#,
            t0(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad.json") && err.contains("invalid type"),
        "{err}"
    );
    // A time in the future is refused; nothing is written.
    let mut future = AgentMemory::new("Kai", "m", t0() + Duration::days(2));
    future.participated(1);
    let err = trust
        .import("kai.json", &serde_json::to_string(&future).unwrap(), t0())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("in the future") && err.contains("Kai"),
        "{err}"
    );
    assert!(trust.get("Kai").await.unwrap().is_none());
    assert_eq!(trust.all().await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_debate_is_recorded_in_its_agents_memory_once() {
    let store = sqlite().await;
    let orch = agon_app::orchestrator_for(Arc::clone(&store));
    // Crux rooms on: the parties' entry positions are dissents.
    let id = orch.create(&small_config()).await.unwrap();
    let models = Models::uniform(
        Arc::new(ScriptedModel::new(StdDuration::ZERO)),
        PriceTable::default(),
    );
    orch.run(&id, &models, RunControl::default()).await.unwrap();
    let (bb, _) = store.load(&id).await.unwrap();
    assert!(bb.warnings().is_empty(), "{:?}", bb.warnings());
    let trust = TrustStore::new(Arc::clone(&store));
    let all = trust.all().await.unwrap();
    let names: Vec<&str> = all.iter().map(|m| m.agent_name.as_str()).collect();
    assert_eq!(names, ["Mara", "Priya", "Theo"]);
    let room_parties: Vec<String> = bb
        .messages()
        .iter()
        .filter(|m| m.kind == agon_core::MessageKind::CruxPosition)
        .map(|m| bb.persona_name(&m.persona).to_owned())
        .collect();
    assert!(!room_parties.is_empty());
    for m in &all {
        assert_eq!(m.debates, [id.to_string()]);
        // Openings (round 0), two aspects, the closings' round.
        assert!(
            m.rounds_participated >= 3,
            "{}: {}",
            m.agent_name,
            m.rounds_participated
        );
        let entered = room_parties.contains(&m.agent_name);
        assert_eq!(!m.dissent_history.is_empty(), entered, "{}", m.agent_name);
        assert!((0.0..=1.0).contains(&m.trust_score));
    }
    // Recording it again (a resume after a crash at the end) changes nothing.
    let before = trust.all().await.unwrap();
    trust.record_debate(&id, &bb, t0()).await.unwrap();
    assert_eq!(trust.all().await.unwrap(), before);
}

/// Seed 003's scenario over three debates: everyone starts new (on
/// probation: the draw falls back to all); then one agent's record turns
/// bad (shallow dissents without impact, regretted overrides) and the
/// others' good, and from then on the low-trust agent is never the devil's
/// advocate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_low_trust_agent_stops_being_chosen_as_devils_advocate() {
    use agon_core::DebateEvent;
    let store = sqlite().await;
    let orch = agon_app::orchestrator_for(Arc::clone(&store));
    let trust = TrustStore::new(Arc::clone(&store));
    let mut config = crate::dialectic::dialectic_config(2);
    config.dialectic.devil_advocate = true;
    let models = Models::uniform(
        Arc::new(ScriptedModel::new(StdDuration::ZERO)),
        PriceTable::default(),
    );
    let draws = |events: &[DebateEvent]| -> Vec<(String, bool)> {
        events
            .iter()
            .filter_map(|e| match e {
                DebateEvent::DevilsAdvocateChosen {
                    persona, fallback, ..
                } => Some((persona.to_string(), *fallback)),
                _ => None,
            })
            .collect()
    };
    let debate = async || {
        let id = orch.create(&config).await.unwrap();
        orch.run(&id, &models, RunControl::default()).await.unwrap();
        let events = store.events_after(&id, 0).await.unwrap();
        let events: Vec<DebateEvent> = events.into_iter().map(|e| e.event).collect();
        let (bb, _) = store.load(&id).await.unwrap();
        (bb, draws(&events))
    };
    let (first, drawn) = debate().await;
    assert_eq!(drawn.len(), 2, "one draw per round");
    assert!(
        drawn.iter().all(|(_, fallback)| *fallback),
        "all new: {drawn:?}"
    );
    let agents: Vec<(String, String)> = first
        .debaters()
        .map(|p| (p.id.to_string(), p.name.clone()))
        .collect();
    let (low_id, low) = agents[0].clone();
    let now = Utc::now();
    for (_, name) in &agents {
        let bad = *name == low;
        trust
            .update(name, "m", now, &|m| {
                m.participated(5);
                for i in 0..30 {
                    m.log_dissent(
                        Dissent {
                            round_id: format!("past/round_{i}"),
                            timestamp: now,
                            context: EventContext::default(),
                            dissent_text: "No.".into(),
                            rubric_citations: vec![],
                            impact: !bad,
                            depth_score: if bad { 0.0 } else { 2.0 },
                            feedback_incorporated: !bad,
                            embedding: None,
                        },
                        now,
                    );
                }
                if bad {
                    for i in 0..5 {
                        m.log_override(
                            format!("past-{i}/final"),
                            EventContext::default(),
                            "a",
                            "b",
                            now,
                        );
                        let last = m.override_history.len() - 1;
                        m.override_history[last].regret = true;
                    }
                    m.rescore(now, "regretted overrides");
                }
            })
            .await
            .unwrap();
    }
    let score = trust.require(&low).await.unwrap().trust_score;
    assert!(score <= 0.2, "{score}");
    for _ in 0..2 {
        let (bb, drawn) = debate().await;
        assert_eq!(drawn.len(), 2);
        let md = agon_view::report::markdown(&bb);
        assert!(md.contains("## Devil's advocates\n\n- Round 1: "), "{md}");
        // Each devil's advocate's critiques of its round are the dissents
        // it logged, listed under it.
        let section = &md[md.find("## Devil's advocates").unwrap()..];
        let round1 = section.lines().nth(2).unwrap();
        let critiques = bb
            .messages()
            .iter()
            .filter(|m| {
                m.round == 1
                    && Some(&m.persona) == bb.devils_advocate(1)
                    && matches!(m.kind, agon_core::MessageKind::Critique { .. })
            })
            .count();
        assert!(critiques > 0);
        assert!(
            round1.contains(&format!("{critiques} dissent(s) logged")),
            "{section}"
        );
        assert!(
            section.lines().nth(3).unwrap().starts_with("  - "),
            "{section}"
        );
        for (chosen, fallback) in &drawn {
            assert!(!fallback, "{drawn:?}");
            assert_ne!(chosen, &low_id, "{low} has low trust: {drawn:?}");
        }
        // The debate itself was recorded and did not lift the low agent.
        let score = trust.require(&low).await.unwrap().trust_score;
        assert!(score <= 0.2, "{score}");
    }
}

/// Seed 003's novelty is `1 − max cosine` of the dissent's embedding
/// against the agent's past ones: with the run's embedder (MiniLM), a
/// paraphrase of an earlier dissent is not novel even when it shares few
/// words with it; the words' cosine (no embedder) finds it novel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn novelty_is_measured_with_the_embedder_when_there_is_one() {
    use agon_llm::Embedder;
    use agon_memory::{Memory, RetrievalConfig};
    use agon_protocol::trust_harvest::{AgentRecord, DissentDraft};

    let dir = std::env::temp_dir().join("agon-orchestrator-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!(
        "sqlite://{}",
        dir.join(format!("{}.db", crate::support::unique("novelty")))
            .display()
    );
    let counting = Arc::new(Counting {
        inner: agon_local::LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")),
        texts: std::sync::atomic::AtomicUsize::new(0),
    });
    let embedder: Arc<dyn Embedder> = counting.clone();
    let memory = Memory::open(
        agon_memory::open(&url).await.unwrap(),
        embedder,
        RetrievalConfig::default(),
    )
    .await
    .unwrap();
    let trust = TrustStore::new(sqlite().await);
    let now = Utc.with_ymd_and_hms(2026, 11, 1, 12, 0, 0).unwrap();
    let record = |agent: &str, debate: &str, text: &str| AgentRecord {
        agent: agent.into(),
        model: "m".into(),
        role: "architect".into(),
        rounds: 1,
        dissents: vec![DissentDraft {
            agent: agent.into(),
            round_id: format!("{debate}/round_1"),
            timestamp: now,
            context: EventContext::default(),
            text: text.into(),
            citations: vec![],
            impact: false,
            feedback_incorporated: false,
        }],
    };
    let first = "The cache will fail under heavy traffic because nothing evicts old entries.";
    let paraphrase = "With many requests this store breaks down, as stale items are never removed.";
    let mut depths = Vec::new();
    for (agent, embed) in [("Embedded", Some(&memory)), ("Worded", None)] {
        for (debate, text) in [("d-1", first), ("d-2", paraphrase)] {
            let embedded_before = counting.texts.load(std::sync::atomic::Ordering::SeqCst);
            let (_, warning) = trust
                .record_embedded(
                    &DebateId::new(debate),
                    &[record(agent, debate, text)],
                    now,
                    embed,
                )
                .await
                .unwrap();
            assert!(warning.is_none(), "{warning:?}");
            // Only the new dissent is embedded: the past one's embedding
            // was stored with it.
            let embedded =
                counting.texts.load(std::sync::atomic::Ordering::SeqCst) - embedded_before;
            assert_eq!(embedded, usize::from(embed.is_some()), "{agent} {debate}");
        }
        let m = trust.require(agent).await.unwrap();
        depths.push(m.dissent_history[1].depth_score);
        for d in &m.dissent_history {
            match (embed, &d.embedding) {
                (Some(_), Some(e)) => {
                    assert_eq!(e.model, counting.inner.model_id());
                    assert_eq!(e.vector().unwrap().len(), 384);
                    assert_eq!(e.i8.len(), 512, "384 bytes in base64");
                }
                (None, None) => {}
                other => panic!("{agent}: {other:?}"),
            }
        }
    }
    let (embedded, worded) = (depths[0], depths[1]);
    // Same length and citations: the depths differ by the novelty alone.
    assert!(
        worded - embedded > 0.3,
        "embedded {embedded:.3}, words {worded:.3}"
    );
}

/// An embedder that counts the texts it embeds.
struct Counting {
    inner: agon_local::LocalEmbedder,
    texts: std::sync::atomic::AtomicUsize,
}

#[async_trait::async_trait]
impl agon_llm::Embedder for Counting {
    async fn embed(
        &self,
        texts: &[String],
        input_type: agon_llm::InputType,
    ) -> Result<Vec<Vec<f32>>, agon_llm::ProviderError> {
        self.texts
            .fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
        self.inner.embed(texts, input_type).await
    }

    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }

    fn max_batch(&self) -> usize {
        self.inner.max_batch()
    }

    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
}

/// A critique's impact is the analysis model's judgement of whether the
/// target's refinement took it in (the scripted judge: the first critique
/// of each proposal was, the others not), recorded in the trust memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_analysis_model_judges_whether_a_critique_was_taken_in() {
    let store = sqlite().await;
    let orch = agon_app::orchestrator_for(Arc::clone(&store));
    // Analysis on (the default): the analysis model judges.
    let config = crate::dialectic::dialectic_config(2);
    let mut config = config;
    config.dialectic.analysis = true;
    let id = orch.create(&config).await.unwrap();
    let models = Models::uniform(
        Arc::new(ScriptedModel::new(StdDuration::ZERO)),
        PriceTable::default(),
    );
    orch.run(&id, &models, RunControl::default()).await.unwrap();
    let (bb, _) = store.load(&id).await.unwrap();
    assert!(bb.warnings().is_empty(), "{:?}", bb.warnings());
    let groups = agon_protocol::trust_harvest::critique_groups(&bb);
    // 3 agents × 2 rounds: each proposal got 2 critiques and a refinement.
    assert_eq!(groups.len(), 6);
    let first: Vec<String> = groups
        .iter()
        .map(|g| bb.message(&g.critiques[0]).unwrap().content.clone())
        .collect();
    let trust = TrustStore::new(Arc::clone(&store));
    let mut taken_in = 0;
    let mut total = 0;
    for m in trust.all().await.unwrap() {
        for d in &m.dissent_history {
            total += 1;
            let judged_first = first.contains(&d.dissent_text);
            assert_eq!(
                d.impact, judged_first,
                "{}: {}",
                m.agent_name, d.dissent_text
            );
            assert_eq!(d.feedback_incorporated, judged_first);
            taken_in += usize::from(d.impact);
        }
    }
    // Only significant disagreement is a dissent (seed 003): a critique
    // whose analysis recorded the critic's disagreement with the target in
    // that round (the scripted analysis records one with the first other
    // speaker listed), not every critique.
    let significant: Vec<&agon_core::DialogueMessage> = bb
        .messages()
        .iter()
        .filter(|m| match &m.kind {
            agon_core::MessageKind::Critique { target } => {
                bb.position(&m.persona).is_some_and(|p| {
                    p.disagreements
                        .iter()
                        .any(|d| &d.with == target && d.round == m.round)
                })
            }
            _ => false,
        })
        .collect();
    assert!(
        !significant.is_empty() && significant.len() < 12,
        "{} of 12 critiques",
        significant.len()
    );
    let first_ones = significant
        .iter()
        .filter(|m| first.contains(&m.content))
        .count();
    assert_eq!((taken_in, total), (first_ones, significant.len()));
}

/// `[dialectic] judge_impact`: on, the round analyses judge every critique
/// at no extra call; off, they judge none (the impact then comes from the
/// words and ledger) and the calls are the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn judge_impact_is_read_and_costs_no_extra_call() {
    let mut counts = Vec::new();
    for judge_impact in [true, false] {
        let store = sqlite().await;
        let orch = agon_app::orchestrator_for(Arc::clone(&store));
        let mut config = crate::dialectic::dialectic_config(2);
        config.dialectic.analysis = true;
        config.dialectic.judge_impact = judge_impact;
        let id = orch.create(&config).await.unwrap();
        let model = Arc::new(ScriptedModel::new(StdDuration::ZERO));
        let models = Models::uniform(model.clone(), PriceTable::default());
        orch.run(&id, &models, RunControl::default()).await.unwrap();
        let (bb, _) = store.load(&id).await.unwrap();
        assert!(bb.warnings().is_empty(), "{:?}", bb.warnings());
        // 3 agents × 2 rounds × 2 critiques each.
        let judged = bb.critique_impacts().len();
        assert_eq!(
            judged,
            if judge_impact { 12 } else { 0 },
            "judge_impact {judge_impact}"
        );
        counts.push(model.calls());
    }
    // 3 proposals + 12 critiques + 6 refinements + the solution + the
    // requirements + one analysis per round, with the judgement or without.
    assert_eq!(counts, [25, 25]);
}
