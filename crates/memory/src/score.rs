//! Retrieval scoring, pure: reciprocal-rank fusion of the dense and lexical
//! rankings picks the candidates; each candidate is then scored
//! `w_rec·recency + w_rel·relevance + w_imp·importance` (Generative Agents'
//! code weights 0.5 / 3.0 / 2.0), every component min-max normalized over the
//! candidate set (0.5 when all candidates are equal).
//!
//! Recency decays by age rank: the NEWEST candidate has rank 0 and recency
//! `decay^0 = 1`, the next `decay^1`, and so on. (The Generative Agents
//! reference code sorts oldest-first and so gives the oldest memory the top
//! recency; that inversion is deliberately not copied.)

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::MemoryError;
use crate::record::MemoryMeta;

/// Largest `k` or candidate count accepted.
pub const MAX_RESULTS: usize = 1_000;

/// The knobs of retrieval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetrievalConfig {
    /// Candidates fetched by fusion before scoring (N).
    pub candidates: usize,
    /// Memories returned (K).
    pub k: usize,
    /// Weight of recency.
    pub recency_weight: f32,
    /// Weight of relevance.
    pub relevance_weight: f32,
    /// Weight of importance.
    pub importance_weight: f32,
    /// Recency decay per age-rank step.
    pub decay: f32,
    /// Share of BM25 in relevance (the rest is cosine similarity); 0 makes
    /// relevance plain cosine as in Generative Agents.
    pub lexical_share: f32,
    /// The `k` constant of reciprocal-rank fusion.
    pub rrf_k: f32,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        Self {
            candidates: 100,
            k: 8,
            recency_weight: 0.5,
            relevance_weight: 3.0,
            importance_weight: 2.0,
            decay: 0.99,
            lexical_share: 0.35,
            rrf_k: 60.0,
        }
    }
}

impl RetrievalConfig {
    /// Checks every knob; errors name the field.
    pub fn validate(&self) -> Result<(), MemoryError> {
        let bad = |field: &str, reason: String| MemoryError::Invalid {
            what: format!("retrieval setting `{field}`"),
            reason,
        };
        if self.k == 0 || self.k > MAX_RESULTS {
            return Err(bad("k", format!("{} is outside 1-{MAX_RESULTS}", self.k)));
        }
        if self.candidates < self.k || self.candidates > MAX_RESULTS * 10 {
            return Err(bad(
                "candidates",
                format!(
                    "{} must be at least k ({}) and at most {}",
                    self.candidates,
                    self.k,
                    MAX_RESULTS * 10
                ),
            ));
        }
        for (field, w) in [
            ("recency_weight", self.recency_weight),
            ("relevance_weight", self.relevance_weight),
            ("importance_weight", self.importance_weight),
        ] {
            if !w.is_finite() || w < 0.0 {
                return Err(bad(field, format!("{w} must be a finite number ≥ 0")));
            }
        }
        if !(self.decay > 0.0 && self.decay <= 1.0) {
            return Err(bad("decay", format!("{} must be in (0, 1]", self.decay)));
        }
        if !(0.0..=1.0).contains(&self.lexical_share) {
            return Err(bad(
                "lexical_share",
                format!("{} must be in [0, 1]", self.lexical_share),
            ));
        }
        if !(self.rrf_k.is_finite() && self.rrf_k > 0.0) {
            return Err(bad("rrf_k", format!("{} must be > 0", self.rrf_k)));
        }
        Ok(())
    }
}

/// Reciprocal-rank fusion of two rankings (best first): ids ordered by
/// `Σ 1/(rrf_k + rank)`, ties by first appearance; at most `n`.
pub fn fuse(dense: &[String], lexical: &[String], rrf_k: f32, n: usize) -> Vec<String> {
    let mut score: HashMap<&str, (f32, usize)> = HashMap::new();
    let mut order = 0usize;
    for list in [dense, lexical] {
        for (rank, id) in list.iter().enumerate() {
            let entry = score.entry(id.as_str()).or_insert_with(|| {
                order += 1;
                (0.0, order)
            });
            entry.0 += 1.0 / (rrf_k + rank as f32 + 1.0);
        }
    }
    let mut ids: Vec<(&str, (f32, usize))> = score.into_iter().collect();
    ids.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
    ids.into_iter()
        .take(n)
        .map(|(id, _)| id.to_owned())
        .collect()
}

