//! Keeping the store: `agon delete`, `agon compact`, `agon prune`.

use std::process::ExitCode;
use std::sync::Arc;

use agon_core::DebateId;
use agon_orchestrator::Orchestrator;
use agon_store::{EventStore, RunStatus};

use crate::{Failure, retention};

/// The store's vector memory index, for deleting a debate's memories (none,
/// with a warning, when it cannot be opened: the debates are still deleted).
async fn retention_memory(url: &str) -> Option<Arc<dyn agon_memory::MemoryIndex>> {
    match agon_memory::open(url).await {
        Ok(index) => Some(index),
        Err(e) => {
            eprintln!("warning: the vector memory cannot be opened ({e}); its memories stay");
            None
        }
    }
}

/// `agon delete`.
pub(crate) async fn delete(
    orch: &Orchestrator,
    url: &str,
    ids: Vec<String>,
    dry_run: bool,
) -> Result<ExitCode, Failure> {
    let ids: Vec<DebateId> = ids.into_iter().map(DebateId::new).collect();
    let memory = retention_memory(url).await;
    retention::delete(orch, orch.store().as_ref(), memory, &ids, dry_run).await
}

/// `agon compact`.
pub(crate) async fn compact(store: &Arc<dyn EventStore>) -> Result<ExitCode, Failure> {
    let (before, after) = store.compact().await?;
    let mb = |b: u64| b as f64 / 1_048_576.0;
    println!(
        "{}: {:.2} MB → {:.2} MB ({} KB given back)",
        store.url(),
        mb(before),
        mb(after),
        before.saturating_sub(after) / 1024
    );
    Ok(ExitCode::SUCCESS)
}

/// `agon prune`.
pub(crate) async fn prune(
    orch: &Orchestrator,
    url: &str,
    older_than: chrono::Duration,
    statuses: Vec<RunStatus>,
    dry_run: bool,
) -> Result<ExitCode, Failure> {
    let store = orch.store();
    let ids = retention::prunable(store.as_ref(), older_than, &statuses).await?;
    if ids.is_empty() {
        eprintln!("Nothing to prune in {}", store.url());
        return Ok(ExitCode::SUCCESS);
    }
    let memory = retention_memory(url).await;
    retention::delete(orch, store.as_ref(), memory, &ids, dry_run).await
}
