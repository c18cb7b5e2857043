//! Retrieval scoring, pure: reciprocal-rank fusion of the dense and lexical
//! rankings picks the candidates; each candidate is then scored
//! `w_rec·recency + w_rel·relevance + w_imp·importance + w_spk·speaker`
//! (Generative Agents' code weights 0.5 / 3.0 / 2.0 for the first three).
//!
//! - **relevance** is score-aware fusion: `(1 − s)·cos + s·bm25`, each
//!   min-max normalized over the candidates, `s` = [`RetrievalConfig::lexical_share`];
//!   the query's persona names are taken out of both signals first
//!   (see [`crate::names`]): a name is a field, not content;
//! - **recency** decays with time: `0.5^(age / half-life)`, the age measured
//!   from the newest candidate, so the newest candidate has recency 1 and a
//!   memory one half-life older 0.5. It is not normalized over the
//!   candidates: candidates of the same hour all get ≈ 1 and recency then
//!   reorders nothing, however many there are. (An earlier version ranked by
//!   list position, `0.99^rank`, which pushed old answers down even when all
//!   candidates were days apart);
//! - **importance** is the 1-10 score, min-max normalized (0.5 when all equal);
//! - **speaker** is 1 when the memory's persona is named in the query.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

pub use agon_context::RetrievalConfig;

use crate::record::MemoryMeta;

/// Largest `k` or candidate count accepted.
pub const MAX_RESULTS: usize = RetrievalConfig::MAX_RESULTS;

/// Largest number of neighbours on each side of a hit.
pub const MAX_NEIGHBOURS: usize = RetrievalConfig::MAX_NEIGHBOURS;

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
    /// Whether the query names the memory's persona.
    pub speaker: bool,
}

/// A retrieved memory with the components of its score and its raw
/// signals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoredMemory {
    /// The memory.
    pub memory: MemoryMeta,
    /// `w_rec·recency + w_rel·relevance + w_imp·importance + w_spk·speaker`.
    pub score: f32,
    /// Recency, 0-1 (the newest candidate 1, one half-life older 0.5).
    pub recency: f32,
    /// Relevance, min-max normalized over the candidates.
    pub relevance: f32,
    /// Importance, min-max normalized over the candidates.
    pub importance: f32,
    /// 1 when the query names the memory's persona, else 0.
    #[serde(default)]
    pub speaker: f32,
    /// Raw cosine similarity.
    pub similarity: f32,
    /// Raw BM25 score.
    pub lexical: f32,
    /// The neighbouring memories (same debate, same filter), oldest first,
    /// when [`RetrievalConfig::neighbours`] is above 0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<MemoryMeta>,
    /// When the memory no longer holds: what replaced it and when
    /// ([`crate::validity`]); `None` for a current memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successor: Option<crate::validity::Successor>,
    /// The relative times of the memory's text ("last Friday") resolved
    /// against the day it was said ([`crate::dates`]); the text itself
    /// is left as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dates: Vec<crate::dates::ResolvedDate>,
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

/// Recency by time: `0.5^(age / half_life)`, the age (hours) counted from
/// the newest of `memories`; the newest gets 1.
pub fn recency_by_time(memories: &[&MemoryMeta], half_life_hours: f32) -> Vec<f32> {
    let Some(newest) = memories.iter().map(|m| m.created).max() else {
        return Vec::new();
    };
    memories
        .iter()
        .map(|m| {
            let hours = (newest - m.created).num_seconds() as f32 / 3_600.0;
            0.5f32.powf(hours / half_life_hours)
        })
        .collect()
}

