//! The deliberation protocol (seeds 001 + 002) end to end on the scripted
//! model: round-robin and listening turns, rolling summaries at the
//! configured points, pattern detection, consensus, failures, resume.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use agon_config::{DebateConfig, PersonaConfig, Preset, ProtocolKind};
use agon_core::{Blackboard, ProposalStatus, Reaction, StepId, SummaryScope};
use agon_llm::PriceTable;
use agon_orchestrator::{Models, RunControl, RunOutcome};
use agon_protocol::TurnMode;
use agon_testkit::ScriptedModel;
use support::sqlite;

fn persona(name: &str) -> PersonaConfig {
    PersonaConfig {
        corpus: Vec::new(),
        tools: Vec::new(),
        tool_call_limit: None,
        id: None,
        name: name.into(),
        contract: format!("{name} cares about the city budget."),
        voice: "plain".into(),
        model: None,
    }
}

/// `n` participants, `turns` turns, round robin, the session preset with
/// a summary every `every` messages (kept verbatim: `every`), no consensus stop.
pub fn deliberation_config(n: usize, turns: u32, every: usize) -> DebateConfig {
    let mut c = DebateConfig {
        protocol: ProtocolKind::Deliberation,
        topic: "How should the city spend its transport budget?".into(),
        personas: ["Ada", "Bo", "Cy", "Di"][..n]
            .iter()
            .map(|p| persona(p))
            .collect(),
        ..DebateConfig::default()
    };
    c.memory.enabled = false;
    c.deliberation.turns = turns;
    c.deliberation.preset = Preset::Session;
    c.deliberation.summary_every = Some(every);
    c.deliberation.keep_recent = Some(every);
    c.deliberation.stop_on_consensus = false;
    c
}

fn scripted() -> (Models, Arc<ScriptedModel>) {
    let model = Arc::new(ScriptedModel::new(Duration::ZERO));
    (
        Models::uniform(model.clone(), PriceTable::with_defaults()),
        model,
    )
}

async fn run(config: &DebateConfig) -> Blackboard {
    let (models, _) = scripted();
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(config).await.unwrap();
    let outcome = orch.run(&id, &models, RunControl::default()).await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let bb = orch.store().load(&id).await.unwrap().0;
    assert!(
        bb.protocol_recorded(),
        "debate_started records the protocol"
    );
    assert_eq!(bb.protocol(), config.protocol);
    bb
}

