//! One view, every format: each section the JSON report holds shows in
//! the Markdown report and on the page, for a debate of each protocol.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use agon_config::DebateConfig;
use agon_llm::PriceTable;
use agon_orchestrator::{Models, RunControl, RunOutcome};
use agon_testkit::ScriptedModel;
use agon_view::{DebateView, ReportOptions};
use serde_json::Value;

/// Each JSON section (a path into the report), and what marks it in the
/// Markdown report and on the page.
const SECTIONS: [(&str, &str, &str); 19] = [
    ("ledger", "## Position ledger", "<h2>Position ledger</h2>"),
    (
        "claims",
        "## Contested claims and crux cards",
        "<h2>Claims and crux cards</h2>",
    ),
    (
        "crux_cards",
        "## Contested claims and crux cards",
        "<h2>Claims and crux cards</h2>",
    ),
    ("reflections", "## Reflections", "<h2>Reflections</h2>"),
    (
        "round_records",
        "**Round record.**",
        "<h2>Round records</h2>",
    ),
    ("solution", "## Final Synthesis", "<h2>Solution after round"),
    ("requirements", "## Requirements", "<h2>Requirements</h2>"),
    (
        "devils_advocates",
        "## Devil's advocates",
        "<h2>Devil's advocates</h2>",
    ),
    (
        "moderator_notes",
        "## Moderator notes",
        "<div class=\"note\">",
    ),
    ("warnings", "## Warnings", "<h2>Warnings</h2>"),
    ("repairs", "## Repairs", "<h2>Repairs</h2>"),
    ("citations", "## Sources cited", "<h2>Sources cited</h2>"),
    ("tool_calls", "## Tool calls", "<h2>Tool calls</h2>"),
    ("usage", "## Usage and cost", "<h2>Usage</h2>"),
    ("metrics", "## Metrics", "<h2>Debate quality</h2>"),
    ("transcript", "> ", "<div class=\"msg\""),
    (
        "deliberation/decisions",
        "## Decisions",
        "<h2>Decisions and proposals</h2>",
    ),
    (
        "deliberation/proposals",
        "## Proposals",
        "<h2>Decisions and proposals</h2>",
    ),
    (
        "deliberation/summaries",
        "## Summaries",
        "<h2>Earlier discussion (rolling summary)</h2>",
    ),
];

fn present(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        Some(_) => true,
    }
}

/// The log of `config` run to its end on the scripted model.
async fn run_log(config: &DebateConfig) -> Vec<agon_core::DebateEvent> {
    let orch = agon_app::orchestrator_for(support::sqlite().await);
    let id = orch.create(config).await.unwrap();
    let models = Models::uniform(
        Arc::new(ScriptedModel::new(Duration::ZERO)),
        PriceTable::with_defaults(),
    );
    let outcome = orch.run(&id, &models, RunControl::default()).await.unwrap();
    assert_eq!(outcome, RunOutcome::Finished);
    orch.log(&id).await.unwrap()
}

async fn view_of(config: &DebateConfig) -> DebateView {
    DebateView::from_log(&run_log(config).await, ReportOptions::default()).unwrap()
}

/// The dialectic debate the views are compared on: two rounds, analysis,
/// requirements in the problem, devil's advocates.
fn dialectic() -> DebateConfig {
    let mut config = crate::dialectic::dialectic_config(2);
    config.dialectic.analysis = true;
    config.dialectic.devil_advocate = true;
    config.topic = "Design a rate limiting system.\n- It must handle 10k requests per second.\n- It must be fair per client.".into();
    config
}

/// The sections of `view`'s JSON that its Markdown or its page lacks.
fn missing(view: &DebateView) -> (Vec<String>, usize) {
    let json = view.json();
    let markdown = view.markdown();
    let page = agon_view::html::debate_page(view, "d-1", "finished", 1);
    let mut missing = Vec::new();
    let mut shown = 0;
    for (path, in_markdown, on_page) in SECTIONS {
        let value = json.pointer(&format!("/{path}"));
        // The ledger holds an entry per persona from the start: it has
        // content once a persona has a stance.
        let held = if path == "ledger" {
            value.and_then(Value::as_object).is_some_and(|states| {
                states
                    .values()
                    .any(|s| s["overall_stance"].as_str().is_some_and(|t| !t.is_empty()))
            })
        } else {
            present(value)
        };
        if !held {
            continue;
        }
        shown += 1;
        if !markdown.contains(in_markdown) {
            missing.push(format!("{path}: not in the Markdown (`{in_markdown}`)"));
        }
        if !page.contains(on_page) {
            missing.push(format!("{path}: not on the page (`{on_page}`)"));
        }
    }
    (missing, shown)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_section_of_the_json_shows_in_the_markdown_and_on_the_page() {
    let mut structured = support::small_config();
    structured.memory.enabled = false;
    let deliberation = crate::deliberation::deliberation_config(3, 12, 4);
    for (name, config, at_least) in [
        ("structured", structured, 8),
        ("dialectic", dialectic(), 7),
        ("deliberation", deliberation, 5),
    ] {
        let view = view_of(&config).await;
        let (missing, shown) = missing(&view);
        assert!(missing.is_empty(), "{name}: {missing:#?}");
        assert!(
            shown >= at_least,
            "{name}: only {shown} sections to compare"
        );
    }
}

/// Writes the dialectic and deliberation fixtures whose reports agon-view
/// snapshots (`tests/fixtures/{dialectic,deliberation}.json`, beside the
/// structured `debate.json`), when `AGON_UPDATE_FIXTURES=1`; otherwise
/// checks that they replay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_view_fixtures_of_each_protocol_replay() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let deliberation = crate::deliberation::deliberation_config(3, 12, 4);
    for (name, config) in [("dialectic", dialectic()), ("deliberation", deliberation)] {
        let path = dir.join(format!("{name}.json"));
        if std::env::var("AGON_UPDATE_FIXTURES").is_ok_and(|v| v == "1") {
            let log = run_log(&config).await;
            std::fs::write(&path, serde_json::to_string_pretty(&log).unwrap()).unwrap();
        }
        let log: Vec<agon_core::DebateEvent> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let view = DebateView::from_log(&log, ReportOptions::default()).unwrap();
        assert_eq!(view.protocol().as_str(), name);
        assert_eq!(view.board().status(), agon_core::DebateStatus::Finished);
    }
}
