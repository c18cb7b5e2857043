//! The structured debate's planner.

use agon_core::{Blackboard, ClaimStatus, MessageKind, StepId};
use agon_protocol::{CruxRules, Next, Step};

use crate::support::{Lag, Script, Sim, canonical, describe, rules};

/// Crux rooms off.
fn no_rooms() -> CruxRules {
    CruxRules {
        enabled: false,
        ..CruxRules::default()
    }
}

fn crux_rules() -> CruxRules {
    CruxRules {
        enabled: true,
        max_turns: 4,
        check_every: 2,
        max_rooms: 2,
        min_rooms: 2,
    }
}

/// The plan of every blackboard of a whole debate (2 aspects × 2
/// minirounds, two rooms, one of them promoted, synthesis), one line per
/// plan: the background list, then the next step. Background work is
/// applied only when the protocol waits, so the barriers show.
#[test]
fn the_plan_of_every_board_of_a_debate() {
    let mut sim = Sim::new(
        rules(2, 2, crux_rules(), true),
        Script::default(),
        Lag::Lazy,
    );
    sim.run(10_000);
    assert!(sim.finished());
    insta::assert_snapshot!(sim.trace.join("\n"));
}

#[test]
fn the_result_does_not_depend_on_when_background_work_is_applied() {
    let r = rules(2, 2, crux_rules(), true);
    let mut eager = Sim::new(r.clone(), Script::default(), Lag::Eager);
    let mut lazy = Sim::new(r, Script::default(), Lag::Lazy);
    eager.run(10_000);
    lazy.run(10_000);
    assert!(eager.finished() && lazy.finished());
    assert!(
        canonical(&eager.board) == canonical(&lazy.board),
        "eager and lazy runs differ"
    );
    assert_eq!(eager.board.crux_cards().len(), 2);
    assert_eq!(eager.board.rounds().len(), 2);
    assert!(!eager.board.reflections().is_empty());
}

/// Resume is "replay, then ask again": a run cut after any step and
/// continued from a snapshot of its blackboard ends exactly where an
/// uninterrupted run ends.
#[test]
fn a_debate_cut_after_any_step_resumes_to_the_same_end() {
    assert_resumes_to_the_same_end(&rules(2, 1, crux_rules(), true), 1..40);
}

/// A run of `r` cut after each of `cuts` steps and continued from a
/// snapshot of its blackboard ends where an uninterrupted run ends.
fn assert_resumes_to_the_same_end(
    r: &agon_protocol::StructuredRules,
    cuts: impl Iterator<Item = usize>,
) {
    let mut whole = Sim::new(r.clone(), Script::default(), Lag::Lazy);
    whole.run(10_000);
    let expected = canonical(&whole.board);
    for cut in cuts {
        let mut first = Sim::new(r.clone(), Script::default(), Lag::Lazy);
        first.run(cut);
        let snapshot = serde_json::to_string(&first.board).unwrap();
        let mut second = Sim::new(r.clone(), Script::default(), Lag::Lazy);
        second.board = serde_json::from_str::<Blackboard>(&snapshot).unwrap();
        second.run(10_000);
        assert!(canonical(&second.board) == expected, "cut after step {cut}");
    }
}

#[test]
fn a_speaker_waits_only_for_the_analysis_of_their_own_previous_message() {
    let mut sim = Sim::new(
        rules(1, 1, CruxRules::default(), false),
        Script::default(),
        Lag::Lazy,
    );
    // start, three openings, aspect 1 starts: nothing analysed yet.
    for _ in 0..5 {
        let Next::Step(step) = sim.protocol.plan(&sim.board).next else {
            panic!("expected a step")
        };
        sim.execute(*step);
    }
    let plan = sim.protocol.plan(&sim.board);
    assert_eq!(
        describe(&plan),
        "[analyse msg-1, analyse msg-2, analyse msg-3] -> wait"
    );
    // Mara's opening (msg-1) analysed: she may take her turn while the
    // other openings are still pending.
    assert!(sim.apply_background());
    let plan = sim.protocol.plan(&sim.board);
    assert_eq!(
        describe(&plan),
        "[analyse msg-2, analyse msg-3] -> speak take/aspect-1/0/mara"
    );
}

