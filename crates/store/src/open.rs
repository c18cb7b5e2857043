//! Opening a store from a URL.

use std::sync::Arc;

use crate::error::{StoreError, redact_url};
#[cfg(feature = "postgres")]
use crate::postgres::PgStore;
use crate::sqlite::SqliteStore;
use crate::store::EventStore;

/// Opens the store a URL names: `sqlite://PATH` / `sqlite:PATH` (created if
/// missing) or `postgres://…` / `postgresql://…`. Migrations run on open.
pub async fn open(url: &str) -> Result<Arc<dyn EventStore>, StoreError> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteStore::open(url).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        #[cfg(feature = "postgres")]
        return Ok(Arc::new(PgStore::connect(url).await?));
        #[cfg(not(feature = "postgres"))]
        return Err(StoreError::NotBuilt {
            url: redact_url(url),
            feature: "postgres",
        });
    } else {
        Err(StoreError::UnsupportedUrl {
            url: redact_url(url),
        })
    }
}
