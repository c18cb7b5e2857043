//! Seed 003's trust memory: every formula against worked numbers.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use agon_trust::{
    AgentMemory, Candidate, Dissent, EventContext, INITIAL_TRUST, PROBATION_ROUNDS, check_reverts,
    dissent_depth, revert_earlier, select_devils_advocate,
};
use chrono::{DateTime, Duration, TimeZone, Utc};
use proptest::prelude::*;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

fn words(n: usize) -> String {
    vec!["word"; n].join(" ")
}

fn dissent(at: DateTime<Utc>, impact: bool, depth: f64) -> Dissent {
    Dissent {
        round_id: "d-1/round_1".into(),
        timestamp: at,
        context: EventContext::default(),
        dissent_text: "The plan ignores the existing tooling.".into(),
        rubric_citations: vec![],
        impact,
        depth_score: depth,
        feedback_incorporated: impact,
        embedding: None,
    }
}

#[test]
fn dissent_depth_follows_the_seed_formula() {
    // 25 words → 0.5; 2 citations → 0.4; no past dissents → novelty 0.
    assert!((dissent_depth(&words(25), 2, &[]) - 0.9).abs() < 1e-12);
    // 60 words → 1.0 (capped); 3 citations → 0.5 (capped); novelty 1 − 0.7.
    assert!((dissent_depth(&words(60), 3, &[0.2, 0.7]) - 1.8).abs() < 1e-12);
    // Everything at its cap, a dissimilar past: capped at 2.
    assert_eq!(dissent_depth(&words(100), 5, &[-0.5]), 2.0);
    // Nothing said, the same as before: 0.
    assert_eq!(dissent_depth("", 0, &[1.0]), 0.0);
    // A cosine outside [−1, 1] is clamped; a NaN counts as "the same".
    assert_eq!(dissent_depth("", 0, &[1.7]), 0.0);
    assert_eq!(dissent_depth("", 0, &[f64::NAN]), 0.0);
}

#[test]
fn novelty_uses_the_similarity_given() {
    use agon_trust::DissentDraft;
    let draft = |debate: &str| DissentDraft {
        agent: "Mara".into(),
        round_id: format!("{debate}/round_1"),
        timestamp: t0(),
        context: EventContext::default(),
        text: words(25),
        citations: vec![],
        impact: false,
        feedback_incorporated: false,
    };
    let depth_with = |similarity: f64| {
        let mut m = AgentMemory::new("Mara", "m", t0());
        m.record_debate("d-1", 1, &[draft("d-1")], t0());
        m.record_debate_with("d-2", 1, &[draft("d-2")], t0(), &|_, _| similarity);
        m.dissent_history[1].depth_score
    };
    // 25 words → 0.5, no citations; novelty 1 − similarity.
    assert!((depth_with(1.0) - 0.5).abs() < 1e-12);
    assert!((depth_with(0.0) - 1.5).abs() < 1e-12);
    assert!((depth_with(0.75) - 0.75).abs() < 1e-12);
    // The default is the words' cosine: the same words are not novel.
    let mut m = AgentMemory::new("Mara", "m", t0());
    m.record_debate("d-1", 1, &[draft("d-1")], t0());
    m.record_debate("d-2", 1, &[draft("d-2")], t0());
    assert!((m.dissent_history[1].depth_score - 0.5).abs() < 1e-9);
}

#[test]
fn a_new_agent_starts_at_0_6_on_probation_until_5_rounds() {
    let mut m = AgentMemory::new("Mara", "gpt-4o-mini", t0());
    assert_eq!(m.trust_score, INITIAL_TRUST);
    assert_eq!(m.trust_parts(t0()).score, INITIAL_TRUST);
    assert_eq!(m.trust_score_history.len(), 1);
    for round in 0..PROBATION_ROUNDS {
        assert!(m.on_probation(), "round {round}");
        m.participated(1);
    }
    assert!(!m.on_probation());
}

#[test]
fn the_seeds_example_numbers_give_the_expected_trust() {
    // The seed's long-term figures: impact ratio 0.6, average depth 0.75,
    // regret rate 0.1 → 0.4·0.6 + 0.3·(0.75 / 2) + 0.3·(1 − 0.1) = 0.6225.
    let mut m = AgentMemory::new("Creator1", "m", t0());
    for (i, (impact, depth)) in [
        (true, 0.5),
        (true, 1.0),
        (true, 0.75),
        (false, 0.75),
        (false, 0.75),
    ]
    .into_iter()
    .enumerate()
    {
        m.log_dissent(
            dissent(t0() + Duration::hours(i as i64), impact, depth),
            t0(),
        );
    }
    for i in 0..10 {
        m.log_override(
            format!("d-{i}/final"),
            EventContext::default(),
            "agent text",
            "human text",
            t0(),
        );
    }
    m.override_history[0].regret = true;
    m.rescore(t0(), "test");
    let parts = m.trust_parts(t0());
    assert_eq!(parts.impact_ratio, Some(0.6));
    assert_eq!(parts.depth_norm, Some(0.375));
    assert_eq!(parts.regret_ratio, Some(0.1));
    assert!((m.trust_score - 0.6225).abs() < 1e-12, "{}", m.trust_score);
    assert_eq!(m.trust_score_history.last().unwrap().reason, "test");
    assert!((m.long_term_stats.regret_rate_last_90d - 0.1).abs() < 1e-12);
    assert_eq!(m.long_term_stats.total_overrides, 10);
}

