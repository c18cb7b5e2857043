//! The memory's migrations, embedded in the binary as the store embeds its
//! own ([`agon_store::migrations`]): each SQL file read at compile time and
//! listed with its version and description (a test checks every list
//! against its directory).

use agon_store::migrations::MigrationFile;

/// The memory's SQLite migrations, in order.
pub(crate) const SQLITE: &[MigrationFile] = &[
    MigrationFile {
        version: 1,
        description: "memory",
        sql: include_str!("../migrations/sqlite/0001_memory.sql"),
    },
    MigrationFile {
        version: 2,
        description: "no debate copy",
        sql: include_str!("../migrations/sqlite/0002_no_debate_copy.sql"),
    },
    MigrationFile {
        version: 3,
        description: "validity",
        sql: include_str!("../migrations/sqlite/0003_validity.sql"),
    },
];

/// The memory's PostgreSQL migrations (pgvector), in order.
#[cfg(feature = "postgres")]
pub(crate) const POSTGRES: &[MigrationFile] = &[
    MigrationFile {
        version: 1,
        description: "memory",
        sql: include_str!("../migrations/postgres/0001_memory.sql"),
    },
    MigrationFile {
        version: 2,
        description: "no debate copy",
        sql: include_str!("../migrations/postgres/0002_no_debate_copy.sql"),
    },
    MigrationFile {
        version: 3,
        description: "validity",
        sql: include_str!("../migrations/postgres/0003_validity.sql"),
    },
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    use agon_store::migrations::check_against_directory;

    #[tokio::test]
    async fn the_embedded_migrations_are_the_directories() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        assert_eq!(
            check_against_directory(&root.join("sqlite"), super::SQLITE).await,
            Ok(())
        );
        #[cfg(feature = "postgres")]
        assert_eq!(
            check_against_directory(&root.join("postgres"), super::POSTGRES).await,
            Ok(())
        );
    }
}
