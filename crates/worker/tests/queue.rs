//! Queuing on a real PostgreSQL (a fresh database on the server of
//! `AGON_TEST_DATABASE_URL`): a debate's `queued` status and its job
//! commit in one transaction, or neither does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use agon_core::DebateId;
use agon_store::{EventStore, NewDebate, PgStore, RunStatus, StoreError};
use agon_worker::{JobQueue, WorkerError};

mod support;

use support::pg_url;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_and_the_job_commit_together_or_not_at_all() {
    let url = pg_url("queue").await;
    let queue = JobQueue::connect(&url).await.unwrap();
    let store = PgStore::connect(&url).await.unwrap();

    // A debate the store does not have: the status update fails, so the
    // job added in the same transaction is rolled back with it.
    let missing = DebateId::new("no-such-debate");
    let refused = queue.submit(&missing).await.unwrap_err();
    assert!(
        matches!(
            refused,
            WorkerError::Store(StoreError::DebateNotFound { ref debate }) if debate == "no-such-debate"
        ),
        "{refused}"
    );
    assert!(
        queue.jobs().await.unwrap().is_empty(),
        "a job without its debate was left"
    );

    // A stored debate: queued, with exactly one waiting job, however often
    // it is submitted (the job key).
    let id = DebateId::new("queued-debate");
    store
        .create_debate(&NewDebate {
            id: id.clone(),
            topic: "Queue me".into(),
            config: serde_json::json!({}),
        })
        .await
        .unwrap();
    queue.submit(&id).await.unwrap();
    queue.resume(&id).await.unwrap();
    assert_eq!(store.debate(&id).await.unwrap().status, RunStatus::Queued);
    let jobs = queue.jobs().await.unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(jobs[0].debate, id);
    assert_eq!(jobs[0].attempts, 0);
}

#[tokio::test]
async fn a_sqlite_store_has_no_queue() {
    let e = JobQueue::connect("sqlite:///tmp/x.db").await.unwrap_err();
    assert!(e.to_string().contains("needs a PostgreSQL store"), "{e}");
    assert!(
        JobQueue::open_existing("sqlite:///tmp/x.db")
            .await
            .unwrap()
            .is_none()
    );
}
