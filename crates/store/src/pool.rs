//! One connection pool per database, shared by everything in the process
//! that opens it: the event store and the vector memory (`agon-memory`)
//! get the same pool for the same URL, set up once (connection settings,
//! the store's migrations). Two pools on one SQLite file would otherwise
//! contend for its lock with different busy timeouts.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::LazyLock;
use std::time::Duration;

#[cfg(feature = "postgres")]
use sqlx::Postgres;
#[cfg(feature = "postgres")]
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Pool, Sqlite};
use tokio::sync::Mutex;

use crate::error::{StoreError, redact_url};

/// How long a SQLite writer waits for another writer's lock before
/// [`StoreError::Locked`].
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Connecting to PostgreSQL gives up after this long.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone)]
enum SharedPool {
    Sqlite(Pool<Sqlite>),
    #[cfg(feature = "postgres")]
    Postgres(Pool<Postgres>),
}

/// Open pools by key (the URL, and for SQLite the busy timeout). Held under
/// an async lock while a pool is being created, so two openers of one URL
/// never race to create two pools.
static POOLS: LazyLock<Mutex<HashMap<String, SharedPool>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// `sqlite://PATH` for `sqlite:PATH`, `sqlite://PATH` or a plain path.
pub(crate) fn sqlite_url(url: &str) -> String {
    if url.starts_with("sqlite:") {
        url.to_owned()
    } else {
        format!("sqlite://{url}")
    }
}

/// The pool of the SQLite database at `url` (created if missing: WAL
/// journal, `synchronous = NORMAL`, foreign keys, `busy_timeout`), with the
/// store's tables migrated. Every caller asking for the same URL and busy
/// timeout gets the same pool.
pub async fn sqlite_pool(url: &str, busy_timeout: Duration) -> Result<Pool<Sqlite>, StoreError> {
    let normalized = sqlite_url(url);
    let key = format!("{normalized}#busy={}ms", busy_timeout.as_millis());
    let mut pools = POOLS.lock().await;
    if let Some(SharedPool::Sqlite(pool)) = pools.get(&key)
        && !pool.is_closed()
    {
        return Ok(pool.clone());
    }
    let shown = redact_url(url);
    let options = SqliteConnectOptions::from_str(&normalized)
        .map_err(unavailable(&shown))?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(busy_timeout)
        .foreign_keys(true);
    // The first connection (which switches a new file to WAL, a change
    // that can fail at once with "database is locked" while another process
    // uses the file) and the migrations run under the cross-process lock.
    let lock = sqlite_migration_lock(&normalized).await?;
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await
        .map_err(unavailable(&shown))?;
    crate::migrations::migrator(crate::migrations::SQLITE)
        .run(&pool)
        .await
        .map_err(migration_failed(&shown))?;
    drop(lock);
    pools.insert(key, SharedPool::Sqlite(pool.clone()));
    Ok(pool)
}

/// The pool of the PostgreSQL database at `url`, with the store's tables
/// migrated; an unreachable server fails within [`CONNECT_TIMEOUT`],
/// naming the URL (password redacted). Every caller asking for the same
/// URL gets the same pool.
#[cfg(feature = "postgres")]
pub async fn postgres_pool(url: &str) -> Result<Pool<Postgres>, StoreError> {
    let mut pools = POOLS.lock().await;
    if let Some(SharedPool::Postgres(pool)) = pools.get(url)
        && !pool.is_closed()
    {
        return Ok(pool.clone());
    }
    let shown = redact_url(url);
    let options = PgConnectOptions::from_str(url).map_err(unavailable(&shown))?;
    // The first connection is made by hand (see `connect_once`) and runs
    // the migrations; the pool makes its own afterwards.
    let mut first = connect_once(&options, &shown).await?;
    crate::migrations::migrator(crate::migrations::POSTGRES)
        .run(&mut first)
        .await
        .map_err(migration_failed(&shown))?;
    let _ = sqlx::Connection::close(first).await;
    let connect = PgPoolOptions::new()
        .max_connections(8)
        .acquire_timeout(CONNECT_TIMEOUT)
        .connect_with(options);
    let pool = tokio::time::timeout(CONNECT_TIMEOUT, connect)
        .await
        .map_err(|_| StoreError::ConnectTimeout {
            url: shown.clone(),
            after: CONNECT_TIMEOUT,
        })?
        .map_err(unavailable(&shown))?;
    pools.insert(url.to_owned(), SharedPool::Postgres(pool.clone()));
    Ok(pool)
}

