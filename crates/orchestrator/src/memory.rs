//! Vector memory in a run: the writer task that harvests the event log into
//! memories (embedded in batches after each round, crux card and summary, off the
//! critical path), and recall for a turn's context.
//!
//! Both degrade: a failed batch or a failed recall appends a `step_failed`
//! warning (`memory` / `memory_recall`) and the debate goes on.

use std::collections::HashMap;
use std::sync::Arc;

use agon_context::RetrievedMemory;
use agon_core::{Blackboard, DebateEvent, DebateId, PersonaId, StepId};
use agon_memory::{DebateInfo, Harvester, Memory, MemoryDraft, MemoryFilter, MemoryKind};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// What the run sends the writer.
pub(crate) enum MemoryMsg {
    /// A persisted event, in sequence order.
    Event(Box<DebateEvent>),
    /// Store everything harvested so far, then answer.
    Flush(oneshot::Sender<()>),
}

/// A failure the writer reports back to be recorded as a warning.
pub(crate) type Warn = Arc<dyn Fn(StepId, String) + Send + Sync>;

/// The writer: folds events into drafts and stores them in batches.
pub(crate) fn spawn_writer(
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
    if let Err(err) = memory.remember(batch).await {
        warn(
            StepId::MemoryStore,
            format!(
                "storing {n} memories (round {}) failed: {err}",
                board.current_round()
            ),
        );
    }
}

/// Recalls `persona`'s memories for `query` and labels them: memories of
/// this debate by round, of earlier debates by topic and date. `aliases`
/// are the persona's other names (its display name, a role agent's
/// role), taken out of the query as its id is.
pub(crate) async fn recall(
    memory: &Memory,
    debate: &DebateId,
    persona: &PersonaId,
    aliases: Vec<String>,
    query: &str,
    cross_debate: bool,
) -> Result<Vec<RetrievedMemory>, agon_memory::MemoryError> {
    let filter = MemoryFilter {
        persona: Some(persona.clone()),
        debate: (!cross_debate).then(|| debate.clone()),
        ..MemoryFilter::default()
    };
    let aliases = [(persona.clone(), aliases)];
    let recall = memory
        .recall_aliased(query, &filter, memory.config().k, &aliases)
        .await?;
    // Each hit, then the memories around it (`Recall::expanded`): the
    // context assembler cuts from the end when its share runs out.
    let recalled = recall.expanded();
    let others: Vec<DebateId> = recalled
        .iter()
        .map(|m| m.debate.clone())
        .filter(|d| d != debate)
        .collect();
    let infos: HashMap<DebateId, DebateInfo> = if others.is_empty() {
        HashMap::new()
    } else {
        memory
            .index()
            .debates(&others)
            .await?
            .into_iter()
            .map(|i| (i.debate.clone(), i))
            .collect()
    };
    Ok(recalled
        .into_iter()
        .map(|m| {
            let kind = match m.kind {
                MemoryKind::Message => "you said",
                MemoryKind::Position => "your position",
                MemoryKind::Reflection => "reflection",
                MemoryKind::CruxCard => "crux card",
                MemoryKind::Corpus => "your source",
            };
            let label = if &m.debate == debate {
                format!("round {}, {kind}", m.round)
            } else {
                match infos.get(&m.debate) {
                    Some(i) => format!(
                        "earlier debate \"{}\", {}, {kind}",
                        i.topic,
                        i.started.format("%Y-%m-%d")
                    ),
                    None => format!("earlier debate {}, {kind}", m.debate),
                }
            };
            RetrievedMemory {
                label,
                content: m.content.clone(),
            }
        })
        .collect())
}