#[test]
fn the_round_record_and_reflection_follow_the_analyses_of_their_aspect() {
    let mut sim = Sim::new(rules(2, 1, no_rooms(), false), Script::default(), Lag::Lazy);
    sim.run(10_000);
    let lines: Vec<&String> = sim
        .trace
        .iter()
        .filter(|l| l.contains("record aspect-1"))
        .collect();
    let first = lines.first().unwrap();
    // The record is listed after every analysis of aspect 1's messages.
    let record = first.find("record aspect-1").unwrap();
    assert!(first[..record].contains("analyse msg-6"), "{first}");
    assert!(!first[record..].contains("msg-5,"), "{first}");
    // Reflections fire when the trigger is due, right after a record.
    assert!(
        sim.trace.iter().any(|l| l.starts_with("[reflect aspect-")),
        "{:#?}",
        sim.trace
    );
    assert_eq!(sim.board.rounds().len(), 2);
}

#[test]
fn skipped_turns_count_as_taken_and_the_debate_goes_on() {
    let script = Script {
        mute: Some("priya"),
        ..Script::default()
    };
    let mut sim = Sim::new(rules(2, 2, crux_rules(), true), script, Lag::Lazy);
    sim.run(10_000);
    assert!(sim.finished());
    assert!(
        sim.board
            .messages()
            .iter()
            .all(|m| m.persona.as_str() != "priya")
    );
    let skipped = sim
        .board
        .warnings()
        .iter()
        .filter(|w| matches!(w.step, StepId::Utterance(_)))
        .count();
    assert_eq!(skipped, 1 + 2 * 2 + 1, "opening, 4 takes, closing");
}

#[test]
fn failing_models_degrade_every_optional_step() {
    let script = Script {
        broken: true,
        ..Script::default()
    };
    let mut sim = Sim::new(rules(2, 1, crux_rules(), true), script, Lag::Eager);
    sim.run(10_000);
    assert!(sim.finished());
    let bb = &sim.board;
    let spoken = bb
        .messages()
        .iter()
        .filter(|m| m.kind != MessageKind::Synthesis);
    assert!(spoken.clone().all(|m| bb.is_analyzed(&m.id)));
    let analysis_failures = bb
        .warnings()
        .iter()
        .filter(|w| matches!(w.step, StepId::Analysis { .. }))
        .count();
    assert_eq!(analysis_failures, spoken.count());
    assert!(
        bb.warnings()
            .iter()
            .any(|w| matches!(w.step, StepId::RoundRecord(_)))
    );
    assert!(
        bb.claims().is_empty(),
        "no judgement, no claim, nothing to promote"
    );
}

#[test]
fn without_crux_rooms_or_synthesis_the_debate_goes_straight_to_closings_and_ends() {
    let mut r = rules(1, 1, no_rooms(), false);
    r.detection.mode = agon_protocol::DetectionMode::Off;
    let mut sim = Sim::new(r, Script::default(), Lag::Lazy);
    sim.run(10_000);
    assert!(sim.finished());
    assert!(sim.board.claims().is_empty());
    assert!(
        sim.board
            .messages()
            .iter()
            .all(|m| m.kind != MessageKind::Synthesis)
    );
    assert!(!sim.trace.iter().any(|l| l.contains("crux")));
}

#[test]
fn a_finished_debate_plans_nothing() {
    let mut sim = Sim::new(
        rules(1, 1, crux_rules(), true),
        Script::default(),
        Lag::Eager,
    );
    sim.run(10_000);
    let plan = sim.protocol.plan(&sim.board);
    assert_eq!(plan.next, Next::Finished);
    assert!(plan.background.is_empty());
    assert!(
        sim.board
            .claims()
            .iter()
            .all(|c| c.status != ClaimStatus::InCruxRoom)
    );
    assert!(matches!(
        Sim::new(
            rules(1, 1, crux_rules(), true),
            Script::default(),
            Lag::Eager
        )
        .protocol
        .plan(&Blackboard::new())
        .next,
        Next::Step(step) if matches!(*step, Step::Ask(agon_protocol::Ask::Start(_)))
    ));
}

