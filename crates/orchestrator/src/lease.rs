//! The run lease: one runner per debate. Acquired before a run (taking over
//! a lease whose holder is a dead process on this host:
//! `agon_store::lease`), renewed on a timer while the run lasts, released
//! at its end.

use std::sync::Arc;
use std::time::Duration;

use agon_store::{EventStore, Lease};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use crate::shared::Shared;

/// How long a lease lasts without renewal (default; see
/// `Orchestrator::with_lease_ttl`).
pub const LEASE_TTL: Duration = Duration::from_secs(60);

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
