//! The writer a debate's run feeds: it harvests the event log into
//! memories and stores them in batches (after each round record, crux card
//! and summary, off the run's critical path), embedded in the background.
//! Reflections are embedded as soon as they are recorded (they follow the
//! round they reflect on, so the last round's would otherwise wait for the
//! final flush, which the run waits on) and stored with the next batch.
//! It degrades: a failed embedding or batch is reported through a callback
//! (the run records a `step_failed` warning) and the debate goes on.

use std::sync::Arc;

use agon_core::{Blackboard, DebateEvent, StepId};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::record::MemoryRecord;
use crate::{Harvester, Memory, MemoryDraft, MemoryError};

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
        let mut writer = Writer {
            memory,
            harvester: Harvester::new(),
            drafts: Vec::new(),
            embedding: None,
            embedded: Vec::new(),
            broken: false,
            warn,
        };
        for e in &history {
            writer.observe(e);
        }
        loop {
            let msg = tokio::select! {
                biased;
                msg = rx.recv() => msg,
                done = async {
                    match writer.embedding.as_mut() {
                        Some(task) => task.await,
                        None => std::future::pending().await,
                    }
                } => {
                    writer.embedding = None;
                    writer.embedded_some(done);
                    continue;
                }
            };
            match msg {
                Some(MemoryMsg::Event(e)) => {
                    writer.observe(&e);
                    // A batch after each round record, crux card and
                    // summary (the rolling summaries of a long session), so a
                    // long session is stored as it goes, not at its end.
                    if matches!(
                        *e,
                        DebateEvent::RoundRecorded { .. }
                            | DebateEvent::CruxCardAdded { .. }
                            | DebateEvent::SummaryRecorded { .. }
                    ) {
                        writer.store(Wait::Background).await;
                    } else if matches!(*e, DebateEvent::ReflectionAdded { .. }) {
                        // A reflection comes after the round it reflects
                        // on: waiting for the next round record would leave
                        // the last round's to the final flush, which the
                        // run waits on.
                        writer.embed_next();
                    }
                }
                Some(MemoryMsg::Flush(done)) => {
                    // Someone waits on this batch: what is left to embed is
                    // embedded at the caller's priority.
                    writer.store(Wait::Waited).await;
                    let _ = done.send(());
                }
                None => break,
            }
        }
        writer.store(Wait::Waited).await;
    })
}

/// Whether the run waits on a batch (a flush) or goes on beside it.
#[derive(Clone, Copy)]
enum Wait {
    Background,
    Waited,
}

/// An embedding under way: its memories, embedded, or why not.
type Embedding = JoinHandle<Result<Vec<MemoryRecord>, MemoryError>>;

struct Writer {
    memory: Memory,
    harvester: Harvester,
    /// Drafted, not yet embedded.
    drafts: Vec<MemoryDraft>,
    /// The drafts being embedded in the background.
    embedding: Option<Embedding>,
    /// Embedded, not yet stored.
    embedded: Vec<MemoryRecord>,
    /// Harvesting failed once: nothing more is drafted.
    broken: bool,
    warn: Warn,
}

impl Writer {
    fn observe(&mut self, event: &DebateEvent) {
        if self.broken {
            return;
        }
        match self.harvester.observe(event) {
            Ok(drafts) => self.drafts.extend(drafts),
            Err(err) => {
                self.broken = true;
                (self.warn)(StepId::MemoryStore, format!("harvesting stopped: {err}"));
            }
        }
    }

    /// Starts embedding the drafts waiting, unless an embedding is under way.
    fn embed_next(&mut self) {
        if self.embedding.is_some() || self.drafts.is_empty() {
            return;
        }
        let drafts = std::mem::take(&mut self.drafts);
        let memory = self.memory.clone();
        self.embedding = Some(tokio::spawn(async move {
            memory.embed_in_background(drafts).await
        }));
    }

    /// Takes an embedding's result: its memories wait for the next batch;
    /// a failure is reported (those memories are lost, the debate goes on).
    fn embedded_some(
        &mut self,
        done: Result<Result<Vec<MemoryRecord>, MemoryError>, tokio::task::JoinError>,
    ) {
        match done {
            Ok(Ok(records)) => self.embedded.extend(records),
            Ok(Err(err)) => self.report(&format!("embedding memories failed: {err}")),
            Err(err) => self.report(&format!("embedding memories stopped: {err}")),
        }
    }

    fn report(&self, what: &str) {
        (self.warn)(
            StepId::MemoryStore,
            format!("{what} (round {})", self.board().current_round()),
        );
    }

    fn board(&self) -> &Blackboard {
        self.harvester.board()
    }

