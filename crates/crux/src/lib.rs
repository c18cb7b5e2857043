//! # agon-crux
//!
//! Crux rooms: when a contested claim is active, its two parties leave the
//! main debate for a focused dispute. Each enters with the crux-entry
//! context (the claim, the messages that surfaced it, both positions, prior
//! related cards), states a position, then they exchange up to
//! [`RoomConfig::max_turns`] turns, with a convergence check every
//! [`RoomConfig::check_every`] turns. The room ends with a crux card; the
//! claim becomes resolved (the parties converged) or abandoned.
//!
//! The room owns the protocol only. Everything with I/O (assembling context
//! and calling the debater's model, calling the crux model, appending events)
//! goes through [`RoomHost`], which the orchestrator implements; tests use a
//! scripted host. Room messages are ordinary events of the debate's log, so
//! a room interrupted at any point resumes at the next turn.

use agon_context::Phase;
use agon_context::prompts::{self, Prompt, Utterance};
use agon_core::extraction::{
    ConvergenceCheck, CruxCardPayload, ExtractionContext, Payload, parse_payload,
    with_persona_names,
};
use agon_core::{
    Blackboard, ClaimId, ClaimStatus, ClaimTransition, CruxRoomId, DebateEvent, MessageId,
    MessageKind, PersonaId,
};
use async_trait::async_trait;

/// The step name of a failed crux card in `step_failed` events.
pub const CARD_STEP: &str = "crux_card";
/// The step name of a failed convergence check in `step_failed` events.
pub const CONVERGENCE_STEP: &str = "convergence_check";
/// The step name of a skipped (empty) utterance in `step_failed` events.
pub const UTTERANCE_STEP: &str = "utterance";

/// An error the host reports (store or provider failure): the room stops,
/// and the debate can be resumed later.
pub type HostError = Box<dyn std::error::Error + Send + Sync>;

/// Why a room could not run.
#[derive(Debug, thiserror::Error)]
pub enum CruxError {
    /// The claim does not exist.
    #[error("unknown claim `{0}`")]
    UnknownClaim(String),
    /// The claim is already resolved or abandoned.
    #[error("claim `{claim}` is already {status}")]
    Closed {
        /// The claim.
        claim: String,
        /// Its status.
        status: &'static str,
    },
    /// The host failed (store or model): the room can be resumed.
    #[error("crux room for claim `{claim}`: {source}")]
    Host {
        /// The claim.
        claim: String,
        /// The host's error.
        #[source]
        source: HostError,
    },
}

/// One turn a debater takes in a room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomTurn {
    /// Who speaks.
    pub persona: PersonaId,
    /// `CruxPosition` or `CruxExchange`.
    pub kind: MessageKind,
    /// The context phase to assemble.
    pub phase: Phase,
    /// The instruction to give.
    pub instruction: Utterance,
    /// The room.
    pub room: CruxRoomId,
    /// A key unique to this turn (`crux/ROOM/N`), used to record a skip.
    pub key: String,
}

/// What a room needs from the orchestrator.
#[async_trait]
pub trait RoomHost: Send + Sync {
    /// The current blackboard (all appended events applied).
    async fn board(&self) -> Blackboard;
    /// Validates, persists and publishes events.
    async fn append(&self, events: Vec<DebateEvent>) -> Result<(), HostError>;
    /// Generates and appends the turn's message; `None` when the turn was
    /// skipped (an empty utterance twice, recorded by the host).
    async fn speak(&self, turn: RoomTurn) -> Result<Option<MessageId>, HostError>;
    /// A structured call to the crux model: the JSON value matching
    /// `schema`, or why it failed (an optional step: the room degrades).
    async fn structured(
        &self,
        prompt: Prompt,
        name: &'static str,
        schema: serde_json::Value,
    ) -> Result<serde_json::Value, String>;
}

/// Tunables of a room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoomConfig {
    /// Exchange turns after the two position statements (default 8).
    pub max_turns: u32,
    /// Check convergence after every this many exchange turns (default 4;
    /// 0 = never check, run all turns).
    pub check_every: u32,
}

impl Default for RoomConfig {
    fn default() -> Self {
        Self {
            max_turns: 8,
            check_every: 4,
        }
    }
}

/// How a room ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomOutcome {
    /// The room.
    pub room: CruxRoomId,
    /// Turns taken in the room (position statements included).
    pub turns: u32,
    /// Whether the claim ended resolved (else abandoned).
    pub resolved: bool,
    /// Whether a crux card was produced.
    pub card: bool,
}

/// Turns already taken in `room`: its messages plus recorded skips.
pub fn turns_taken(board: &Blackboard, room: &CruxRoomId) -> u32 {
    let prefix = format!("crux/{room}/");
    let messages = board.message_indices_for_room(room).len();
    let skipped = board
        .warnings()
        .iter()
        .filter(|w| {
            w.step == UTTERANCE_STEP && w.scope.as_deref().is_some_and(|s| s.starts_with(&prefix))
        })
        .count();
    u32::try_from(messages + skipped).unwrap_or(u32::MAX)
}

fn next_room_id(board: &Blackboard) -> CruxRoomId {
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

fn host_err(claim: &ClaimId) -> impl Fn(HostError) -> CruxError + '_ {
    move |source| CruxError::Host {
        claim: claim.to_string(),
        source,
    }
}

