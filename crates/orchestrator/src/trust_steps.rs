//! The interpreter's trust-memory step when a debate finishes (seed 003):
//! the critiques' impact judged, then each debater's record of the debate
//! stored, with novelty by the run's embedder. Every failure is a
//! `trust_memory` warning; the debate still finishes.

use agon_context::prompts;
use agon_core::StepId;
use agon_core::trust_harvest::taken_in_by_embeddings;
use agon_protocol::extract;

use crate::error::OrchestratorError;
use crate::interpreter::Interpreter;
use crate::models::Role;

impl Interpreter {
    /// Records the finished debate in its agents' trust memory.
    pub(crate) async fn record_trust(&self) -> Result<(), OrchestratorError> {
        let debate = &self.shared.debate;
        let (judged, failed) = self.judge_critiques().await;
        let records = self
            .shared
            .read(|bb| agon_core::trust_harvest::agent_records_judged(bb, debate, &judged))
            .await;
        if failed > 0 {
            self.shared
                .append(vec![agon_protocol::step_failed(
                    StepId::TrustMemory,
                    format!(
                        "{failed} critique group(s) not judged by the analysis model; their \
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
            .record_embedded(
                debate,
                &records,
                chrono::Utc::now(),
                self.ctx.memory.as_ref(),
            )
            .await
        {
            Ok((_, warning)) => warning,
            Err(e) => Some(e.to_string()),
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

    /// Seed 003's dissent impact for critiques: the analysis model judges,
    /// per round and target, which critiques the refinement took in (one
    /// call per group, concurrently; only when the debate runs its
    /// analyses). A group whose judgement fails is
    /// judged by the cosine of the critique's and the refinement's
    /// embeddings when the run has an embedder, else left to the words and
    /// ledger rule. Returns the judged critiques and how many groups failed.
    async fn judge_critiques(&self) -> (agon_core::trust_harvest::Judged, usize) {
        use agon_core::extraction::{ImpactJudgement, Payload, with_message_ids};
        let groups = self
            .shared
            .read(agon_core::trust_harvest::critique_groups)
            .await;
        // The analysis model judges when the debate runs its analyses (a
        // dialectic with `analysis` and `judge_impact` on, the defaults);
        // otherwise the embeddings or the words and ledger do, at no model
        // cost.
        let config = &self.ctx.config;
        let by_model =
            config.protocol == crate::config::ProtocolKind::Dialectic && config.dialectic.analysis;
        let asks = groups.iter().map(|g| async move {
            if !by_model {
                return (g, None);
            }
            let ids: Vec<String> = g.critiques.iter().map(ToString::to_string).collect();
            let prompt = self
                .shared
                .read(|bb| prompts::dialectic::critique_impact(bb, g))
                .await;
            let judged = match prompt {
                None => None,
                Some(prompt) => {
                    let output = self
                        .ctx
                        .structured_call(
                            Role::Extractor,
                            prompt,
                            ImpactJudgement::NAME,
                            with_message_ids(&ImpactJudgement::json_schema(), &ids),
                        )
                        .await;
                    extract(output, |j: ImpactJudgement| Ok(j.validate(&ids)))
                        .ok()
                        .map(|v| v.value().critiques.clone())
                        .filter(|c| !c.is_empty())
                }
            };
            (g, judged)
        });
        let mut out = agon_core::trust_harvest::Judged::new();
        let mut failed = 0;
        for (g, judged) in futures::future::join_all(asks).await {
            if let Some(critiques) = judged {
                for c in critiques {
                    out.insert(agon_core::MessageId::new(c.message), c.addressed);
                }
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
