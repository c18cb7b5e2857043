//! Migrations embedded in the binary: each SQL file is read at compile
//! time (`include_str!`) and listed by name, and [`migrator`] builds sqlx's
//! [`Migrator`] from the list, as `sqlx::migrate!` would from the
//! directory: the same versions, descriptions and checksums (SHA-384 of
//! the file), so a database migrated by either accepts the other. Without
//! the macro, a crate that depends on the store (or on the memory, which
//! embeds its own migrations the same way) builds no sqlx proc-macro and
//! none of the host-side drivers it pulls in. A test checks every list
//! against its directory (no file forgotten, none renamed).

use std::borrow::Cow;

use sqlx::migrate::{Migration, MigrationType, Migrator};

/// One migration file: its name (`VERSION_DESCRIPTION.sql`) and its SQL.
pub type MigrationFile = (&'static str, &'static str);

/// The store's SQLite migrations, in order.
pub const SQLITE: &[MigrationFile] = &[
    (
        "0001_init.sql",
        include_str!("../migrations/sqlite/0001_init.sql"),
    ),
    (
        "0002_rubrics.sql",
        include_str!("../migrations/sqlite/0002_rubrics.sql"),
    ),
    (
        "0003_requests_forks.sql",
        include_str!("../migrations/sqlite/0003_requests_forks.sql"),
    ),
];

/// The store's PostgreSQL migrations, in order.
#[cfg(feature = "postgres")]
pub const POSTGRES: &[MigrationFile] = &[
    (
        "0001_init.sql",
        include_str!("../migrations/postgres/0001_init.sql"),
    ),
    (
        "0002_rubrics.sql",
        include_str!("../migrations/postgres/0002_rubrics.sql"),
    ),
    (
        "0003_requests_forks.sql",
        include_str!("../migrations/postgres/0003_requests_forks.sql"),
    ),
];

/// The migrator of `files`, named as sqlx names a directory's files: the
/// version is the number before the first `_`, the description the rest
/// without `.sql`, `_` read as a space; a file that starts with
/// `-- no-transaction` runs outside a transaction.
///
/// # Panics
/// If a name is not `NUMBER_DESCRIPTION.sql` (the lists are constants,
/// checked by the tests).
pub fn migrator(files: &'static [MigrationFile]) -> Migrator {
    let migrations = files
        .iter()
        .map(|(name, sql)| {
            let (version, rest) = name
                .split_once('_')
                .and_then(|(v, rest)| Some((v.parse::<i64>().ok()?, rest)))
                .unwrap_or_else(|| panic!("migration {name} is not named VERSION_NAME.sql"));
            let description = rest
                .strip_suffix(".sql")
                .unwrap_or_else(|| panic!("migration {name} does not end in .sql"))
                .replace('_', " ");
            Migration::new(
                version,
                Cow::Owned(description),
                MigrationType::Simple,
                sqlx::SqlStr::from_static(sql),
                sql.starts_with("-- no-transaction"),
            )
        })
        .collect();
    Migrator::with_migrations(migrations)
}

/// Whether `files` are the `.sql` files of `dir`, name by name and byte by
/// byte, and give the migrations sqlx reads from `dir` (versions,
/// descriptions, checksums, transaction choice): for the tests of a crate
/// that embeds its migrations with [`migrator`]. The error names the first
/// difference.
pub async fn check_against_directory(
    dir: &std::path::Path,
    files: &'static [MigrationFile],
) -> Result<(), String> {
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".sql"))
        .collect();
    on_disk.sort();
    let listed: Vec<&str> = files.iter().map(|(name, _)| *name).collect();
    if on_disk != listed {
        return Err(format!(
            "{} holds {on_disk:?}, the list {listed:?}",
            dir.display()
        ));
    }
    for (name, sql) in files {
        let stored = std::fs::read_to_string(dir.join(name))
            .map_err(|e| format!("{}: {e}", dir.join(name).display()))?;
        if stored != *sql {
            return Err(format!("{name} differs from the embedded copy"));
        }
    }
    let from_disk = Migrator::new(dir)
        .await
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let embedded = migrator(files);
    let pairs = embedded.iter().zip(from_disk.iter());
    for (ours, theirs) in pairs {
        let same = ours.version == theirs.version
            && ours.description == theirs.description
            && ours.migration_type == theirs.migration_type
            && ours.checksum == theirs.checksum
            && ours.no_tx == theirs.no_tx;
        if !same {
            return Err(format!(
                "migration {} ({}) differs from sqlx's reading of {}",
                ours.version,
                ours.description,
                dir.display()
            ));
        }
    }
    Ok(())
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
        let err = checked.unwrap_err();
        assert!(err.contains("0003_requests_forks.sql"), "{err}");
    }
}
