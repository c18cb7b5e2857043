//! Debate-quality metrics, computed from a debate's event log (pure).
//!
//! - **crux compression**: claims resolved ÷ claims opened, and the Shannon
//!   entropy (bits) of the disagreement types over the crux cards — the two
//!   numbers Faultline published for its crux rooms;
//! - **ledger coverage**: messages analysed without a failed analysis ÷
//!   messages;
//! - per persona: concessions, shifts, the stance at the start and at the
//!   end, evidence cited, self-contradictions flagged by the analysis;
//! - **evidence reuse**: messages whose text takes up evidence already in
//!   the ledger when they were said (the speaker's own or another
//!   persona's): at least [`REUSE_OVERLAP`] of the evidence item's content
//!   words (at least two of them) appear in the message;
//! - **memory cost**: tokens of the memory-keeping roles (analysis,
//!   detection, reflections and round records) as a share of the
//!   debaters' tokens, from the usage records.

use std::collections::{BTreeMap, HashSet};

use agon_core::{ApplyError, Blackboard, ClaimStatus, DebateEvent, MessageId, PersonaId, StepId};
use agon_extract::content_words;
use agon_protocol::ModelRole;
use serde::{Deserialize, Serialize};

/// Share of an evidence item's content words a message must contain to
/// count as building on it.
pub const REUSE_OVERLAP: f64 = 0.6;

/// Usage roles whose calls keep the memory (not the debate itself).
pub const MEMORY_ROLES: [ModelRole; 3] = [
    ModelRole::Extractor,
    ModelRole::Detector,
    ModelRole::Reflector,
];

/// One persona's numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonaMetrics {
    /// The persona.
    pub persona: PersonaId,
    /// Its display name.
    pub name: String,
    /// Messages it said.
    pub messages: usize,
    /// Concessions recorded.
    pub concessions: usize,
    /// Position shifts recorded.
    pub shifts: usize,
    /// Evidence items in its ledger at the end.
    pub evidence: usize,
    /// Its overall stance when first recorded.
    pub initial_stance: String,
    /// Its overall stance at the end.
    pub final_stance: String,
    /// Whether the stance at the end differs from the first one.
    pub stance_changed: bool,
    /// Messages that built on evidence already in the ledger.
    pub evidence_reuse: usize,
    /// Messages the analysis flagged as contradicting its own position.
    pub self_contradictions: usize,
}

/// Tokens of one usage role.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleTokens {
    /// Calls made.
    pub calls: u64,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Of the input tokens, those read from a prompt cache.
    #[serde(default)]
    pub cached_input_tokens: u64,
}

impl RoleTokens {
    /// Input plus output tokens.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// One dissent this debate adds to its agent's trust memory (seed 003).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DissentRow {
    /// The agent.
    pub agent: String,
    /// Where it was voiced: `proposal` (a critique, an oppose reaction),
    /// `crux room`, `disagreement` (a strong one in the ledger).
    pub source: String,
    /// Whether it changed the outcome.
    pub impact: bool,
    /// The rubric criteria it cites (from the analysis, seed 003).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub criteria: Vec<String>,
    /// What the agent said (its first line).
    pub text: String,
}

/// A debate's metrics (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebateMetrics {
    /// Claims opened (every claim surfaced).
    pub claims_opened: usize,
    /// Claims resolved.
    pub claims_resolved: usize,
    /// `claims_resolved ÷ claims_opened`; `None` without claims.
    pub crux_compression: Option<f64>,
    /// Crux cards per disagreement type.
    pub disagreement_types: BTreeMap<String, usize>,
    /// Shannon entropy (bits) of the disagreement types over the crux
    /// cards; `None` without cards.
    pub disagreement_entropy: Option<f64>,
    /// Messages in the debate.
    pub messages: usize,
    /// Messages analysed without a failed analysis step.
    pub messages_analysed: usize,
    /// `messages_analysed ÷ messages`; `None` without messages.
    pub ledger_coverage: Option<f64>,
    /// Messages that built on evidence already in the ledger.
    pub evidence_reuse: usize,
    /// … of which on another persona's evidence.
    pub evidence_reuse_others: usize,
    /// Messages the analysis flagged as self-contradicting.
    pub self_contradictions: usize,
    /// Per debater, in debate order.
    pub personas: Vec<PersonaMetrics>,
    /// Tokens per usage role.
    pub usage: BTreeMap<agon_core::UsageRole, RoleTokens>,
    /// Tokens of the memory-keeping roles ([`MEMORY_ROLES`]).
    pub memory_tokens: u64,
    /// Tokens of the debaters' utterances.
    pub utterance_tokens: u64,
    /// `memory_tokens ÷ utterance_tokens`; `None` without utterance tokens.
    pub memory_cost: Option<f64>,
    /// The dissents the trust memory records from this debate, with their
    /// impact (critiques as the analysis judged them).
    #[serde(default)]
    pub dissents: Vec<DissentRow>,
    /// The rubric the debate was judged by (`dialectic v2`), if it read
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rubric: Option<String>,
}