/// Closings wait for the complete ledger (every analysis and round record),
/// not for a reflection still being written; finishing waits for it.
#[test]
fn closings_do_not_wait_for_a_pending_reflection() {
    let mut sim = Sim::new(rules(1, 1, no_rooms(), false), Script::default(), Lag::Lazy);
    sim.run(10_000);
    assert!(sim.finished());
    assert!(
        sim.trace
            .iter()
            .any(|l| l == "[reflect aspect-1] -> speak closing/mara"),
        "{:#?}",
        sim.trace
    );
    assert!(
        sim.trace
            .iter()
            .any(|l| l.starts_with("[analyse msg-") && l.ends_with("-> wait")),
        "the closings still wait for the analyses"
    );
    assert_eq!(sim.board.reflections().len(), 1);
}

/// Validation repairs are recorded after the step's events, never dropped.
#[test]
fn repairs_are_recorded_after_the_events_they_repaired() {
    let mut sim = Sim::new(
        rules(1, 1, no_rooms(), false),
        Script::default(),
        Lag::Eager,
    );
    sim.run(8); // start, openings, aspect 1, takes
    let bb = &sim.board;
    let output = serde_json::json!({
        "takes": [
            {"persona": "Mara", "position": "argued", "keyArgument": "costs", "evidenceCited": [], "targetedPersona": null},
            {"persona": "Zed", "position": "?", "keyArgument": "?", "evidenceCited": [], "targetedPersona": null}
        ],
        "summary": "Mara stated a position.", "newDisagreements": [], "shifts": []
    });
    let events = agon_protocol::background::round_record(
        bb,
        &"aspect-1".into(),
        1,
        Ok(output),
        crate::support::T0,
    );
    let kinds: Vec<&str> = events.iter().map(agon_core::DebateEvent::name).collect();
    assert_eq!(kinds, ["round_recorded", "output_repaired"]);
    let mut bb = bb.clone();
    for e in &events {
        bb.apply(e).unwrap();
    }
    let repair = &bb.repairs()[0];
    assert_eq!(repair.step, StepId::RoundRecord("aspect-1".into()));
    assert!(
        repair.notes.iter().any(|n| n.contains("Zed")),
        "{:?}",
        repair.notes
    );
}

/// `rules` with the miniround cadence: one analysis per group of turns.
fn batched(aspects: usize, minirounds: u32, crux: CruxRules) -> agon_protocol::StructuredRules {
    agon_protocol::StructuredRules {
        analysis: agon_protocol::AnalysisCadence::Miniround,
        ..rules(aspects, minirounds, crux, true)
    }
}

/// Every background list of a run, as the plans listed them (first
/// occurrence of each batch).
fn batches(sim: &Sim) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for line in &sim.trace {
        let listed = line.split(" -> ").next().unwrap_or_default();
        let listed = listed.strip_prefix('[').unwrap_or(listed);
        let listed = listed.strip_suffix(']').unwrap_or(listed);
        for part in listed.split(", ") {
            if part.starts_with("analyse [") && !seen.iter().any(|s| s == part) {
                seen.push(part.to_owned());
            }
        }
    }
    seen
}

