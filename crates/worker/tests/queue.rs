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

/// A worker taken for dead (its heartbeats late) while it ran a debate's
/// step: the queue gave its job back, so it queues nothing beside it (the
/// next job would merge into the job given back, which its completion
/// would then delete: a debate `queued` with no job, seen under load). Its
/// own job, still its own, is replaced by the next one as always.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_taken_for_dead_queues_nothing_beside_its_given_back_job() {
    let url = pg_url("given_back").await;
    let queue = JobQueue::connect(&url).await.unwrap();
    let store = PgStore::connect(&url).await.unwrap();
    let id = DebateId::new("given-back");
    store
        .create_debate(&NewDebate {
            id: id.clone(),
            topic: "Recover me".into(),
            config: serde_json::json!({}),
        })
        .await
        .unwrap();
    queue.submit(&id).await.unwrap();
    let pool = queue.pool();
    let job: i64 = sqlx::query_scalar("SELECT id FROM graphile_worker._private_jobs")
        .fetch_one(pool)
        .await
        .unwrap();
    let lock = |worker: &'static str| {
        sqlx::query(
            "UPDATE graphile_worker._private_jobs SET locked_by = $1, locked_at = now() WHERE id = $2",
        )
        .bind(worker)
        .bind(job)
    };

    // Taken for dead: the queue's recovery gives the job back.
    lock("w1").execute(pool).await.unwrap();
    sqlx::query("SELECT graphile_worker._private_return_jobs('w1', array[$1::bigint])")
        .bind(job)
        .execute(pool)
        .await
        .unwrap();
    assert!(!queue.queue_next(&id, job, "w1").await.unwrap());
    let keys: Vec<(i64, Option<String>)> =
        sqlx::query_as("SELECT id, key FROM graphile_worker._private_jobs")
            .fetch_all(pool)
            .await
            .unwrap();
    assert_eq!(
        keys,
        [(job, Some(format!("agon:debate:{id}")))],
        "the job given back is the debate's job, untouched"
    );

    // Given to another worker meanwhile: not w1's either.
    lock("w2").execute(pool).await.unwrap();
    assert!(!queue.queue_next(&id, job, "w1").await.unwrap());

    // Its holder queues the next step beside it: a new job with the key,
    // so completing (deleting) the one that ran leaves the next.
    assert!(queue.queue_next(&id, job, "w2").await.unwrap());
    let jobs: Vec<(i64, Option<String>)> =
        sqlx::query_as("SELECT id, key FROM graphile_worker._private_jobs ORDER BY id")
            .fetch_all(pool)
            .await
            .unwrap();
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert_eq!(jobs[0], (job, None));
    assert_eq!(
        jobs[1].1.as_deref(),
        Some(format!("agon:debate:{id}").as_str())
    );
    assert_eq!(store.debate(&id).await.unwrap().status, RunStatus::Queued);
    // A job that no longer exists is nobody's.
    assert!(!queue.queue_next(&id, 987_654, "w2").await.unwrap());
}
