//! `agon delete` and `agon prune`: removing debates, with their vector
//! memories, from the store.

use std::process::ExitCode;
use std::sync::Arc;

use agon_core::DebateId;
use agon_memory::{MemoryFilter, MemoryIndex};
use agon_orchestrator::Orchestrator;
use agon_store::{EventStore, RunStatus, StoreError};

use crate::Failure;

/// An age like `30d`, `12h`, `45m`, `2w` or `90s`.
pub(crate) fn parse_age(text: &str) -> Result<chrono::Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("`{text}` has no unit (s, m, h, d or w)"))?;
    let (n, unit) = text.split_at(split);
    let n: i64 = n
        .parse()
        .map_err(|_| format!("`{text}` does not start with a number"))?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 604_800,
        other => return Err(format!("`{other}` is not a unit (s, m, h, d or w)")),
    };
    n.checked_mul(seconds)
        .map(chrono::Duration::seconds)
        .ok_or_else(|| format!("`{text}` is too long"))
}

/// Deletes `ids` (with `dry_run`, only says what would go): each debate
/// under its run lease, then its vector memories. A debate already gone
/// whose memories remain (an earlier deletion stopped between the two)
/// has them deleted.
pub(crate) async fn delete(
    orch: &Orchestrator,
    store: &dyn EventStore,
    memory: Option<Arc<dyn MemoryIndex>>,
    ids: &[DebateId],
    dry_run: bool,
) -> Result<ExitCode, Failure> {
    for id in ids {
        let memories = match &memory {
            Some(index) => index
                .count(&MemoryFilter {
                    debate: Some(id.clone()),
                    ..MemoryFilter::default()
                })
                .await
                .map_err(anyhow::Error::from)?,
            None => 0,
        };
        let events = match store.debate(id).await {
            Ok(record) => Some(record.last_seq),
            Err(StoreError::DebateNotFound { .. }) if memories > 0 => None,
            Err(e) => return Err(e.into()),
        };
        if dry_run {
            println!(
                "would delete {id}: {} events, {memories} memories",
                events.unwrap_or(0)
            );
            continue;
        }
        let events = match events {
            Some(_) => orch.delete(id).await?,
            None => 0,
        };
        let deleted = match &memory {
            Some(index) => index.delete_debate(id).await.map_err(|e| {
                anyhow::anyhow!(
                    "debate {id} is deleted but its memories are not ({e}); run `agon delete {id}` again"
                )
            })?,
            None => 0,
        };
        println!("deleted {id}: {events} events, {deleted} memories");
    }
    if !dry_run {
        eprintln!("`agon compact` gives the space back to the file system");
    }
    Ok(ExitCode::SUCCESS)
}

/// The debates `agon prune` deletes: last changed more than `older_than`
/// ago, with one of `statuses` (any but running when none is given).
pub(crate) async fn prunable(
    store: &dyn EventStore,
    older_than: chrono::Duration,
    statuses: &[RunStatus],
) -> Result<Vec<DebateId>, Failure> {
    let cutoff = chrono::Utc::now() - older_than;
    Ok(store
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_with_their_units() {
        assert_eq!(parse_age("30d"), Ok(chrono::Duration::days(30)));
        assert_eq!(parse_age("2w"), Ok(chrono::Duration::weeks(2)));
        assert_eq!(parse_age("0s"), Ok(chrono::Duration::zero()));
        assert!(parse_age("30").unwrap_err().contains("no unit"));
        assert!(parse_age("3y").unwrap_err().contains("`y` is not a unit"));
        assert!(parse_age("d").unwrap_err().contains("number"));
    }
}
