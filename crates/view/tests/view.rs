//! One view model: the report, the JSON and the metrics come from the same
//! replay of the log, and the body follows the recorded protocol.

use agon_core::{DebateEvent, ProtocolKind};
use agon_view::{DebateView, ReportOptions};

use crate::common::started;

fn log() -> Vec<DebateEvent> {
    agon_testkit::synthetic::small::log()
}

fn with_protocol(mut events: Vec<DebateEvent>, kind: Option<ProtocolKind>) -> Vec<DebateEvent> {
    if let DebateEvent::DebateStarted { protocol, .. } = &mut events[0] {
        *protocol = kind;
    }
    events
}

#[test]
fn the_report_json_and_metrics_render_from_one_replay() {
    let view = DebateView::from_log(&log(), ReportOptions::default()).unwrap();
    assert_eq!(view.board().messages().len(), 2);
    assert_eq!(view.metrics().messages, 2);
    let md = view.markdown();
    assert!(md.contains("Should the city ban cars"), "{md}");
    assert!(
        md.contains("## Metrics"),
        "the report ends with the metrics"
    );
    assert!(md.ends_with(&view.metrics_markdown()));
    let json = view.json();
    assert_eq!(json["metrics"]["messages"], 2);
    assert_eq!(json["protocol"], "structured");
    assert!(view.memory_stats().is_none(), "not a deliberation");
}

#[test]
fn the_body_follows_the_recorded_protocol_not_the_debates_shape() {
    // Agents with roles look like dialectic; recorded as structured, the
    // view says structured.
    let mut events = log();
    if let DebateEvent::DebateStarted { personas, .. } = &mut events[0] {
        personas[0].specialty = Some(agon_core::AgentRole::Architect);
    }
    let guessed = DebateView::from_log(&events, ReportOptions::default()).unwrap();
    assert_eq!(guessed.protocol(), ProtocolKind::Dialectic);
    let recorded = DebateView::from_log(
        &with_protocol(events, Some(ProtocolKind::Structured)),
        ReportOptions::default(),
    )
    .unwrap();
    assert_eq!(recorded.protocol(), ProtocolKind::Structured);
    assert_eq!(recorded.json()["protocol"], "structured");
    let deliberation = DebateView::from_log(
        &with_protocol(vec![started()], Some(ProtocolKind::Deliberation)),
        ReportOptions::default(),
    )
    .unwrap();
    assert_eq!(deliberation.memory_stats().unwrap().messages, 0);
}

#[test]
fn a_log_that_does_not_replay_is_an_error_naming_the_event() {
    let mut events = log();
    events.remove(0);
    let e = DebateView::from_log(&events, ReportOptions::default()).unwrap_err();
    assert!(e.to_string().contains("aspect_started"), "{e}");
}

/// A two-agent dialectic round with three requirements: R2 (major) is
/// never covered, R1 is covered and then weakened, the judge says R2 is
/// unmet and asks one question.
fn dialectic_log() -> Vec<DebateEvent> {
    use crate::common::t;
    use agon_core::{
        AgentRole, Coverage, CoverageStatus, DialogueMessage, MessageKind, Persona, PersonaRole,
        Requirement, RequirementMethod, RequirementSource, Solution, Topic,
    };
    let agent = |id: &str, name: &str, role| Persona {
        specialty: Some(role),
        ..Persona::debater(id, name, "brief", "")
    };
    let msg = |id: &str, persona: &str, kind: MessageKind| DialogueMessage {
        id: id.into(),
        persona: persona.into(),
        kind,
        aspect: None,
        round: 1,
        miniround: None,
        crux_room: None,
        content: format!("{persona} speaks"),
        time: t(1),
        reply_to: None,
        meta: None,
    };
    let requirement = |id: &str, text: &str, major| Requirement {
        id: id.into(),
        text: text.into(),
        source: RequirementSource::Problem { line: Some(2) },
        major,
    };
    let covers = |id: &str, status| Coverage {
        requirement: id.into(),
        status,
        quote: "a token bucket".into(),
    };
    vec![
        DebateEvent::DebateStarted {
            debate: "d2".into(),
            topic: Topic::new("Design a rate limiter.\nIt must allow 100 requests per second."),
            aspects: vec![],
            personas: vec![
                agent("arch", "Ada", AgentRole::Architect),
                agent("kiss", "Kim", AgentRole::Kiss),
                Persona {
                    role: PersonaRole::Judge,
                    ..agent("judge", "Judge", AgentRole::Generalist)
                },
            ],
            time: t(0),
            protocol: Some(ProtocolKind::Dialectic),
        },
        DebateEvent::RequirementsRecorded {
            requirements: vec![
                requirement("R1", "It must allow 100 requests per second", true),
                requirement("R2", "Every rejection must be audited", true),
                requirement("R3", "Expose per-client metrics", false),
            ],
            method: RequirementMethod::Model,
        },
        DebateEvent::RoundStarted { round: 1 },
        DebateEvent::MessageAppended {
            message: msg("m1", "arch", MessageKind::Proposal),
        },
        DebateEvent::MessageAppended {
            message: msg("m2", "kiss", MessageKind::Proposal),
        },
        DebateEvent::MessageAppended {
            message: msg(
                "m3",
                "kiss",
                MessageKind::Critique {
                    target: "arch".into(),
                },
            ),
        },
        DebateEvent::RequirementsCovered {
            message: "m1".into(),
            coverage: vec![
                covers("R1", CoverageStatus::Covers),
                covers("R3", CoverageStatus::Covers),
            ],
        },
        DebateEvent::RequirementsCovered {
            message: "m2".into(),
            coverage: vec![covers("R1", CoverageStatus::Weakens)],
        },
        DebateEvent::TurnAnalyzed {
            message: "m1".into(),
            disagreements: vec![],
            importance: None,
            contradiction: None,
            window_end: true,
        },
        DebateEvent::SolutionRecorded {
            solution: Solution {
                round: 1,
                description: "A token bucket per key.".into(),
                tradeoffs: vec![],
                recommendations: vec![],
                confidence: Some(40),
                unfinished_requirements: vec![],
                unfulfilled_major_requirements: vec!["R2".into()],
                open_questions: vec!["Who reads the audit log?".into()],
                unverified_requirements: vec![],
                synthesized_by: "judge".into(),
                time: t(2),
            },
        },
    ]
}

