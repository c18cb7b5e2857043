//! Answers to clarifying questions from a JSON file (`--answers FILE`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agon_orchestrator::{AnswerError, Answerer, Question};
use async_trait::async_trait;

/// Answers from a JSON file: an object whose keys name an agent (its id,
/// name or role) and whose values list the answers to its questions in
/// order, across clarification rounds (`""` or `null` for "NA"): a
/// follow-up round's questions read the list after the answers the
/// earlier rounds used. An agent the file does not list, or questions
/// beyond its answers, get "NA"; a key that names no agent with questions
/// is an error that names the field.
///
/// ```json
/// { "architect": ["80% reads", ""], "agent-performance": ["p95 < 10 ms"] }
/// ```
#[derive(Debug, Clone)]
pub struct AnswersFile {
    path: PathBuf,
    answers: BTreeMap<String, Vec<Option<String>>>,
}

impl AnswersFile {
    /// Reads and parses the file.
    pub fn load(path: &Path) -> Result<Self, AnswerError> {
        let source_name = path.display().to_string();
        let err = |reason: String| AnswerError {
            source_name: source_name.clone(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(format!("cannot read: {e}")))?;
        let answers: BTreeMap<String, Vec<Option<String>>> = serde_path_to_error::deserialize(
            &mut serde_json::Deserializer::from_str(&text),
        )
        .map_err(|e| {
            let at = e.path().to_string();
            let e = e.into_inner();
            err(format!(
                "field `{at}` (line {}): {e} (expected an object of agent → list of answers)",
                e.line()
            ))
        })?;
        Ok(Self {
            path: path.to_owned(),
            answers,
        })
    }
}

fn names(key: &str, q: &Question) -> bool {
    let key = key.trim().to_ascii_lowercase();
    key == q.agent.as_str().to_ascii_lowercase()
        || key == q.agent_name.to_ascii_lowercase()
        || q.role.is_some_and(|r| r.as_str() == key)
}

#[async_trait]
impl Answerer for AnswersFile {
    async fn answer(&self, questions: &[Question]) -> Result<Vec<String>, AnswerError> {
        let err = |reason: String| AnswerError {
            source_name: self.path.display().to_string(),
            reason,
        };
        for (key, list) in &self.answers {
            if !questions.iter().any(|q| names(key, q)) && !list.is_empty() {
                let agents: Vec<&str> = questions.iter().map(|q| q.agent.as_str()).collect();
                return Err(err(format!(
                    "field `{key}`: no agent asked questions under that id, name or role \
                     (agents with questions: {})",
                    if agents.is_empty() {
                        "none".to_owned()
                    } else {
                        agents.join(", ")
                    }
                )));
            }
        }
        Ok(questions
            .iter()
            .map(|q| {
                self.answers
                    .iter()
                    .find(|(key, _)| names(key, q))
                    .and_then(|(_, list)| list.get(q.number.saturating_sub(1)).cloned().flatten())
                    .unwrap_or_default()
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn q(agent: &str, role: &str, n: usize) -> Question {
        Question {
            agent: agent.into(),
            agent_name: format!("{role} agent"),
            role: role.parse().ok(),
            id: format!("q{n}"),
            number: n,
            text: format!("Question {n}?"),
        }
    }

    #[tokio::test]
    async fn answers_match_by_id_name_or_role_and_missing_ones_are_na() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("answers.json");
        std::fs::write(
            &path,
            r#"{"architect": ["80% reads", null], "agent-perf": ["fast"]}"#,
        )
        .unwrap();
        let file = AnswersFile::load(&path).unwrap();
        let qs = [
            q("agent-arch", "architect", 1),
            q("agent-arch", "architect", 2),
            q("agent-arch", "architect", 3),
            q("agent-perf", "performance", 1),
        ];
        let answers = file.answer(&qs).await.unwrap();
        assert_eq!(answers, ["80% reads", "", "", "fast"]);
    }

    #[tokio::test]
    async fn unknown_agents_and_extra_answers_are_errors_naming_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        std::fs::write(&path, r#"{"security": ["x"]}"#).unwrap();
        let e = AnswersFile::load(&path)
            .unwrap()
            .answer(&[q("agent-arch", "architect", 1)])
            .await
            .unwrap_err();
        assert!(e.to_string().contains("field `security`"), "{e}");
        // Answers beyond a round's questions answer the follow-ups.
        std::fs::write(&path, r#"{"architect": ["a", "b", null, "d"]}"#).unwrap();
        let file = AnswersFile::load(&path).unwrap();
        let first = file
            .answer(&[q("agent-arch", "architect", 1)])
            .await
            .unwrap();
        assert_eq!(first, ["a"]);
        let follow_up = [
            q("agent-arch", "architect", 2),
            q("agent-arch", "architect", 3),
            q("agent-arch", "architect", 4),
            q("agent-arch", "architect", 5),
        ];
        assert_eq!(file.answer(&follow_up).await.unwrap(), ["b", "", "d", ""]);
        std::fs::write(&path, "[1,").unwrap();
        let e = AnswersFile::load(&path).unwrap_err();
        assert!(
            e.to_string().contains("a.json") && e.to_string().contains("line"),
            "{e}"
        );
    }
}
