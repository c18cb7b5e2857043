//! What a turn's context shows besides the blackboard: the memories it
//! recalls (and the next turn's, recalled ahead) and the evidence of the
//! speaker's corpus. Which turn recalls what is the context's and the
//! protocol's rule (`agon_context::turn_recall`, `evidence_query`,
//! `agon_protocol::recalls_after`); here it is fetched, and a failed
//! search is recorded and skipped.

use std::time::Duration;

use agon_context::ContextExtras;
use agon_core::StepId;
use agon_protocol::{Speak, Voice};

use super::Speaker;
use crate::error::OrchestratorError;

/// How long a recall ahead waits before it starts: until the turn it was
/// started from has built its prompt and sent its request (~0.5 ms), so
/// that its planning, query embedding and search do not compete with
/// them for the CPU. A model answers in tens of milliseconds at the very
/// least, so the recall is still ready for the turn after. Started at
/// once, it cost the 50 ms-stub debate 1.104 against 1.096 (`bench
/// debate`, six alternated pairs: docs/benchmarks.md).
const AHEAD_START: Duration = Duration::from_millis(2);

impl Speaker<'_> {
    /// What a turn's context shows besides the blackboard: recalled
    /// memories and evidence from the persona's corpus.
    pub(super) async fn extras_for(
        &self,
        speak: &Speak,
        lookahead: bool,
    ) -> Result<ContextExtras, OrchestratorError> {
        // The judge's brief shows neither memories nor evidence.
        if speak.voice == Voice::Judge {
            return Ok(ContextExtras::default());
        }
        let mut extras = self.memories_for(speak, lookahead).await?;
        extras.evidence = self.evidence_for(speak).await?;
        Ok(extras)
    }

    /// Passages of the speaker's corpus for a turn (none for phases that
    /// show no evidence, a persona without a corpus, or when
    /// memory is off); a failed search is recorded and skipped.
    async fn evidence_for(
        &self,
        speak: &Speak,
    ) -> Result<Vec<agon_context::EvidencePassage>, OrchestratorError> {
        let (Some(memory), Some(phase)) = (&self.ctx.memory, &speak.phase) else {
            return Ok(Vec::new());
        };
        let query = self
            .shared
            .read(|bb| agon_context::evidence_query(bb, &speak.persona, phase))
            .await;
        let Some(query) = query else {
            return Ok(Vec::new());
        };
        match agon_memory::evidence_passages(memory, &speak.persona, &query).await {
            Ok(found) => Ok(found),
            Err(e) => {
                self.shared
                    .append(vec![agon_protocol::step_failed(
                        StepId::MemoryRecall(speak.key.clone()),
                        format!("evidence search failed: {e}"),
                        chrono::Utc::now(),
                    )])
                    .await?;
                Ok(Vec::new())
            }
        }
    }

    /// Recalls for the turns after `speak` in the background, while this
    /// turn waits on its model, so the next turn finds its memories ready:
    /// the turns are planned on `board` (a copy of the blackboard, to which
    /// the planner appends this turn's message) in the same task, off the
    /// turn's path, once this turn's request is on its way
    /// ([`AHEAD_START`]). A turn whose recall was not done ahead (one the
    /// protocol could not plan yet), or whose result a memory write made
    /// out of date, recalls itself. A failure here costs nothing: that turn
    /// recalls and records its own failure.
    fn recall_ahead(
        &self,
        memory: &agon_memory::Memory,
        mut board: agon_core::Blackboard,
        speak: &Speak,
    ) {
        let memory = memory.clone();
        let protocol = std::sync::Arc::clone(&self.ctx.protocol);
        let speak = speak.clone();
        let debate = self.shared.debate.clone();
        let cross_debate = self.ctx.settings.cross_debate;
        tokio::spawn(async move {
            tokio::time::sleep(AHEAD_START).await;
            let ahead = agon_protocol::recalls_after(
                protocol.as_ref(),
                &mut board,
                &speak,
                chrono::Utc::now(),
            );
            for turn in &ahead {
                let _ = agon_memory::recall_turn_ahead(&memory, &debate, turn, cross_debate).await;
            }
        });
    }

    /// Memories for a turn's context (none for phases without a query, or
    /// when memory is off); a failed recall is recorded and skipped.
    async fn memories_for(
        &self,
        speak: &Speak,
        lookahead: bool,
    ) -> Result<ContextExtras, OrchestratorError> {
        let (Some(memory), Some(phase)) = (&self.ctx.memory, &speak.phase) else {
            return Ok(ContextExtras::default());
        };
        let (recall, ahead) = self
            .shared
            .read(|bb| {
                // The turn that runs alone next is planned on a copy of the
                // board with this turn's message appended: its recall is
                // done while this turn waits on its model (not where the
                // phase rules it out: a long session's board is too big to
                // copy at every turn).
                let ahead = (lookahead && phase.plans_ahead()).then(|| bb.clone());
                (agon_context::turn_recall(bb, &speak.persona, phase), ahead)
            })
            .await;
        if let Some(board) = ahead {
            self.recall_ahead(memory, board, speak);
        }
        let Some(recall) = recall else {
            return Ok(ContextExtras::default());
        };
        if recall.scope == agon_context::RecallScope::Session {
            // A long session's turn recalls what the rolling summaries
            // compressed: the writer stores it first (at a model's real
            // pace it has already; with an instant model it may lag).
            self.shared.flush_memory().await;
        }
        let recalled = agon_memory::recall_labelled(
            memory,
            &self.shared.debate,
            &recall,
            self.ctx.settings.cross_debate,
        )
        .await;
        match recalled {
            Ok(memories) => Ok(ContextExtras {
                memories,
                ..ContextExtras::default()
            }),
            Err(e) => {
                self.shared
                    .append(vec![agon_protocol::step_failed(
                        StepId::MemoryRecall(speak.key.clone()),
                        e,
                        chrono::Utc::now(),
                    )])
                    .await?;
                Ok(ContextExtras::default())
            }
        }
    }
}
