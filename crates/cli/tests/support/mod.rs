//! Helpers shared by the CLI's process-level tests (workers, load): a stub
//! provider answering with the scripted model, small configurations of the
//! three protocols, fresh PostgreSQL databases, reference runs.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agon_testkit::openai_reply;
use serde_json::Value;

/// The small configurations of the three protocols, shared with the
/// orchestrator's fault and load tests.
#[path = "../../../orchestrator/benches/support/faults.rs"]
pub mod runner;

pub const AGON: &str = env!("CARGO_BIN_EXE_agon");

/// The stub provider; it notes when each request arrived.
#[derive(Clone)]
pub struct Stub {
    delay: Duration,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl wiremock::Respond for Stub {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        self.arrivals.lock().unwrap().push(Instant::now());
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let (content_type, text) = openai_reply(&body);
        wiremock::ResponseTemplate::new(200)
            .set_body_raw(text, content_type)
            .set_delay(self.delay)
    }
}

pub async fn stub(delay: Duration) -> (wiremock::MockServer, Arc<Mutex<Vec<Instant>>>) {
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Stub {
            delay,
            arrivals: Arc::clone(&arrivals),
        })
        .mount(&server)
        .await;
    (server, arrivals)
}

/// The stub provider keeping every request's body.
#[derive(Clone)]
pub struct Keeping {
    delay: Duration,
    bodies: Arc<Mutex<Vec<String>>>,
}

impl wiremock::Respond for Keeping {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        self.bodies
            .lock()
            .unwrap()
            .push(String::from_utf8_lossy(&request.body).into_owned());
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let (content_type, text) = openai_reply(&body);
        wiremock::ResponseTemplate::new(200)
            .set_body_raw(text, content_type)
            .set_delay(self.delay)
    }
}

/// [`stub`], keeping every request's body (the prompts).
pub async fn keeping_stub(delay: Duration) -> (wiremock::MockServer, Arc<Mutex<Vec<String>>>) {
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Keeping {
            delay,
            bodies: Arc::clone(&bodies),
        })
        .mount(&server)
        .await;
    (server, bodies)
}

/// A fresh database on the test server.
pub async fn pg_url(prefix: &str) -> String {
    let admin = std::env::var("AGON_TEST_DATABASE_URL")
        .expect("AGON_TEST_DATABASE_URL is not set: run the suite with `cargo xtask test`");
    pg_url_on(&admin, prefix).await
}

/// A fresh database on the server of `admin` (a PostgreSQL URL).
pub async fn pg_url_on(admin: &str, prefix: &str) -> String {
    let name = format!(
        "agon_t_{prefix}_{}_{}",
        std::process::id(),
        chrono::Utc::now().timestamp_subsec_nanos()
    );
    fresh_database(admin, &name).await
}

/// The database `name` on the server of `admin`, dropped and created
/// again; returns its URL.
pub async fn fresh_database(admin: &str, name: &str) -> String {
    use sqlx::Connection;
    let mut c = sqlx::PgConnection::connect(admin).await.unwrap();
    for sql in [
        format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        format!("CREATE DATABASE {name}"),
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(&mut c)
            .await
            .unwrap();
    }
    let base = admin.rsplit_once('/').map_or(admin, |(b, _)| b);
    format!("{base}/{name}")
}

pub fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("agon-worker-tests-{name}-"))
        .tempdir()
        .unwrap()
}

/// The three protocols, small, memory off (no embedder to load).
pub fn configs(dir: &Path, server: &str) -> Vec<(&'static str, PathBuf)> {
    runner::PROTOCOLS
        .into_iter()
        .map(|name| {
            let path = dir.join(format!("{name}.toml"));
            let text = format!(
                "{}\n[models]\ndefault = \"openai-compatible:stub@{server}/v1\"\n",
                runner::toml(name)
            );
            std::fs::write(&path, text).unwrap();
            (name, path)
        })
        .collect()
}

