//! A budget stop for every protocol (issue 32): when the debate's spending
//! reaches its limit (short of the reserve), it wraps up with its judge or
//! synthesis where it has one, and finishes with the `budget` status.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use agon_config::DebateConfig;
use agon_core::{Blackboard, BudgetKind, MessageKind};
use agon_llm::{Price, PriceTable};
use agon_orchestrator::{Models, Orchestrator, RunControl, RunOutcome};
use agon_store::RunStatus;
use agon_testkit::ScriptedModel;
use support::sqlite;

/// Runs `config` on the scripted model (priced at `price` per million
/// tokens, when given) and returns its blackboard and stored status.
async fn run(config: &DebateConfig, price: Option<Price>) -> (Blackboard, RunStatus) {
    let mut prices = PriceTable::default();
    if let Some(price) = price {
        prices.set("scripted", price);
    }
    let models = Models::uniform(Arc::new(ScriptedModel::new(Duration::ZERO)), prices);
    let orch = Orchestrator::new(sqlite().await);
    let id = orch.create(config).await.unwrap();
    let outcome = orch.run(&id, &models, RunControl::default()).await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let bb = orch.store().load(&id).await.unwrap().0;
    let status = orch.store().debate(&id).await.unwrap().status;
    (bb, status)
}

/// The tokens a whole run of `config` costs (no budget).
async fn full_tokens(config: &DebateConfig) -> u64 {
    let (bb, status) = run(config, None).await;
    assert_eq!(status, RunStatus::Finished);
    assert!(bb.budget_stop().is_none());
    let u = bb.usage_total();
    u.input_tokens + u.output_tokens
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialectic_debate_stops_at_its_token_budget_with_the_judges_solution() {
    let mut config = crate::dialectic::dialectic_config(4);
    let whole = full_tokens(&config).await;
    config.budget.max_tokens = Some(whole / 3);
    let (bb, status) = run(&config, None).await;
    assert_eq!(status, RunStatus::Budget);
    let stop = bb.budget_stop().expect("a budget stop");
    assert_eq!(stop.kind, BudgetKind::Tokens);
    assert!(stop.used >= stop.limit * 9 / 10, "{stop:?}");
    assert!(stop.at.starts_with("round "), "{}", stop.at);
    // The judge wrapped up the round it stopped in; later rounds never ran.
    let solution = bb.solution().expect("the judge's solution");
    assert_eq!(solution.round, bb.current_round());
    assert!(
        bb.current_round() < 4,
        "stopped early: round {}",
        bb.current_round()
    );
    let used = bb.usage_total();
    assert!(
        used.input_tokens + used.output_tokens < whole * 2 / 3,
        "the stop saved tokens"
    );
    let report = agon_view::report::markdown(&bb);
    assert!(report.contains("## Stopped at its budget"), "{report}");
    assert!(report.contains("the judge's solution of round"), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_structured_debate_stops_at_its_cost_budget_with_the_synthesis() {
    let mut config = support::small_config();
    config.memory.enabled = false;
    let whole = full_tokens(&config).await;
    // $1 per million tokens: the whole debate costs whole / 1e6 dollars.
    let price = Price {
        input_per_mtok: 1.0,
        output_per_mtok: 1.0,
    };
    config.budget.max_cost_usd = Some(whole as f64 / 2.0 / 1e6);
    let (bb, status) = run(&config, Some(price)).await;
    assert_eq!(status, RunStatus::Budget);
    let stop = bb.budget_stop().expect("a budget stop");
    assert_eq!(stop.kind, BudgetKind::Cost);
    let kinds = |k: MessageKind| bb.messages().iter().filter(|m| m.kind == k).count();
    assert_eq!(kinds(MessageKind::Synthesis), 1, "the judge wrapped up");
    assert_eq!(kinds(MessageKind::Closing), 0, "the closings were skipped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deliberation_stops_at_its_budget_and_a_debate_under_it_runs_whole() {
    let mut config = crate::deliberation::deliberation_config(3, 30, 12);
    let whole = full_tokens(&config).await;
    config.budget.max_tokens = Some(whole / 2);
    let (bb, status) = run(&config, None).await;
    assert_eq!(status, RunStatus::Budget);
    assert!(bb.messages().len() < 30, "{} turns", bb.messages().len());
    assert_eq!(bb.budget_stop().unwrap().kind, BudgetKind::Tokens);
    // Twice the whole debate's tokens: nothing stops it.
    config.budget.max_tokens = Some(whole * 2);
    let (bb, status) = run(&config, None).await;
    assert_eq!(status, RunStatus::Finished);
    assert!(bb.budget_stop().is_none());
}