#[test]
fn the_miniround_cadence_analyses_each_group_of_turns_in_one_call() {
    let mut sim = Sim::new(batched(2, 2, crux_rules()), Script::default(), Lag::Lazy);
    sim.run(10_000);
    assert!(sim.finished(), "{:#?}", sim.trace);
    // Openings, 2 aspects × 2 minirounds, 2 rooms, closings: 8 calls for
    // the 3 × (1 + 4 + 1) main-line messages and the rooms' turns.
    let listed = batches(&sim);
    assert_eq!(listed.len(), 8, "{listed:#?}");
    assert_eq!(listed[0], "analyse [msg-1 msg-2 msg-3]");
    assert_eq!(listed[1], "analyse [msg-4 msg-5 msg-6]");
    // Every debater message is analysed, none twice.
    let debater_messages = debater_messages(&sim.board);
    assert_eq!(sim.board.analyzed_turns().len(), debater_messages);
    // Each judged group is one window: only its last message ends one.
    let ends: Vec<&str> = sim
        .board
        .analyzed_turns()
        .iter()
        .filter(|t| t.window_end)
        .map(|t| t.message.as_str())
        .collect();
    for id in ["msg-3", "msg-6", "msg-9"] {
        assert!(ends.contains(&id), "{id} ends its group's window: {ends:?}");
    }
    for id in ["msg-1", "msg-2", "msg-4", "msg-5"] {
        assert!(!ends.contains(&id), "{id} is inside a window: {ends:?}");
    }
    // Windows judged in two consecutive groups open a claim (a room ran on
    // it), as two consecutive messages do under the message cadence.
    assert!(
        sim.board
            .claims()
            .iter()
            .any(|c| c.crux_room.is_some() && c.source_messages.len() == 2),
        "{:#?}",
        sim.board.claims()
    );
    assert_eq!(sim.board.crux_cards().len(), 2);
}

#[test]
fn a_crux_room_is_analysed_once_it_is_over_and_its_parties_do_not_wait() {
    let mut sim = Sim::new(batched(1, 2, crux_rules()), Script::default(), Lag::Lazy);
    sim.run(10_000);
    assert!(sim.finished());
    let rooms: Vec<&String> = sim
        .trace
        .iter()
        .filter(|l| l.contains("speak crux/") || l.contains("else speak crux/"))
        .collect();
    assert!(!rooms.is_empty(), "{:#?}", sim.trace);
    // While a room runs, nothing of it is listed for analysis and its
    // turns are never held up by a wait.
    for line in &rooms {
        assert!(line.starts_with("[] -> "), "{line}");
    }
    // The room's messages are analysed together, after its card.
    let first = sim
        .board
        .messages()
        .iter()
        .find_map(|m| m.crux_room.clone());
    let first_room: Vec<String> = sim
        .board
        .messages()
        .iter()
        .filter(|m| m.crux_room.is_some() && m.crux_room == first)
        .map(|m| m.id.to_string())
        .collect();
    assert!(first_room.len() > 2, "{first_room:?}");
    let listed = batches(&sim);
    let expected = format!(
        "analyse [{}]",
        first_room
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    );
    assert!(listed.contains(&expected), "{expected} in {listed:#?}");
}

#[test]
fn under_the_miniround_cadence_the_result_does_not_depend_on_timing_or_resume() {
    let r = batched(2, 2, crux_rules());
    let mut eager = Sim::new(r.clone(), Script::default(), Lag::Eager);
    let mut lazy = Sim::new(r.clone(), Script::default(), Lag::Lazy);
    eager.run(10_000);
    lazy.run(10_000);
    assert!(eager.finished() && lazy.finished());
    assert!(
        canonical(&eager.board) == canonical(&lazy.board),
        "eager and lazy differ"
    );
    assert_resumes_to_the_same_end(&r, (1..60).step_by(3));
}

#[test]
fn a_failed_batch_marks_every_message_of_its_group_analysed_with_a_warning() {
    let script = Script {
        broken: true,
        ..Script::default()
    };
    let mut sim = Sim::new(batched(1, 1, no_rooms()), script, Lag::Lazy);
    sim.run(10_000);
    assert!(sim.finished());
    let debater_messages = debater_messages(&sim.board);
    assert_eq!(sim.board.analyzed_turns().len(), debater_messages);
    let failed = sim
        .board
        .warnings()
        .iter()
        .filter(|w| matches!(w.step, StepId::Analysis { .. }))
        .count();
    assert_eq!(failed, debater_messages);
}

