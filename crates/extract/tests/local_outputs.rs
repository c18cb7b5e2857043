//! Real output of the local model (SmolLM2-135M, 9 demo debates on 7
//! topics; `fixtures/local_model_outputs.jsonl`, collected with `agon -vvv`
//! from the `structured output` trace lines) goes through the same
//! validation as in a debate: nothing junk may reach the position ledger,
//! the claims' texts, the crux cards, the round records or the reflections.

use agon_core::{
    Blackboard, DebateAspect, DebateEvent, DialogueMessage, MessageKind, Persona, Topic,
};
use agon_extract::{
    CruxCardPayload, ExtractionContext, PositionUpdate, ReflectionBatch, RoundRecordPayload,
    TurnAnalysis, analysis_events, parse_payload,
};
use serde_json::Value;

const NAMES: [&str; 3] = ["Mara", "Theo", "Priya"];

/// The demo's debate on `topic`, after Mara's first take on "Cost", with a
/// claim between Mara and Theo in a crux room.
fn board(topic: &str) -> Blackboard {
    let mut bb = Blackboard::new();
    let t0 = chrono::DateTime::UNIX_EPOCH;
    let events = [
        DebateEvent::DebateStarted {
            debate: "d-fixture".into(),
            topic: Topic::new(topic),
            aspects: vec![
                DebateAspect::new("aspect-1", "Cost", "Who pays."),
                DebateAspect::new("aspect-2", "Health", "Air and safety."),
            ],
            personas: NAMES
                .iter()
                .map(|n| Persona::debater(n.to_lowercase(), *n, "A stance.", "plain"))
                .collect(),
            time: t0,
            protocol: None,
        },
        DebateEvent::AspectStarted {
            aspect: "aspect-1".into(),
            round: 1,
        },
        DebateEvent::MessageAppended {
            message: DialogueMessage {
                id: "msg-1".into(),
                persona: "mara".into(),
                kind: MessageKind::Take,
                aspect: Some("aspect-1".into()),
                round: 1,
                miniround: Some(0),
                crux_room: None,
                content: "Cars cost the centre more than they bring.".into(),
                time: t0,
                reply_to: None,
                meta: None,
            },
        },
        DebateEvent::ClaimOpened {
            claim: "claim-1".into(),
            text: "Cars cost the centre more than they bring.".into(),
            personas: ["mara".into(), "theo".into()],
            round: 1,
            source_messages: vec!["msg-1".into()],
        },
    ];
    for e in &events {
        bb.apply(e).unwrap();
    }
    bb
}

/// The texts validation let through to the blackboard.
fn recorded_texts(bb: &Blackboard) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut push = |where_: &str, text: &str| out.push((where_.to_owned(), text.to_owned()));
    for (persona, p) in bb.positions() {
        push(&format!("{persona}.stance"), &p.overall_stance);
        for (aspect, a) in &p.aspects {
            push(&format!("{persona}.{aspect}.position"), &a.position);
            for e in a.evidence.iter().chain(&a.challenged) {
                push(&format!("{persona}.{aspect}.evidence/challenged"), e);
            }
        }
        for a in &p.agreements {
            push(&format!("{persona}.agreement"), &a.on);
        }
        for d in &p.disagreements {
            push(&format!("{persona}.disagreement"), &d.on);
        }
        for n in p.concessions.iter().chain(&p.shifts) {
            push(&format!("{persona}.concession/shift"), &n.text);
        }
    }
    for turn in bb.analyzed_turns() {
        for d in &turn.disagreements {
            push("judged claim", &d.claim);
        }
    }
    for c in bb.crux_cards() {
        push("card.question", &c.question);
        push("card.diagnosis", &c.diagnosis);
        for p in &c.positions {
            push("card.reasoning", &p.reasoning);
            push("card.falsifier", &p.falsifier);
        }
    }
    for r in bb.rounds() {
        push("round.summary", &r.summary);
        for t in r.takes.values() {
            push("round.take", &t.position);
            push("round.key_argument", &t.key_argument);
            for e in &t.evidence_cited {
                push("round.evidence", e);
            }
        }
        for d in r.new_disagreements.iter().chain(&r.shifts) {
            push("round.disagreement/shift", d);
        }
    }
    for r in bb.reflections() {
        push("reflection", &r.content);
    }
    out.retain(|(_, t)| !t.is_empty());
    out
}

