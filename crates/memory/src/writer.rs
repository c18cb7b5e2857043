//! The writer a debate's run feeds: it harvests the event log into
//! memories and stores them in batches (after each round record, crux card
//! and summary, off the run's critical path). It degrades: a failed batch
//! is reported through a callback (the run records a `step_failed`
//! warning) and the debate goes on.

use std::sync::Arc;

use agon_core::{Blackboard, DebateEvent, StepId};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::{Harvester, Memory, MemoryDraft};

/// What the run sends the writer.
pub enum MemoryMsg {
    /// A persisted event, in sequence order.
    Event(Box<DebateEvent>),
    /// Store everything harvested so far, then answer.
    Flush(oneshot::Sender<()>),
}

/// A failure the writer reports back to be recorded as a warning.
pub type Warn = Arc<dyn Fn(StepId, String) + Send + Sync>;

/// Starts the writer over the debate's `history` so far: it folds each
/// event sent on `rx` into drafts and stores them in batches; a failure is
/// reported to `warn`.
pub fn spawn_writer(
    memory: Memory,
    history: Vec<DebateEvent>,
    mut rx: mpsc::UnboundedReceiver<MemoryMsg>,
    warn: Warn,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut harvester = Harvester::new();
        let mut drafts: Vec<MemoryDraft> = Vec::new();
        let mut broken = false;
        let mut observe = |h: &mut Harvester, drafts: &mut Vec<MemoryDraft>, e: &DebateEvent| {
            if broken {
                return;
            }
            match h.observe(e) {
                Ok(d) => drafts.extend(d),
                Err(err) => {
                    broken = true;
                    warn(StepId::MemoryStore, format!("harvesting stopped: {err}"));
                }
            }
        };
        for e in &history {
            observe(&mut harvester, &mut drafts, e);
        }
        while let Some(msg) = rx.recv().await {
            match msg {
                MemoryMsg::Event(e) => {
                    observe(&mut harvester, &mut drafts, &e);
                    // A batch after each round record, crux card and
                    // summary (the rolling summaries of a long session), so a
                    // long session is embedded as it goes, not at its end.
                    if matches!(
                        *e,
                        DebateEvent::RoundRecorded { .. }
                            | DebateEvent::CruxCardAdded { .. }
                            | DebateEvent::SummaryRecorded { .. }
                    ) {
                        store(&memory, &mut drafts, harvester.board(), &warn).await;
                    }
                }
                MemoryMsg::Flush(done) => {
                    store(&memory, &mut drafts, harvester.board(), &warn).await;
                    let _ = done.send(());
                }
            }
        }
        store(&memory, &mut drafts, harvester.board(), &warn).await;
    })
}

async fn store(memory: &Memory, drafts: &mut Vec<MemoryDraft>, board: &Blackboard, warn: &Warn) {
    if drafts.is_empty() {
        return;
    }
    let batch = std::mem::take(drafts);
    let n = batch.len();
    if let Err(err) = memory.remember_in_background(batch).await {
        warn(
            StepId::MemoryStore,
            format!(
                "storing {n} memories (round {}) failed: {err}",
                board.current_round()
            ),
        );
    }
}
