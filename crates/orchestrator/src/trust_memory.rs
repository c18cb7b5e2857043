//! [`TrustMemory`]: the seam through which a run reads and writes the
//! agents' trust memory and the living rubric (seed 003). The repositories
//! over the store are the application's (`agon_app::StoreTrust`); a run
//! without one reads the built-in rubrics and no memories, and records
//! nothing.

use agon_core::DebateId;
use agon_protocol::trust_harvest::AgentRecord;
use agon_trust::AgentMemory;
use agon_trust::rubric::{Rubric, RubricBook};
use async_trait::async_trait;
use chrono::{DateTime, Utc};

/// What a run needs of the trust memory. Object-safe: hold it as
/// `Arc<dyn TrustMemory>`.
#[async_trait]
pub trait TrustMemory: Send + Sync {
    /// The memories of `names`, in order (`None` for an agent with none),
    /// current at `now` (overrides past their deadline judged first), so a
    /// draw or a debate's standings never read stale trust.
    async fn read(
        &self,
        names: &[String],
        now: DateTime<Utc>,
    ) -> Result<Vec<Option<AgentMemory>>, String>;

    /// The current version of rubric `name`.
    async fn rubric(&self, name: &str) -> Result<Rubric, String>;

    /// Records a finished debate in its agents' memories, with dissent
    /// novelty measured by `embedder` when one is given. Returns a warning
    /// when a part of it degraded (the words' cosine instead of the
    /// embeddings).
    async fn record(
        &self,
        debate: &DebateId,
        records: &[AgentRecord],
        now: DateTime<Utc>,
        embedder: Option<&agon_memory::Memory>,
    ) -> Result<Option<String>, String>;
}

/// No trust memory: the built-in rubrics, no agent known, nothing
/// recorded (a run of an orchestrator given no repository).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTrustMemory;

#[async_trait]
impl TrustMemory for NoTrustMemory {
    async fn read(
        &self,
        names: &[String],
        _now: DateTime<Utc>,
    ) -> Result<Vec<Option<AgentMemory>>, String> {
        Ok(vec![None; names.len()])
    }

    async fn rubric(&self, name: &str) -> Result<Rubric, String> {
        RubricBook::new(name, Utc::now())
            .map(|book| book.current())
            .map_err(|e| e.to_string())
    }

    async fn record(
        &self,
        _debate: &DebateId,
        _records: &[AgentRecord],
        _now: DateTime<Utc>,
        _embedder: Option<&agon_memory::Memory>,
    ) -> Result<Option<String>, String> {
        Ok(None)
    }
}
