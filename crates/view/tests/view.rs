//! One view model: the report, the JSON and the metrics come from the same
//! replay of the log, and the body follows the recorded protocol.

use agon_core::{DebateEvent, ProtocolKind};
use agon_view::{DebateView, ReportOptions};

use crate::common::started;

fn log() -> Vec<DebateEvent> {
    agon_core::synthetic::small::log()
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
