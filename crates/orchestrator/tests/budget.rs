//! A budget stop for every protocol (issue 32): when the debate's spending
//! reaches its limit (short of the reserve), it wraps up with its judge or
//! synthesis where it has one, and finishes with the `budget` status. The
//! limit itself is checked before every model call: once it is spent, no
//! call starts, and the protocol finishes without its wrap-up.

use crate::support;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use agon_llm::UsageLedger;
use futures::FutureExt;

use agon_config::DebateConfig;
use agon_core::{Blackboard, BudgetKind, MessageKind};
use agon_llm::{Price, PriceTable};
use agon_orchestrator::{Models, RunControl, RunOutcome};
use agon_store::RunStatus;
use agon_testkit::{BeforeEachCall, ScriptedModel};
use support::sqlite;

/// Runs `config` on the scripted model (priced at `price` per million
/// tokens, when given) and returns its blackboard and stored status.
async fn run(config: &DebateConfig, price: Option<Price>) -> (Blackboard, RunStatus) {
    let (bb, status, _) = run_probed(config, price).await;
    (bb, status)
}

/// [`run`], with the debate's tokens when each model call started.
async fn run_probed(
    config: &DebateConfig,
    price: Option<Price>,
) -> (Blackboard, RunStatus, Vec<u64>) {
    let mut prices = PriceTable::default();
    if let Some(price) = price {
        prices.set("scripted", price);
    }
    // The debate's tokens (its ledger's total) when each call starts.
    let ledger: Arc<OnceLock<Arc<UsageLedger>>> = Arc::default();
    let starts = Arc::new(Mutex::new(Vec::new()));
    let (read, note) = (Arc::clone(&ledger), Arc::clone(&starts));
    let probe = BeforeEachCall::new(Arc::new(ScriptedModel::new(Duration::ZERO)), move |_, _| {
        let spent = read.get().map_or(0, |l| {
            let t = l.total();
            t.usage.input_tokens + t.usage.output_tokens
        });
        note.lock().unwrap().push(spent);
        async {}.boxed()
    });
    let models = Models::uniform(Arc::new(probe), prices);
    ledger.set(Arc::clone(models.ledger())).ok();
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(config).await.unwrap();
    let outcome = orch.run(&id, &models, RunControl::default()).await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let bb = orch.store().load(&id).await.unwrap().0;
    let status = orch.store().debate(&id).await.unwrap().status;
    let starts = starts.lock().unwrap().clone();
    (bb, status, starts)
}

/// Tokens (prompt and answer) the debate recorded.
fn tokens(bb: &Blackboard) -> u64 {
    let u = bb.usage_total();
    u.input_tokens + u.output_tokens
}

