//! The live event stream of a debate (Server-Sent Events).
//!
//! Each stored event is sent with its sequence number as the SSE `id`, in
//! order, read from the store: a client that connects mid-debate first
//! gets the history, and one that reconnects with `Last-Event-ID` gets
//! exactly the events after it, nothing lost or repeated. New events are
//! read when a run on this server appends (and every half second, for a
//! debate another process runs); so are the clarifying questions a run in
//! any process waits on (a `questions` event). Tokens of the turn being generated come
//! as `token` events without an id (they are not part of the log). When
//! the debate is no longer running and everything is sent, an `end` event
//! carries its status and the stream closes.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use agon_core::DebateId;
use agon_store::RunStatus;
use axum::response::sse::Event;
use futures::Stream;
use serde_json::json;
use tokio::sync::broadcast;

use crate::live::Live;
use crate::state::Server;

/// How often a stream looks for events another process appended.
const POLL: Duration = Duration::from_millis(500);

enum Phase {
    Reading,
    Ended,
}

struct Cursor {
    server: Arc<Server>,
    id: DebateId,
    sent: u64,
    live: broadcast::Receiver<(DebateId, Live)>,
    pending: std::collections::VecDeque<Event>,
    phase: Phase,
    /// The posted questions last announced (their request's id).
    questions_shown: Option<u64>,
}

/// The stream of `id`'s events after sequence `after`.
pub(crate) fn stream(
    server: Arc<Server>,
    id: DebateId,
    after: u64,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let cursor = Cursor {
        live: server.subscribe(),
        server,
        id,
        sent: after,
        pending: std::collections::VecDeque::new(),
        phase: Phase::Reading,
        questions_shown: None,
    };
    futures::stream::unfold(cursor, |mut c| async move {
        loop {
            if let Some(event) = c.pending.pop_front() {
                return Some((Ok(event), c));
            }
            if let Phase::Ended = c.phase {
                return None;
            }
            c.fill().await;
        }
    })
}

impl Cursor {
    /// Queues what is new; waits for a change when nothing is.
    async fn fill(&mut self) {
        // Whether the debate was still running before reading, so that
        // nothing appended before it stopped can be missed.
        let running = self.server.is_running(&self.id);
        let (status, on_workers) = match self.server.store.debate(&self.id).await {
            Ok(record) => (record.status, record.on_workers),
            Err(e) => {
                self.end(json!({ "error": e.to_string() }));
                return;
            }
        };
        match self.server.store.events_after(&self.id, self.sent).await {
            Ok(events) if !events.is_empty() => {
                for stored in events {
                    self.sent = stored.seq;
                    let data = event_data(&stored.event);
                    self.pending.push_back(
                        Event::default()
                            .id(stored.seq.to_string())
                            .event("event")
                            .data(data),
                    );
                }
                return;
            }
            Ok(_) => {}
            Err(e) => {
                self.end(json!({ "error": e.to_string() }));
                return;
            }
        }
        // Questions a run in any process waits on.
        if self.announce_questions().await {
            return;
        }
        // A queued debate is live too: a worker runs its next step soon.
        // So is a paused one the workers run: its resume queues it again.
        let live = running
            || matches!(status, RunStatus::Running | RunStatus::Queued)
            || (on_workers && self.paused().await);
        if !live {
            self.end(json!({ "status": status.as_str(), "last": self.sent }));
            return;
        }
        // Nothing new: wait for a change, a token, or the poll.
        let wait = tokio::time::sleep(POLL);
        tokio::pin!(wait);
        loop {
            tokio::select! {
                () = &mut wait => return,
                received = self.live.recv() => match received {
                    Ok((debate, _)) if debate != self.id => {}
                    Ok((_, Live::Appended)) | Err(broadcast::error::RecvError::Lagged(_)) => return,
                    Ok((_, Live::Questions)) => return,
                    Ok((_, Live::Token { turn, persona, delta })) => {
                        self.pending.push_back(
                            Event::default()
                                .event("token")
                                .data(json!({ "turn": turn, "persona": persona, "delta": delta }).to_string()),
                        );
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    }

    /// Whether the debate is paused (read from its log: only asked when a
    /// stream would otherwise end).
    async fn paused(&self) -> bool {
        self.server
            .store
            .load(&self.id)
            .await
            .is_ok_and(|(board, _)| {
                board.is_paused() && board.status() != agon_core::DebateStatus::Finished
            })
    }

    /// Queues a `questions` event when the debate waits on questions not
    /// announced yet (posted by its run, here or in another process).
    async fn announce_questions(&mut self) -> bool {
        let posted = agon_app::pending_questions(self.server.store.as_ref(), &self.id).await;
        let Ok(Some((request, questions))) = posted else {
            return false;
        };
        if self.questions_shown == Some(request) {
            return false;
        }
        self.questions_shown = Some(request);
        self.pending
            .push_back(Event::default().event("questions").data(
                serde_json::to_string(&crate::api::Questions::of(&questions)).unwrap_or_default(),
            ));
        true
    }

    fn end(&mut self, data: serde_json::Value) {
        self.pending
            .push_back(Event::default().event("end").data(data.to_string()));
        self.phase = Phase::Ended;
    }
}

/// An event as the stream sends it: its stored JSON, and for a message
/// its text rendered as the page renders it (`html`: Markdown, safe by
/// construction, `agon_view::html::markdown`), so the live transcript
/// looks as a reloaded page does.
fn event_data(event: &agon_core::DebateEvent) -> String {
    let mut data = match serde_json::to_value(event) {
        Ok(data) => data,
        Err(e) => return json!({ "error": e.to_string() }).to_string(),
    };
    if let agon_core::DebateEvent::MessageAppended { message } = event {
        data["html"] = json!(agon_view::html::markdown(message.content.trim()));
    }
    data.to_string()
}
