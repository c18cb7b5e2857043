//! Clarifying questions as the API shows them. A run, in whatever
//! process, posts the questions it waits on to the store; a person answers
//! them here (`POST /api/debates/{id}/answers`) or wherever else, until
//! the wait runs out (then every answer is "NA", as dialectic does when
//! nobody answers).

use agon_app::PendingQuestion;
use serde_json::{Value, json};

/// Questions as the API shows them.
pub(crate) fn questions_json(questions: &[PendingQuestion]) -> Value {
    json!({
        "questions": questions
            .iter()
            .map(|q| json!({
                "agent": q.agent,
                "agent_name": q.agent_name,
                "role": q.role,
                "id": q.id,
                "text": q.text,
            }))
            .collect::<Vec<_>>()
    })
}
