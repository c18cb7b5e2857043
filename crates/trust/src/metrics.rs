//! Seed 003's metrics of one agent's memory: how much its dissents
//! mattered, how often its outputs were overridden and the overrides
//! regretted, and whether its dissents that escalated to a crux room were
//! worth the room.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::AgentMemory;

/// The artifact type of a dissent voiced in a crux room (the disagreement
/// escalated there).
pub const ESCALATED: &str = "crux room";

/// One agent's metrics. Ratios are `None` without the events they divide.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentMetrics {
    /// Dissents recorded, raw and folded.
    pub dissents: u64,
    /// Impactful ÷ all dissents, over the trust score's window.
    pub impact_ratio: Option<f64>,
    /// Mean dissent depth (0–2), over the trust score's window.
    pub mean_depth: Option<f64>,
    /// Overrides recorded, raw and folded.
    pub overrides: u64,
    /// Regretted ÷ all overrides, over the trust score's window.
    pub regret_rate: Option<f64>,
    /// Dissents that escalated to a crux room (raw history).
    pub escalations: usize,
    /// Of those, the share that changed the outcome.
    pub escalation_usefulness: Option<f64>,
    /// Debates recorded in the memory.
    pub debates: usize,
    /// How often the agent's outputs were overridden or an override of
    /// them reverted, per debate.
    pub controversy: Option<f64>,
}

impl AgentMemory {
    /// The agent's metrics at `now`.
    pub fn metrics(&self, now: DateTime<Utc>) -> AgentMetrics {
        let parts = self.trust_parts(now);
        let escalated: Vec<_> = self
            .dissent_history
            .iter()
            .filter(|d| d.context.artifact_type.as_deref() == Some(ESCALATED))
            .collect();
        let useful = escalated.iter().filter(|d| d.impact).count();
        let overrides = self.override_history.len() as u64 + self.long_term_stats.folded_overrides;
        let reverted = self
            .override_history
            .iter()
            .filter(|o| o.reverted_by.is_some())
            .count() as u64;
        let debates = self.debates.len();
        AgentMetrics {
            dissents: self.dissent_history.len() as u64 + self.long_term_stats.folded_dissents,
            impact_ratio: parts.impact_ratio,
            mean_depth: parts.depth_norm.map(|d| d * super::MAX_DEPTH),
            overrides,
            regret_rate: parts.regret_ratio,
            escalations: escalated.len(),
            escalation_usefulness: (!escalated.is_empty())
                .then(|| useful as f64 / escalated.len() as f64),
            debates,
            controversy: (debates > 0).then(|| (overrides + reverted) as f64 / debates as f64),
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::super::{Dissent, EventContext, Override};
    use super::*;

    fn dissent(artifact: &str, impact: bool, depth: f64) -> Dissent {
        Dissent {
            round_id: "d/round_1".into(),
            timestamp: Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap(),
            context: EventContext {
                task: "t".into(),
                artifact_type: Some(artifact.into()),
            },
            dissent_text: "no".into(),
            rubric_citations: Vec::new(),
            impact,
            depth_score: depth,
            feedback_incorporated: impact,
            embedding: None,
        }
    }

    #[test]
    fn the_metrics_count_what_the_seed_names() {
        let now = Utc.with_ymd_and_hms(2026, 11, 20, 0, 0, 0).unwrap();
        let mut m = AgentMemory::new("Ada", "m", now);
        let fresh = m.metrics(now);
        assert_eq!(
            (
                fresh.impact_ratio,
                fresh.escalation_usefulness,
                fresh.controversy
            ),
            (None, None, None)
        );
        m.dissent_history = vec![
            dissent("proposal", true, 1.0),
            dissent(ESCALATED, true, 1.5),
            dissent(ESCALATED, false, 0.5),
            dissent("proposal", false, 1.0),
        ];
        m.debates = vec!["d1".into(), "d2".into()];
        m.override_history = vec![Override {
            round_id: "d1/final".into(),
            timestamp: now,
            context: EventContext::default(),
            agent_output: "a".into(),
            human_decision: "b".into(),
            regret: true,
            auto_check_deadline: now,
            reverted_by: Some("system".into()),
        }];
        let got = m.metrics(now);
        assert_eq!(got.dissents, 4);
        assert_eq!(got.impact_ratio, Some(0.5));
        assert_eq!(got.mean_depth, Some(1.0));
        assert_eq!(got.escalations, 2);
        assert_eq!(got.escalation_usefulness, Some(0.5));
        assert_eq!(got.regret_rate, Some(1.0));
        // One override, reverted: two events over two debates.
        assert_eq!(got.controversy, Some(1.0));
    }
}
