//! The one extraction pipeline: model output → parse → validate →
//! `Validated<T>` → events. Every structured step goes through [`extract`];
//! a failure at any stage is typed ([`ExtractFailure`]) and becomes a
//! `step_failed` warning event, never a dropped result.

use agon_core::{DebateEvent, StepId};
use agon_extract::{ExtractionError, Payload, parse_payload};
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;

/// A model call that failed, as the provider reported it: its kind and the
/// provider's message (the interpreter maps its provider's typed error;
/// this crate knows no provider).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct ModelFailure {
    /// What kind of failure it was.
    pub kind: FailureKind,
    /// The provider's message, naming the provider.
    pub reason: String,
}

/// The kind of a failed model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// No key, or a key the provider rejected.
    Auth,
    /// Too many requests, or the account's quota is spent.
    RateLimited,
    /// The request was refused as invalid (unknown model, bad request).
    Rejected,
    /// The provider failed (5xx, overloaded).
    Server,
    /// No answer in time.
    Timeout,
    /// The connection failed or broke off.
    Transport,
    /// An answer that is not what was asked (malformed, off the schema).
    Malformed,
    /// An in-process model failed (missing file, inference).
    Local,
    /// Not asked: the debate's budget is spent (a call refused before it
    /// was made).
    Budget,
    /// Anything else: no model was asked (a lost job, nothing to ask).
    Other,
}

impl FailureKind {
    /// Whether the same call may succeed when asked again.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            Self::RateLimited | Self::Server | Self::Timeout | Self::Transport | Self::Malformed
        )
    }
}

impl ModelFailure {
    /// A failure of `kind`.
    pub fn new(kind: FailureKind, reason: impl Into<String>) -> Self {
        Self {
            kind,
            reason: reason.into(),
        }
    }

    /// A failure where no model answered wrongly: a lost job, nothing to ask.
    pub fn other(reason: impl Into<String>) -> Self {
        Self::new(FailureKind::Other, reason)
    }
}

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
