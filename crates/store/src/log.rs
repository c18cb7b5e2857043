//! `DebateLog`: one debate's blackboard kept in step with its stored log.
//! Events are validated by the blackboard, persisted, and only then visible;
//! snapshots are taken every N events.

use std::sync::Arc;

use agon_core::{Blackboard, DebateEvent, DebateId};

use crate::error::StoreError;
use crate::store::EventStore;

/// How often snapshots are saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotPolicy {
    /// Save a snapshot each time the log passes a multiple of this many
    /// events (default 500; 0 disables snapshots)…
    pub every: u64,
    /// …once at least the log's length at the last snapshot divided by
    /// this has been appended since it (default 4; 0: every multiple). A
    /// snapshot encodes the whole blackboard, so with a fixed interval its
    /// cost per event grows with the debate; with this, it stays constant,
    /// and a load still replays at most about a quarter of the log after
    /// its snapshot.
    pub growth: u64,
}

impl Default for SnapshotPolicy {
    fn default() -> Self {
        Self {
            every: 500,
            growth: 4,
        }
    }
}

impl SnapshotPolicy {
    /// Whether an append that took the log from `before` to `seq` events
    /// saves a snapshot, the last one being at `last`.
    pub fn due(&self, before: u64, seq: u64, last: u64) -> bool {
        let every = self.every;
        let grown = self.growth == 0 || seq.saturating_sub(last) >= last / self.growth;
        every > 0 && seq / every > before / every && grown
    }
}

/// Why an append through a [`DebateLog`] failed.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The event does not apply to the blackboard; nothing was stored.
    #[error("debate `{debate}`: event {index} of the batch (`{event}`) is rejected: {source}")]
    Rejected {
        /// The debate.
        debate: String,
        /// Position in the batch.
        index: usize,
        /// The event's type.
        event: &'static str,
        /// Why.
        #[source]
        source: agon_core::ApplyError,
    },
    /// The store failed; the in-memory blackboard was reloaded from it.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A debate's blackboard and its position in the stored log.
pub struct DebateLog {
    store: Arc<dyn EventStore>,
    debate: DebateId,
    board: Blackboard,
    seq: u64,
    policy: SnapshotPolicy,
    /// Sequence of the last snapshot saved (the loaded sequence at open).
    last_snapshot: u64,
    snapshot_error: Option<StoreError>,
}

impl std::fmt::Debug for DebateLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DebateLog")
            .field("debate", &self.debate)
            .field("seq", &self.seq)
            .finish()
    }
}

impl DebateLog {
    /// Loads `debate` (latest snapshot + replay).
    pub async fn open(
        store: Arc<dyn EventStore>,
        debate: DebateId,
        policy: SnapshotPolicy,
    ) -> Result<Self, StoreError> {
        let (board, seq) = store.load(&debate).await?;
        Ok(Self {
            store,
            debate,
            board,
            seq,
            policy,
            last_snapshot: seq,
            snapshot_error: None,
        })
    }

    /// The blackboard after every persisted event.
    pub fn blackboard(&self) -> &Blackboard {
        &self.board
    }

    /// Sequence of the last persisted event.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The store the log is persisted in.
    pub fn store(&self) -> &Arc<dyn EventStore> {
        &self.store
    }

    /// The debate.
    pub fn debate(&self) -> &DebateId {
        &self.debate
    }

    /// The last snapshot failure, if any (snapshots are an optimization:
    /// a failure never fails an append).
    pub fn snapshot_error(&self) -> Option<&StoreError> {
        self.snapshot_error.as_ref()
    }

    /// Validates `events` against the blackboard, appends them in one
    /// transaction, and returns the new last sequence. If any event is
    /// rejected or the store fails, nothing is visible: the blackboard is
    /// reloaded from the store.
    pub async fn append(&mut self, events: &[DebateEvent]) -> Result<u64, LogError> {
        self.append_taking(events, &[]).await
    }

    /// Appends `events` as [`append`](Self::append) does and marks the
    /// posted `requests` they came from taken, in the same transaction
    /// ([`EventStore::append_taking`]).
    pub async fn append_taking(
        &mut self,
        events: &[DebateEvent],
        requests: &[u64],
    ) -> Result<u64, LogError> {
        for (index, event) in events.iter().enumerate() {
            if let Err(source) = self.board.apply(event) {
                self.reload().await?;
                return Err(LogError::Rejected {
                    debate: self.debate.to_string(),
                    index,
                    event: event.name(),
                    source,
                });
            }
        }
        match self
            .store
            .append_taking(&self.debate, self.seq, events, requests)
            .await
        {
            Ok(seq) => {
                let before = self.seq;
                self.seq = seq;
                if self.policy.due(before, seq, self.last_snapshot) {
                    self.snapshot_error = self
                        .store
                        .save_snapshot(&self.debate, seq, &self.board)
                        .await
                        .err();
                    self.last_snapshot = seq;
                }
                Ok(seq)
            }
            Err(e) => {
                self.reload().await?;
                Err(e.into())
            }
        }
    }

    async fn reload(&mut self) -> Result<(), StoreError> {
        let (board, seq) = self.store.load(&self.debate).await?;
        self.board = board;
        self.seq = seq;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::SnapshotPolicy;

    /// The snapshots an append-only log of `n` events in batches of 7
    /// would save.
    fn saved(policy: SnapshotPolicy, n: u64) -> Vec<u64> {
        let (mut before, mut last, mut out) = (0, 0, Vec::new());
        while before < n {
            let seq = (before + 7).min(n);
            if policy.due(before, seq, last) {
                out.push(seq);
                last = seq;
            }
            before = seq;
        }
        out
    }

    #[test]
    fn snapshots_thin_out_as_the_log_grows_and_stay_within_a_quarter() {
        let fixed = saved(
            SnapshotPolicy {
                every: 500,
                growth: 0,
            },
            40_000,
        );
        assert_eq!(fixed.len(), 80, "one per multiple of 500");
        let grown = saved(SnapshotPolicy::default(), 40_000);
        // 500, 1,000, …, 2,000, then a quarter more each time.
        assert!(grown.len() < 20, "{grown:?}");
        for pair in grown.windows(2) {
            let gap = pair[1] - pair[0];
            assert!(
                gap >= pair[0] / 4 && gap <= pair[0] / 4 + 500 + 7,
                "{pair:?}"
            );
        }
        assert!(40_000 - grown.last().copied().unwrap_or(0) <= 40_000 / 4 + 507);
        assert!(
            saved(
                SnapshotPolicy {
                    every: 0,
                    growth: 4
                },
                5_000
            )
            .is_empty()
        );
    }
}