#[test]
fn the_window_is_90_days_unless_it_holds_too_few_events() {
    let now = t0() + Duration::days(200);
    let mut m = AgentMemory::new("Theo", "m", t0());
    for i in 0..10 {
        m.log_dissent(dissent(t0() + Duration::days(i), false, 0.0), now);
    }
    // Two recent impactful dissents: too few for the window, so all 12
    // count.
    for i in 0..2 {
        m.log_dissent(dissent(now - Duration::days(i), true, 2.0), now);
    }
    assert_eq!(m.trust_parts(now).impact_ratio, Some(2.0 / 12.0));
    // Five recent ones: the window (impact 1.0, depth 1.0) decides.
    for i in 2..5 {
        m.log_dissent(dissent(now - Duration::days(i), true, 2.0), now);
    }
    let parts = m.trust_parts(now);
    assert_eq!(parts.impact_ratio, Some(1.0));
    assert_eq!(parts.depth_norm, Some(1.0));
    // No overrides: the regret term counts as 0.6.
    assert!((parts.score - (0.4 + 0.3 + 0.3 * 0.6)).abs() < 1e-12);
}

#[test]
fn regret_is_inferred_after_the_deadline_when_the_output_moved_away() {
    let mut m = AgentMemory::new("Priya", "m", t0());
    m.log_override(
        "d-7/final",
        EventContext::default(),
        "use GraphQL",
        "keep REST",
        t0(),
    );
    let before = m.trust_score;
    // Before the 24 h deadline nothing is inferred.
    assert_eq!(
        check_reverts(
            &mut m,
            "d-7/final",
            "use GraphQL",
            t0() + Duration::hours(23)
        ),
        0
    );
    // After it, an output that still matches the human decision is fine.
    assert_eq!(
        check_reverts(&mut m, "d-7/final", "keep REST", t0() + Duration::hours(25)),
        0
    );
    // Another round's output is not this override's business.
    assert_eq!(
        check_reverts(&mut m, "d-8/final", "x", t0() + Duration::hours(25)),
        0
    );
    // The output moved away from the decision: regretted.
    assert_eq!(
        check_reverts(
            &mut m,
            "d-7/final",
            "use GraphQL",
            t0() + Duration::hours(25)
        ),
        1
    );
    let o = &m.override_history[0];
    assert!(o.regret);
    assert_eq!(o.reverted_by.as_deref(), Some("system"));
    assert!(m.trust_score < before, "{} < {before}", m.trust_score);
    assert_eq!(
        m.trust_score_history.last().unwrap().reason,
        "override_regretted"
    );
    // Marked once only.
    assert_eq!(
        check_reverts(
            &mut m,
            "d-7/final",
            "use GraphQL",
            t0() + Duration::hours(26)
        ),
        0
    );
}

#[test]
fn a_later_override_of_the_same_round_reverts_the_earlier_at_once() {
    let mut m = AgentMemory::new("Priya", "m", t0());
    let ctx = EventContext::default;
    m.log_override("d-7/final", ctx(), "a", "b", t0());
    m.log_override("d-9/final", ctx(), "x", "y", t0());
    m.log_override("d-7/final", ctx(), "b", "c", t0() + Duration::hours(1));
    assert_eq!(
        revert_earlier(&mut m, "d-7/final", "ops", t0() + Duration::hours(1)),
        1
    );
    let flags: Vec<(bool, Option<&str>)> = m
        .override_history
        .iter()
        .map(|o| (o.regret, o.reverted_by.as_deref()))
        .collect();
    assert_eq!(
        flags,
        vec![(true, Some("ops")), (false, None), (false, None)]
    );
}

fn candidate(name: &str, trust: f64, on_probation: bool) -> Candidate {
    Candidate {
        name: name.into(),
        trust,
        on_probation,
    }
}

