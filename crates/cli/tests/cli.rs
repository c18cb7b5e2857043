//! The `agon` binary end to end: commands, exit codes, and resume after
//! SIGKILL at random points (against a local OpenAI-compatible stub server
//! answering with the scripted model).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use agon_testkit::openai_reply;
use serde_json::Value;

const AGON: &str = env!("CARGO_BIN_EXE_agon");

struct Stub {
    delay: Duration,
}

impl wiremock::Respond for Stub {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let (content_type, text) = openai_reply(&body);
        wiremock::ResponseTemplate::new(200)
            .set_body_raw(text, content_type)
            .set_delay(self.delay)
    }
}

async fn stub(delay: Duration) -> wiremock::MockServer {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Stub { delay })
        .mount(&server)
        .await;
    server
}

/// A fresh directory for one test's store and config, removed when dropped.
fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("agon-cli-tests-{name}-"))
        .tempdir()
        .unwrap()
}

fn config(dir: &Path, server: &str) -> PathBuf {
    let path = dir.join("debate.toml");
    std::fs::write(
        &path,
        format!(
            r#"topic = "Should cities ban private cars from their centres?"
minirounds = 2

[[aspects]]
label = "Cost"

[[aspects]]
label = "Health"

[[personas]]
name = "Mara"
contract = "Urban planner, for car-free centres."

[[personas]]
name = "Theo"
contract = "Economist, against bans."

[[personas]]
name = "Priya"
contract = "Physician, open to compromise."

[models]
default = "openai-compatible:stub@{server}/v1"

[crux]
max_turns = 2
check_every = 2
max_rooms = 1
"#
        ),
    )
    .unwrap();
    path
}

/// The test config with the vector memory off, for the tests of the log's
/// durability and of process control, which the memory does not take part
/// in: each `agon` process then loads no embedder (MiniLM's load and
/// embeddings were half the CPU of the kill test's ~30 processes).
fn config_without_memory(dir: &Path, server: &str) -> PathBuf {
    let path = config(dir, server);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("\n[memory]\nenabled = false\n");
    std::fs::write(&path, text).unwrap();
    path
}

