//! Snapshot tests: the assembled context of every phase on the fixture debate.

use agon_context::{Assembler, ContextBudget, ContextExtras, Phase, RetrievedMemory, SectionKind};
use agon_core::DebateEvent;

use crate::fixture;

fn assemble(
    board: &agon_core::Blackboard,
    persona: &str,
    phase: Phase,
    budget: usize,
) -> agon_context::AssembledContext {
    let extras = ContextExtras {
        memories: vec![RetrievedMemory {
            label: "debate on crypto payroll, 2026-09-14".into(),
            content: "Mara argued that paying salaries in Bitcoin was premature until accounting rules changed.".into(),
        }],
        ..ContextExtras::default()
    };
    let context = Assembler::default()
        .assemble(
            board,
            persona,
            &phase,
            ContextBudget::new(budget).unwrap(),
            &extras,
        )
        .unwrap();
    assert!(
        context.total_tokens <= budget,
        "{} > {budget}",
        context.total_tokens
    );
    context
}

#[test]
fn opening_is_a_cold_start() {
    let board = fixture::blackboard_after(1);
    let context = assemble(&board, "theo", Phase::Opening, 1_200);
    assert_eq!(context.sections.len(), 1, "only the debate state");
    insta::assert_snapshot!("opening", context.text);
}

#[test]
fn take_miniround_0_sees_the_ledger_but_no_recent_exchange() {
    // Just before the first take on aspect 2 (accounting).
    let at = fixture::position(
        |e| matches!(e, DebateEvent::AspectStarted { aspect, .. } if aspect.as_str() == "accounting"),
    );
    let board = fixture::blackboard_after(at + 1);
    let context = assemble(
        &board,
        "priya",
        Phase::Take {
            aspect: "accounting".into(),
            miniround: 0,
        },
        1_200,
    );
    assert!(context.section(SectionKind::RecentExchange).is_none());
    assert!(context.section(SectionKind::EarlierRounds).is_some());
    insta::assert_snapshot!("take_miniround_0", context.text);
}

#[test]
fn take_miniround_1_sees_the_recent_exchange() {
    // Just before Theo's miniround-1 take on aspect 1.
    let at = fixture::position(
        |e| matches!(e, DebateEvent::MessageAppended { message } if message.id.as_str() == "m08"),
    );
    let board = fixture::blackboard_after(at);
    let context = assemble(
        &board,
        "theo",
        Phase::Take {
            aspect: "horizon".into(),
            miniround: 1,
        },
        1_200,
    );
    let exchange = context.section(SectionKind::RecentExchange).unwrap();
    assert_eq!(exchange.items.len(), 4, "all four aspect-1 messages so far");
    insta::assert_snapshot!("take_miniround_1", context.text);
}

#[test]
fn crux_entry_carries_the_triggering_dialogue() {
    let at = fixture::position(
        |e| matches!(e, DebateEvent::ClaimStatusChanged { claim, .. } if claim.as_str() == "claim-1"),
    );
    let board = fixture::blackboard_after(at + 1);
    let context = assemble(
        &board,
        "mara",
        Phase::CruxEntry {
            claim: "claim-1".into(),
        },
        1_200,
    );
    let dispute = context.section(SectionKind::TheDispute).unwrap();
    assert_eq!(
        dispute
            .items
            .iter()
            .filter(|i| i.starts_with("What triggered it"))
            .count(),
        3
    );
    insta::assert_snapshot!("crux_entry", context.text);
}

#[test]
fn crux_exchange_includes_every_room_message_that_fits() {
    let at = fixture::position(|e| matches!(e, DebateEvent::CruxCardAdded { .. }));
    let board = fixture::blackboard_after(at);
    let context = assemble(
        &board,
        "theo",
        Phase::CruxExchange {
            room: "room-1".into(),
        },
        1_200,
    );
    let exchange = context.section(SectionKind::CruxExchange).unwrap();
    assert_eq!(exchange.items.len(), 4);
    insta::assert_snapshot!("crux_exchange", context.text);
}

#[test]
fn closing_has_the_whole_ledger_and_all_reflections() {
    let board = fixture::blackboard();
    let context = assemble(&board, "mara", Phase::Closing, 2_000);
    assert_eq!(
        context
            .section(SectionKind::KeyInsights)
            .unwrap()
            .items
            .len(),
        3
    );
    assert_eq!(
        context
            .section(SectionKind::EarlierRounds)
            .unwrap()
            .items
            .len(),
        3
    );
    insta::assert_snapshot!("closing", context.text);
}

#[test]
fn a_small_budget_sheds_the_least_important_sections_first() {
    let board = fixture::blackboard();
    let full = assemble(&board, "mara", Phase::Closing, 2_000);
    let small = assemble(&board, "mara", Phase::Closing, 300);
    assert!(small.total_tokens <= 300);
    assert!(small.section(SectionKind::DebateState).is_some());
    let kept = |c: &agon_context::AssembledContext, k| c.report(k).map_or(0, |r| r.items);
    assert!(
        kept(&small, SectionKind::RelevantEarlierContext)
            <= kept(&full, SectionKind::RelevantEarlierContext)
    );
    assert!(
        kept(&small, SectionKind::WhereEveryoneStands) > 0,
        "ledger survives a small budget"
    );
}
