//! What a run's tasks share: the debate log (blackboard + store), the live
//! update channel, the memory writer's channel, and the first failure of a
//! background task.

use std::sync::{Arc, Mutex as StdMutex};

use agon_core::{Blackboard, DebateEvent, DebateId};
use agon_store::{DebateLog, EventStore};
use tokio::sync::{RwLock, broadcast, mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::error::OrchestratorError;
use crate::update::DebateUpdate;
use agon_memory::MemoryMsg;

/// The state every task of one run shares.
pub(crate) struct Shared {
    pub(crate) debate: DebateId,
    /// Read by the run's tasks side by side (the interpreter plans while
    /// the background pipeline builds a job's prompt); an append takes it
    /// alone.
    log: RwLock<DebateLog>,
    /// The log's store, for what needs no blackboard (posted requests).
    store: Arc<dyn EventStore>,
    updates: broadcast::Sender<DebateUpdate>,
    /// The log's sequence number after each append (and a nudge on failure).
    changed: watch::Sender<u64>,
    failure: StdMutex<Option<String>>,
    /// Persisted events go to the memory writer, in order.
    memory_tx: StdMutex<Option<mpsc::UnboundedSender<MemoryMsg>>>,
}

impl Shared {
    pub(crate) fn new(
        debate: DebateId,
        log: DebateLog,
        updates: broadcast::Sender<DebateUpdate>,
        memory_tx: Option<mpsc::UnboundedSender<MemoryMsg>>,
    ) -> Self {
        let (changed, _) = watch::channel(log.seq());
        Self {
            debate,
            store: Arc::clone(log.store()),
            log: RwLock::new(log),
            updates,
            changed,
            failure: StdMutex::new(None),
            memory_tx: StdMutex::new(memory_tx),
        }
    }

    /// Validates, persists and publishes `events` (one atomic batch).
    pub(crate) async fn append(&self, events: Vec<DebateEvent>) -> Result<(), OrchestratorError> {
        self.append_with(|_| (events, ())).await
    }

    /// Builds events from the current blackboard and appends them, under one
    /// lock (nothing can be appended in between).
    pub(crate) async fn append_with<T>(
        &self,
        build: impl FnOnce(&Blackboard) -> (Vec<DebateEvent>, T),
    ) -> Result<T, OrchestratorError> {
        self.append_taking(&[], build).await
    }

    /// [`append_with`](Self::append_with), marking the posted `requests`
    /// the events came from taken in the same transaction (only marking
    /// them when `build` makes no event).
    pub(crate) async fn append_taking<T>(
        &self,
        requests: &[u64],
        build: impl FnOnce(&Blackboard) -> (Vec<DebateEvent>, T),
    ) -> Result<T, OrchestratorError> {
        let mut log = self.log.write().await;
        let (events, out) = build(log.blackboard());
        if events.is_empty() {
            if !requests.is_empty() {
                log.store().take_requests(&self.debate, requests).await?;
            }
            return Ok(out);
        }
        let before = log.seq();
        let span = tracing::debug_span!("append", debate = %self.debate, events = events.len());
        let seq = log
            .append_taking(&events, requests)
            .instrument(span)
            .await?;
        // Published under the log lock, so subscribers see sequence order.
        self.publish(before, events);
        drop(log);
        self.changed.send_replace(seq);
        Ok(out)
    }

    /// Marks posted `requests` taken that become no event.
    pub(crate) async fn take(&self, requests: &[u64]) -> Result<(), OrchestratorError> {
        self.append_taking(requests, |_| (Vec::new(), ())).await
    }

    /// The requests posted to the store for this run and not yet taken.
    pub(crate) async fn pending_requests(
        &self,
    ) -> Result<Vec<agon_store::PostedRequest>, agon_store::StoreError> {
        self.store.pending_requests(&self.debate).await
    }

    /// Sends persisted events (the first has sequence `before + 1`) to the
    /// memory writer and the subscribers. Call it under the log lock.
    fn publish(&self, before: u64, events: Vec<DebateEvent>) {
        if let Ok(tx) = self.memory_tx.lock()
            && let Some(tx) = tx.as_ref()
        {
            for event in &events {
                let _ = tx.send(MemoryMsg::Event(Box::new(event.clone())));
            }
        }
        for (i, event) in events.into_iter().enumerate() {
            let _ = self.updates.send(DebateUpdate::Event {
                debate: self.debate.clone(),
                seq: before + 1 + i as u64,
                event: Box::new(event),
            });
        }
    }

    /// Reads the blackboard.
    pub(crate) async fn read<R>(&self, f: impl FnOnce(&Blackboard) -> R) -> R {
        let log = self.log.read().await;
        f(log.blackboard())
    }

    /// A receiver that wakes after every append.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Sends a live update.
    pub(crate) fn send(&self, update: DebateUpdate) {
        let _ = self.updates.send(update);
    }

    /// Records the first failure of a background task and wakes waiters.
    pub(crate) fn failed(&self, reason: String) {
        if let Ok(mut f) = self.failure.lock() {
            f.get_or_insert(reason);
        }
        self.changed.send_modify(|_| {});
    }

    /// The first background failure, as an error.
    pub(crate) fn check(&self) -> Result<(), OrchestratorError> {
        match self.failure.lock().ok().and_then(|f| f.clone()) {
            Some(reason) => Err(OrchestratorError::Background {
                debate: self.debate.to_string(),
                reason,
            }),
            None => Ok(()),
        }
    }

    /// Asks the memory writer to store everything harvested so far and
    /// waits for it (no-op when memory is off).
    pub(crate) async fn flush_memory(&self) {
        let tx = self.memory_tx.lock().ok().and_then(|t| t.clone());
        if let Some(tx) = tx {
            let (done, wait) = oneshot::channel();
            if tx.send(MemoryMsg::Flush(done)).is_ok() {
                let _ = wait.await;
            }
        }
    }

    /// Ends the memory writer: after a last flush when `finish`, at once
    /// otherwise.
    pub(crate) async fn close_memory(&self, writer: Option<JoinHandle<()>>, finish: bool) {
        let Some(writer) = writer else { return };
        if finish {
            self.flush_memory().await;
        }
        if let Ok(mut tx) = self.memory_tx.lock() {
            tx.take();
        }
        if finish {
            let _ = writer.await;
        } else {
            writer.abort();
        }
    }
}