#[test]
fn an_openings_evidence_is_filed_under_the_first_aspect() {
    use agon_protocol::background::{self, AnalysisOutput};
    let mut sim = Sim::new(rules(2, 1, no_rooms(), false), Script::default(), Lag::Lazy);
    // The start, then the first opening.
    for _ in 0..2 {
        let Next::Step(step) = sim.protocol.plan(&sim.board).next else {
            panic!("expected a step")
        };
        sim.execute(*step);
    }
    let opening = sim.board.messages()[0].clone();
    assert_eq!(opening.kind, MessageKind::Opening);
    assert_eq!(opening.aspect, None);
    let out = AnalysisOutput {
        primary: Ok(serde_json::json!({
            "aspectPosition": {"position": null, "evidence": ["EV-1: a 2019 audit of 14 cities"]}
        })),
        window: None,
        combined: false,
    };
    let mode = position_only();
    let events = background::analysis(&sim.board, &opening.id, out, &mode, crate::support::T0);
    for e in &events {
        sim.board.apply(e).unwrap();
    }
    let state = sim.board.position(&opening.persona).unwrap();
    assert_eq!(
        state.aspects[&agon_core::AspectId::new("aspect-1")].evidence,
        vec!["EV-1: a 2019 audit of 14 cities".to_owned()]
    );
}

#[test]
fn a_batch_that_names_a_message_twice_goes_by_position_with_a_repair() {
    use agon_protocol::background::{self, AnalysisOutput};
    let mut sim = Sim::new(batched(1, 1, no_rooms()), Script::default(), Lag::Lazy);
    // The start and the three openings.
    for _ in 0..4 {
        let Next::Step(step) = sim.protocol.plan(&sim.board).next else {
            panic!("expected a step")
        };
        sim.execute(*step);
    }
    let ids: Vec<agon_core::MessageId> =
        sim.board.messages().iter().map(|m| m.id.clone()).collect();
    assert_eq!(ids.len(), 3);
    let entry = |id: &str, stance: &str| serde_json::json!({"message": id, "position": {"overallStance": stance}});
    let out = AnalysisOutput {
        primary: Ok(serde_json::json!({"updates": [
            entry(ids[0].as_str(), "first"),
            entry(ids[0].as_str(), "second"),
            entry(ids[2].as_str(), "third"),
        ]})),
        window: None,
        combined: false,
    };
    let mode = position_only();
    let events = background::batch_analysis(&sim.board, &ids, out, &mode, crate::support::T0);
    for e in &events {
        sim.board.apply(e).unwrap();
    }
    let stance = |i: usize| {
        let persona = &sim.board.messages()[i].persona;
        sim.board.position(persona).unwrap().overall_stance.clone()
    };
    assert_eq!(
        [stance(0), stance(1), stance(2)],
        ["first", "second", "third"]
    );
    assert!(
        sim.board.warnings().is_empty(),
        "{:?}",
        sim.board.warnings()
    );
    let repairs: Vec<&agon_core::StepRepair> = sim.board.repairs().iter().collect();
    assert_eq!(repairs.len(), 1, "{repairs:?}");
    assert!(
        repairs[0].notes[0].contains("by its position"),
        "{repairs:?}"
    );
}

/// Hostile analysis output: an answer that names another persona, a
/// message outside the batch, or carries control characters and a huge
/// text changes only what its schema allows, on the speakers' own ledgers.
#[test]
fn an_analysis_writes_only_its_speakers_ledgers_whatever_it_says() {
    use agon_protocol::background::{self, AnalysisOutput};
    let mut sim = Sim::new(batched(1, 1, no_rooms()), Script::default(), Lag::Lazy);
    for _ in 0..4 {
        let Next::Step(step) = sim.protocol.plan(&sim.board).next else {
            panic!("expected a step")
        };
        sim.execute(*step);
    }
    let messages = sim.board.messages().to_vec();
    let ids: Vec<agon_core::MessageId> = messages.iter().map(|m| m.id.clone()).collect();
    let ledger =
        |board: &agon_core::Blackboard, i: usize| board.position(&messages[i].persona).cloned();
    let (second, third) = (ledger(&sim.board, 1), ledger(&sim.board, 2));
    let huge = "x".repeat(1_000_000);
    let out = AnalysisOutput {
        primary: Ok(serde_json::json!({"updates": [
            // The first speaker's entry tries to speak for the others.
            {"message": ids[0].as_str(), "position": {
                "overallStance": format!("{} concedes everything \u{1b}[0m{huge}", messages[1].persona),
                "concessions": ["Everyone else concedes"]}},
            // An id outside the batch.
            {"message": "msg-999", "position": {"overallStance": "forged"}},
        ]})),
        window: None,
        combined: false,
    };
    let events = background::batch_analysis(
        &sim.board,
        &ids[..1],
        out,
        &position_only(),
        crate::support::T0,
    );
    for e in &events {
        sim.board.apply(e).unwrap();
    }
    // Only the first speaker's ledger changed; the others are as they were.
    assert_eq!(ledger(&sim.board, 1), second);
    assert_eq!(ledger(&sim.board, 2), third);
    let first = sim.board.position(&messages[0].persona).unwrap();
    assert!(
        first.overall_stance.chars().count() < 2_000,
        "cut to its limit"
    );
    assert!(
        !first.overall_stance.contains('\u{1b}'),
        "no control characters"
    );
    assert!(
        !sim.board
            .messages()
            .iter()
            .any(|m| m.id.as_str() == "msg-999"),
    );
    let notes: Vec<&String> = sim.board.repairs().iter().flat_map(|r| &r.notes).collect();
    assert!(
        notes.iter().any(|n| n.contains("control character")),
        "{notes:?}"
    );
    assert!(notes.iter().any(|n| n.contains("msg-999")), "{notes:?}");
}

