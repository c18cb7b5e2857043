//! Debates with vector memory: the real local MiniLM embedder and the
//! embedded index in the debate's SQLite file (and pgvector on PostgreSQL);
//! the chat model is scripted, wrapped to record every prompt.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use agon_core::DebateEvent;
use agon_llm::{ChatModel, Embedder, PriceTable};
use agon_local::LocalEmbedder;
use agon_memory::{Memory, MemoryFilter, MemoryKind, RetrievalConfig};
use agon_orchestrator::{Models, Orchestrator, RunControl, RunOutcome};
use agon_testkit::ScriptedModel;
use support::{Recording, small_config};

fn db_url() -> String {
    let dir = std::env::temp_dir().join("agon-orchestrator-tests");
    std::fs::create_dir_all(&dir).unwrap();
    format!(
        "sqlite://{}",
        dir.join(format!("{}.db", support::unique("mem"))).display()
    )
}

async fn run_debate(
    url: &str,
    embedder: Arc<dyn Embedder>,
    topic: &str,
) -> (Arc<Recording>, agon_core::DebateId, Orchestrator) {
    let store = agon_store::open(url).await.unwrap();
    let index = agon_memory::open(url).await.unwrap();
    let memory = Memory::open(index, embedder, RetrievalConfig::default())
        .await
        .unwrap();
    let orch = agon_app::orchestrator_for(store).with_memory(memory);
    let mut config = small_config();
    config.topic = topic.into();
    let id = orch.create(&config).await.unwrap();
    // Model latency gives the background writer time to store each round's
    // memories before later turns recall (it is off the critical path).
    let model = Arc::new(Recording::new(
        ScriptedModel::new(Duration::from_millis(150)),
        false,
    ));
    let models = Models::uniform(
        model.clone() as Arc<dyn ChatModel>,
        PriceTable::with_defaults(),
    );
    let outcome = orch.run(&id, &models, RunControl::default()).await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    (model, id, orch)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debates_remember_and_recall_within_and_across_debates() {
    let url = db_url();
    let embedder: Arc<dyn Embedder> =
        Arc::new(LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")));
    let (model, first, orch) = run_debate(
        &url,
        Arc::clone(&embedder),
        "Should cities ban private cars from their centres?",
    )
    .await;

    // What was remembered: positions, reflections, crux cards of this debate.
    let index = agon_memory::open(&url).await.unwrap();
    let memory = Memory::open(index, Arc::clone(&embedder), RetrievalConfig::default())
        .await
        .unwrap();
    let of = |kind| MemoryFilter {
        kinds: vec![kind],
        debate: Some(first.clone()),
        ..MemoryFilter::default()
    };
    assert!(
        memory
            .index()
            .count(&of(MemoryKind::Position))
            .await
            .unwrap()
            > 0
    );
    assert!(
        memory
            .index()
            .count(&of(MemoryKind::CruxCard))
            .await
            .unwrap()
            >= 2
    );
    let (bb, _) = orch.store().load(&first).await.unwrap();
    assert!(
        !bb.warnings()
            .iter()
            .any(|w| w.step.name().starts_with("memory")),
        "{:?}",
        bb.warnings()
    );
    // Later takes and the closings saw RELEVANT EARLIER CONTEXT.
    let prompts = model.prompts.lock().unwrap().clone();
    let with_memories = prompts
        .iter()
        .filter(|p| p.contains("RELEVANT EARLIER CONTEXT"))
        .count();
    assert!(
        with_memories >= 3,
        "{with_memories} of {} prompts",
        prompts.len()
    );
    assert!(prompts.iter().any(|p| p.contains("(round ")));

    // A second debate recalls the first one's memories, labelled with its topic.
    let (model2, second, _) = run_debate(
        &url,
        Arc::clone(&embedder),
        "Should cities make public transit free?",
    )
    .await;
    let prompts = model2.prompts.lock().unwrap().clone();
    assert!(
        prompts
            .iter()
            .any(|p| p
                .contains("earlier debate \"Should cities ban private cars from their centres?\"")),
        "no cross-debate recall in {} prompts",
        prompts.len()
    );
    let recall = memory
        .recall("car ban", &MemoryFilter::persona("mara"), 8)
        .await
        .unwrap();
    assert!(recall.memories.iter().any(|m| m.memory.debate == first));
    assert!(recall.memories.iter().any(|m| m.memory.debate == second));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unavailable_memory_is_recorded_and_the_debate_runs() {
    let url = db_url();
    let orch = agon_app::orchestrator_for(agon_store::open(&url).await.unwrap())
        .with_memory_unavailable("embedder `local:/nowhere` did not load");
    let id = orch.create(&small_config()).await.unwrap();
    let models = Models::uniform(
        Arc::new(ScriptedModel::new(Duration::ZERO)),
        PriceTable::with_defaults(),
    );
    assert_eq!(
        orch.run(&id, &models, RunControl::default()).await.unwrap(),
        RunOutcome::Finished
    );
    let events = orch.store().events_after(&id, 0).await.unwrap();
    let warned = events.iter().any(|e| {
        matches!(&e.event, DebateEvent::StepFailed { step, reason, .. }
        if *step == agon_core::StepId::MemorySetup && reason.contains("/nowhere"))
    });
    assert!(warned);
}
