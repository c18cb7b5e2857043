//! Requests for a debate's run, as the store records them: a note, a
//! pause, a resume, a stop or answers posted by whichever process a person
//! reaches, and the clarifying questions a run waits on. The process that
//! holds the run's lease takes them before its next step; only it
//! appends, so no request interleaves with a step.

use serde::{Deserialize, Serialize};

use crate::{Question, Steer};

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

    /// A recorded request (its body, and its id in debate `debate`'s
    /// requests), or why it cannot be read (a request written by a newer
    /// version, or by hand).
    pub fn read(body: &serde_json::Value, debate: &str, id: u64) -> Result<Self, String> {
        serde_json::from_value(body.clone())
            .map_err(|e| format!("debate `{debate}`: request #{id} cannot be read: {e}"))
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

/// How answers name a question: `agent/id` (`agent-architect/q1`).
pub fn question_key(question: &Question) -> String {
    format!("{}/{}", question.agent, question.id)
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
            assert_eq!(RunRequest::read(&request.to_json(), "d-1", 7), Ok(request));
        }
        let error =
            RunRequest::read(&serde_json::json!({"kind": "explode"}), "d-1", 8).unwrap_err();
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