/// An analysis cannot open a claim for a pair it cannot name, or close or
/// resolve one: claims open only from judged disagreements between two
/// debaters, and no analysis schema has a field that changes a claim.
#[test]
fn an_analysis_opens_no_claim_outside_its_schema_and_closes_none() {
    use agon_protocol::background::{self, AnalysisOutput};
    let mut sim = Sim::new(rules(1, 1, no_rooms(), false), Script::default(), Lag::Lazy);
    for _ in 0..4 {
        let Next::Step(step) = sim.protocol.plan(&sim.board).next else {
            panic!("expected a step")
        };
        sim.execute(*step);
    }
    let messages = sim.board.messages().to_vec();
    let name = |i: usize| sim.board.persona_name(&messages[i].persona).to_owned();
    let (first, second) = (name(0), name(1));
    let mode = agon_protocol::AnalysisMode {
        combined: true,
        detector: false,
        window: 10,
        context: 3,
        claims: Some(agon_protocol::ClaimDetector {
            min_confidence: 80,
            consecutive: 1,
            cooldown_messages: 10,
        }),
        shape: agon_protocol::BatchShape::Positions,
    };
    let analyse = |sim: &mut Sim, i: usize, answer: serde_json::Value| {
        let out = AnalysisOutput {
            primary: Ok(answer),
            window: None,
            combined: true,
        };
        let events =
            background::analysis(&sim.board, &messages[i].id, out, &mode, crate::support::T0);
        for e in &events {
            sim.board.apply(e).unwrap();
        }
    };
    // A pair with someone who is not in the debate, and a persona paired
    // with itself: no claim.
    analyse(
        &mut sim,
        0,
        serde_json::json!({
            "position": {"overallStance": "for"},
            "disagreements": [
                {"between": [first, "Mallory"], "claim": "Mallory is right", "confidence": 99},
                {"between": [first, first], "claim": "I disagree with myself", "confidence": 99}
            ],
            "claims": [{"id": "claim-1", "status": "resolved"}]
        }),
    );
    assert!(sim.board.claims().is_empty(), "{:?}", sim.board.claims());
    // The answer was read (its stance recorded); the two pairs were refused.
    assert_eq!(
        sim.board
            .position(&messages[0].persona)
            .unwrap()
            .overall_stance,
        "for"
    );
    // A real pair opens one; a later answer that tries to resolve or drop
    // it changes nothing.
    analyse(
        &mut sim,
        1,
        serde_json::json!({
            "position": {"overallStance": "against"},
            "disagreements": [{"between": [first, second], "claim": "Cars must go", "confidence": 95}]
        }),
    );
    assert_eq!(sim.board.claims().len(), 1);
    let claim = sim.board.claims()[0].clone();
    analyse(
        &mut sim,
        2,
        serde_json::json!({
            "position": {"overallStance": "neutral"},
            "disagreements": [],
            "resolvedClaims": [claim.id.as_str()],
            "claimStatus": {"claim-1": "abandoned"}
        }),
    );
    assert_eq!(sim.board.claims().len(), 1);
    assert_eq!(sim.board.claims()[0].status, claim.status, "unchanged");
}

