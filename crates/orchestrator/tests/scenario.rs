//! Issue 33's scenario (seed 003): five dialectic debates in sequence on
//! one store. The Simplicity Advocate's critiques are never taken in (the
//! scripted analysis judges them so) and after each debate a person
//! overrides its output, an override another person replaces the next
//! day; the System Architect's critiques are taken in. Debate by debate,
//! from the events each one recorded: the Simplicity Advocate's trust
//! falls below 0.2, it is no longer drawn as devil's advocate, and its
//! critiques sink to the bottom of the refinement prompts, labelled. After
//! debate 3, the System Architect's override proposes a rubric criterion
//! (the Simplicity Advocate's is refused: low trust); once a person accepts
//! it, debates 4 and 5 read rubric v2, their judge weighs by it, and
//! `agon eval` scores it. On SQLite and PostgreSQL.

use std::sync::Arc;

use agon_app::rubric::{RubricStore, RubricStoreError};
use agon_app::trust::TrustStore;
use agon_core::{Blackboard, PersonaId};
use agon_store::EventStore;
use agon_trust::rubric::{Criterion, RubricChange, RubricError};
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
    let rubrics = RubricStore::new(Arc::clone(&store));
    let operability = RubricChange::Add {
        criterion: Criterion::new("Operability", "It can be run, observed and rolled back."),
    };
    let mut last = None;
    let mut standings = Vec::new();
    let mut drawn_after_low = Vec::new();
    let mut sank = 0;
    for debate in 1..=5 {
        let (bb, prompts) = run_recorded(&store, &config).await;
        let low = id_of(&bb, LOW);
        // The rubric the debate read, and what its judge was shown.
        let rubric = bb.rubric().expect("every dialectic reads its rubric");
        let judge = prompts
            .iter()
            .find(|p| p.contains("Judge the solution by rubric"))
            .expect("the judge weighs by the rubric");
        if debate <= 3 {
            assert_eq!(rubric.version, 1, "debate {debate}");
            assert!(!judge.contains("Operability"));
        } else {
            assert_eq!(rubric.version, 2, "debate {debate}");
            assert!(judge.contains("- Operability: It can be run, observed and rolled back."));
        }
        // Critiques cite the rubric's criteria as the analysis recorded
        // them (the scripted analysis cites the first one offered).
        let cited: Vec<String> = agon_protocol::trust_harvest::dissents(&bb, bb.debate().unwrap())
            .into_iter()
            .flat_map(|d| d.citations)
            .collect();
        assert!(
            !cited.is_empty() && cited.iter().all(|c| rubric.find(c).is_some()),
            "debate {debate}: {cited:?}"
        );
        let standing = bb.trust_standing(&low).copied();
        if let Some(s) = standing {
            // Once it is known to be below the floor and everyone is off
            // probation (before, nobody is viable and all are drawn from),
            // it is never drawn.
            let all_off_probation = bb
                .debaters()
                .all(|p| bb.trust_standing(&p.id).is_some_and(|s| !s.on_probation));
            if s.trust() <= agon_trust::MIN_TRUST && all_off_probation {
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
        if debate == 3 {
            // The low-trust agent's override proposes nothing; the
            // high-trust agent's does, and a person accepts it.
            let refused = rubrics
                .propose_from_override(&trust, &id, &bb, &[LOW.into()], operability.clone(), now)
                .await;
            assert!(
                matches!(
                    refused,
                    Err(RubricStoreError::Rubric(RubricError::LowTrust { .. }))
                ),
                "{refused:?}"
            );
            let (name, proposal, by) = rubrics
                .propose_from_override(&trust, &id, &bb, &[HIGH.into()], operability.clone(), now)
                .await
                .unwrap();
            assert_eq!((name.as_str(), by.as_str()), ("dialectic", HIGH));
            let v2 = rubrics
                .update(&name, now, &|book| book.accept(proposal, now))
                .await
                .unwrap();
            assert_eq!(v2.version, 2);
        }
        last = Some(bb);
    }
    // Once accepted, the evaluation changes: the evaluators are told of
    // the new criterion and it is scored.
    let bb = last.unwrap();
    let v1 = agon_core::rubric::Rubric::builtin("dialectic").unwrap();
    let v2 = rubrics.current("dialectic").await.unwrap();
    let input = agon_eval::EvalInput::from_blackboard(&bb, "scenario").unwrap();
    let (before, told_before) = evaluate(&input, &v1).await;
    let (after, told_after) = evaluate(&input, &v2).await;
    assert!(!told_before.contains("Operability"));
    assert!(told_after.contains("Operability (added): It can be run, observed and rolled back."));
    assert_eq!(before.average("Operability"), None);
    assert_eq!(after.average("Operability"), Some(4.0));
    assert_eq!(after.average("overall_score"), Some(7.0));
    assert!(
        after
            .markdown()
            .contains("Scored by rubric `dialectic` v2.")
    );
    // Debate 1 reads no memory (a new agent, 0.6); from debate 2 on, with
    // its critiques ignored and its overrides regretted, it stands below
    // the floor (it moves a little with the depth of its new dissents).
    assert_eq!(standings[0], None, "{standings:?}");
    let known: Vec<f64> = standings.iter().flatten().copied().collect();
    assert_eq!(known.len(), 4, "{standings:?}");
    assert!(
        known.iter().all(|t| *t < agon_trust::MIN_TRUST),
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

/// One evaluator (a model that scores every category it is asked for and
/// records its prompt) run on `input` by `rubric`.
async fn evaluate(
    input: &agon_eval::EvalInput,
    rubric: &agon_core::rubric::Rubric,
) -> (agon_eval::EvalReport, String) {
    let model = Arc::new(crate::support::Canned::new(
        r#"{"evaluation": {"functional_completeness": {"score": 8, "reasoning": "ok"}},
            "additional_criteria": {"Operability": {"score": 4, "reasoning": "no rollback"}},
            "overall_summary": {"overall_score": 7}}"#,
    ));
    let evaluator = agon_eval::Evaluator {
        id: "e1".into(),
        model: model.clone() as Arc<dyn agon_llm::ChatModel>,
        system: agon_eval::SYSTEM_PROMPT.into(),
        user_template: agon_eval::USER_PROMPT.into(),
        timeout: std::time::Duration::from_secs(5),
    };
    let report = agon_eval::evaluate(&[evaluator], input, Some(rubric)).await;
    (report, model.last_prompt())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_distrusted_agent_falls_is_not_drawn_and_sinks_on_sqlite() {
    scenario(sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_distrusted_agent_falls_is_not_drawn_and_sinks_on_postgres() {
    scenario(postgres().await).await;
}
