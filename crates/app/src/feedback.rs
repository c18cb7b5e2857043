//! A person's rating of a debate's outcome (dialectic's `userFeedback`).

use agon_core::{DebateEvent, DebateId};

use crate::{App, AppError, RunsWhere};

impl App {
    /// Records a rating (`+1` up, `-1` down) in `id`'s log, under its run
    /// lease; the latest rating counts. Refused while the debate runs.
    pub async fn feedback(&self, id: &DebateId, value: i8) -> Result<u64, AppError> {
        if !matches!(value, 1 | -1) {
            return Err(AppError::invalid(
                id,
                format!("rating: {value} is not +1 or -1"),
            ));
        }
        if self.runs_where(id).await? != RunsWhere::Idle {
            return Err(AppError::conflict(
                id,
                "it is running; rate it when it ends",
            ));
        }
        let event = DebateEvent::FeedbackRecorded {
            value,
            time: chrono::Utc::now(),
        };
        Ok(self.orchestrator().record(id, &[event]).await?)
    }
}
