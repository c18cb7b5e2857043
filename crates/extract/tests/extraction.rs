//! Extraction payloads: schema generation, validation and conversion to events.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use crate::common;

use agon_core::{ClaimStatus, ClaimTransition, DebateEvent, Intensity};
use agon_extract::{
    CruxCardPayload, ExtractionContext, ExtractionError, Payload, PositionUpdate, ReflectionBatch,
    RoundRecordPayload, parse_payload,
};
use common::board;
use serde_json::json;

#[test]
fn schemas_are_generated_with_length_bounds() {
    let schema = PositionUpdate::json_schema();
    let text = schema.to_string();
    assert!(text.contains("\"overallStance\""), "{text}");
    assert!(text.contains("\"maxLength\":300"), "{text}");
    assert!(text.contains("\"maxItems\":5"), "{text}");
    let reflections = ReflectionBatch::json_schema().to_string();
    assert!(
        reflections.contains("\"maximum\":10") && reflections.contains("\"minimum\":1"),
        "{reflections}"
    );
    assert!(reflections.contains("\"maxItems\":3"));
    for schema in [
        RoundRecordPayload::json_schema(),
        CruxCardPayload::json_schema(),
    ] {
        assert_eq!(schema["type"], "object");
    }
}

#[test]
fn schemas_are_sent_flat_without_annotations_but_keep_every_field() {
    use agon_extract::{AspectPlan, TurnAnalysis};
    fn annotations(v: &serde_json::Value, found: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, child) in m {
                    if ["description", "title", "$schema", "default", "format"]
                        .contains(&k.as_str())
                    {
                        found.push(k.clone());
                    }
                    if k == "properties" || k == "$defs" {
                        child
                            .as_object()
                            .unwrap()
                            .values()
                            .for_each(|s| annotations(s, found));
                    } else {
                        annotations(child, found);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| annotations(x, found)),
            _ => {}
        }
    }
    for schema in [TurnAnalysis::json_schema(), AspectPlan::json_schema()] {
        let mut found = Vec::new();
        annotations(&schema, &mut found);
        assert!(found.is_empty(), "{found:?} in {schema}");
    }
    // A property called `description` is a field, not an annotation.
    let plan = AspectPlan::json_schema();
    assert_eq!(
        plan["properties"]["aspects"]["items"]["properties"]["description"]["maxLength"], 200,
        "{plan}"
    );
    // Flat: no definitions to look up, optional objects nullable in place,
    // a choice of constants an enum.
    let analysis = TurnAnalysis::json_schema();
    let text = analysis.to_string();
    assert!(!text.contains("$ref") && !text.contains("$defs"), "{text}");
    let position = &analysis["properties"]["position"]["properties"];
    assert_eq!(
        position["aspectPosition"]["type"],
        json!(["object", "null"]),
        "{text}"
    );
    assert_eq!(
        position["newDisagreement"]["properties"]["intensity"],
        json!({"type": "string", "enum": ["mild", "strong"]})
    );
    let analysis = TurnAnalysis::json_schema().to_string();
    for field in [
        "overallStance",
        "answered",
        "importance",
        "contradiction",
        "confidence",
    ] {
        assert!(
            analysis.contains(&format!("\"{field}\"")),
            "{field}: {analysis}"
        );
    }
    assert!(analysis.len() < 1_700, "{} chars", analysis.len());
}

#[test]
fn position_update_is_repaired_and_becomes_events() {
    let b = board();
    let raw = json!({
        "overallStance": "  A ban saves lives and shops adapt.  ",
        "aspectPosition": {"position": "Safety first", "evidence": ["40 deaths a year", "40 deaths a year", " "], "challenged": []},
        "newAgreement": {"withPersona": "Nobody", "on": "something"},
        "newDisagreement": {"withPersona": "bo", "on": "whether vans need roads", "intensity": "strong"},
        "concession": "null",
        "shift": "x".repeat(400)
    });
    let update: PositionUpdate = parse_payload(raw).unwrap();
    let speaker = "ada".into();
    let ctx = ExtractionContext::new(&b).with_speaker(&speaker);
    let validated = update.validate(&ctx).unwrap();
    let v = validated.value();
    assert_eq!(
        v.overall_stance.as_deref(),
        Some("A ban saves lives and shops adapt.")
    );
    assert_eq!(
        v.aspect_position.as_ref().unwrap().evidence,
        vec!["40 deaths a year"]
    );
    assert!(v.new_agreement.is_none());
    assert_eq!(v.concession, None);
    assert_eq!(v.shift.as_ref().unwrap().chars().count(), 300);
    assert!(
        validated
            .notes()
            .iter()
            .any(|n| n.contains("dropped unknown persona \"Nobody\"")),
        "{:?}",
        validated.notes()
    );
    assert!(
        validated
            .notes()
            .iter()
            .any(|n| n.starts_with("shift: cut from 400"))
    );

    let events = validated.into_events(&speaker, Some(&"safety".into()), 1);
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(
        matches!(&events[1], DebateEvent::DisagreementRecorded { with, intensity: Intensity::Strong, .. } if with.as_str() == "bo")
    );
    let mut b = b;
    for event in &events {
        b.apply(event).unwrap();
    }
    assert_eq!(
        b.position(&speaker).unwrap().overall_stance,
        "A ban saves lives and shops adapt."
    );
}

