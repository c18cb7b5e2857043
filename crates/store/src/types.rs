//! What the store stores and returns.

use std::fmt;
use std::str::FromStr;

use agon_core::{DebateEvent, DebateId, PersonaId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Run status of a stored debate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Created, not yet run.
    Created,
    /// Being run (or interrupted while running: resumable).
    Running,
    /// Finished.
    Finished,
    /// Stopped by an error.
    Failed,
    /// Stopped on request (Ctrl-C) before finishing: resumable.
    Interrupted,
    /// Finished early at its budget (wrapped up: judge or synthesis).
    Budget,
    /// Waiting in the job queue for a worker (`agon submit`, or between
    /// two steps a worker ran): resumable.
    Queued,
}

impl RunStatus {
    /// The stored text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Running => "running",
            Self::Finished => "finished",
            Self::Failed => "failed",
            Self::Interrupted => "interrupted",
            Self::Budget => "budget",
            Self::Queued => "queued",
        }
    }

    /// Whether the debate is over (finished, or finished at its budget).
    pub fn is_done(self) -> bool {
        matches!(self, Self::Finished | Self::Budget)
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RunStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "created" => Ok(Self::Created),
            "running" => Ok(Self::Running),
            "finished" => Ok(Self::Finished),
            "failed" => Ok(Self::Failed),
            "interrupted" => Ok(Self::Interrupted),
            "budget" => Ok(Self::Budget),
            "queued" => Ok(Self::Queued),
            other => Err(format!("unknown run status `{other}`")),
        }
    }
}

/// A debate to create.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewDebate {
    /// Its id.
    pub id: DebateId,
    /// The topic, for listings.
    pub topic: String,
    /// The configuration it runs with (JSON).
    pub config: serde_json::Value,
}

/// A stored debate's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebateRecord {
    /// Its id.
    pub id: DebateId,
    /// The topic.
    pub topic: String,
    /// The configuration (JSON).
    pub config: serde_json::Value,
    /// Run status.
    pub status: RunStatus,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// Sequence number of the last event (0 = none).
    pub last_seq: u64,
    /// Messages in its transcript.
    pub message_count: u64,
    /// The debate and event it was forked from, if it is a fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkPoint>,
    /// Whether it was ever queued for the workers (`agon submit`, `agon
    /// debate --detach`): a resume queues it again rather than running it
    /// in the process that resumes it.
    #[serde(default)]
    pub on_workers: bool,
}

/// Where a fork was copied from: its log is that debate's events up to
/// and including `seq`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkPoint {
    /// The debate forked.
    pub debate: DebateId,
    /// The last of its events the fork copied.
    pub seq: u64,
}

/// A request recorded for a debate's run (a note, a pause, a stop, an
/// answer: whatever the caller serialized), waiting for the process that
/// holds the run's lease to take it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostedRequest {
    /// Its id: requests are taken in the order of their ids.
    pub id: u64,
    /// The debate it is for.
    pub debate: DebateId,
    /// What was requested.
    pub body: serde_json::Value,
    /// When it was recorded.
    pub posted_at: DateTime<Utc>,
}

/// An event with its sequence number (1-based, gapless per debate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredEvent {
    /// Position in the debate's log.
    pub seq: u64,
    /// The event.
    pub event: DebateEvent,
}

/// The right to run a debate, until `expires_at` unless renewed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The debate.
    pub debate: DebateId,
    /// Who holds it (e.g. `host:pid`).
    pub holder: String,
    /// When it was acquired.
    pub acquired_at: DateTime<Utc>,
    /// When it lapses.
    pub expires_at: DateTime<Utc>,
}

/// A per-persona document that outlives debates (cross-debate agent memory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonaRecord {
    /// The persona.
    pub persona: PersonaId,
    /// The document.
    pub doc: serde_json::Value,
    /// Incremented by every update (1 after the first).
    pub version: u64,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// A keyed JSON document of the store (a rubric), with its version.
#[derive(Debug, Clone, PartialEq)]
pub struct DocRecord {
    /// Its key.
    pub key: String,
    /// The document.
    pub doc: serde_json::Value,
    /// Incremented by every update (1 after the first).
    pub version: u64,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

pub(crate) fn millis(time: DateTime<Utc>) -> i64 {
    time.timestamp_millis()
}

pub(crate) fn from_millis(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

/// Number of `message_appended` events in a batch.
pub(crate) fn messages_in(events: &[DebateEvent]) -> i64 {
    events
        .iter()
        .filter(|e| matches!(e, DebateEvent::MessageAppended { .. }))
        .count() as i64
}
