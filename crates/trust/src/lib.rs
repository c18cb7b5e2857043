//! # agon-trust
//!
//! Agent trust memory (seed 003): what one agent did across debates, its
//! dissents and the human overrides of its output, the trust score,
//! probation and devil's-advocate selection computed from them, and the
//! living rubric ([`rubric`]) that high-trust overrides may change. A
//! debate reads only a snapshot of it: each agent's
//! [`agon_core::TrustStanding`] and the current `agon_core::Rubric`.
//!
//! Pure: times come from the caller (`now`), randomness from a seed, and
//! embeddings from outside (as cosine similarities), so every formula is
//! testable against worked numbers. The JSON layout is the seed's
//! `memory/<agent>.json` (snake_case keys), so those files load as they are.
//!
//! ## The trust formula
//! `trust = 0.4 · impact_ratio + 0.3 · depth_norm + 0.3 · (1 − regret_ratio)`
//! over the rolling window ([`TRUST_WINDOW_DAYS`]; all history when the
//! window holds fewer than [`MIN_WINDOW_EVENTS`] events of a kind), where
//! - `impact_ratio` = impactful dissents ÷ dissents,
//! - `depth_norm` = mean dissent depth ÷ [`MAX_DEPTH`] (depth is 0–2, so the
//!   seed's formula, which adds the raw mean, could exceed 1; halving it
//!   keeps each term in [0, 1] and the score in [0, 1]),
//! - `regret_ratio` = regretted overrides ÷ overrides.
//!
//! A term with no data behind it (no dissents yet, or no overrides yet)
//! counts as [`INITIAL_TRUST`] (0.6), so an agent with no history scores
//! exactly 0.6 and each term moves the score only once there is evidence
//! for it. Events older than the last [`RAW_EVENTS`] of a history are
//! folded into [`LongTermStats`] and count whenever all history does.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

mod metrics;
pub mod rubric;
pub use metrics::{AgentMetrics, ESCALATED};

pub use agon_core::{LOW_TRUST, TrustStanding};

/// Trust of an agent with no history.
pub const INITIAL_TRUST: f64 = 0.6;
/// Rounds an agent must have taken part in before it leaves probation.
pub const PROBATION_ROUNDS: u32 = 5;
/// Trust at or below which an agent is never chosen (unless all are).
pub const MIN_TRUST: f64 = 0.2;
/// Highest dissent depth.
pub const MAX_DEPTH: f64 = 2.0;
/// Days in the rolling window of the trust score.
pub const TRUST_WINDOW_DAYS: i64 = 90;
/// Fewest events of a kind in the window before the window is used
/// instead of all history.
pub const MIN_WINDOW_EVENTS: usize = 5;
/// Hours after an override before regret is inferred.
pub const REGRET_DEADLINE_HOURS: i64 = 24;
/// Raw events kept per history; older ones are folded into
/// [`LongTermStats`].
pub const RAW_EVENTS: usize = 100;

/// Where a dissent or override happened (the seed's `context`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EventContext {
    /// The task or topic.
    #[serde(default)]
    pub task: String,
    /// What was produced ("adr", "synthesis", "solution", …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
}

/// One dissent: the agent disagreed with the direction of a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dissent {
    /// `DEBATE/round_N`.
    pub round_id: String,
    /// When.
    pub timestamp: DateTime<Utc>,
    /// Where.
    #[serde(default)]
    pub context: EventContext,
    /// What the agent said.
    pub dissent_text: String,
    /// Rubric criteria the dissent cites.
    #[serde(default)]
    pub rubric_citations: Vec<String>,
    /// Whether the dissent changed the outcome.
    pub impact: bool,
    /// [`dissent_depth`], 0–2.
    pub depth_score: f64,
    /// Whether the target took the feedback in.
    #[serde(default)]
    pub feedback_incorporated: bool,
    /// The dissent's embedding, stored once when it is recorded (seed
    /// 003's suggestion), so novelty never embeds past dissents again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<DissentEmbedding>,
}

/// A dissent's embedding as stored: the embedder's model id and the
/// vector quantized to one signed byte a dimension (scaled by its largest
/// magnitude; the cosine, all novelty needs, is unchanged by the scale
/// and moves by well under 0.01), base64-encoded: 512 characters for 384
/// dimensions instead of ~3,000 as JSON numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DissentEmbedding {
    /// The embedder's model id (a vector of another model is not compared).
    pub model: String,
    /// The quantized vector, base64.
    pub i8: String,
}