/// Whether `message` takes up `evidence` ([`REUSE_OVERLAP`]).
pub fn builds_on(message: &str, evidence: &str) -> bool {
    takes_up(&content_words(message), evidence)
}

/// [`builds_on`] for a message whose content words are already known.
fn takes_up(said: &HashSet<String>, evidence: &str) -> bool {
    let wanted = content_words(evidence);
    if wanted.len() < 2 {
        return false;
    }
    let found = wanted.iter().filter(|w| said.contains(*w)).count();
    found as f64 / wanted.len() as f64 >= REUSE_OVERLAP
}

/// Shannon entropy in bits of a distribution given by counts.
pub fn entropy_bits(counts: impl IntoIterator<Item = usize>) -> Option<f64> {
    let counts: Vec<usize> = counts.into_iter().filter(|c| *c > 0).collect();
    let total: usize = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let h = counts
        .iter()
        .map(|&c| {
            let p = c as f64 / total as f64;
            -p * p.log2()
        })
        .sum::<f64>();
    // A single type gives -0.0 (−1·log2 1); report it as 0.
    Some(if h > 0.0 { h } else { 0.0 })
}

fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// Computes the metrics of the debate whose log is `events` (folding its
/// own blackboard; an event the log cannot apply is an error).
pub fn debate_metrics(events: &[DebateEvent]) -> Result<DebateMetrics, ApplyError> {
    replay_with_metrics(events).map(|(_, metrics)| metrics)
}

/// The blackboard of `events` and the debate's metrics, in one pass over
/// the log.
pub fn replay_with_metrics(
    events: &[DebateEvent],
) -> Result<(Blackboard, DebateMetrics), ApplyError> {
    let mut bb = Blackboard::new();
    let mut reuse: BTreeMap<PersonaId, usize> = BTreeMap::new();
    let mut contradictions: BTreeMap<PersonaId, usize> = BTreeMap::new();
    let (mut evidence_reuse, mut evidence_reuse_others, mut analysed) = (0usize, 0usize, 0usize);
    let mut failed: HashSet<MessageId> = HashSet::new();
    let mut usage: BTreeMap<agon_core::UsageRole, RoleTokens> = BTreeMap::new();
    for event in events {
        match event {
            DebateEvent::MessageAppended { message } => {
                // The ledger as it stands when the message is said.
                let said = content_words(&message.content);
                let mut own = false;
                let mut others = false;
                for p in bb.debaters() {
                    let Some(state) = bb.position(&p.id) else {
                        continue;
                    };
                    let hit = state
                        .aspects
                        .values()
                        .flat_map(|a| &a.evidence)
                        .any(|e| takes_up(&said, e));
                    if hit {
                        if p.id == message.persona {
                            own = true;
                        } else {
                            others = true;
                        }
                    }
                }
                if own || others {
                    evidence_reuse += 1;
                    *reuse.entry(message.persona.clone()).or_default() += 1;
                }
                evidence_reuse_others += usize::from(others);
            }
            DebateEvent::TurnAnalyzed {
                message,
                contradiction,
                ..
            } => {
                analysed += 1;
                if contradiction.is_some()
                    && let Some(m) = bb.message(message)
                {
                    *contradictions.entry(m.persona.clone()).or_default() += 1;
                }
            }
            DebateEvent::StepFailed {
                step: StepId::Analysis { message, .. },
                ..
            } => {
                failed.insert(message.clone());
            }
            DebateEvent::UsageRecorded {
                role,
                calls,
                input_tokens,
                output_tokens,
                cached_input_tokens,
                ..
            } => {
                let entry = usage.entry(role.clone()).or_default();
                entry.calls += calls;
                entry.input_tokens += input_tokens;
                entry.output_tokens += output_tokens;
                entry.cached_input_tokens += cached_input_tokens;
            }
            _ => {}
        }
        bb.apply(event)?;
    }
    let messages = bb.messages().len();
    let messages_analysed = analysed.saturating_sub(failed.len());
    let claims_opened = bb.claims().len();
    let claims_resolved = bb
        .claims()
        .iter()
        .filter(|c| c.status == ClaimStatus::Resolved)
        .count();
    let mut disagreement_types: BTreeMap<String, usize> = BTreeMap::new();
    for card in bb.crux_cards() {
        *disagreement_types
            .entry(card.disagreement_type.label().to_owned())
            .or_default() += 1;
    }
    let personas: Vec<PersonaMetrics> = bb
        .debaters()
        .map(|p| {
            let state = bb.position(&p.id).cloned().unwrap_or_default();
            PersonaMetrics {
                persona: p.id.clone(),
                name: p.name.clone(),
                messages: bb.messages().iter().filter(|m| m.persona == p.id).count(),
                concessions: state.concessions.len(),
                shifts: state.shifts.len(),
                evidence: state.aspects.values().map(|a| a.evidence.len()).sum(),
                stance_changed: !state.initial_stance.is_empty()
                    && state.initial_stance != state.overall_stance,
                initial_stance: state.initial_stance,
                final_stance: state.overall_stance,
                evidence_reuse: reuse.get(&p.id).copied().unwrap_or(0),
                self_contradictions: contradictions.get(&p.id).copied().unwrap_or(0),
            }
        })
        .collect();
    let memory_tokens: u64 = MEMORY_ROLES
        .iter()
        .filter_map(|r| usage.get(r.as_str()))
        .map(RoleTokens::total)
        .sum();
    let utterance_tokens = usage
        .get(ModelRole::Debater.as_str())
        .map_or(0, RoleTokens::total);
    let metrics = DebateMetrics {
        claims_opened,
        claims_resolved,
        crux_compression: ratio(claims_resolved, claims_opened),
        disagreement_entropy: entropy_bits(disagreement_types.values().copied()),
        disagreement_types,
        messages,
        messages_analysed,
        ledger_coverage: ratio(messages_analysed, messages),
        evidence_reuse,
        evidence_reuse_others,
        self_contradictions: contradictions.values().sum(),
        personas,
        usage,
        memory_tokens,
        utterance_tokens,
        memory_cost: (utterance_tokens > 0).then(|| memory_tokens as f64 / utterance_tokens as f64),
        dissents: dissent_rows(&bb),
        rubric: bb.rubric().map(|r| format!("`{}` v{}", r.name, r.version)),
    };
    Ok((bb, metrics))
}

