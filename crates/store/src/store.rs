//! The `EventStore` trait: the seam every backend implements.

use std::time::Duration;

use agon_core::{Blackboard, DebateEvent, DebateId, PersonaId};
use async_trait::async_trait;
use serde_json::Value;

use crate::error::StoreError;
use crate::types::{
    DebateRecord, DocRecord, Lease, NewDebate, PersonaRecord, PostedRequest, RunStatus, StoredEvent,
};

/// A function computing a persona record's new document from the current one.
pub type RecordUpdate<'a> = &'a (dyn Fn(Option<&Value>) -> Value + Send + Sync);

/// Persistence of debates as event logs. Object-safe: hold it as
/// `Arc<dyn EventStore>`.
#[async_trait]
pub trait EventStore: Send + Sync {
    /// "sqlite" or "postgres".
    fn backend(&self) -> &'static str;

    /// The store's URL, password redacted.
    fn url(&self) -> &str;

    /// Creates a debate with status `created` and an empty log.
    async fn create_debate(&self, new: &NewDebate) -> Result<DebateRecord, StoreError>;

    /// One debate's row.
    async fn debate(&self, id: &DebateId) -> Result<DebateRecord, StoreError>;

    /// Sets the run status.
    async fn set_status(&self, id: &DebateId, status: RunStatus) -> Result<(), StoreError>;

    /// Appends `events` in one transaction after sequence `expected_seq`
    /// (the caller's view of the log's end); they get `expected_seq + 1 ..`.
    /// Returns the new last sequence. A stale `expected_seq` is
    /// [`StoreError::Conflict`] and nothing is written.
    async fn append(
        &self,
        id: &DebateId,
        expected_seq: u64,
        events: &[DebateEvent],
    ) -> Result<u64, StoreError>;

    /// Appends `events` as [`append`](Self::append) does and, in the same
    /// transaction, marks the posted `requests` taken: a request becomes
    /// its events exactly once, even if the process dies in between.
    /// With no events, only marks the requests (the log must still be at
    /// `expected_seq`).
    async fn append_taking(
        &self,
        id: &DebateId,
        expected_seq: u64,
        events: &[DebateEvent],
        requests: &[u64],
    ) -> Result<u64, StoreError>;

    /// Records a request for the run of debate `id` (whoever makes it, in
    /// whatever process); returns its id. The process holding the run's
    /// lease takes it ([`pending_requests`](Self::pending_requests),
    /// [`append_taking`](Self::append_taking)).
    async fn post_request(&self, id: &DebateId, body: &Value) -> Result<u64, StoreError>;

    /// The requests of debate `id` not yet taken, oldest first.
    async fn pending_requests(&self, id: &DebateId) -> Result<Vec<PostedRequest>, StoreError>;

    /// Marks requests taken that become no event (a stop, answers handed
    /// to the run, a request the debate can no longer take).
    async fn take_requests(&self, id: &DebateId, requests: &[u64]) -> Result<(), StoreError>;

    /// Creates debate `new` whose log is a copy of `from`'s events up to
    /// and including `upto`, in one transaction; it records where it came
    /// from ([`DebateRecord::forked_from`]) and is resumable (status
    /// `interrupted`; `created` when it copies nothing).
    async fn fork_debate(
        &self,
        new: &NewDebate,
        from: &DebateId,
        upto: u64,
    ) -> Result<DebateRecord, StoreError>;

    /// Events with sequence greater than `after`, in order.
    async fn events_after(&self, id: &DebateId, after: u64)
    -> Result<Vec<StoredEvent>, StoreError>;

    /// Stores the blackboard as it is after event `seq`.
    async fn save_snapshot(
        &self,
        id: &DebateId,
        seq: u64,
        blackboard: &Blackboard,
    ) -> Result<(), StoreError>;

    /// The latest snapshot and its sequence, if any.
    async fn latest_snapshot(&self, id: &DebateId)
    -> Result<Option<(u64, Blackboard)>, StoreError>;