/// A candidate with its raw signals.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoringInput {
    /// The memory.
    pub memory: MemoryMeta,
    /// Cosine similarity to the query.
    pub similarity: f32,
    /// BM25 score (0 when no query term matched).
    pub lexical: f32,
}

/// A retrieved memory with the components of its score (each normalized
/// to 0-1 over the candidate set) and its raw signals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoredMemory {
    /// The memory.
    pub memory: MemoryMeta,
    /// `w_rec·recency + w_rel·relevance + w_imp·importance`.
    pub score: f32,
    /// Normalized recency (newest candidate = 1).
    pub recency: f32,
    /// Normalized relevance.
    pub relevance: f32,
    /// Normalized importance.
    pub importance: f32,
    /// Raw cosine similarity.
    pub similarity: f32,
    /// Raw BM25 score.
    pub lexical: f32,
}

/// Min-max normalization; every value 0.5 when all are equal.
pub fn min_max(values: &[f32]) -> Vec<f32> {
    let lo = values.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if !(hi - lo).is_normal() {
        return vec![0.5; values.len()];
    }
    values.iter().map(|v| (v - lo) / (hi - lo)).collect()
}

/// Raw recency by age rank: newest `1`, then `decay`, `decay²`, … (ties in
/// time broken by id, so the order is deterministic).
pub fn recency_by_age_rank(memories: &[&MemoryMeta], decay: f32) -> Vec<f32> {
    let mut order: Vec<usize> = (0..memories.len()).collect();
    order.sort_by(|&a, &b| {
        memories[b]
            .created
            .cmp(&memories[a].created)
            .then_with(|| memories[b].id.cmp(&memories[a].id))
    });
    let mut out = vec![0.0; memories.len()];
    for (rank, i) in order.into_iter().enumerate() {
        out[i] = decay.powi(rank as i32);
    }
    out
}

