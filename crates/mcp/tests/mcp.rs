//! Agon's MCP server driven by a real MCP client (rmcp's) over an
//! in-process pipe, on the scripted model and SQLite: start a debate, see
//! its progress, read its report, and the tools' errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agon_app::{App, Runtime};
use agon_config::DebateConfig;
use agon_llm::PriceTable;
use agon_mcp::AgonMcp;
use agon_orchestrator::Models;
use agon_testkit::ScriptedModel;
use async_trait::async_trait;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, NumberOrString, ProgressNotificationParam,
    ProgressToken, RequestMetaObject,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::{Value, json};

/// Debates run on the scripted model, answering after a delay.
struct Scripted(Duration);

#[async_trait]
impl Runtime for Scripted {
    async fn models(&self, _config: &DebateConfig) -> Result<Models, String> {
        Ok(Models::uniform(
            Arc::new(ScriptedModel::new(self.0)),
            PriceTable::with_defaults(),
        ))
    }
}

/// A client keeping the progress notifications it receives.
#[derive(Clone, Default)]
struct Client {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Client {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

/// An MCP session with a server over a fresh SQLite store.
async fn session(
    delay: Duration,
) -> (
    RunningService<RoleClient, Client>,
    Client,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("agon.db").display());
    let store = agon_store::open(&url).await.unwrap();
    let app = App::new(store, Arc::new(Scripted(delay)));
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let server = AgonMcp::new(app).serve(server_io).await.unwrap();
        let _ = server.waiting().await;
    });
    let client = Client::default();
    let running = client.clone().serve(client_io).await.unwrap();
    (running, client, dir)
}

fn call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    CallToolRequestParams::new(name).with_arguments(arguments)
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The id in a `start_debate` answer ("Started debate ID." or "debate ID: …").
fn id_in(text: &str) -> String {
    text.split_whitespace()
        .skip_while(|w| *w != "debate")
        .nth(1)
        .unwrap()
        .trim_end_matches(['.', ':'])
        .to_owned()
}

const TOPIC: &str = "Should the city run its buses all night?";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_starts_a_debate_sees_its_progress_and_reads_its_report() {
    let (client, handler, _dir) = session(Duration::from_millis(20)).await;
    let tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    for name in [
        "start_debate",
        "debate_status",
        "debate_report",
        "answer_questions",
        "add_note",
        "recall",
        "list_debates",
    ] {
        assert!(tools.contains(&name.to_owned()), "{name} in {tools:?}");
    }

    // A dialectic debate of one round, waited for with a progress token.
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(ProgressToken(NumberOrString::Number(7)));
    let mut start = call(
        "start_debate",
        json!({"topic": TOPIC, "protocol": "dialectic", "rounds": 1, "wait": true}),
    );
    start.meta = Some(meta);
    let done = client.call_tool(start).await.unwrap();
    let text = text_of(&done);
    assert_ne!(done.is_error, Some(true), "{text}");
    assert!(text.starts_with("debate "), "{text}");
    assert!(text.contains(": finished"), "{text}");
    let id = id_in(&text);
    // The report follows the status line.
    assert!(text.contains(TOPIC), "{text}");

    let progress = handler.progress.lock().unwrap().clone();
    assert!(progress.len() >= 2, "{progress:?}");
    assert!(
        progress.windows(2).all(|w| w[0].progress < w[1].progress),
        "progress only grows: {progress:?}"
    );
    assert!(
        progress
            .iter()
            .all(|p| p.message.as_deref().is_some_and(|m| m.contains(&id))),
        "{progress:?}"
    );

    // Status, report (Markdown and JSON) and the list say the same.
    let status = text_of(
        &client
            .call_tool(call("debate_status", json!({"id": id})))
            .await
            .unwrap(),
    );
    assert!(
        status.starts_with(&format!("debate {id}: finished")),
        "{status}"
    );
    let report = text_of(
        &client
            .call_tool(call("debate_report", json!({"id": id, "format": "json"})))
            .await
            .unwrap(),
    );
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["status"], "finished", "{report:#}");
    let markdown = text_of(
        &client
            .call_tool(call("debate_report", json!({"id": id})))
            .await
            .unwrap(),
    );
    assert!(markdown.starts_with('#'), "{markdown}");
    let listed = text_of(
        &client
            .call_tool(call("list_debates", json!({})))
            .await
            .unwrap(),
    );
    assert!(
        listed.starts_with(&format!("{id} · finished · dialectic · ")),
        "{listed}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debate_started_without_waiting_takes_a_note_and_is_followed_by_its_status() {
    let (client, _, _dir) = session(Duration::from_millis(30)).await;
    let started = text_of(
        &client
            .call_tool(call(
                "start_debate",
                json!({"topic": TOPIC, "protocol": "dialectic", "rounds": 1}),
            ))
            .await
            .unwrap(),
    );
    assert!(started.starts_with("Started debate "), "{started}");
    let id = id_in(&started);
    let noted = client
        .call_tool(call(
            "add_note",
            json!({"id": id, "text": "Count the night buses.", "author": "Chair"}),
        ))
        .await
        .unwrap();
    assert_ne!(noted.is_error, Some(true), "{}", text_of(&noted));
    let mut status = String::new();
    for _ in 0..400 {
        status = text_of(
            &client
                .call_tool(call("debate_status", json!({"id": id})))
                .await
                .unwrap(),
        );
        if status.contains(": finished") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(status.contains(": finished"), "{status}");
    let report = text_of(
        &client
            .call_tool(call("debate_report", json!({"id": id})))
            .await
            .unwrap(),
    );
    assert!(
        report.contains("Count the night buses."),
        "the note is in the report"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_errors_that_say_what_was_wrong() {
    let (client, _, _dir) = session(Duration::ZERO).await;
    let error = |result: CallToolResult| {
        assert_eq!(result.is_error, Some(true), "{}", text_of(&result));
        text_of(&result)
    };
    let no_topic = error(
        client
            .call_tool(call("start_debate", json!({})))
            .await
            .unwrap(),
    );
    assert!(
        no_topic.contains("give a `topic` or a `config_toml`"),
        "{no_topic}"
    );
    let bad_toml = error(
        client
            .call_tool(call("start_debate", json!({"config_toml": "topic = ["})))
            .await
            .unwrap(),
    );
    assert!(bad_toml.contains("config_toml"), "{bad_toml}");
    let unknown = error(
        client
            .call_tool(call("debate_status", json!({"id": "no-such-debate"})))
            .await
            .unwrap(),
    );
    assert!(
        unknown.contains("unknown debate `no-such-debate`"),
        "{unknown}"
    );
    let no_memory = error(
        client
            .call_tool(call("recall", json!({"query": "night buses"})))
            .await
            .unwrap(),
    );
    assert!(no_memory.contains("no vector memory"), "{no_memory}");
    // Arguments of the wrong shape: refused, saying which.
    let refused = error(
        client
            .call_tool(call("debate_status", json!({"id": 3})))
            .await
            .unwrap(),
    );
    assert!(
        refused.contains("invalid type: integer `3`, expected a string"),
        "{refused}"
    );
    client.cancel().await.unwrap();
}
