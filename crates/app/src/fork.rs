//! Fork: a new debate whose log is a prefix of another's, to run on with
//! other settings (another model, a note, more rounds). The log is the
//! state, so going back to any event is a copy, not a feature of each
//! protocol.

use agon_config::Overrides;
use agon_core::{DebateEvent, DebateId};
use agon_store::{NewDebate, StoreError, StoredEvent};
use serde::Serialize;

use crate::{App, AppError};

/// A fork made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Forked {
    /// The new debate.
    pub id: DebateId,
    /// The debate it was copied from.
    pub from: DebateId,
    /// The last event of `from` it copied.
    pub seq: u64,
}

/// Where two debates part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergence {
    /// The events both logs hold identically, from the start.
    pub common_events: u64,
    /// The messages both transcripts hold alike (same speaker, kind and
    /// text), from the start.
    pub common_messages: usize,
    /// The first message where they part, in each (`None`: that
    /// transcript ends there).
    pub first: Option<(Option<PartedMessage>, Option<PartedMessage>)>,
}

/// A message where two transcripts part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartedMessage {
    /// Its position in the transcript (1-based).
    pub index: usize,
    /// Its speaker's name.
    pub speaker: String,
    /// What kind of message it is.
    pub kind: String,
    /// Its text.
    pub text: String,
}

/// The default fork point of a log: just before its last step, that is
/// before the event that appended its last message (0 when it has none),
/// so the fork runs that step again.
pub fn default_fork_point(events: &[StoredEvent]) -> u64 {
    events
        .iter()
        .rev()
        .find(|e| matches!(e.event, DebateEvent::MessageAppended { .. }))
        .map_or(0, |e| e.seq - 1)
}

impl App {
    /// Forks `id` at `at` (default [`default_fork_point`]): a new debate
    /// whose log is `id`'s events up to and including `at`, with `id`'s
    /// configuration and `overrides` laid over it (checked: a setting of
    /// another protocol is refused, naming it). It records where it came
    /// from and is run on by a resume.
    pub async fn fork(
        &self,
        id: &DebateId,
        at: Option<u64>,
        overrides: &Overrides,
    ) -> Result<Forked, AppError> {
        let record = self.store().debate(id).await?;
        let seq = match at {
            Some(seq) => seq,
            None => default_fork_point(&self.store().events_after(id, 0).await?),
        };
        if seq > record.last_seq {
            return Err(AppError::invalid(
                id,
                format!(
                    "--at {seq}: it has {} events; fork at 0..={}",
                    record.last_seq, record.last_seq
                ),
            ));
        }
        let mut config = self.orchestrator().config_of(id).await?;
        config
            .apply(overrides)
            .map_err(|e| AppError::invalid(id, e.to_string()))?;
        config
            .validate("<config>")
            .map_err(|e| AppError::invalid(id, e.to_string()))?;
        let value = serde_json::to_value(&config)
            .map_err(|e| AppError::invalid(id, format!("its configuration: {e}")))?;
        // An id drawn from the second and 16 random bits: drawn again when
        // another process took it in the same second.
        let mut attempts = 0;
        loop {
            let new = NewDebate {
                id: agon_orchestrator::new_debate_id(),
                topic: config.topic.clone(),
                config: value.clone(),
            };
            match self.store().fork_debate(&new, id, seq).await {
                Ok(record) => {
                    return Ok(Forked {
                        id: record.id,
                        from: id.clone(),
                        seq,
                    });
                }
                Err(StoreError::DebateExists { .. }) if attempts < 8 => attempts += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Where debates `a` and `b` part: the events they share from the
    /// start, and the first message each says differently.
    pub async fn divergence(&self, a: &DebateId, b: &DebateId) -> Result<Divergence, AppError> {
        let left = self.store().events_after(a, 0).await?;
        let right = self.store().events_after(b, 0).await?;
        let common_events = left
            .iter()
            .zip(&right)
            .take_while(|(l, r)| l.event == r.event)
            .count() as u64;
        let (board_a, _) = self.store().load(a).await?;
        let (board_b, _) = self.store().load(b).await?;
        let said = |board: &agon_core::Blackboard| -> Vec<PartedMessage> {
            board
                .messages()
                .iter()
                .enumerate()
                .map(|(i, m)| PartedMessage {
                    index: i + 1,
                    speaker: board.persona_name(&m.persona).to_owned(),
                    kind: m.kind.label().to_owned(),
                    text: m.content.trim().to_owned(),
                })
                .collect()
        };
        let (said_a, said_b) = (said(&board_a), said(&board_b));
        let alike = |l: &PartedMessage, r: &PartedMessage| {
            (l.speaker.as_str(), l.kind.as_str(), l.text.as_str())
                == (r.speaker.as_str(), r.kind.as_str(), r.text.as_str())
        };
        let common_messages = said_a
            .iter()
            .zip(&said_b)
            .take_while(|(l, r)| alike(l, r))
            .count();
        let first = (common_messages < said_a.len().max(said_b.len())).then(|| {
            (
                said_a.get(common_messages).cloned(),
                said_b.get(common_messages).cloned(),
            )
        });
        Ok(Divergence {
            common_events,
            common_messages,
            first,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(seq: u64, event: DebateEvent) -> StoredEvent {
        StoredEvent { seq, event }
    }

    #[test]
    fn the_default_fork_point_is_just_before_the_last_message() {
        let note = |seq| {
            stored(
                seq,
                DebateEvent::FeedbackRecorded {
                    value: 1,
                    time: chrono::DateTime::UNIX_EPOCH,
                },
            )
        };
        assert_eq!(default_fork_point(&[]), 0);
        assert_eq!(default_fork_point(&[note(1), note(2)]), 0);
        let message = |seq| {
            let json = serde_json::json!({
                "type": "message_appended",
                "message": {
                    "id": format!("m{seq}"), "persona": "p", "kind": "opening",
                    "round": 0, "content": "text", "time": "2026-01-01T00:00:00Z"
                }
            });
            stored(
                seq,
                serde_json::from_value(json).unwrap_or_else(|e| panic!("{e}")),
            )
        };
        assert_eq!(
            default_fork_point(&[note(1), message(2), note(3), message(4), note(5)]),
            3
        );
    }
}