impl DissentEmbedding {
    /// `vector` quantized, as embedded by `model`.
    pub fn encode(model: &str, vector: &[f32]) -> Self {
        use base64::Engine as _;
        let peak = vector
            .iter()
            .fold(0f32, |m, v| if v.is_finite() { m.max(v.abs()) } else { m });
        let scale = if peak > 0.0 { 127.0 / peak } else { 0.0 };
        let bytes: Vec<u8> = vector
            .iter()
            .map(|v| {
                let q = if v.is_finite() {
                    (v * scale).round()
                } else {
                    0.0
                };
                // In −127..=127 by construction; stored as its byte.
                (q.clamp(-127.0, 127.0) as i8).to_le_bytes()[0]
            })
            .collect();
        Self {
            model: model.to_owned(),
            i8: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// The stored vector (its direction; the scale is not kept), or
    /// `None` when the text is not base64.
    pub fn vector(&self) -> Option<Vec<f32>> {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.i8)
            .ok()?;
        Some(
            bytes
                .into_iter()
                .map(|b| f32::from(i8::from_le_bytes([b])))
                .collect(),
        )
    }
}

/// One human override of the system's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Override {
    /// `DEBATE/round_N` (or `DEBATE/final`).
    pub round_id: String,
    /// When.
    pub timestamp: DateTime<Utc>,
    /// Where.
    #[serde(default)]
    pub context: EventContext,
    /// What the system produced.
    pub agent_output: String,
    /// What the human put in its place.
    pub human_decision: String,
    /// Whether the override was regretted (inferred, see [`check_reverts`]).
    #[serde(default)]
    pub regret: bool,
    /// When regret is inferred if the output moved away from the decision.
    pub auto_check_deadline: DateTime<Utc>,
    /// Who reverted it (`"system"` when inferred), if anyone.
    #[serde(default)]
    pub reverted_by: Option<String>,
}

/// One point of the trust history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrustPoint {
    /// When.
    pub timestamp: DateTime<Utc>,
    /// The score then.
    pub score: f64,
    /// Why it changed (`initial`, `dissent_impact_true`, `override`, …).
    pub reason: String,
}

/// Aggregates of events older than the raw histories keep.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LongTermStats {
    /// Mean depth of the dissents of the last 90 days.
    #[serde(default)]
    pub avg_dissent_depth_last_90d: f64,
    /// Impactful ÷ all dissents of the last 90 days.
    #[serde(default)]
    pub dissent_impact_ratio_last_90d: f64,
    /// Every override ever recorded (raw and folded).
    #[serde(default)]
    pub total_overrides: u64,
    /// Regretted ÷ all overrides of the last 90 days.
    #[serde(default)]
    pub regret_rate_last_90d: f64,
    /// Dissents folded out of the raw history.
    #[serde(default)]
    pub folded_dissents: u64,
    /// Of those, the impactful ones.
    #[serde(default)]
    pub folded_impactful: u64,
    /// Sum of the folded dissents' depths.
    #[serde(default)]
    pub folded_depth_sum: f64,
    /// Overrides folded out of the raw history.
    #[serde(default)]
    pub folded_overrides: u64,
    /// Of those, the regretted ones.
    #[serde(default)]
    pub folded_regretted: u64,
}

/// One agent's memory across debates (the seed's `memory/<agent>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentMemory {
    /// The agent's name (the persona's name in debates).
    pub agent_name: String,
    /// Model it last ran on.
    #[serde(default)]
    pub model: String,
    /// creator / reviewer / curator / debater / …
    #[serde(default)]
    pub primary_role: String,
    /// Dissents, oldest first (the last [`RAW_EVENTS`]).
    #[serde(default)]
    pub dissent_history: Vec<Dissent>,
    /// Overrides, oldest first (the last [`RAW_EVENTS`]).
    #[serde(default)]
    pub override_history: Vec<Override>,
    /// Current trust, 0–1.
    #[serde(default = "initial_trust")]
    pub trust_score: f64,
    /// Every change of the trust score, oldest first.
    #[serde(default)]
    pub trust_score_history: Vec<TrustPoint>,
    /// Folded older events.
    #[serde(default)]
    pub long_term_stats: LongTermStats,
    /// Rounds taken part in.
    #[serde(default)]
    pub rounds_participated: u32,
    /// When the agent came off probation (informational: probation is
    /// counted in rounds, [`AgentMemory::on_probation`]); set when a
    /// debate brings it to [`PROBATION_ROUNDS`].
    #[serde(default)]
    pub probation_until: Option<DateTime<Utc>>,
    /// Debates already recorded here (Agon's addition to the seed's
    /// layout: recording a debate twice, e.g. on resume, changes nothing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub debates: Vec<String>,
}

