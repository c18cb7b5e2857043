//! Full small debates on the real local model (SmolLM2-135M, short outputs),
//! on SQLite and on PostgreSQL. The model files come from `cargo xtask
//! models` (the test suite sets `AGON_MODELS_DIR`); PostgreSQL from
//! `AGON_TEST_DATABASE_URL`. Neither is skipped when missing: the test fails.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::field_reassign_with_default
)]

use crate::support;

use std::sync::{Arc, OnceLock};

use agon_config::{AspectConfig, DebateConfig, PersonaConfig};
use agon_core::MessageKind;
use agon_llm::{ChatModel, PriceTable};
use agon_local::LocalChat;
use agon_orchestrator::{Models, RunControl, RunOutcome};
use agon_store::EventStore;
use agon_view::report;

fn model() -> Arc<dyn ChatModel> {
    static MODEL: OnceLock<Arc<dyn ChatModel>> = OnceLock::new();
    Arc::clone(
        MODEL.get_or_init(|| Arc::new(LocalChat::smollm2().unwrap_or_else(|e| panic!("{e}")))),
    )
}

/// Two personas, one aspect, one miniround, a room with position statements
/// only: every step of the protocol with as few calls as possible.
fn tiny() -> DebateConfig {
    let mut c = DebateConfig::default();
    c.personas = vec![
        PersonaConfig {
            corpus: Vec::new(),
            tools: Vec::new(),
            tool_call_limit: None,
            id: None,
            name: "Mara".into(),
            contract: "For car-free centres.".into(),
            voice: "direct".into(),
            model: None,
        },
        PersonaConfig {
            corpus: Vec::new(),
            tools: Vec::new(),
            tool_call_limit: None,
            id: None,
            name: "Theo".into(),
            contract: "Against bans.".into(),
            voice: "dry".into(),
            model: None,
        },
    ];
    c.aspects = vec![AspectConfig {
        label: "Cost".into(),
        description: "Who pays.".into(),
    }];
    c.minirounds = 1;
    c.synthesis = false;
    c.budget.context_tokens = 128;
    c.budget.utterance_max_tokens = 16;
    c.budget.utterance_words = 12;
    c.budget.structured_max_tokens = 160;
    c.detection.window = 2;
    c.crux.max_turns = 0;
    c.crux.check_every = 0;
    c.crux.min_rooms = 1;
    c.crux.max_rooms = 1;
    c
}

async fn debate_on(store: Arc<dyn EventStore>) {
    let orch = agon_app::orchestrator_for(store);
    let id = orch.create(&tiny()).await.unwrap();
    let models = Models::uniform(model(), PriceTable::with_defaults());
    assert_eq!(
        orch.run(&id, &models, RunControl::default()).await.unwrap(),
        RunOutcome::Finished
    );
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let count = |k: MessageKind| bb.messages().iter().filter(|m| m.kind == k).count();
    // Every turn is a message or a recorded skip (the cleaning may leave a
    // small model's answer with nothing of the speaker's own, twice).
    use agon_core::TurnKey;
    let opening = bb.skipped_turns(|t| matches!(t, TurnKey::Opening { .. }));
    let take = bb.skipped_turns(|t| matches!(t, TurnKey::Take { .. }));
    let closing = bb.skipped_turns(|t| matches!(t, TurnKey::Closing { .. }));
    assert_eq!(count(MessageKind::Opening) + opening, 2);
    assert_eq!(count(MessageKind::Take) + take, 2);
    assert_eq!(count(MessageKind::Closing) + closing, 2);
    assert!(
        bb.messages().len() >= 4,
        "most turns give an utterance: {:?}",
        bb.warnings()
    );
    assert!(bb.messages().iter().all(|m| !m.content.trim().is_empty()));
    // Every message analysed (a failed extraction is a recorded warning, never a lost message).
    assert!(bb.messages().iter().all(|m| bb.is_analyzed(&m.id)));
    // Constrained decoding: extraction output always parses and validates.
    let failed: Vec<_> = bb
        .warnings()
        .iter()
        .filter(|w| matches!(w.step.name(), "turn_analysis" | "position_extraction"))
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(
        bb.rounds().len()
            + bb.warnings()
                .iter()
                .filter(|w| w.step.name() == "round_record")
                .count(),
        1
    );
    // The room ran (promoted if detection opened nothing) and ended with its claim closed.
    assert_eq!(
        count(MessageKind::CruxPosition) + bb.skipped_turns(|t| matches!(t, TurnKey::Crux { .. })),
        2,
        "{:?}",
        bb.claims()
    );
    assert!(bb.claims().iter().all(|c| c.status.is_terminal()));
    let usage = &bb.usage()["debater"];
    assert!(usage.values().all(|u| u.calls >= 8 && u.output_tokens > 0));
    assert!(report::markdown(&bb).contains("## Position ledger"));
}

/// One real end-to-end structured debate on the local model, as there is
/// one per protocol (the store does not depend on the model: the debates on
/// PostgreSQL run the scripted model, in `load`, `scenario`, `trust` and
/// `evidence`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_debate_on_the_local_model_with_sqlite() {
    debate_on(support::sqlite().await).await;
}

