//! What a person steers a running debate with: moderator notes that every
//! agent's next context shows, and pausing (from [`crate::DebateEvent::NoteAdded`],
//! [`crate::DebateEvent::DebatePaused`] and [`crate::DebateEvent::DebateResumed`]).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The longest moderator note accepted, in characters.
pub const MAX_NOTE_CHARS: usize = 2_000;

/// A moderator's note, posted while the debate runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModeratorNote {
    /// What the moderator says to every agent.
    pub text: String,
    /// Who posted it, when they gave a name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// When.
    pub time: DateTime<Utc>,
    /// How many transcript messages there were when it was posted (where
    /// it belongs in the transcript).
    pub after_messages: usize,
}
