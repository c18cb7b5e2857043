//! Run leases as processes use them: who this process is, whether a
//! holder is a dead process on this host (its lease holds nothing), and
//! taking a lease (over a dead holder's) or taking it over from anyone.

use std::time::Duration;

use agon_core::DebateId;

use crate::{EventStore, Lease, StoreError};

/// This host's name.
fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// This process as a lease holder and a worker names it: `host:pid`.
pub fn this_process() -> String {
    format!("{}:{}", hostname(), std::process::id())
}

/// Whether a lease holder `host:pid` is a dead process on this host (its
/// lease, unexpired, holds nothing: the next run takes it over).
pub fn holder_is_dead(holder: &str) -> bool {
    let Some((host, pid)) = holder.rsplit_once(':') else {
        return false;
    };
    host == hostname()
        && pid.parse::<u32>().is_ok()
        && std::path::Path::new("/proc/self").exists()
        && !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Acquires the lease of `id` for `holder`, for `ttl`.
pub async fn acquire(
    store: &dyn EventStore,
    id: &DebateId,
    holder: &str,
    ttl: Duration,
) -> Result<Lease, StoreError> {
    match store.acquire_lease(id, holder, ttl).await {
        Err(StoreError::Leased {
            holder: dead,
            since,
            until,
            ..
        }) if holder_is_dead(&dead) => {
            store
                .release_lease(&Lease {
                    debate: id.clone(),
                    holder: dead,
                    acquired_at: since,
                    expires_at: until,
                })
                .await?;
            Ok(store.acquire_lease(id, holder, ttl).await?)
        }
        other => other,
    }
}

/// Frees the lease of `id` whoever holds it, so the next run of this
/// orchestrator takes it: the holder's next renewal fails and its run
/// stops. Returns the lease that was taken over, if another holder had a
/// live one.
pub async fn take_over(
    store: &dyn EventStore,
    id: &DebateId,
    holder: &str,
    ttl: Duration,
) -> Result<Option<Lease>, StoreError> {
    match store.acquire_lease(id, holder, ttl).await {
        Ok(ours) => {
            store.release_lease(&ours).await?;
            Ok(None)
        }
        Err(StoreError::Leased {
            holder: other,
            since,
            until,
            ..
        }) => {
            let theirs = Lease {
                debate: id.clone(),
                holder: other,
                acquired_at: since,
                expires_at: until,
            };
            store.release_lease(&theirs).await?;
            Ok(Some(theirs))
        }
        Err(e) => Err(e),
    }
}