fn agon(dir: &Path, args: &[&str]) -> Output {
    Command::new(AGON)
        .env(
            "AGON_STORE",
            format!("sqlite://{}", dir.join("agon.db").display()),
        )
        .env_remove("AGON_MODELS_DIR")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn only_debate(dir: &Path) -> String {
    let list = agon(dir, &["list"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let text = stdout(&list);
    let ids: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(ids.len(), 1, "{text}");
    ids[0].to_owned()
}

fn canonical(dir: &Path, id: &str) -> Value {
    let shown = agon(dir, &["show", id, "--json"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let mut v: Value = serde_json::from_slice(&shown.stdout).unwrap();
    agon_testkit::strip_volatile(&mut v);
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_run_show_report_and_export_a_debate() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("commands");
    let dir = dir_tmp.path();
    let cfg = config(dir, &server.uri());
    let run = agon(dir, &["debate", "--config", cfg.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    // Utterances are streamed under their speaker's name.
    assert!(stdout(&run).contains("Mara speaks:"), "{}", stdout(&run));
    let id = only_debate(dir);
    assert!(stdout(&agon(dir, &["list"])).contains("finished"));

    let transcript = stdout(&agon(dir, &["show", &id]));
    assert!(
        transcript.contains("[msg-1] Mara (opening)"),
        "{transcript}"
    );
    let board = stdout(&agon(dir, &["show", &id, "--blackboard"]));
    assert!(
        board.contains("CLAIMS") && board.contains("claim-1"),
        "{board}"
    );

    let out = dir.join("report.md");
    let report = agon(dir, &["report", &id, "-o", out.to_str().unwrap()]);
    assert!(report.status.success(), "{}", stderr(&report));
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(md.contains("## Position ledger") && md.contains("## Usage and cost"));
    assert!(
        md.contains("## Metrics") && md.contains("| Crux compression |"),
        "{md}"
    );

    // The metrics: as text, as JSON (numbers that agree with each other),
    // and side by side for several debates.
    let shown = agon(dir, &["show", &id, "--metrics"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert!(
        stdout(&shown).contains("| Ledger coverage |"),
        "{}",
        stdout(&shown)
    );
    let json = agon(dir, &["--json", "show", &id, "--metrics"]);
    let m: Value = serde_json::from_slice(&json.stdout).unwrap();
    let (analysed, messages) = (
        m["messages_analysed"].as_u64().unwrap(),
        m["messages"].as_u64().unwrap(),
    );
    assert!(messages > 0 && analysed <= messages, "{m}");
    assert_eq!(m["personas"].as_array().unwrap().len(), 3, "{m}");
    assert!(m["utterance_tokens"].as_u64().unwrap() > 0, "{m}");
    let compare = agon(dir, &["compare", &id, &id]);
    assert!(compare.status.success(), "{}", stderr(&compare));
    let table = stdout(&compare);
    assert!(
        table.starts_with(&format!("| Metric | {id} | {id} |")),
        "{table}"
    );
    let missing = agon(dir, &["compare", &id, "d-missing"]);
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains("d-missing"),
        "{}",
        stderr(&missing)
    );

    let export = agon(dir, &["export", &id]);
    let events: Vec<Value> = serde_json::from_slice(&export.stdout).unwrap();
    assert_eq!(events[0]["seq"], 1);
    assert_eq!(events[0]["event"]["type"], "debate_started");
    assert_eq!(events.last().unwrap()["event"]["type"], "debate_finished");

    // The trust memory: a human overrides the synthesis for Theo; the
    // agents table, `agents show`, export → import, bad input.
    let decision = dir.join("decision.md");
    std::fs::write(&decision, "Ban cars on weekends only.").unwrap();
    let file = decision.to_str().unwrap();
    let o = agon(dir, &["override", &id, "--file", file, "--agent", "theo"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("for Theo"), "{}", stderr(&o));
    // The debate itself was recorded (rounds, crux-room dissents); the
    // override is Theo's only.
    let table = stdout(&agon(dir, &["agents"]));
    let theo = table
        .lines()
        .find(|l| l.starts_with("Theo"))
        .unwrap_or_default();
    let columns: Vec<&str> = theo.split_whitespace().collect();
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    assert_eq!(
        columns.get(column("overrides")),
        Some(&"1"),
        "one override: {table}"
    );
    // Theo's crux-room positions escalated; the seed's metrics are listed.
    assert!(
        columns.get(column("escalated")).is_some_and(|n| *n != "0"),
        "{table}"
    );
    assert!(table.contains("Mara") && table.contains("Priya"), "{table}");
    let exported = agon(dir, &["agents", "export", "Theo"]);
    let memory: Value = serde_json::from_slice(&exported.stdout).unwrap();
    assert_eq!(memory["agent_name"], "Theo");
    assert_eq!(memory["debates"][0], id.as_str());
    assert_eq!(
        memory["override_history"][0]["human_decision"],
        "Ban cars on weekends only."
    );
    let score = memory["trust_score"].as_f64().unwrap();
    assert!(
        columns.get(1) == Some(&format!("{score:.2}").as_str()),
        "{table}"
    );
    let shown = stdout(&agon(dir, &["agents", "show", "Theo"]));
    assert!(
        shown.contains("overrides (1)")
            && shown.contains("standing")
            && shown.contains(&format!("trust {score:.3}"))
            && shown.contains("escalated to a crux room")
            && shown.contains("controversy 1.00 per debate over 1 debates"),
        "{shown}"
    );
    let saved = dir.join("Theo.json");
    std::fs::write(&saved, &exported.stdout).unwrap();
    let imported = agon(dir, &["agents", "import", saved.to_str().unwrap()]);
    assert!(imported.status.success(), "{}", stderr(&imported));
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"agent_name": "Kai", "rounds_participated": -1}"#).unwrap();
    let refused = agon(dir, &["agents", "import", bad.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("bad.json") && stderr(&refused).contains("invalid value"),
        "{}",
        stderr(&refused)
    );
    // A wrong type names the field, not only a line and column.
    std::fs::write(&bad, r#"{"agent_name": "Broken", "trust_score": "high"}"#).unwrap();
    let refused = agon(dir, &["agents", "import", bad.to_str().unwrap()]);
    assert!(
        stderr(&refused).contains("field `trust_score`"),
        "{}",
        stderr(&refused)
    );
    let unknown = agon(dir, &["agents", "show", "Kai"]);
    assert!(!unknown.status.success());
    assert!(stderr(&unknown).contains("Kai"), "{}", stderr(&unknown));
    let nobody = agon(dir, &["override", &id, "--file", file, "--agent", "Zed"]);
    assert!(!nobody.status.success());
    assert!(
        stderr(&nobody).contains("did not take part"),
        "{}",
        stderr(&nobody)
    );
    let check = agon(dir, &["trust", "check"]);
    assert!(check.status.success(), "{}", stderr(&check));
    assert!(
        stderr(&check).contains("0 override(s) marked regretted"),
        "{}",
        stderr(&check)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topic_without_a_config_is_debated_by_personas_cast_for_it() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("cast");
    let dir = dir_tmp.path();
    let model = format!("openai-compatible:stub@{}/v1", server.uri());
    let run = agon(
        dir,
        &[
            "debate",
            "Should we tax sugar?",
            "--model",
            &model,
            "--aspects",
            "1",
            "--minirounds",
            "1",
            "--personas",
            "4",
        ],
    );
    assert!(run.status.success(), "{}", stderr(&run));
    // The live view names the cast and the aspects by their labels.
    let out = stdout(&run);
    assert!(
        out.contains("Personas: Lena (Argues for \"Should we tax sugar?\".)"),
        "{out}"
    );
    assert!(out.contains("── aspect 1: Costs ──"), "{out}");
    let id = only_debate(dir);
    let board: Value = serde_json::from_slice(&agon(dir, &["show", &id, "--json"]).stdout).unwrap();
    let names: Vec<&str> = board["personas"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["role"] == "debater")
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Lena", "Omar", "Ines", "Kai"]);
    assert!(!stdout(&agon(dir, &["show", &id])).contains("Mara"));
    // --personas is for casting: with configured personas it is an error.
    let cfg = config(dir, &server.uri());
    let o = agon(
        dir,
        &["debate", "-c", cfg.to_str().unwrap(), "--personas", "3"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("--personas"), "{}", stderr(&o));
}

#[test]
fn bad_input_gets_clear_errors_and_distinct_exit_codes() {
    let dir_tmp = temp_dir("errors");
    let dir = dir_tmp.path();
    // Usage error.
    let o = agon(dir, &["debate", "--minirounds", "many"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // Config error naming file, line and field.
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "topic = \"t\"\n[crux]\nmax_turns = \"eight\"\n").unwrap();
    let o = agon(dir, &["debate", "--config", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("bad.toml:3") && e.contains("crux.max_turns"),
        "{e}"
    );
    // A model spec that does not parse is a config error too.
    let o = agon(dir, &["debate", "--model", "gpt4"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    // A store that cannot be opened fails before any model is loaded.
    let o = Command::new(AGON)
        .args([
            "--store",
            "mysql://nope",
            "debate",
            "--model",
            "local:/nonexistent.gguf",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(stderr(&o).contains("mysql://nope"), "{}", stderr(&o));
    // Unknown debate id: the application's one mapping (`AppError::exit_code`).
    let o = agon(dir, &["report", "d-missing"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("d-missing"), "{}", stderr(&o));
    // A missing local model file names the command that fetches it.
    let o = agon(dir, &["debate", "--model", "local:/nonexistent.gguf"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("/nonexistent.gguf"), "{}", stderr(&o));
}

/// A port nothing listens on (bound, then released).
fn refused_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn unreachable_servers_fail_with_their_own_exit_codes_and_say_refused() {
    let dir_tmp = temp_dir("refused");
    let dir = dir_tmp.path();
    // A provider nobody listens for: a provider error (4), named once.
    let model = format!("openai-compatible:m@http://127.0.0.1:{}/v1", refused_port());
    let o = agon(dir, &["debate", "--model", &model, "Should we tax sugar?"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let error = stderr(&o)
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default()
        .to_owned();
    assert!(error.contains("Connection refused"), "{error}");
    assert_eq!(error.matches("Connection refused").count(), 1, "{error}");
    // A PostgreSQL server that refuses: a store error (5) at once, saying so.
    let url = format!("postgres://agon@127.0.0.1:{}/agon", refused_port());
    let started = std::time::Instant::now();
    let o = Command::new(AGON)
        .args(["--store", &url, "list"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("connection was refused"),
        "{}",
        stderr(&o)
    );
    assert!(
        started.elapsed() < agon_store::CONNECT_TIMEOUT,
        "a refused connection is reported before the pool's timeout"
    );
}

/// The canonical log of the test config's debate run uninterrupted
/// against the stub at `uri`.
fn uninterrupted(uri: &str) -> Value {
    let dir_tmp = temp_dir("reference");
    let dir = dir_tmp.path();
    let cfg = config_without_memory(dir, uri);
    let run = agon(
        dir,
        &["debate", "--quiet", "--config", cfg.to_str().unwrap()],
    );
    assert!(run.status.success(), "{}", stderr(&run));
    canonical(dir, &only_debate(dir))
}

/// `agon debate` of the test config (memory off) in `dir`, running in a
/// child process on its own SQLite store (whose URL is returned).
fn spawn_debate(dir: &std::path::Path, uri: &str) -> (std::process::Child, String) {
    let cfg = config_without_memory(dir, uri);
    let store = format!("sqlite://{}", dir.join("agon.db").display());
    let child = Command::new(AGON)
        .env("AGON_STORE", &store)
        .args(["debate", "--quiet", "--config", cfg.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (child, store)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debate_killed_at_random_points_resumes_to_the_uninterrupted_log() {
    let server = stub(Duration::from_millis(4)).await;
    let expected = uninterrupted(&server.uri());
    let messages = expected["messages"].as_array().unwrap().len();

    // 12 runs (a third of them killed again on resume); the seeded kill
    // points of every protocol are `load.rs`'s.
    let runs = 12;
    let mut kills = 0;
    for i in 0..runs {
        let dir_tmp = temp_dir("kill");
        let dir = dir_tmp.path();
        let (mut child, store) = spawn_debate(dir, &server.uri());
        // Kill somewhere between start-up and the end of the debate.
        tokio::time::sleep(Duration::from_millis(fastrand::u64(20..700))).await;
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
        let list = agon(dir, &["list"]);
        if stdout(&list).trim().is_empty() {
            continue; // killed before the debate was created: nothing to resume
        }
        let id = only_debate(dir);
        // Resume, killing again now and then, until it finishes.
        for attempt in 0..10 {
            let mut child = Command::new(AGON)
                .env("AGON_STORE", &store)
                .args(["resume", &id, "--quiet"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            if attempt == 0 && i % 3 == 0 {
                tokio::time::sleep(Duration::from_millis(fastrand::u64(10..200))).await;
                if child.try_wait().unwrap().is_none() {
                    child.kill().unwrap();
                    kills += 1;
                }
                child.wait().unwrap();
                continue;
            }
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "resume of {id}: {}", stderr(&out));
            break;
        }
        let got = canonical(dir, &id);
        assert_eq!(
            got["messages"].as_array().unwrap().len(),
            messages,
            "run {i}: messages lost or repeated"
        );
        assert_eq!(
            got, expected,
            "run {i}: the resumed log differs from the uninterrupted one"
        );
    }
    assert!(kills >= runs / 2, "only {kills} kills landed mid-run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_cleanly_and_the_debate_resumes() {
    let server = stub(Duration::from_millis(30)).await;
    let dir_tmp = temp_dir("sigint");
    let dir = dir_tmp.path();
    let cfg = config(dir, &server.uri());
    let store = format!("sqlite://{}", dir.join("agon.db").display());
    let child = Command::new(AGON)
        .env("AGON_STORE", &store)
        .args(["debate", "--quiet", "--config", cfg.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("agon resume"), "{}", stderr(&out));
    let id = only_debate(dir);
    assert!(stdout(&agon(dir, &["list"])).contains("interrupted"));
    let resumed = agon(dir, &["resume", &id, "--quiet"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let shown = canonical(dir, &id);
    assert_eq!(shown["status"], "finished");
    assert!(shown["usage"].is_null(), "canonical form drops usage");
}

/// Like [`agon`], with the local models (MiniLM for memory) available.
fn agon_with_models(dir: &Path, args: &[&str]) -> Output {
    let models = std::env::var("AGON_MODELS_DIR")
        .expect("AGON_MODELS_DIR is not set: run the suite with `cargo xtask test`");
    Command::new(AGON)
        .env(
            "AGON_STORE",
            format!("sqlite://{}", dir.join("agon.db").display()),
        )
        .env("AGON_MODELS_DIR", models)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debates_remember_and_recall_prints_score_components() {
    let server = stub(Duration::from_millis(20)).await;
    let dir_tmp = temp_dir("recall");
    let dir = dir_tmp.path();
    let cfg = config(dir, &server.uri());
    let run = agon_with_models(dir, &["debate", "--config", cfg.to_str().unwrap(), "-q"]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(
        !stderr(&run).contains("running without memory"),
        "{}",
        stderr(&run)
    );

    let recall = agon_with_models(
        dir,
        &[
            "recall",
            "who pays the cost",
            "--persona",
            "Mara",
            "-k",
            "3",
        ],
    );
    assert!(recall.status.success(), "{}", stderr(&recall));
    let out = stdout(&recall);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].split_whitespace().take(5).eq([
            "score",
            "recency",
            "relevance",
            "importance",
            "speaker"
        ]),
        "{out}"
    );
    // Hits, each followed by the memories around it, marked `(context)`,
    // and a hit that no longer holds by what replaced it, `(held until …)`.
    let hits: Vec<&&str> = lines[1..]
        .iter()
        .filter(|l| {
            let l = l.trim_start();
            !l.starts_with("(context)") && !l.starts_with("(held until")
        })
        .collect();
    assert!((1..=3).contains(&hits.len()), "{out}");
    for row in hits {
        let numbers: Vec<f64> = row
            .split_whitespace()
            .take(5)
            .map(|v| v.parse().unwrap())
            .collect();
        let expected = 0.5 * numbers[1] + 3.0 * numbers[2] + 2.0 * numbers[3] + 0.25 * numbers[4];
        assert!((numbers[0] - expected).abs() < 0.01, "{row}");
    }

    let nobody = agon_with_models(dir, &["recall", "cost", "--persona", "Nobody"]);
    assert!(nobody.status.success());
    assert!(
        stderr(&nobody).contains("no memories of persona nobody"),
        "{}",
        stderr(&nobody)
    );
    let empty = agon_with_models(dir, &["recall", "  ", "--persona", "Mara"]);
    assert_eq!(empty.status.code(), Some(2), "{}", stderr(&empty));
    assert!(stderr(&empty).contains("query is empty"));
    let zero = agon_with_models(dir, &["recall", "cost", "--persona", "Mara", "-k", "0"]);
    assert_eq!(zero.status.code(), Some(2));
    // Another embedder: refused, both named.
    let other = agon_with_models(
        dir,
        &[
            "recall",
            "cost",
            "--persona",
            "Mara",
            "--embedder",
            "openai-compatible:e/8@http://127.0.0.1:9/v1",
        ],
    );
    assert_eq!(other.status.code(), Some(3), "{}", stderr(&other));
    assert!(
        stderr(&other).contains("all-MiniLM") || stderr(&other).contains("384-d"),
        "{}",
        stderr(&other)
    );
    assert!(stderr(&other).contains("e (8-d)"), "{}", stderr(&other));

    let reindex = agon_with_models(dir, &["memory", "reindex"]);
    assert!(reindex.status.success(), "{}", stderr(&reindex));
    assert!(
        stderr(&reindex).contains("memories re-embedded with"),
        "{}",
        stderr(&reindex)
    );
    let again = agon_with_models(
        dir,
        &[
            "recall",
            "who pays the cost",
            "--persona",
            "Mara",
            "-k",
            "3",
        ],
    );
    assert_eq!(stdout(&again).lines().count(), lines.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_logs_go_to_stderr_with_spans_and_without_secrets() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("verbose");
    let dir = dir_tmp.path();
    let cfg = config(dir, &server.uri());
    let secret = "sk-agon-test-secret-0123456789";
    let run = Command::new(AGON)
        .env(
            "AGON_STORE",
            format!("sqlite://{}", dir.join("agon.db").display()),
        )
        .env_remove("AGON_MODELS_DIR")
        .env_remove("RUST_LOG")
        .env("OPENAI_API_KEY", secret)
        .current_dir(dir)
        .args(["-vv", "debate", "--config", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let (out, err) = (stdout(&run), stderr(&run));
    // The engine's spans and events, on stderr only.
    for needle in [
        "debate{debate=",
        "step{",
        "model_call{role=",
        "structured call done",
    ] {
        assert!(err.contains(needle), "stderr lacks {needle}:\n{err}");
    }
    assert!(
        !out.contains("model_call"),
        "logs leaked into stdout:\n{out}"
    );
    assert!(out.contains("Mara speaks:"), "{out}");
    assert!(!err.contains(secret) && !out.contains(secret));

    // Without -v (and without RUST_LOG) nothing is logged below warnings.
    let quiet = agon(dir, &["list"]);
    assert!(!stderr(&quiet).contains("model_call"));
}

// ── The dialectic protocol ───────────────────────────────────────────────

fn dialectic_args<'a>(server: &'a str, extra: &[&'a str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "debate",
        "--protocol",
        "dialectic",
        "--model",
        server,
        "--agents",
        "architect,kiss",
        "--rounds",
        "2",
        "--quiet",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    args.extend(extra.iter().map(ToString::to_string));
    args
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialectic_debate_writes_its_state_report_and_is_evaluated() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("dialectic");
    let dir = dir_tmp.path();
    let spec = format!("openai-compatible:stub@{}/v1", server.uri());
    std::fs::write(
        dir.join("problem.md"),
        "Design a rate limiting system\n\nIt must allow 100 requests per second per client.\nFor 10k clients.",
    )
    .unwrap();
    // The third answer answers the architect's follow-up question.
    std::fs::write(
        dir.join("answers.json"),
        r#"{"architect": ["10k requests/s", "", "sustained"]}"#,
    )
    .unwrap();
    let args = dialectic_args(
        &spec,
        &[
            "--problem-file",
            "problem.md",
            "--clarify-rounds",
            "2",
            "--answers",
            "answers.json",
            "--output",
            "out/state.json",
            "--report",
            "out/report",
        ],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = agon(dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/state.json")).unwrap())
            .unwrap();
    assert_eq!(state["status"], "completed");
    assert_eq!(state["rounds"].as_array().unwrap().len(), 2);
    let round1 = state["rounds"][0]["contributions"].as_array().unwrap();
    assert_eq!(
        round1.len(),
        2 + 2 + 2,
        "2 proposals, 2 critiques, 2 refinements"
    );
    assert_eq!(
        state["clarifications"][0]["items"][0]["answer"],
        "10k requests/s"
    );
    // One follow-up round (--clarify-rounds 2), answered from the same file.
    let follow_up = &state["clarifications"][0]["items"][2];
    assert_eq!(follow_up["question"], "Is that load sustained or a peak?");
    assert_eq!(follow_up["answer"], "sustained");
    assert_eq!(
        state["clarifications"][0]["items"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert!(
        state["finalSolution"]["description"]
            .as_str()
            .unwrap()
            .contains("token bucket")
    );
    let report = std::fs::read_to_string(dir.join("out/report.md")).unwrap();
    assert!(
        report.contains("## Clarifications") && report.contains("### Round 2"),
        "{report}"
    );
    assert!(stderr(&o).contains("Generated report"), "{}", stderr(&o));
    assert!(
        report.contains("Judged by rubric `dialectic` v1: Functional Completeness, "),
        "{report}"
    );
    // Requirements (issue 38): the must line is major and covered by every
    // proposal; the clarification answers (the follow-up's too) are minor,
    // covered by none, so the judge asks about them.
    assert_eq!(
        state["requirements"].as_array().unwrap().len(),
        3,
        "{}",
        state["requirements"]
    );
    assert_eq!(state["requirements"][2]["text"], "sustained");
    assert_eq!(
        state["finalSolution"]["unfulfilledMajorRequirements"],
        serde_json::json!([])
    );
    assert_eq!(
        state["finalSolution"]["openQuestions"],
        serde_json::json!([
            "How will the design meet R2?",
            "How will the design meet R3?"
        ])
    );
    assert!(report.contains("## Requirements"), "{report}");
    assert!(
        report.contains(
            "| R1 (major) It must allow 100 requests per second per client | ✓✓ | ✓✓ | met |"
        ),
        "{report}"
    );
    assert!(
        report.contains("No agent's latest proposal covers: R2, R3."),
        "{report}"
    );

    // Evaluate the saved state and the stored debate: same scores.
    std::fs::write(
        dir.join("eval.json"),
        r#"{"agents": [{"id": "e1", "name": "E1", "model": "x", "provider": "openai"},
                       {"id": "e2", "name": "E2", "model": "x", "provider": "openai", "enabled": false}]}"#,
    )
    .unwrap();
    let o = agon(
        dir,
        &[
            "eval",
            "--config",
            "eval.json",
            "out/state.json",
            "--model",
            &spec,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("| 8.00 | 7.00 | 6.00 | 8.00 | N/A | 7.00 | 9.00 | 7.00 |"),
        "{}",
        stdout(&o)
    );
    let id = only_debate(dir);
    let o = agon(
        dir,
        &[
            "eval",
            "-c",
            "eval.json",
            &id,
            "--model",
            &spec,
            "-o",
            "scores.csv",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(dir.join("scores.csv")).unwrap();
    assert!(
        csv.ends_with("average,8.00,7.00,6.00,8.00,,7.00,9.00,7.00\n"),
        "{csv}"
    );

    // The living rubric (issue 33): a high-trust agent's debate is
    // overridden with a criterion; once accepted, `agon eval` scores it.
    std::fs::write(
        dir.join("architect.json"),
        r#"{"agent_name": "System Architect", "model": "stub", "trust_score": 0.9,
            "rounds_participated": 12}"#,
    )
    .unwrap();
    let o = agon(dir, &["agents", "import", "architect.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The Simplicity Advocate's dissents never mattered and its overrides
    // were regretted: low trust.
    let dissent = r#"{"round_id": "old/round_1", "timestamp": "2026-11-20T10:00:00Z",
        "dissent_text": "No.", "impact": false, "depth_score": 0.0}"#;
    let overridden = r#"{"round_id": "old/final", "timestamp": "2026-11-20T10:00:00Z",
        "agent_output": "a", "human_decision": "b", "regret": true,
        "auto_check_deadline": "2026-11-21T10:00:00Z"}"#;
    std::fs::write(
        dir.join("kiss.json"),
        format!(
            r#"{{"agent_name": "Simplicity Advocate", "model": "stub", "trust_score": 0.05,
                "rounds_participated": 12, "dissent_history": [{dissent}],
                "override_history": [{overridden}]}}"#
        ),
    )
    .unwrap();
    let o = agon(dir, &["agents", "import", "kiss.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(
        dir.join("decision.md"),
        "Use a token bucket per client, with a kill switch.",
    )
    .unwrap();
    let propose = |agent: &str| {
        let o = agon(
            dir,
            &[
                "override",
                &id,
                "--file",
                "decision.md",
                "--agent",
                agent,
                "--criterion",
                "Operability: It can be run, observed and rolled back.",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let said = propose("Simplicity Advocate");
    assert!(
        said.contains("No rubric change proposed: `Simplicity Advocate` holds trust"),
        "{said}"
    );
    let said = propose("System Architect");
    assert!(
        said.contains("Proposed to rubric `dialectic` as #1 (on behalf of System Architect)"),
        "{said}"
    );
    let o = agon(dir, &["rubric", "history"]);
    assert!(
        stdout(&o).contains("add `Operability`") && stdout(&o).contains("pending"),
        "{}",
        stdout(&o)
    );
    let o = agon(
        dir,
        &[
            "override",
            &id,
            "--file",
            "decision.md",
            "--drop-criterion",
            "Charisma",
        ],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no criterion `Charisma`"),
        "{}",
        stderr(&o)
    );
    let o = agon(dir, &["rubric", "accept", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("now version 2 (8 criteria)"),
        "{}",
        stderr(&o)
    );
    let o = agon(dir, &["rubric", "accept", "1"]);
    assert!(stderr(&o).contains("already accepted"), "{}", stderr(&o));
    let o = agon(dir, &["rubric", "show"]);
    assert!(
        stdout(&o).contains("Rubric `dialectic`, version 2:")
            && stdout(&o).contains("- Operability: It can be run"),
        "{}",
        stdout(&o)
    );
    let o = agon(dir, &["rubric", "show", "--version", "1"]);
    assert!(!stdout(&o).contains("Operability"), "{}", stdout(&o));
    let o = agon(dir, &["eval", "-c", "eval.json", &id, "--model", &spec]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("| Operability | Overall Score |")
            && stdout(&o)
                .contains("| 8.00 | 7.00 | 6.00 | 8.00 | N/A | 7.00 | 9.00 | 4.00 | 7.00 |")
            && stdout(&o).contains("Scored by rubric `dialectic` v2."),
        "{}",
        stdout(&o)
    );
}

/// A directory with `agon` linked as `dialectic`, dialectic's
/// `debate-config.json` (`config`), a problem file and an env file that
/// points OpenAI's models at `server`.
struct DialecticLink {
    dir: tempfile::TempDir,
}

impl DialecticLink {
    fn new(name: &str, server: &wiremock::MockServer, config: &str) -> Self {
        let dir = temp_dir(name);
        std::os::unix::fs::symlink(AGON, dir.path().join("dialectic")).unwrap();
        std::fs::write(dir.path().join("debate-config.json"), config).unwrap();
        std::fs::write(
            dir.path().join("problem.md"),
            "Design a rate limiting system",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("stub.env"),
            format!(
                "OPENAI_API_KEY=test-key\nOPENAI_BASE_URL={}/v1\n",
                server.uri()
            ),
        )
        .unwrap();
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `dialectic ARGS…` in the directory (keys only from `-e stub.env`).
    fn run(&self, args: &[&str]) -> Output {
        Command::new(self.path().join("dialectic"))
            .env(
                "AGON_STORE",
                format!("sqlite://{}", self.path().join("agon.db").display()),
            )
            .env_remove("AGON_MODELS_DIR")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .current_dir(self.path())
            .args(args)
            .output()
            .unwrap()
    }
}

/// dialectic's own command line, short flags and default config file
/// included, through a link named `dialectic`: the protocol is dialectic
/// and `./debate-config.json` is read when no `-c` is given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialectics_command_line_runs_through_a_dialectic_link() {
    let server = stub(Duration::ZERO).await;
    let link = DialecticLink::new(
        "dialectic-link",
        &server,
        r#"{"agents": [
              {"id": "agent-architect", "name": "System Architect", "role": "architect", "model": "stub", "provider": "openai", "temperature": 0.5},
              {"id": "agent-kiss", "name": "Simplicity Advocate", "role": "kiss", "model": "stub", "provider": "openai", "temperature": 0.5},
              {"id": "agent-security", "name": "Security Expert", "role": "security", "model": "stub", "provider": "openai", "temperature": 0.5}],
            "judge": {"id": "judge-main", "name": "Technical Judge", "role": "generalist", "model": "stub", "provider": "openai", "temperature": 0.3},
            "debate": {"rounds": 3}}"#,
    );
    let (dir, run) = (link.path(), |args: &[&str]| link.run(args));
    let o = run(&[
        "debate",
        "-r",
        "1",
        "-a",
        "architect,kiss",
        "-p",
        "problem.md",
        "-o",
        "out.json",
        "-e",
        "stub.env",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("debate-config.json"),
        "says which config it read: {}",
        stderr(&o)
    );
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).unwrap()).unwrap();
    assert_eq!(state["problem"], "Design a rate limiting system");
    assert_eq!(state["rounds"].as_array().unwrap().len(), 1, "-r 1");
    let agents: Vec<&str> = state["rounds"][0]["contributions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["agentId"].as_str().unwrap())
        .collect();
    assert!(
        agents.contains(&"agent-kiss") && !agents.contains(&"agent-security"),
        "-a picks the config's agents by role: {agents:?}"
    );
    // `--problemDescription` is dialectic's long spelling of `-p`; a
    // structured-debate flag is refused with the flag named.
    let o = run(&[
        "debate",
        "--problemDescription",
        "problem.md",
        "--minirounds",
        "2",
        "-e",
        "stub.env",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--minirounds: is for structured debates, not --protocol dialectic"),
        "{}",
        stderr(&o)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clarifying_questions_are_answered_on_standard_input() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("clarify");
    let dir = dir_tmp.path();
    let spec = format!("openai-compatible:stub@{}/v1", server.uri());
    let args = dialectic_args(&spec, &["Design a rate limiting system", "--clarify"]);
    let mut child = Command::new(AGON)
        .env(
            "AGON_STORE",
            format!("sqlite://{}", dir.join("agon.db").display()),
        )
        .current_dir(dir)
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        // Two questions per agent: answer the first, skip the second, then
        // end the input (the rest are NA).
        stdin
            .write_all(b"10k requests/s\n\ninternal only\n")
            .unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("Q (q1): What peak load must it handle?"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("token bucket"),
        "the solution is printed: {}",
        stdout(&o)
    );
    let id = only_debate(dir);
    let report = agon(dir, &["report", &id]);
    let md = stdout(&report);
    for answer in ["10k requests/s", "internal only", "NA"] {
        assert!(md.contains(answer), "{answer}: {md}");
    }
}

/// Runs `agon` expecting exit `code` and an error naming each of `needles`.
fn fails(dir: &Path, args: &[&str], code: i32, needles: &[&str]) {
    let o = agon(dir, args);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
    for needle in needles {
        assert!(
            stderr(&o).contains(needle),
            "{args:?}: {needle:?} in {}",
            stderr(&o)
        );
    }
}

#[test]
fn dialectic_bad_input_names_the_flag_or_field() {
    let dir_tmp = temp_dir("dialectic-errors");
    let dir = dir_tmp.path();
    let d = ["debate", "--protocol", "dialectic"];
    let with =
        |extra: &[&'static str]| -> Vec<&'static str> { d.iter().chain(extra).copied().collect() };
    fails(dir, &d, 2, &["PROBLEM: missing"]);
    std::fs::write(dir.join("empty.md"), "  \n").unwrap();
    fails(
        dir,
        &with(&["--problem-file", "empty.md"]),
        2,
        &["--problem-file: empty.md is empty"],
    );
    fails(
        dir,
        &with(&["--problem-file", "nope.md"]),
        2,
        &["--problem-file", "nope.md"],
    );
    fails(
        dir,
        &with(&["x", "--agents", "architect,wizard"]),
        2,
        &["unknown role `wizard`"],
    );
    fails(
        dir,
        &with(&["x", "--rounds", "0"]),
        2,
        &["--rounds: must be at least 1"],
    );
    std::fs::write(
        dir.join("bad.json"),
        r#"{"agents": [{"id": "a", "name": "A", "role": "architect"}]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("answers.json"),
        r#"{"agent-architect": ["fine", 3]}"#,
    )
    .unwrap();
    fails(
        dir,
        &with(&["x", "--clarify", "--answers", "answers.json"]),
        2,
        &["answers.json", "field `agent-architect[1]`"],
    );
    std::fs::write(
        dir.join("eval-types.json"),
        r#"{"agents": [{"id": "e1", "name": 3, "model": "x", "provider": "openai"}]}"#,
    )
    .unwrap();
    fails(
        dir,
        &["eval", "-c", "eval-types.json", "state.json"],
        2,
        &["eval-types.json", "agents[0].name"],
    );
    fails(
        dir,
        &["debate", "--config", "bad.json", "x"],
        3,
        &["bad.json:1", "missing field `model`"],
    );
    std::fs::write(
        dir.join("role.json"),
        r#"{"agents": [{"id": "a", "name": "A", "role": "wizard", "model": "gpt-4", "provider": "openai", "temperature": 0.5}]}"#,
    )
    .unwrap();
    fails(
        dir,
        &["debate", "--config", "role.json", "x"],
        3,
        &["dialectic.agent[0].role", "wizard"],
    );
    std::fs::write(dir.join("eval.json"), r#"{"agents": []}"#).unwrap();
    fails(
        dir,
        &["eval", "-c", "eval.json", "state.json"],
        2,
        &["no enabled evaluator"],
    );
}

/// The interactive path: standard input and error are a terminal (a
/// pseudo-terminal from util-linux `script`), the live view draws its bars,
/// and the questions are asked and answered on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clarifying_questions_are_answered_on_a_pseudo_terminal() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("pty");
    let dir = dir_tmp.path();
    let spec = format!("openai-compatible:stub@{}/v1", server.uri());
    let command = format!(
        "{AGON} debate --protocol dialectic 'Design a rate limiting system' --model {spec} \
         --agents architect,kiss --rounds 1 --clarify --quiet"
    );
    let mut child = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env(
            "AGON_STORE",
            format!("sqlite://{}", dir.join("agon.db").display()),
        )
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux `script` (package bsdutils)");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        // Typed ahead: the terminal's line discipline hands them over one
        // line per question.
        stdin
            .write_all(b"10k requests/s\n\ninternal only\nbursts allowed\n")
            .unwrap();
    }
    let o = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let shown = stdout(&o);
    assert!(o.status.success(), "{shown}{}", stderr(&o));
    assert!(
        shown.contains("Q (q1): What peak load must it handle?"),
        "{shown}"
    );
    let id = only_debate(dir);
    let md = stdout(&agon(dir, &["report", &id]));
    for answer in ["10k requests/s", "internal only", "bursts allowed"] {
        assert!(md.contains(answer), "{answer}: {md}");
    }
    assert!(
        md.contains("Answer:\n\n> NA\n"),
        "the skipped question: {md}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deliberation_session_runs_over_http_and_reports_its_memory() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("deliberation");
    let dir = dir_tmp.path();
    let spec = format!("openai-compatible:stub@{}/v1", server.uri());
    let o = agon(
        dir,
        &[
            "debate",
            "--protocol",
            "deliberation",
            "How should the city spend its transport budget?",
            "--model",
            &spec,
            "--turns",
            "20",
            "--mode",
            "listen",
            "--preset",
            "session",
            "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let id = only_debate(dir);

    let o = agon(dir, &["--json", "show", &id, "--stats"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stats: Value = serde_json::from_str(&stdout(&o)).unwrap();
    // The scripted speakers propose and agree: a consensus stops the
    // session early (stop_on_consensus is on by default).
    let messages = stats["messages"].as_u64().unwrap();
    assert!((3..=20).contains(&messages), "{stats}");
    assert!(stats["decisions"].as_u64().unwrap() >= 1, "{stats}");
    assert_eq!(stats["agents"], 3);
    let by_agent: u64 = stats["messages_by_agent"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(by_agent, messages);

    let o = agon(dir, &["show", &id, "--stats"]);
    assert!(stdout(&o).contains("| decisions |"), "{}", stdout(&o));
    let o = agon(dir, &["report", &id]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    for needle in [
        "# Deliberation: How should the city spend",
        "## Statistics",
        "## Decisions",
        "(supported by",
        "## Proposals",
        "| P1 |",
        "accepted",
    ] {
        assert!(md.contains(needle), "{needle:?} in {md}");
    }
    let o = agon(dir, &["--json", "report", &id]);
    let json: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["protocol"], "deliberation");
    assert!(
        !json["deliberation"]["proposals"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn deliberation_bad_input_names_the_flag_or_field() {
    let dir_tmp = temp_dir("deliberation-errors");
    let dir = dir_tmp.path();
    let o = agon(dir, &["debate", "topic", "--mode", "listen"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--mode"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--protocol deliberation"),
        "{}",
        stderr(&o)
    );
    let o = agon(
        dir,
        &[
            "debate",
            "--protocol",
            "deliberation",
            "topic",
            "--turns",
            "0",
        ],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("deliberation.turns"), "{}", stderr(&o));
    std::fs::write(
        dir.join("bad.toml"),
        "protocol = \"deliberation\"\ntopic = \"t\"\n[deliberation]\nsummary_every = 0\n",
    )
    .unwrap();
    let o = agon(dir, &["debate", "--config", "bad.toml"]);
    assert!(
        stderr(&o).contains("deliberation.summary_every"),
        "{}",
        stderr(&o)
    );
    std::fs::write(
        dir.join("bad.toml"),
        "protocol = \"deliberation\"\ntopic = \"t\"\n[deliberation.patterns]\nproposal = ['(unclosed']\n",
    )
    .unwrap();
    let o = agon(dir, &["debate", "--config", "bad.toml"]);
    assert!(
        stderr(&o).contains("deliberation.patterns.proposal[0]"),
        "{}",
        stderr(&o)
    );
    std::fs::write(
        dir.join("bad.toml"),
        "protocol = \"deliberation\"\ntopic = \"t\"\n[deliberation]\nrecent_tokens = 9000\n",
    )
    .unwrap();
    let o = agon(dir, &["debate", "--config", "bad.toml"]);
    assert!(
        stderr(&o).contains("deliberation.recent_tokens"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("more than the view's total_tokens 8000"),
        "{}",
        stderr(&o)
    );
}

// ── The server ───────────────────────────────────────────────────────────

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agon_serve_runs_a_debate_posted_to_its_api() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("serve");
    let dir = dir_tmp.path();
    let toml = std::fs::read_to_string(config(dir, &server.uri())).unwrap();
    let mut child = tokio::process::Command::new(AGON)
        .env(
            "AGON_STORE",
            format!("sqlite://{}", dir.join("agon.db").display()),
        )
        // The local embedder, for the debate's memory and recall.
        .env(
            "AGON_MODELS_DIR",
            std::env::var("AGON_MODELS_DIR")
                .expect("AGON_MODELS_DIR is not set: run the suite with `cargo xtask test`"),
        )
        .env_remove("AGON_SERVER_TOKEN")
        .current_dir(dir)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Its standard error stays open (held) to the end of the test.
    let (base, _stderr) = support::served(&mut child).await;
    let client = reqwest::Client::new();
    let created: serde_json::Value = client
        .post(format!("{base}/api/debates"))
        .json(&serde_json::json!({ "toml": toml }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["id"].as_str().expect("an id").to_owned();
    let finished = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let view: serde_json::Value = client
                .get(format!("{base}/api/debates/{id}"))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            // Finished in the store, and the server's run is over (its
            // memory flushed and lease released after the last event).
            if view["status"] == "finished" && view["running_here"] == false {
                return view;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the debate finishes and its run ends");
    assert_eq!(finished["status"], "finished");
    let report = client
        .get(format!("{base}/api/debates/{id}/report"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(report.contains("Mara"), "{report}");
    // Recall over the API reads the memories the debate left (the local
    // embedder, loaded once by the server).
    let recalled: serde_json::Value = client
        .get(format!(
            "{base}/api/recall?q=who%20pays&persona=Mara&debate={id}&k=2"
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let memories = recalled["memories"].as_array().expect("memories");
    assert!(!memories.is_empty(), "{recalled}");
    assert!(
        memories.iter().all(|m| m["memory"]["persona"] == "mara"),
        "{recalled}"
    );
    // The same debate, read by the CLI from the same store.
    assert!(stdout(&agon(dir, &["list"])).contains(&id));
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agon_serve_never_shows_an_api_key_on_a_page_in_a_response_or_in_its_log() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("serve-secret");
    let dir = dir_tmp.path();
    let secret = "sk-agon-serve-secret-0123456789";
    // The models are OpenAI's, pointed at the stub: every call carries the key.
    let toml = std::fs::read_to_string(config(dir, &server.uri()))
        .unwrap()
        .replace(
            &format!("openai-compatible:stub@{}/v1", server.uri()),
            "openai:stub",
        );
    assert!(toml.contains("default = \"openai:stub\""), "{toml}");
    let mut child = tokio::process::Command::new(AGON)
        .env(
            "AGON_STORE",
            format!("sqlite://{}", dir.join("agon.db").display()),
        )
        .env_remove("AGON_MODELS_DIR")
        .env_remove("AGON_SERVER_TOKEN")
        .env("OPENAI_API_KEY", secret)
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .current_dir(dir)
        .args(["-vv", "serve", "--addr", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (base, mut lines) = support::served(&mut child).await;
    let log = tokio::spawn(async move {
        let mut log = String::new();
        while let Ok(Some(line)) = lines.next_line().await {
            log.push_str(&line);
            log.push('\n');
        }
        log
    });
    let client = reqwest::Client::new();
    let text = |path: String| {
        let client = client.clone();
        let base = base.clone();
        async move {
            client
                .get(format!("{base}{path}"))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        }
    };
    let created: serde_json::Value = client
        .post(format!("{base}/api/debates"))
        .json(&serde_json::json!({ "toml": toml }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["id"].as_str().expect("an id").to_owned();
    // The stream ends with the debate.
    let stream = tokio::time::timeout(
        Duration::from_secs(60),
        text(format!("/api/debates/{id}/events")),
    )
    .await
    .expect("the debate finishes");
    assert!(stream.contains("event: end"), "{stream}");
    let mut seen = vec![stream];
    for path in [
        "/".to_owned(),
        "/api/debates".to_owned(),
        format!("/api/debates/{id}"),
        format!("/debates/{id}"),
        format!("/debates/{id}/panels"),
        format!("/api/debates/{id}/report"),
        format!("/api/debates/{id}/report?format=json"),
        format!("/api/debates/{id}/metrics"),
        "/api/agents".to_owned(),
    ] {
        seen.push(text(path).await);
    }
    assert!(seen[3].contains("finished"), "{}", seen[3]);
    child.kill().await.unwrap();
    let log = log.await.unwrap();
    assert!(log.contains("model_call"), "the log has the calls:\n{log}");
    seen.push(log);
    for body in &seen {
        assert!(!body.contains(secret), "the key leaked:\n{body}");
    }
    // The key was in use: the stub got it with every call.
    let requests = server.received_requests().await.unwrap();
    assert!(!requests.is_empty());
    assert!(requests.iter().all(|r| {
        r.headers
            .get("authorization")
            .is_some_and(|v| v.to_str().unwrap().contains(secret))
    }));
}

/// dialectic's `report --debate` and `eval -d` through the `dialectic`
/// link: on Agon's own saved state, and on a state JSON in dialectic's own
/// shape (written by hand from its documented `DebateState`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialectics_report_and_eval_read_saved_debate_files() {
    let server = stub(Duration::ZERO).await;
    let link = DialecticLink::new(
        "dialectic-files",
        &server,
        r#"{"agents": [
              {"id": "agent-architect", "name": "System Architect", "role": "architect", "model": "stub", "provider": "openai", "temperature": 0.5},
              {"id": "agent-kiss", "name": "Simplicity Advocate", "role": "kiss", "model": "stub", "provider": "openai", "temperature": 0.5}],
            "judge": {"id": "judge-main", "name": "Technical Judge", "role": "generalist", "model": "stub", "provider": "openai", "temperature": 0.3},
            "debate": {"rounds": 1}}"#,
    );
    let (dir, run) = (link.path(), |args: &[&str]| link.run(args));
    std::fs::write(
        dir.join("eval.json"),
        r#"{"agents": [{"id": "e1", "name": "E1", "model": "stub", "provider": "openai"}]}"#,
    )
    .unwrap();
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/dialectic-state.json"
        ),
        dir.join("theirs.json"),
    )
    .unwrap();
    std::fs::write(dir.join("background.md"), "The API serves 2,000 customers.").unwrap();
    let o = run(&[
        "debate",
        "-r",
        "1",
        "-c",
        "debate-config.json",
        "-o",
        "ours.json",
        "-p",
        "problem.md",
        "--context",
        "background.md",
        "-e",
        "stub.env",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("Reading --context background.md as background"),
        "says which --context it took: {}",
        stderr(&o)
    );
    // dialectic 0.7's --context is a directory: the agents' context
    // directory for their file tools, and said so.
    std::fs::create_dir(dir.join("repo")).unwrap();
    let o = run(&[
        "debate",
        "-r",
        "1",
        "-p",
        "problem.md",
        "--context",
        "repo",
        "-e",
        "stub.env",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("Taking --context repo as the context directory of the agents' file tools"),
        "{}",
        stderr(&o)
    );

    // Agon's own saved state: the report from its blackboard.
    let o = run(&["report", "--debate", "ours.json", "-o", "ours.md", "-v"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = std::fs::read_to_string(dir.join("ours.md")).unwrap();
    assert!(ours.contains("Design a rate limiting system"), "{ours}");
    assert!(ours.contains("System Architect"), "{ours}");
    assert!(
        ours.contains("`agon report ID`"),
        "says where the metrics are"
    );

    // dialectic's own: its problem, clarifications, rounds and solution,
    // the agents named as the configuration names them.
    let o = run(&[
        "report",
        "--debate",
        "theirs.json",
        "--config",
        "debate-config.json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let theirs = stdout(&o);
    for needle in [
        "Design a rate limiting system for a public REST API",
        "Are limits per API key or per IP?",
        "Per API key.",
        "### Round 2",
        "Per-node counters let a client get three times its limit",
        "Simplicity Advocate",
        "One token bucket per API key in Redis",
        "Load test at 15k requests/s",
        // dialectic 0.7's lists.
        "### Unfulfilled major requirements\n\n- It must handle 10k requests/s",
        "### Open questions\n\n- Is a shared cache available?",
    ] {
        assert!(theirs.contains(needle), "lacks `{needle}`:\n{theirs}");
    }
    let o = run(&["--json", "report", "-d", "theirs.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["solution"]["confidence"], 40, "{json}");

    // A broken file names the field.
    let mut broken: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("theirs.json")).unwrap()).unwrap();
    broken["rounds"][1]["contributions"][2]["type"] = serde_json::json!("rebuttal");
    std::fs::write(dir.join("broken.json"), broken.to_string()).unwrap();
    let o = run(&["report", "--debate", "broken.json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("broken.json: rounds[1].contributions[2].type: `rebuttal`"),
        "{}",
        stderr(&o)
    );

    // A person rates the stored debate: list, report and the state JSON
    // (rewritten by a resume of the finished debate) show it.
    let listed: Value = serde_json::from_str(&stdout(&run(&["--json", "list"]))).unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_owned();
    let o = run(&["feedback", &id, "down"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&run(&["list"])).contains("  -1  "),
        "{}",
        stdout(&run(&["list"]))
    );
    let report = stdout(&run(&["report", &id]));
    assert!(report.contains("user feedback: down (-1)"), "{report}");
    let o = run(&["resume", &id, "-o", "rated.json", "-q", "-e", "stub.env"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rated: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rated.json")).unwrap()).unwrap();
    assert_eq!(rated["userFeedback"], -1);
    let o = run(&["feedback", "d-nope", "up"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("d-nope"), "{}", stderr(&o));

    // dialectic's eval command line, on both files.
    for file in ["ours.json", "theirs.json"] {
        let out = format!("{file}.eval.json");
        let o = run(&[
            "eval",
            "-c",
            "eval.json",
            "-d",
            file,
            "-v",
            "-o",
            &out,
            "-e",
            "stub.env",
        ]);
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        let scores: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(&out)).unwrap()).unwrap();
        // The scripted evaluator gives 5 when the judge lists an unmet
        // major requirement (dialectic's file), 9 when it lists none.
        let expected = if file == "theirs.json" { 5.0 } else { 9.0 };
        assert_eq!(
            scores["evaluation"]["non_functional"]["requirements_fulfillment"]["average_score"],
            expected,
            "{file}: {scores}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_and_prune_remove_debates_with_their_memories() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("retention");
    let dir = dir_tmp.path();
    let cfg = config(dir, &server.uri());
    for _ in 0..2 {
        let run = agon_with_models(dir, &["debate", "--config", cfg.to_str().unwrap(), "-q"]);
        assert!(run.status.success(), "{}", stderr(&run));
    }
    let ids = || -> Vec<String> {
        let listed: Value =
            serde_json::from_str(&stdout(&agon_with_models(dir, &["--json", "list"]))).unwrap();
        listed
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let memories = |id: &str| -> usize {
        let recalled = agon_with_models(
            dir,
            &[
                "--json",
                "recall",
                "who pays",
                "--persona",
                "Mara",
                "--debate",
                id,
                "-k",
                "50",
            ],
        );
        assert!(recalled.status.success(), "{}", stderr(&recalled));
        let v: Value = serde_json::from_str(&stdout(&recalled)).unwrap();
        v["memories"].as_array().unwrap().len()
    };
    let all = ids();
    assert_eq!(all.len(), 2);
    let (first, second) = (all[0].clone(), all[1].clone());
    assert!(memories(&first) > 0);

    // A dry run says what would go and deletes nothing.
    let dry = agon_with_models(dir, &["delete", &first, "--dry-run"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    assert!(
        stdout(&dry).starts_with(&format!("would delete {first}: "))
            && !stdout(&dry).contains(" 0 memories"),
        "{}",
        stdout(&dry)
    );
    assert_eq!(ids().len(), 2);

    let deleted = agon_with_models(dir, &["delete", &first]);
    assert!(deleted.status.success(), "{}", stderr(&deleted));
    assert!(
        stdout(&deleted).starts_with(&format!("deleted {first}: ")),
        "{}",
        stdout(&deleted)
    );
    assert_eq!(ids(), vec![second.clone()]);
    assert_eq!(memories(&first), 0, "its memories are gone");
    assert!(memories(&second) > 0, "the other debate's stay");
    let shown = agon_with_models(dir, &["show", &first]);
    assert!(!shown.status.success());
    assert!(stderr(&shown).contains(&first), "{}", stderr(&shown));
    let again = agon_with_models(dir, &["delete", &first]);
    assert!(!again.status.success());
    assert!(stderr(&again).contains(&first), "{}", stderr(&again));

    // Prune by age and status.
    let none = agon_with_models(dir, &["prune", "--older-than", "1d"]);
    assert!(none.status.success());
    assert!(
        stderr(&none).contains("Nothing to prune"),
        "{}",
        stderr(&none)
    );
    let dry = agon_with_models(
        dir,
        &[
            "prune",
            "--older-than",
            "0s",
            "--status",
            "finished",
            "--dry-run",
        ],
    );
    assert!(
        stdout(&dry).contains(&format!("would delete {second}")),
        "{}",
        stdout(&dry)
    );
    assert_eq!(ids().len(), 1);
    let pruned = agon_with_models(
        dir,
        &["prune", "--older-than", "0s", "--status", "finished"],
    );
    assert!(pruned.status.success(), "{}", stderr(&pruned));
    assert!(ids().is_empty());
    assert_eq!(memories(&second), 0);
    assert!(
        stderr(&pruned).contains("`agon compact` gives the space back"),
        "{}",
        stderr(&pruned)
    );
    // The deleted debates' pages go back to the file system.
    let compacted = agon_with_models(dir, &["compact"]);
    assert!(compacted.status.success(), "{}", stderr(&compacted));
    let line = stdout(&compacted);
    let given_back: u64 = line
        .split('(')
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(given_back > 0, "{line}");
    let bad = agon_with_models(dir, &["prune", "--older-than", "3y"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("`y` is not a unit"),
        "{}",
        stderr(&bad)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debate_another_process_runs_is_not_deleted_until_that_process_is_gone() {
    let server = stub(Duration::from_millis(300)).await;
    let dir_tmp = temp_dir("retention-live");
    let dir = dir_tmp.path();
    let cfg = config_without_memory(dir, &server.uri());
    let mut child = tokio::process::Command::new(AGON)
        .env(
            "AGON_STORE",
            format!("sqlite://{}", dir.join("agon.db").display()),
        )
        .env_remove("AGON_MODELS_DIR")
        .current_dir(dir)
        .args(["debate", "--config", cfg.to_str().unwrap(), "-q"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Wait until it runs.
    let id = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let listed: Value =
                serde_json::from_str(&stdout(&agon(dir, &["--json", "list"]))).unwrap_or_default();
            if let Some(d) = listed.as_array().and_then(|a| a.first())
                && d["status"] == "running"
            {
                return d["id"].as_str().unwrap().to_owned();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the debate runs");
    let refused = agon(dir, &["delete", &id]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains(&id), "{}", stderr(&refused));
    // Once the runner is gone (killed: its lease is left behind), it goes.
    child.kill().await.unwrap();
    child.wait().await.unwrap();
    let deleted = agon(dir, &["delete", &id]);
    assert!(deleted.status.success(), "{}", stderr(&deleted));
}

/// `agon resume` is refused while a live runner holds the lease; `agon
/// resume --force` takes it over with a warning and finishes the debate
/// as an uninterrupted run would (the frozen runner is killed after).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_force_takes_the_lease_of_a_live_runner() {
    let server = stub(Duration::from_millis(100)).await;
    let expected = uninterrupted(&server.uri());
    let dir_tmp = temp_dir("force");
    let dir = dir_tmp.path();
    let (mut runner, _) = spawn_debate(dir, &server.uri());
    // Wait until the run has said something (it holds the lease from
    // before its first message), then freeze it: alive, holding its
    // lease, writing nothing.
    let mut id = String::new();
    for _ in 0..400 {
        tokio::time::sleep(Duration::from_millis(25)).await;
        let listed: Value =
            serde_json::from_str(&stdout(&agon(dir, &["--json", "list"]))).unwrap_or_default();
        if listed[0]["messages"].as_u64().is_some_and(|n| n > 0) {
            id = listed[0]["id"].as_str().unwrap_or_default().to_owned();
            break;
        }
    }
    assert!(!id.is_empty(), "the debate never began");
    assert!(
        runner.try_wait().unwrap().is_none(),
        "the runner finished too soon"
    );
    let pid = runner.id().to_string();
    let frozen = Command::new("kill").args(["-STOP", &pid]).status().unwrap();
    assert!(frozen.success());

    let refused = agon(dir, &["resume", &id, "--quiet"]);
    assert!(
        !refused.status.success(),
        "a live runner's lease is respected"
    );
    assert!(
        stderr(&refused).contains("being run by another process"),
        "{}",
        stderr(&refused)
    );
    let forced = agon(dir, &["resume", &id, "--force", "--quiet"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert!(
        stderr(&forced).contains("took the run lease over from"),
        "{}",
        stderr(&forced)
    );
    runner.kill().unwrap();
    runner.wait().unwrap();
    assert_eq!(
        canonical(dir, &id),
        expected,
        "the forced resume ends as an uninterrupted run"
    );
    // With nobody holding the lease, --force takes nothing and says nothing.
    let again = agon(dir, &["resume", &id, "--force", "--quiet"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        !stderr(&again).contains("took the run lease"),
        "{}",
        stderr(&again)
    );
}

/// `--max-tokens` stops a debate at its budget: it wraps up, ends with the
/// `budget` status in `agon list`, and its report says where it stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_tokens_stops_a_debate_and_the_report_says_so() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("budget");
    let dir = dir_tmp.path();
    let cfg = config_without_memory(dir, &server.uri());
    let o = agon(
        dir,
        &[
            "debate",
            "--quiet",
            "--config",
            cfg.to_str().unwrap(),
            "--max-tokens",
            "3000",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let listed: Value = serde_json::from_str(&stdout(&agon(dir, &["--json", "list"]))).unwrap();
    assert_eq!(listed[0]["status"], "budget", "{listed}");
    let id = listed[0]["id"].as_str().unwrap().to_owned();
    let report = stdout(&agon(dir, &["report", &id]));
    assert!(
        report.contains("## Stopped at its budget\n\ntokens: "),
        "{report}"
    );
    let o = agon(
        dir,
        &["debate", "--config", cfg.to_str().unwrap(), "--max-cost=-1"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("budget.max_cost_usd"), "{}", stderr(&o));
}

/// The spans of the OTLP/HTTP JSON bodies `receiver` got from request
/// `from` on: (trace id, span id, parent span id, name, attributes).
async fn exported_spans(
    receiver: &wiremock::MockServer,
    from: usize,
) -> (
    Vec<(String, String, String, String, BTreeMap<String, String>)>,
    String,
) {
    let mut spans = Vec::new();
    let mut raw = String::new();
    for request in &receiver.received_requests().await.unwrap()[from..] {
        let body = String::from_utf8_lossy(&request.body).into_owned();
        raw.push_str(&body);
        let json: Value = serde_json::from_str(&body).unwrap();
        for span in json["resourceSpans"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|r| r["scopeSpans"].as_array().into_iter().flatten())
            .flat_map(|s| s["spans"].as_array().into_iter().flatten())
        {
            let attributes = span["attributes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| {
                    let v = &a["value"];
                    let value = ["stringValue", "intValue", "doubleValue", "boolValue"]
                        .iter()
                        .find_map(|k| v.get(*k))
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                        .unwrap_or_default();
                    (a["key"].as_str().unwrap_or_default().to_owned(), value)
                })
                .collect();
            let text = |k: &str| span[k].as_str().unwrap_or_default().to_owned();
            spans.push((
                text("traceId"),
                text("spanId"),
                text("parentSpanId"),
                text("name"),
                attributes,
            ));
        }
    }
    (spans, raw)
}

/// Issue 35: `--otlp` exports each protocol's debate as one trace over
/// OTLP/HTTP (JSON) to an in-process receiver: the debate's span, its
/// steps, and each model call as a `chat MODEL` span with the GenAI
/// attributes; the API key never appears, and prompts only with
/// `--otlp-content`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn otlp_exports_one_trace_per_debate_with_gen_ai_model_spans_and_no_key() {
    let server = stub(Duration::ZERO).await;
    let receiver = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v1/traces"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(serde_json::json!({})))
        .mount(&receiver)
        .await;
    let dir_tmp = temp_dir("otlp");
    let dir = dir_tmp.path();
    std::fs::write(
        dir.join("stub.env"),
        format!(
            "OPENAI_API_KEY=sk-otlp-secret-4242\nOPENAI_BASE_URL={}/v1\n",
            server.uri()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("problem.md"),
        "Design a rate limiter for a public API.",
    )
    .unwrap();
    let cfg = config(dir, &server.uri());
    let otlp = format!("--otlp={}", receiver.uri());
    let model = "openai:gpt-4o-mini";
    let cfg = cfg.display().to_string();
    let dialectic_run = vec![
        "debate",
        "--protocol",
        "dialectic",
        "--problem-file",
        "problem.md",
        "--agents",
        "architect,kiss",
        "--rounds",
        "1",
        "--model",
        model,
    ];
    let runs: [(&str, Vec<&str>); 3] = [
        (
            "structured",
            vec!["debate", "--config", &cfg, "--model", model],
        ),
        ("dialectic", dialectic_run.clone()),
        (
            "deliberation",
            vec![
                "debate",
                "--protocol",
                "deliberation",
                "How should the city spend its transport budget?",
                "--turns",
                "6",
                "--mode",
                "listen",
                "--preset",
                "session",
                "--model",
                model,
            ],
        ),
    ];
    let mut seen = 0;
    let mut traces = BTreeMap::new();
    for (protocol, args) in runs {
        let mut all = vec!["-e", "stub.env", otlp.as_str()];
        all.extend(args);
        all.push("--quiet");
        let o = agon(dir, &all);
        assert!(o.status.success(), "{protocol}: {}", stderr(&o));
        let (spans, raw) = exported_spans(&receiver, seen).await;
        seen = receiver.received_requests().await.unwrap().len();
        assert!(
            !raw.contains("sk-otlp-secret"),
            "{protocol}: the key leaked"
        );
        let debate: Vec<_> = spans.iter().filter(|s| s.3 == "debate").collect();
        assert_eq!(debate.len(), 1, "{protocol}: one debate span");
        let trace = &debate[0].0;
        traces.insert(protocol, trace.clone());
        let steps = spans
            .iter()
            .filter(|s| s.3 == "step" && &s.0 == trace)
            .count();
        assert!(steps > 0, "{protocol}: step spans");
        let chats: Vec<_> = spans.iter().filter(|s| s.3 == "chat gpt-4o-mini").collect();
        assert!(!chats.is_empty(), "{protocol}: model-call spans");
        let mut answered = 0;
        for (trace_id, _, parent, _, attributes) in &chats {
            assert_eq!(trace_id, trace, "{protocol}: one trace per debate");
            assert!(!parent.is_empty(), "{protocol}: a model call has a parent");
            assert!(attributes.contains_key("gen_ai.request.max_tokens"));
            assert!(
                !attributes.contains_key("gen_ai.input.messages"),
                "no content by default"
            );
            if let Some(error) = attributes.get("error.type") {
                // A call that failed (the stub's answer to a schema it
                // does not know) says why, and nothing about a response.
                assert!(!attributes.contains_key("gen_ai.response.model"), "{error}");
                continue;
            }
            answered += 1;
            for (key, value) in [
                ("gen_ai.operation.name", "chat"),
                ("gen_ai.provider.name", "openai"),
                ("gen_ai.request.model", "gpt-4o-mini"),
                ("gen_ai.response.model", "gpt-4o-mini"),
            ] {
                assert_eq!(
                    attributes.get(key).map(String::as_str),
                    Some(value),
                    "{protocol} {key}: {attributes:?}"
                );
            }
            let input: u64 = attributes["gen_ai.usage.input_tokens"].parse().unwrap();
            assert!(input > 0, "{protocol}: {attributes:?}");
        }
        assert!(answered > 0, "{protocol}: answered calls");
    }
    // A resumed run of a debate joins the debate's trace.
    let o = agon(dir, &["--json", "list"]);
    let listed: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let dialectic = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["protocol"] == "dialectic")
        .and_then(|d| d["id"].as_str())
        .unwrap()
        .to_owned();
    let o = agon(
        dir,
        &["-e", "stub.env", &otlp, "resume", &dialectic, "--quiet"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (spans, _) = exported_spans(&receiver, seen).await;
    seen = receiver.received_requests().await.unwrap().len();
    let resumed: Vec<_> = spans.iter().filter(|s| s.3 == "agon run").collect();
    assert_eq!(resumed.len(), 1, "{spans:?}");
    assert_eq!(&resumed[0].0, &traces["dialectic"], "one trace per debate");
    assert_ne!(traces["dialectic"], traces["structured"]);
    // With --otlp-content the prompts and completions are attached.
    let mut content_run = vec!["-e", "stub.env", otlp.as_str(), "--otlp-content"];
    content_run.extend(dialectic_run.iter().copied());
    content_run.push("--quiet");
    let o = agon(dir, &content_run);
    assert!(o.status.success(), "{}", stderr(&o));
    let (spans, raw) = exported_spans(&receiver, seen).await;
    assert!(!raw.contains("sk-otlp-secret"));
    let with_content = spans
        .iter()
        .filter(|s| s.3 == "chat gpt-4o-mini")
        .filter(|s| {
            s.4.get("gen_ai.input.messages")
                .is_some_and(|m| m.contains("rate limiter"))
                && s.4.contains_key("gen_ai.output.messages")
        })
        .count();
    assert!(with_content > 0, "prompts attached with --otlp-content");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_files_are_added_once_listed_searched_indexed_from_a_config_and_removed() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("corpus");
    let dir = dir_tmp.path();
    std::fs::write(
        dir.join("posts.jsonl"),
        "{\"text\": \"Cycling lanes on the ring road carried 4,000 riders a day by June.\"}\n{\"text\": \"Parking revenue funded the night buses.\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("mara.md"),
        "# Transit\n\nTram ridership rose by 18 percent.\n\n# Retail\n\nVacancies fell from 11 to 7 percent.\n\n# Air\n\nNitrogen dioxide fell by a third.\n",
    )
    .unwrap();
    std::fs::write(dir.join("paper.pdf"), "%PDF-1.7").unwrap();

    // A multi-word name with a non-ASCII letter; the same file twice adds nothing.
    let add = agon_with_models(dir, &["corpus", "add", "Zoë Brandt", "posts.jsonl"]);
    assert!(add.status.success(), "{}", stderr(&add));
    assert_eq!(
        stdout(&add).trim(),
        "posts.jsonl: 2 chunk(s), 2 new, for zoë-brandt"
    );
    let again = agon_with_models(dir, &["corpus", "add", "Zoë Brandt", "posts.jsonl"]);
    assert!(
        stdout(&again).contains("2 chunk(s), 0 new"),
        "{}",
        stdout(&again)
    );
    let pdf = agon_with_models(dir, &["corpus", "add", "Mara", "paper.pdf"]);
    assert_eq!(pdf.status.code(), Some(2), "{}", stderr(&pdf));
    assert!(stderr(&pdf).contains("paper.pdf") && stderr(&pdf).contains("unsupported format"));

    let search = agon_with_models(
        dir,
        &[
            "corpus",
            "search",
            "zoë-brandt",
            "bike riders per day",
            "-k",
            "1",
        ],
    );
    assert!(search.status.success(), "{}", stderr(&search));
    let line = stdout(&search);
    assert!(
        line.starts_with("[E:")
            && line.contains("(posts.jsonl #0)")
            && line.contains("4,000 riders"),
        "{line}"
    );
    let none = agon_with_models(dir, &["corpus", "search", "Theo", "bikes"]);
    assert_eq!(none.status.code(), Some(3), "{}", stderr(&none));
    assert!(
        stderr(&none).contains("theo has no corpus"),
        "{}",
        stderr(&none)
    );

    // A config's persona names its corpus: indexed on the first debate only.
    let cfg = config(dir, &server.uri());
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "contract = \"Urban planner, for car-free centres.\"",
        "contract = \"Urban planner, for car-free centres.\"\ncorpus = [\"mara.md\"]",
    );
    std::fs::write(&cfg, text).unwrap();
    let first = agon_with_models(dir, &["debate", "--config", cfg.to_str().unwrap(), "-q"]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        stderr(&first).contains("Indexed 3 of 3 chunk(s) of"),
        "{}",
        stderr(&first)
    );
    let second = agon_with_models(dir, &["debate", "--config", cfg.to_str().unwrap(), "-q"]);
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(!stderr(&second).contains("Indexed"), "{}", stderr(&second));

    let list = agon_with_models(dir, &["corpus", "list", "--json"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let sources: Value = serde_json::from_slice(&list.stdout).unwrap();
    let rows: Vec<(String, String, u64)> = sources
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["persona"].as_str().unwrap().to_owned(),
                s["file"].as_str().unwrap().to_owned(),
                s["chunks"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("mara".to_owned(), "mara.md".to_owned(), 3),
            ("zoë-brandt".to_owned(), "posts.jsonl".to_owned(), 2)
        ]
    );

    let remove = agon_with_models(dir, &["corpus", "remove", "Zoë Brandt", "posts.jsonl"]);
    assert!(remove.status.success(), "{}", stderr(&remove));
    assert!(stdout(&remove).contains("2 chunk(s)"));
    let twice = agon_with_models(dir, &["corpus", "remove", "Zoë Brandt", "posts.jsonl"]);
    assert_eq!(twice.status.code(), Some(3), "{}", stderr(&twice));
    assert!(stderr(&twice).contains("no corpus source \"posts.jsonl\""));

    // A config naming a missing corpus file is refused, naming the field.
    let bad = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("mara.md", "gone.md");
    std::fs::write(&cfg, bad).unwrap();
    let refused = agon_with_models(dir, &["debate", "--config", cfg.to_str().unwrap(), "-q"]);
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("personas[0].corpus[0]"),
        "{}",
        stderr(&refused)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialectic_agent_reads_the_context_dir_through_native_tool_calls() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("tools");
    let dir = dir_tmp.path();
    let spec = format!("openai-compatible:stub@{}/v1", server.uri());
    std::fs::create_dir(dir.join("ctx")).unwrap();
    std::fs::write(
        dir.join("ctx/limits.md"),
        "Per client: 100 requests per second, bursts of 20.\n",
    )
    .unwrap();
    // dialectic's own config, as its docs/tools.md writes tools.
    std::fs::write(
        dir.join("debate-config.json"),
        r#"{"agents": [
              {"id": "agent-architect", "name": "System Architect", "role": "architect", "model": "gpt-4",
               "provider": "openai", "temperature": 0.5,
               "tools": [{"name": "context_search"}, {"name": "list_files"}, {"name": "file_read"}],
               "toolCallLimit": 10},
              {"id": "agent-kiss", "name": "Simplicity Advocate", "role": "kiss", "model": "gpt-4",
               "provider": "openai", "temperature": 0.5}],
            "judge": {"id": "judge-main", "name": "Judge", "role": "generalist", "model": "gpt-4",
                      "provider": "openai", "temperature": 0.3},
            "debate": {"rounds": 1}}"#,
    )
    .unwrap();
    let problem = "Design a rate limiting system. The limits are in limits.md.";
    let debate = |extra: &[&str]| -> Vec<String> {
        let base = [
            "debate",
            "--protocol",
            "dialectic",
            "-c",
            "debate-config.json",
            "--model",
            &spec,
            "--quiet",
            problem,
        ];
        base.iter().chain(extra).map(ToString::to_string).collect()
    };
    // Without a context directory, the file tools are refused up front.
    let args = debate(&[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = agon(dir, &args);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("needs a context directory")
            && stderr(&o).contains("dialectic.agent[0].tools[1]"),
        "{}",
        stderr(&o)
    );
    let args = debate(&["--context-dir", "ctx", "--report", "out/report"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = agon_with_models(dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = std::fs::read_to_string(dir.join("out/report.md")).unwrap();
    assert!(report.contains("## Tool calls"), "{report}");
    assert!(
        report.contains("- System Architect (proposal/1/agent-architect): `file_read({\"path\":\"limits.md\"})` → Per client: 100 requests per second"),
        "{report}"
    );
    assert!(
        report
            .contains("As limits.md says: \"Per client: 100 requests per second, bursts of 20.\""),
        "the architect cites the file: {report}"
    );
}

// ── Steering any debate, wherever it runs; forks ─────────────────────────

/// The debate's event log as `agon export` prints it.
fn exported(dir: &Path, id: &str) -> Vec<Value> {
    let o = agon(dir, &["export", id]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice::<Vec<Value>>(&o.stdout).unwrap()
}

fn has_event(events: &[Value], kind: &str, needle: &str) -> bool {
    events
        .iter()
        .any(|e| e["event"]["type"] == kind && e["event"].to_string().contains(needle))
}

/// A debate run by `agon debate` in one process is steered from two
/// others over the same SQLite store: a note and a pause posted to `agon
/// serve`, a note posted with `agon note`; the run takes each before its
/// next step, the note reaches every later prompt, the pause holds it, and
/// a resume from the API lets it finish.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debate_in_a_terminal_takes_notes_and_a_pause_from_other_processes() {
    let (server, bodies) = support::keeping_stub(Duration::from_millis(80)).await;
    let dir_tmp = temp_dir("steer");
    let dir = dir_tmp.path();
    let (mut runner, store) = spawn_debate(dir, &server.uri());
    let mut serve = tokio::process::Command::new(AGON)
        .env("AGON_STORE", &store)
        .env_remove("AGON_MODELS_DIR")
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (base, _log) = support::served(&mut serve).await;
    let mut id = String::new();
    support::until("the debate's first message", || {
        let listed: Value =
            serde_json::from_str(&stdout(&agon(dir, &["--json", "list"]))).unwrap_or_default();
        id = listed[0]["id"].as_str().unwrap_or_default().to_owned();
        listed[0]["messages"].as_u64().is_some_and(|n| n > 0)
    })
    .await;
    let client = reqwest::Client::new();
    let posted: Value = client
        .post(format!("{base}/api/debates/{id}/notes"))
        .json(
            &serde_json::json!({ "text": "NOTE-4411: count the delivery vans", "author": "Chair" }),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(posted["runs"]["where"], "elsewhere", "{posted}");
    support::until("the note in the log", || {
        has_event(&exported(dir, &id), "note_added", "NOTE-4411")
    })
    .await;
    let asked_at_note = bodies.lock().unwrap().len();

    let r = client
        .post(format!("{base}/api/debates/{id}/pause"))
        .json(&serde_json::json!({ "by": "Chair" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    support::until("the pause in the log", || {
        has_event(&exported(dir, &id), "debate_paused", "")
    })
    .await;
    let note = agon(dir, &["note", &id, "NOTE-5522: and the buses"]);
    assert!(note.status.success(), "{}", stderr(&note));
    assert!(
        stderr(&note).contains("takes it before its next step"),
        "{}",
        stderr(&note)
    );
    support::until("the second note in the log", || {
        has_event(&exported(dir, &id), "note_added", "NOTE-5522")
    })
    .await;
    // Held: no turn while paused (analyses already asked may land).
    tokio::time::sleep(Duration::from_millis(600)).await;
    let held = exported(dir, &id)
        .iter()
        .filter(|e| e["event"]["type"] == "message_appended")
        .count();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let still = exported(dir, &id)
        .iter()
        .filter(|e| e["event"]["type"] == "message_appended")
        .count();
    assert_eq!(held, still, "a paused debate takes no turn");
    assert!(runner.try_wait().unwrap().is_none(), "the paused run waits");

    let resumed: Value = client
        .post(format!("{base}/api/debates/{id}/resume"))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(resumed["how"], "running", "{resumed}");
    let status = tokio::task::spawn_blocking(move || runner.wait().unwrap())
        .await
        .unwrap();
    assert!(status.success());
    let later = bodies.lock().unwrap()[asked_at_note..].to_vec();
    assert!(
        later.iter().any(|b| b.contains("NOTE-4411")),
        "the note reaches the agents"
    );
    let report = stdout(&agon(dir, &["report", &id]));
    assert!(report.contains("NOTE-5522"), "{report}");
    serve.kill().await.ok();
}

/// `agon fork` copies a finished debate up to before its last step;
/// resumed with the same model it ends as its parent did, and `agon
/// compare` says so; a fork given a note first parts from its parent at
/// the note, and its report names its parent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agon_fork_resumes_to_the_parents_end_and_parts_from_it_at_a_note() {
    let server = stub(Duration::ZERO).await;
    let dir_tmp = temp_dir("fork");
    let dir = dir_tmp.path();
    let cfg = config_without_memory(dir, &server.uri());
    let run = agon(
        dir,
        &["debate", "--quiet", "--config", cfg.to_str().unwrap()],
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let parent = only_debate(dir);

    let forked = agon(dir, &["fork", &parent]);
    assert!(forked.status.success(), "{}", stderr(&forked));
    let fork = stdout(&forked).trim().to_owned();
    assert!(stderr(&forked).contains(&format!("Forked debate {parent} at event #")));
    let resumed = agon(dir, &["resume", &fork, "--quiet"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let (a, b) = (canonical(dir, &parent), canonical(dir, &fork));
    assert_eq!(a["messages"], b["messages"], "same model, same end");
    let compared = agon(dir, &["--json", "compare", &parent, &fork]);
    assert!(compared.status.success(), "{}", stderr(&compared));
    let compared: Value = serde_json::from_slice(&compared.stdout).unwrap();
    assert!(compared["divergence"]["first"].is_null(), "{compared}");
    let report = stdout(&agon(dir, &["report", &fork]));
    assert!(
        report.contains(&format!("_Forked from debate `{parent}` at event #")),
        "{report}"
    );

    let forked = agon(dir, &["fork", &parent, "--at", "40"]);
    assert!(forked.status.success(), "{}", stderr(&forked));
    let noted = stdout(&forked).trim().to_owned();
    let note = agon(
        dir,
        &["note", &noted, "NOTE-6633: assume a congestion charge"],
    );
    assert!(note.status.success(), "{}", stderr(&note));
    assert!(
        stderr(&note).contains("runs nowhere now"),
        "{}",
        stderr(&note)
    );
    let resumed = agon(dir, &["resume", &noted, "--quiet"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    // Analyses the copy left in flight may land first; the note is taken
    // before the next turn, and the logs part at it at the latest.
    let events = exported(dir, &noted);
    let note_at = events
        .iter()
        .position(|e| e["event"]["type"] == "note_added")
        .expect("the note is in the fork's log");
    let next_turn = events[40..]
        .iter()
        .position(|e| e["event"]["type"] == "message_appended")
        .expect("the fork runs on")
        + 40;
    assert!((40..next_turn).contains(&note_at), "{note_at} {next_turn}");
    let compared = agon(dir, &["--json", "compare", &parent, &noted]);
    let compared: Value = serde_json::from_slice(&compared.stdout).unwrap();
    let common = compared["divergence"]["common_events"].as_u64().unwrap();
    assert!((40..=note_at as u64).contains(&common), "{compared}");
    let text = stdout(&agon(dir, &["compare", &parent, &noted]));
    assert!(
        text.contains(&format!("Their logs hold the same first {common} events")),
        "{text}"
    );

    let beyond = agon(dir, &["fork", &parent, "--at", "100000"]);
    assert_eq!(beyond.status.code(), Some(2), "{}", stderr(&beyond));
    assert!(stderr(&beyond).contains(&parent), "{}", stderr(&beyond));
    let misplaced = agon(dir, &["fork", &parent, "--rounds", "3"]);
    assert_eq!(misplaced.status.code(), Some(2), "{}", stderr(&misplaced));
    assert!(
        stderr(&misplaced).contains("rounds"),
        "{}",
        stderr(&misplaced)
    );
}

/// `agon mcp` driven by a real MCP client (rmcp's, over the child's stdin
/// and stdout): it lists Agon's tools, starts a debate from a TOML
/// configuration on the stub provider and waits for it, reads its report,
/// and the debate is in the store as `agon list` shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_runs_a_debate_and_reads_its_report_through_agon_mcp() {
    use rmcp::ServiceExt as _;
    use rmcp::model::CallToolRequestParams;

    let server = stub(Duration::ZERO).await;
    let dir = temp_dir("mcp");
    let toml = std::fs::read_to_string(config(dir.path(), &server.uri())).unwrap();
    let mut command = tokio::process::Command::new(AGON);
    command
        .env(
            "AGON_STORE",
            format!("sqlite://{}", dir.path().join("agon.db").display()),
        )
        .env_remove("AGON_MODELS_DIR")
        .current_dir(dir.path())
        .arg("mcp");
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 7, "{tools:?}");
    let call = |name: &'static str, arguments: Value| {
        let Value::Object(arguments) = arguments else {
            panic!("an object")
        };
        CallToolRequestParams::new(name).with_arguments(arguments)
    };
    let text = |result: rmcp::model::CallToolResult| -> String {
        assert_ne!(result.is_error, Some(true), "{result:?}");
        result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect()
    };
    let done = text(
        client
            .call_tool(call(
                "start_debate",
                serde_json::json!({"config_toml": toml, "wait": true}),
            ))
            .await
            .unwrap(),
    );
    let first_line = done.lines().next().unwrap();
    assert!(first_line.contains(": finished"), "{done}");
    let id = first_line
        .trim_start_matches("debate ")
        .split(':')
        .next()
        .unwrap()
        .to_owned();
    let report = text(
        client
            .call_tool(call("debate_report", serde_json::json!({"id": id})))
            .await
            .unwrap(),
    );
    for name in ["Mara", "Theo", "Priya"] {
        assert!(report.contains(name), "{name} in the report:\n{report}");
    }
    client.cancel().await.unwrap();
    assert_eq!(only_debate(dir.path()), id);
}

/// The MCP inspector's command-line mode (`@modelcontextprotocol/inspector
/// --cli`, from the npm registry, installed with the tests' MCP servers)
/// starts `agon mcp`, runs a debate on the stub provider through
/// `start_debate` and reads the list back; a bad call is an error result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_inspector_runs_a_debate_through_agon_mcp() {
    let dir_of_servers = std::env::var("AGON_MCP_SERVERS_DIR")
        .expect("AGON_MCP_SERVERS_DIR (`cargo xtask mcp-servers` installs the inspector)");
    let inspector = Path::new(&dir_of_servers).join("mcp-inspector");
    assert!(inspector.exists(), "{} is missing", inspector.display());
    let server = stub(Duration::ZERO).await;
    let dir = temp_dir("inspector");
    let toml = std::fs::read_to_string(config(dir.path(), &server.uri())).unwrap();
    let store = format!("sqlite://{}", dir.path().join("agon.db").display());
    let inspect = |tool: &str, args: &[String]| {
        let out = std::process::Command::new(&inspector)
            .current_dir(dir.path())
            .args(["--cli", "-e", &format!("AGON_STORE={store}"), AGON, "mcp"])
            .args(["--method", "tools/call", "--tool-name", tool])
            .args(
                args.iter()
                    .flat_map(|a| ["--tool-arg".to_owned(), a.clone()]),
            )
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let result: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        let text = result["content"][0]["text"].as_str().unwrap().to_owned();
        (result["isError"] == true, text)
    };
    let (failed, done) = inspect(
        "start_debate",
        &[format!("config_toml={toml}"), "wait=true".to_owned()],
    );
    assert!(
        !failed && done.lines().next().unwrap().contains(": finished"),
        "{done}"
    );
    let id = done
        .trim_start_matches("debate ")
        .split(':')
        .next()
        .unwrap()
        .to_owned();
    let (failed, listed) = inspect("list_debates", &[]);
    assert!(
        !failed && listed.starts_with(&format!("{id} · finished")),
        "{listed}"
    );
    let (failed, said) = inspect("debate_status", &["id=nope".to_owned()]);
    assert!(failed && said == "unknown debate `nope`", "{said}");
    assert_eq!(only_debate(dir.path()), id);
}
