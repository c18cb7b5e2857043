//! A debate-state JSON that dialectic itself wrote (`DebateState`:
//! `id`, `problem`, `context`, `status`, `rounds[].contributions`,
//! `clarifications`, `finalSolution`), read back as Agon's events, so
//! `agon report --debate FILE` and the views render it as they render a
//! stored debate. Pure: the caller reads the file.

use agon_core::{
    AgentRole, DebateEvent, DialogueMessage, MessageId, MessageKind, MessageMeta, Persona,
    PersonaId, PersonaRole, ProtocolKind, Solution, Topic,
};
use chrono::{DateTime, Utc};
use serde_json::Value;

/// Why a debate-state JSON could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {field}: {reason}")]
pub struct ImportError {
    /// The file.
    pub file: String,
    /// The field, as a JSON path (`rounds[1].contributions[0].type`).
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

struct Reader<'a> {
    file: &'a str,
}

impl Reader<'_> {
    fn error(&self, field: impl Into<String>, reason: impl Into<String>) -> ImportError {
        ImportError {
            file: self.file.to_owned(),
            field: field.into(),
            reason: reason.into(),
        }
    }

    fn text<'v>(&self, value: &'v Value, key: &str, at: &str) -> Result<&'v str, ImportError> {
        value
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| self.error(format!("{at}{key}"), "missing or not a non-empty string"))
    }
}

fn time(value: Option<&Value>) -> DateTime<Utc> {
    value
        .and_then(Value::as_str)
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map_or(DateTime::UNIX_EPOCH, |t| t.with_timezone(&Utc))
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(ToOwned::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The agents of the state, in the order they first appear (with their
/// roles), and the judge.
fn personas(state: &Value, r: &Reader<'_>) -> Result<Vec<Persona>, ImportError> {
    let mut agents: Vec<Persona> = Vec::new();
    let mut add = |id: &str, role: Option<&str>, name: Option<&str>| {
        if id.trim().is_empty() || agents.iter().any(|p| p.id.as_str() == id) {
            return;
        }
        let specialty = role.and_then(|r| r.parse::<AgentRole>().ok());
        // As dialectic's report without a configuration: the agent's id.
        let name = name.unwrap_or(id);
        let mut persona = Persona::debater(id, name, role.unwrap_or("generalist"), "");
        persona.specialty = Some(specialty.unwrap_or(AgentRole::Generalist));
        agents.push(persona);
    };
    for group in state
        .get("clarifications")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(id) = group.get("agentId").and_then(Value::as_str) {
            add(
                id,
                group.get("role").and_then(Value::as_str),
                group.get("agentName").and_then(Value::as_str),
            );
        }
    }
    for (i, round) in rounds(state, r)?.iter().enumerate() {
        for (j, c) in contributions(round, i, r)?.iter().enumerate() {
            let at = format!("rounds[{i}].contributions[{j}].");
            add(
                r.text(c, "agentId", &at)?,
                c.get("agentRole").and_then(Value::as_str),
                None,
            );
        }
    }
    if agents.is_empty() {
        return Err(r.error("rounds", "no contribution names an agent"));
    }
    if let Some(judge) = state
        .get("finalSolution")
        .and_then(|s| s.get("synthesizedBy"))
        .and_then(Value::as_str)
        .filter(|j| !j.trim().is_empty())
    {
        agents.push(Persona {
            role: PersonaRole::Judge,
            ..Persona::debater(judge, "Judge", "Synthesizes the solution.", "")
        });
    }
    Ok(agents)
}

fn rounds<'v>(state: &'v Value, r: &Reader<'_>) -> Result<&'v [Value], ImportError> {
    match state.get("rounds") {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(rounds)) => Ok(rounds),
        Some(_) => Err(r.error("rounds", "not an array")),
    }
}

fn contributions<'v>(
    round: &'v Value,
    i: usize,
    r: &Reader<'_>,
) -> Result<&'v [Value], ImportError> {
    match round.get("contributions") {
        Some(Value::Array(c)) => Ok(c),
        _ => Err(r.error(
            format!("rounds[{i}].contributions"),
            "missing or not an array",
        )),
    }
}

/// The contribution's metadata; dialectic's `tokensUsed` is a total, kept
/// as the output tokens with no input tokens (the report then shows one
/// number).
fn meta(c: &Value) -> Option<MessageMeta> {
    let meta = c.get("metadata")?;
    let model = meta.get("model").and_then(Value::as_str)?;
    Some(MessageMeta {
        model: model.to_owned(),
        latency_ms: meta.get("latencyMs").and_then(Value::as_u64).unwrap_or(0),
        input_tokens: 0,
        output_tokens: meta.get("tokensUsed").and_then(Value::as_u64).unwrap_or(0),
        truncated: false,
    })
}

