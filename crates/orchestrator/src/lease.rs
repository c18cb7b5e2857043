//! The run lease: one runner per debate. Acquired before a run (taking over
//! a lease whose holder is a dead process on this host:
//! `agon_store::lease`), renewed on a timer from the moment it is held
//! (the run's setup — the log, MCP servers, the memory writer — can take
//! longer than a short lease lasts), released at its end.

use std::sync::{Arc, Mutex as StdMutex, OnceLock};
use std::time::Duration;

use agon_store::{EventStore, Lease};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use crate::shared::Shared;

/// How long a lease lasts without renewal (default; see
/// `Orchestrator::with_lease_ttl`).
pub const LEASE_TTL: Duration = Duration::from_secs(60);

/// A held lease, renewed every third of its TTL by a background task that
/// starts when the lease is taken. Dropping it stops the renewals (the
/// lease then lapses at its TTL); [`HeldLease::release`] frees it at once.
pub(crate) struct HeldLease {
    store: Arc<dyn EventStore>,
    lease: Arc<Mutex<Lease>>,
    lost: Arc<LostLease>,
    keeper: JoinHandle<()>,
}

/// Where a failed renewal goes: kept until the run's [`Shared`] exists,
/// then reported to it (which stops the run).
#[derive(Default)]
struct LostLease {
    reason: StdMutex<Option<String>>,
    run: OnceLock<Arc<Shared>>,
}

impl LostLease {
    fn lost(&self, reason: String) {
        if let Ok(mut held) = self.reason.lock() {
            held.get_or_insert(reason.clone());
        }
        if let Some(run) = self.run.get() {
            run.failed(reason);
        }
    }

    fn report_to(&self, run: Arc<Shared>) {
        let run = self.run.get_or_init(|| run);
        let reason = self.reason.lock().ok().and_then(|r| r.clone());
        if let Some(reason) = reason {
            run.failed(reason);
        }
    }
}

impl HeldLease {
    /// Starts renewing `lease` at once. A failed renewal (the lease was
    /// lost, or the store is down) ends the renewals and is reported to the
    /// run given to [`HeldLease::report_to`], whenever that comes.
    pub(crate) fn keep(store: Arc<dyn EventStore>, lease: Lease, ttl: Duration) -> Self {
        let lease = Arc::new(Mutex::new(lease));
        let lost = Arc::new(LostLease::default());
        let keeper = tokio::spawn({
            let store = Arc::clone(&store);
            let lease = Arc::clone(&lease);
            let lost = Arc::clone(&lost);
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
                            lost.lost(format!("renewing the run lease: {e}"));
                            return;
                        }
                    }
                }
            }
        });
        Self {
            store,
            lease,
            lost,
            keeper,
        }
    }

    /// Reports a lost lease (now or later) to the run, which stops it.
    pub(crate) fn report_to(&self, run: Arc<Shared>) {
        self.lost.report_to(run);
    }

    /// Stops renewing and releases the lease.
    pub(crate) async fn release(self) {
        self.keeper.abort();
        let lease = self.lease.lock().await;
        self.store.release_lease(&lease).await.ok();
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        self.keeper.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agon_core::DebateId;
    use agon_store::NewDebate;

    /// The renewals start with the lease, before any run is set up: a
    /// lease of 300 ms held for a second is never free to another holder,
    /// and is once released.
    #[tokio::test]
    async fn a_lease_is_renewed_from_the_moment_it_is_held() {
        let store = agon_store::open("sqlite::memory:").await.unwrap();
        let id = DebateId::new("d-lease");
        store
            .create_debate(&NewDebate {
                id: id.clone(),
                topic: "t".into(),
                config: serde_json::json!({}),
            })
            .await
            .unwrap();
        let ttl = Duration::from_millis(300);
        let lease = store.acquire_lease(&id, "runner:1", ttl).await.unwrap();
        let held = HeldLease::keep(Arc::clone(&store), lease, ttl);
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert!(
                store.acquire_lease(&id, "elsewhere:1", ttl).await.is_err(),
                "the lease lapsed while held"
            );
        }
        held.release().await;
        store
            .acquire_lease(&id, "elsewhere:1", ttl)
            .await
            .expect("free once released");
    }
}
