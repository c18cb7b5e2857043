//! Scale-out end to end: `agon submit`, `agon worker` processes on one
//! PostgreSQL store (a fresh database on the server of
//! `AGON_TEST_DATABASE_URL`, which `cargo xtask test` starts), workers
//! killed with SIGKILL mid-run, and the provider rate limit the workers
//! share. The models are a local OpenAI-compatible stub answering with the
//! scripted model, so every debate must end exactly as an uninterrupted
//! run of the same configuration does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{
    AGON, agon, canonical, configs, kill, listed, pg_url, references, stderr, stub, temp_dir,
    until_all_finished,
};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_stopped_with_sigterm_finishes_its_steps_and_leaves_nothing_locked() {
    let (server, _) = stub(Duration::from_millis(700)).await;
    let dir_tmp = temp_dir("sigterm");
    let dir = dir_tmp.path();
    let configs = configs(dir, &server.uri());
    let store = pg_url("sigterm").await;
    let ids = submit(&store, &[configs[1].1.to_str().unwrap(), "--repeat", "2"]);
    let mut w = worker(&store, &[]);
    let start = Instant::now();
    // Once the debates speak (each step now waits 700 ms for its answers).
    let messages = |rows: &BTreeMap<String, serde_json::Value>| -> u64 {
        rows.values().map(|r| r["messages"].as_u64().unwrap()).sum()
    };
    let before = loop {
        let rows = listed(&store);
        if messages(&rows) > 0 && rows.values().any(|r| r["job"]["state"] == "running") {
            break messages(&rows);
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{rows:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let term = Command::new("kill")
        .args(["-TERM", &w.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let stopped = Instant::now();
    let status = loop {
        if let Some(status) = w.try_wait().unwrap() {
            break status;
        }
        assert!(
            stopped.elapsed() < Duration::from_secs(60),
            "the worker did not stop"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "{status:?}");
    // The steps in flight were finished and recorded, and no job is left
    // locked by the stopped worker: the next worker takes them at once.
    let rows = listed(&store);
    let after = messages(&rows);
    assert!(
        after > before,
        "no step was finished ({before} → {after} messages)"
    );
    assert!(
        after > before,
        "no step was finished ({before} → {after} events)"
    );
    assert!(
        rows.values().all(|r| r["job"]["state"] != "running"),
        "{rows:#?}"
    );
    assert_eq!(ids.len(), 2);
}

/// A debate's events, as `agon export` prints them.
fn exported(store: &str, id: &str) -> Vec<serde_json::Value> {
    let o = agon(store, &["export", id]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn count(events: &[serde_json::Value], kind: &str, needle: &str) -> usize {
    events
        .iter()
        .filter(|e| e["event"]["type"] == kind && e["event"].to_string().contains(needle))
        .count()
}

/// Debates run by `agon worker` on PostgreSQL, steered through `agon
/// serve` (another process): a structured debate is noted (the note
/// reaches the agents' next prompts), paused (no job runs while it is) and
/// resumed (the resume queues it again); a dialectic debate's clarifying
/// questions wait for answers given through the API, which reach the
/// proposals' prompts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_run_debates_are_noted_paused_resumed_and_answered_through_the_api() {
    let (server, bodies) = support::keeping_stub(Duration::from_millis(60)).await;
    let dir_tmp = temp_dir("steer");
    let dir = dir_tmp.path();
    let models = format!(
        "\n[models]\ndefault = \"openai-compatible:stub@{}/v1\"\n",
        server.uri()
    );
    let structured = dir.join("structured.toml");
    std::fs::write(
        &structured,
        format!("{}{models}", support::runner::toml("structured")),
    )
    .unwrap();
    let dialectic = dir.join("dialectic.toml");
    std::fs::write(
        &dialectic,
        format!(
            "protocol = \"dialectic\"\ntopic = \"Design a rate limiter for a public API.\"\n\n\
             [dialectic]\nrounds = 1\ndevil_advocate = false\nclarify = true\nclarify_rounds = 1\n\n\
             [[dialectic.agent]]\nrole = \"architect\"\n\n[[dialectic.agent]]\nrole = \"kiss\"\n\n\
             [memory]\nenabled = false\n\n[trust]\nweigh_feedback = false\n{models}"
        ),
    )
    .unwrap();
    let store = pg_url("steer").await;
    let ids = submit(
        &store,
        &[structured.to_str().unwrap(), dialectic.to_str().unwrap()],
    );
    assert_eq!(ids.len(), 2, "{ids:?}");
    let (s, d) = (ids[0].clone(), ids[1].clone());
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
    let mut w = worker(&store, &[]);
    let client = reqwest::Client::new();

    // The structured debate: a note, a pause, a resume.
    support::until("its first message", || {
        count(&exported(&store, &s), "message_appended", "") > 0
    })
    .await;
    let r = client
        .post(format!("{base}/api/debates/{s}/notes"))
        .json(&serde_json::json!({ "text": "NOTE-W77: count the delivery vans" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202, "{:?}", r.text().await);
    support::until("the note", || {
        count(&exported(&store, &s), "note_added", "NOTE-W77") == 1
    })
    .await;
    let asked_at_note = bodies.lock().unwrap().len();
    let r = client
        .post(format!("{base}/api/debates/{s}/pause"))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    support::until("the pause, and no job", || {
        count(&exported(&store, &s), "debate_paused", "") == 1
            && listed(&store)[&s]["job"].is_null()
    })
    .await;
    let held = count(&exported(&store, &s), "message_appended", "");
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(
        count(&exported(&store, &s), "message_appended", ""),
        held,
        "no step runs while it is paused"
    );
    assert!(listed(&store)[&s]["job"].is_null(), "no job while paused");
    let resumed: serde_json::Value = client
        .post(format!("{base}/api/debates/{s}/resume"))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(resumed["how"], "queued", "{resumed}");

    // The dialectic debate: its questions, answered through the API.
    let questions = {
        let start = Instant::now();
        loop {
            let q: serde_json::Value = client
                .get(format!("{base}/api/debates/{d}/questions"))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let list = q["questions"].as_array().cloned().unwrap_or_default();
            if !list.is_empty() {
                break list;
            }
            assert!(start.elapsed() < Duration::from_secs(90), "no questions");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let answers: Vec<String> = (1..=questions.len())
        .map(|i| format!("ANSWER-W{i}: 2,000 requests a second"))
        .collect();
    let r = client
        .post(format!("{base}/api/debates/{d}/answers"))
        .json(&serde_json::json!({ "answers": answers }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202, "{:?}", r.text().await);

    support::until("both debates finish", || {
        let rows = listed(&store);
        rows[&s]["status"] == "finished" && rows[&d]["status"] == "finished"
    })
    .await;
    let later = bodies.lock().unwrap()[asked_at_note..].to_vec();
    assert!(
        later.iter().any(|b| b.contains("NOTE-W77")),
        "the note reaches the agents"
    );
    assert!(
        later.iter().any(|b| b.contains("ANSWER-W1")),
        "the answers reach the proposals"
    );
    assert_eq!(
        count(&exported(&store, &d), "message_appended", "ANSWER-W"),
        questions.len()
    );
    kill(&mut w);
    serve.kill().await.ok();
}