/// The dissents `bb` adds to its agents' trust memories.
fn dissent_rows(bb: &Blackboard) -> Vec<DissentRow> {
    let Some(debate) = bb.debate() else {
        return Vec::new();
    };
    agon_protocol::trust_harvest::dissents_judged(bb, debate, bb.critique_impacts())
        .into_iter()
        .map(|d| DissentRow {
            agent: d.agent,
            source: d.context.artifact_type.unwrap_or_default(),
            impact: d.impact,
            criteria: d.citations,
            text: d.text.lines().next().unwrap_or_default().trim().to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_of_worked_examples() {
        assert_eq!(entropy_bits([]), None);
        assert_eq!(entropy_bits([4]), Some(0.0));
        assert!(
            entropy_bits([4]).unwrap().is_sign_positive(),
            "no -0.00 bits"
        );
        assert!((entropy_bits([1, 1]).unwrap() - 1.0).abs() < 1e-12);
        assert!((entropy_bits([2, 1, 1]).unwrap() - 1.5).abs() < 1e-12);
        assert!((entropy_bits([1, 1, 1, 1, 0]).unwrap() - 2.0).abs() < 1e-12);
    }

    #[test]
    fn a_message_builds_on_evidence_when_most_of_its_words_return() {
        let evidence = "Paris cut asthma admissions by 12% after the 2019 ban";
        assert!(builds_on(
            "As the Paris numbers show, asthma admissions fell after the ban.",
            evidence
        ));
        assert!(!builds_on("Paris is lovely in spring.", evidence));
        assert!(
            !builds_on("anything at all", "a b"),
            "too few content words"
        );
    }

    #[test]
    fn counts_agree_with_the_synthetic_log() {
        let events = agon_testkit::synthetic::debate(3, 400);
        let m = debate_metrics(&events).unwrap();
        let count = |f: &dyn Fn(&DebateEvent) -> bool| events.iter().filter(|e| f(e)).count();
        assert_eq!(
            m.messages,
            count(&|e| matches!(e, DebateEvent::MessageAppended { .. }))
        );
        assert_eq!(
            m.claims_opened,
            count(&|e| matches!(e, DebateEvent::ClaimOpened { .. }))
        );
        assert!(m.claims_opened > 0, "{m:#?}");
        assert_eq!(
            m.claims_resolved,
            count(&|e| matches!(
                e,
                DebateEvent::ClaimStatusChanged {
                    transition: agon_core::ClaimTransition::Resolved { .. },
                    ..
                }
            ))
        );
        assert_eq!(
            m.crux_compression,
            Some(m.claims_resolved as f64 / m.claims_opened as f64)
        );
        let mut types: BTreeMap<String, usize> = BTreeMap::new();
        for e in &events {
            if let DebateEvent::CruxCardAdded { card } = e {
                *types
                    .entry(card.disagreement_type.label().to_owned())
                    .or_default() += 1;
            }
        }
        assert!(!types.is_empty());
        assert_eq!(m.disagreement_types, types);
        assert_eq!(
            m.disagreement_entropy,
            entropy_bits(types.values().copied())
        );
        assert_eq!(
            m.personas.iter().map(|p| p.concessions).sum::<usize>(),
            count(&|e| matches!(e, DebateEvent::ConcessionRecorded { .. }))
        );
        assert_eq!(
            m.personas.iter().map(|p| p.messages).sum::<usize>(),
            m.messages
        );
    }
}
