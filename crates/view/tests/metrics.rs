//! Debate-quality metrics on a small hand-written log with known answers.

use crate::common::{message, started, t};

use agon_core::{AnalysisPart, AspectPositionUpdate, DebateEvent, StepId};
use agon_view::debate_metrics;

fn analysed(message: &str, contradiction: Option<&str>) -> DebateEvent {
    DebateEvent::TurnAnalyzed {
        message: message.into(),
        disagreements: vec![],
        importance: None,
        contradiction: contradiction.map(str::to_owned),
        window_end: true,
    }
}

fn stance(persona: &str, stance: &str, evidence: &[&str]) -> DebateEvent {
    DebateEvent::PositionUpdated {
        persona: persona.into(),
        round: 1,
        overall_stance: Some(stance.into()),
        aspect: Some(AspectPositionUpdate {
            aspect: "safety".into(),
            position: None,
            evidence: evidence.iter().map(|e| (*e).to_owned()).collect(),
            challenged: vec![],
            answered: vec![],
        }),
    }
}

fn usage(role: &str, input: u64, output: u64) -> DebateEvent {
    DebateEvent::UsageRecorded {
        role: role.into(),
        model: "m".into(),
        calls: 2,
        input_tokens: input,
        output_tokens: output,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        cost_micro_usd: None,
        cost_without_cache_micro_usd: None,
    }
}

#[test]
fn metrics_of_a_small_debate_with_known_answers() {
    let events = vec![
        started(),
        DebateEvent::AspectStarted {
            aspect: "safety".into(),
            round: 1,
        },
        DebateEvent::MessageAppended {
            message: message("m1", "ada", "Cars kill 40 people a year here."),
        },
        stance(
            "ada",
            "Ban cars",
            &["40 road deaths every year in the centre"],
        ),
        analysed("m1", None),
        // Bo takes up Ada's evidence, and contradicts himself.
        DebateEvent::MessageAppended {
            message: message(
                "m2",
                "bo",
                "Those 40 road deaths every year are outside the centre.",
            ),
        },
        stance("bo", "Keep cars", &[]),
        analysed("m2", Some("he said earlier that deaths matter most")),
        // Ada repeats her own evidence; its analysis fails.
        DebateEvent::MessageAppended {
            message: message(
                "m3",
                "ada",
                "40 road deaths every year in the centre is too many.",
            ),
        },
        DebateEvent::StepFailed {
            step: StepId::Analysis {
                message: "m3".into(),
                part: AnalysisPart::Combined,
            },
            reason: "timeout".into(),
            time: t(2),
        },
        analysed("m3", None),
        DebateEvent::MessageAppended {
            message: message("m4", "bo", "Shops need deliveries."),
        },
        stance("ada", "Ban cars on weekends", &[]),
        DebateEvent::ConcessionRecorded {
            persona: "bo".into(),
            text: "some streets could close".into(),
            round: 1,
        },
        analysed("m4", None),
        usage("debater", 800, 200),
        usage("extractor", 500, 100),
        usage("reflector", 150, 50),
        usage("judge", 300, 0),
    ];
    let m = debate_metrics(&events).unwrap();
    assert_eq!(m.messages, 4);
    assert_eq!(m.messages_analysed, 3, "m3's analysis failed");
    assert_eq!(m.ledger_coverage, Some(0.75));
    assert_eq!(m.evidence_reuse, 2, "m2 (Ada's evidence) and m3 (her own)");
    assert_eq!(m.evidence_reuse_others, 1);
    assert_eq!(m.self_contradictions, 1);
    assert_eq!(m.claims_opened, 0);
    assert_eq!(m.crux_compression, None);
    assert_eq!(m.disagreement_entropy, None);
    let ada = &m.personas[0];
    assert_eq!((ada.name.as_str(), ada.messages), ("Ada", 2));
    assert_eq!(ada.initial_stance, "Ban cars");
    assert_eq!(ada.final_stance, "Ban cars on weekends");
    assert!(ada.stance_changed);
    assert_eq!((ada.evidence, ada.evidence_reuse), (1, 1));
    let bo = &m.personas[1];
    assert!(!bo.stance_changed);
    assert_eq!(
        (bo.concessions, bo.self_contradictions, bo.evidence_reuse),
        (1, 1, 1)
    );
    assert_eq!(m.personas.len(), 2, "the judge is no debater");
    // Memory: extractor 600 + reflector 200 against the debaters' 1,000.
    assert_eq!((m.memory_tokens, m.utterance_tokens), (800, 1_000));
    assert_eq!(m.memory_cost, Some(0.8));
    assert_eq!(m.usage["judge"].total(), 300);
}
