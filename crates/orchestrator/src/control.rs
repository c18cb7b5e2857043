//! Controlling a run from outside, and how it ended.

use tokio_util::sync::CancellationToken;

/// Stops a run from outside (the CLI wires Ctrl-C to it).
#[derive(Debug, Clone, Default)]
pub struct RunControl {
    /// Finish the current utterance, then stop cleanly (resumable).
    pub stop: CancellationToken,
    /// Discard the utterance being generated and stop now (resumable).
    pub abort: CancellationToken,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    /// The debate finished.
    Finished,
    /// Stopped on request; `agon resume` continues it.
    Stopped,
}