/// Scores the candidates and returns the best `config.k`, best first.
pub fn score(candidates: Vec<ScoringInput>, config: &RetrievalConfig) -> Vec<ScoredMemory> {
    if candidates.is_empty() {
        return Vec::new();
    }
    let metas: Vec<&MemoryMeta> = candidates.iter().map(|c| &c.memory).collect();
    let recency = min_max(&recency_by_age_rank(&metas, config.decay));
    let importance = min_max(
        &candidates
            .iter()
            .map(|c| c.memory.importance as f32)
            .collect::<Vec<_>>(),
    );
    let cosine = min_max(&candidates.iter().map(|c| c.similarity).collect::<Vec<_>>());
    let lexical_raw: Vec<f32> = candidates.iter().map(|c| c.lexical).collect();
    let lexical = if lexical_raw.iter().all(|v| *v == 0.0) {
        vec![0.0; candidates.len()]
    } else {
        min_max(&lexical_raw)
    };
    let share = config.lexical_share;
    let relevance = min_max(
        &cosine
            .iter()
            .zip(&lexical)
            .map(|(c, l)| (1.0 - share) * c + share * l)
            .collect::<Vec<f32>>(),
    );
    let mut scored: Vec<ScoredMemory> = candidates
        .into_iter()
        .enumerate()
        .map(|(i, c)| ScoredMemory {
            score: config.recency_weight * recency[i]
                + config.relevance_weight * relevance[i]
                + config.importance_weight * importance[i],
            recency: recency[i],
            relevance: relevance[i],
            importance: importance[i],
            similarity: c.similarity,
            lexical: c.lexical,
            memory: c.memory,
        })
        .collect();
    scored.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| b.memory.created.cmp(&a.memory.created))
            .then_with(|| a.memory.id.cmp(&b.memory.id))
    });
    scored.truncate(config.k);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::MemoryKind;
    use agon_core::{DebateId, PersonaId};
    use chrono::{Duration, TimeZone, Utc};

    fn meta(id: &str, minutes: i64, importance: u8) -> MemoryMeta {
        MemoryMeta {
            id: id.into(),
            debate: DebateId::new("d"),
            persona: PersonaId::new("p"),
            content: id.into(),
            kind: MemoryKind::Message,
            importance,
            round: 1,
            created: Utc.timestamp_opt(1_700_000_000, 0).unwrap() + Duration::minutes(minutes),
        }
    }

    fn input(id: &str, minutes: i64, importance: u8, similarity: f32) -> ScoringInput {
        ScoringInput {
            memory: meta(id, minutes, importance),
            similarity,
            lexical: 0.0,
        }
    }

    #[test]
    fn the_newest_memory_has_the_highest_recency() {
        let (old, mid, new) = (meta("old", 0, 5), meta("mid", 10, 5), meta("new", 20, 5));
        // Given in an order that is neither oldest- nor newest-first.
        let r = recency_by_age_rank(&[&mid, &new, &old], 0.99);
        assert_eq!(r[1], 1.0, "newest gets decay^0");
        assert!((r[0] - 0.99).abs() < 1e-6);
        assert!((r[2] - 0.9801).abs() < 1e-6, "oldest gets decay^2");
        // And it decides between otherwise equal memories.
        let config = RetrievalConfig {
            k: 3,
            ..RetrievalConfig::default()
        };
        let scored = score(
            vec![
                input("old", 0, 5, 0.5),
                input("new", 20, 5, 0.5),
                input("mid", 10, 5, 0.5),
            ],
            &config,
        );
        let ids: Vec<&str> = scored.iter().map(|s| s.memory.id.as_str()).collect();
        assert_eq!(ids, ["new", "mid", "old"]);
        assert_eq!(scored[0].recency, 1.0);
        assert_eq!(scored[2].recency, 0.0);
    }

    #[test]
    fn components_are_min_max_normalized_and_weighted() {
        let config = RetrievalConfig {
            k: 10,
            lexical_share: 0.0,
            ..RetrievalConfig::default()
        };
        let scored = score(
            vec![
                input("a", 0, 9, 0.2),
                input("b", 5, 1, 0.8),
                input("c", 10, 5, 0.5),
            ],
            &config,
        );
        let get = |id: &str| scored.iter().find(|s| s.memory.id == id).unwrap();
        assert_eq!(get("b").relevance, 1.0);
        assert_eq!(get("a").relevance, 0.0);
        assert!((get("c").relevance - 0.5).abs() < 1e-6);
        assert_eq!(get("a").importance, 1.0);
        assert_eq!(get("b").importance, 0.0);
        for s in &scored {
            let expected = 0.5 * s.recency + 3.0 * s.relevance + 2.0 * s.importance;
            assert!((s.score - expected).abs() < 1e-5);
        }
        assert_eq!(
            scored[0].memory.id, "b",
            "3.0·relevance dominates: {scored:?}"
        );
    }

    #[test]
    fn equal_components_normalize_to_one_half() {
        assert_eq!(min_max(&[3.0, 3.0]), vec![0.5, 0.5]);
        assert_eq!(min_max(&[1.0, 3.0, 2.0]), vec![0.0, 1.0, 0.5]);
        let scored = score(vec![input("only", 0, 5, 0.3)], &RetrievalConfig::default());
        assert_eq!(scored[0].importance, 0.5);
        assert_eq!(scored[0].recency, 0.5);
    }

    #[test]
    fn fusion_rewards_agreement_between_rankings() {
        let dense = ["a", "b", "c"].map(String::from);
        let lexical = ["c", "d"].map(String::from);
        let fused = fuse(&dense, &lexical, 60.0, 10);
        assert_eq!(fused[0], "c", "in both lists: {fused:?}");
        assert_eq!(fused.len(), 4);
        assert_eq!(fuse(&dense, &lexical, 60.0, 2).len(), 2);
    }

    #[test]
    fn settings_are_checked_by_name() {
        let bad = RetrievalConfig {
            k: 0,
            ..RetrievalConfig::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("`k`"));
        let bad = RetrievalConfig {
            decay: 1.5,
            ..RetrievalConfig::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("`decay`"));
        RetrievalConfig::default().validate().unwrap();
    }
}
