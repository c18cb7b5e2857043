//! Enqueuing debates and reading the queue: the submit side, used by
//! `agon submit`, `agon debate --detach` and `agon list`.

use agon_core::DebateId;
use agon_store::{PgStore, RunStatus, redact_url};
use chrono::{DateTime, Utc};
use graphile_worker::WorkerUtils;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

use crate::error::WorkerError;
use crate::job::{AdvanceDebate, SCHEMA, TASK, debate_of_key, spec};

/// A job row: key, attempts, max attempts, run at, locked by, last error.
type JobRow = (
    Option<String>,
    i16,
    i16,
    DateTime<Utc>,
    Option<String>,
    Option<String>,
);

/// A debate's job in the queue, as `agon list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedJob {
    /// The debate the job advances.
    pub debate: DebateId,
    /// Tries so far (a job that fails is retried with backoff).
    pub attempts: i16,
    /// Tries allowed before the job is failed for good.
    pub max_attempts: i16,
    /// When it may run (later than now while it backs off).
    pub run_at: DateTime<Utc>,
    /// The worker running it now, if one is: `host:pid (worker id)`.
    pub locked_by: Option<String>,
    /// The last try's error, if it failed.
    pub last_error: Option<String>,
}

impl QueuedJob {
    /// Whether the engine gave up on the job (every try failed).
    pub fn failed(&self) -> bool {
        self.attempts >= self.max_attempts && self.locked_by.is_none()
    }
}

/// The job queue in a PostgreSQL store's database.
#[derive(Debug, Clone)]
pub struct JobQueue {
    pool: PgPool,
    /// The store in the same database: a debate's status changes in the
    /// transaction that queues its job.
    store: PgStore,
    url: String,
}

/// Creates Agon's tables beside graphile_worker's (the worker names, the
/// shared rate limits), under an advisory lock: workers starting at once
/// on a new database would otherwise race in `CREATE TABLE IF NOT EXISTS`
/// (which is not safe against itself).
pub(crate) async fn create_tables(pool: &PgPool) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock(7_431_002_031)")
        .execute(&mut *tx)
        .await?;
    sqlx::raw_sql(
        "CREATE TABLE IF NOT EXISTS agon_workers (
            worker_id  TEXT PRIMARY KEY,
            process    TEXT NOT NULL,
            started_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE TABLE IF NOT EXISTS agon_rate_limits (
            name                TEXT PRIMARY KEY,
            requests_per_minute DOUBLE PRECISION,
            tokens_per_minute   DOUBLE PRECISION,
            requests            DOUBLE PRECISION NOT NULL DEFAULT 0,
            tokens              DOUBLE PRECISION NOT NULL DEFAULT 0,
            updated_at          TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
            paused_until        TIMESTAMPTZ
        );",
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}

/// Whether `url` names a PostgreSQL database.
pub fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

impl JobQueue {
    /// Connects to the queue in the database of `url` (a PostgreSQL store)
    /// and installs or upgrades graphile_worker's schema there.
    pub async fn connect(url: &str) -> Result<Self, WorkerError> {
        if !is_postgres(url) {
            return Err(WorkerError::NotPostgres {
                url: redact_url(url),
            });
        }
        let pool = PgPoolOptions::new()
            .max_connections(4)
            .connect(url)
            .await
            .map_err(|source| WorkerError::Database {
                url: redact_url(url),
                source,
            })?;
        let store = PgStore::connect(url).await?;
        let queue = Self {
            pool,
            store,
            url: redact_url(url),
        };
        queue
            .utils()
            .migrate()
            .await
            .map_err(|e| WorkerError::queue("installing graphile_worker's schema", e))?;
        create_tables(&queue.pool)
            .await
            .map_err(|source| queue.database(source))?;
        Ok(queue)
    }

    /// The queue in the database of `url` if graphile_worker's schema is
    /// installed there (`None` if no worker or submit ever ran on it);
    /// nothing is created.
    pub async fn open_existing(url: &str) -> Result<Option<Self>, WorkerError> {
        if !is_postgres(url) {
            return Ok(None);
        }
        let database = |source| WorkerError::Database {
            url: redact_url(url),
            source,
        };
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .connect(url)
            .await
            .map_err(database)?;
        let installed: Option<String> =
            sqlx::query_scalar("SELECT to_regclass('agon_workers')::text")
                .fetch_one(&pool)
                .await
                .map_err(database)?;
        let Some(_) = installed else {
            return Ok(None);
        };
        Ok(Some(Self {
            pool,
            store: PgStore::connect(url).await?,
            url: redact_url(url),
        }))
    }

    fn database(&self, source: sqlx::Error) -> WorkerError {
        WorkerError::Database {
            url: self.url.clone(),
            source,
        }
    }

    /// Records which process (`host:pid`) graphile_worker's `worker_id`
    /// is, for `agon list`.
    pub(crate) async fn register_worker(
        &self,
        worker_id: &str,
        process: &str,
    ) -> Result<(), WorkerError> {
        sqlx::query(
            "INSERT INTO agon_workers (worker_id, process) VALUES ($1, $2)
             ON CONFLICT (worker_id) DO UPDATE SET process = EXCLUDED.process",
        )
        .bind(worker_id)
        .bind(process)
        .execute(&self.pool)
        .await
        .map_err(|source| self.database(source))?;
        Ok(())
    }