fn initial_trust() -> f64 {
    INITIAL_TRUST
}

/// Why a memory cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrustError {
    /// A time lies after `now`.
    #[error("agent {agent}: {field} {time} is in the future (now {now})")]
    FutureTime {
        /// The agent.
        agent: String,
        /// Which field.
        field: &'static str,
        /// The time found.
        time: DateTime<Utc>,
        /// The clock's now.
        now: DateTime<Utc>,
    },
    /// A number outside its range.
    #[error("agent {agent}: {field} is {value}, outside {range}")]
    OutOfRange {
        /// The agent.
        agent: String,
        /// Which field.
        field: &'static str,
        /// The value found.
        value: f64,
        /// The allowed range.
        range: &'static str,
    },
    /// The agent has no name.
    #[error("an agent memory has an empty agent_name")]
    NoName,
}

/// Seed 003's dissent depth: `min(words / 50, 1) + min(0.2 · citations,
/// 0.5) + novelty`, capped at [`MAX_DEPTH`], where novelty is
/// `1 − max cosine similarity` to the agent's past dissents (0 when there
/// are none). `similarities` are those cosines, computed by the caller's
/// embedder; each is clamped to [−1, 1] and the depth to [0, 2].
pub fn dissent_depth(text: &str, citations: usize, similarities: &[f64]) -> f64 {
    let base = (text.split_whitespace().count() as f64 / 50.0).min(1.0);
    let bonus = (citations as f64 * 0.2).min(0.5);
    let novelty = similarities
        .iter()
        .map(|s| {
            if s.is_finite() {
                s.clamp(-1.0, 1.0)
            } else {
                1.0
            }
        })
        .reduce(f64::max)
        .map_or(0.0, |max| 1.0 - max);
    (base + bonus + novelty).clamp(0.0, MAX_DEPTH)
}

/// The three terms of the trust score and the score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrustParts {
    /// Impactful ÷ all dissents (`None`: no dissents).
    pub impact_ratio: Option<f64>,
    /// Mean depth ÷ 2 (`None`: no dissents).
    pub depth_norm: Option<f64>,
    /// Regretted ÷ all overrides (`None`: no overrides).
    pub regret_ratio: Option<f64>,
    /// The score, 0–1.
    pub score: f64,
}

/// The events the score is computed over: those of the last
/// [`TRUST_WINDOW_DAYS`], or all of them when the window holds fewer than
/// [`MIN_WINDOW_EVENTS`] (then `true`: the folded aggregates count too).
fn window<T>(
    items: &[T],
    time: impl Fn(&T) -> DateTime<Utc>,
    now: DateTime<Utc>,
) -> (Vec<&T>, bool) {
    let since = now - Duration::days(TRUST_WINDOW_DAYS);
    let recent: Vec<&T> = items.iter().filter(|i| time(i) >= since).collect();
    if recent.len() >= MIN_WINDOW_EVENTS {
        (recent, false)
    } else {
        (items.iter().collect(), true)
    }
}

impl AgentMemory {
    /// A new agent: trust [`INITIAL_TRUST`], on probation, with the initial
    /// point of its trust history.
    pub fn new(name: impl Into<String>, model: impl Into<String>, now: DateTime<Utc>) -> Self {
        Self {
            agent_name: name.into(),
            model: model.into(),
            primary_role: "debater".into(),
            dissent_history: Vec::new(),
            override_history: Vec::new(),
            trust_score: INITIAL_TRUST,
            trust_score_history: vec![TrustPoint {
                timestamp: now,
                score: INITIAL_TRUST,
                reason: "initial".into(),
            }],
            long_term_stats: LongTermStats::default(),
            rounds_participated: 0,
            probation_until: None,
            debates: Vec::new(),
        }
    }

