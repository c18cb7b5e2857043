//! Answers to clarifying questions: the [`Answerer`] seam (a terminal, a
//! file, the store, a test; the application implements the file and the
//! store).

use async_trait::async_trait;

pub use agon_protocol::Question;

/// Answers that cannot be used, naming where they came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("answers from {source_name}: {reason}")]
pub struct AnswerError {
    /// The file (or "the terminal").
    pub source_name: String,
    /// What is wrong, naming the field.
    pub reason: String,
}

/// Gives the user's answers to clarifying questions: one answer per
/// question, in order; an empty answer means "NA".
#[async_trait]
pub trait Answerer: Send + Sync {
    /// The answers to `questions`.
    async fn answer(&self, questions: &[Question]) -> Result<Vec<String>, AnswerError>;
}

/// Answers every question with "NA" (no user at hand).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoAnswers;

#[async_trait]
impl Answerer for NoAnswers {
    async fn answer(&self, questions: &[Question]) -> Result<Vec<String>, AnswerError> {
        Ok(vec![String::new(); questions.len()])
    }
}
