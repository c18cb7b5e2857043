//! [`StoreTrust`]: the trust and rubric repositories behind the
//! orchestrator's `TrustMemory` seam, as every run of the application
//! gets them.

use std::sync::Arc;

use agon_core::DebateId;
use agon_store::EventStore;
use agon_trust::AgentMemory;
use chrono::{DateTime, Utc};

use crate::rubric::RubricStore;
use crate::trust::TrustStore;

/// The agents' trust memory and the living rubrics in the store, as a run
/// reads and writes them: the repositories [`TrustStore`] and
/// [`RubricStore`] behind the orchestrator's seam.
#[derive(Clone)]
pub struct StoreTrust {
    trust: TrustStore,
    rubrics: RubricStore,
}

impl std::fmt::Debug for StoreTrust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreTrust").finish_non_exhaustive()
    }
}

impl StoreTrust {
    /// The trust memory and rubrics of `store`.
    pub fn new(store: Arc<dyn EventStore>) -> Self {
        Self {
            trust: TrustStore::new(Arc::clone(&store)),
            rubrics: RubricStore::new(store),
        }
    }
}

#[async_trait::async_trait]
impl agon_orchestrator::TrustMemory for StoreTrust {
    /// After seed 003's regret inference at `now` (overrides past their
    /// deadline whose round's output moved away are marked regretted).
    /// When that fails (a memory that does not decode), the named memories
    /// are read one by one, as stored.
    async fn read(
        &self,
        names: &[String],
        now: DateTime<Utc>,
    ) -> Result<Vec<Option<AgentMemory>>, String> {
        match self.trust.read_checked(names, now).await {
            Ok((known, marked)) => {
                if marked > 0 {
                    tracing::info!(marked, "overrides marked regretted before reading trust");
                }
                return Ok(known);
            }
            Err(e) => {
                tracing::warn!(error = %e, "the regret check failed; trust is read as stored");
            }
        }
        let mut known = Vec::with_capacity(names.len());
        for name in names {
            known.push(self.trust.get(name).await.map_err(|e| e.to_string())?);
        }
        Ok(known)
    }

    async fn rubric(&self, name: &str) -> Result<agon_core::rubric::Rubric, String> {
        self.rubrics.current(name).await.map_err(|e| e.to_string())
    }

    async fn record(
        &self,
        debate: &DebateId,
        records: &[agon_protocol::trust_harvest::AgentRecord],
        now: DateTime<Utc>,
        embedder: Option<&agon_memory::Memory>,
    ) -> Result<Option<String>, String> {
        self.trust
            .record_embedded(debate, records, now, embedder)
            .await
            .map(|(_, warning)| warning)
            .map_err(|e| e.to_string())
    }
}
