//! Scale-out end to end: `agon submit`, `agon worker` processes on one
//! PostgreSQL store (a fresh database on the server of
//! `AGON_TEST_DATABASE_URL`, which `cargo xtask test` starts), workers
//! killed with SIGKILL mid-run, and the provider rate limit the workers
//! share. The models are a local OpenAI-compatible stub answering with the
//! scripted model, so every debate must end exactly as an uninterrupted
//! run of the same configuration does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agon_testkit::openai_reply;
use serde_json::Value;

const AGON: &str = env!("CARGO_BIN_EXE_agon");

/// The stub provider; it notes when each request arrived.
#[derive(Clone)]
struct Stub {
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

async fn stub(delay: Duration) -> (wiremock::MockServer, Arc<Mutex<Vec<Instant>>>) {
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

/// A fresh database on the test server.
async fn pg_url(prefix: &str) -> String {
    use sqlx::Connection;
    let admin = std::env::var("AGON_TEST_DATABASE_URL")
        .expect("AGON_TEST_DATABASE_URL is not set: run the suite with `cargo xtask test`");
    let name = format!(
        "agon_t_{prefix}_{}_{}",
        std::process::id(),
        chrono::Utc::now().timestamp_subsec_nanos()
    );
    let mut c = sqlx::PgConnection::connect(&admin).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut c)
        .await
        .unwrap();
    let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
    format!("{base}/{name}")
}

fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("agon-worker-tests-{name}-"))
        .tempdir()
        .unwrap()
}

/// The three protocols, small, memory off (no embedder to load).
fn configs(dir: &Path, server: &str) -> Vec<(&'static str, PathBuf)> {
    let model = format!(
        "[models]\ndefault = \"openai-compatible:stub@{server}/v1\"\n\n[memory]\nenabled = false\n"
    );
    let files = [
        (
            "structured",
            format!(
                "topic = \"Should cities ban private cars from their centres?\"\nminirounds = 2\n\n\
                 [[aspects]]\nlabel = \"Cost\"\n\n[[aspects]]\nlabel = \"Health\"\n\n\
                 [[personas]]\nname = \"Mara\"\ncontract = \"Urban planner, for car-free centres.\"\n\n\
                 [[personas]]\nname = \"Theo\"\ncontract = \"Economist, against bans.\"\n\n\
                 [crux]\nmax_turns = 2\ncheck_every = 2\nmax_rooms = 1\n\n{model}"
            ),
        ),
        (
            "dialectic",
            format!(
                "protocol = \"dialectic\"\ntopic = \"Design a rate limiter for a public API.\"\n\n\
                 [dialectic]\nrounds = 2\n\n[[dialectic.agent]]\nrole = \"architect\"\n\n\
                 [[dialectic.agent]]\nrole = \"kiss\"\n\n{model}"
            ),
        ),
        (
            "deliberation",
            format!(
                "protocol = \"deliberation\"\ntopic = \"How should the city spend its transport budget?\"\n\n\
                 [deliberation]\nturns = 12\nstop_on_consensus = false\n\n\
                 [[personas]]\nname = \"Ana\"\ncontract = \"Cyclist.\"\n\n\
                 [[personas]]\nname = \"Ben\"\ncontract = \"Driver.\"\n\n{model}"
            ),
        ),
    ];
    files
        .into_iter()
        .map(|(name, text)| {
            let path = dir.join(format!("{name}.toml"));
            std::fs::write(&path, text).unwrap();
            (name, path)
        })
        .collect()
}

