//! agon-server over real HTTP: every route, bad input, the event streams
//! (history, reconnects, many clients, many debates), stop and resume,
//! and the token. Debates run on the scripted test model and SQLite.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agon_app::{App, Runtime};
use agon_config::{AspectConfig, DebateConfig};
use agon_llm::{ChatModel, PriceTable};
use agon_orchestrator::{Models, Orchestrator};
use agon_server::Server;
use agon_store::EventStore;
use agon_testkit::{BeforeEachCall, ScriptedModel, recording_model};
use async_trait::async_trait;
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};

static COUNTER: AtomicU64 = AtomicU64::new(0);

async fn sqlite() -> Arc<dyn EventStore> {
    let dir = std::env::temp_dir().join("agon-server-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let name = format!(
        "t_{}_{}.db",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let url = format!("sqlite://{}", dir.join(name).display());
    agon_store::open(&url).await.unwrap()
}

/// Runs on the scripted model, each call after `delay`.
struct Scripted {
    delay: Duration,
}

#[async_trait]
impl Runtime for Scripted {
    async fn models(&self, _config: &DebateConfig) -> Result<Models, String> {
        Ok(Models::uniform(
            Arc::new(ScriptedModel::new(self.delay)),
            PriceTable::with_defaults(),
        ))
    }
}

/// Runs every debate on one model.
struct OneModel(Arc<dyn ChatModel>);

#[async_trait]
impl Runtime for OneModel {
    async fn models(&self, _config: &DebateConfig) -> Result<Models, String> {
        Ok(Models::uniform(
            Arc::clone(&self.0),
            PriceTable::with_defaults(),
        ))
    }
}

/// `model`, answering its first call and holding every later one until
/// `gate` opens: a test that steers a debate "mid-way" then finds it
/// mid-way however slow the machine.
fn held_after_first(
    model: Arc<dyn ChatModel>,
    gate: tokio::sync::watch::Receiver<bool>,
) -> Arc<dyn ChatModel> {
    let calls = AtomicU64::new(0);
    let held = BeforeEachCall::new(model, move |_, _| {
        let mut gate = gate.clone();
        let held = calls.fetch_add(1, Ordering::SeqCst) >= 1;
        async move {
            if held {
                // A dropped sender (the test ended) lets the call through.
                let _ = gate.wait_for(|open| *open).await;
            }
        }
        .boxed()
    });
    Arc::new(held)
}

/// A server whose scripted model (answering after `delay`) holds every
/// call after the first until the gate opens: its base URL and the gate.
async fn start_held(delay: Duration) -> (String, tokio::sync::watch::Sender<bool>) {
    let (open, gate) = tokio::sync::watch::channel(false);
    let model = held_after_first(Arc::new(ScriptedModel::new(delay)), gate);
    let base = serve(Server::new(
        App::new(sqlite().await, Arc::new(OneModel(model))),
        None,
    ))
    .await;
    (base, open)
}

/// A server on a free loopback port: its base URL.
async fn start(delay: Duration, token: Option<&str>) -> String {
    serve(Server::new(
        App::new(sqlite().await, Arc::new(Scripted { delay })),
        token.map(ToOwned::to_owned),
    ))
    .await
}

async fn serve(server: Server) -> String {
    let server = Arc::new(server);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(agon_server::serve(listener, server));
    format!("http://{addr}")
}

/// 3 personas, one aspect, one miniround, no crux room: ~10 turns.
fn config() -> Value {
    let mut c = DebateConfig {
        personas: agon_config::default_personas(),
        aspects: vec![AspectConfig {
            label: "Cost".into(),
            description: "Who pays.".into(),
        }],
        minirounds: 1,
        ..DebateConfig::default()
    };
    c.crux.enabled = false;
    serde_json::to_value(c).unwrap()
}

/// A one-round dialectic debate (architect, performance, kiss), asking
/// clarifying questions when `clarify`, in one round (no follow-ups).
fn dialectic_config(clarify: bool) -> Value {
    dialectic_clarifying(clarify, 1)
}

/// [`dialectic_config`] with up to `rounds` clarification rounds.
fn dialectic_clarifying(clarify: bool, rounds: u32) -> Value {
    let mut c = DebateConfig {
        protocol: agon_config::ProtocolKind::Dialectic,
        topic: "Design a rate limiter for a public API.".into(),
        ..DebateConfig::default()
    };
    c.dialectic.rounds = 1;
    c.dialectic.clarify = clarify;
    c.dialectic.clarify_rounds = rounds;
    serde_json::to_value(c).unwrap()
}

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

async fn get(base: &str, path: &str) -> reqwest::Response {
    client().get(format!("{base}{path}")).send().await.unwrap()
}

fn content_type(r: &reqwest::Response) -> String {
    r.headers()["content-type"].to_str().unwrap().to_owned()
}

async fn get_json(base: &str, path: &str) -> Value {
    get(base, path).await.json().await.unwrap()
}

async fn post(base: &str, path: &str, body: Value) -> reqwest::Response {
    client()
        .post(format!("{base}{path}"))
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn start_debate(base: &str) -> String {
    start_with(base, config()).await
}

/// Starts a debate with `config` (JSON); its id.
async fn start_with(base: &str, config: Value) -> String {
    let r = post(base, "/api/debates", json!({ "config": config })).await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    let body: Value = r.json().await.unwrap();
    body["id"].as_str().unwrap().to_owned()
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
struct Sse {
    id: Option<u64>,
    kind: String,
    data: String,
}

/// Reads a stream's events until `end` (or `limit` events with an id),
/// then drops the connection.
async fn read_stream(base: &str, id: &str, last: Option<u64>, limit: Option<usize>) -> Vec<Sse> {
    read_events(connect(base, id, last).await, limit).await
}

/// Opens a debate's event stream (after `last`): once it returns, the
/// server's side of the stream exists and receives what is new.
async fn connect(base: &str, id: &str, last: Option<u64>) -> reqwest::Response {
    let mut request = client().get(format!("{base}/api/debates/{id}/events"));
    if let Some(last) = last {
        request = request.header("Last-Event-ID", last.to_string());
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(content_type(&response).starts_with("text/event-stream"));
    response
}

/// Reads an open stream's events until `end` (or `limit` events with an
/// id), then drops the connection.
async fn read_events(response: reqwest::Response, limit: Option<usize>) -> Vec<Sse> {
    let mut bytes = response.bytes_stream();
    let mut buffer = String::new();
    let mut out = Vec::new();
    let read = async {
        while let Some(chunk) = bytes.next().await {
            buffer.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
            while let Some(end) = buffer.find("\n\n") {
                let block: String = buffer.drain(..end + 2).collect();
                let mut event = Sse {
                    id: None,
                    kind: "message".into(),
                    data: String::new(),
                };
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        event.id = v.trim().parse().ok();
                    } else if let Some(v) = line.strip_prefix("event:") {
                        event.kind = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        event.data.push_str(v.trim_start());
                    }
                }
                if block.trim_start().starts_with(':') {
                    continue; // a keep-alive comment
                }
                let done = event.kind == "end";
                out.push(event);
                let enough =
                    limit.is_some_and(|n| out.iter().filter(|e| e.id.is_some()).count() >= n);
                if done || enough {
                    return;
                }
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .expect("the stream ends in time");
    out
}

/// The recorded answers to clarifying questions in a stream, in order.
fn answer_events(events: &[Sse]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e.kind == "event")
        .map(|e| serde_json::from_str::<Value>(&e.data).unwrap())
        .filter(|e| e["message"]["kind"] == "clarification_answer")
        .collect()
}

fn ids(events: &[Sse]) -> Vec<u64> {
    events.iter().filter_map(|e| e.id).collect()
}

fn end_status(events: &[Sse]) -> String {
    let end = events.last().expect("an end event");
    assert_eq!(end.kind, "end", "{events:?}");
    let v: Value = serde_json::from_str(&end.data).unwrap();
    v["status"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_starts_streams_lists_and_reads_a_debate() {
    let base = start(Duration::ZERO, None).await;
    let health: Value = get_json(&base, "/api/health").await;
    assert_eq!(health, json!({"ok": true, "store": "sqlite"}));
    let listed: Value = get_json(&base, "/api/debates").await;
    assert_eq!(listed["debates"], json!([]));

    let id = start_debate(&base).await;
    let events = read_stream(&base, &id, None, None).await;
    let seqs = ids(&events);
    assert_eq!(
        seqs,
        (1..=seqs.len() as u64).collect::<Vec<_>>(),
        "the whole log, in order"
    );
    assert_eq!(end_status(&events), "finished");
    let first: Value = serde_json::from_str(&events[0].data).unwrap();
    assert_eq!(first["type"], "debate_started", "{first}");

    let listed: Value = get_json(&base, "/api/debates").await;
    let row = &listed["debates"][0];
    assert_eq!(
        (row["id"].as_str(), row["status"].as_str()),
        (Some(id.as_str()), Some("finished"))
    );
    assert_eq!(row["last_seq"], json!(seqs.len()));

    let view: Value = get_json(&base, &format!("/api/debates/{id}")).await;
    assert_eq!(view["status"], "finished");
    assert!(view["view"].is_object(), "{view}");

    let report = get(&base, &format!("/api/debates/{id}/report")).await;
    assert!(content_type(&report).starts_with("text/markdown"));
    let md = report.text().await.unwrap();
    assert!(md.contains("Mara"), "{md}");
    let json_report = get_json(&base, &format!("/api/debates/{id}/report?format=json")).await;
    assert_eq!(json_report["protocol"], "structured", "{json_report}");
    assert!(json_report["ledger"].is_object(), "{json_report}");
    assert_eq!(
        get(&base, &format!("/api/debates/{id}/report?format=pdf"))
            .await
            .status(),
        400
    );

    let metrics: Value = get_json(&base, &format!("/api/debates/{id}/metrics")).await;
    assert!(metrics.get("ledger_coverage").is_some(), "{metrics}");

    // The flags' settings alone start a debate, as `agon debate` does.
    let r = post(
        &base,
        "/api/debates",
        json!({ "settings": { "protocol": "dialectic", "topic": "Design a cache.", "rounds": 1 } }),
    )
    .await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    let flagged = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        end_status(&read_stream(&base, &flagged, None, None).await),
        "finished"
    );
    let flagged_view = get_json(&base, &format!("/api/debates/{flagged}")).await;
    assert_eq!(flagged_view["view"]["protocol"], "dialectic");
    assert_eq!(flagged_view["view"]["topic"]["question"], "Design a cache.");

    // A TOML configuration runs the same way.
    let toml = "topic = \"Should the city tax sugar?\"\nminirounds = 1\nsynthesis = false\n\
                [[aspects]]\nlabel = \"Cost\"\ndescription = \"Who pays.\"\n\
                [[personas]]\nname = \"Ada\"\ncontract = \"For.\"\nvoice = \"brisk\"\n\
                [[personas]]\nname = \"Bo\"\ncontract = \"Against.\"\nvoice = \"warm\"\n\
                [crux]\nenabled = false\n";
    let r = post(&base, "/api/debates", json!({ "toml": toml })).await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    let toml_id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        end_status(&read_stream(&base, &toml_id, None, None).await),
        "finished"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_a_json_error_that_names_what_was_wrong() {
    let base = start(Duration::ZERO, None).await;
    let error = |r: reqwest::Response| async move {
        let status = r.status().as_u16();
        let body: Value = r.json().await.unwrap();
        (
            status,
            body["error"].as_str().unwrap_or_default().to_owned(),
        )
    };
    // Not JSON: refused before any route (cross-site forms cannot send JSON).
    let r = client()
        .post(format!("{base}/api/debates"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("toml=x")
        .send()
        .await
        .unwrap();
    let (status, message) = error(r).await;
    assert_eq!(status, 415);
    assert!(message.contains("application/json"), "{message}");
    // A cross-site origin.
    let r = client()
        .post(format!("{base}/api/debates"))
        .header("origin", "http://evil.example")
        .json(&json!({ "config": config() }))
        .send()
        .await
        .unwrap();
    let (status, message) = error(r).await;
    assert_eq!(status, 403);
    assert!(message.contains("evil.example"), "{message}");
    // Unusable configurations name the field.
    let (status, message) = error(
        post(
            &base,
            "/api/debates",
            json!({ "toml": "minirounds = \"three\"" }),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400);
    assert!(message.contains("minirounds"), "{message}");
    let mut typed = config();
    typed["crux"]["max_turns"] = json!("many");
    let (status, message) =
        error(post(&base, "/api/debates", json!({ "config": typed })).await).await;
    assert_eq!(status, 400);
    assert!(message.contains("config.crux.max_turns"), "{message}");
    let mut bad = config();
    bad["minirounds"] = json!(0);
    let (status, message) =
        error(post(&base, "/api/debates", json!({ "config": bad })).await).await;
    assert_eq!(status, 400);
    assert!(message.contains("minirounds"), "{message}");
    let (status, message) = error(
        post(
            &base,
            "/api/debates",
            json!({ "config": config(), "toml": "topic = \"x\"" }),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400);
    assert!(message.contains("`config`"), "{message}");
    // A flag's setting of another protocol names the setting.
    let (status, message) = error(
        post(
            &base,
            "/api/debates",
            json!({ "config": config(), "settings": { "rounds": 2 } }),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400);
    assert!(message.contains("settings.rounds"), "{message}");
    let (status, message) = error(
        post(
            &base,
            "/api/debates",
            json!({ "settings": { "protocol": "dialectic", "mode": "sideways" } }),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400);
    assert!(message.contains("sideways"), "{message}");
    let (status, message) = error(post(&base, "/api/debates", json!({ "confg": {} })).await).await;
    assert_eq!(status, 400);
    assert!(message.contains("confg"), "{message}");
    // Unknown debates and routes.
    for path in [
        "/api/debates/d-nope",
        "/api/debates/d-nope/report",
        "/api/debates/d-nope/events",
    ] {
        let (status, message) = error(get(&base, path).await).await;
        assert_eq!(status, 404, "{path}");
        assert!(message.contains("d-nope"), "{path}: {message}");
    }
    let (status, _) = error(get(&base, "/api/nothing").await).await;
    assert_eq!(status, 404);
    // A finished debate cannot be stopped or resumed; a bad Last-Event-ID.
    let id = start_debate(&base).await;
    read_stream(&base, &id, None, None).await;
    let (status, message) =
        error(post(&base, &format!("/api/debates/{id}/stop"), json!({})).await).await;
    assert_eq!(status, 409);
    assert!(message.contains("not running"), "{message}");
    let (status, message) =
        error(post(&base, &format!("/api/debates/{id}/resume"), json!({})).await).await;
    assert_eq!(status, 409);
    assert!(message.contains("finished"), "{message}");
    let r = client()
        .get(format!("{base}/api/debates/{id}/events"))
        .header("Last-Event-ID", "seven")
        .send()
        .await
        .unwrap();
    let (status, message) = error(r).await;
    assert_eq!(status, 400);
    assert!(message.contains("Last-Event-ID"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnect_with_last_event_id_gets_exactly_the_missing_events() {
    // The model answers its first call (the first opening: event 4) and
    // holds the rest until the test has reconnected.
    let (base, open) = start_held(Duration::ZERO).await;
    let id = start_debate(&base).await;
    // Drop the connection mid-debate, after 4 events.
    let first = read_stream(&base, &id, None, Some(4)).await;
    let seen = ids(&first);
    assert_eq!(seen, [1, 2, 3, 4]);
    let reconnected = connect(&base, &id, Some(4)).await;
    open.send_replace(true);
    let rest = read_events(reconnected, None).await;
    assert_eq!(end_status(&rest), "finished");
    let after = ids(&rest);
    assert_eq!(after.first(), Some(&5), "nothing lost");
    assert_eq!(
        after,
        (5..5 + after.len() as u64).collect::<Vec<_>>(),
        "nothing repeated"
    );
    // The whole log read afresh is the two halves.
    let whole = ids(&read_stream(&base, &id, None, None).await);
    assert_eq!(whole, [seen, after].concat());
    // The live stream also carried the tokens of the turns being written,
    // without ids (they are not part of the log).
    let tokens: Vec<Value> = rest
        .iter()
        .filter(|e| e.kind == "token")
        .map(|e| {
            assert_eq!(e.id, None);
            serde_json::from_str(&e.data).unwrap()
        })
        .collect();
    assert!(!tokens.is_empty(), "{rest:?}");
    assert!(
        tokens
            .iter()
            .all(|t| t["turn"].is_string() && t["persona"].is_string() && t["delta"].is_string()),
        "{tokens:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_clients_on_one_debate_and_ten_debates_at_once() {
    let base = start(Duration::from_millis(2), None).await;
    let mut ids_of_debates = Vec::new();
    for _ in 0..10 {
        ids_of_debates.push(start_debate(&base).await);
    }
    let watched = ids_of_debates[0].clone();
    let clients = (0..20).map(|_| {
        let (base, id) = (base.clone(), watched.clone());
        tokio::spawn(async move { read_stream(&base, &id, None, None).await })
    });
    let others = ids_of_debates[1..].iter().map(|id| {
        let (base, id) = (base.clone(), id.clone());
        tokio::spawn(async move { read_stream(&base, &id, None, None).await })
    });
    let seen: Vec<Vec<Sse>> = futures::future::join_all(clients)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let expected = ids(&seen[0]);
    assert!(expected.len() > 10, "{expected:?}");
    for events in &seen {
        assert_eq!(ids(events), expected, "every client gets the same log");
        assert_eq!(end_status(events), "finished");
    }
    for events in futures::future::join_all(others).await {
        let events = events.unwrap();
        assert_eq!(end_status(&events), "finished");
        let seqs = ids(&events);
        assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debate_stops_on_request_and_resumes_to_the_end() {
    let (base, open) = start_held(Duration::from_millis(40)).await;
    let id = start_debate(&base).await;
    // Wait until it has started speaking, then stop it.
    read_stream(&base, &id, None, Some(3)).await;
    let r = post(&base, &format!("/api/debates/{id}/stop"), json!({})).await;
    assert_eq!(r.status(), 202);
    open.send_replace(true);
    let stopped = read_stream(&base, &id, None, None).await;
    assert_eq!(end_status(&stopped), "interrupted");
    let r = post(&base, &format!("/api/debates/{id}/resume"), json!({})).await;
    assert_eq!(r.status(), 202, "{:?}", r.text().await);
    let resumed = read_stream(&base, &id, ids(&stopped).last().copied(), None).await;
    assert_eq!(end_status(&resumed), "finished");
    let whole = ids(&read_stream(&base, &id, None, None).await);
    assert_eq!(whole, (1..=whole.len() as u64).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_with_a_token_refuses_requests_without_it() {
    let token = agon_server::new_token().unwrap();
    assert_eq!(token.len(), 64);
    let base = start(Duration::ZERO, Some(&token)).await;
    let r = get(&base, "/api/debates").await;
    assert_eq!(r.status(), 401);
    let r = client()
        .get(format!("{base}/api/debates"))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = client()
        .get(format!("{base}/api/debates"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // An EventSource passes it in the query.
    let r = get(&base, &format!("/api/health?token={token}")).await;
    assert_eq!(r.status(), 200);
    assert!(agon_server::needs_token(&"0.0.0.0:7878".parse().unwrap()));
    assert!(!agon_server::needs_token(
        &"127.0.0.1:7878".parse().unwrap()
    ));
    assert!(!agon_server::needs_token(&"[::1]:7878".parse().unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clarifying_questions_are_answered_over_the_api() {
    let base = start(Duration::from_millis(30), None).await;
    let id = start_with(&base, dialectic_clarifying(true, 3)).await;
    // A watcher is told when the questions are asked.
    let watcher = {
        let (base, id) = (base.clone(), id.clone());
        tokio::spawn(async move { read_stream(&base, &id, None, None).await })
    };
    let questions = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let q = get_json(&base, &format!("/api/debates/{id}/questions")).await;
            if !q["questions"].as_array().unwrap().is_empty() {
                return q["questions"].as_array().unwrap().clone();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the agents ask");
    assert!(
        questions
            .iter()
            .all(|q| q["text"].is_string() && q["agent"].is_string())
    );
    assert!(
        questions.iter().any(|q| q["role"] == "architect"),
        "{questions:?}"
    );
    // One answer per question, in order.
    let r = post(
        &base,
        &format!("/api/debates/{id}/answers"),
        json!({ "answers": ["only one"] }),
    )
    .await;
    assert_eq!(r.status(), 400);
    assert!(
        r.text()
            .await
            .unwrap()
            .contains(&format!("for {} questions", questions.len()))
    );
    let answers: Vec<String> = (1..=questions.len())
        .map(|i| format!("Answer number {i}."))
        .collect();
    let r = post(
        &base,
        &format!("/api/debates/{id}/answers"),
        json!({ "answers": answers }),
    )
    .await;
    assert_eq!(r.status(), 202, "{:?}", r.text().await);
    // A follow-up round: every agent saw the answers and asks once more
    // (its third question); answered over the API the same way.
    let follow_ups = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let q = get_json(&base, &format!("/api/debates/{id}/questions")).await;
            let list = q["questions"].as_array().unwrap().clone();
            if !list.is_empty() && list.iter().all(|q| q["id"] == "q3") {
                return list;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the agents ask follow-ups");
    assert_eq!(follow_ups.len(), 3, "{follow_ups:?}");
    let more: Vec<String> = (1..=follow_ups.len())
        .map(|i| format!("Follow-up answer {i}."))
        .collect();
    let r = post(
        &base,
        &format!("/api/debates/{id}/answers"),
        json!({ "answers": more }),
    )
    .await;
    assert_eq!(r.status(), 202, "{:?}", r.text().await);
    let r = post(
        &base,
        &format!("/api/debates/{id}/answers"),
        json!({ "answers": more }),
    )
    .await;
    assert_eq!(r.status(), 409, "answered once");
    let answers: Vec<String> = answers.into_iter().chain(more).collect();
    let events = watcher.await.unwrap();
    assert_eq!(end_status(&events), "finished");
    let asked = events
        .iter()
        .find(|e| e.kind == "questions")
        .expect("a questions event");
    let asked: Value = serde_json::from_str(&asked.data).unwrap();
    assert_eq!(
        asked["questions"].as_array().unwrap().len(),
        questions.len()
    );
    // The answers are in the transcript, each replying to its question.
    let recorded = answer_events(&events);
    let texts: Vec<&str> = recorded
        .iter()
        .map(|e| e["message"]["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        answers.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert!(
        recorded
            .iter()
            .all(|e| e["message"]["reply_to"].is_string())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unanswered_questions_are_answered_na_when_the_wait_runs_out() {
    let base = serve(Server::new(
        App::new(
            sqlite().await,
            Arc::new(Scripted {
                delay: Duration::ZERO,
            }),
        )
        .with_answer_wait(Duration::from_millis(200)),
        None,
    ))
    .await;
    let id = start_with(&base, dialectic_config(true)).await;
    let events = read_stream(&base, &id, None, None).await;
    assert_eq!(end_status(&events), "finished");
    let answers: Vec<String> = answer_events(&events)
        .iter()
        .map(|e| e["message"]["content"].as_str().unwrap().to_owned())
        .collect();
    assert!(!answers.is_empty());
    assert!(answers.iter().all(|a| a == "NA"), "{answers:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_render_a_debate_with_hostile_text_as_text() {
    let base = start(Duration::ZERO, None).await;
    let mut hostile = config();
    hostile["topic"] = json!("<script>alert(1)</script> Should the city ban cars?");
    hostile["personas"][0]["name"] = json!("<img src=x onerror=alert(2)>");
    let id = start_with(&base, hostile).await;
    assert_eq!(
        end_status(&read_stream(&base, &id, None, None).await),
        "finished"
    );

    let page = get(&base, &format!("/debates/{id}")).await;
    assert_eq!(page.status(), 200);
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert!(content_type(&page).starts_with("text/html"));
    let html = page.text().await.unwrap();
    assert!(
        !html.contains("<script>alert") && !html.contains("<img src=x"),
        "{html}"
    );
    assert!(
        html.contains("&lt;img src=x onerror=alert(2)&gt;"),
        "the name, as text"
    );
    assert!(html.contains("class=\"msg\""), "the transcript");
    assert!(html.contains("Position ledger"));

    let list = get(&base, "/").await.text().await.unwrap();
    assert!(list.contains(&format!("/debates/{id}")));
    assert!(!list.contains("<script>alert"));
    // Cost (the scripted model is unpriced) and age, per debate.
    assert!(list.contains("<th>cost</th><th>age</th>"), "{list}");
    assert!(list.contains("<td>—</td><td title="), "{list}");
    let panels = get(&base, &format!("/debates/{id}/panels"))
        .await
        .text()
        .await
        .unwrap();
    assert!(panels.contains("<h2>Usage</h2>"), "{panels}");
    let script = get(&base, "/static/debate.js").await;
    assert!(content_type(&script).starts_with("text/javascript"));
    assert!(script.text().await.unwrap().contains("new EventSource"));
    let list_script = get(&base, "/static/list.js").await;
    assert!(content_type(&list_script).starts_with("text/javascript"));
    assert!(list_script.text().await.unwrap().contains("start-form"));
    // The start form's first configuration runs as it is.
    let r = post(
        &base,
        "/api/debates",
        json!({ "toml": agon_view::html::START_TEMPLATE }),
    )
    .await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    let missing = get(&base, "/debates/d-nope").await;
    assert_eq!(missing.status(), 404);
}

/// The headless browser `cargo xtask test` provides (`AGON_BROWSER`).
fn browser() -> String {
    std::env::var("AGON_BROWSER").expect(
        "AGON_BROWSER is not set: run the suite with `cargo xtask test` (it installs a headless Chromium)",
    )
}

/// The page at `url` as a real browser has it after `wait`: its DOM,
/// serialized, once the page's script has run that long.
async fn browse(url: &str, wait: Duration) -> String {
    let out = tokio::process::Command::new(browser())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            &format!("--virtual-time-budget={}", wait.as_millis()),
            "--dump-dom",
            url,
        ])
        .output()
        .await
        .expect("run the browser");
    assert!(
        out.status.success(),
        "the browser failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_sees_the_transcript_grow_and_hostile_text_as_text() {
    let base = start(Duration::from_millis(80), None).await;
    let mut hostile = config();
    hostile["personas"][0]["name"] = json!("<img src=x onerror=alert(2)>");
    let id = start_with(&base, hostile).await;
    // The page as served now, and as the browser has it a few seconds on.
    let served = get(&base, &format!("/debates/{id}"))
        .await
        .text()
        .await
        .unwrap();
    let shown = served.matches("class=\"msg\"").count();
    let dom = browse(&format!("{base}/debates/{id}"), Duration::from_secs(6)).await;
    let grown = dom.matches("class=\"msg\"").count();
    assert!(
        grown > shown,
        "the transcript grew live: {shown} → {grown}\n{dom}"
    );
    // The script followed the stream to its end: every message is on the
    // page, and the status says how it ended.
    let listed = get_json(&base, "/api/debates").await;
    let messages = listed["debates"][0]["messages"].as_u64().unwrap() as usize;
    assert_eq!(grown, messages, "{dom}");
    assert!(dom.contains("id=\"status\">finished</span>"), "{dom}");
    // The script wrote the speaker's name as text, never as markup.
    assert!(!dom.contains("<img src=\"x\""), "{dom}");
    assert!(dom.contains("&lt;img src=x onerror=alert(2)&gt;"), "{dom}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_memories_overrides_and_comparisons_over_the_api() {
    let base = start(Duration::ZERO, None).await;
    let first = start_debate(&base).await;
    assert_eq!(
        end_status(&read_stream(&base, &first, None, None).await),
        "finished"
    );
    let second = start_debate(&base).await;
    assert_eq!(
        end_status(&read_stream(&base, &second, None, None).await),
        "finished"
    );

    // The finished debates are in their agents' trust memory.
    let agents = get_json(&base, "/api/agents").await;
    let names: Vec<&str> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agent"].as_str().unwrap())
        .collect();
    for name in ["Mara", "Theo", "Priya"] {
        assert!(names.contains(&name), "{names:?}");
    }
    let mara = get_json(&base, "/api/agents/Mara").await;
    assert_eq!(mara["agent_name"], "Mara", "{mara}");
    let missing = get(&base, "/api/agents/Nobody").await;
    assert_eq!(missing.status(), 404);
    assert!(
        missing.text().await.unwrap().contains("Mara"),
        "names who is known"
    );

    // A person overrides the first debate's synthesis.
    let path = format!("/api/debates/{first}/override");
    let r = post(
        &base,
        &path,
        json!({ "decision": "Keep the cars, price the parking." }),
    )
    .await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    let changed: Value = r.json().await.unwrap();
    assert_eq!(changed["agents"].as_array().unwrap().len(), 3, "{changed}");
    let r = post(&base, &path, json!({ "decision": "  " })).await;
    assert_eq!(r.status(), 400);
    let r = post(&base, &path, json!({ "decision": "x", "agent": "Nobody" })).await;
    assert_eq!(r.status(), 400);
    let mara = get_json(&base, "/api/agents/Mara").await;
    assert!(
        !mara["override_history"].as_array().unwrap().is_empty(),
        "{mara}"
    );

    // Both debates' metrics side by side.
    // A person rates the outcome: recorded in the finished debate's log.
    let r = post(
        &base,
        &format!("/api/debates/{first}/feedback"),
        json!({ "rating": "down" }),
    )
    .await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    let view = get_json(&base, &format!("/api/debates/{first}")).await;
    assert_eq!(view["view"]["user_feedback"], -1, "{view}");
    let r = post(
        &base,
        &format!("/api/debates/{first}/feedback"),
        json!({ "rating": "sideways" }),
    )
    .await;
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("sideways"));
    let r = post(
        &base,
        "/api/debates/d-nope/feedback",
        json!({ "rating": "up" }),
    )
    .await;
    assert_eq!(r.status(), 404);

    let compared = get_json(&base, &format!("/api/compare?ids={first},{second}")).await;
    let rows = compared["debates"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["debate"], first.as_str());
    assert!(rows[1]["metrics"].get("ledger_coverage").is_some());
    // Two debates: where they part (two debates of one configuration share
    // no event: each starts with its own id).
    let divergence = &compared["divergence"];
    assert_eq!(divergence["common_events"], 0, "{compared}");
    assert!(divergence["common_messages"].is_u64(), "{compared}");
    assert_eq!(get(&base, "/api/compare?ids=").await.status(), 400);
    assert_eq!(get(&base, "/api/compare?ids=d-nope").await.status(), 404);
}

/// A page in the headless browser, driven over the DevTools protocol: it
/// evaluates script in the page as a person's clicks and typing would.
struct Tab {
    browser: tokio::process::Child,
    socket: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    session: String,
    next: u64,
}

impl Tab {
    async fn open(url: &str) -> Self {
        use tokio::io::AsyncBufReadExt;
        let mut browser = tokio::process::Command::new(browser())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--remote-debugging-port=0",
                "about:blank",
            ])
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start the browser");
        let mut lines = tokio::io::BufReader::new(browser.stderr.take().unwrap()).lines();
        let endpoint = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(at) = line.find("ws://") {
                    return line[at..].trim().to_owned();
                }
            }
            panic!("the browser ended before it listened")
        })
        .await
        .expect("the browser listens");
        // Keep reading its stderr so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (socket, _) = tokio_tungstenite::connect_async(endpoint.as_str())
            .await
            .unwrap();
        let mut tab = Self {
            browser,
            socket,
            session: String::new(),
            next: 0,
        };
        let target = tab.call("Target.createTarget", json!({ "url": url })).await;
        let attached = tab
            .call(
                "Target.attachToTarget",
                json!({ "targetId": target["targetId"], "flatten": true }),
            )
            .await;
        tab.session = attached["sessionId"].as_str().unwrap().to_owned();
        tab
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        use futures::SinkExt;
        use tokio_tungstenite::tungstenite::Message;
        self.next += 1;
        let id = self.next;
        let mut request = json!({ "id": id, "method": method, "params": params });
        if !self.session.is_empty() {
            request["sessionId"] = json!(self.session);
        }
        self.socket
            .send(Message::text(request.to_string()))
            .await
            .unwrap();
        loop {
            let message = self
                .socket
                .next()
                .await
                .expect("the browser answers")
                .unwrap();
            let Ok(text) = message.to_text() else {
                continue;
            };
            let reply: Value = serde_json::from_str(text).unwrap_or_default();
            if reply["id"] == json!(id) {
                assert!(reply.get("error").is_none(), "{method}: {reply}");
                return reply["result"].clone();
            }
        }
    }

    /// The value of `expression` in the page.
    async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .call(
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true }),
            )
            .await;
        result["result"]["value"].clone()
    }

    /// Closes the browser and waits for it (and its helpers) to exit.
    async fn close(mut self) {
        self.session.clear();
        let _ = tokio::time::timeout(
            Duration::from_secs(5),
            self.call("Browser.close", json!({})),
        )
        .await;
        let _ = tokio::time::timeout(Duration::from_secs(10), self.browser.wait()).await;
    }

    /// Waits until `expression` is true in the page, once the page has
    /// loaded: its scripts have run, so a form found is one its script
    /// handles (a click before `list.js` had wired the start form submitted
    /// it as a plain GET under load, and the page never left `/`).
    async fn until(&mut self, expression: &str) {
        let loaded = format!("document.readyState === 'complete' && ({expression})");
        for _ in 0..300 {
            if self.eval(&loaded).await == json!(true) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let status = self
            .eval("(document.getElementById('status') || {}).textContent + ' | ' + (document.getElementById('steer-status') || {}).textContent")
            .await;
        panic!("never true in the page: {expression} (status | steering: {status})");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_answers_the_clarifying_questions_on_the_page() {
    let base = start(Duration::from_millis(20), None).await;
    // Two clarification rounds: the questions, then a follow-up.
    let id = start_with(&base, dialectic_clarifying(true, 2)).await;
    let mut tab = Tab::open(&format!("{base}/debates/{id}")).await;
    // The form appears with a field per question, and the person types.
    tab.until("document.querySelectorAll('#answer-form textarea').length > 0")
        .await;
    let fields = tab
        .eval("document.querySelectorAll('#answer-form textarea').length")
        .await;
    let asked = get_json(&base, &format!("/api/debates/{id}/questions")).await;
    assert_eq!(fields, json!(asked["questions"].as_array().unwrap().len()));
    tab.eval(
        "document.querySelectorAll('#answer-form textarea').forEach(function (t, i) { t.value = 'Typed on the page ' + (i + 1); }); \
         document.querySelector('#answer-form button').click(); true",
    )
    .await;
    // The follow-up round's form replaces it (each agent's third question).
    tab.until(
        "!document.getElementById('questions').hidden && \
         document.querySelectorAll('#answer-form textarea').length === 3",
    )
    .await;
    let asked = get_json(&base, &format!("/api/debates/{id}/questions")).await;
    assert!(
        asked["questions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|q| q["id"] == "q3"),
        "{asked}"
    );
    tab.eval(
        "document.querySelectorAll('#answer-form textarea').forEach(function (t, i) { t.value = 'Follow-up typed ' + (i + 1); }); \
         document.querySelector('#answer-form button').click(); true",
    )
    .await;
    tab.until("document.getElementById('questions').hidden")
        .await;
    // The answers reach the debate, which runs to its end on the page.
    let events = read_stream(&base, &id, None, None).await;
    assert_eq!(end_status(&events), "finished");
    let answers: Vec<String> = answer_events(&events)
        .iter()
        .map(|e| e["message"]["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        answers.first().map(String::as_str),
        Some("Typed on the page 1")
    );
    assert_eq!(
        answers.len(),
        fields.as_u64().unwrap() as usize + 3,
        "{answers:?}"
    );
    assert!(
        answers[..answers.len() - 3]
            .iter()
            .all(|a| a.starts_with("Typed on the page")),
        "{answers:?}"
    );
    assert!(
        answers[answers.len() - 3..]
            .iter()
            .all(|a| a.starts_with("Follow-up typed")),
        "{answers:?}"
    );
    tab.until("document.getElementById('status').textContent === 'finished'")
        .await;
    tab.close().await;
}

/// Runs on a [`recording_model`] sharing `prompts`.
struct Recorded {
    prompts: Arc<std::sync::Mutex<Vec<String>>>,
    /// When set, calls after the first wait until it opens
    /// ([`held_after_first`]).
    gate: Option<tokio::sync::watch::Receiver<bool>>,
}

#[async_trait]
impl Runtime for Recorded {
    async fn models(&self, _config: &DebateConfig) -> Result<Models, String> {
        let model: Arc<dyn ChatModel> = Arc::new(recording_model(
            ScriptedModel::new(Duration::from_millis(60)),
            Arc::clone(&self.prompts),
        ));
        let model = match &self.gate {
            None => model,
            Some(gate) => held_after_first(model, gate.clone()),
        };
        Ok(Models::uniform(model, PriceTable::with_defaults()))
    }
}

/// Waits (up to 30 s) until the debate's log records the pause.
async fn wait_until_paused(base: &str, id: &str) {
    for _ in 0..600 {
        let view: Value = get_json(base, &format!("/api/debates/{id}")).await;
        if view["view"]["paused"] == true {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("debate {id} was not paused in time");
}

/// The messages in the debate's transcript so far.
async fn message_count(base: &str, id: &str) -> u64 {
    let listed: Value = get_json(base, "/api/debates").await;
    listed["debates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == id)
        .and_then(|d| d["messages"].as_u64())
        .unwrap()
}

/// The events of a stream with their types, in order.
fn typed(events: &[Sse]) -> Vec<(u64, Value)> {
    events
        .iter()
        .filter(|e| e.kind == "event")
        .map(|e| {
            (
                e.id.unwrap(),
                serde_json::from_str::<Value>(&e.data).unwrap(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moderator_pauses_notes_and_resumes_a_running_debate() {
    let prompts = Arc::new(std::sync::Mutex::new(Vec::new()));
    // The model answers the first call and holds the rest until the pause
    // is posted, so that turns are left to speak after the resume.
    let (open, gate) = tokio::sync::watch::channel(false);
    let base = serve(Server::new(
        App::new(
            sqlite().await,
            Arc::new(Recorded {
                prompts: Arc::clone(&prompts),
                gate: Some(gate),
            }),
        ),
        None,
    ))
    .await;
    let id = start_debate(&base).await;
    read_stream(&base, &id, None, Some(4)).await;

    let r = post(
        &base,
        &format!("/api/debates/{id}/pause"),
        json!({ "by": "Chair" }),
    )
    .await;
    assert_eq!(r.status(), 202, "{:?}", r.text().await);
    open.send_replace(true);
    // Wait for the pause to be recorded, then check that it holds.
    wait_until_paused(&base, &id).await;
    let page = get(&base, &format!("/debates/{id}"))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("id=\"status\">paused<"),
        "the page says paused"
    );
    let before = message_count(&base, &id).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        message_count(&base, &id).await,
        before,
        "nobody spoke while paused"
    );

    // Bad notes are refused with a reason; a good one is queued.
    let r = post(
        &base,
        &format!("/api/debates/{id}/notes"),
        json!({ "text": "  " }),
    )
    .await;
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("the note is empty"));
    let long = "x".repeat(agon_core::MAX_NOTE_CHARS + 1);
    let r = post(
        &base,
        &format!("/api/debates/{id}/notes"),
        json!({ "text": long }),
    )
    .await;
    assert_eq!(r.status(), 400);
    let r = post(
        &base,
        &format!("/api/debates/{id}/pause"),
        json!({ "who": 1 }),
    )
    .await;
    assert_eq!(r.status(), 400, "an unknown field");
    let note = "Weigh the cost to small shops before anything else.";
    let r = post(
        &base,
        &format!("/api/debates/{id}/notes"),
        json!({ "text": note, "author": "Chair" }),
    )
    .await;
    assert_eq!(r.status(), 202, "{:?}", r.text().await);
    let prompts_before_resume = prompts.lock().unwrap().len();

    let r = post(&base, &format!("/api/debates/{id}/resume"), json!({})).await;
    assert_eq!(r.status(), 202);
    assert_eq!(r.json::<Value>().await.unwrap()["restarted"], false);
    let all = read_stream(&base, &id, None, None).await;
    assert_eq!(end_status(&all), "finished");
    let events = typed(&all);
    let seq_of = |kind: &str| {
        events
            .iter()
            .find(|(_, e)| e["type"] == kind)
            .map(|(s, _)| *s)
            .unwrap_or_else(|| panic!("no {kind}"))
    };
    let paused_at = seq_of("debate_paused");
    let (noted, resumed) = (seq_of("note_added"), seq_of("debate_resumed"));
    assert!(
        paused_at < noted && noted < resumed,
        "{paused_at} {noted} {resumed}"
    );
    assert!(
        !events
            .iter()
            .any(|(s, e)| *s > paused_at && *s < resumed && e["type"] == "message_appended"),
        "no message between the pause and the resume"
    );
    let (_, paused) = events.iter().find(|(s, _)| *s == paused_at).unwrap();
    assert_eq!(paused["by"], "Chair");

    // Every turn after the note showed it.
    let later: Vec<String> = prompts.lock().unwrap()[prompts_before_resume..].to_vec();
    let turns: Vec<&String> = later
        .iter()
        .filter(|p| p.contains("── DEBATE STATE"))
        .collect();
    assert!(!turns.is_empty(), "turns spoke after the resume");
    for prompt in &turns {
        assert!(prompt.contains("── MODERATOR NOTES"), "{prompt}");
        assert!(prompt.contains(note), "{prompt}");
    }
    let md = get(&base, &format!("/api/debates/{id}/report"))
        .await
        .text()
        .await
        .unwrap();
    assert!(md.contains(&format!("{note} — Chair")), "{md}");

    // A finished debate takes no note and no resume.
    let r = post(
        &base,
        &format!("/api/debates/{id}/notes"),
        json!({ "text": "late" }),
    )
    .await;
    assert_eq!(r.status(), 409);
    assert!(r.text().await.unwrap().contains("not running"));
    let r = post(&base, &format!("/api/debates/{id}/resume"), json!({})).await;
    assert_eq!(r.status(), 409);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debate_stopped_while_paused_resumes_unpaused() {
    let (base, open) = start_held(Duration::from_millis(40)).await;
    let id = start_debate(&base).await;
    read_stream(&base, &id, None, Some(3)).await;
    let r = post(&base, &format!("/api/debates/{id}/pause"), json!({})).await;
    assert_eq!(r.status(), 202);
    open.send_replace(true);
    wait_until_paused(&base, &id).await;
    let r = post(&base, &format!("/api/debates/{id}/stop"), json!({})).await;
    assert_eq!(r.status(), 202);
    let stopped = read_stream(&base, &id, None, None).await;
    assert_eq!(end_status(&stopped), "interrupted");
    let r = post(&base, &format!("/api/debates/{id}/resume"), json!({})).await;
    assert_eq!(r.status(), 202);
    assert_eq!(r.json::<Value>().await.unwrap()["restarted"], true);
    let resumed = read_stream(&base, &id, None, None).await;
    assert_eq!(end_status(&resumed), "finished");
    assert!(
        typed(&resumed)
            .iter()
            .any(|(_, e)| e["type"] == "debate_resumed")
    );
}

/// The structured debate the start form's test types: three personas, two
/// aspects, a crux room (the scripted model opens a claim between Mara and
/// Theo and writes its card).
const CRUX_TOML: &str = r#"topic = "Should cities ban private cars from their centres?"
minirounds = 2

[crux]
max_turns = 2
check_every = 2
max_rooms = 1

[[personas]]
name = "Mara"
contract = "Urban planner for car-free centres."
voice = "direct"

[[personas]]
name = "Theo"
contract = "Economist skeptical of bans."
voice = "dry"

[[personas]]
name = "Priya"
contract = "Public-health physician."
voice = "warm"

[[aspects]]
label = "Cost"
description = "Who pays."

[[aspects]]
label = "Health"
description = "Air and safety."
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_starts_steers_and_overrides_a_debate_on_the_page() {
    let base = start(Duration::from_millis(60), None).await;
    let mut tab = Tab::open(&format!("{base}/")).await;
    tab.until("!!document.getElementById('start-form')").await;
    // The person writes a configuration into the start form and starts it.
    tab.eval(&format!(
        "document.querySelector('#start-form textarea').value = {}; \
         document.querySelector('#start-form button').click(); true",
        json!(CRUX_TOML)
    ))
    .await;
    tab.until(
        "location.pathname.indexOf('/debates/') === 0 && !!document.getElementById('note-form')",
    )
    .await;
    let path = tab.eval("location.pathname").await;
    let id = path
        .as_str()
        .unwrap()
        .trim_start_matches("/debates/")
        .to_owned();
    assert_eq!(
        tab.eval("document.body.innerHTML.indexOf('◆') < 0").await,
        json!(true)
    );

    // A note and a pause from the page.
    let note = "Keep it to what the city can afford this decade.";
    tab.eval(&format!(
        "var f = document.getElementById('note-form'); f.elements.text.value = {}; \
         f.elements.author.value = 'Chair'; f.querySelector('button').click(); true",
        json!(note)
    ))
    .await;
    tab.until("document.getElementById('steer-status').textContent.indexOf('note queued') === 0")
        .await;
    tab.eval("document.getElementById('pause').click(); true")
        .await;
    tab.until("document.getElementById('status').textContent === 'paused'")
        .await;
    let view: Value = get_json(&base, &format!("/api/debates/{id}")).await;
    assert_eq!(view["view"]["paused"], true);
    // The note sits in the transcript, as text.
    tab.until(&format!(
        "Array.prototype.some.call(document.querySelectorAll('#transcript .note'), function (n) {{ return n.textContent === 'Moderator (Chair): ' + {}; }})",
        json!(note)
    ))
    .await;
    tab.eval("document.getElementById('resume').click(); true")
        .await;

    // The ledger and the crux card appear as the debate goes on, and the
    // page follows it to its end.
    tab.until("document.querySelectorAll('#panels h3').length > 0")
        .await;
    tab.until("document.getElementById('panels').textContent.indexOf('◆') >= 0")
        .await;
    tab.until("document.getElementById('status').textContent === 'finished'")
        .await;
    let card = tab
        .eval("document.getElementById('panels').textContent")
        .await;
    assert!(
        card.as_str().unwrap().contains("Claims and crux cards"),
        "{card}"
    );

    // Finished: the override form replaces the steering one.
    tab.until(
        "document.getElementById('steer').hidden && !document.getElementById('override').hidden",
    )
    .await;
    tab.eval(
        "var o = document.getElementById('override-form'); o.elements.decision.value = 'We chose congestion pricing.'; \
         o.elements.agent.value = 'Theo'; o.querySelector('button').click(); true",
    )
    .await;
    tab.until("document.getElementById('override-status').textContent === 'recorded in the trust memory of Theo'")
        .await;
    tab.eval("document.getElementById('rate-up').click(); true")
        .await;
    tab.until("document.getElementById('rate-status').textContent === 'rated up'")
        .await;
    tab.close().await;

    let rated = get_json(&base, &format!("/api/debates/{id}")).await;
    assert_eq!(rated["view"]["user_feedback"], 1);
    let theo = get_json(&base, "/api/agents/Theo").await;
    assert!(
        theo.to_string().contains("We chose congestion pricing."),
        "{theo}"
    );
}

/// Runs on the scripted model with vector memory (the local MiniLM
/// embedder) in the store's database, and recalls from it.
struct Remembering {
    url: String,
    embedder: Arc<dyn agon_llm::Embedder>,
}

impl Remembering {
    /// The memory, opened on a blocking thread (the migrator's future is
    /// not `Send`).
    async fn open(&self) -> Result<agon_memory::Memory, String> {
        let (url, embedder) = (self.url.clone(), Arc::clone(&self.embedder));
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            handle.block_on(async move {
                let index = agon_memory::open(&url).await.map_err(|e| e.to_string())?;
                agon_memory::Memory::open(index, embedder, agon_memory::RetrievalConfig::default())
                    .await
                    .map_err(|e| e.to_string())
            })
        })
        .await
        .map_err(|e| e.to_string())?
    }
}

#[async_trait]
impl Runtime for Remembering {
    async fn models(&self, _config: &DebateConfig) -> Result<Models, String> {
        Ok(Models::uniform(
            Arc::new(ScriptedModel::new(Duration::from_millis(30))),
            PriceTable::with_defaults(),
        ))
    }

    async fn equip(&self, orch: Orchestrator, _config: &DebateConfig) -> Orchestrator {
        match self.open().await {
            Ok(memory) => orch.with_memory(memory),
            Err(reason) => orch.with_memory_unavailable(reason),
        }
    }

    async fn memory(&self, embedder: &str) -> Result<agon_memory::Memory, String> {
        assert_eq!(embedder, "local");
        self.open().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recall_reads_the_memories_debates_left() {
    let dir = std::env::temp_dir().join("agon-server-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!(
        "sqlite://{}",
        dir.join(format!(
            "recall_{}_{}.db",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ))
        .display()
    );
    let embedder: Arc<dyn agon_llm::Embedder> =
        Arc::new(agon_local::LocalEmbedder::minilm().unwrap_or_else(|e| panic!("{e}")));
    let base = serve(Server::new(
        App::new(
            agon_store::open(&url).await.unwrap(),
            Arc::new(Remembering {
                url: url.clone(),
                embedder,
            }),
        ),
        None,
    ))
    .await;
    let id = start_debate(&base).await;
    assert_eq!(
        end_status(&read_stream(&base, &id, None, None).await),
        "finished"
    );

    let recalled = get_json(
        &base,
        &format!("/api/recall?q=who%20pays%20for%20it&persona=Mara&debate={id}&k=3"),
    )
    .await;
    let memories = recalled["memories"].as_array().unwrap();
    assert!(!memories.is_empty() && memories.len() <= 3, "{recalled}");
    for m in memories {
        assert_eq!(m["memory"]["persona"], "mara", "{m}");
        assert_eq!(m["memory"]["debate"], id.as_str(), "{m}");
        assert!(m["score"].as_f64().unwrap() > 0.0, "{m}");
    }
    // Everyone's memories, when no persona is named.
    let all = get_json(&base, "/api/recall?q=cost&k=20").await;
    let speakers: std::collections::BTreeSet<&str> = all["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["memory"]["persona"].as_str().unwrap())
        .collect();
    assert!(speakers.len() > 1, "{all}");
    // Validity: positions name their subject (a later one on the same
    // subject closes an earlier one: `successor` on a superseded hit).
    assert!(
        all["memories"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["memory"]["kind"] == "position" && m["memory"]["subject"].is_string()),
        "{all}"
    );

    let empty = get(&base, "/api/recall?q=%20").await;
    assert_eq!(empty.status(), 400);
    assert!(empty.text().await.unwrap().contains("the query is empty"));
    let unknown = get(&base, "/api/recall?q=x&who=1").await;
    assert_eq!(unknown.status(), 400);

    // A server whose runner has no memory says so.
    let bare = start(Duration::ZERO, None).await;
    let none = get(&bare, "/api/recall?q=cost").await;
    assert_eq!(none.status(), 503);
    assert!(none.text().await.unwrap().contains("no vector memory"));
}

/// Nor programs or addresses: a configuration declaring MCP servers (by
/// command or by URL) is refused too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_cannot_name_files_of_the_server() {
    let base = start(Duration::ZERO, None).await;
    let mut with_dir = dialectic_config(false);
    with_dir["context_dir"] = json!("/etc");
    let mut with_corpus = config();
    with_corpus["personas"][0]["corpus"] = json!(["/etc/passwd"]);
    let mut with_command = dialectic_config(false);
    with_command["mcp_servers"] = json!({"sh": {"command": "/bin/sh", "args": ["-c", "id"]}});
    let mut with_url = dialectic_config(false);
    with_url["mcp_servers"] = json!({"internal": {"url": "http://169.254.169.254/mcp"}});
    for config in [with_dir, with_corpus, with_command, with_url] {
        let r = post(&base, "/api/debates", json!({ "config": config })).await;
        assert_eq!(r.status(), 400);
        assert!(
            r.text()
                .await
                .unwrap()
                .contains("not accepted over the API"),
            "refused with the reason"
        );
    }
}

/// `agon serve --mcp`: a real MCP client (rmcp's, over streamable HTTP at
/// `/mcp`) starts a debate and waits for it, reads its report, and the
/// debate is the server's own (the API lists it). The endpoint is behind
/// the API's token: a client without it is refused, one with it served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_over_http_runs_a_debate_the_api_lists() {
    use rmcp::ServiceExt as _;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let token = agon_server::new_token().unwrap();
    let app = App::new(
        sqlite().await,
        Arc::new(Scripted {
            delay: Duration::ZERO,
        }),
    );
    let base = serve(Server::new(app, Some(token.clone())).with_mcp(true)).await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}});
    let refused = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);

    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp"))
            .auth_header(token.clone()),
    );
    let client = ().serve(transport).await.unwrap();
    let tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(tools.contains(&"start_debate".to_owned()), "{tools:?}");
    let text = |result: rmcp::model::CallToolResult| -> String {
        assert_ne!(result.is_error, Some(true), "{result:?}");
        result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect()
    };
    let call = |name: &'static str, arguments: Value| {
        let mut params = CallToolRequestParams::new(name);
        params.arguments = arguments.as_object().cloned();
        params
    };
    let done = text(
        client
            .call_tool(call(
                "start_debate",
                json!({"topic": "Design a rate limiter", "protocol": "dialectic", "rounds": 1, "wait": true}),
            ))
            .await
            .unwrap(),
    );
    assert!(done.contains(": finished"), "{done}");
    let id = done
        .strip_prefix("debate ")
        .and_then(|rest| rest.split(':').next())
        .unwrap()
        .to_owned();
    let report = text(
        client
            .call_tool(call("debate_report", json!({"id": id})))
            .await
            .unwrap(),
    );
    assert!(
        report.starts_with('#') && report.contains("rate limiter"),
        "{report}"
    );
    let listed: Value = reqwest::Client::new()
        .get(format!("{base}/api/debates"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        listed["debates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["id"] == id.as_str() && d["status"] == "finished"),
        "{listed:#}"
    );
    client.cancel().await.unwrap();
}

/// A fresh database on the test PostgreSQL (`AGON_TEST_DATABASE_URL`,
/// which `cargo xtask test` starts): its URL.
async fn fresh_postgres(prefix: &str) -> String {
    use sqlx::Connection;
    let admin = std::env::var("AGON_TEST_DATABASE_URL")
        .expect("AGON_TEST_DATABASE_URL is not set: run the suite with `cargo xtask test`");
    let name = format!(
        "agon_t_{prefix}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let mut c = sqlx::PgConnection::connect(&admin).await.unwrap();
    for sql in [
        format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        format!("CREATE DATABASE {name}"),
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(&mut c)
            .await
            .unwrap();
    }
    let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
    format!("{base}/{name}")
}

/// A debate submitted to a worker on PostgreSQL is steered from the page
/// of a server that does not run it: a note (every later prompt shows
/// it), a pause (no job runs while it holds), a resume (queued again, and
/// the page follows it to its end).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_run_debate_is_noted_paused_and_resumed_from_the_page() {
    let url = fresh_postgres("page_worker").await;
    let store = agon_store::open(&url).await.unwrap();
    let prompts = Arc::new(std::sync::Mutex::new(Vec::new()));
    let runtime = Arc::new(Recorded {
        prompts: Arc::clone(&prompts),
        gate: None,
    });
    let queue = agon_worker::JobQueue::connect(&url).await.unwrap();
    let app = App::new(Arc::clone(&store), runtime).with_queue(Arc::new(queue.clone()));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = {
        let (queue, app) = (queue.clone(), app.clone());
        let settings = agon_worker::WorkerSettings {
            poll_interval: Duration::from_millis(50),
            ..agon_worker::WorkerSettings::default()
        };
        tokio::spawn(async move {
            agon_worker::run_worker(&queue, app, settings, async move {
                let _ = stopped.await;
            })
            .await
        })
    };
    let config: DebateConfig = serde_json::from_value(config()).unwrap();
    let config = DebateConfig {
        topic: "Should cities ban private cars from their centres?".into(),
        minirounds: 3,
        aspects: vec![
            AspectConfig {
                label: "Cost".into(),
                description: "Who pays.".into(),
            },
            AspectConfig {
                label: "Health".into(),
                description: "Who breathes.".into(),
            },
        ],
        ..config
    };
    let id = app.orchestrator().create(&config).await.unwrap();
    queue.submit(&id).await.unwrap();
    // A server that runs nothing itself: the worker runs the debate.
    let base = serve(Server::new(app.clone(), None)).await;
    let mut tab = Tab::open(&format!("{base}/debates/{id}")).await;
    tab.until("document.querySelectorAll('#transcript .msg').length > 0")
        .await;
    assert!(!app.runs_here(&id));

    let note = "NOTE-PG: the night buses count too.";
    tab.eval(&format!(
        "var f = document.getElementById('note-form'); f.elements.text.value = {}; \
         f.elements.author.value = 'Chair'; f.querySelector('button').click(); true",
        json!(note)
    ))
    .await;
    tab.until("document.getElementById('steer-status').textContent.indexOf('note queued') === 0")
        .await;
    let at_note = prompts.lock().unwrap().len();
    tab.eval("document.getElementById('pause').click(); true")
        .await;
    tab.until("document.getElementById('status').textContent === 'paused'")
        .await;
    tab.until(&format!(
        "Array.prototype.some.call(document.querySelectorAll('#transcript .note'), function (n) {{ return n.textContent === 'Moderator (Chair): ' + {}; }})",
        json!(note)
    ))
    .await;
    // Paused: its last job ends without queuing another, and no turn comes.
    let mut waited = 0;
    while queue.jobs().await.unwrap().iter().any(|j| j.debate == id) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
        assert!(waited < 600, "the paused debate keeps a job");
    }
    let held = store.load(&id).await.unwrap().0.messages().len();
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert_eq!(store.load(&id).await.unwrap().0.messages().len(), held);
    assert!(queue.jobs().await.unwrap().iter().all(|j| j.debate != id));

    tab.eval("document.getElementById('resume').click(); true")
        .await;
    tab.until("document.getElementById('status').textContent === 'finished'")
        .await;
    tab.close().await;
    assert!(
        prompts.lock().unwrap()[at_note..]
            .iter()
            .any(|p| p.contains("NOTE-PG")),
        "the note reaches the agents' next contexts"
    );
    let _ = stop.send(());
    worker.await.unwrap().unwrap();
}

/// `GET /api/openapi.json` describes exactly the API's routes: every
/// `(method, path)` the router's sources declare under `/api/` is in the
/// document, every operation of the document is served (not the router's
/// fallback), and each typed body has its schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_describes_exactly_the_routes_served() {
    let base = start(Duration::ZERO, None).await;
    let doc = get_json(&base, "/api/openapi.json").await;
    assert_eq!(doc["openapi"], "3.0.3");
    let mut documented = std::collections::BTreeSet::new();
    for (path, methods) in doc["paths"].as_object().unwrap() {
        for method in methods.as_object().unwrap().keys() {
            documented.insert((method.clone(), path.clone()));
        }
    }
    // What the router's sources declare.
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut declared = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines() {
            let Some(at) = line.find(".route(\"") else {
                continue;
            };
            let rest = &line[at + ".route(\"".len()..];
            let Some((path, handlers)) = rest.split_once('"') else {
                continue;
            };
            if !path.starts_with("/api/") {
                continue;
            }
            for method in ["get", "post", "delete"] {
                if handlers.contains(&format!("{method}(")) {
                    declared.insert((method.to_owned(), path.to_owned()));
                }
            }
        }
    }
    assert!(declared.len() > 15, "{declared:?}");
    assert_eq!(declared, documented, "the document and the routes differ");
    // Every documented operation is served.
    for (method, path) in &documented {
        let url = format!(
            "{base}{}",
            path.replace("{name}/proposals/{id}", "dialectic/proposals/99")
                .replace("{id}", "d-nope")
                .replace("{name}", "Nobody")
        );
        let request = match method.as_str() {
            "post" => client().post(url).json(&json!({})),
            "delete" => client()
                .delete(url)
                .header("content-type", "application/json"),
            _ => client().get(url),
        };
        let response = request.send().await.unwrap();
        let status = response.status();
        let body = if path.ends_with("/events") {
            String::new()
        } else {
            response.text().await.unwrap()
        };
        assert!(
            !body.contains("no such route"),
            "{method} {path}: {status} {body}"
        );
    }
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for name in [
        "Note",
        "Fork",
        "Queued",
        "Resumed",
        "Forked",
        "Questions",
        "Override",
    ] {
        assert!(
            schemas.contains_key(name),
            "{name} missing: {:?}",
            schemas.keys()
        );
    }

    // The log as `agon export` prints it, and a deletion as `agon delete`.
    let id = start_debate(&base).await;
    assert_eq!(
        end_status(&read_stream(&base, &id, None, None).await),
        "finished"
    );
    let log = get_json(&base, &format!("/api/debates/{id}/export")).await;
    let events = log.as_array().unwrap().len() as u64;
    assert!(events > 10 && log[0]["seq"] == 1, "{log}");
    let deleted: Value = client()
        .delete(format!("{base}/api/debates/{id}"))
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(deleted["events"], events, "{deleted}");
    assert_eq!(
        get(&base, &format!("/api/debates/{id}")).await.status(),
        404
    );
}

/// The living rubric over the API: its book, and a proposal that does not
/// exist refused with its number (the accept and reject flow on real
/// proposals runs in the orchestrator's scenario test, through the same
/// use cases).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_living_rubric_reads_and_refuses_an_unknown_proposal_over_the_api() {
    let base = start(Duration::ZERO, None).await;
    let book = get_json(&base, "/api/rubrics/dialectic").await;
    assert_eq!(book["name"], "dialectic", "{book}");
    assert_eq!(book["versions"][0]["version"], 1, "{book}");
    for action in ["accept", "reject"] {
        let r = post(
            &base,
            &format!("/api/rubrics/dialectic/proposals/42/{action}"),
            json!({}),
        )
        .await;
        assert_eq!(r.status(), 400, "{action}");
        let body: Value = r.json().await.unwrap();
        assert!(body["error"].as_str().unwrap().contains("42"), "{body}");
    }
}

/// What every free-text answer of the [`Markdown`] runtime ends with:
/// Markdown, and hostile Markdown.
const MARKDOWN_TAIL: &str = "\n\n### Plan\n\n* **bucket** per key\n* `refill` on read\n\nSee [steal](javascript:alert(8)) and ![pixel](https://evil.example/p.png).\n\n<script>alert(9)</script>";

struct Markdown {
    delay: Duration,
}

#[async_trait]
impl Runtime for Markdown {
    async fn models(&self, _config: &DebateConfig) -> Result<Models, String> {
        Ok(Models::uniform(
            Arc::new(agon_testkit::TailedModel::new(
                ScriptedModel::new(self.delay),
                Box::new(|_| Some(MARKDOWN_TAIL.to_owned())),
            )),
            PriceTable::with_defaults(),
        ))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_sees_markdown_rendered_hostile_markdown_inert_and_a_long_topic_clamped() {
    let store = sqlite().await;
    let base = serve(Server::new(
        App::new(
            Arc::clone(&store),
            Arc::new(Markdown {
                delay: Duration::from_millis(60),
            }),
        ),
        None,
    ))
    .await;
    let mut c = config();
    let problem = format!(
        "Should the city ban cars from its centre?\n\n{}",
        "Consider deliveries, buses and the disabled. ".repeat(25)
    );
    c["topic"] = json!(problem);
    let id = start_with(&base, c).await;
    // Followed live from the start: the messages the script appends are
    // rendered as the server renders them.
    let live = browse(&format!("{base}/debates/{id}"), Duration::from_secs(8)).await;
    assert_eq!(
        end_status(&read_stream(&base, &id, None, None).await),
        "finished"
    );
    let reloaded = browse(&format!("{base}/debates/{id}"), Duration::from_secs(1)).await;
    for (what, dom) in [("live", &live), ("reloaded", &reloaded)] {
        let rendered = dom.matches("<h3>Plan</h3>").count();
        assert!(rendered >= 4, "{what}: {rendered} rendered answers\n{dom}");
        assert!(
            dom.contains("<li><strong>bucket</strong> per key</li>"),
            "{what}: {dom}"
        );
        assert!(!dom.contains("<script>alert(9)"), "{what}: {dom}");
        assert!(
            dom.contains("&lt;script&gt;alert(9)&lt;/script&gt;"),
            "{what}"
        );
        assert!(!dom.contains("href=\"javascript:"), "{what}: {dom}");
        assert!(
            dom.contains("See steal and "),
            "{what}: the link's text stays"
        );
        assert!(!dom.contains("<img"), "{what}: an image is never loaded");
        assert!(
            dom.contains("<a href=\"https://evil.example/p.png\">pixel</a>"),
            "{what}: an image is a link to it"
        );
    }
    // The long problem (the live page may load before the debate records
    // it): one clamped line, the whole text on demand.
    assert!(
        reloaded.contains(
            "<summary><span class=\"clamp\">Should the city ban cars from its centre?</span>"
        ),
        "{reloaded}"
    );
    assert!(reloaded.contains("<div class=\"whole\">Should the city ban cars"));
    assert!(reloaded.contains("<title>Agon: Should the city ban cars from its centre?</title>"));
    // Every message ends in the Markdown tail: each is rendered.
    assert_eq!(
        reloaded.matches("class=\"msg\"").count(),
        reloaded.matches("<h3>Plan</h3>").count(),
        "{reloaded}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_filters_the_list_and_pages_past_fifty_debates() {
    let store = sqlite().await;
    let base = serve(Server::new(
        App::new(
            Arc::clone(&store),
            Arc::new(Scripted {
                delay: Duration::ZERO,
            }),
        ),
        None,
    ))
    .await;
    let finished = start_with(&base, config()).await;
    assert_eq!(
        end_status(&read_stream(&base, &finished, None, None).await),
        "finished"
    );
    // 55 more, created and not run: 30 dialectic, 25 structured.
    let orch = agon_app::orchestrator_for(Arc::clone(&store));
    let structured: DebateConfig = serde_json::from_value(config()).unwrap();
    let dialectic: DebateConfig = serde_json::from_value(dialectic_config(false)).unwrap();
    for i in 0..55 {
        orch.create(if i < 30 { &dialectic } else { &structured })
            .await
            .unwrap();
    }
    let all = browse(&format!("{base}/"), Duration::from_millis(300)).await;
    assert!(all.contains("1–50 of 56"), "{all}");
    assert_eq!(all.matches("<td class=\"id\">").count(), 50);
    assert!(all.contains("id=\"older\""), "{all}");
    let second = browse(&format!("{base}/?page=2"), Duration::from_millis(300)).await;
    assert!(second.contains("51–56 of 56"), "{second}");
    assert_eq!(second.matches("<td class=\"id\">").count(), 6);
    assert!(second.contains("id=\"newer\""), "{second}");
    let dialectic = browse(
        &format!("{base}/?protocol=dialectic&status="),
        Duration::from_millis(300),
    )
    .await;
    assert!(dialectic.contains("1–30 of 30"), "{dialectic}");
    assert!(!dialectic.contains(">structured</td>"), "{dialectic}");
    let done = browse(
        &format!("{base}/?status=finished"),
        Duration::from_millis(300),
    )
    .await;
    assert!(done.contains("1–1 of 1"), "{done}");
    assert!(done.contains(&format!("/debates/{finished}")), "{done}");
}
