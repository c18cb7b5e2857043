//! The crux room (seed 000): when a contested claim is active, its two
//! parties leave the main debate for a focused dispute. Each enters with the
//! crux-entry context and states a position, then they exchange up to
//! [`CruxRules::max_turns`] turns, with a convergence check every
//! [`CruxRules::check_every`] exchanged turns. The room ends with a crux
//! card; the claim becomes resolved (the parties converged) or abandoned.
//!
//! The room is a protocol nested in a debate: [`room_step`] is a pure
//! function of the blackboard, and room messages are ordinary events of the
//! debate's log, so a room interrupted at any point resumes at its next turn.

use agon_context::Phase;
use agon_context::prompts::Utterance;
use agon_core::{
    Blackboard, ClaimId, ClaimTransition, CruxRoomId, DebateEvent, MessageKind, StepId, TurnKey,
};
use agon_extract::{ConvergenceCheck, CruxCardPayload, ExtractionContext};
use chrono::{DateTime, Utc};

use crate::extract::{Converted, ModelOutput, extract, step_failed};
use crate::question::Ask;
use crate::rules::CruxRules;
use crate::step::Step;
use crate::turn::{Speak, Voice};

/// Turns already taken in `room`: its messages plus recorded skips.
pub fn turns_taken(board: &Blackboard, room: &CruxRoomId) -> u32 {
    let messages = board.message_indices_for_room(room).len();
    let skipped = board
        .warnings()
        .iter()
        .filter(
            |w| matches!(&w.step, StepId::Utterance(TurnKey::Crux { room: r, .. }) if r == room),
        )
        .count();
    u32::try_from(messages + skipped).unwrap_or(u32::MAX)
}

/// The id of the next room to open: `room-N`, the first not yet used.
pub fn next_room_id(board: &Blackboard) -> CruxRoomId {
    let used = board
        .claims()
        .iter()
        .filter(|c| c.crux_room.is_some())
        .count();
    let mut n = used + 1;
    loop {
        let id = CruxRoomId::new(format!("room-{n}"));
        if board.claim_for_room(&id).is_none() {
            return id;
        }
        n += 1;
    }
}

/// The event that sends an active claim into a new room.
pub fn open_room(board: &Blackboard, claim: &ClaimId) -> DebateEvent {
    DebateEvent::ClaimStatusChanged {
        claim: claim.clone(),
        transition: ClaimTransition::InCruxRoom {
            room: next_room_id(board),
        },
    }
}

/// Where a protocol's crux phase stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Rooms {
    /// A room is open: its next step.
    Open(Step),
    /// Background work is pending (claims may still open): wait.
    Busy,
    /// The step that sends the first active claim into a room.
    Enter(Step),
    /// No room open, no active claim, fewer than `max_rooms` rooms so far
    /// (`rooms` of them): the protocol may open a claim of its own.
    Free {
        /// Rooms held so far.
        rooms: u32,
    },
    /// `max_rooms` rooms were held.
    Full,
}

/// The crux phase every protocol with rooms shares: the open room's next
/// step; otherwise, once background work is applied, the first active
/// claim into a room while fewer than `max_rooms` claims got one.
pub fn rooms(
    board: &Blackboard,
    rules: CruxRules,
    idle: bool,
    progress: &mut crate::step::Progress,
) -> Rooms {
    if let Some(c) = board
        .claims()
        .iter()
        .find(|c| c.status == agon_core::ClaimStatus::InCruxRoom)
        && let Some(room) = &c.crux_room
    {
        progress.phase = format!("crux room on {}", c.id);
        return Rooms::Open(room_step(board, &c.id, room, rules));
    }
    if !idle {
        return Rooms::Busy;
    }
    let rooms = board
        .claims()
        .iter()
        .filter(|c| c.crux_room.is_some())
        .count() as u32;
    if rooms >= rules.max_rooms {
        return Rooms::Full;
    }
    match board
        .claims()
        .iter()
        .find(|c| c.status == agon_core::ClaimStatus::Active)
    {
        Some(c) => {
            progress.phase = format!("crux room on {}", c.id);
            Rooms::Enter(Step::Record {
                label: format!("crux room on {}", c.id),
                events: vec![open_room(board, &c.id)],
            })
        }
        None => Rooms::Free { rooms },
    }
}

