//! Keeping the store: deleting debates with their vector memories, and
//! which debates a retention rule would prune.

use std::sync::Arc;

use agon_core::DebateId;
use agon_memory::{MemoryFilter, MemoryIndex};
use agon_store::{RunStatus, StoreError};
use serde::Serialize;

use crate::{App, AppError};

/// What a deletion removed (or, in a dry run, would remove).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Deleted {
    /// Events of its log.
    pub events: u64,
    /// Its vector memories.
    pub memories: u64,
}

impl App {
    /// Deletes `id` under its run lease (a debate another live process
    /// runs is refused), then its vector memories in `memory`; with
    /// `dry_run`, only counts them. A debate already gone whose memories
    /// remain (an earlier deletion stopped between the two) has them
    /// deleted.
    pub async fn delete(
        &self,
        id: &DebateId,
        memory: Option<&Arc<dyn MemoryIndex>>,
        dry_run: bool,
    ) -> Result<Deleted, AppError> {
        let memories = match memory {
            Some(index) => index
                .count(&MemoryFilter {
                    debate: Some(id.clone()),
                    ..MemoryFilter::default()
                })
                .await
                .map_err(|e| {
                    AppError::Unavailable(format!("debate `{id}`: the vector memory: {e}"))
                })? as u64,
            None => 0,
        };
        let events = match self.store().debate(id).await {
            Ok(record) => Some(record.last_seq),
            Err(StoreError::DebateNotFound { .. }) if memories > 0 => None,
            Err(e) => return Err(e.into()),
        };
        if dry_run {
            return Ok(Deleted {
                events: events.unwrap_or(0),
                memories,
            });
        }
        let events = match events {
            Some(_) => self.orchestrator().delete(id).await?,
            None => 0,
        };
        let memories = match memory {
            Some(index) => agon_memory::forget_debate(index.as_ref(), id)
                .await
                .map_err(|e| {
                    AppError::Unavailable(format!(
                        "debate `{id}` is deleted but its memories are not ({e}); delete it again"
                    ))
                })? as u64,
            None => 0,
        };
        Ok(Deleted { events, memories })
    }

    /// The debates last changed more than `older_than` ago, with one of
    /// `statuses` (any but running when none is given): what `agon prune`
    /// deletes.
    pub async fn prunable(
        &self,
        older_than: chrono::Duration,
        statuses: &[RunStatus],
    ) -> Result<Vec<DebateId>, AppError> {
        let cutoff = chrono::Utc::now() - older_than;
        Ok(self
            .store()
            .list_debates()
            .await?
            .into_iter()
            .filter(|d| d.updated_at < cutoff)
            .filter(|d| {
                if statuses.is_empty() {
                    d.status != RunStatus::Running
                } else {
                    statuses.contains(&d.status)
                }
            })
            .map(|d| d.id)
            .collect())
    }
}
