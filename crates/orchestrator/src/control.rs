//! Controlling a run from outside, and how it ended.

use std::sync::Arc;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How often a waiting run (paused, or waiting on background work) looks
/// for requests posted to the store by other processes; a run between
/// steps looks before each step.
pub const REQUEST_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// Stops and steers a run from outside (the CLI wires Ctrl-C to `stop`;
/// the server its stop, pause, resume and note requests).
#[derive(Debug, Clone, Default)]
pub struct RunControl {
    /// Finish the current utterance, then stop cleanly (resumable).
    pub stop: CancellationToken,
    /// Discard the utterance being generated and stop now (resumable).
    pub abort: CancellationToken,
    /// Wakes the run when a request is posted to the store in this process.
    pub steering: Steering,
    /// Stop cleanly after this many critical-path steps (and the
    /// background work they started): a worker runs a debate one slice
    /// at a time. `None`: no limit.
    pub step_limit: Option<u32>,
}

impl RunControl {
    /// A control that stops cleanly after `steps` critical-path steps.
    pub fn with_step_limit(steps: u32) -> Self {
        Self {
            step_limit: Some(steps.max(1)),
            ..Self::default()
        }
    }
}

/// Wakes a run that waits (paused, or on background work) so that it
/// looks at once for the requests posted to the store (notes, pauses,
/// resumes, stops: `EventStore::post_request`); without a wake-up it looks
/// every [`REQUEST_POLL`].
#[derive(Debug, Clone, Default)]
pub struct Steering {
    posted: Arc<Notify>,
}

impl Steering {
    /// Wakes the run (a request was posted for it in this process).
    pub fn wake(&self) {
        self.posted.notify_one();
    }

    /// Resolves when woken (at once if woken since the last wait).
    pub(crate) async fn posted(&self) {
        self.posted.notified().await;
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    /// The debate finished.
    Finished,
    /// Stopped on request; `agon resume` continues it.
    Stopped,
    /// A run in slices ([`RunControl::with_step_limit`]) stopped because
    /// the debate is paused (a run without a step limit waits instead);
    /// a resume continues it.
    Paused,
    /// A run in slices ran its [`RunControl::step_limit`] steps and the
    /// debate goes on: its status is left `queued` (never `interrupted`,
    /// so no reader takes the hand-over for an end), and the caller queues
    /// the next slice.
    SliceDone,
}
