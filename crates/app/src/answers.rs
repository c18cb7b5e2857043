//! Clarifying questions, answered wherever the debate runs: the run posts
//! the questions it waits on to the store; a person answers them through
//! any process.

use agon_core::DebateId;
use agon_protocol::{PendingQuestion, RunRequest};

use crate::{App, AppError, Posted, pending_questions};

impl App {
    /// The clarifying questions `id` waits on now (none when it waits on
    /// none).
    pub async fn questions(&self, id: &DebateId) -> Result<Vec<PendingQuestion>, AppError> {
        self.store().debate(id).await?;
        Ok(pending_questions(self.store().as_ref(), id)
            .await?
            .map(|(_, questions)| questions)
            .unwrap_or_default())
    }

    /// Answers the questions `id` waits on: one answer per question, in
    /// order (`""` for "NA"). Refused when it waits on none.
    pub async fn answer(&self, id: &DebateId, answers: Vec<String>) -> Result<Posted, AppError> {
        self.store().debate(id).await?;
        let Some((asked, questions)) = pending_questions(self.store().as_ref(), id).await? else {
            return Err(AppError::conflict(id, "it is not waiting for answers"));
        };
        if answers.len() != questions.len() {
            return Err(AppError::invalid(
                id,
                format!(
                    "answers: {} given for {} questions (one per question, in order; \"\" for NA)",
                    answers.len(),
                    questions.len()
                ),
            ));
        }
        let answers = answers.into_iter().map(|a| a.trim().to_owned()).collect();
        let request = RunRequest::Answers {
            questions: questions.into_iter().map(|q| q.key).collect(),
            answers,
        };
        let posted = self.post(id, request).await?;
        // Answered once: the questions wait on nobody else now.
        self.store().take_requests(id, &[asked]).await?;
        Ok(posted)
    }
}