/// No call started once the debate's tokens reached `limit`.
fn no_call_past(starts: &[u64], limit: u64) {
    assert!(!starts.is_empty());
    let late: Vec<&u64> = starts.iter().filter(|&&t| t >= limit).collect();
    assert!(
        late.is_empty(),
        "calls started at {late:?} tokens, limit {limit}"
    );
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
    // A reserve large enough for the rest of the round's group and the
    // judge (this debate is small: one group is a large share of it).
    config.budget.reserve = 0.5;
    let (bb, status) = run(&config, None).await;
    assert_eq!(status, RunStatus::Budget);
    let stop = bb.budget_stop().expect("a budget stop");
    assert_eq!(stop.kind, BudgetKind::Tokens);
    assert!(stop.used >= stop.limit / 2, "{stop:?}");
    assert!(
        bb.budget_exhausted().is_none(),
        "the wrap-up fit in the reserve"
    );
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
    let price = Price::new(1.0, 1.0);
    config.budget.max_cost_usd = Some(whole as f64 / 2.0 / 1e6);
    config.budget.reserve = 0.5;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_dialectic_call_starts_past_the_limit_and_the_debate_still_ends_cleanly() {
    let mut config = crate::dialectic::dialectic_config(4);
    let whole = full_tokens(&config).await;
    // No reserve: the stop comes at the limit, so what runs past it (the
    // rest of a group, the judge's wrap-up) is refused.
    config.budget.max_tokens = Some(whole / 3);
    config.budget.reserve = 0.0;
    let limit = whole / 3;
    let (bb, status, starts) = run_probed(&config, None).await;
    assert_eq!(status, RunStatus::Budget);
    no_call_past(&starts, limit);
    let (refused, spent) = bb.budget_exhausted().expect("the limit was spent");
    assert_eq!(spent.kind, BudgetKind::Tokens);
    assert!(spent.used >= limit, "{spent:?}");
    assert!(bb.solution().is_none(), "no judge past the limit");
    // The calls in flight when the first was refused finished; nothing
    // started after.
    assert!(tokens(&bb) >= spent.used);
    assert!(bb.current_round() < 4);
    let report = agon_view::report::markdown(&bb);
    assert!(report.contains("## Stopped at its budget"), "{report}");
    assert!(
        report.contains(&format!("the call of `{refused}` was refused")),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_structured_synthesis_past_the_limit_is_not_asked() {
    let mut config = support::small_config();
    config.memory.enabled = false;
    let whole = full_tokens(&config).await;
    let price = Price::new(1.0, 1.0);
    config.budget.max_cost_usd = Some(whole as f64 / 2.0 / 1e6);
    config.budget.reserve = 0.0;
    let (bb, status, starts) = run_probed(&config, Some(price)).await;
    assert_eq!(status, RunStatus::Budget);
    // $1 per million tokens: the cost limit is whole / 2 tokens.
    no_call_past(&starts, whole / 2);
    // The first call refused is the synthesis, or one of the last group's
    // (its turns and analyses start as the scripted model answers).
    let (_, spent) = bb.budget_exhausted().expect("the limit was spent");
    assert_eq!(spent.kind, BudgetKind::Cost);
    let kinds = |k: MessageKind| bb.messages().iter().filter(|m| m.kind == k).count();
    assert_eq!(
        kinds(MessageKind::Synthesis),
        0,
        "no synthesis past the limit"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_deliberation_call_starts_past_the_limit() {
    let mut config = crate::deliberation::deliberation_config(3, 30, 12);
    let whole = full_tokens(&config).await;
    for reserve in [0.0, 0.1] {
        config.budget.max_tokens = Some(whole / 2);
        config.budget.reserve = reserve;
        let (bb, status, starts) = run_probed(&config, None).await;
        assert_eq!(status, RunStatus::Budget, "reserve {reserve}");
        no_call_past(&starts, whole / 2);
        assert!(bb.messages().len() < 30);
    }
}

/// A tool turn makes up to `toolCallLimit` + 1 model calls; each is
/// admitted against the budget like any other call, so none starts once
/// the limit is spent, wherever in a tool turn the limit falls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_call_of_a_tool_turn_starts_past_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("limits.md"),
        "Per client: 100 requests per second, bursts of 20.\nGlobal: 10k/s.\n",
    )
    .unwrap();
    let mut config = crate::dialectic::dialectic_config(2);
    config.topic = "Design a rate limiting system. The limits are in limits.md.".into();
    config.context_dir = Some(dir.path().to_owned());
    for a in &mut config.dialectic.agents {
        a.tools = vec!["file_read".into(), "list_files".into()];
        a.tool_call_limit = Some(3);
    }
    config.validate_tools("test").unwrap();
    let whole = full_tokens(&config).await;
    let mut stopped = 0;
    for part in [6, 5, 4, 3] {
        let limit = whole / part;
        let mut limited = config.clone();
        limited.budget.max_tokens = Some(limit);
        limited.budget.reserve = 0.0;
        let (bb, status, starts) = run_probed(&limited, None).await;
        no_call_past(&starts, limit);
        assert!(!bb.tool_calls().is_empty(), "the agents used their tools");
        if status == RunStatus::Budget {
            stopped += 1;
        }
    }
    assert_eq!(stopped, 4, "every limit stopped the debate");
}