/// One analysis step: validate `raw` as `speaker`'s position update on
/// `safety` and apply its events.
fn analyse(b: &mut agon_core::Blackboard, speaker: &str, raw: serde_json::Value) -> Vec<String> {
    let update: PositionUpdate = parse_payload(raw).unwrap();
    let speaker = speaker.into();
    let validated = update
        .validate(&ExtractionContext::new(b).with_speaker(&speaker))
        .unwrap();
    let notes = validated.notes().to_vec();
    for event in validated.into_events(&speaker, Some(&"safety".into()), 1) {
        b.apply(&event).unwrap();
    }
    notes
}

#[test]
fn a_challenge_answered_in_a_later_message_leaves_the_unanswered_list() {
    let mut b = board();
    let open = |b: &agon_core::Blackboard| -> Vec<String> {
        b.position(&"ada".into()).unwrap().aspects["safety"]
            .challenged
            .clone()
    };
    analyse(
        &mut b,
        "ada",
        json!({"aspectPosition": {"challenged": ["Deliveries need vans on the road", "Who pays for the buses?"]}}),
    );
    assert_eq!(open(&b).len(), 2);
    // A later message answers one: quoted loosely (case, punctuation, a
    // word left out), it still names the listed challenge.
    let notes = analyse(
        &mut b,
        "ada",
        json!({"aspectPosition": {"answered": ["deliveries need vans on road.", "Is the moon made of cheese?"]}, "importance": 14}),
    );
    assert_eq!(open(&b), ["Who pays for the buses?"]);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("moon") && n.contains("not one of the speaker's open challenges")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n == "importance: clamped 14 to 10"),
        "{notes:?}"
    );
    // Another persona cannot answer Ada's challenges away.
    analyse(
        &mut b,
        "bo",
        json!({"aspectPosition": {"answered": ["Who pays for the buses?"]}}),
    );
    assert_eq!(open(&b), ["Who pays for the buses?"]);
}

#[test]
fn a_reference_to_the_speaker_itself_is_dropped() {
    let b = board();
    let update: PositionUpdate =
        parse_payload(json!({"newAgreement": {"withPersona": "Ada", "on": "herself"}})).unwrap();
    let speaker = "ada".into();
    let validated = update
        .validate(&ExtractionContext::new(&b).with_speaker(&speaker))
        .unwrap();
    assert!(validated.value().new_agreement.is_none());
    assert!(
        validated.into_events(&speaker, None, 1).is_empty(),
        "nothing changed, no events"
    );
}

#[test]
fn shape_errors_name_the_payload_and_the_problem() {
    let err = parse_payload::<ReflectionBatch>(
        json!({"reflections": [{"content": "x", "type": "gossip", "importance": 3}]}),
    )
    .unwrap_err();
    assert!(matches!(
        err,
        ExtractionError::Shape {
            payload: "reflection_batch",
            ..
        }
    ));
    assert!(
        err.to_string().contains("unknown variant `gossip`"),
        "{err}"
    );
    let b = board();
    let err = PositionUpdate::default()
        .validate(&ExtractionContext::new(&b))
        .unwrap_err();
    assert!(err.to_string().contains("speaker"), "{err}");
}

#[test]
fn reflections_are_clamped_numbered_and_applied() {
    let mut b = board();
    let batch: ReflectionBatch = parse_payload(json!({"reflections": [
        {"content": "Ada and Bo talk past each other", "type": "pattern", "aboutPersonas": ["Ada", "Bo", "Zed"], "importance": 14},
        {"content": "  ", "type": "shift", "aboutPersonas": [], "importance": 3},
        {"content": "Bo escalates", "type": "escalation", "aboutPersonas": ["bo"], "importance": 0},
        {"content": "a", "type": "pattern", "importance": 5},
        {"content": "b", "type": "pattern", "importance": 5}
    ]}))
    .unwrap();
    let validated = batch.validate(&ExtractionContext::new(&b)).unwrap();
    let notes = validated.notes().join("\n");
    assert!(notes.contains("importance 14 clamped to 10"), "{notes}");
    assert!(notes.contains("importance 0 clamped to 1"));
    assert!(notes.contains("dropped unknown persona \"Zed\""));
    assert!(notes.contains("kept the first 3 of 4"));
    let events = validated.into_events(1, &["m1".into()]);
    for e in &events {
        b.apply(e).unwrap();
    }
    let ids: Vec<&str> = b.reflections().iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["reflection-1", "reflection-2", "reflection-3"]);
    assert_eq!(b.reflections()[0].importance, 10);
    assert_eq!(b.reflections()[1].importance, 1);
    let empty: ReflectionBatch = parse_payload(json!({"reflections": []})).unwrap();
    assert!(empty.validate(&ExtractionContext::new(&b)).is_err());
}

