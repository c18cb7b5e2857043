//! Opening the memory index a store URL names.

use std::sync::Arc;

use crate::error::MemoryError;
use crate::index::MemoryIndex;
#[cfg(feature = "postgres")]
use crate::postgres::PgMemory;
use crate::sqlite::SqliteMemory;

/// Whether this build of agon-memory has PostgreSQL + pgvector (its
/// `postgres` feature, on by default). Without it a `postgres://` URL is
/// [`MemoryError::NotBuilt`].
pub const WITH_POSTGRES: bool = cfg!(feature = "postgres");

/// Opens the memory tables next to the debate store at `url`:
/// `sqlite:PATH` → the embedded index (exact search in process);
/// `postgres://…` → pgvector (HNSW). Migrations run on open.
pub async fn open(url: &str) -> Result<Arc<dyn MemoryIndex>, MemoryError> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteMemory::open(url).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        #[cfg(feature = "postgres")]
        return Ok(Arc::new(PgMemory::connect(url).await?));
        #[cfg(not(feature = "postgres"))]
        return Err(MemoryError::NotBuilt {
            url: agon_store::redact_url(url),
            feature: "postgres",
        });
    } else {
        Err(MemoryError::UnsupportedUrl {
            url: agon_store::redact_url(url),
        })
    }
}
