//! Clarifying questions answered over the API: a run's questions wait
//! here until a person posts the answers (`POST /api/debates/{id}/answers`)
//! or the wait runs out (then every answer is "NA", as dialectic does
//! when nobody answers).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agon_core::DebateId;
use agon_orchestrator::{AnswerError, Answerer, Question};
use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::{broadcast, oneshot};

use crate::error::ApiError;
use crate::live::Live;

/// Questions waiting for a person, by debate.
#[derive(Default)]
pub(crate) struct Pending {
    waiting: Mutex<HashMap<DebateId, Waiting>>,
}

struct Waiting {
    questions: Vec<Question>,
    reply: oneshot::Sender<Vec<String>>,
}

impl Pending {
    /// The questions `id` waits on (none when it waits on nothing).
    pub(crate) fn questions(&self, id: &DebateId) -> Vec<Question> {
        self.waiting
            .lock()
            .ok()
            .and_then(|w| w.get(id).map(|w| w.questions.clone()))
            .unwrap_or_default()
    }

    /// Answers `id`'s questions, one answer per question in order (an
    /// empty one is "NA").
    pub(crate) fn answer(&self, id: &DebateId, answers: Vec<String>) -> Result<(), ApiError> {
        let mut waiting = self
            .waiting
            .lock()
            .map_err(|_| ApiError::internal("the question table is poisoned"))?;
        let Some(w) = waiting.get(id) else {
            return Err(ApiError::conflict(format!(
                "debate `{id}` is not waiting for answers"
            )));
        };
        if answers.len() != w.questions.len() {
            return Err(ApiError::bad_request(format!(
                "answers: {} given for {} questions (one per question, in order; \"\" for NA)",
                answers.len(),
                w.questions.len()
            )));
        }
        if let Some(w) = waiting.remove(id) {
            // The run may have given up waiting; nothing is lost then.
            let _ = w.reply.send(answers);
        }
        Ok(())
    }
}

/// The answerer of one run on this server.
pub(crate) struct ApiAnswerer {
    pub(crate) debate: DebateId,
    pub(crate) pending: Arc<Pending>,
    pub(crate) live: broadcast::Sender<(DebateId, Live)>,
    /// How long the questions wait before they are answered "NA".
    pub(crate) wait: Duration,
}

#[async_trait]
impl Answerer for ApiAnswerer {
    async fn answer(&self, questions: &[Question]) -> Result<Vec<String>, AnswerError> {
        let (reply, answered) = oneshot::channel();
        if let Ok(mut waiting) = self.pending.waiting.lock() {
            waiting.insert(
                self.debate.clone(),
                Waiting {
                    questions: questions.to_vec(),
                    reply,
                },
            );
        }
        let _ = self.live.send((self.debate.clone(), Live::Questions));
        let given = tokio::time::timeout(self.wait, answered).await;
        if let Ok(mut waiting) = self.pending.waiting.lock() {
            waiting.remove(&self.debate);
        }
        match given {
            Ok(Ok(answers)) => Ok(answers),
            // Nobody answered in time: "NA", and the debate goes on.
            _ => {
                tracing::info!(debate = %self.debate, "clarifying questions unanswered: NA");
                Ok(vec![String::new(); questions.len()])
            }
        }
    }
}

/// Questions as the API shows them.
pub(crate) fn questions_json(questions: &[agon_orchestrator::Question]) -> Value {
    json!({
        "questions": questions
            .iter()
            .map(|q| json!({
                "agent": q.agent,
                "agent_name": q.agent_name,
                "role": q.role.map(|r| r.as_str()),
                "id": q.id,
                "text": q.text,
            }))
            .collect::<Vec<_>>()
    })
}
