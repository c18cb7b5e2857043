//! Steering a running debate (human in the loop): what a person asks for,
//! checked, as the events the blackboard records. The planners read them
//! back: a paused debate plans no critical-path step
//! ([`crate::Protocol::next`]), and every agent's context shows the notes.

use agon_core::{Blackboard, DebateEvent, MAX_NOTE_CHARS};
use chrono::{DateTime, Utc};

/// The longest name a person may sign a note or a pause with.
pub const MAX_AUTHOR_CHARS: usize = 80;

/// What a person asks of a running debate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Steer {
    /// A note every agent's next context shows.
    Note {
        /// The note.
        text: String,
        /// Who posts it.
        author: Option<String>,
    },
    /// Run no further critical-path step until resumed.
    Pause {
        /// Who pauses.
        by: Option<String>,
    },
    /// Go on after a pause.
    Resume {
        /// Who resumes.
        by: Option<String>,
    },
}

/// Why a steering request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SteerError {
    /// An empty note.
    #[error("the note is empty")]
    EmptyNote,
    /// A note over [`MAX_NOTE_CHARS`].
    #[error("the note has {0} characters; at most {MAX_NOTE_CHARS} are accepted")]
    NoteTooLong(usize),
    /// A name over [`MAX_AUTHOR_CHARS`] or with control characters.
    #[error("the name must be at most {MAX_AUTHOR_CHARS} printable characters")]
    BadName,
    /// The debate has not started.
    #[error("the debate has not started yet")]
    NotStarted,
    /// The debate is finished.
    #[error("the debate is finished")]
    Finished,
}

impl Steer {
    /// The request with its texts trimmed, or why it is refused (checked
    /// before it is queued, so the person hears at once).
    pub fn checked(self) -> Result<Self, SteerError> {
        let name = |n: Option<String>| -> Result<Option<String>, SteerError> {
            let Some(n) = n else { return Ok(None) };
            let n = n.trim().to_owned();
            if n.chars().count() > MAX_AUTHOR_CHARS || n.chars().any(char::is_control) {
                return Err(SteerError::BadName);
            }
            Ok((!n.is_empty()).then_some(n))
        };
        Ok(match self {
            Self::Note { text, author } => {
                let text = text.trim().to_owned();
                if text.is_empty() {
                    return Err(SteerError::EmptyNote);
                }
                let chars = text.chars().count();
                if chars > MAX_NOTE_CHARS {
                    return Err(SteerError::NoteTooLong(chars));
                }
                Self::Note {
                    text,
                    author: name(author)?,
                }
            }
            Self::Pause { by } => Self::Pause { by: name(by)? },
            Self::Resume { by } => Self::Resume { by: name(by)? },
        })
    }

    /// The events this request adds to `board` at `now`: none when it
    /// changes nothing (a pause of a paused debate, a resume of one that
    /// runs).
    pub fn events(
        self,
        board: &Blackboard,
        now: DateTime<Utc>,
    ) -> Result<Vec<DebateEvent>, SteerError> {
        match board.status() {
            agon_core::DebateStatus::NotStarted => return Err(SteerError::NotStarted),
            agon_core::DebateStatus::Finished => return Err(SteerError::Finished),
            agon_core::DebateStatus::Running => {}
        }
        Ok(match self.checked()? {
            Self::Note { text, author } => vec![DebateEvent::NoteAdded {
                text,
                author,
                time: now,
            }],
            Self::Pause { by } if !board.is_paused() => {
                vec![DebateEvent::DebatePaused { by, time: now }]
            }
            Self::Resume { by } if board.is_paused() => {
                vec![DebateEvent::DebateResumed { by, time: now }]
            }
            Self::Pause { .. } | Self::Resume { .. } => Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn board() -> Blackboard {
        let mut b = Blackboard::new();
        b.apply(&DebateEvent::DebateStarted {
            debate: "d".into(),
            topic: agon_core::Topic::new("t"),
            aspects: vec![],
            personas: vec![agon_core::Persona::debater("a", "A", "x", "y")],
            time: DateTime::UNIX_EPOCH,
            protocol: None,
        })
        .unwrap();
        b
    }

    #[test]
    fn notes_are_trimmed_and_checked() {
        let b = board();
        let events = Steer::Note {
            text: "  focus on cost \n".into(),
            author: Some("  ".into()),
        }
        .events(&b, DateTime::UNIX_EPOCH)
        .unwrap();
        assert_eq!(
            events,
            vec![DebateEvent::NoteAdded {
                text: "focus on cost".into(),
                author: None,
                time: DateTime::UNIX_EPOCH
            }]
        );
        let empty = Steer::Note {
            text: " ".into(),
            author: None,
        };
        assert_eq!(empty.checked(), Err(SteerError::EmptyNote));
        let long = Steer::Note {
            text: "é".repeat(MAX_NOTE_CHARS + 1),
            author: None,
        };
        assert_eq!(
            long.checked(),
            Err(SteerError::NoteTooLong(MAX_NOTE_CHARS + 1))
        );
        let bad = Steer::Pause {
            by: Some("a\u{1b}[31m".into()),
        };
        assert_eq!(bad.checked(), Err(SteerError::BadName));
    }

    #[test]
    fn nothing_is_recorded_before_the_start() {
        let note = Steer::Note {
            text: "early".into(),
            author: None,
        };
        assert_eq!(
            note.events(&Blackboard::new(), DateTime::UNIX_EPOCH),
            Err(SteerError::NotStarted)
        );
    }

    #[test]
    fn pausing_twice_or_resuming_a_running_debate_adds_nothing() {
        let mut b = board();
        let now = DateTime::UNIX_EPOCH;
        assert!(
            Steer::Resume { by: None }
                .events(&b, now)
                .unwrap()
                .is_empty()
        );
        let pause = Steer::Pause { by: None }.events(&b, now).unwrap();
        assert_eq!(pause.len(), 1);
        b.apply(&pause[0]).unwrap();
        assert!(
            Steer::Pause { by: None }
                .events(&b, now)
                .unwrap()
                .is_empty()
        );
        let resume = Steer::Resume { by: None }.events(&b, now).unwrap();
        b.apply(&resume[0]).unwrap();
        assert!(!b.is_paused());
        b.apply(&DebateEvent::DebateFinished { time: now }).unwrap();
        assert_eq!(
            Steer::Note {
                text: "late".into(),
                author: None
            }
            .events(&b, now),
            Err(SteerError::Finished)
        );
    }
}
