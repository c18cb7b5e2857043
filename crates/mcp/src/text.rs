//! What the tools say: a debate's status, its report, a recall and the
//! list of debates, as text a calling model reads.

use std::fmt::Write as _;

use agon_app::{App, AppError};
use agon_core::DebateId;
use agon_store::DebateRecord;

use crate::ReportFormat;

/// Where a debate stands.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Status {
    /// The debate.
    pub id: DebateId,
    /// Its run status (`running`, `finished`, …).
    pub status: String,
    /// Messages so far.
    pub messages: u64,
    /// Its progress as the protocol plans it ("round 2/3 · critiques").
    pub progress: String,
    /// The contributions it is planned to have, when known.
    pub planned: Option<u64>,
    /// The clarifying questions it waits on, one a line, numbered.
    pub questions: Option<String>,
    /// Its topic.
    pub topic: String,
}

impl Status {
    /// One line: `debate ID: STATUS · PROGRESS · N messages`.
    pub(crate) fn line(&self) -> String {
        let mut line = format!("debate {}: {}", self.id, self.status);
        if !self.progress.is_empty() {
            let _ = write!(line, " · {}", self.progress);
        }
        let _ = write!(line, " · {} messages", self.messages);
        if let Some(planned) = self.planned {
            let _ = write!(line, " of {planned} planned");
        }
        line
    }

    /// The line, the topic and the questions it waits on.
    pub(crate) fn describe(&self) -> String {
        let mut text = format!("{}\ntopic: {}", self.line(), self.topic);
        if let Some(questions) = &self.questions {
            let _ = write!(
                text,
                "\nwaits for answers (answer_questions, one per question, in order):\n{questions}"
            );
        }
        text
    }
}

/// `id`'s status, read from the store (wherever it runs).
pub(crate) async fn status(app: &App, id: &DebateId) -> Result<Status, AppError> {
    let record = app.store().debate(id).await?;
    let (board, _) = app.store().load(id).await?;
    let config = app.orchestrator().config_of(id).await?;
    let plan = config.protocol().next(&board);
    let questions = app.questions(id).await?;
    let questions = (!questions.is_empty()).then(|| {
        questions
            .iter()
            .enumerate()
            .map(|(i, q)| format!("{}. {} asks: {}", i + 1, q.agent_name, q.text))
            .collect::<Vec<_>>()
            .join("\n")
    });
    Ok(Status {
        id: id.clone(),
        status: record.status.as_str().to_owned(),
        messages: record.message_count,
        progress: plan.progress.describe(),
        planned: plan.progress.contributions,
        questions,
        topic: record.topic,
    })
}

/// `id`'s report in `format`.
pub(crate) async fn report(
    app: &App,
    id: &DebateId,
    format: ReportFormat,
) -> Result<String, AppError> {
    let view = app
        .report_view(id, agon_view::ReportOptions::default())
        .await?;
    Ok(match format {
        ReportFormat::Markdown => view.markdown(),
        ReportFormat::Json => serde_json::to_string_pretty(&view.json()).unwrap_or_default(),
    })
}

/// A recall, one memory a line, best first, with its notes.
pub(crate) fn recall(recall: &agon_memory::Recall) -> String {
    let mut text = String::new();
    for (i, hit) in recall.memories.iter().enumerate() {
        let m = &hit.memory;
        let _ = writeln!(
            text,
            "{}. [score {:.2}] ({}, debate {}, round {}) {}",
            i + 1,
            hit.score,
            m.persona,
            m.debate,
            m.round,
            // Its relative times with their dates ("last Friday (12 May 2023)").
            agon_memory::dates::annotated(&m.content, m.created.date_naive())
        );
        if let Some(successor) = &hit.successor {
            let _ = writeln!(text, "   [{}]", successor.note());
        }
    }
    if recall.memories.is_empty() {
        text.push_str("No memory matched.\n");
    }
    for note in &recall.notes {
        let _ = writeln!(text, "note: {note}");
    }
    text
}

/// The debates, one a line.
pub(crate) fn list(debates: &[DebateRecord]) -> String {
    if debates.is_empty() {
        return "No debates yet.".into();
    }
    debates
        .iter()
        .map(|d| {
            let protocol = d
                .config
                .get("protocol")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("structured");
            format!(
                "{} · {} · {protocol} · {} messages · {}",
                d.id,
                d.status.as_str(),
                d.message_count,
                d.topic
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    #[test]
    fn a_recalled_memory_shows_its_relative_times_with_their_dates() {
        let recall: agon_memory::Recall = serde_json::from_value(json!({
            "memories": [{
                "memory": {
                    "id": "d/1", "debate": "d", "persona": "mara",
                    "content": "The council voted last Friday.",
                    "kind": "message", "importance": 5, "round": 2,
                    "created": "2023-05-15T10:00:00Z"
                },
                "score": 0.9, "recency": 1.0, "relevance": 1.0,
                "importance": 0.5, "similarity": 0.7, "lexical": 1.2
            }],
            "notes": []
        }))
        .unwrap();
        assert_eq!(
            super::recall(&recall),
            "1. [score 0.90] (mara, debate d, round 2) The council voted last Friday (12 May 2023).\n"
        );
    }
}