    /// All debates, newest first.
    async fn list_debates(&self) -> Result<Vec<DebateRecord>, StoreError>;

    /// Deletes a debate with its events, snapshots and lease.
    async fn delete_debate(&self, id: &DebateId) -> Result<(), StoreError>;

    /// The store's size in bytes: SQLite's database file (its pages, after
    /// a WAL checkpoint); PostgreSQL's tables of Agon's store with their
    /// indexes and TOAST.
    async fn size_bytes(&self) -> Result<u64, StoreError>;

    /// Gives the space of deleted debates and replaced snapshots back to
    /// the file system (SQLite: `VACUUM`; PostgreSQL: `VACUUM FULL` of the
    /// store's tables, which locks them while it runs: compact when no
    /// debate runs). Returns the size before and after, in bytes.
    async fn compact(&self) -> Result<(u64, u64), StoreError>;

    /// Takes the run lease for `ttl`, unless another holder has a live one
    /// ([`StoreError::Leased`]). The same holder re-acquiring renews it.
    async fn acquire_lease(
        &self,
        id: &DebateId,
        holder: &str,
        ttl: Duration,
    ) -> Result<Lease, StoreError>;

    /// The run lease of `id` as stored (it may have lapsed: compare its
    /// `expires_at` with the time), if anyone holds one.
    async fn lease(&self, id: &DebateId) -> Result<Option<Lease>, StoreError>;

    /// Extends a held lease (the heartbeat); [`StoreError::LeaseLost`] if it was taken over.
    async fn renew_lease(&self, lease: &Lease, ttl: Duration) -> Result<Lease, StoreError>;

    /// Gives a lease up (no error if it had already lapsed).
    async fn release_lease(&self, lease: &Lease) -> Result<(), StoreError>;

    /// A persona's cross-debate record.
    async fn persona_record(
        &self,
        persona: &PersonaId,
    ) -> Result<Option<PersonaRecord>, StoreError>;

    /// Every persona record, by persona id.
    async fn persona_records(&self) -> Result<Vec<PersonaRecord>, StoreError>;

    /// Updates a persona's record in a transaction: `update` gets the current
    /// document (or `None`) and returns the new one. Concurrent updates are
    /// serialized (optimistic, retried), so none is lost.
    async fn update_persona_record(
        &self,
        persona: &PersonaId,
        update: RecordUpdate<'_>,
    ) -> Result<PersonaRecord, StoreError>;

    /// A shared rubric's document (the living rubric's versions and
    /// proposals), if it was ever written.
    async fn rubric_record(&self, name: &str) -> Result<Option<DocRecord>, StoreError>;

    /// Updates a rubric's document in a transaction, like
    /// [`update_persona_record`](Self::update_persona_record): concurrent
    /// updates are serialized, so none is lost.
    async fn update_rubric_record(
        &self,
        name: &str,
        update: RecordUpdate<'_>,
    ) -> Result<DocRecord, StoreError>;

    /// The blackboard and last sequence: the latest snapshot plus a replay
    /// of the events after it. A snapshot that does not decode is skipped
    /// (full replay); an event that does not decode or apply is an error
    /// naming the debate and sequence.
    async fn load(&self, id: &DebateId) -> Result<(Blackboard, u64), StoreError> {
        let (mut board, from) = match self.latest_snapshot(id).await {
            Ok(Some((seq, board))) => (board, seq),
            Ok(None) | Err(StoreError::CorruptSnapshot { .. }) => (Blackboard::new(), 0),
            Err(e) => return Err(e),
        };
        let events = self.events_after(id, from).await?;
        let mut last = from;
        for stored in events {
            board
                .apply(&stored.event)
                .map_err(|source| StoreError::Replay {
                    debate: id.to_string(),
                    seq: stored.seq,
                    source,
                })?;
            last = stored.seq;
        }
        if last == 0 {
            // Make sure the debate exists even when its log is empty.
            self.debate(id).await?;
        }
        Ok((board, last))
    }
}