/// An independent check for what the issue calls junk: no letters, JSON
/// debris, an echo of a prompt placeholder, a bare persona name, or the
/// question repeated.
fn looks_like_junk(text: &str, topic: &str) -> bool {
    let t = text.trim();
    let bare = t
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    !t.chars().any(char::is_alphabetic)
        || ["{{", "}}", "<#", "]}", "[]", "\":"]
            .iter()
            .any(|m| t.contains(m))
        || t.to_lowercase().contains("or null")
        || NAMES.iter().any(|n| n.eq_ignore_ascii_case(&bare))
        || bare
            == topic
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
}

#[test]
fn no_junk_from_the_local_model_reaches_the_blackboard() {
    let text = include_str!("fixtures/local_model_outputs.jsonl");
    let mut outputs = 0;
    let mut rejected = 0;
    let mut recorded = 0;
    for (line_no, line) in text.lines().enumerate() {
        let fixture: Value = serde_json::from_str(line).unwrap();
        let topic = fixture["topic"].as_str().unwrap();
        let output = fixture["output"].clone();
        let mut bb = board(topic);
        let speaker = "mara".into();
        let ctx = ExtractionContext::new(&bb).with_speaker(&speaker);
        let (events, notes): (Vec<DebateEvent>, Vec<String>) =
            match fixture["schema"].as_str().unwrap() {
                "turn_analysis" => match parse_payload::<TurnAnalysis>(output) {
                    Ok(p) => {
                        let (position, judged) = p.validate(&ctx).unwrap();
                        let notes = [position.notes(), judged.notes()].concat();
                        let events = analysis_events(
                            &"msg-1".into(),
                            &speaker,
                            Some(&"aspect-1".into()),
                            1,
                            Some(position),
                            Some(judged),
                        );
                        (events, notes)
                    }
                    Err(_) => continue,
                },
                "position_update" => match parse_payload::<PositionUpdate>(output) {
                    Ok(p) => {
                        let v = p.validate(&ctx).unwrap();
                        let notes = v.notes().to_vec();
                        (v.into_events(&speaker, Some(&"aspect-1".into()), 1), notes)
                    }
                    Err(_) => continue,
                },
                "round_record" => match parse_payload::<RoundRecordPayload>(output) {
                    Ok(p) => match p.validate(&ctx) {
                        Ok(v) => {
                            let notes = v.notes().to_vec();
                            (v.into_events(&"aspect-1".into(), 1), notes)
                        }
                        Err(_) => continue,
                    },
                    Err(_) => continue,
                },
                "crux_card" => match parse_payload::<CruxCardPayload>(output) {
                    Ok(p) => match p.validate(&ctx, Some(&"claim-1".into())) {
                        Ok(v) => {
                            let notes = v.notes().to_vec();
                            (v.into_events(Some(&"claim-1".into()), None, 1), notes)
                        }
                        Err(_) => continue,
                    },
                    Err(_) => continue,
                },
                "reflection_batch" => match parse_payload::<ReflectionBatch>(output) {
                    Ok(p) => match p.validate(&ctx) {
                        Ok(v) => {
                            let notes = v.notes().to_vec();
                            (v.into_events(1, &["msg-1".into()]), notes)
                        }
                        Err(_) => continue,
                    },
                    Err(_) => continue,
                },
                other => panic!("line {}: unknown schema {other}", line_no + 1),
            };
        outputs += 1;
        rejected += notes.iter().filter(|n| n.contains(": rejected ")).count();
        for e in &events {
            bb.apply(e)
                .unwrap_or_else(|err| panic!("line {}: {err}", line_no + 1));
        }
        for (place, text) in recorded_texts(&bb) {
            recorded += 1;
            assert!(
                !looks_like_junk(&text, topic),
                "line {}: junk {text:?} reached {place}",
                line_no + 1
            );
        }
    }
    // The fixtures are real: most outputs validate, validation had junk to
    // reject, and plenty of text still reached the ledger.
    assert!(outputs >= 100, "{outputs} outputs validated");
    assert!(rejected >= 50, "{rejected} junk values rejected");
    assert!(recorded >= 100, "{recorded} texts recorded");
}
