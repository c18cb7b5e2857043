//! Newtype identifiers. Each id is a non-empty string chosen by whoever creates
//! the entity (config slugs for personas, generated ids for messages).

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Wraps a string as an id. Emptiness is checked where the id is used
            /// (by [`crate::Blackboard::apply`]), so that deserialization never fails on it.
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(value.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

string_id!(
    /// Identifies a persona (a debater or the judge) within a debate.
    PersonaId
);
string_id!(
    /// Identifies a debate.
    DebateId
);
string_id!(
    /// Identifies one message of the transcript.
    MessageId
);

impl MessageId {
    /// The id of the transcript's `n`-th message (1-based): `msg-N`, the
    /// one spelling every protocol gives a new message.
    pub fn numbered(n: usize) -> Self {
        Self::new(format!("msg-{n}"))
    }
}
string_id!(
    /// Identifies a contested claim.
    ClaimId
);
string_id!(
    /// Identifies a crux room (a focused two-party sub-debate).
    CruxRoomId
);
string_id!(
    /// Identifies an aspect of the topic (a sub-question debated in its own round).
    AspectId
);
string_id!(
    /// Identifies a reflection.
    ReflectionId
);
string_id!(
    /// Identifies a crux card.
    CruxCardId
);
string_id!(
    /// Identifies a proposal (deliberation tracking).
    ProposalId
);
string_id!(
    /// Identifies a decision (deliberation tracking).
    DecisionId
);
