//! Property: for any blackboard and any budget at or above the minimum, the
//! assembled context is within budget, for every phase; bad input errors, never panics.

use agon_context::{
    Assembler, ContextBudget, ContextError, ContextExtras, EvidencePassage, Phase, RetrievedMemory,
};
use agon_core::Blackboard;
use proptest::prelude::*;

use crate::fixture;

fn phases(board: &Blackboard) -> Vec<Phase> {
    let mut phases = vec![Phase::Opening, Phase::Closing];
    for aspect in board.aspects() {
        phases.push(Phase::Take {
            aspect: aspect.id.clone(),
            miniround: 0,
        });
        phases.push(Phase::Take {
            aspect: aspect.id.clone(),
            miniround: 2,
        });
    }
    for claim in board.claims() {
        phases.push(Phase::CruxEntry {
            claim: claim.id.clone(),
        });
        if let Some(room) = &claim.crux_room {
            phases.push(Phase::CruxExchange { room: room.clone() });
        }
    }
    phases
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn assembled_context_is_always_within_budget(
        prefix in 1usize..=85,
        budget in ContextBudget::MIN_TOKENS..3_000,
        persona in prop::sample::select(vec!["mara", "theo", "priya"]),
        memory in ".{0,400}",
        memories in 0usize..12,
    ) {
        let events = fixture::events();
        let board = Blackboard::replay(&events[..prefix.min(events.len())]).unwrap();
        let extras = ContextExtras {
            memories: (0..memories).map(|i| RetrievedMemory { label: format!("m{i}"), content: memory.clone() }).collect(),
            evidence: (0..memories % 4).map(|i| EvidencePassage { id: format!("{i:08x}"), source: "essay.md".into(), content: memory.clone() }).collect(),
        };
        let assembler = Assembler::default();
        for phase in phases(&board) {
            match assembler.assemble(&board, persona, &phase, ContextBudget::new(budget).unwrap(), &extras) {
                Ok(context) => {
                    prop_assert!(context.total_tokens <= budget, "{phase:?}: {} > {budget}", context.total_tokens);
                    prop_assert!(context.text.starts_with("── DEBATE STATE"));
                }
                Err(ContextError::NotAParty { .. }) => {}
                Err(other) => prop_assert!(false, "{phase:?}: {other}"),
            }
        }
    }

    #[test]
    fn huge_texts_are_cut_to_fit(budget in ContextBudget::MIN_TOKENS..600, words in 1usize..3_000) {
        let mut events = fixture::events();
        if let agon_core::DebateEvent::DebateStarted { topic, .. } = &mut events[0] {
            topic.question = "why ".repeat(words);
        }
        let board = Blackboard::replay(&events).unwrap();
        let context = Assembler::default()
            .assemble(&board, "theo", &Phase::Closing, ContextBudget::new(budget).unwrap(), &ContextExtras::default())
            .unwrap();
        prop_assert!(context.total_tokens <= budget);
    }
}

#[test]
fn bad_input_gives_typed_errors() {
    let board = fixture::blackboard();
    let assembler = Assembler::default();
    let budget = ContextBudget::default();
    let none = ContextExtras::default();
    assert_eq!(
        ContextBudget::new(10),
        Err(ContextError::BudgetTooSmall {
            budget: 10,
            minimum: 128
        })
    );
    assert_eq!(
        assembler
            .assemble(&board, "zed", &Phase::Opening, budget, &none)
            .unwrap_err(),
        ContextError::UnknownPersona("zed".into())
    );
    assert_eq!(
        assembler
            .assemble(
                &board,
                "mara",
                &Phase::Take {
                    aspect: "nope".into(),
                    miniround: 0
                },
                budget,
                &none
            )
            .unwrap_err(),
        ContextError::UnknownAspect("nope".into())
    );
    assert_eq!(
        assembler
            .assemble(
                &board,
                "mara",
                &Phase::CruxEntry {
                    claim: "claim-9".into()
                },
                budget,
                &none
            )
            .unwrap_err(),
        ContextError::UnknownClaim("claim-9".into())
    );
    assert_eq!(
        assembler
            .assemble(
                &board,
                "priya",
                &Phase::CruxEntry {
                    claim: "claim-1".into()
                },
                budget,
                &none
            )
            .unwrap_err(),
        ContextError::NotAParty {
            persona: "priya".into(),
            claim: "claim-1".into()
        }
    );
    assert_eq!(
        assembler
            .assemble(
                &board,
                "mara",
                &Phase::CruxExchange {
                    room: "room-9".into()
                },
                budget,
                &none
            )
            .unwrap_err(),
        ContextError::UnknownCruxRoom("room-9".into())
    );
    assert_eq!(
        assembler
            .assemble(&Blackboard::new(), "mara", &Phase::Opening, budget, &none)
            .unwrap_err(),
        ContextError::NotStarted
    );
}