#[test]
fn round_record_drops_unknown_and_duplicate_takes() {
    let mut b = board();
    let payload: RoundRecordPayload = parse_payload(json!({
        "takes": [
            {"persona": "Ada", "position": "Ban now", "keyArgument": "Deaths", "evidenceCited": ["40 a year"], "targetedPersona": "Bo"},
            {"persona": "ada", "position": "again", "keyArgument": ""},
            {"persona": "Cy", "position": "?", "keyArgument": ""},
            {"persona": "Bo (shop owner)", "position": "Keep delivery access", "keyArgument": "Vans", "targetedPersona": "Bo"}
        ],
        "summary": "Safety versus trade.",
        "newDisagreements": ["vans"], "shifts": []
    }))
    .unwrap();
    let validated = payload.validate(&ExtractionContext::new(&b)).unwrap();
    assert_eq!(validated.value().takes.len(), 2);
    assert!(
        validated.value().takes[1].targeted_persona.is_none(),
        "targeting oneself is dropped"
    );
    for e in validated.into_events(&"safety".into(), 1) {
        b.apply(&e).unwrap();
    }
    assert_eq!(
        b.rounds()[0].takes["ada"]
            .targeted_persona
            .as_ref()
            .map(|p| p.as_str()),
        Some("bo")
    );
}

#[test]
fn crux_card_closes_its_claim() {
    let mut b = board();
    b.apply(&DebateEvent::ClaimOpened {
        claim: "c1".into(),
        text: "Vans need roads".into(),
        personas: ["ada".into(), "bo".into()],
        round: 1,
        source_messages: vec!["m2".into()],
    })
    .unwrap();
    b.apply(&DebateEvent::ClaimStatusChanged {
        claim: "c1".into(),
        transition: ClaimTransition::InCruxRoom { room: "r1".into() },
    })
    .unwrap();
    let card: CruxCardPayload = parse_payload(json!({
        "question": "Can deliveries work with time windows?",
        "positions": [
            {"persona": "Ada", "position": "YES", "reasoning": "Other cities do it", "falsifier": "Shops closing"},
            {"persona": "Judge", "position": "NO", "reasoning": "-", "falsifier": "-"},
            {"persona": "Bo", "position": "NUANCED", "reasoning": "Depends on hours", "falsifier": "A pilot that works"}
        ],
        "disagreementType": "evidence", "diagnosis": "They read the pilots differently.", "resolved": false
    }))
    .unwrap();
    let claim = "c1".into();
    let validated = card
        .validate(&ExtractionContext::new(&b), Some(&claim))
        .unwrap();
    assert_eq!(
        validated.value().positions.len(),
        2,
        "the judge is not a party"
    );
    for e in validated.into_events(Some(&claim), Some(&"r1".into()), 1) {
        b.apply(&e).unwrap();
    }
    let claim = b.claim(&claim).unwrap();
    assert_eq!(claim.status, ClaimStatus::Abandoned);
    assert_eq!(claim.card.as_ref().unwrap().id.as_str(), "card-1");
    let no_question: CruxCardPayload = parse_payload(json!({
        "question": " ", "positions": [], "disagreementType": "values", "diagnosis": "", "resolved": true
    }))
    .unwrap();
    assert!(matches!(
        no_question.validate(&ExtractionContext::new(&b), None),
        Err(ExtractionError::Invalid {
            field: "question",
            ..
        })
    ));
}

mod no_panics {
    use super::*;
    use proptest::prelude::*;

    fn any_text() -> impl Strategy<Value = String> {
        prop_oneof![
            ".{0,40}",
            "\\PC{0,400}",
            Just("null".to_owned()),
            "[ \t\n]{0,5}"
        ]
    }

    proptest! {
        #[test]
        fn validation_never_panics_on_any_strings_or_numbers(
            stance in any_text(), with in any_text(), on in any_text(), items in prop::collection::vec(any_text(), 0..9),
            importance in any::<i64>(), persona in any_text(),
        ) {
            let b = board();
            let speaker = "ada".into();
            let ctx = ExtractionContext::new(&b).with_speaker(&speaker);
            let update: PositionUpdate = parse_payload(json!({
                "overallStance": stance, "aspectPosition": {"position": on, "evidence": items, "challenged": items},
                "newAgreement": {"withPersona": with, "on": on}, "newDisagreement": {"withPersona": persona, "on": stance},
                "concession": on, "shift": with
            })).unwrap();
            let validated = update.validate(&ctx).unwrap();
            let mut applied = b.clone();
            for event in validated.into_events(&speaker, Some(&"safety".into()), 1) {
                prop_assert!(applied.apply(&event).is_ok(), "validated output must apply: {event:?}");
            }
            let batch: ReflectionBatch = parse_payload(json!({"reflections": [
                {"content": stance, "type": "pattern", "aboutPersonas": [persona, with], "importance": importance}
            ]})).unwrap();
            if let Ok(v) = batch.validate(&ExtractionContext::new(&b)) {
                for event in v.into_events(1, &[]) {
                    prop_assert!(applied.apply(&event).is_ok());
                }
            }
        }
    }
}