/// issue 38: the report's Requirements matrix (requirement × agent ×
/// round, the judge's verdict) and the debate-state JSON's
/// `unfulfilledMajorRequirements` and `openQuestions` in dialectic's names.
#[test]
fn the_requirements_matrix_and_the_judges_lists_reach_the_report_and_the_json() {
    let view = DebateView::from_log(&dialectic_log(), ReportOptions::default()).unwrap();
    let md = view.markdown();
    assert!(
        md.contains("## Requirements\n\nFound by the analysis model."),
        "{md}"
    );
    assert!(md.contains("| Requirement | Ada | Kim | Judge |"), "{md}");
    assert!(
        md.contains("| R1 (major) It must allow 100 requests per second | ✓ | ✗ | met |"),
        "{md}"
    );
    assert!(
        md.contains("| R2 (major) Every rejection must be audited | · | · | unmet |"),
        "{md}"
    );
    assert!(
        md.contains("No agent's latest proposal covers: R2."),
        "{md}"
    );
    assert!(
        md.contains("### Unfulfilled major requirements\n\n- R2: Every rejection must be audited")
    );
    assert!(md.contains("### Open questions\n\n- Who reads the audit log?"));
    let state = agon_view::export::dialectic_state(view.board());
    assert_eq!(
        state["finalSolution"]["unfulfilledMajorRequirements"],
        serde_json::json!(["R2: Every rejection must be audited"])
    );
    assert_eq!(
        state["finalSolution"]["openQuestions"],
        serde_json::json!(["Who reads the audit log?"])
    );
    assert_eq!(
        state["requirements"][0]["coveredBy"],
        serde_json::json!(["arch"])
    );
    assert_eq!(state["requirements"][1]["coveredBy"], serde_json::json!([]));
    // The web page's panels: the requirements and the judge's lists.
    let html = agon_view::html::panels(&view);
    assert!(html.contains("<h2>Requirements</h2>"), "{html}");
    assert!(
        html.contains("<td>R2</td><td>Every rejection must be audited <span class=\"kind\">major</span></td><td>·</td><td>·</td><td>—</td><td>unmet</td>"),
        "{html}"
    );
    assert!(html.contains("<h3>Open questions</h3><ul><li>Who reads the audit log?</li></ul>"));
    // An older file with `unfinishedRequirements` still loads.
    let mut old = state.clone();
    old["finalSolution"]
        .as_object_mut()
        .unwrap()
        .remove("unfulfilledMajorRequirements");
    old["finalSolution"]["unfinishedRequirements"] = serde_json::json!(["audit"]);
    let events = agon_view::import::dialectic_state_events(&old, "old.json").unwrap();
    let board = agon_core::Blackboard::replay(&events).unwrap();
    assert_eq!(board.solution().unwrap().unfinished_requirements, ["audit"]);
}

/// Positions the vector memory holds across debates reach the report
/// (quoted, `<` escaped) and the JSON; without them there is no section.
#[test]
fn positions_across_debates_reach_the_report_and_the_json() {
    use chrono::TimeZone;
    let plain = DebateView::from_log(&log(), ReportOptions::default()).unwrap();
    assert!(!plain.markdown().contains("Positions across debates"));
    assert!(plain.json().get("remembered_changes").is_none());
    let view = plain.with_remembered(vec![agon_view::RememberedChange {
        persona: "Ada".into(),
        subject: "ferry subsidy".into(),
        before:
            "Ada's position on Ferry subsidy (round 1): keep it <b>whole</b>.\n## not a heading"
                .into(),
        before_debate: "transport-0".into(),
        until: chrono::Utc.with_ymd_and_hms(2026, 3, 10, 9, 1, 0).unwrap(),
        after: "Ada's position on Ferry subsidy (round 1): end it.".into(),
        after_debate: "transport-1".into(),
    }]);
    let md = view.markdown();
    assert!(md.contains("## Positions across debates"), "{md}");
    assert!(
        md.contains("**Ada** on ferry subsidy: held in debate `transport-0` until 2026-03-10:"),
        "{md}"
    );
    assert!(
        md.contains("> Ada's position on Ferry subsidy (round 1): keep it &lt;b>whole&lt;/b>."),
        "{md}"
    );
    assert!(
        md.contains("> ## not a heading"),
        "model text stays quoted: {md}"
    );
    assert!(
        md.contains(
            "then, in debate `transport-1`:\n> Ada's position on Ferry subsidy (round 1): end it."
        ),
        "{md}"
    );
    assert!(md.ends_with(&view.metrics_markdown()), "before the metrics");
    let json = view.json();
    assert_eq!(
        json["remembered_changes"][0]["before_debate"],
        "transport-0"
    );
    assert_eq!(
        json["remembered_changes"][0]["until"],
        "2026-03-10T09:01:00Z"
    );
}