    /// Embeds what is left (after the embedding under way) and stores
    /// everything embedded in one write.
    async fn store(&mut self, wait: Wait) {
        if let Some(task) = self.embedding.take() {
            let done = task.await;
            self.embedded_some(done);
        }
        let drafts = std::mem::take(&mut self.drafts);
        if !drafts.is_empty() {
            let embedded = match wait {
                Wait::Background => self.memory.embed_in_background(drafts).await,
                Wait::Waited => self.memory.embed_waited(drafts).await,
            };
            self.embedded_some(Ok(embedded));
        }
        let batch = std::mem::take(&mut self.embedded);
        let n = batch.len();
        if n == 0 {
            return;
        }
        if let Err(err) = self.memory.store_embedded(batch).await {
            self.report(&format!("storing {n} memories failed: {err}"));
        }
    }
}

impl Drop for Writer {
    /// A writer stopped at once (an aborted run) stops its embedding too.
    fn drop(&mut self) {
        if let Some(task) = self.embedding.take() {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use agon_llm::{Embedder, InputType, ProviderError};

    use super::*;
    use crate::{InMemoryIndex, MemoryIndex, RetrievalConfig};

    /// An embedder that counts the texts it embedded.
    #[derive(Default)]
    struct Counting {
        texts: AtomicUsize,
    }

    #[async_trait::async_trait]
    impl Embedder for Counting {
        async fn embed(
            &self,
            texts: &[String],
            _: InputType,
        ) -> Result<Vec<Vec<f32>>, ProviderError> {
            self.texts.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(texts
                .iter()
                .map(|t| vec![0.5, (t.len() % 7) as f32 + 0.5, 1.0])
                .collect())
        }
        fn dimensions(&self) -> usize {
            3
        }
        fn max_batch(&self) -> usize {
            64
        }
        fn model_id(&self) -> &str {
            "counting"
        }
    }

    async fn flush(tx: &mpsc::UnboundedSender<MemoryMsg>) {
        let (done, wait) = oneshot::channel();
        tx.send(MemoryMsg::Flush(done)).unwrap();
        wait.await.unwrap();
    }

    /// A reflection's memories are embedded as soon as it is recorded (not
    /// at the flush the run waits on), once, and stored with the next
    /// batch; other drafts wait for the batch.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_reflection_is_embedded_when_recorded_and_stored_at_the_next_batch() {
        let events = agon_testkit::synthetic::debate(3, 120);
        let reflection = events
            .iter()
            .position(|e| matches!(e, DebateEvent::ReflectionAdded { .. }))
            .expect("the synthetic log reflects");
        let index: Arc<dyn MemoryIndex> = Arc::new(InMemoryIndex::new());
        let embedder = Arc::new(Counting::default());
        let memory = Memory::open(
            Arc::clone(&index),
            Arc::clone(&embedder) as Arc<dyn Embedder>,
            RetrievalConfig::default(),
        )
        .await
        .unwrap();
        // The log up to the event before the reflection, as a resumed run's
        // history: drafted, neither embedded nor stored yet.
        let (tx, rx) = mpsc::unbounded_channel();
        let warnings = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&warnings);
        let warn: Warn = Arc::new(move |_, w| seen.lock().unwrap().push(w));
        let writer = spawn_writer(memory, events[..reflection - 1].to_vec(), rx, warn);
        tx.send(MemoryMsg::Event(Box::new(events[reflection - 1].clone())))
            .unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            embedder.texts.load(Ordering::SeqCst),
            0,
            "nothing is embedded before a batch or a reflection"
        );

        tx.send(MemoryMsg::Event(Box::new(events[reflection].clone())))
            .unwrap();
        let mut embedded = 0;
        for _ in 0..500 {
            embedded = embedder.texts.load(Ordering::SeqCst);
            if embedded > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(embedded > 0, "the reflection's drafts are embedded at once");
        let ids: Vec<String> = {
            let mut harvester = Harvester::new();
            events[..=reflection]
                .iter()
                .flat_map(|e| harvester.observe(e).unwrap())
                .filter(|d| d.kind == crate::MemoryKind::Reflection)
                .map(|d| d.id)
                .collect()
        };
        assert!(!ids.is_empty());
        assert!(
            index.existing(&ids).await.unwrap().is_empty(),
            "embedded, not stored before the next batch"
        );

        flush(&tx).await;
        assert_eq!(
            index.existing(&ids).await.unwrap().len(),
            ids.len(),
            "the flush stores the reflection's memories"
        );
        assert_eq!(
            embedder.texts.load(Ordering::SeqCst),
            embedded,
            "nothing was left to embed at the flush: each memory is embedded once"
        );
        drop(tx);
        writer.await.unwrap();
        assert!(warnings.lock().unwrap().is_empty(), "{warnings:?}");
    }
}
