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
    /// events (default 500; 0 disables snapshots).
    pub every: u64,
}

impl Default for SnapshotPolicy {
    fn default() -> Self {
        Self { every: 500 }
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
        match self.store.append(&self.debate, self.seq, events).await {
            Ok(seq) => {
                let before = self.seq;
                self.seq = seq;
                let every = self.policy.every;
                if every > 0 && seq / every > before / every {
                    self.snapshot_error = self
                        .store
                        .save_snapshot(&self.debate, seq, &self.board)
                        .await
                        .err();
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
