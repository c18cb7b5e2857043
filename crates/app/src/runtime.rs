//! [`Runtime`]: what a debate needs from the program that runs it (its
//! models, its vector memory, its trace), implemented once by each binary
//! and shared by every front door; [`StepQueue`]: where debates run by
//! workers are queued.

use agon_config::DebateConfig;
use agon_core::DebateId;
use agon_memory::Memory;
use agon_orchestrator::{Models, Orchestrator};
use async_trait::async_trait;

/// What a debate needs from the program running it. The CLI builds
/// models and memory from a configuration's specs; tests give scripted
/// models.
#[async_trait]
pub trait Runtime: Send + Sync {
    /// The models of a debate run with `config`, or why they cannot be had.
    async fn models(&self, config: &DebateConfig) -> Result<Models, String>;

    /// The orchestrator for `config`, equipped (its vector memory, as the
    /// configuration asks). The default adds nothing.
    async fn equip(&self, orch: Orchestrator, config: &DebateConfig) -> Orchestrator {
        let _ = config;
        orch
    }

    /// The vector memory recall reads, with the embedder `embedder` names
    /// (the one its memories were written with). The default has none.
    async fn memory(&self, embedder: &str) -> Result<Memory, String> {
        let _ = embedder;
        Err("this program has no vector memory to recall from".into())
    }

    /// The vector memory index of the store, for deleting a debate's
    /// memories with it (none by default: the debates are deleted, their
    /// memories stay).
    async fn memory_index(&self) -> Option<std::sync::Arc<dyn agon_memory::MemoryIndex>> {
        None
    }

    /// The span a run of debate `id` runs in. The default is a plain `agon
    /// run` span; a binary that exports traces puts it in the debate's
    /// trace, so every run of a debate lands in one trace.
    fn run_span(&self, id: &DebateId) -> tracing::Span {
        tracing::info_span!("agon run", debate = %id)
    }
}

/// Where debates run by workers are queued (the worker crate's queue on
/// PostgreSQL). A queued debate's next step runs on whichever worker
/// takes it.
#[async_trait]
pub trait StepQueue: Send + Sync {
    /// Queues `debate`'s next step.
    async fn submit(&self, debate: &DebateId) -> Result<(), String>;
}
