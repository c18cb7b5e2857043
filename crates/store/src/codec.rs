//! Event and snapshot (de)serialization with errors that name the row.

use agon_core::{Blackboard, DebateEvent};
use serde_json::Value;

use crate::error::StoreError;

/// Decodes one event row; an unknown event type is
/// [`StoreError::NewerVersion`], anything else undecodable is
/// [`StoreError::CorruptEvent`].
pub(crate) fn decode_event(
    debate: &str,
    seq: u64,
    kind: &str,
    payload: Value,
) -> Result<DebateEvent, StoreError> {
    serde_json::from_value(payload).map_err(|e| {
        let message = e.to_string();
        if message.contains("unknown variant") {
            StoreError::NewerVersion {
                debate: debate.to_owned(),
                seq,
                kind: kind.to_owned(),
            }
        } else {
            StoreError::CorruptEvent {
                debate: debate.to_owned(),
                seq,
                message,
            }
        }
    })
}

/// Decodes a snapshot.
pub(crate) fn decode_snapshot(
    debate: &str,
    seq: u64,
    state: Value,
) -> Result<Blackboard, StoreError> {
    serde_json::from_value(state).map_err(|e| StoreError::CorruptSnapshot {
        debate: debate.to_owned(),
        seq,
        message: e.to_string(),
    })
}

pub(crate) fn encode<T: serde::Serialize>(debate: &str, value: &T) -> Result<Value, StoreError> {
    serde_json::to_value(value).map_err(|e| StoreError::Unstorable {
        debate: debate.to_owned(),
        message: e.to_string(),
    })
}
