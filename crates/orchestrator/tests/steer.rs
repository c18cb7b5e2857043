//! Trust that steers (seed 003, issue 33): the agents' standings in the
//! trust memory, read when a debate starts, order and label the feedback
//! an agent's prompt shows, and the judge's view of the positions.

use std::sync::Arc;
use std::time::Duration;

use agon_core::{Blackboard, PersonaId};
use agon_llm::{ChatModel, PriceTable};
use agon_orchestrator::trust::TrustStore;
use agon_orchestrator::{Models, Orchestrator, RunControl, RunOutcome};
use agon_store::EventStore;
use agon_testkit::ScriptedModel;

use crate::support::{Recording, sqlite};

/// Runs `config` on `store` with a model that records every prompt.
async fn run_recorded(
    store: &Arc<dyn EventStore>,
    config: &agon_config::DebateConfig,
) -> (Blackboard, Vec<String>) {
    let orch = Orchestrator::new(Arc::clone(store));
    let id = orch.create(config).await.unwrap();
    let model = Arc::new(Recording::new(ScriptedModel::new(Duration::ZERO), true));
    let models = Models::uniform(model.clone() as Arc<dyn ChatModel>, PriceTable::default());
    let outcome = orch.run(&id, &models, RunControl::default()).await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let bb = store.load(&id).await.unwrap().0;
    let prompts = model.prompts.lock().unwrap().clone();
    (bb, prompts)
}

/// The prompts that show critiques received (the refinements').
fn refinements(prompts: &[String]) -> Vec<&String> {
    prompts
        .iter()
        .filter(|p| p.contains("CRITIQUES OF YOUR PROPOSAL"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runs_differing_only_in_trust_memories_give_different_prompts() {
    let config = crate::dialectic::dialectic_config(2);

    // No memories: every agent is new, nothing is labelled or reordered.
    let plain = sqlite().await;
    let (bb, prompts) = run_recorded(&plain, &config).await;
    assert!(bb.trust_read(), "the standings were read at the start");
    let agents: Vec<(PersonaId, String)> = bb
        .debaters()
        .map(|p| (p.id.clone(), p.name.clone()))
        .collect();
    assert_eq!(agents.len(), 3);
    assert!(agents.iter().all(|(p, _)| bb.trust_standing(p).is_none()));
    let plain_refinements = refinements(&prompts);
    assert!(!plain_refinements.is_empty());
    for p in &prompts {
        assert!(!p.contains("trust 0."), "a new agent is labelled: {p}");
        assert!(!p.contains("Ordered by each critic's trust"));
    }

    // The same debate with memories: the first agent trusted, the second
    // low-trust, the third on probation.
    let steered = sqlite().await;
    let trust = TrustStore::new(Arc::clone(&steered));
    for ((_, name), (score, rounds)) in agents.iter().zip([(0.9, 10), (0.1, 10), (0.6, 2)]) {
        trust
            .update(name, "scripted", chrono::Utc::now(), &move |m| {
                m.trust_score = score;
                m.rounds_participated = rounds;
            })
            .await
            .unwrap();
    }
    let (bb, prompts) = run_recorded(&steered, &config).await;
    let standing = |i: usize| *bb.trust_standing(&agents[i].0).unwrap();
    assert_eq!(standing(0).trust_milli, 900);
    assert!(standing(1).is_low());
    assert!(standing(2).on_probation && !standing(0).on_probation);
    let steered_refinements = refinements(&prompts);
    assert_eq!(steered_refinements.len(), plain_refinements.len());
    assert_ne!(steered_refinements, plain_refinements);

    let trusted = format!("{} (trust 0.90):", agents[0].1);
    let low = format!("{} (low trust 0.10):", agents[1].1);
    let probation = format!("{} (trust 0.60, on probation):", agents[2].1);
    // The third agent's proposal, critiqued by the first two: the trusted
    // critic comes first, the low-trust one is marked.
    let of_third = steered_refinements
        .iter()
        .find(|p| p.contains(&trusted) && p.contains(&low))
        .expect("a refinement with both critics");
    assert!(of_third.find(&trusted) < of_third.find(&low), "{of_third}");
    assert!(of_third.contains("Ordered by each critic's trust"));
    // The first agent's proposal: the critic on probation (0.60) before the
    // low-trust one, although the low-trust one spoke first.
    let of_first = steered_refinements
        .iter()
        .find(|p| p.contains(&probation) && p.contains(&low))
        .expect("a refinement with both critics");
    assert!(
        of_first.find(&probation) < of_first.find(&low),
        "{of_first}"
    );
    let unsteered = plain_refinements
        .iter()
        .find(|p| {
            p.contains(&format!("{}:", agents[2].1)) && p.contains(&format!("{}:", agents[1].1))
        })
        .expect("the same refinement without trust");
    assert!(
        unsteered.find(&format!("{}:", agents[1].1)) < unsteered.find(&format!("{}:", agents[2].1)),
        "without trust the critics keep their speaking order: {unsteered}"
    );
    // The judge sees each agent's trust beside its position.
    assert!(
        prompts
            .iter()
            .any(|p| p.contains(&format!("{} (trust 0.90) — ", agents[0].1))),
        "the judge's view carries trust"
    );
}
