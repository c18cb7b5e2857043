//! The interpreter's trust-memory step when a debate finishes (seed 003):
//! the critiques' impact as the round analyses judged it, then each
//! debater's record of the debate
//! stored, with novelty by the run's embedder. Every failure is a
//! `trust_memory` warning; the debate still finishes.

use agon_core::StepId;
use agon_protocol::trust_harvest::taken_in_by_embeddings;

use crate::error::OrchestratorError;
use crate::interpreter::Interpreter;

impl Interpreter {
    /// Records the finished debate in its agents' trust memory.
    pub(crate) async fn record_trust(
        &self,
        finish: agon_protocol::Finish,
    ) -> Result<(), OrchestratorError> {
        let debate = &self.shared.debate;
        let (judged, failed) = self
            .judge_critiques(finish.critiques_judged_by_analysis)
            .await;
        let records = self
            .shared
            .read(|bb| agon_protocol::trust_harvest::agent_records_judged(bb, debate, &judged))
            .await;
        if failed > 0 {
            self.shared
                .append(vec![agon_protocol::step_failed(
                    StepId::TrustMemory,
                    format!(
                        "{failed} critique group(s) not judged by the round analyses; their \
                         impact comes from embeddings or the words and ledger"
                    ),
                    chrono::Utc::now(),
                )])
                .await?;
        }
        // Novelty by the vector memory's embedder when the run has one.
        let warning = match self
            .ctx
            .trust
            .record(
                debate,
                &records,
                chrono::Utc::now(),
                self.ctx.memory.as_ref(),
            )
            .await
        {
            Ok(warning) => warning,
            Err(e) => Some(e),
        };
        if let Some(reason) = warning {
            self.shared
                .append(vec![agon_protocol::step_failed(
                    StepId::TrustMemory,
                    reason,
                    chrono::Utc::now(),
                )])
                .await?;
        }
        Ok(())
    }

    /// Seed 003's dissent impact for critiques: what the round analyses
    /// judged (`critiques_judged`, read in the same call that analysed
    /// each round, when `judge_impact` is on). A group with no judgement
    /// is judged by the cosine of the critique's and the refinement's
    /// embeddings when the run has an embedder, else left to the words and
    /// ledger rule. Returns the judged critiques and how many groups the
    /// analyses should have judged but did not.
    async fn judge_critiques(
        &self,
        by_model: bool,
    ) -> (agon_protocol::trust_harvest::Judged, usize) {
        let (groups, mut out) = self
            .shared
            .read(|bb| {
                (
                    agon_protocol::trust_harvest::critique_groups(bb),
                    bb.critique_impacts().clone(),
                )
            })
            .await;
        let mut failed = 0;
        for g in &groups {
            if g.critiques.iter().all(|c| out.contains_key(c)) {
                continue;
            }
            failed += usize::from(by_model);
            let Some(memory) = &self.ctx.memory else {
                continue;
            };
            let texts: Vec<String> = self
                .shared
                .read(|bb| {
                    std::iter::once(&g.refinement)
                        .chain(&g.critiques)
                        .filter_map(|id| bb.message(id).map(|m| m.content.clone()))
                        .collect()
                })
                .await;
            if let Ok(vectors) = memory.embed_documents(&texts).await
                && vectors.len() == g.critiques.len() + 1
            {
                for (id, v) in g.critiques.iter().zip(&vectors[1..]) {
                    out.insert(id.clone(), taken_in_by_embeddings(&vectors[0], v));
                }
            }
        }
        (out, failed)
    }
}
