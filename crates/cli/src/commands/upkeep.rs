//! Keeping the store: `agon delete`, `agon compact`, `agon prune`.

use std::process::ExitCode;

use agon_app::App;
use agon_core::DebateId;
use agon_store::RunStatus;

use crate::failure::Failure;
use crate::retention;

/// `agon delete`.
pub(crate) async fn delete(
    app: &App,
    ids: Vec<String>,
    dry_run: bool,
) -> Result<ExitCode, Failure> {
    let ids: Vec<DebateId> = ids.into_iter().map(DebateId::new).collect();
    retention::delete(app, &ids, dry_run).await
}

/// `agon compact`.
pub(crate) async fn compact(app: &App) -> Result<ExitCode, Failure> {
    let (before, after) = app.compact().await?;
    let mb = |b: u64| b as f64 / 1_048_576.0;
    println!(
        "{}: {:.2} MB → {:.2} MB ({} KB given back)",
        app.store().url(),
        mb(before),
        mb(after),
        before.saturating_sub(after) / 1024
    );
    Ok(ExitCode::SUCCESS)
}

/// `agon prune`.
pub(crate) async fn prune(
    app: &App,
    older_than: chrono::Duration,
    statuses: Vec<RunStatus>,
    dry_run: bool,
) -> Result<ExitCode, Failure> {
    let ids = app.prunable(older_than, &statuses).await?;
    if ids.is_empty() {
        eprintln!("Nothing to prune in {}", app.store().url());
        return Ok(ExitCode::SUCCESS);
    }
    retention::delete(app, &ids, dry_run).await
}
