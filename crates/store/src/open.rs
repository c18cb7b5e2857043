//! Opening a store from a URL.

use std::sync::Arc;

use crate::error::{StoreError, redact_url};
use crate::postgres::PgStore;
use crate::sqlite::SqliteStore;
use crate::store::EventStore;

/// Opens the store a URL names: `sqlite://PATH` / `sqlite:PATH` (created if
/// missing) or `postgres://…` / `postgresql://…`. Migrations run on open.
pub async fn open(url: &str) -> Result<Arc<dyn EventStore>, StoreError> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteStore::open(url).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(PgStore::connect(url).await?))
    } else {
        Err(StoreError::UnsupportedUrl {
            url: redact_url(url),
        })
    }
}