/// Scores the candidates and returns the best `config.k`, best first.
pub fn score(candidates: Vec<ScoringInput>, config: &RetrievalConfig) -> Vec<ScoredMemory> {
    if candidates.is_empty() {
        return Vec::new();
    }
    let metas: Vec<&MemoryMeta> = candidates.iter().map(|c| &c.memory).collect();
    let recency = recency_by_time(&metas, config.recency_half_life_hours);
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
        .map(|(i, c)| {
            let speaker = if c.speaker { 1.0 } else { 0.0 };
            ScoredMemory {
                score: config.recency_weight * recency[i]
                    + config.relevance_weight * relevance[i]
                    + config.importance_weight * importance[i]
                    + config.speaker_weight * speaker,
                recency: recency[i],
                relevance: relevance[i],
                importance: importance[i],
                speaker,
                similarity: c.similarity,
                lexical: c.lexical,
                memory: c.memory,
                context: Vec::new(),
                successor: None,
                dates: Vec::new(),
            }
        })
        .collect();
    scored.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| b.memory.created.cmp(&a.memory.created))
            .then_with(|| a.memory.id.cmp(&b.memory.id))
    });
    scored.truncate(config.k);
    // A corpus chunk's day is when it was added, not when it was written.
    for hit in scored.iter_mut().filter(|h| !h.memory.kind.is_corpus()) {
        hit.dates = crate::dates::resolved(&hit.memory.content, hit.memory.created.date_naive());
    }
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
            subject: None,
        }
    }

    fn input(id: &str, minutes: i64, importance: u8, similarity: f32) -> ScoringInput {
        ScoringInput {
            memory: meta(id, minutes, importance),
            similarity,
            lexical: 0.0,
            speaker: false,
        }
    }

    #[test]
    fn recency_halves_every_half_life_counted_from_the_newest_candidate() {
        let (old, mid, new) = (
            meta("old", 0, 5),
            meta("mid", 7 * 24 * 60, 5),
            meta("new", 14 * 24 * 60, 5),
        );
        // Given in an order that is neither oldest- nor newest-first.
        let r = recency_by_time(&[&mid, &new, &old], 168.0);
        assert_eq!(r[1], 1.0, "the newest");
        assert!((r[0] - 0.5).abs() < 1e-6, "one week older: {r:?}");
        assert!((r[2] - 0.25).abs() < 1e-6, "two weeks older: {r:?}");
        // It decides between otherwise equal memories.
        let config = RetrievalConfig {
            k: 3,
            ..RetrievalConfig::default()
        };
        let scored = score(
            vec![
                input("old", 0, 5, 0.5),
                input("new", 14 * 24 * 60, 5, 0.5),
                input("mid", 7 * 24 * 60, 5, 0.5),
            ],
            &config,
        );
        let ids: Vec<&str> = scored.iter().map(|s| s.memory.id.as_str()).collect();
        assert_eq!(ids, ["new", "mid", "old"]);
        // Candidates minutes apart all keep a recency of about 1: recency
        // reorders nothing among them, however many there are.
        let close: Vec<MemoryMeta> = (0..100).map(|i| meta(&format!("m{i}"), i, 5)).collect();
        let refs: Vec<&MemoryMeta> = close.iter().collect();
        assert!(recency_by_time(&refs, 168.0).iter().all(|r| *r > 0.99));
    }

    #[test]
    fn a_named_speaker_adds_its_weight() {
        let config = RetrievalConfig {
            k: 2,
            ..RetrievalConfig::default()
        };
        let mut named = input("named", 0, 5, 0.5);
        named.speaker = true;
        let scored = score(vec![input("other", 0, 5, 0.5), named], &config);
        assert_eq!(scored[0].memory.id, "named");
        assert_eq!(scored[0].speaker, 1.0);
        assert!((scored[0].score - scored[1].score - config.speaker_weight).abs() < 1e-6);
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
            assert_eq!(s.speaker, 0.0);
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
        assert_eq!(scored[0].recency, 1.0, "the newest candidate");
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
            recency_half_life_hours: 0.0,
            ..RetrievalConfig::default()
        };
        let err = bad.validate().unwrap_err().to_string();
        assert!(err.contains("`recency_half_life_hours`"), "{err}");
        let bad = RetrievalConfig {
            neighbours: 9,
            ..RetrievalConfig::default()
        };
        assert!(
            bad.validate()
                .unwrap_err()
                .to_string()
                .contains("`neighbours`")
        );
        RetrievalConfig::default().validate().unwrap();
    }
}