/// The events of dialectic's saved debate state `state` (read from
/// `file`, named in errors): the start, the clarifications, each round's
/// proposals, critiques and refinements, the final solution, and the end
/// when the debate completed.
pub fn dialectic_state_events(state: &Value, file: &str) -> Result<Vec<DebateEvent>, ImportError> {
    let r = Reader { file };
    let problem = r.text(state, "problem", "")?;
    let created = time(state.get("createdAt"));
    let debate = state
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or("imported")
        .to_owned();
    let mut topic = Topic::new(problem);
    topic.context = state
        .get("context")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
        .map(ToOwned::to_owned);
    let personas = personas(state, &r)?;
    let mut events = vec![DebateEvent::DebateStarted {
        debate: debate.as_str().into(),
        topic,
        aspects: Vec::new(),
        personas,
        time: created,
        protocol: Some(ProtocolKind::Dialectic),
    }];

    // Clarifications, paired as Agon records them (they open round 1).
    let mut asked: Vec<(PersonaId, agon_protocol::clarify::Asked)> = Vec::new();
    let mut answers = Vec::new();
    for (g, group) in state
        .get("clarifications")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let agent = r.text(group, "agentId", &format!("clarifications[{g}]."))?;
        let mut questions = Vec::new();
        for (k, item) in group
            .get("items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("clarifications[{g}].items[{k}].");
            questions.push(r.text(item, "question", &at)?.to_owned());
            answers.push(
                item.get("answer")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            );
        }
        asked.push((agent.into(), Ok((questions, Vec::new()))));
    }
    let rounds = rounds(state, &r)?;
    if asked.is_empty() {
        if !rounds.is_empty() {
            events.push(DebateEvent::RoundStarted { round: 1 });
        }
    } else {
        events.extend(agon_protocol::clarify::clarification_events(
            0,
            &asked,
            &answers,
            (1, true),
            created,
        ));
    }
    let mut n = events
        .iter()
        .filter(|e| matches!(e, DebateEvent::MessageAppended { .. }))
        .count();

    for (i, round) in rounds.iter().enumerate() {
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        if i > 0 {
            events.push(DebateEvent::RoundStarted { round: number });
        }
        let at_round = time(round.get("timestamp"));
        for (j, c) in contributions(round, i, &r)?.iter().enumerate() {
            let at = format!("rounds[{i}].contributions[{j}].");
            let kind = match r.text(c, "type", &at)? {
                "proposal" => MessageKind::Proposal,
                "refinement" => MessageKind::Refinement,
                "critique" => MessageKind::Critique {
                    target: r.text(c, "targetAgentId", &at)?.into(),
                },
                other => {
                    return Err(r.error(
                        format!("{at}type"),
                        format!("`{other}` is not proposal, critique or refinement"),
                    ));
                }
            };
            n += 1;
            events.push(DebateEvent::MessageAppended {
                message: DialogueMessage {
                    id: MessageId::numbered(n),
                    persona: r.text(c, "agentId", &at)?.into(),
                    kind,
                    aspect: None,
                    round: number,
                    miniround: None,
                    crux_room: None,
                    content: c
                        .get("content")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    time: at_round,
                    reply_to: None,
                    meta: meta(c),
                },
            });
        }
    }

    if let Some(solution) = state.get("finalSolution").filter(|s| !s.is_null()) {
        let judge = r.text(solution, "synthesizedBy", "finalSolution.")?;
        let confidence = solution
            .get("confidence")
            .and_then(Value::as_f64)
            .map(|c| c.clamp(0.0, 100.0).round() as u8);
        events.push(DebateEvent::SolutionRecorded {
            solution: Solution {
                round: u32::try_from(rounds.len()).unwrap_or(u32::MAX),
                description: r
                    .text(solution, "description", "finalSolution.")?
                    .to_owned(),
                tradeoffs: strings(solution.get("tradeoffs")),
                recommendations: strings(solution.get("recommendations")),
                confidence,
                unfinished_requirements: strings(solution.get("unfinishedRequirements")),
                unfulfilled_major_requirements: strings(
                    solution.get("unfulfilledMajorRequirements"),
                ),
                open_questions: strings(solution.get("openQuestions")),
                unverified_requirements: Vec::new(),
                synthesized_by: judge.into(),
                time: time(state.get("updatedAt")),
            },
        });
    }
    if state.get("status").and_then(Value::as_str) == Some("completed") {
        events.push(DebateEvent::DebateFinished {
            time: time(state.get("updatedAt")),
        });
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn state() -> Value {
        json!({
            "id": "deb-1",
            "problem": "Design a cache.",
            "status": "completed",
            "rounds": [{"roundNumber": 1, "contributions": [
                {"agentId": "a1", "agentRole": "architect", "type": "proposal", "content": "LRU."},
                {"agentId": "a2", "agentRole": "kiss", "type": "proposal", "content": "A map."},
                {"agentId": "a1", "agentRole": "architect", "type": "critique", "targetAgentId": "a2", "content": "Unbounded."}
            ]}],
            "finalSolution": {"description": "LRU with a size bound.", "confidence": 180.0, "synthesizedBy": "judge-main"}
        })
    }

    #[test]
    fn a_saved_state_replays_as_a_finished_dialectic_debate() {
        let events = dialectic_state_events(&state(), "s.json").unwrap();
        let board = agon_core::Blackboard::replay(&events).unwrap();
        assert_eq!(board.protocol(), ProtocolKind::Dialectic);
        assert_eq!(board.messages().len(), 3);
        assert_eq!(board.persona_name(&"a2".into()), "a2");
        let solution = board.solution().unwrap();
        assert_eq!(solution.confidence, Some(100), "clamped");
        assert_eq!(board.status(), agon_core::DebateStatus::Finished);
    }

    #[test]
    fn a_broken_state_names_the_file_and_the_field() {
        let mut no_problem = state();
        no_problem["problem"] = json!("  ");
        assert_eq!(
            dialectic_state_events(&no_problem, "s.json")
                .unwrap_err()
                .to_string(),
            "s.json: problem: missing or not a non-empty string"
        );
        let mut untargeted = state();
        untargeted["rounds"][0]["contributions"][2]
            .as_object_mut()
            .unwrap()
            .remove("targetAgentId");
        assert_eq!(
            dialectic_state_events(&untargeted, "s.json")
                .unwrap_err()
                .field,
            "rounds[0].contributions[2].targetAgentId"
        );
        let mut no_rounds = state();
        no_rounds["rounds"] = json!("many");
        assert_eq!(
            dialectic_state_events(&no_rounds, "s.json")
                .unwrap_err()
                .field,
            "rounds"
        );
    }
}