fn failed(step: &str, room: &CruxRoomId, reason: String) -> DebateEvent {
    DebateEvent::StepFailed {
        step: step.to_owned(),
        reason,
        message: None,
        scope: Some(room.to_string()),
        time: chrono::Utc::now(),
    }
}

/// Runs (or resumes) the crux room of `claim` to its card.
pub async fn run_room(
    host: &dyn RoomHost,
    claim: &ClaimId,
    config: RoomConfig,
) -> Result<RoomOutcome, CruxError> {
    let board = host.board().await;
    let live = board
        .claim(claim)
        .ok_or_else(|| CruxError::UnknownClaim(claim.to_string()))?;
    let room = match (live.status, &live.crux_room) {
        (ClaimStatus::InCruxRoom, Some(room)) => room.clone(),
        (ClaimStatus::Active, _) => {
            let room = next_room_id(&board);
            host.append(vec![DebateEvent::ClaimStatusChanged {
                claim: claim.clone(),
                transition: ClaimTransition::InCruxRoom { room: room.clone() },
            }])
            .await
            .map_err(host_err(claim))?;
            room
        }
        (status, _) => {
            return Err(CruxError::Closed {
                claim: claim.to_string(),
                status: status.label(),
            });
        }
    };
    let parties = live.personas.clone();
    let total = 2 + config.max_turns;
    let mut taken = turns_taken(&board, &room);
    while taken < total {
        let exchanged = taken.saturating_sub(2);
        if taken >= 2
            && exchanged > 0
            && config.check_every > 0
            && exchanged.is_multiple_of(config.check_every)
            && converged(host, &room).await.map_err(host_err(claim))?
        {
            break;
        }
        let persona = parties[(taken % 2) as usize].clone();
        let turn = if taken < 2 {
            RoomTurn {
                persona,
                kind: MessageKind::CruxPosition,
                phase: Phase::CruxEntry {
                    claim: claim.clone(),
                },
                instruction: Utterance::CruxPosition {
                    claim: claim.clone(),
                },
                room: room.clone(),
                key: format!("crux/{room}/{taken}"),
            }
        } else {
            RoomTurn {
                persona,
                kind: MessageKind::CruxExchange,
                phase: Phase::CruxExchange { room: room.clone() },
                instruction: Utterance::CruxExchange {
                    claim: claim.clone(),
                },
                room: room.clone(),
                key: format!("crux/{room}/{taken}"),
            }
        };
        host.speak(turn).await.map_err(host_err(claim))?;
        taken += 1;
    }
    let (resolved, card) = write_card(host, claim, &room)
        .await
        .map_err(host_err(claim))?;
    Ok(RoomOutcome {
        room,
        turns: taken,
        resolved,
        card,
    })
}

/// Asks the crux model whether the parties converged. A failed check counts
/// as "not converged" and is recorded as a warning.
async fn converged(host: &dyn RoomHost, room: &CruxRoomId) -> Result<bool, HostError> {
    let board = host.board().await;
    let Some(prompt) = prompts::convergence(&board, room) else {
        return Ok(false);
    };
    let result = host
        .structured(
            prompt,
            ConvergenceCheck::NAME,
            ConvergenceCheck::json_schema(),
        )
        .await
        .and_then(|v| parse_payload::<ConvergenceCheck>(v).map_err(|e| e.to_string()));
    match result {
        Ok(check) => Ok(check.converged),
        Err(reason) => {
            host.append(vec![failed(CONVERGENCE_STEP, room, reason)])
                .await?;
            Ok(false)
        }
    }
}

/// Extracts and appends the crux card; on failure records the failure and
/// abandons the claim. Returns (resolved, card produced).
async fn write_card(
    host: &dyn RoomHost,
    claim: &ClaimId,
    room: &CruxRoomId,
) -> Result<(bool, bool), HostError> {
    let board = host.board().await;
    let Some(prompt) = prompts::crux_card(&board, room) else {
        return Err(format!("room `{room}` has no claim").into());
    };
    let parties: Vec<String> = board
        .claim(claim)
        .map(|c| {
            c.personas
                .iter()
                .map(|p| board.persona_name(p).to_owned())
                .collect()
        })
        .unwrap_or_default();
    let schema = with_persona_names(&CruxCardPayload::json_schema(), &parties);
    let value = host.structured(prompt, CruxCardPayload::NAME, schema).await;
    let board = host.board().await;
    let events = value
        .and_then(|v| parse_payload::<CruxCardPayload>(v).map_err(|e| e.to_string()))
        .and_then(|card| {
            card.validate(&ExtractionContext::new(&board), Some(claim))
                .map_err(|e| e.to_string())
        })
        .map(|valid| {
            let resolved = valid.value().resolved;
            (
                resolved,
                valid.into_events(Some(claim), Some(room), board.current_round()),
            )
        });
    match events {
        Ok((resolved, events)) => {
            host.append(events).await?;
            Ok((resolved, true))
        }
        Err(reason) => {
            host.append(vec![
                failed(CARD_STEP, room, reason.clone()),
                DebateEvent::ClaimStatusChanged {
                    claim: claim.clone(),
                    transition: ClaimTransition::Abandoned {
                        reason: format!("no crux card: {reason}"),
                    },
                },
            ])
            .await?;
            Ok((false, false))
        }
    }
}
