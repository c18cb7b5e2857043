//! One snapshot per protocol and per format: the Markdown report, the JSON
//! report and the page of a recorded debate of each protocol
//! (`tests/fixtures/`: `debate.json` structured, `dialectic.json`,
//! `deliberation.json`; the last two are rewritten by
//! `AGON_UPDATE_FIXTURES=1 cargo nextest run -p agon-orchestrator -E
//! 'test(the_view_fixtures)'`).

use agon_core::DebateEvent;
use agon_view::{DebateView, ReportOptions};

fn view(fixture: &str) -> DebateView {
    let path = format!(
        "{}/../../tests/fixtures/{fixture}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let log: Vec<DebateEvent> =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    DebateView::from_log(&log, ReportOptions::default()).unwrap()
}

/// `value` with every object's keys in order: serde_json keeps insertion
/// order when another crate of the build turns on its `preserve_order`
/// feature, and sorts them otherwise.
fn sorted(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<(String, serde_json::Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.into_iter().map(sorted).collect())
        }
        other => other,
    }
}

fn snapshot_every_format(fixture: &str) {
    let view = view(fixture);
    insta::assert_snapshot!(format!("{fixture}_markdown"), view.markdown());
    insta::assert_snapshot!(
        format!("{fixture}_json"),
        serde_json::to_string_pretty(&sorted(view.json())).unwrap()
    );
    let last = u64::try_from(view.board().messages().len()).unwrap();
    insta::assert_snapshot!(
        format!("{fixture}_html"),
        agon_view::html::debate_page(&view, "d-fixture", "finished", last).replace("><", ">\n<")
    );
}

#[test]
fn a_structured_debate_in_every_format() {
    snapshot_every_format("debate");
}

#[test]
fn a_dialectic_debate_in_every_format() {
    snapshot_every_format("dialectic");
}

#[test]
fn a_deliberation_in_every_format() {
    snapshot_every_format("deliberation");
}