    /// The queue's connection pool.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    pub(crate) fn utils(&self) -> WorkerUtils {
        WorkerUtils::new(self.pool.clone(), SCHEMA)
    }

    /// Queues `debate`'s next step: a worker picks it up, runs it, and
    /// queues the step after it. The debate's status becomes `queued` in
    /// the transaction that adds the job, so a status never claims a job
    /// that is not there. Queuing a debate that already waits in the queue
    /// replaces its job (one waiting job per debate).
    pub async fn submit(&self, debate: &DebateId) -> Result<(), WorkerError> {
        self.add(debate, false).await
    }

    /// Queues `debate` as [`JobQueue::submit`] does, lifting a pause it
    /// is in when a worker takes it up (`agon resume --detach`).
    pub async fn resume(&self, debate: &DebateId) -> Result<(), WorkerError> {
        self.add(debate, true).await
    }

    /// Queues `debate`'s next step from the job that ran its last one
    /// (`job`, locked by `worker`), only while that job is still this
    /// worker's: `false` (nothing queued) when the queue has given it back
    /// meanwhile, because the worker was taken for dead (no heartbeat for
    /// `dead_after`). That job then runs again and continues from the log;
    /// queuing beside it would merge the next job into it (the same job
    /// key, and it is no longer locked), and this worker's completing it
    /// would then delete the debate's only job. The ownership check, the
    /// status and the job commit in one transaction, which the queue's
    /// recovery (it locks the job's row) cannot interleave with.
    pub async fn queue_next(
        &self,
        debate: &DebateId,
        job: i64,
        worker: &str,
    ) -> Result<bool, WorkerError> {
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(|source| self.database(source))?;
        // The debate's job key first, as `add_job` takes it (so that a
        // concurrent submit of the same debate waits instead of locking
        // the two in the other order), then the job's row in the queue's
        // schema (`SCHEMA`), as the queue's recovery locks it.
        sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1))")
            .bind(crate::job::debate_queue(debate))
            .execute(&mut *tx)
            .await
            .map_err(|source| self.database(source))?;
        let holder: Option<Option<String>> = sqlx::query_scalar(
            "SELECT locked_by FROM graphile_worker._private_jobs WHERE id = $1 FOR UPDATE",
        )
        .bind(job)
        .fetch_optional(&mut *tx)
        .await
        .map_err(|source| self.database(source))?;
        if holder.flatten().as_deref() != Some(worker) {
            tx.rollback()
                .await
                .map_err(|source| self.database(source))?;
            return Ok(false);
        }
        self.add_in(&mut tx, debate, false).await?;
        tx.commit().await.map_err(|source| self.database(source))?;
        Ok(true)
    }

    async fn add(&self, debate: &DebateId, resume: bool) -> Result<(), WorkerError> {
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(|source| self.database(source))?;
        self.add_in(&mut tx, debate, resume).await?;
        tx.commit().await.map_err(|source| self.database(source))?;
        Ok(())
    }

    /// Sets `debate` queued and adds its job, in `tx`.
    async fn add_in(
        &self,
        tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
        debate: &DebateId,
        resume: bool,
    ) -> Result<(), WorkerError> {
        self.store
            .set_status_in(&mut *tx, debate, RunStatus::Queued)
            .await?;
        self.utils()
            .with_executor(&mut **tx)
            .add_job(
                AdvanceDebate {
                    debate: debate.to_string(),
                    resume,
                },
                spec(debate),
            )
            .await
            .map_err(|e| WorkerError::queue("queuing a debate", e))?;
        Ok(())
    }

    /// Every debate job in the queue: waiting, running, backing off, or
    /// failed for good.
    pub async fn jobs(&self) -> Result<Vec<QueuedJob>, WorkerError> {
        let rows: Vec<JobRow> = sqlx::query_as(
            "SELECT j.key, j.attempts, j.max_attempts, j.run_at, \
                    CASE WHEN w.process IS NULL THEN j.locked_by \
                         ELSE w.process || ' (' || j.locked_by || ')' END, \
                    j.last_error \
             FROM graphile_worker._private_jobs j \
             JOIN graphile_worker._private_tasks t ON t.id = j.task_id \
             LEFT JOIN agon_workers w ON w.worker_id = j.locked_by \
             WHERE t.identifier = $1 ORDER BY j.id",
        )
        .bind(TASK)
        .fetch_all(&self.pool)
        .await
        .map_err(|source| WorkerError::Database {
            url: self.url.clone(),
            source,
        })?;
        Ok(rows
            .into_iter()
            .filter_map(
                |(key, attempts, max_attempts, run_at, locked_by, last_error)| {
                    Some(QueuedJob {
                        debate: debate_of_key(key.as_deref()?)?,
                        attempts,
                        max_attempts,
                        run_at,
                        locked_by,
                        last_error,
                    })
                },
            )
            .collect())
    }
}

#[async_trait::async_trait]
impl agon_app::StepQueue for JobQueue {
    async fn submit(&self, debate: &DebateId) -> Result<(), String> {
        JobQueue::submit(self, debate)
            .await
            .map_err(|e| e.to_string())
    }
}