/// A short dialectic debate on the local model: 2 agents, 1 round (2
/// proposals, 2 critiques, 2 refinements), its analysis and the judge's
/// structured solution, every message analysed into the ledger. (Two
/// rounds, to see round 1's analysis write the agents' summaries, cost
/// twice the time; the summaries' schema is checked on the local model in
/// agon-local's `every_extraction_schema_validates_greedy_and_sampled`,
/// their wiring on the scripted model in `tests/dialectic.rs`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_dialectic_debate_on_the_local_model() {
    use agon_config::ProtocolKind;
    use agon_context::prompts::dialectic::RoleKind;

    let mut c = DebateConfig {
        protocol: ProtocolKind::Dialectic,
        topic: "Design a rate limiter for a public HTTP API.".into(),
        ..DebateConfig::default()
    };
    c.dialectic
        .select_roles(&[RoleKind::Architect, RoleKind::Kiss]);
    c.dialectic.rounds = 1;
    c.dialectic.answer_max_tokens = 24;
    c.dialectic.answer_words = 20;
    c.dialectic.context_tokens = 256;
    c.budget.structured_max_tokens = 300;
    c.memory.enabled = false;
    let orch = agon_app::orchestrator_for(support::sqlite().await);
    let id = orch.create(&c).await.unwrap();
    let models = Models::uniform(model(), PriceTable::with_defaults());
    assert_eq!(
        orch.run(&id, &models, RunControl::default()).await.unwrap(),
        RunOutcome::Finished
    );
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let count =
        |f: &dyn Fn(&MessageKind) -> bool| bb.messages().iter().filter(|m| f(&m.kind)).count();
    assert_eq!(count(&|k| *k == MessageKind::Proposal), 2);
    assert_eq!(count(&|k| matches!(k, MessageKind::Critique { .. })), 2);
    assert_eq!(count(&|k| *k == MessageKind::Refinement), 2);
    for m in bb.messages() {
        assert!(!m.content.trim().is_empty());
        let meta = m.meta.as_ref().unwrap();
        assert!(meta.input_tokens > 0 && meta.output_tokens > 0, "{meta:?}");
        assert!(
            bb.is_analyzed(&m.id),
            "{} analysed (or its failure recorded)",
            m.id
        );
    }
    // The structured solution, or (if the small model failed its schema
    // twice) the plain-text one with its warning: never no solution.
    let solution = bb.solution().expect("a solution");
    assert!(!solution.description.trim().is_empty());
    assert!(solution.confidence.is_some() || !bb.warnings().is_empty());
    let md = report::markdown(&bb);
    assert!(
        md.contains("## Final Synthesis")
            && md.contains("| agent-kiss | Simplicity Advocate | kiss | SmolLM2"),
        "{md}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_deliberation_on_the_local_model() {
    use agon_config::{ProtocolKind, TurnMode};
    use agon_core::{StepId, SummaryScope, TurnKey};

    let mut c = DebateConfig {
        protocol: ProtocolKind::Deliberation,
        topic: "How should the city spend its transport budget?".into(),
        ..DebateConfig::default()
    };
    c.personas = tiny().personas;
    c.memory.enabled = false;
    let d = &mut c.deliberation;
    // Six turns: enough for a rolling summary (of turns 1-2 once four are
    // said, two kept verbatim) and every listening turn (the breadth of the
    // protocol is the scripted model's, in tests/deliberation.rs).
    d.turns = 6;
    d.mode = TurnMode::Listen;
    d.summary_every = Some(2);
    d.keep_recent = Some(2);
    d.total_tokens = Some(1_024);
    d.system_tokens = Some(256);
    d.summary_tokens = Some(64);
    d.recent_tokens = Some(640);
    d.stop_on_consensus = false;
    d.answer_max_tokens = 24;
    d.answer_words = 20;
    c.budget.structured_max_tokens = 80;
    c.validate("test").unwrap();
    let orch = agon_app::orchestrator_for(support::sqlite().await);
    let id = orch.create(&c).await.unwrap();
    let models = Models::uniform(model(), PriceTable::with_defaults());
    assert_eq!(
        orch.run(&id, &models, RunControl::default()).await.unwrap(),
        RunOutcome::Finished
    );
    let (bb, _) = orch.store().load(&id).await.unwrap();
    let skipped = bb
        .warnings()
        .iter()
        .filter(|w| matches!(w.step, StepId::Utterance(TurnKey::Turn { .. })))
        .count();
    assert_eq!(bb.messages().len() + skipped, 6, "{:?}", bb.warnings());
    for m in bb.messages() {
        assert!(!m.content.trim().is_empty());
        assert_eq!(m.kind, MessageKind::Deliberation);
        let meta = m.meta.as_ref().unwrap();
        assert!(meta.input_tokens > 0 && meta.output_tokens > 0, "{meta:?}");
    }
    // Every listening turn has its bids (a failed evaluation is a decline
    // with its warning), and nobody speaks twice in a row.
    for turn in 2..=6u32 {
        if let Some(bids) = bb.bids(turn) {
            assert_eq!(bids.len(), 1, "turn {turn}");
        }
    }
    for pair in bb.messages().windows(2) {
        assert_ne!(pair[0].persona, pair[1].persona);
    }
    // Summaries at the cadence (each one recorded, or its failure).
    let spans: Vec<(usize, usize)> = bb
        .summaries()
        .iter()
        .filter(|s| s.scope == SummaryScope::Rolling)
        .map(|s| (s.span.start, s.span.end))
        .collect();
    let failed = bb
        .warnings()
        .iter()
        .filter(|w| matches!(w.step, StepId::RollingSummary { .. }))
        .count();
    assert!(spans.len() + failed >= 1, "{:?}", bb.warnings());
    for (i, span) in spans.iter().enumerate() {
        assert_eq!(span.1 - span.0, 2);
        if i > 0 {
            assert_eq!(spans[i - 1].1, span.0);
        }
    }
    let md = report::markdown(&bb);
    assert!(
        md.contains("# Deliberation:") && md.contains("## Statistics"),
        "{md}"
    );
}
