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
    /// live stream picks up, so no event is shown twice or missed): the
    /// log replayed once, and where the debate was forked from.
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
        Ok(match record.forked_from {
            Some(from) => (
                view.with_origin(ForkOrigin {
                    debate: from.debate.to_string(),
                    seq: from.seq,
                }),
                seq,
            ),
            None => (view, seq),
        })
    }

    /// [`App::view_at`] without the sequence.
    pub async fn view(
        &self,
        id: &DebateId,
        options: ReportOptions,
    ) -> Result<DebateView, AppError> {
        self.view_at(id, options).await.map(|(view, _)| view)
    }

    /// The view a report renders: [`App::view`] with the positions the
    /// vector memory holds of its personas across debates
    /// ([`App::with_remembered`]).
    pub async fn report_view(
        &self,
        id: &DebateId,
        options: ReportOptions,
    ) -> Result<DebateView, AppError> {
        let view = self.view(id, options).await?;
        Ok(self.with_remembered(view, id).await)
    }

    /// `view` of debate `id` with its personas' positions across debates
    /// ([`DebateView::with_remembered`]), when there is a vector memory
    /// ([`crate::Runtime::memory_index`]). Only the reports ask (Markdown
    /// and JSON): the pages, the streams and the metrics do not read the
    /// memory. A memory that fails to answer leaves them out (logged):
    /// the report never fails for it.
    pub async fn with_remembered(&self, view: DebateView, id: &DebateId) -> DebateView {
        let Some(index) = self.runtime().memory_index().await else {
            return view;
        };
        match agon_memory::stance_changes(index.as_ref(), id).await {
            Ok(changes) => {
                let remembered = remembered(&view, changes);
                view.with_remembered(remembered)
            }
            Err(e) => {
                tracing::warn!(debate = %id, error = %e, "reading the positions across debates failed");
                view
            }
        }
    }
}

/// The changes as the view shows them: personas by name, and only those
/// where the position itself changed ([`agon_memory::StanceChange::changed`]).
fn remembered(view: &DebateView, changes: Vec<agon_memory::StanceChange>) -> Vec<RememberedChange> {
    changes
        .into_iter()
        .filter(agon_memory::StanceChange::changed)
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
