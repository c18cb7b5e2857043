//! Load in one process (issue 32, part 2): 20 debates of the three
//! protocols run at once by one orchestrator on one store, through the
//! library API, on SQLite and on PostgreSQL. No cross-talk: each debate's
//! blackboard is exactly the one it has when it runs alone; nothing is
//! lost and no store error ("database is locked") reaches the caller.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use agon_config::DebateConfig;
use agon_orchestrator::{Models, RunControl, RunOutcome};
use agon_store::EventStore;
use agon_testkit::ScriptedModel;

use crate::faults::runner as configs;

fn models() -> Models {
    Models::uniform(
        Arc::new(ScriptedModel::new(Duration::from_millis(5))),
        agon_llm::PriceTable::default(),
    )
}

/// The canonical blackboard of `config` run alone.
async fn alone(config: &DebateConfig) -> serde_json::Value {
    let orch = agon_app::orchestrator_for(support::sqlite().await);
    let id = orch.create(config).await.unwrap();
    let outcome = orch
        .run(&id, &models(), RunControl::default())
        .await
        .unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    support::canonical(&orch.store().load(&id).await.unwrap().0)
}

async fn twenty_at_once(store: Arc<dyn EventStore>) {
    let protocols: Vec<&'static str> = (0..20).map(|i| configs::PROTOCOLS[i % 3]).collect();
    let mut expected = std::collections::HashMap::new();
    for protocol in configs::PROTOCOLS {
        expected.insert(protocol, alone(&configs::config(protocol)).await);
    }
    let orch = Arc::new(agon_app::orchestrator_for(store));
    let models = models();
    let mut runs = Vec::new();
    for protocol in &protocols {
        let id = orch.create(&configs::config(protocol)).await.unwrap();
        let (orch, models) = (Arc::clone(&orch), models.clone());
        runs.push((
            *protocol,
            id.clone(),
            tokio::spawn(async move { orch.run(&id, &models, RunControl::default()).await }),
        ));
    }
    for (protocol, id, run) in runs {
        let outcome = run.await.unwrap();
        assert!(
            matches!(outcome, Ok(RunOutcome::Finished)),
            "{protocol} {id}: {outcome:?}"
        );
        let got = support::canonical(&orch.store().load(&id).await.unwrap().0);
        assert_eq!(
            got, expected[protocol],
            "{protocol} {id} differs from its run alone"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_debates_at_once_on_sqlite_are_each_what_they_are_alone() {
    twenty_at_once(support::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_debates_at_once_on_postgres_are_each_what_they_are_alone() {
    twenty_at_once(support::postgres().await).await;
}