pub fn agon(store: &str, args: &[&str]) -> Output {
    Command::new(AGON)
        .env("AGON_STORE", store)
        .env_remove("AGON_MODELS_DIR")
        .args(args)
        .output()
        .unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The blackboard as JSON, without times, ids and usage.
pub fn canonical(store: &str, id: &str) -> Value {
    let shown = agon(store, &["show", id, "--json"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let mut v: Value = serde_json::from_slice(&shown.stdout).unwrap();
    agon_testkit::strip_volatile(&mut v);
    v
}

/// Each configuration run by `agon debate`, uninterrupted, on SQLite.
pub fn references(dir: &Path, configs: &[(&'static str, PathBuf)]) -> BTreeMap<String, Value> {
    let store = format!("sqlite://{}", dir.join("reference.db").display());
    configs
        .iter()
        .map(|(name, path)| {
            let run = agon(
                &store,
                &["debate", "--quiet", "--config", path.to_str().unwrap()],
            );
            assert!(run.status.success(), "{name}: {}", stderr(&run));
            let list = agon(&store, &["--json", "list"]);
            let rows: Vec<Value> = serde_json::from_slice(&list.stdout).unwrap();
            let id = rows.iter().find(|r| r["protocol"] == *name).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned();
            ((*name).to_owned(), canonical(&store, &id))
        })
        .collect()
}

/// `agon --json list`, by debate id.
pub fn listed(store: &str) -> BTreeMap<String, Value> {
    let o = agon(store, &["--json", "list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    rows.into_iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r))
        .collect()
}

/// Waits until every debate of `store` is finished (panics after `limit`).
pub async fn until_all_finished(
    store: &str,
    count: usize,
    limit: Duration,
) -> BTreeMap<String, Value> {
    let start = Instant::now();
    loop {
        let rows = listed(store);
        let done = rows.values().filter(|r| r["status"] == "finished").count();
        if done == count {
            return rows;
        }
        let failed: Vec<&Value> = rows
            .values()
            .filter(|r| r["status"] == "failed" && r["job"].is_null())
            .collect();
        assert!(failed.is_empty(), "debates failed for good: {failed:#?}");
        assert!(
            start.elapsed() < limit,
            "{done}/{count} finished after {limit:?}: {rows:#?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

pub fn kill(child: &mut Child) {
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

/// The events each reference debate of [`references`] has, by protocol
/// (call after [`references`], on the same directory).
pub fn reference_events(dir: &Path) -> BTreeMap<String, u64> {
    let store = format!("sqlite://{}", dir.join("reference.db").display());
    let list = agon(&store, &["--json", "list"]);
    let rows: Vec<Value> = serde_json::from_slice(&list.stdout).unwrap();
    rows.iter()
        .map(|r| {
            (
                r["protocol"].as_str().unwrap().to_owned(),
                r["events"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The one debate of a store and its last sequence, read straight from
/// the database through one connection kept across reads (a connection
/// per read, every 2 ms, was a new PostgreSQL backend each time).
#[derive(Default)]
struct Progress {
    sqlite: Option<sqlx::SqliteConnection>,
    postgres: Option<sqlx::PgConnection>,
}

impl Progress {
    /// `None` until the store and the debate exist.
    async fn read(&mut self, store: &str) -> Option<(String, i64)> {
        use sqlx::Connection;
        let query = "SELECT id, last_seq FROM debates";
        if store.starts_with("sqlite:") {
            if self.sqlite.is_none() {
                self.sqlite = sqlx::SqliteConnection::connect(store).await.ok();
            }
            sqlx::query_as(query)
                .fetch_optional(self.sqlite.as_mut()?)
                .await
                .ok()?
        } else {
            if self.postgres.is_none() {
                self.postgres = sqlx::PgConnection::connect(store).await.ok();
            }
            sqlx::query_as(query)
                .fetch_optional(self.postgres.as_mut()?)
                .await
                .ok()?
        }
    }
}

/// Runs `agon debate` of `config` on the empty `store`, kills it with
/// SIGKILL as soon as its debate has `at` events, then resumes it to the
/// end. Returns the debate id and whether the kill landed before the
/// debate finished.
pub async fn kill_at(store: &str, config: &Path, at: i64) -> (String, bool) {
    let mut child = Command::new(AGON)
        .env("AGON_STORE", store)
        .env_remove("AGON_MODELS_DIR")
        .args(["debate", "--quiet", "--config", config.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut progress = Progress::default();
    let (id, landed) = loop {
        let seen = progress.read(store).await;
        if let Some((id, seq)) = &seen
            && *seq >= at
        {
            let landed = child.try_wait().unwrap().is_none();
            kill(&mut child);
            break (id.clone(), landed);
        }
        if child.try_wait().unwrap().is_some() {
            let (id, _) = progress.read(store).await.expect("the debate exists");
            break (id, false);
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "stuck before event {at}"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    };
    drop(progress);
    let resumed = agon(store, &["resume", &id, "--quiet"]);
    assert!(
        resumed.status.success(),
        "resume of {id}: {}",
        stderr(&resumed)
    );
    (id, landed)
}

/// The base URL `agon serve` (`child`, its standard error piped) says it
/// serves on, and the rest of its standard error.
pub async fn served(
    child: &mut tokio::process::Child,
) -> (
    String,
    tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStderr>>,
) {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let base = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(rest) = line.strip_prefix("Serving Agon on ") {
                return rest.split_whitespace().next().unwrap().to_owned();
            }
        }
        panic!("agon serve ended before it served")
    })
    .await
    .expect("agon serve starts");
    (base, lines)
}

/// Waits until `done` (checked every 25 ms; panics naming `what` after
/// 90 s).
pub async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(90) {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}