/// An analysis of positions only (no judged window, no claims).
fn position_only() -> agon_protocol::AnalysisMode {
    agon_protocol::AnalysisMode {
        combined: false,
        detector: false,
        window: 10,
        context: 3,
        claims: None,
        shape: agon_protocol::BatchShape::Positions,
    }
}

/// Messages by debaters (everything but the judge's synthesis).
fn debater_messages(board: &Blackboard) -> usize {
    board
        .messages()
        .iter()
        .filter(|m| m.kind != MessageKind::Synthesis)
        .count()
}

/// The staleness a speaker's view accepts under the miniround cadence: at
/// every take and closing, everything the speaker said before the group they last
/// spoke in is analysed, while that group itself may still be in analysis
/// (its batch starts when the group ends; the view shows it verbatim). So
/// no miniround's first speaker waits for the batch of the miniround that
/// just ended (under the old rule, "your previous message is analysed",
/// no speaker was ever stale).
#[test]
fn a_speaker_accepts_one_group_of_staleness_and_no_more() {
    let mut r = rules(3, 3, no_rooms(), false);
    r.analysis = agon_protocol::AnalysisCadence::Miniround;
    let mut sim = Sim::new(r, Script::default(), Lag::Lazy);
    let mut stale_speakers = 0;
    for _ in 0..10_000 {
        let plan = sim.protocol.plan(&sim.board);
        if let Next::Step(step) = &plan.next
            && let Step::Speak(speak) = step.as_ref()
            && matches!(speak.kind, MessageKind::Take | MessageKind::Closing)
        {
            let own: Vec<&agon_core::DialogueMessage> = sim
                .board
                .messages()
                .iter()
                .filter(|m| m.persona == speak.persona)
                .collect();
            let last = own.last().expect("an opening came first");
            let group =
                |m: &agon_core::DialogueMessage| (m.kind.clone(), m.aspect.clone(), m.miniround);
            for m in &own {
                if group(m) != group(last) {
                    assert!(
                        sim.board.is_analyzed(&m.id),
                        "{} speaks before {} (an older group) is analysed",
                        speak.persona,
                        m.id
                    );
                }
            }
            stale_speakers += usize::from(!sim.board.is_analyzed(&last.id));
        }
        if sim.finished() {
            break;
        }
        sim.run(1);
    }
    assert!(sim.finished());
    assert!(
        stale_speakers >= 9,
        "the first speaker of every later miniround and the first closer speak before the last batch is in ({stale_speakers})"
    );
}

#[test]
fn each_aspect_draws_a_challenger_before_its_replies_and_only_its_replies_argue() {
    let mut r = rules(2, 3, no_rooms(), true);
    r.challenger = true;
    let mut s = Sim::new(r, Script::default(), Lag::Eager);
    let mut challenged = Vec::new();
    let mut replies = 0;
    loop {
        match s.protocol.next(&s.board).next {
            Next::Step(step) => {
                if let Step::Speak(speak) = step.as_ref()
                    && let agon_context::prompts::Utterance::Take {
                        miniround,
                        challenger,
                        ..
                    } = &speak.instruction
                {
                    if *miniround >= 1 {
                        replies += 1;
                    }
                    if *challenger {
                        assert!(*miniround >= 1, "openings of an aspect are plain");
                        // Drawn before the aspect's first reply.
                        assert_eq!(
                            s.board.devils_advocate(s.board.current_round()),
                            Some(&speak.persona)
                        );
                        challenged.push(speak.persona.clone());
                    }
                }
                s.execute(*step);
            }
            Next::Wait => assert!(s.apply_background()),
            Next::Finished | Next::Paused => break,
        }
    }
    assert!(s.finished());
    // 2 aspects, 2 reply minirounds: the challenger argues in each.
    assert_eq!(s.board.devils_advocates().len(), 2, "one per aspect");
    assert_eq!(challenged.len(), 4);
    assert!(replies > challenged.len(), "the others reply plainly");
}
