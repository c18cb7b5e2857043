//! Load across processes (issue 32, part 2): 20 `agon debate` processes
//! of the three protocols at once on one SQLite file, and on one
//! PostgreSQL database. Every process exits 0, none prints a store error
//! ("database is locked"), and every debate's blackboard is exactly the
//! one it has when it runs alone.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::{Command, Stdio};
use std::time::Duration;

use support::{AGON, canonical, configs, listed, pg_url, references, stub, temp_dir};

async fn twenty_processes(store: &str, dir: &std::path::Path, server: &str) {
    let configs = configs(dir, server);
    let expected = references(dir, &configs);
    let children: Vec<_> = (0..20)
        .map(|i| {
            let (name, path) = &configs[i % 3];
            let child = Command::new(AGON)
                .env("AGON_STORE", store)
                .env_remove("AGON_MODELS_DIR")
                .args(["debate", "--quiet", "--config", path.to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (*name, child)
        })
        .collect();
    for (name, child) in children {
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {err}");
        assert!(!err.to_lowercase().contains("locked"), "{name}: {err}");
    }
    let rows = listed(store);
    assert_eq!(rows.len(), 20);
    for (id, row) in &rows {
        let protocol = row["protocol"].as_str().unwrap();
        assert_eq!(row["status"], "finished", "{id}");
        assert_eq!(
            &canonical(store, id),
            &expected[protocol],
            "{protocol} debate {id} differs from its run alone"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_processes_on_one_sqlite_file_never_see_a_locked_database() {
    let (server, _) = stub(Duration::from_millis(5)).await;
    let dir_tmp = temp_dir("load-sqlite");
    let dir = dir_tmp.path();
    let store = format!("sqlite://{}", dir.join("shared.db").display());
    twenty_processes(&store, dir, &server.uri()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_processes_on_one_postgres_database() {
    let (server, _) = stub(Duration::from_millis(5)).await;
    let dir_tmp = temp_dir("load-pg");
    let store = pg_url("load").await;
    twenty_processes(&store, dir_tmp.path(), &server.uri()).await;
}

/// Kill anywhere (issue 32, part 3), in CI's share: every protocol, both
/// stores, three seeded points of its event log each (`cargo xtask bench
/// kill` runs 50). The resumed debate equals the uninterrupted one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_protocol_killed_at_seeded_points_resumes_to_the_uninterrupted_log() {
    let (server, _) = stub(Duration::from_millis(10)).await;
    let dir_tmp = temp_dir("kill-anywhere");
    let dir = dir_tmp.path();
    let configs = configs(dir, &server.uri());
    let expected = references(dir, &configs);
    let events = support::reference_events(dir);
    let mut rng = fastrand::Rng::with_seed(32);
    let mut landed = 0;
    for (protocol, path) in &configs {
        let total = i64::try_from(events[*protocol]).unwrap();
        for store_kind in ["sqlite", "postgres"] {
            for point in 0..3 {
                let at = rng.i64(1..total);
                let store = if store_kind == "sqlite" {
                    format!(
                        "sqlite://{}",
                        dir.join(format!("k-{protocol}-{point}.db")).display()
                    )
                } else {
                    pg_url("kill").await
                };
                let (id, hit) = support::kill_at(&store, path, at).await;
                landed += usize::from(hit);
                assert_eq!(
                    &canonical(&store, &id),
                    &expected[*protocol],
                    "{protocol} on {store_kind}, killed at event {at} of {total}"
                );
            }
        }
    }
    assert!(landed >= 12, "only {landed} of 18 kills landed mid-run");
}
