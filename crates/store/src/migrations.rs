//! Migrations embedded in the binary: each SQL file is read at compile
//! time (`include_str!`) and listed with the version and description sqlx
//! reads from its name, and [`migrator`] builds sqlx's [`Migrator`] from
//! the list, as `sqlx::migrate!` would from the directory: the same
//! versions, descriptions and checksums (SHA-384 of the file), so a
//! database migrated by either accepts the other. Without the macro, a
//! crate that depends on the store (or on the memory, which embeds its own
//! migrations the same way) builds no sqlx proc-macro and none of the
//! host-side drivers it pulls in. A test checks every list against its
//! directory ([`check_against_directory`]: no file forgotten, renamed or
//! changed).

use std::borrow::Cow;

use sqlx::migrate::{Migration, MigrationType, Migrator};

/// One embedded migration: the version and description sqlx reads from
/// its file's name (`VERSION_DESCRIPTION.sql`, `_` read as a space), and
/// its SQL.
#[derive(Debug, Clone, Copy)]
pub struct MigrationFile {
    /// The number before the name's first `_`.
    pub version: i64,
    /// The rest of the name, without `.sql`, `_` read as a space.
    pub description: &'static str,
    /// The file's contents.
    pub sql: &'static str,
}

/// The store's SQLite migrations, in order.
pub const SQLITE: &[MigrationFile] = &[
    MigrationFile {
        version: 1,
        description: "init",
        sql: include_str!("../migrations/sqlite/0001_init.sql"),
    },
    MigrationFile {
        version: 2,
        description: "rubrics",
        sql: include_str!("../migrations/sqlite/0002_rubrics.sql"),
    },
    MigrationFile {
        version: 3,
        description: "requests forks",
        sql: include_str!("../migrations/sqlite/0003_requests_forks.sql"),
    },
];

/// The store's PostgreSQL migrations, in order.
#[cfg(feature = "postgres")]
pub const POSTGRES: &[MigrationFile] = &[
    MigrationFile {
        version: 1,
        description: "init",
        sql: include_str!("../migrations/postgres/0001_init.sql"),
    },
    MigrationFile {
        version: 2,
        description: "rubrics",
        sql: include_str!("../migrations/postgres/0002_rubrics.sql"),
    },
    MigrationFile {
        version: 3,
        description: "requests forks",
        sql: include_str!("../migrations/postgres/0003_requests_forks.sql"),
    },
];

/// The migrator of `files`; a file that starts with `-- no-transaction`
/// runs outside a transaction, as sqlx reads it.
pub fn migrator(files: &'static [MigrationFile]) -> Migrator {
    let migrations = files
        .iter()
        .map(|file| {
            Migration::new(
                file.version,
                Cow::Borrowed(file.description),
                MigrationType::Simple,
                sqlx::SqlStr::from_static(file.sql),
                file.sql.starts_with("-- no-transaction"),
            )
        })
        .collect();
    Migrator::with_migrations(migrations)
}

/// Whether `files` are the migrations sqlx reads from `dir`, one for one:
/// the same versions, descriptions, checksums (so the same SQL, byte for
/// byte) and transaction choice. For the tests of a crate that embeds its
/// migrations with [`migrator`]; the error names the first difference.
pub async fn check_against_directory(
    dir: &std::path::Path,
    files: &'static [MigrationFile],
) -> Result<(), String> {
    let from_disk = Migrator::new(dir)
        .await
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let embedded = migrator(files);
    let mut theirs = from_disk.iter();
    for ours in embedded.iter() {
        let Some(theirs) = theirs.next() else {
            return Err(format!(
                "migration {} ({}) is listed but not in {}",
                ours.version,
                ours.description,
                dir.display()
            ));
        };
        let same = ours.version == theirs.version
            && ours.description == theirs.description
            && ours.migration_type == theirs.migration_type
            && ours.checksum == theirs.checksum
            && ours.no_tx == theirs.no_tx;
        if !same {
            return Err(format!(
                "migration {} ({}) differs from {} ({}) in {}",
                ours.version,
                ours.description,
                theirs.version,
                theirs.description,
                dir.display()
            ));
        }
    }
    match theirs.next() {
        Some(missing) => Err(format!(
            "migration {} ({}) of {} is not in the list",
            missing.version,
            missing.description,
            dir.display()
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[tokio::test]
    async fn the_embedded_migrations_are_the_directories() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let checked = check_against_directory(&root.join("sqlite"), SQLITE).await;
        assert_eq!(checked, Ok(()));
        #[cfg(feature = "postgres")]
        assert_eq!(
            check_against_directory(&root.join("postgres"), POSTGRES).await,
            Ok(())
        );
    }

    #[tokio::test]
    async fn a_list_that_forgets_a_file_names_the_difference() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let checked = check_against_directory(&root.join("sqlite"), &SQLITE[..2]).await;
        assert_eq!(
            checked,
            Err(format!(
                "migration 3 (requests forks) of {} is not in the list",
                root.join("sqlite").display()
            ))
        );
    }

    #[tokio::test]
    async fn a_changed_file_names_its_migration() {
        static CHANGED: [MigrationFile; 1] = [MigrationFile {
            version: 1,
            description: "init",
            sql: "CREATE TABLE debates (id TEXT);",
        }];
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
        let checked = check_against_directory(&dir, &CHANGED).await;
        assert_eq!(
            checked,
            Err(format!(
                "migration 1 (init) differs from 1 (init) in {}",
                dir.display()
            ))
        );
    }
}
