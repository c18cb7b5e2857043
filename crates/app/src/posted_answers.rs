//! Clarifying questions answered through the store, wherever the run
//! that asks them is: the run posts the questions it waits on; the
//! answers posted for exactly those questions, by any process, are its
//! answers.

use std::sync::Arc;
use std::time::Duration;

use agon_core::DebateId;
use agon_orchestrator::{AnswerError, Answerer};
use agon_protocol::{PendingQuestion, Question, RunRequest, question_key};
use agon_store::{EventStore, StoreError};
use async_trait::async_trait;

/// The questions `debate` waits on now, with the id of the request that
/// posted them (none when it waits on none).
pub async fn pending_questions(
    store: &dyn EventStore,
    debate: &DebateId,
) -> Result<Option<(u64, Vec<PendingQuestion>)>, StoreError> {
    let mut latest = None;
    for posted in store.pending_requests(debate).await? {
        if let Ok(RunRequest::Questions { questions }) =
            RunRequest::read(&posted.body, posted.debate.as_str(), posted.id)
        {
            latest = Some((posted.id, questions));
        }
    }
    Ok(latest)
}

/// Told when questions start waiting (a server wakes its live streams).
pub type OnAsked = Arc<dyn Fn(&[Question]) + Send + Sync>;

/// Answers clarifying questions with the answers posted to the store for
/// them (through the API, the page or `agon answer`, from any process),
/// waiting up to `wait`; then every answer is "NA", the answer of nobody.
#[derive(Clone)]
pub struct PostedAnswers {
    store: Arc<dyn EventStore>,
    debate: DebateId,
    wait: Duration,
    asked: Option<OnAsked>,
}

impl std::fmt::Debug for PostedAnswers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostedAnswers")
            .field("debate", &self.debate)
            .field("wait", &self.wait)
            .finish_non_exhaustive()
    }
}

impl PostedAnswers {
    /// Answers for `debate`'s questions from `store`, waiting up to `wait`.
    pub fn new(store: Arc<dyn EventStore>, debate: DebateId, wait: Duration) -> Self {
        Self {
            store,
            debate,
            wait,
            asked: None,
        }
    }

    /// Calls `asked` when questions start waiting (a server wakes its
    /// live streams with it).
    pub fn on_asked(mut self, asked: OnAsked) -> Self {
        self.asked = Some(asked);
        self
    }

    /// The answers posted for exactly `keys`, with the request's id.
    async fn posted(&self, keys: &[String]) -> Result<Option<(u64, Vec<String>)>, StoreError> {
        for posted in self.store.pending_requests(&self.debate).await? {
            if let Ok(RunRequest::Answers { questions, answers }) =
                RunRequest::read(&posted.body, posted.debate.as_str(), posted.id)
                && questions == keys
                && answers.len() == keys.len()
            {
                return Ok(Some((posted.id, answers)));
            }
        }
        Ok(None)
    }
}

#[async_trait]
impl Answerer for PostedAnswers {
    async fn answer(&self, questions: &[Question]) -> Result<Vec<String>, AnswerError> {
        let keys: Vec<String> = questions.iter().map(question_key).collect();
        // Questions an earlier run left waiting (it died while it waited)
        // are superseded by these.
        if let Ok(pending) = self.store.pending_requests(&self.debate).await {
            let stale: Vec<u64> = pending
                .iter()
                .filter(|p| {
                    matches!(
                        RunRequest::read(&p.body, p.debate.as_str(), p.id),
                        Ok(RunRequest::Questions { .. })
                    )
                })
                .map(|p| p.id)
                .collect();
            self.store.take_requests(&self.debate, &stale).await.ok();
        }
        let shown = RunRequest::Questions {
            questions: questions.iter().map(PendingQuestion::of).collect(),
        };
        let shown = match self
            .store
            .post_request(&self.debate, &shown.to_json())
            .await
        {
            Ok(id) => Some(id),
            Err(e) => {
                tracing::warn!(debate = %self.debate, error = %e, "the questions could not be posted; they are answered NA");
                return Ok(vec![String::new(); questions.len()]);
            }
        };
        if let Some(asked) = &self.asked {
            asked(questions);
        }
        let deadline = tokio::time::Instant::now() + self.wait;
        loop {
            match self.posted(&keys).await {
                Ok(Some((id, answers))) => {
                    let taken: Vec<u64> = std::iter::once(id).chain(shown).collect();
                    if let Err(e) = self.store.take_requests(&self.debate, &taken).await {
                        tracing::warn!(debate = %self.debate, error = %e, "answers used but not marked taken");
                    }
                    return Ok(answers);
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(debate = %self.debate, error = %e, "reading posted answers failed; trying again");
                }
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                if let Some(shown) = shown {
                    self.store.take_requests(&self.debate, &[shown]).await.ok();
                }
                tracing::info!(debate = %self.debate, "clarifying questions unanswered: NA");
                return Ok(vec![String::new(); questions.len()]);
            }
            tokio::time::sleep(agon_orchestrator::REQUEST_POLL.min(deadline - now)).await;
        }
    }
}