fn agon(store: &str, args: &[&str]) -> Output {
    Command::new(AGON)
        .env("AGON_STORE", store)
        .env_remove("AGON_MODELS_DIR")
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The blackboard as JSON, without times, ids and usage.
fn canonical(store: &str, id: &str) -> Value {
    let shown = agon(store, &["show", id, "--json"]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let mut v: Value = serde_json::from_slice(&shown.stdout).unwrap();
    agon_testkit::strip_volatile(&mut v);
    v
}

/// Each configuration run by `agon debate`, uninterrupted, on SQLite.
fn references(dir: &Path, configs: &[(&'static str, PathBuf)]) -> BTreeMap<String, Value> {
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

fn worker(store: &str, extra: &[&str]) -> Child {
    Command::new(AGON)
        .env("AGON_STORE", store)
        .env_remove("AGON_MODELS_DIR")
        .args(["worker", "--concurrency", "4", "--dead-after", "4"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn submit(store: &str, args: &[&str]) -> Vec<String> {
    let o = agon(store, &[&["submit"], args].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `agon --json list`, by debate id.
fn listed(store: &str) -> BTreeMap<String, Value> {
    let o = agon(store, &["--json", "list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    rows.into_iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r))
        .collect()
}

/// Waits until every debate of `store` is finished (panics after `limit`).
async fn until_all_finished(store: &str, count: usize, limit: Duration) -> BTreeMap<String, Value> {
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

fn kill(child: &mut Child) {
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_debates_finish_on_three_workers_when_one_is_killed_twice() {
    let (server, _) = stub(Duration::from_millis(20)).await;
    let dir_tmp = temp_dir("kill");
    let dir = dir_tmp.path();
    let configs = configs(dir, &server.uri());
    let expected = references(dir, &configs);
    let store = pg_url("workers").await;

    // A worker on SQLite is refused with the reason.
    let sqlite = format!("sqlite://{}", dir.join("one.db").display());
    let o = agon(&sqlite, &["worker"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("needs a PostgreSQL store"),
        "{}",
        stderr(&o)
    );

    let mut ids = BTreeMap::new();
    for (name, path) in &configs {
        for id in submit(&store, &[path.to_str().unwrap(), "--repeat", "10"]) {
            ids.insert(id, (*name).to_owned());
        }
    }
    assert_eq!(ids.len(), 30);
    let rows = listed(&store);
    assert!(
        rows.values()
            .all(|r| r["status"] == "queued" && r["job"]["state"] == "queued"),
        "{rows:#?}"
    );

    let mut workers: Vec<Child> = (0..3).map(|_| worker(&store, &[])).collect();
    // Kill one worker mid-run, twice; a replacement joins each time.
    for (round, slot) in workers.iter_mut().take(2).enumerate() {
        let start = Instant::now();
        loop {
            let rows = listed(&store);
            let running = rows
                .values()
                .filter(|r| r["job"]["state"] == "running")
                .count();
            let finished = rows.values().filter(|r| r["status"] == "finished").count();
            assert!(
                finished < 30,
                "round {round}: everything finished before the kill"
            );
            // The worker is shown as its process and graphile_worker's id.
            for r in rows.values().filter(|r| r["job"]["state"] == "running") {
                let worker = r["job"]["worker"].as_str().unwrap();
                assert!(
                    worker.contains(":") && worker.contains("(graphile_worker_"),
                    "{worker}"
                );
            }
            if running > 0 && start.elapsed() > Duration::from_millis(800) {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "nothing runs: {rows:#?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            slot.try_wait().unwrap().is_none(),
            "the worker exited by itself"
        );
        kill(slot);
        *slot = worker(&store, &[]);
    }
    let rows = until_all_finished(&store, 30, Duration::from_secs(600)).await;
    for w in &mut workers {
        kill(w);
    }

    for (id, protocol) in &ids {
        assert_eq!(rows[id]["status"], "finished", "{id}");
        let got = canonical(&store, id);
        let want = &expected[protocol];
        assert_eq!(
            got["messages"].as_array().map(Vec::len),
            want["messages"].as_array().map(Vec::len),
            "{protocol} debate {id}: messages lost or repeated"
        );
        assert_eq!(
            &got, want,
            "{protocol} debate {id} differs from an uninterrupted run"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_share_one_provider_rate_limit() {
    let (server, arrivals) = stub(Duration::from_millis(5)).await;
    let dir_tmp = temp_dir("rate");
    let dir = dir_tmp.path();
    let configs = configs(dir, &server.uri());
    let store = pg_url("rate").await;
    let dialectic = configs[1].1.to_str().unwrap().to_owned();
    let mut ids = submit(&store, &[&dialectic, "--repeat", "5"]);
    // `agon debate --detach` queues one and prints its id.
    let o = agon(&store, &["debate", "--config", &dialectic, "--detach"]);
    assert!(o.status.success(), "{}", stderr(&o));
    ids.extend(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_owned),
    );
    assert_eq!(ids.len(), 6);
    assert!(stderr(&o).contains("Queued debate"), "{}", stderr(&o));
    let rate = 4.0;
    let mut workers: Vec<Child> = (0..3)
        .map(|_| worker(&store, &["--rate-limit", "openai-compatible=4/s"]))
        .collect();
    until_all_finished(&store, 6, Duration::from_secs(600)).await;
    for w in &mut workers {
        kill(w);
    }
    let mut times = arrivals.lock().unwrap().clone();
    times.sort();
    assert!(times.len() > 60, "only {} requests", times.len());
    // A bucket holds one second of requests: any window of W seconds sees
    // at most rate × W + rate requests. Over 5 s that is 1.2 × the rate.
    let window = Duration::from_secs(5);
    let most = times
        .iter()
        .map(|t| {
            times
                .iter()
                .filter(|u| **u >= *t && **u < *t + window)
                .count()
        })
        .max()
        .unwrap();
    let allowed = rate * 5.0 + rate;
    assert!(
        most as f64 <= allowed,
        "{most} requests in a 5 s window, allowed {allowed} at {rate}/s"
    );
    let span = times.last().unwrap().duration_since(times[0]).as_secs_f64();
    let overall = times.len() as f64 / span;
    assert!(
        overall <= rate * 1.2,
        "{overall:.2} requests/s over {span:.0} s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debate_killed_in_a_terminal_is_finished_by_a_worker_after_resume_detach() {
    let (server, _) = stub(Duration::from_millis(20)).await;
    let dir_tmp = temp_dir("detach");
    let dir = dir_tmp.path();
    let configs = configs(dir, &server.uri());
    let expected = references(dir, &configs[..1]);
    let store = pg_url("detach").await;
    let cfg = configs[0].1.to_str().unwrap();

    // `agon debate` in a terminal, killed with SIGKILL mid-run.
    let mut child = Command::new(AGON)
        .env("AGON_STORE", &store)
        .args(["debate", "--quiet", "--config", cfg])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let id = loop {
        let rows = listed(&store);
        if let Some((id, _)) = rows.iter().find(|(_, r)| r["messages"].as_u64() >= Some(3)) {
            break id.clone();
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{rows:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    kill(&mut child);
    assert_ne!(listed(&store)[&id]["status"], "finished");

    // Queued again, and finished by a worker: the dead runner's lease is
    // taken at once (same host), nothing is repeated or lost.
    let o = agon(&store, &["resume", &id, "--detach"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(listed(&store)[&id]["status"], "queued");
    let mut w = worker(&store, &[]);
    until_all_finished(&store, 1, Duration::from_secs(300)).await;
    kill(&mut w);
    assert_eq!(&canonical(&store, &id), &expected["structured"]);
}
