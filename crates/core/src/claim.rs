//! Contested claims and their lifecycle.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::crux::CruxCard;
use crate::ids::{ClaimId, CruxRoomId, MessageId, PersonaId};

/// Where a claim is in its lifecycle: `active → in_crux_room → resolved | abandoned`
/// (an active claim may also be resolved or abandoned without a room).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClaimStatus {
    /// Surfaced in dialogue, not yet taken up.
    Active,
    /// Being worked through in a crux room.
    InCruxRoom,
    /// Settled (with a resolution text).
    Resolved,
    /// Dropped without settlement.
    Abandoned,
}

impl ClaimStatus {
    /// Whether no further transition is possible.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Resolved | Self::Abandoned)
    }

    /// Whether the claim is still open (active or in a room).
    pub fn is_open(self) -> bool {
        !self.is_terminal()
    }

    /// Lowercase label, as serialized.
    pub fn label(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::InCruxRoom => "in_crux_room",
            Self::Resolved => "resolved",
            Self::Abandoned => "abandoned",
        }
    }
}

/// A transition of a claim's status, carried by [`crate::DebateEvent::ClaimStatusChanged`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "to", rename_all = "snake_case")]
pub enum ClaimTransition {
    /// The claim is sent to a crux room.
    InCruxRoom {
        /// The room that takes it up.
        room: CruxRoomId,
    },
    /// The claim is settled.
    Resolved {
        /// How it was settled.
        resolution: String,
    },
    /// The claim is dropped.
    Abandoned {
        /// Why it was dropped.
        reason: String,
    },
}

impl ClaimTransition {
    /// The status the claim has after this transition.
    pub fn target(&self) -> ClaimStatus {
        match self {
            Self::InCruxRoom { .. } => ClaimStatus::InCruxRoom,
            Self::Resolved { .. } => ClaimStatus::Resolved,
            Self::Abandoned { .. } => ClaimStatus::Abandoned,
        }
    }
}

/// A live dispute between two personas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LiveClaim {
    /// Unique id within the debate.
    pub id: ClaimId,
    /// The disputed statement, one sentence.
    pub claim: String,
    /// The two personas in dispute.
    pub personas: [PersonaId; 2],
    /// Lifecycle status.
    pub status: ClaimStatus,
    /// Round in which it surfaced.
    pub source_round: u32,
    /// Messages that surfaced it.
    pub source_messages: Vec<MessageId>,
    /// The crux room that took it up, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crux_room: Option<CruxRoomId>,
    /// How it was resolved (or why abandoned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<String>,
    /// The crux card produced for it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card: Option<CruxCard>,
}

impl LiveClaim {
    /// Whether the persona is one of the two parties.
    pub fn involves(&self, persona: &PersonaId) -> bool {
        self.personas.contains(persona)
    }

    /// The other party, if `persona` is one of the two.
    pub fn opponent_of(&self, persona: &PersonaId) -> Option<&PersonaId> {
        match &self.personas {
            [a, b] if a == persona => Some(b),
            [a, b] if b == persona => Some(a),
            _ => None,
        }
    }
}
