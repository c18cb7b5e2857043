//! Controlling a run from outside, and how it ended.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use agon_protocol::{Steer, SteerError};
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
    /// Notes, pauses and resumes for the run to record.
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

/// A queue of steering requests ([`Steer`]) a run records as events
/// between steps: a note reaches every context assembled after it, a
/// pause holds the run before its next critical-path step.
#[derive(Debug, Clone, Default)]
pub struct Steering {
    queue: Arc<Mutex<VecDeque<Steer>>>,
    posted: Arc<Notify>,
}

impl Steering {
    /// Queues `steer` for the run, after checking it (an empty or
    /// over-long note, a bad name are refused here).
    pub fn post(&self, steer: Steer) -> Result<(), SteerError> {
        let steer = steer.checked()?;
        if let Ok(mut queue) = self.queue.lock() {
            queue.push_back(steer);
        }
        self.posted.notify_one();
        Ok(())
    }

    /// Wakes a run waiting for requests (paused, or waiting on background
    /// work) so that it looks at once for requests posted to the store.
    pub fn wake(&self) {
        self.posted.notify_one();
    }

    /// Everything queued so far, in order.
    pub(crate) fn take(&self) -> Vec<Steer> {
        self.queue
            .lock()
            .map(|mut queue| queue.drain(..).collect())
            .unwrap_or_default()
    }

    /// Resolves when something is posted (at once if something was posted
    /// since the last wait).
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
}