    /// Records what debate `debate` added: `rounds` of participation and
    /// the agent's dissents, each with its depth (novelty against the
    /// agent's past dissents by [`word_cosine`]). `false`, changing
    /// nothing, when the debate was recorded before.
    ///
    /// [`word_cosine`]: word_cosine
    pub fn record_debate(
        &mut self,
        debate: &str,
        rounds: u32,
        dissents: &[DissentDraft],
        now: DateTime<Utc>,
    ) -> bool {
        self.record_debate_with(debate, rounds, dissents, now, &word_cosine)
    }

    /// [`record_debate`](Self::record_debate) with the similarity the
    /// novelty is measured by (seed 003: the cosine of the two texts'
    /// embeddings; [`word_cosine`]
    /// without an embedder). `similarity(new, past)` is a cosine in
    /// [−1, 1]; [`dissent_depth`] clamps it.
    pub fn record_debate_with(
        &mut self,
        debate: &str,
        rounds: u32,
        dissents: &[DissentDraft],
        now: DateTime<Utc>,
        similarity: &dyn Fn(&str, &str) -> f64,
    ) -> bool {
        if self.debates.iter().any(|d| d == debate) {
            return false;
        }
        self.debates.push(debate.to_owned());
        self.participated(rounds);
        for d in dissents {
            let similarities: Vec<f64> = self
                .dissent_history
                .iter()
                .map(|past| similarity(&d.text, &past.dissent_text))
                .collect();
            let depth_score = dissent_depth(&d.text, d.citations.len(), &similarities);
            self.log_dissent(
                Dissent {
                    round_id: d.round_id.clone(),
                    timestamp: d.timestamp,
                    context: d.context.clone(),
                    dissent_text: d.text.clone(),
                    rubric_citations: d.citations.clone(),
                    impact: d.impact,
                    depth_score,
                    feedback_incorporated: d.feedback_incorporated,
                    embedding: None,
                },
                now,
            );
        }
        self.rescore(now, "debate");
        true
    }

    /// Whether the agent is still on probation (fewer than
    /// [`PROBATION_ROUNDS`] rounds).
    pub fn on_probation(&self) -> bool {
        self.rounds_participated < PROBATION_ROUNDS
    }

