//! The run lease: one runner per debate. Acquired before a run (taking over
//! a lease whose holder is a dead process on this host), renewed on a timer
//! while the run lasts, released at its end.

use std::sync::Arc;
use std::time::Duration;

use agon_core::DebateId;
use agon_store::{EventStore, Lease, StoreError};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use crate::error::OrchestratorError;
use crate::shared::Shared;

/// How long a lease lasts without renewal (default; see
/// `Orchestrator::with_lease_ttl`).
pub const LEASE_TTL: Duration = Duration::from_secs(60);

/// This host's name.
pub(crate) fn hostname() -> String {
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
pub(crate) async fn acquire(
    store: &dyn EventStore,
    id: &DebateId,
    holder: &str,
    ttl: Duration,
) -> Result<Lease, OrchestratorError> {
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
        other => Ok(other?),
    }
}

/// Frees the lease of `id` whoever holds it, so the next run of this
/// orchestrator takes it: the holder's next renewal fails and its run
/// stops. Returns the lease that was taken over, if another holder had a
/// live one.
pub(crate) async fn take_over(
    store: &dyn EventStore,
    id: &DebateId,
    holder: &str,
    ttl: Duration,
) -> Result<Option<Lease>, OrchestratorError> {
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
        Err(e) => Err(e.into()),
    }
}

/// A held lease, renewed every third of its TTL by a background task.
pub(crate) struct HeldLease {
    store: Arc<dyn EventStore>,
    lease: Arc<Mutex<Lease>>,
    keeper: JoinHandle<()>,
}

impl HeldLease {
    /// Starts renewing `lease`; a failed renewal (the lease was lost, or the
    /// store is down) is reported through `shared`, which stops the run.
    pub(crate) fn keep(
        store: Arc<dyn EventStore>,
        lease: Lease,
        ttl: Duration,
        shared: Arc<Shared>,
    ) -> Self {
        let lease = Arc::new(Mutex::new(lease));
        let keeper = tokio::spawn({
            let store = Arc::clone(&store);
            let lease = Arc::clone(&lease);
            async move {
                let mut tick = tokio::time::interval(ttl / 3);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    let mut held = lease.lock().await;
                    match store.renew_lease(&held, ttl).await {
                        Ok(renewed) => *held = renewed,
                        Err(e) => {
                            tracing::warn!(debate = %held.debate, error = %e, "lease renewal failed");
                            shared.failed(format!("renewing the run lease: {e}"));
                            return;
                        }
                    }
                }
            }
        });
        Self {
            store,
            lease,
            keeper,
        }
    }

    /// Stops renewing and releases the lease.
    pub(crate) async fn release(self) {
        self.keeper.abort();
        let lease = self.lease.lock().await;
        self.store.release_lease(&lease).await.ok();
    }
}
