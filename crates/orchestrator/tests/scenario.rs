//! Issue 33's scenario (seed 003): five dialectic debates in sequence on
//! one store. The Simplicity Advocate's critiques are never taken in (the
//! scripted analysis judges them so) and after each debate a person
//! overrides its output, an override another person replaces the next
//! day; the System Architect's critiques are taken in. Debate by debate,
//! from the events each one recorded: the Simplicity Advocate's trust
//! falls below 0.2, it is no longer drawn as devil's advocate, and its
//! critiques sink to the bottom of the refinement prompts, labelled. On
//! SQLite and PostgreSQL.

use std::sync::Arc;

use agon_core::{Blackboard, PersonaId};
use agon_orchestrator::trust::TrustStore;
use agon_store::EventStore;
use chrono::{Duration, Utc};

use crate::steer::run_recorded;
use crate::support::{postgres, sqlite};

const LOW: &str = "Simplicity Advocate";
const HIGH: &str = "System Architect";

fn id_of(bb: &Blackboard, name: &str) -> PersonaId {
    bb.debaters()
        .find(|p| p.name == name)
        .map(|p| p.id.clone())
        .unwrap()
}

async fn scenario(store: Arc<dyn EventStore>) {
    let mut config = crate::dialectic::dialectic_config(2);
    // The scripted analysis judges which critiques were taken in.
    config.dialectic.analysis = true;
    config.dialectic.devil_advocate = true;
    let trust = TrustStore::new(Arc::clone(&store));
    let mut standings = Vec::new();
    let mut drawn_after_low = Vec::new();
    let mut sank = 0;
    for debate in 1..=5 {
        let (bb, prompts) = run_recorded(&store, &config).await;
        let low = id_of(&bb, LOW);
        let standing = bb.trust_standing(&low).copied();
        if let Some(s) = standing {
            // Once it is known to be below the floor and everyone is off
            // probation (before, nobody is viable and all are drawn from),
            // it is never drawn.
            let all_off_probation = bb
                .debaters()
                .all(|p| bb.trust_standing(&p.id).is_some_and(|s| !s.on_probation));
            if s.trust() <= agon_core::trust::MIN_TRUST && all_off_probation {
                drawn_after_low.extend(bb.devils_advocates().values().cloned());
            }
            // Its critiques come last in every refinement that shows one
            // with another critic's, labelled low-trust.
            if s.is_low() {
                let label = format!("{LOW} (low trust");
                for p in prompts
                    .iter()
                    .filter(|p| p.contains("CRITIQUES OF YOUR PROPOSAL") && p.contains(&label))
                {
                    let mine = p.find(&label).unwrap();
                    let others = p[p.find("CRITIQUES OF YOUR PROPOSAL").unwrap()..]
                        .lines()
                        .filter(|l| l.contains("(trust ") || l.contains("(low trust "))
                        .filter(|l| !l.starts_with(LOW))
                        .filter_map(|l| p.find(l))
                        .all(|at| at < mine);
                    assert!(others, "debate {debate}: its critique sinks: {p}");
                    sank += 1;
                }
            }
        }
        standings.push(standing.map(|s| s.trust()));
        // A person overrides its output, and the next day another person
        // replaces that decision: the override is regretted when the next
        // debate reads trust.
        let id = bb.debate().unwrap().clone();
        let now = Utc::now();
        trust
            .record_override(
                &id,
                &bb,
                "Use a fixed window counter.",
                Some(LOW),
                now - Duration::hours(48),
            )
            .await
            .unwrap();
        trust
            .record_override(
                &id,
                &bb,
                "Use a token bucket per client.",
                Some(HIGH),
                now - Duration::hours(36),
            )
            .await
            .unwrap();
    }
    // Debate 1 reads no memory (a new agent, 0.6); from debate 2 on, with
    // its critiques ignored and its overrides regretted, it stands below
    // the floor (it moves a little with the depth of its new dissents).
    assert_eq!(standings[0], None, "{standings:?}");
    let known: Vec<f64> = standings.iter().flatten().copied().collect();
    assert_eq!(known.len(), 4, "{standings:?}");
    assert!(
        known.iter().all(|t| *t < agon_core::trust::MIN_TRUST),
        "below 0.2 from debate 2 on: {standings:?}"
    );
    let low = trust.require(LOW).await.unwrap();
    assert!(low.override_history.iter().filter(|o| o.regret).count() >= 3);
    let high = trust.require(HIGH).await.unwrap();
    assert!(
        high.trust_score > low.trust_score + 0.2,
        "{} vs {}",
        high.trust_score,
        low.trust_score
    );
    assert!(sank > 0, "its critiques were shown, and sank");
    assert!(
        !drawn_after_low.is_empty(),
        "devils were drawn after it fell"
    );
    assert!(
        drawn_after_low.iter().all(|p| p.as_str() != "agent-kiss"),
        "never drawn once below 0.2: {drawn_after_low:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_distrusted_agent_falls_is_not_drawn_and_sinks_on_sqlite() {
    scenario(sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_distrusted_agent_falls_is_not_drawn_and_sinks_on_postgres() {
    scenario(postgres().await).await;
}
