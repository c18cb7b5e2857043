//! The listening agents' "should I respond?" answers (seed 002), converted
//! into the bids a deliberation turn is decided by.

use agon_core::{Bid, DebateEvent, PersonaId, StepId};
use agon_extract::ListenAnswer;
use chrono::{DateTime, Utc};

use crate::extract::{ModelOutput, extract, step_failed};

/// An agent's bid and the repairs validation made, or why it has none.
pub type Heard = Result<(Bid, Vec<String>), String>;

/// `agent`'s bid in a model's `output`, validated.
pub fn bid_from_output(agent: &PersonaId, output: ModelOutput) -> Heard {
    extract(output, |a: ListenAnswer| Ok(a.validate()))
        .map(|v| (v.value().bid(agent), v.notes().to_vec()))
        .map_err(|e| e.to_string())
}

/// The events of a listening step before turn `turn`: for an agent with
/// no usable answer a `step_failed` warning and a decline; for a repaired
/// answer an `output_repaired` record; then `speakers_evaluated` with
/// every bid, in the order asked.
pub fn listen_events(
    turn: u32,
    heard: Vec<(PersonaId, Heard)>,
    time: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let mut events = Vec::new();
    let mut bids = Vec::new();
    for (agent, answer) in heard {
        let step = StepId::Listen {
            turn,
            persona: agent.clone(),
        };
        match answer {
            Ok((bid, notes)) => {
                if !notes.is_empty() {
                    events.push(DebateEvent::OutputRepaired { step, notes });
                }
                bids.push(bid);
            }
            Err(reason) => {
                events.push(step_failed(
                    step,
                    format!("counted as a decline: {reason}"),
                    time,
                ));
                bids.push(Bid {
                    persona: agent,
                    respond: false,
                    urgency: 0,
                    reason: "evaluation failed".into(),
                });
            }
        }
    }
    events.push(DebateEvent::SpeakersEvaluated { turn, bids });
    events
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_failed_answer_is_a_decline_and_a_repaired_one_keeps_its_notes() {
        let ada = PersonaId::new("ada");
        let bo = PersonaId::new("bo");
        let heard = vec![
            (
                ada.clone(),
                bid_from_output(
                    &ada,
                    Ok(
                        serde_json::json!({"respond": true, "urgency": 42, "reason": "I was named."}),
                    ),
                ),
            ),
            (bo.clone(), Err("timed out".to_owned())),
        ];
        let events = listen_events(7, heard, DateTime::UNIX_EPOCH);
        let names: Vec<&str> = events.iter().map(DebateEvent::name).collect();
        assert_eq!(
            names,
            ["output_repaired", "step_failed", "speakers_evaluated"]
        );
        let DebateEvent::SpeakersEvaluated { turn, bids } = &events[2] else {
            unreachable!()
        };
        assert_eq!(*turn, 7);
        assert_eq!((bids[0].respond, bids[0].urgency), (true, 10), "clamped");
        assert_eq!((bids[1].respond, bids[1].urgency), (false, 0));
    }
}