    /// Checks what a loaded file may not contain: no name, a trust or a
    /// depth out of range, a time after `now`.
    pub fn validate(&self, now: DateTime<Utc>) -> Result<(), TrustError> {
        if self.agent_name.trim().is_empty() {
            return Err(TrustError::NoName);
        }
        let agent = || self.agent_name.clone();
        let future = |field: &'static str, time: DateTime<Utc>| {
            (time > now).then(|| TrustError::FutureTime {
                agent: agent(),
                field,
                time,
                now,
            })
        };
        if !(0.0..=1.0).contains(&self.trust_score) {
            return Err(TrustError::OutOfRange {
                agent: agent(),
                field: "trust_score",
                value: self.trust_score,
                range: "0..=1",
            });
        }
        for p in &self.trust_score_history {
            if let Some(e) = future("trust_score_history.timestamp", p.timestamp) {
                return Err(e);
            }
            if !(0.0..=1.0).contains(&p.score) {
                return Err(TrustError::OutOfRange {
                    agent: agent(),
                    field: "trust_score_history.score",
                    value: p.score,
                    range: "0..=1",
                });
            }
        }
        for d in &self.dissent_history {
            if let Some(e) = future("dissent_history.timestamp", d.timestamp) {
                return Err(e);
            }
            if !(0.0..=MAX_DEPTH).contains(&d.depth_score) {
                return Err(TrustError::OutOfRange {
                    agent: agent(),
                    field: "dissent_history.depth_score",
                    value: d.depth_score,
                    range: "0..=2",
                });
            }
        }
        for o in &self.override_history {
            if let Some(e) = future("override_history.timestamp", o.timestamp) {
                return Err(e);
            }
        }
        Ok(())
    }

    /// The trust score's terms and value at `now`: the raw events of the
    /// window, or all history (raw and folded) when the window holds too
    /// few.
    pub fn trust_parts(&self, now: DateTime<Utc>) -> TrustParts {
        let stats = &self.long_term_stats;
        let (dissents, all_dissents) = window(&self.dissent_history, |d| d.timestamp, now);
        let (mut n, mut impactful, mut depth) = (
            dissents.len() as f64,
            dissents.iter().filter(|d| d.impact).count() as f64,
            dissents.iter().map(|d| d.depth_score).sum::<f64>(),
        );
        if all_dissents {
            n += stats.folded_dissents as f64;
            impactful += stats.folded_impactful as f64;
            depth += stats.folded_depth_sum;
        }
        let (overrides, all_overrides) = window(&self.override_history, |o| o.timestamp, now);
        let (mut m, mut regretted) = (
            overrides.len() as f64,
            overrides.iter().filter(|o| o.regret).count() as f64,
        );
        if all_overrides {
            m += stats.folded_overrides as f64;
            regretted += stats.folded_regretted as f64;
        }
        let impact_ratio = (n > 0.0).then(|| impactful / n);
        let depth_norm = (n > 0.0).then(|| (depth / n / MAX_DEPTH).clamp(0.0, 1.0));
        let regret_ratio = (m > 0.0).then(|| regretted / m);
        let score = 0.4 * impact_ratio.unwrap_or(INITIAL_TRUST)
            + 0.3 * depth_norm.unwrap_or(INITIAL_TRUST)
            + 0.3 * regret_ratio.map_or(INITIAL_TRUST, |r| 1.0 - r);
        TrustParts {
            impact_ratio,
            depth_norm,
            regret_ratio,
            score: score.clamp(0.0, 1.0),
        }
    }

    /// Recomputes the trust score at `now` and records the change (with
    /// `reason`) when it moved.
    pub fn rescore(&mut self, now: DateTime<Utc>, reason: &str) {
        let score = self.trust_parts(now).score;
        if (score - self.trust_score).abs() > 1e-12 || self.trust_score_history.is_empty() {
            self.trust_score = score;
            self.trust_score_history.push(TrustPoint {
                timestamp: now,
                score,
                reason: reason.into(),
            });
        }
        self.refresh_stats(now);
    }

    /// Records a dissent and rescores.
    pub fn log_dissent(&mut self, dissent: Dissent, now: DateTime<Utc>) {
        let reason = if dissent.impact {
            "dissent_impact_true"
        } else {
            "dissent_impact_false"
        };
        self.dissent_history.push(dissent);
        self.fold_old();
        self.rescore(now, reason);
    }

    /// Records a human override of `agent_output` at `now`, with the regret
    /// check due [`REGRET_DEADLINE_HOURS`] later.
    pub fn log_override(
        &mut self,
        round_id: impl Into<String>,
        context: EventContext,
        agent_output: impl Into<String>,
        human_decision: impl Into<String>,
        now: DateTime<Utc>,
    ) {
        self.override_history.push(Override {
            round_id: round_id.into(),
            timestamp: now,
            context,
            agent_output: agent_output.into(),
            human_decision: human_decision.into(),
            regret: false,
            auto_check_deadline: now + Duration::hours(REGRET_DEADLINE_HOURS),
            reverted_by: None,
        });
        self.long_term_stats.total_overrides += 1;
        self.fold_old();
        self.rescore(now, "override");
    }

    /// Marks the agent as having taken part in `rounds` more rounds.
    pub fn participated(&mut self, rounds: u32) {
        self.rounds_participated = self.rounds_participated.saturating_add(rounds);
    }

    /// Moves events beyond the last [`RAW_EVENTS`] into the aggregates.
    fn fold_old(&mut self) {
        while self.dissent_history.len() > RAW_EVENTS {
            let d = self.dissent_history.remove(0);
            let s = &mut self.long_term_stats;
            s.folded_dissents += 1;
            s.folded_impactful += u64::from(d.impact);
            s.folded_depth_sum += d.depth_score;
        }
        while self.override_history.len() > RAW_EVENTS {
            let o = self.override_history.remove(0);
            let s = &mut self.long_term_stats;
            s.folded_overrides += 1;
            s.folded_regretted += u64::from(o.regret);
        }
    }

    /// The 90-day figures of [`LongTermStats`], from the raw events.
    fn refresh_stats(&mut self, now: DateTime<Utc>) {
        let since = now - Duration::days(TRUST_WINDOW_DAYS);
        let recent: Vec<&Dissent> = self
            .dissent_history
            .iter()
            .filter(|d| d.timestamp >= since)
            .collect();
        let overrides: Vec<&Override> = self
            .override_history
            .iter()
            .filter(|o| o.timestamp >= since)
            .collect();
        let ratio = |part: usize, all: usize| {
            if all == 0 {
                0.0
            } else {
                part as f64 / all as f64
            }
        };
        let s = &mut self.long_term_stats;
        s.avg_dissent_depth_last_90d = if recent.is_empty() {
            0.0
        } else {
            recent.iter().map(|d| d.depth_score).sum::<f64>() / recent.len() as f64
        };
        s.dissent_impact_ratio_last_90d =
            ratio(recent.iter().filter(|d| d.impact).count(), recent.len());
        s.regret_rate_last_90d = ratio(
            overrides.iter().filter(|o| o.regret).count(),
            overrides.len(),
        );
    }

    /// Regret rate over all raw overrides (0 without any).
    pub fn regret_rate(&self) -> f64 {
        let all = self.override_history.len();
        if all == 0 {
            0.0
        } else {
            self.override_history.iter().filter(|o| o.regret).count() as f64 / all as f64
        }
    }
}