#[test]
fn the_selection_distribution_matches_the_trust_weights() {
    let pool = [
        candidate("A", 0.9, false),
        candidate("B", 0.6, false),
        candidate("C", 0.3, false),
        candidate("D", 0.2, false), // at the floor: excluded
        candidate("E", 0.95, true), // on probation: excluded
    ];
    let mut counts = std::collections::BTreeMap::<String, u32>::new();
    let draws = 10_000u64;
    for seed in 0..draws {
        let s = select_devils_advocate(&pool, seed).unwrap();
        assert!(!s.fallback);
        *counts.entry(s.chosen).or_default() += 1;
    }
    assert_eq!(counts.get("D"), None, "{counts:?}");
    assert_eq!(counts.get("E"), None, "{counts:?}");
    // χ² against 0.9 : 0.6 : 0.3; 2 degrees of freedom, p = 0.001 → 13.82.
    let expected = [("A", 0.5), ("B", 1.0 / 3.0), ("C", 1.0 / 6.0)];
    let chi2: f64 = expected
        .iter()
        .map(|(name, p)| {
            let e = p * draws as f64;
            let o = f64::from(counts.get(*name).copied().unwrap_or(0));
            (o - e).powi(2) / e
        })
        .sum();
    assert!(chi2 < 13.82, "χ² = {chi2}: {counts:?}");
}

#[test]
fn the_selection_is_repeatable_and_falls_back_to_everyone() {
    let pool = [candidate("A", 0.1, false), candidate("B", 0.7, true)];
    let first = select_devils_advocate(&pool, 42).unwrap();
    assert!(first.fallback, "nobody is viable: all are candidates");
    assert_eq!(first.pool.len(), 2);
    assert_eq!(select_devils_advocate(&pool, 42).unwrap(), first);
    assert_eq!(select_devils_advocate(&[], 1), None);
    // Weights that are all zero draw uniformly, still deterministically.
    let zeros = [candidate("A", 0.0, false), candidate("B", 0.0, false)];
    let s = select_devils_advocate(&zeros, 3).unwrap();
    assert!(s.fallback && ["A", "B"].contains(&s.chosen.as_str()));
}

#[test]
fn a_seed_memory_file_loads_as_is_and_round_trips() {
    // The seed's `memory/<agent>.json` layout (its example, comments removed).
    let file = r#"{
      "agent_name": "Creator1",
      "model": "gpt-4o",
      "primary_role": "creator",
      "dissent_history": [{
        "round_id": "run_20250214_153000/round_2",
        "timestamp": "2025-02-14T16:20:00Z",
        "context": {"task": "Write ADR for GraphQL migration", "artifact_type": "adr"},
        "dissent_text": "The decision to use GraphQL ignores existing REST tooling...",
        "rubric_citations": ["Accuracy", "Completeness"],
        "impact": true,
        "depth_score": 1.4,
        "feedback_incorporated": true
      }],
      "override_history": [{
        "round_id": "run_20250214_153000/round_4",
        "timestamp": "2025-02-14T17:00:00Z",
        "context": {"task": "..."},
        "agent_output": "original text...",
        "human_decision": "modified text...",
        "regret": false,
        "auto_check_deadline": "2025-02-15T17:00:00Z",
        "reverted_by": null
      }],
      "trust_score": 0.78,
      "trust_score_history": [
        {"timestamp": "2025-02-14T15:30:00Z", "score": 0.72, "reason": "initial"},
        {"timestamp": "2025-02-14T16:20:00Z", "score": 0.75, "reason": "dissent_impact_true"}
      ],
      "long_term_stats": {
        "avg_dissent_depth_last_90d": 0.75,
        "dissent_impact_ratio_last_90d": 0.6,
        "total_overrides": 42,
        "regret_rate_last_90d": 0.1
      },
      "rounds_participated": 24,
      "probation_until": "2025-03-01T00:00:00Z"
    }"#;
    let m: AgentMemory = serde_json::from_str(file).unwrap();
    m.validate(t0()).unwrap();
    assert_eq!(m.dissent_history[0].depth_score, 1.4);
    assert_eq!(
        m.dissent_history[0].context.artifact_type.as_deref(),
        Some("adr")
    );
    assert!(!m.on_probation());
    let again: AgentMemory = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert_eq!(again, m);
}

