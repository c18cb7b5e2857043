//! The one extraction pipeline: model output → parse → validate →
//! `Validated<T>` → events. Every structured step goes through [`extract`];
//! a failure at any stage is typed ([`ExtractFailure`]) and becomes a
//! `step_failed` warning event, never a dropped result.

use agon_core::{DebateEvent, StepId};
use agon_extract::{ExtractionError, Payload, parse_payload};
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;

/// A model call that failed, as the provider reported it (the interpreter
/// renders its provider's typed error; this crate knows no provider).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ModelFailure(pub String);

/// What a structured model call returned: its JSON value, or why it failed.
pub type ModelOutput = Result<serde_json::Value, ModelFailure>;

/// Why a structured step produced nothing usable.
#[derive(Debug, thiserror::Error)]
pub enum ExtractFailure {
    /// The model call failed.
    #[error(transparent)]
    Model(#[from] ModelFailure),
    /// The output did not parse into the payload, or did not validate.
    #[error(transparent)]
    Extraction(#[from] ExtractionError),
}

/// Parses `output` into the payload `T` and validates it with `validate`.
pub fn extract<T, V>(
    output: ModelOutput,
    validate: impl FnOnce(T) -> Result<V, ExtractionError>,
) -> Result<V, ExtractFailure>
where
    T: DeserializeOwned + Payload,
{
    let payload = parse_payload::<T>(output?)?;
    Ok(validate(payload)?)
}

/// The `step_failed` warning event of `step`.
pub fn step_failed(step: StepId, reason: impl ToString, time: DateTime<Utc>) -> DebateEvent {
    DebateEvent::StepFailed {
        step,
        reason: reason.to_string(),
        time,
    }
}

/// Events converted from a step's output, with the repairs validation made
/// (one line each: what was clamped, cut or dropped).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Converted {
    /// The events to append, in order.
    pub events: Vec<DebateEvent>,
    /// What validation repaired.
    pub repairs: Vec<String>,
}

impl Converted {
    /// The events to append: the converted ones, then (when validation
    /// repaired anything) an `output_repaired` record of `step`, so no
    /// repair note is dropped.
    pub fn into_events(self, step: StepId) -> Vec<DebateEvent> {
        let mut events = self.events;
        if !self.repairs.is_empty() {
            events.push(DebateEvent::OutputRepaired {
                step,
                notes: self.repairs,
            });
        }
        events
    }
}