/// Connects once, outside the pool, so a server that refuses the
/// connection (or rejects the login, or names an unknown database) fails at
/// once with the driver's reason, instead of the pool retrying until its
/// timeout and reporting only that it timed out.
#[cfg(feature = "postgres")]
async fn connect_once(
    options: &PgConnectOptions,
    shown: &str,
) -> Result<sqlx::PgConnection, StoreError> {
    use sqlx::ConnectOptions;
    let connection = tokio::time::timeout(CONNECT_TIMEOUT, options.connect())
        .await
        .map_err(|_| StoreError::ConnectTimeout {
            url: shown.to_owned(),
            after: CONNECT_TIMEOUT,
        })?;
    connection.map_err(|e| match e {
        sqlx::Error::Io(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            StoreError::Unavailable {
                url: shown.to_owned(),
                message: format!(
                    "the connection was refused ({e}): is a PostgreSQL server listening there? \
                     (`cargo xtask db start` starts one for development)"
                ),
            }
        }
        e => unavailable(shown)(e),
    })
}

/// Holds the exclusive lock that serializes migrations of one SQLite file
/// across processes; released when dropped.
#[derive(Debug)]
pub struct MigrationLock {
    _file: Option<std::fs::File>,
}

/// Takes the lock that serializes opening (the first connection, which
/// sets WAL mode) and migrating the SQLite database at `url` across
/// processes: an exclusive advisory lock (`flock`) on the
/// file `PATH-migrate.lock` beside it, waited for as long as it takes.
/// SQLite's own locks cannot do this (sqlx applies each migration in a
/// transaction of its own, so two processes opening a new file at once
/// would both create the tables). The database file itself is never
/// locked this way: closing a descriptor of it would drop SQLite's POSIX
/// locks held by this process. In-memory databases need no lock.
pub async fn sqlite_migration_lock(url: &str) -> Result<MigrationLock, StoreError> {
    let normalized = sqlite_url(url);
    let shown = redact_url(url);
    let options = SqliteConnectOptions::from_str(&normalized).map_err(unavailable(&shown))?;
    let filename = options.get_filename().to_path_buf();
    let name = filename.as_os_str().to_string_lossy();
    // sqlx names `sqlite::memory:` `file:sqlx-in-memory-N` (a shared-cache
    // database in memory): no file, so no lock file beside it either.
    if name.is_empty()
        || name == ":memory:"
        || name.starts_with("file:sqlx-in-memory-")
        || normalized.contains("mode=memory")
    {
        return Ok(MigrationLock { _file: None });
    }
    let mut lock_name = filename.as_os_str().to_owned();
    lock_name.push("-migrate.lock");
    let path = std::path::PathBuf::from(lock_name);
    let shown_path = path.display().to_string();
    let locked = tokio::task::spawn_blocking(move || {
        // The file cannot be made where the database would be: the
        // database cannot be opened either.
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| StoreError::Unavailable {
                url: shown.clone(),
                message: format!("cannot create {shown_path}: {e}"),
            })?;
        file.lock().map_err(|e| StoreError::Migration {
            url: shown.clone(),
            message: format!("cannot lock {shown_path}: {e}"),
        })?;
        Ok::<_, StoreError>(file)
    })
    .await
    .map_err(|e| StoreError::Migration {
        url: redact_url(url),
        message: format!("waiting for the migration lock: {e}"),
    })??;
    Ok(MigrationLock {
        _file: Some(locked),
    })
}

/// The error of a database that cannot be opened, naming `shown`.
fn unavailable(shown: &str) -> impl Fn(sqlx::Error) -> StoreError + '_ {
    move |e| StoreError::Unavailable {
        url: shown.to_owned(),
        message: e.to_string(),
    }
}

/// The error of the store's migrations failing on `shown`.
fn migration_failed(shown: &str) -> impl Fn(sqlx::migrate::MigrateError) -> StoreError + '_ {
    move |e| StoreError::Migration {
        url: shown.to_owned(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    /// An in-memory database takes no lock file (none is left in the
    /// working directory).
    #[tokio::test]
    async fn in_memory_databases_take_no_lock_file() {
        for url in ["sqlite::memory:", "sqlite:file:x?mode=memory&cache=shared"] {
            let lock = super::sqlite_migration_lock(url).await.unwrap();
            assert!(lock._file.is_none(), "{url}");
        }
    }
}