impl AgentMemory {
    /// The standing this memory records, as a debate reads it.
    pub fn standing(&self) -> TrustStanding {
        TrustStanding {
            trust_milli: (self.trust_score.clamp(0.0, 1.0) * 1000.0).round() as u16,
            on_probation: self.on_probation(),
        }
    }
}

impl Override {
    /// Whether regret is to be inferred at `now`: not regretted yet, its
    /// deadline passed, and its decision is no longer `final_output`.
    pub fn regret_due(&self, final_output: &str, now: DateTime<Utc>) -> bool {
        !self.regret
            && now > self.auto_check_deadline
            && self.human_decision.trim() != final_output.trim()
    }
}

/// The latest human decision on each overridden round, over the memories
/// of every agent (what the output of that round is now):
/// `round → (time, text)`.
pub fn latest_decisions(memories: &[AgentMemory]) -> BTreeMap<String, (DateTime<Utc>, String)> {
    let mut latest: BTreeMap<String, (DateTime<Utc>, String)> = BTreeMap::new();
    for o in memories.iter().flat_map(|m| &m.override_history) {
        if latest
            .get(&o.round_id)
            .is_none_or(|(time, _)| o.timestamp > *time)
        {
            latest.insert(o.round_id.clone(), (o.timestamp, o.human_decision.clone()));
        }
    }
    latest
}

/// Whether [`check_reverts`] would mark any of `memory`'s overrides against
/// `latest` ([`latest_decisions`]) at `now`.
pub fn reverts_due(
    memory: &AgentMemory,
    latest: &BTreeMap<String, (DateTime<Utc>, String)>,
    now: DateTime<Utc>,
) -> bool {
    memory.override_history.iter().any(|o| {
        latest
            .get(&o.round_id)
            .is_some_and(|(_, text)| o.regret_due(text, now))
    })
}

/// Seed 003's regret inference for the overrides of `round_id`: an
/// override whose deadline has passed at `now` and whose human decision
/// differs from `final_output` (what the output is now) is marked
/// regretted, reverted by `"system"`. Returns how many were marked; the
/// score is recomputed when any was.
pub fn check_reverts(
    memory: &mut AgentMemory,
    round_id: &str,
    final_output: &str,
    now: DateTime<Utc>,
) -> usize {
    let mut marked = 0;
    for o in &mut memory.override_history {
        if o.round_id == round_id && o.regret_due(final_output, now) {
            o.regret = true;
            o.reverted_by = Some("system".into());
            marked += 1;
        }
    }
    if marked > 0 {
        memory.rescore(now, "override_regretted");
    }
    marked
}

/// A later override of the same round reverts the earlier ones at once:
/// they are marked regretted, reverted by `by`. Returns how many.
pub fn revert_earlier(
    memory: &mut AgentMemory,
    round_id: &str,
    by: &str,
    now: DateTime<Utc>,
) -> usize {
    let Some(latest) = memory
        .override_history
        .iter()
        .rposition(|o| o.round_id == round_id)
    else {
        return 0;
    };
    let mut marked = 0;
    for o in &mut memory.override_history[..latest] {
        if o.round_id == round_id && !o.regret {
            o.regret = true;
            o.reverted_by = Some(by.into());
            marked += 1;
        }
    }
    if marked > 0 {
        memory.rescore(now, "override_reverted");
    }
    marked
}