fn rolling(bb: &Blackboard) -> Vec<(usize, usize)> {
    bb.summaries()
        .iter()
        .filter(|s| s.scope == SummaryScope::Rolling)
        .map(|s| (s.span.start, s.span.end))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_robin_summarizes_exactly_at_the_cadence() {
    let bb = run(&deliberation_config(3, 40, 6)).await;
    assert_eq!(bb.messages().len(), 40);
    // Speakers in order.
    for (i, m) in bb.messages().iter().enumerate() {
        let expected = ["ada", "bo", "cy"][i % 3];
        assert_eq!(m.persona.as_str(), expected, "turn {}", i + 1);
    }
    // A summary is due once 6 are kept and 6 more came: at 12, 18, 24, 30, 36
    // messages, each folding the 6 after the previous one.
    assert_eq!(
        rolling(&bb),
        vec![(0, 6), (6, 12), (12, 18), (18, 24), (24, 30)]
    );
    // Each was made right when its point was reached: its time is after
    // the last message it needed and before the next turn.
    for s in bb.summaries() {
        let needed = s.span.end + 6;
        assert!(bb.messages()[needed - 1].time <= s.time);
        if let Some(next) = bb.messages().get(needed) {
            assert!(s.time <= next.time);
        }
    }
    assert!(bb.warnings().is_empty(), "{:?}", bb.warnings());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proposals_reactions_and_consensus_come_from_the_patterns() {
    let mut config = deliberation_config(3, 30, 12);
    config.deliberation.stop_on_consensus = true;
    let bb = run(&config).await;
    // Turn 1 proposes P1, turns 2 and 3 support it: everyone agrees, the
    // session stops at the consensus.
    assert_eq!(bb.messages().len(), 3);
    let p1 = &bb.proposals()[0];
    assert_eq!(p1.id.as_str(), "P1");
    assert_eq!(p1.status, ProposalStatus::Accepted);
    assert_eq!(p1.reactions.len(), 2);
    assert!(p1.reactions.values().all(|r| *r == Reaction::Support));
    let d = &bb.decisions()[0];
    assert_eq!(d.supporting.len(), 3);
    assert_eq!(d.topic, "proposal P1");
    assert!(!bb.participation()["ada"].key_contributions.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listening_agents_pick_the_speaker() {
    let mut config = deliberation_config(4, 25, 12);
    config.deliberation.mode = TurnMode::Listen;
    let bb = run(&config).await;
    assert_eq!(bb.messages().len(), 25);
    for turn in 2..=25u32 {
        let bids = bb.bids(turn).unwrap();
        let speaker = &bb.messages()[turn as usize - 1].persona;
        let previous = &bb.messages()[turn as usize - 2].persona;
        // The last speaker is not asked and does not speak twice in a row.
        assert_eq!(bids.len(), 3, "turn {turn}");
        assert!(bids.iter().all(|b| &b.persona != previous));
        assert_ne!(speaker, previous);
        let top = bids.iter().filter(|b| b.respond).map(|b| b.urgency).max();
        match top {
            Some(top) => {
                let chosen = bids.iter().find(|b| &b.persona == speaker).unwrap();
                assert!(chosen.respond && chosen.urgency == top, "turn {turn}");
            }
            // Nobody volunteered (the script declines every fifth turn):
            // the one after the last speaker.
            None => assert_eq!(turn % 5, 0),
        }
    }
    assert!(bb.warnings().is_empty(), "{:?}", bb.warnings());
}

/// What [`Tampered`] breaks; everything else is scripted.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tamper {
    /// Rolling summaries fail.
    Summaries,
    /// The analysis model's detection readings are junk.
    Detection,
}

/// The scripted model with one kind of call broken.
struct Tampered(ScriptedModel, Tamper);

#[async_trait::async_trait]
impl agon_llm::ChatModel for Tampered {
    fn provider(&self) -> &str {
        "scripted"
    }
    fn model_id(&self) -> &str {
        "scripted"
    }
    async fn complete(
        &self,
        request: agon_llm::ChatRequest,
    ) -> Result<agon_llm::ChatResponse, agon_llm::ProviderError> {
        let summary = request.messages.iter().any(|m| {
            m.content
                .contains("Write one summary of the whole discussion")
        });
        if self.1 == Tamper::Summaries && summary {
            return Err(agon_llm::ProviderError::InvalidRequest {
                reason: "summaries are down".into(),
            });
        }
        self.0.complete(request).await
    }
    async fn complete_json(
        &self,
        request: agon_llm::ChatRequest,
        schema: &agon_llm::JsonSchema,
    ) -> Result<agon_llm::JsonResponse, agon_llm::ProviderError> {
        let mut out = self.0.complete_json(request, schema).await?;
        if self.1 == Tamper::Detection && schema.name == "deliberation_detection" {
            out.value = serde_json::json!({"messages": "none"});
        }
        Ok(out)
    }
    async fn stream(
        &self,
        request: agon_llm::ChatRequest,
    ) -> Result<agon_llm::ChatStream, agon_llm::ProviderError> {
        self.0.stream(request).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_summary_is_a_warning_and_the_session_goes_on() {
    let config = deliberation_config(3, 30, 6);
    let model = Arc::new(Tampered(
        ScriptedModel::new(Duration::ZERO),
        Tamper::Summaries,
    ));
    let models = Models::uniform(model, PriceTable::with_defaults());
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&config).await.unwrap();
    let outcome = orch.run(&id, &models, RunControl::default()).await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let bb = orch.store().load(&id).await.unwrap().0;
    assert_eq!(bb.messages().len(), 30);
    assert!(rolling(&bb).is_empty());
    let failed: Vec<usize> = bb
        .warnings()
        .iter()
        .filter_map(|w| match w.step {
            StepId::RollingSummary { at } => Some(at),
            _ => None,
        })
        .collect();
    // Tried at 12 messages, then not again until 6 more messages came.
    assert_eq!(failed, vec![12, 18, 24]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_session_resumes_to_the_same_log() {
    let config = deliberation_config(3, 30, 6);
    let whole = run(&config).await;

    // Slow enough that a stop lands mid-session.
    let model = Arc::new(ScriptedModel::new(Duration::from_millis(4)));
    let models = Models::uniform(model, PriceTable::with_defaults());
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&config).await.unwrap();
    let mut stopped = 0;
    for stop_after in [5usize, 13, 22] {
        let control = RunControl::default();
        let stop = control.stop.clone();
        let store = orch.store().clone();
        let id2 = id.clone();
        let watcher = tokio::spawn(async move {
            loop {
                let n = store.load(&id2).await.unwrap().0.messages().len();
                if n >= stop_after {
                    stop.cancel();
                    return;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        });
        if orch.run(&id, &models, control).await.unwrap() == RunOutcome::Stopped {
            stopped += 1;
        }
        watcher.abort();
    }
    assert_eq!(
        stopped, 3,
        "every run before the last was stopped mid-session"
    );
    let outcome = orch.run(&id, &models, RunControl::default()).await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    let resumed = orch.store().load(&id).await.unwrap().0;
    let text = |bb: &Blackboard| -> Vec<(String, String)> {
        bb.messages()
            .iter()
            .map(|m| (m.persona.to_string(), m.content.clone()))
            .collect()
    };
    assert_eq!(text(&resumed), text(&whole));
    assert_eq!(rolling(&resumed), rolling(&whole));
    assert_eq!(resumed.proposals(), {
        let mut p = whole.proposals().to_vec();
        for (a, b) in p.iter_mut().zip(resumed.proposals()) {
            a.time = b.time;
        }
        p
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_analysis_on_the_ledger_and_claims_work_here_too() {
    let mut config = deliberation_config(3, 24, 12);
    config.deliberation.analysis = true;
    config.deliberation.analysis_every = 6;
    let bb = run(&config).await;
    assert_eq!(bb.messages().len(), 24);
    for m in bb.messages() {
        assert!(bb.is_analyzed(&m.id), "{} analysed", m.id);
    }
    for p in bb.debaters() {
        let state = bb.position(&p.id).unwrap();
        assert!(!state.overall_stance.is_empty(), "{}'s stance", p.name);
    }
    // The scripted analysis judges the first two participants as
    // disagreeing in every batch: consecutive batches open a claim.
    assert!(!bb.claims().is_empty(), "{:?}", bb.warnings());
    assert!(bb.warnings().is_empty(), "{:?}", bb.warnings());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_analysis_model_reads_proposals_and_reactions() {
    use agon_config::DetectionSource;
    let mut config = deliberation_config(3, 12, 12);
    config.deliberation.detection = DetectionSource::Model;
    config.deliberation.analysis_every = 4;
    let bb = run(&config).await;
    assert_eq!(bb.messages().len(), 12);
    for m in bb.messages() {
        assert!(bb.is_detected(&m.id), "{} read", m.id);
    }
    // The model reads each batch after it is spoken: turn 1's proposal is
    // P1, and the speakers of turns 2-4 (who did not see it yet) propose
    // their own.
    let p1 = &bb.proposals()[0];
    assert_eq!(
        p1.content,
        "Ada suggests plan 1: fund the bus lanes first and review in a year."
    );
    assert_eq!(p1.proposer.as_str(), "ada");
    // From the second batch on, the speakers see the open proposals and
    // react by id; the model reads the reactions.
    assert!(
        bb.proposals().iter().any(|p| !p.reactions.is_empty()),
        "{:?}",
        bb.proposals()
    );
    assert!(bb.warnings().is_empty(), "{:?}", bb.warnings());

    // With patterns and model both, the patterns record at once and the
    // model adds nothing twice: the same memory as the patterns alone.
    config.deliberation.detection = DetectionSource::Both;
    let both = run(&config).await;
    config.deliberation.detection = DetectionSource::Patterns;
    let patterns = run(&config).await;
    let memory = |b: &Blackboard| {
        (
            b.proposals()
                .iter()
                .map(|p| (p.id.clone(), p.status, p.reactions.clone()))
                .collect::<Vec<_>>(),
            b.decisions()
                .iter()
                .map(|d| d.outcome.clone())
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(memory(&both), memory(&patterns));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_reading_is_a_warning_and_is_not_asked_again() {
    use agon_config::DetectionSource;
    let mut config = deliberation_config(3, 8, 12);
    config.deliberation.detection = DetectionSource::Model;
    config.deliberation.analysis_every = 4;
    let models = Models::uniform(
        Arc::new(Tampered(
            ScriptedModel::new(Duration::ZERO),
            Tamper::Detection,
        )),
        PriceTable::with_defaults(),
    );
    let orch = agon_app::orchestrator_for(sqlite().await);
    let id = orch.create(&config).await.unwrap();
    assert_eq!(
        orch.run(&id, &models, RunControl::default()).await.unwrap(),
        RunOutcome::Finished
    );
    let bb = orch.store().load(&id).await.unwrap().0;
    assert_eq!(bb.messages().len(), 8);
    assert!(bb.proposals().is_empty());
    let failed: Vec<String> = bb
        .warnings()
        .iter()
        .filter(|w| matches!(w.step, StepId::Detection(_)))
        .map(|w| w.step.to_string())
        .collect();
    assert_eq!(
        failed,
        vec![
            "deliberation_detection (msg-1)",
            "deliberation_detection (msg-5)"
        ]
    );
}