/// The next step of the room `room` on `claim` (which is in the room): a
/// turn, a convergence check before a turn, or the crux card.
pub fn room_step(board: &Blackboard, claim: &ClaimId, room: &CruxRoomId, rules: CruxRules) -> Step {
    let Some(live) = board.claim(claim) else {
        return Step::Ask(Ask::CruxCard {
            claim: claim.clone(),
            room: room.clone(),
        });
    };
    let total = 2 + rules.max_turns;
    let taken = turns_taken(board, room);
    if taken >= total {
        return Step::Ask(Ask::CruxCard {
            claim: claim.clone(),
            room: room.clone(),
        });
    }
    let persona = live.personas[(taken % 2) as usize].clone();
    let key = TurnKey::Crux {
        room: room.clone(),
        turn: taken,
    };
    let (kind, phase, instruction) = if taken < 2 {
        (
            MessageKind::CruxPosition,
            Phase::CruxEntry {
                claim: claim.clone(),
            },
            Utterance::CruxPosition {
                claim: claim.clone(),
            },
        )
    } else {
        (
            MessageKind::CruxExchange,
            Phase::CruxExchange { room: room.clone() },
            Utterance::CruxExchange {
                claim: claim.clone(),
            },
        )
    };
    let speak = Speak {
        key,
        persona,
        kind,
        phase: Some(phase),
        instruction,
        aspect: None,
        miniround: None,
        room: Some(room.clone()),
        voice: Voice::Debater,
    };
    let exchanged = taken.saturating_sub(2);
    if exchanged > 0 && rules.check_every > 0 && exchanged.is_multiple_of(rules.check_every) {
        Step::Ask(Ask::Convergence {
            claim: claim.clone(),
            room: room.clone(),
            otherwise: speak,
        })
    } else {
        Step::Speak(speak)
    }
}

/// What a convergence check found.
#[derive(Debug, Clone, PartialEq)]
pub struct Convergence {
    /// Whether the parties converged (a failed check counts as "no").
    pub converged: bool,
    /// The `step_failed` event of a check that failed.
    pub failure: Option<DebateEvent>,
}

/// Reads a convergence check's output.
pub fn convergence(room: &CruxRoomId, output: ModelOutput, time: DateTime<Utc>) -> Convergence {
    match extract(output, |check: ConvergenceCheck| Ok(check.converged)) {
        Ok(converged) => Convergence {
            converged,
            failure: None,
        },
        Err(failure) => Convergence {
            converged: false,
            failure: Some(step_failed(
                StepId::ConvergenceCheck(room.clone()),
                failure,
                time,
            )),
        },
    }
}

/// The events of a room's crux card: the card (which closes the claim:
/// resolved if the parties converged, abandoned otherwise) and the record
/// of any repair, or, when the card failed, the failure and the claim
/// abandoned.
pub fn card_events(
    board: &Blackboard,
    claim: &ClaimId,
    room: &CruxRoomId,
    output: ModelOutput,
    time: DateTime<Utc>,
) -> Vec<DebateEvent> {
    let ctx = ExtractionContext::new(board);
    match extract(output, |card: CruxCardPayload| {
        card.validate(&ctx, Some(claim))
    }) {
        Ok(valid) => Converted {
            repairs: valid.notes().to_vec(),
            events: valid.into_events(Some(claim), Some(room), board.current_round()),
        }
        .into_events(StepId::CruxCard(room.clone())),
        Err(failure) => {
            let reason = failure.to_string();
            vec![
                step_failed(StepId::CruxCard(room.clone()), failure, time),
                DebateEvent::ClaimStatusChanged {
                    claim: claim.clone(),
                    transition: ClaimTransition::Abandoned {
                        reason: format!("no crux card: {reason}"),
                    },
                },
            ]
        }
    }
}