/// One candidate for the devil's-advocate slot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The agent's name.
    pub name: String,
    /// Its trust score.
    pub trust: f64,
    /// Whether it is on probation.
    pub on_probation: bool,
}

impl Candidate {
    /// The candidate `memory` describes.
    pub fn of(memory: &AgentMemory) -> Self {
        Self {
            name: memory.agent_name.clone(),
            trust: memory.trust_score,
            on_probation: memory.on_probation(),
        }
    }

    /// Whether the seed's filter keeps it: trust above [`MIN_TRUST`] and
    /// off probation.
    pub fn viable(&self) -> bool {
        self.trust > MIN_TRUST && !self.on_probation
    }
}

/// The outcome of a devil's-advocate draw, to be recorded so a resumed
/// debate repeats it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// Who was chosen.
    pub chosen: String,
    /// The candidates the draw was among, with their weights (trust).
    pub pool: BTreeMap<String, f64>,
    /// Whether no candidate was viable and all were used.
    pub fallback: bool,
    /// The seed of the draw.
    pub seed: u64,
}

/// Seed 003's devil's-advocate selection: drop candidates with trust ≤
/// [`MIN_TRUST`] or on probation (all of them when none remain), then draw
/// one weighted by trust with the RNG seeded by `seed`. `None` without
/// candidates. A pool whose weights are all zero draws uniformly.
pub fn select_devils_advocate(candidates: &[Candidate], seed: u64) -> Option<Selection> {
    if candidates.is_empty() {
        return None;
    }
    let viable: Vec<&Candidate> = candidates.iter().filter(|c| c.viable()).collect();
    let fallback = viable.is_empty();
    let pool: Vec<&Candidate> = if fallback {
        candidates.iter().collect()
    } else {
        viable
    };
    let weight = |c: &Candidate| {
        if c.trust.is_finite() {
            c.trust.max(0.0)
        } else {
            0.0
        }
    };
    let total: f64 = pool.iter().map(|c| weight(c)).sum();
    let mut rng = fastrand::Rng::with_seed(seed);
    let chosen = if total <= 0.0 {
        pool[rng.usize(..pool.len())]
    } else {
        let mut point = rng.f64() * total;
        let mut pick = pool[pool.len() - 1];
        for c in &pool {
            let w = weight(c);
            if point < w {
                pick = c;
                break;
            }
            point -= w;
        }
        pick
    };
    Some(Selection {
        chosen: chosen.name.clone(),
        pool: pool.iter().map(|c| (c.name.clone(), weight(c))).collect(),
        fallback,
        seed,
    })
}

/// A dissent found in a debate, before its depth is computed.
#[derive(Debug, Clone, PartialEq)]
pub struct DissentDraft {
    /// The dissenting agent's name.
    pub agent: String,
    /// `DEBATE/round_N`.
    pub round_id: String,
    /// When it was said.
    pub timestamp: DateTime<Utc>,
    /// The debate's topic and what was dissented from.
    pub context: EventContext,
    /// What the agent said.
    pub text: String,
    /// Rubric criteria it names.
    pub citations: Vec<String>,
    /// Whether it changed the outcome.
    pub impact: bool,
    /// Whether its target took the feedback in.
    pub feedback_incorporated: bool,
}

/// Cosine similarity of two embeddings (0 when either is empty or zero,
/// or their lengths differ).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// Cosine similarity of two texts' word counts (0 when either is empty):
/// the novelty stand-in when no embedder is at hand.
pub fn word_cosine(a: &str, b: &str) -> f64 {
    let count = |t: &str| {
        let mut m: HashMap<String, f64> = HashMap::new();
        for w in t
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 3)
        {
            *m.entry(w.to_lowercase()).or_default() += 1.0;
        }
        m
    };
    let (x, y) = (count(a), count(b));
    let dot: f64 = x.iter().filter_map(|(w, n)| y.get(w).map(|m| n * m)).sum();
    let norm = |m: &HashMap<String, f64>| m.values().map(|v| v * v).sum::<f64>().sqrt();
    let d = norm(&x) * norm(&y);
    if d == 0.0 { 0.0 } else { dot / d }
}
