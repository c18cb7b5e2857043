//! The live view of a running debate: a stream of updates that the CLI (and
//! later a web view) subscribes to.

use std::pin::Pin;

use agon_core::{DebateEvent, DebateId, PersonaId, TurnKey};
use agon_llm::ScopeUsage;
use futures::{Stream, StreamExt};
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;

/// One update of a running debate.
#[derive(Debug, Clone)]
pub enum DebateUpdate {
    /// An event was persisted at `seq`.
    Event {
        /// The debate.
        debate: DebateId,
        /// Its sequence number in the log.
        seq: u64,
        /// The event.
        event: Box<DebateEvent>,
    },
    /// A persona started a turn (before any token).
    TurnStarted {
        /// Who speaks.
        persona: PersonaId,
        /// Display name.
        name: String,
        /// Which turn.
        key: TurnKey,
    },
    /// A piece of an utterance being generated.
    Token {
        /// Who speaks.
        persona: PersonaId,
        /// Which turn (the `key` of its [`DebateUpdate::TurnStarted`]):
        /// parallel turns of one persona stream at once.
        turn: TurnKey,
        /// The text.
        delta: String,
    },
    /// The current utterance was discarded (empty, retried, or aborted).
    TurnDiscarded {
        /// Who was speaking.
        persona: PersonaId,
        /// Which turn.
        turn: TurnKey,
        /// Why.
        reason: String,
    },
    /// Usage so far in this run (all roles).
    Usage(ScopeUsage),
    /// Progress through the protocol (sent when it changes).
    Progress(agon_protocol::Progress),
    /// The subscriber fell behind and missed this many updates.
    Lagged(u64),
}

/// A subscription: a `Stream` of [`DebateUpdate`]s.
pub type DebateUpdates = Pin<Box<dyn Stream<Item = DebateUpdate> + Send>>;

pub(crate) fn subscription(rx: broadcast::Receiver<DebateUpdate>) -> DebateUpdates {
    Box::pin(BroadcastStream::new(rx).map(|item| match item {
        Ok(update) => update,
        Err(tokio_stream::wrappers::errors::BroadcastStreamRecvError::Lagged(n)) => {
            DebateUpdate::Lagged(n)
        }
    }))
}
