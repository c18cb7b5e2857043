//! Requests for a run recorded in the store: a note, a pause, a resume, a
//! stop or answers, posted by whichever process a person reaches (the
//! page, the API, `agon note`), taken by the process that holds the run's
//! lease before its next step. Only that process appends, so no request
//! interleaves with a step.

use std::sync::Arc;
use std::time::Duration;

use agon_core::DebateId;
use agon_protocol::{Question, Steer};
use agon_store::{EventStore, PostedRequest, StoreError};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::answers::{AnswerError, Answerer};

/// How often a waiting run (paused, waiting on background work, or on
/// answers) looks for requests posted by other processes. A run between
/// steps looks before each step.
pub const REQUEST_POLL: Duration = Duration::from_millis(250);

/// A request for a debate's run, as the store records it (JSON, tagged by
/// `kind`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RunRequest {
    /// A note every agent's next context shows.
    Note {
        /// The note.
        text: String,
        /// Who posts it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        author: Option<String>,
    },
    /// Run no further critical-path step until resumed.
    Pause {
        /// Who pauses.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// Go on after a pause.
    Resume {
        /// Who resumes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// Finish the current step, then stop (resumable).
    Stop {
        /// Who stops it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// The clarifying questions a run waits on (posted by the run, for
    /// the page, the API and `agon answer` of any process to show).
    Questions {
        /// The questions, in order.
        questions: Vec<PendingQuestion>,
    },
    /// Answers to the clarifying questions the debate waits on.
    Answers {
        /// The questions answered, as `agent/id` ([`question_key`]), in
        /// the order they were asked: answers meant for another round of
        /// questions are never taken for this one.
        questions: Vec<String>,
        /// One answer per question, in order (`""` for "NA").
        answers: Vec<String>,
    },
}

impl RunRequest {
    /// The steering request this is, if it is one.
    pub fn steer(&self) -> Option<Steer> {
        match self {
            Self::Note { text, author } => Some(Steer::Note {
                text: text.clone(),
                author: author.clone(),
            }),
            Self::Pause { by } => Some(Steer::Pause { by: by.clone() }),
            Self::Resume { by } => Some(Steer::Resume { by: by.clone() }),
            Self::Stop { .. } | Self::Questions { .. } | Self::Answers { .. } => None,
        }
    }

    /// The request a steering request is.
    pub fn from_steer(steer: Steer) -> Self {
        match steer {
            Steer::Note { text, author } => Self::Note { text, author },
            Steer::Pause { by } => Self::Pause { by },
            Steer::Resume { by } => Self::Resume { by },
        }
    }

    /// The request as the store records it.
    pub fn to_json(&self) -> serde_json::Value {
        // A plain enum of strings always serializes.
        serde_json::to_value(self).unwrap_or_default()
    }

    /// A recorded request, or why it cannot be read (a request written by
    /// a newer version, or by hand).
    pub fn of(posted: &PostedRequest) -> Result<Self, String> {
        serde_json::from_value(posted.body.clone()).map_err(|e| {
            format!(
                "debate `{}`: request #{} cannot be read: {e}",
                posted.debate, posted.id
            )
        })
    }
}

/// A clarifying question as the store records it while a run waits on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingQuestion {
    /// `agent/id`: what answers name it by ([`question_key`]).
    pub key: String,
    /// The agent who asks (its id).
    pub agent: String,
    /// Its display name.
    pub agent_name: String,
    /// Its role, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// `q1`, `q2`, … within the agent's questions.
    pub id: String,
    /// The question.
    pub text: String,
}

impl PendingQuestion {
    /// The question as recorded.
    pub fn of(question: &Question) -> Self {
        Self {
            key: question_key(question),
            agent: question.agent.to_string(),
            agent_name: question.agent_name.clone(),
            role: question.role.map(|r| r.as_str().to_owned()),
            id: question.id.clone(),
            text: question.text.clone(),
        }
    }
}

/// The questions `debate` waits on now, with the id of the request that
/// posted them (none when it waits on none).
pub async fn pending_questions(
    store: &dyn EventStore,
    debate: &DebateId,
) -> Result<Option<(u64, Vec<PendingQuestion>)>, StoreError> {
    let mut latest = None;
    for posted in store.pending_requests(debate).await? {
        if let Ok(RunRequest::Questions { questions }) = RunRequest::of(&posted) {
            latest = Some((posted.id, questions));
        }
    }
    Ok(latest)
}

/// How answers name a question: `agent/id` (`agent-architect/q1`).
pub fn question_key(question: &Question) -> String {
    format!("{}/{}", question.agent, question.id)
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
            if let Ok(RunRequest::Answers { questions, answers }) = RunRequest::of(&posted)
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
                .filter(|p| matches!(RunRequest::of(p), Ok(RunRequest::Questions { .. })))
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
            tokio::time::sleep(REQUEST_POLL.min(deadline - now)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_read_back_as_written_and_junk_is_named() {
        for request in [
            RunRequest::Note {
                text: "cite sources".into(),
                author: Some("Ann".into()),
            },
            RunRequest::Pause { by: None },
            RunRequest::Resume {
                by: Some("Bo".into()),
            },
            RunRequest::Stop { by: None },
            RunRequest::Answers {
                questions: vec!["a/q1".into()],
                answers: vec!["yes".into()],
            },
            RunRequest::Questions {
                questions: vec![PendingQuestion {
                    key: "a/q1".into(),
                    agent: "a".into(),
                    agent_name: "Ann".into(),
                    role: Some("architect".into()),
                    id: "q1".into(),
                    text: "Read-heavy?".into(),
                }],
            },
        ] {
            let posted = PostedRequest {
                id: 7,
                debate: DebateId::new("d-1"),
                body: request.to_json(),
                posted_at: chrono::DateTime::UNIX_EPOCH,
            };
            assert_eq!(RunRequest::of(&posted), Ok(request));
        }
        let junk = PostedRequest {
            id: 8,
            debate: DebateId::new("d-1"),
            body: serde_json::json!({"kind": "explode"}),
            posted_at: chrono::DateTime::UNIX_EPOCH,
        };
        let error = RunRequest::of(&junk).unwrap_err();
        assert!(error.contains("d-1") && error.contains("#8"), "{error}");
    }

    #[test]
    fn only_steering_requests_become_steering() {
        assert_eq!(
            RunRequest::Note {
                text: "x".into(),
                author: None
            }
            .steer(),
            Some(Steer::Note {
                text: "x".into(),
                author: None
            })
        );
        assert_eq!(RunRequest::Stop { by: None }.steer(), None);
        assert_eq!(
            RunRequest::from_steer(Steer::Pause { by: None }),
            RunRequest::Pause { by: None }
        );
    }
}
