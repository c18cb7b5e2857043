//! Dialectic's clarifying questions (seed 004), converted into events: the
//! questions each agent asked, the answers a person gave ("NA" when none),
//! the repairs validation made, and the round that follows.

use agon_core::{DebateEvent, DialogueMessage, MessageId, MessageKind, PersonaId, StepId};
use agon_extract::ClarifyingQuestions;
use chrono::{DateTime, Utc};

use crate::extract::{ModelOutput, extract, step_failed};

/// What an agent asked: its questions and the repairs validation made, or
/// why it asked nothing usable.
pub type Asked = Result<(Vec<String>, Vec<String>), String>;

/// The questions in a model's `output` (at most `max`), validated.
pub fn questions_from_output(output: ModelOutput, max: usize) -> Asked {
    extract(output, |q: ClarifyingQuestions| Ok(q.validate(max)))
        .map(|v| (v.value().questions.clone(), v.notes().to_vec()))
        .map_err(|e| e.to_string())
}

/// The events of a clarification round: a `step_failed` warning for each
/// agent that asked nothing usable, an `output_repaired` record for each
/// whose questions were repaired, each question with its answer (in the
/// order asked; a missing or blank answer is "NA", as in dialectic),
/// `clarification_round_ended`, then round 1 when no follow-up round
/// comes: `(round, last)` names the clarification round and whether it is
/// the last one allowed (a round in which nobody asked anything is the
/// last too). `messages` is the transcript's length before them.
pub fn clarification_events(
    messages: usize,
    asked: &[(PersonaId, Asked)],
    answers: &[String],
    (round, last): (u32, bool),
    time: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let mut events = Vec::new();
    for (agent, result) in asked {
        match result {
            Err(reason) => events.push(step_failed(
                StepId::Clarification(agent.clone()),
                format!("no clarifying questions: {reason}"),
                time,
            )),
            Ok((_, notes)) if !notes.is_empty() => events.push(DebateEvent::OutputRepaired {
                step: StepId::Clarification(agent.clone()),
                notes: notes.clone(),
            }),
            Ok(_) => {}
        }
    }
    let mut n = messages;
    let mut message = |persona: &PersonaId, kind, content: String, reply_to| {
        n += 1;
        DialogueMessage {
            id: MessageId::numbered(n),
            persona: persona.clone(),
            kind,
            aspect: None,
            round: 0,
            miniround: None,
            crux_room: None,
            content,
            time,
            reply_to,
            meta: None,
        }
    };
    let questions = asked
        .iter()
        .filter_map(|(agent, r)| Some((agent, &r.as_ref().ok()?.0)))
        .flat_map(|(agent, qs)| qs.iter().map(move |q| (agent, q)));
    let mut answers = answers.iter();
    let mut asked_count = 0u32;
    for (agent, text) in questions {
        asked_count += 1;
        let question = message(
            agent,
            MessageKind::ClarificationQuestion,
            text.clone(),
            None,
        );
        let answer = answers.next().map_or("", |a| a.trim());
        let answer = if answer.is_empty() { "NA" } else { answer };
        let reply = message(
            agent,
            MessageKind::ClarificationAnswer,
            answer.to_owned(),
            Some(question.id.clone()),
        );
        events.push(DebateEvent::MessageAppended { message: question });
        events.push(DebateEvent::MessageAppended { message: reply });
    }
    events.push(DebateEvent::ClarificationRoundEnded {
        round,
        questions: asked_count,
    });
    if last || asked_count == 0 {
        events.push(DebateEvent::RoundStarted { round: 1 });
    }
    events
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn questions_pair_with_answers_blank_ones_are_na_and_repairs_are_kept() {
        let long = "q".repeat(2_000);
        let asked = vec![
            (
                PersonaId::new("a"),
                questions_from_output(
                    Ok(serde_json::json!({"questions": ["Which load?", long]})),
                    5,
                ),
            ),
            (PersonaId::new("b"), Err("model failed".to_owned())),
        ];
        assert!(
            !asked[0].1.as_ref().unwrap().1.is_empty(),
            "the long question was cut, with a note"
        );
        let events = clarification_events(
            0,
            &asked,
            &["10k/s".into(), " ".into()],
            (1, true),
            DateTime::UNIX_EPOCH,
        );
        let names: Vec<&str> = events.iter().map(DebateEvent::name).collect();
        assert_eq!(
            names,
            [
                "output_repaired",
                "step_failed",
                "message_appended",
                "message_appended",
                "message_appended",
                "message_appended",
                "clarification_round_ended",
                "round_started"
            ]
        );
        let texts: Vec<(String, String)> = events
            .iter()
            .filter_map(|e| match e {
                DebateEvent::MessageAppended { message } => {
                    Some((message.id.to_string(), message.content.clone()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(texts[0], ("msg-1".into(), "Which load?".into()));
        assert_eq!(texts[1], ("msg-2".into(), "10k/s".into()));
        assert_eq!(texts[3].1, "NA", "a blank answer is NA");
        // Not the last round: no round 1 yet, a follow-up may come.
        let events = clarification_events(4, &asked, &[], (1, false), DateTime::UNIX_EPOCH);
        assert_eq!(
            events.last(),
            Some(&DebateEvent::ClarificationRoundEnded {
                round: 1,
                questions: 2
            })
        );
        // Nobody asked anything: the last round whatever the limit.
        let none = vec![(PersonaId::new("a"), Ok((Vec::new(), Vec::new())))];
        let events = clarification_events(8, &none, &[], (2, false), DateTime::UNIX_EPOCH);
        let names: Vec<&str> = events.iter().map(DebateEvent::name).collect();
        assert_eq!(names, ["clarification_round_ended", "round_started"]);
    }
}
