//! What the commands show of a debate: its view from the log, and the
//! first line of its topic.

use agon_core::DebateId;
use agon_orchestrator::{Orchestrator, OrchestratorError};
use agon_view::{DebateView, ReportOptions};

use crate::failure::Failure;

/// The view of a stored debate: its log read once, replayed into the
/// blackboard and the metrics.
pub(crate) async fn view_of(
    orch: &Orchestrator,
    id: &DebateId,
    options: ReportOptions,
) -> Result<DebateView, Failure> {
    let events = orch.log(id).await?;
    let view = DebateView::from_log(&events, options).map_err(|source| {
        Failure::from(OrchestratorError::Replay {
            debate: id.to_string(),
            source,
        })
    })?;
    Ok(match orch.store().debate(id).await?.forked_from {
        Some(from) => view.with_origin(agon_view::ForkOrigin {
            debate: from.debate.to_string(),
            seq: from.seq,
        }),
        None => view,
    })
}

/// The first non-empty line of a topic or problem (problems can be files).
pub(crate) fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}
