//! Trust that steers (seed 003, issue 33): the agents' standings in the
//! trust memory, read when a debate starts, order and label the feedback
//! an agent's prompt shows, and the judge's view of the positions.

use std::sync::Arc;
use std::time::Duration;

use agon_app::trust::TrustStore;
use agon_core::{Blackboard, PersonaId};
use agon_llm::{ChatModel, PriceTable};
use agon_orchestrator::{Models, RunControl, RunOutcome};
use agon_store::EventStore;
use agon_testkit::ScriptedModel;

use crate::support::{Recording, sqlite};

/// Runs `config` on `store` with a model that records every prompt.
pub(crate) async fn run_recorded(
    store: &Arc<dyn EventStore>,
    config: &agon_config::DebateConfig,
) -> (Blackboard, Vec<String>) {
    let orch = agon_app::orchestrator_for(Arc::clone(store));
    let id = orch.create(config).await.unwrap();
    let model = Arc::new(Recording::new(ScriptedModel::new(Duration::ZERO), true));
    let models = Models::uniform(model.clone() as Arc<dyn ChatModel>, PriceTable::default());
    let outcome = orch.run(&id, &models, RunControl::default()).await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let bb = store.load(&id).await.unwrap().0;
    let prompts = model.prompts.lock().unwrap().clone();
    (bb, prompts)
}

/// Gives `name` a trust memory in `store`: its score and rounds.
async fn remember(store: &Arc<dyn EventStore>, name: &str, score: f64, rounds: u32) {
    TrustStore::new(Arc::clone(store))
        .update(name, "scripted", chrono::Utc::now(), &move |m| {
            m.trust_score = score;
            m.rounds_participated = rounds;
        })
        .await
        .unwrap();
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
    for ((_, name), (score, rounds)) in agents.iter().zip([(0.9, 10), (0.1, 10), (0.6, 2)]) {
        remember(&steered, name, score, rounds).await;
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

/// An override of `agent`'s output on `round` at `at`, due for the regret
/// check a day later.
fn override_of(
    round: &str,
    decision: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> agon_trust::Override {
    agon_trust::Override {
        round_id: round.into(),
        timestamp: at,
        context: agon_trust::EventContext::default(),
        agent_output: "the system's design".into(),
        human_decision: decision.into(),
        regret: false,
        auto_check_deadline: at + chrono::Duration::hours(24),
        reverted_by: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debate_infers_regret_before_it_reads_the_standings() {
    let config = crate::dialectic::dialectic_config(1);
    let store = sqlite().await;
    let trust = TrustStore::new(Arc::clone(&store));
    let now = chrono::Utc::now();
    // Two days ago a person overrode the System Architect's output on an
    // earlier debate; 36 hours ago another override of the same round by
    // the Performance Engineer replaced that decision. Nobody ran `agon
    // trust check`.
    for (name, decision, hours) in [
        ("System Architect", "Use Redis.", 48),
        ("Performance Engineer", "Use PostgreSQL.", 36),
    ] {
        let o = override_of(
            "d-earlier/final",
            decision,
            now - chrono::Duration::hours(hours),
        );
        trust
            .update(name, "scripted", now, &move |m| {
                m.override_history.push(o.clone())
            })
            .await
            .unwrap();
    }
    let (bb, _) = run_recorded(&store, &config).await;
    let architect = trust.require("System Architect").await.unwrap();
    assert!(architect.override_history[0].regret, "regret was inferred");
    assert_eq!(
        architect.override_history[0].reverted_by.as_deref(),
        Some("system")
    );
    let performance = trust.require("Performance Engineer").await.unwrap();
    assert!(
        !performance.override_history[0].regret,
        "its decision stands"
    );
    // The standing read at the start already counts the regret: 0.4 · 0.6
    // + 0.3 · 0.6 + 0.3 · (1 − 1) = 0.42.
    let id = bb
        .debaters()
        .find(|p| p.name == "System Architect")
        .map(|p| p.id.clone())
        .unwrap();
    assert_eq!(bb.trust_standing(&id).unwrap().trust_milli, 420);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deliberation_draws_its_skeptic_by_trust_once() {
    let mut config = crate::deliberation::deliberation_config(3, 12, 6);
    config.deliberation.mode = agon_protocol::TurnMode::Listen;
    config.deliberation.skeptic = true;
    let store = sqlite().await;
    // Ada is below the floor and Bo on probation: Cy is the only viable
    // skeptic (the draw is weighted by trust among the viable).
    for (name, score, rounds) in [("Ada", 0.15, 10), ("Bo", 0.9, 1), ("Cy", 0.7, 10)] {
        remember(&store, name, score, rounds).await;
    }
    let (bb, _) = run_recorded(&store, &config).await;
    let skeptic = bb.devils_advocate(0).expect("drawn at the start");
    assert_eq!(bb.persona_name(skeptic), "Cy");
    assert_eq!(bb.devils_advocates().len(), 1, "drawn once");
    let report = agon_view::report::markdown(&bb);
    assert!(report.contains("Skeptic: **Cy**"), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_debate_records_each_agents_role_and_the_end_of_its_probation() {
    let config = crate::dialectic::dialectic_config(5);
    let store = sqlite().await;
    run_recorded(&store, &config).await;
    let trust = TrustStore::new(Arc::clone(&store));
    let architect = trust.require("System Architect").await.unwrap();
    assert_eq!(architect.primary_role, "architect");
    assert!(architect.rounds_participated >= 5);
    assert!(!architect.on_probation());
    assert!(architect.probation_until.is_some(), "came off probation");
    assert_eq!(
        trust
            .require("Simplicity Advocate")
            .await
            .unwrap()
            .primary_role,
        "kiss"
    );
}
