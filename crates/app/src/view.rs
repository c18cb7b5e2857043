//! A debate's view, as every front door shows it: the log replayed once,
//! where it was forked from, and the positions the vector memory holds of
//! its personas across debates.

use agon_core::DebateId;
use agon_orchestrator::OrchestratorError;
use agon_view::{DebateView, ForkOrigin, RememberedChange, ReportOptions};

use crate::{App, AppError};

impl App {
    /// The view of stored debate `id` (what the reports, the page and the
    /// JSON render) and the sequence of the last event it holds (where a
    /// live stream picks up, so no event is shown twice or missed).
    ///
    /// With a vector memory ([`crate::Runtime::memory_index`]), the view
    /// carries the personas' positions across debates
    /// ([`DebateView::with_remembered`]); a memory that fails to answer
    /// leaves them out (logged): the report never fails for it.
    pub async fn view_at(
        &self,
        id: &DebateId,
        options: ReportOptions,
    ) -> Result<(DebateView, u64), AppError> {
        let record = self.store().debate(id).await?;
        let events = self.orchestrator().log(id).await?;
        let seq = events.len() as u64;
        let view =
            DebateView::from_log(&events, options).map_err(|source| OrchestratorError::Replay {
                debate: id.to_string(),
                source,
            })?;
        let view = match record.forked_from {
            Some(from) => view.with_origin(ForkOrigin {
                debate: from.debate.to_string(),
                seq: from.seq,
            }),
            None => view,
        };
        let remembered = match self.runtime().memory_index().await {
            Some(index) => match agon_memory::stance_changes(index.as_ref(), id).await {
                Ok(changes) => remembered(&view, changes),
                Err(e) => {
                    tracing::warn!(debate = %id, error = %e, "reading the positions across debates failed");
                    Vec::new()
                }
            },
            None => Vec::new(),
        };
        Ok((view.with_remembered(remembered), seq))
    }

    /// [`App::view_at`] without the sequence.
    pub async fn view(
        &self,
        id: &DebateId,
        options: ReportOptions,
    ) -> Result<DebateView, AppError> {
        self.view_at(id, options).await.map(|(view, _)| view)
    }
}

/// The changes as the view shows them: personas by name, and only those
/// where the position itself changed (a later debate restating the same
/// position replaces the memory, not the stance).
fn remembered(view: &DebateView, changes: Vec<agon_memory::StanceChange>) -> Vec<RememberedChange> {
    changes
        .into_iter()
        .filter(|c| stance_of(&c.before.content) != stance_of(&c.after.content))
        .map(|c| RememberedChange {
            persona: view.board().persona_name(&c.before.persona).to_owned(),
            subject: c.before.subject.clone().unwrap_or_default(),
            before: c.before.content,
            before_debate: c.before.debate.to_string(),
            until: c.after.created,
            after: c.after.content,
            after_debate: c.after.debate.to_string(),
        })
        .collect()
}

/// A remembered position without its round ("Ada's position on X (round
/// 2): …" → "Ada's position on X: …").
fn stance_of(content: &str) -> String {
    match (content.find(" (round "), content.find("): ")) {
        (Some(open), Some(close)) if open < close => {
            format!("{}{}", &content[..open], &content[close + 1..])
        }
        _ => content.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::stance_of;

    #[test]
    fn a_position_without_its_round() {
        assert_eq!(
            stance_of("Ada's position on Rates (round 2): Hold them. (evidence: a)"),
            "Ada's position on Rates: Hold them. (evidence: a)"
        );
        assert_eq!(stance_of("no round here"), "no round here");
    }
}