#[test]
fn bad_memories_are_refused_naming_the_field() {
    let mut m = AgentMemory::new("Mara", "m", t0());
    m.log_dissent(dissent(t0() + Duration::days(3), true, 1.0), t0());
    let err = m.validate(t0()).unwrap_err().to_string();
    assert!(
        err.contains("Mara") && err.contains("dissent_history.timestamp"),
        "{err}"
    );
    let mut m = AgentMemory::new("Mara", "m", t0());
    m.trust_score = 1.5;
    assert!(
        m.validate(t0())
            .unwrap_err()
            .to_string()
            .contains("trust_score is 1.5"),
    );
    let err = serde_json::from_str::<AgentMemory>(
        r#"{"agent_name": "X", "dissent_history": [{"round_id": "r"}]}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("timestamp"), "{err}");
}

#[test]
fn raw_histories_keep_100_events_and_fold_the_rest() {
    let mut m = AgentMemory::new("Lena", "m", t0());
    for i in 0..130 {
        m.log_dissent(
            dissent(t0() + Duration::minutes(i), i < 30, 1.0),
            t0() + Duration::hours(3),
        );
    }
    assert_eq!(m.dissent_history.len(), 100);
    assert_eq!(m.long_term_stats.folded_dissents, 30);
    assert_eq!(m.long_term_stats.folded_impactful, 30);
    // All in the window (≥ 5): the window's 100 raw dissents decide.
    assert_eq!(
        m.trust_parts(t0() + Duration::hours(3)).impact_ratio,
        Some(0.0)
    );
    // Long after, fewer than 5 in the window: all history, folded included.
    let later = t0() + Duration::days(365);
    assert_eq!(m.trust_parts(later).impact_ratio, Some(30.0 / 130.0));
}

proptest! {
    #[test]
    fn trust_stays_in_0_1_and_depth_in_0_2(
        events in proptest::collection::vec((any::<bool>(), 0.0f64..=2.0, any::<bool>(), 0i64..400), 0..60),
        text_words in 0usize..200,
        citations in 0usize..10,
        sims in proptest::collection::vec(-2.0f64..2.0, 0..5),
    ) {
        let depth = dissent_depth(&words(text_words), citations, &sims);
        prop_assert!((0.0..=2.0).contains(&depth));
        let now = t0() + Duration::days(400);
        let mut m = AgentMemory::new("P", "m", t0());
        for (is_dissent, depth, flag, day) in events {
            let at = t0() + Duration::days(day);
            if is_dissent {
                m.log_dissent(dissent(at, flag, depth), now);
            } else {
                m.log_override("r", EventContext::default(), "a", "b", now);
                if flag {
                    let last = m.override_history.len() - 1;
                    m.override_history[last].regret = true;
                }
            }
            let score = m.trust_parts(now).score;
            prop_assert!((0.0..=1.0).contains(&score), "{}", score);
        }
    }

    #[test]
    fn probation_ends_exactly_at_5_rounds(rounds in 0u32..20) {
        let mut m = AgentMemory::new("P", "m", t0());
        m.participated(rounds);
        prop_assert_eq!(m.on_probation(), rounds < 5);
    }
}

/// docs/trust.md's worked example: two dissents that changed the outcome
/// (depths 1.6 and 1.2), no overrides: 0.4 · 1 + 0.3 · 0.7 + 0.3 · 0.6.
#[test]
fn the_documented_example_scores_0_79_and_is_labelled_so() {
    let mut m = AgentMemory::new("Performance Engineer", "gpt-4o-mini", t0());
    m.log_dissent(dissent(t0(), true, 1.6), t0());
    m.log_dissent(
        dissent(t0() + Duration::days(1), true, 1.2),
        t0() + Duration::days(1),
    );
    assert!((m.trust_score - 0.79).abs() < 1e-9, "{}", m.trust_score);
    m.participated(8);
    let standing = m.standing();
    assert_eq!(standing.label(), "trust 0.79");
    assert!(!standing.is_low());
}

/// A stored dissent embedding keeps the direction: its cosine with the
/// original moves by well under 0.01, and 384 dimensions take 512
/// characters.
#[test]
fn a_stored_embedding_keeps_the_cosine() {
    use agon_trust::{DissentEmbedding, cosine};
    let a: Vec<f32> = (0..384)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 70.0)
        .collect();
    let b: Vec<f32> = (0..384)
        .map(|i| ((i * 53 % 89) as f32 - 44.0) / 30.0)
        .collect();
    let qa = DissentEmbedding::encode("minilm", &a);
    let qb = DissentEmbedding::encode("minilm", &b);
    assert_eq!(qa.i8.len(), 512);
    let (va, vb) = (qa.vector().unwrap(), qb.vector().unwrap());
    assert!((cosine(&va, &a) - 1.0).abs() < 0.001);
    assert!((cosine(&va, &vb) - cosine(&a, &b)).abs() < 0.01);
    assert_eq!(
        DissentEmbedding::encode("m", &[0.0, 0.0]).vector().unwrap(),
        [0.0, 0.0]
    );
    let junk = DissentEmbedding {
        model: "m".into(),
        i8: "not base64!".into(),
    };
    assert_eq!(junk.vector(), None);
}
