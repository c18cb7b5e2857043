//! Where a debate meets its agents' trust memory (seed 003 §5-7): the
//! dissents each agent voiced, whether each changed the outcome, the rounds
//! each took part in, the debate's final output (what a human overrides),
//! and the devil's-advocate draw as the event that records it. Pure: read
//! from the blackboard and the memories given.
//!
//! Where dissents come from:
//! - **critiques** (dialectic) that are significant disagreement: the
//!   critic is the round's devil's advocate, or the analysis that read the
//!   critique recorded the critic's disagreement with the target in that
//!   round (a critique no analysis read counts). Impact: the target's refinement in the same round took it
//!   in, as the analysis model judges it ([`dissents_judged`]); without a
//!   judgement, its ledger records a concession or shift in that round, or
//!   the refinement repeats at least [`ADDRESSED_OVERLAP`] of the
//!   critique's content words;
//! - **crux-room positions** (structured debate): each party's entry
//!   position. Impact: the card resolved the claim, or the other party
//!   conceded or shifted from the room's round on;
//! - **strong disagreements** in the position ledger: impact when the
//!   other persona conceded or shifted in a later round;
//! - **oppose reactions** (deliberation): a participant whose latest
//!   reaction to a proposal is `oppose`. Impact: the proposal ended
//!   rejected or modified; feedback incorporated: modified (its proposer
//!   revised it). The text is the participant's first message after the
//!   proposal that names it, else their first message after it.
//!
//! Rubric citations come from the analysis (seed 003): the criteria of the
//! debate's rubric that the analysis recorded for the dissenter's
//! disagreement with the other party ([`rubric_citations`]). A dissent no
//! analysis read, or a debate without a rubric (a deliberation), falls
//! back to the criteria its words name ([`CRITERION_WORDS`]). Novelty, for the depth, is the caller's (it needs past
//! dissents and a similarity); [`word_cosine`] is the stand-in used without
//! an embedder.

use std::collections::{BTreeMap, BTreeSet};

use chrono::DateTime;

pub use agon_context::critiques_answered;
use agon_core::{Blackboard, DebateId, Intensity, MessageKind, PersonaId};
use agon_extract::content_words;
use agon_trust::{AgentMemory, EventContext};
pub use agon_trust::{DissentDraft, cosine, word_cosine};

/// Share of a critique's content words a refinement must repeat to count
/// as having addressed it.
pub const ADDRESSED_OVERLAP: f64 = 0.3;

/// The words that name each criterion of the built-in rubrics
/// ([`agon_core::rubric::Rubric::builtin`]): rubric, criterion, words (the
/// lexical fallback when no analysis cited criteria).
pub const CRITERION_WORDS: [(&str, &str, &[&str]); 11] = [
    (
        agon_core::rubric::DIALECTIC,
        "Functional Completeness",
        &["functional", "complete", "missing", "feature"],
    ),
    (
        agon_core::rubric::DIALECTIC,
        "Performance & Scalability",
        &["performance", "latency", "throughput", "scal", "load"],
    ),
    (
        agon_core::rubric::DIALECTIC,
        "Security",
        &["security", "secure", "attack", "auth", "vulnerab"],
    ),
    (
        agon_core::rubric::DIALECTIC,
        "Maintainability & Evolvability",
        &["maintain", "complex", "simpl", "readab", "evolv"],
    ),
    (
        agon_core::rubric::DIALECTIC,
        "Regulatory Compliance",
        &["complian", "regulat", "legal", "gdpr", "privacy"],
    ),
    (
        agon_core::rubric::DIALECTIC,
        "Testability",
        &["test", "verif"],
    ),
    (
        agon_core::rubric::DIALECTIC,
        "Requirements Fulfillment",
        &["requirement", "traceab"],
    ),
    (
        agon_core::rubric::STRUCTURED,
        "Evidence",
        &["evidence", "data", "source", "study", "studies"],
    ),
    (
        agon_core::rubric::STRUCTURED,
        "Reasoning",
        &["reason", "logic", "fallac", "premise", "assum"],
    ),
    (
        agon_core::rubric::STRUCTURED,
        "Feasibility",
        &["feasib", "practical", "implement", "afford"],
    ),
    (
        agon_core::rubric::STRUCTURED,
        "Trade-offs",
        &["trade-off", "tradeoff", "downside", "balance", "cost"],
    ),
];

/// The cosine of a critique's and the refinement's embeddings from which
/// the critique counts as taken in (the fallback when the analysis model's
/// judgement is not at hand).
pub const EMBEDDED_TAKEN_IN: f64 = 0.6;

/// Whether a critique was taken in, judged by embeddings: the cosine of
/// the refinement's and the critique's reaches [`EMBEDDED_TAKEN_IN`].
pub fn taken_in_by_embeddings(refinement: &[f32], critique: &[f32]) -> bool {
    cosine(refinement, critique) >= EMBEDDED_TAKEN_IN
}

/// The criteria of the built-in rubric `rubric` (`dialectic`,
/// `structured`) that `text` names; none for a protocol without a rubric.
pub fn citations(rubric: Option<&str>, text: &str) -> Vec<String> {
    let Some(rubric) = rubric else {
        return Vec::new();
    };
    let lower = text.to_lowercase();
    CRITERION_WORDS
        .iter()
        .filter(|(of, _, words)| *of == rubric && words.iter().any(|w| lower.contains(w)))
        .map(|(_, name, _)| (*name).to_owned())
        .collect()
}

/// The built-in rubric a debate's protocol is judged by.
fn rubric_name(board: &Blackboard) -> Option<&'static str> {
    agon_core::rubric::rubric_of(board.protocol())
}

/// The rubric criteria of a dissent by `dissenter` against `other`: with
/// a rubric read and the dissent's message analysed, the criteria the
/// analysis cited for `dissenter`'s disagreements with `other` (in `round`
/// when given), each once; otherwise [`citations`] of `text`.
pub fn rubric_citations(
    board: &Blackboard,
    dissenter: &PersonaId,
    other: Option<&PersonaId>,
    round: Option<u32>,
    analysed: bool,
    text: &str,
) -> Vec<String> {
    if board.rubric().is_none() || !analysed {
        return citations(rubric_name(board), text);
    }
    let mut out: Vec<String> = Vec::new();
    let Some(state) = board.position(dissenter) else {
        return out;
    };
    for d in state
        .disagreements
        .iter()
        .filter(|d| other.is_none_or(|o| &d.with == o) && round.is_none_or(|r| d.round == r))
    {
        for c in &d.criteria {
            if !out.contains(c) {
                out.push(c.clone());
            }
        }
    }
    out
}

/// Whether `persona` conceded or shifted in round `from` or later.
fn moved_since(board: &Blackboard, persona: &PersonaId, from: u32) -> bool {
    board.position(persona).is_some_and(|p| {
        p.concessions.iter().any(|c| c.round >= from) || p.shifts.iter().any(|s| s.round >= from)
    })
}

/// Every dissent of the debate, in transcript order (critiques and crux
/// positions), then the strong disagreements of the ledger.
pub fn dissents(board: &Blackboard, debate: &DebateId) -> Vec<DissentDraft> {
    dissents_judged(board, debate, &Judged::new())
}

/// The critiques whose impact is judged by someone (the analysis model):
/// each critique's message id with whether its target's refinement took it
/// in. [`critique_groups`] lists what to ask.
pub type Judged = std::collections::BTreeMap<agon_core::MessageId, bool>;

/// The critiques to judge: per round and target with a refinement, the
/// target's proposal, the critiques it received and its refinement.
pub fn critique_groups(board: &Blackboard) -> Vec<CritiqueGroup> {
    let mut out: Vec<CritiqueGroup> = Vec::new();
    for m in board.messages() {
        let MessageKind::Critique { target } = &m.kind else {
            continue;
        };
        if let Some(g) = out
            .iter_mut()
            .find(|g| g.round == m.round && &g.target == target)
        {
            g.critiques.push(m.id.clone());
            continue;
        }
        let find = |kind: MessageKind| {
            board
                .messages()
                .iter()
                .find(|r| r.kind == kind && &r.persona == target && r.round == m.round)
                .map(|r| r.id.clone())
        };
        let (Some(proposal), Some(refinement)) =
            (find(MessageKind::Proposal), find(MessageKind::Refinement))
        else {
            continue;
        };
        out.push(CritiqueGroup {
            round: m.round,
            target: target.clone(),
            proposal,
            critiques: vec![m.id.clone()],
            refinement,
        });
    }
    out
}

/// One target's proposal in a round, the critiques it received and its
/// refinement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CritiqueGroup {
    /// The round.
    pub round: u32,
    /// Whose proposal.
    pub target: PersonaId,
    /// The proposal.
    pub proposal: agon_core::MessageId,
    /// The critiques, in order.
    pub critiques: Vec<agon_core::MessageId>,
    /// The refinement.
    pub refinement: agon_core::MessageId,
}

/// Whether a critique is a dissent (seed 003: significant disagreement,
/// not every critique): its critic is the round's devil's advocate, or the
/// analysis that read it recorded the critic's disagreement with the
/// target in that round. A critique no analysis read (analysis off) counts,
/// as nothing says otherwise.
fn significant(
    board: &Blackboard,
    critique: &agon_core::DialogueMessage,
    target: &PersonaId,
) -> bool {
    board.devils_advocate(critique.round) == Some(&critique.persona)
        || !board.is_analyzed(&critique.id)
        || board.position(&critique.persona).is_some_and(|p| {
            p.disagreements
                .iter()
                .any(|d| &d.with == target && d.round == critique.round)
        })
}

/// [`dissents`], with the critiques in `judged` taking their judged impact
/// instead of the lexical and ledger rule.
pub fn dissents_judged(
    board: &Blackboard,
    debate: &DebateId,
    judged: &Judged,
) -> Vec<DissentDraft> {
    let task = board
        .topic()
        .map(|t| t.question.clone())
        .unwrap_or_default();
    let context = |what: &str| EventContext {
        task: task.clone(),
        artifact_type: Some(what.to_owned()),
    };
    let mut out = Vec::new();
    for m in board.messages() {
        match &m.kind {
            MessageKind::Critique { target } => {
                if !significant(board, m, target) {
                    continue;
                }
                let refinement = board.messages().iter().find(|r| {
                    r.kind == MessageKind::Refinement && &r.persona == target && r.round == m.round
                });
                let words = content_words(&m.content);
                let repeated = refinement.map_or(0, |r| {
                    let theirs = content_words(&r.content);
                    words.intersection(&theirs).count()
                });
                let addressed =
                    !words.is_empty() && repeated as f64 / words.len() as f64 >= ADDRESSED_OVERLAP;
                let moved = board.position(target).is_some_and(|p| {
                    p.concessions.iter().any(|c| c.round == m.round)
                        || p.shifts.iter().any(|s| s.round == m.round)
                });
                let impact = match judged.get(&m.id) {
                    Some(taken_in) => *taken_in,
                    None => refinement.is_some() && (addressed || moved),
                };
                out.push(DissentDraft {
                    agent: board.persona_name(&m.persona).to_owned(),
                    round_id: format!("{debate}/round_{}", m.round),
                    timestamp: m.time,
                    context: context("proposal"),
                    text: m.content.clone(),
                    citations: rubric_citations(
                        board,
                        &m.persona,
                        Some(target),
                        Some(m.round),
                        board.is_analyzed(&m.id),
                        &m.content,
                    ),
                    impact,
                    feedback_incorporated: impact,
                });
            }
            MessageKind::CruxPosition => {
                let Some(room) = &m.crux_room else { continue };
                let Some(claim) = board
                    .claims()
                    .iter()
                    .find(|c| c.crux_room.as_ref() == Some(room))
                else {
                    continue;
                };
                let other = claim.personas.iter().find(|p| **p != m.persona);
                let resolved = board
                    .crux_cards()
                    .iter()
                    .any(|c| c.claim.as_ref() == Some(&claim.id) && c.resolved);
                let impact = resolved || other.is_some_and(|o| moved_since(board, o, m.round));
                out.push(DissentDraft {
                    agent: board.persona_name(&m.persona).to_owned(),
                    round_id: format!("{debate}/{room}"),
                    timestamp: m.time,
                    context: context(agon_trust::ESCALATED),
                    text: m.content.clone(),
                    citations: rubric_citations(
                        board,
                        &m.persona,
                        other,
                        None,
                        board.is_analyzed(&m.id),
                        &m.content,
                    ),
                    impact,
                    feedback_incorporated: impact,
                });
            }
            _ => {}
        }
    }
    for proposal in board.proposals() {
        use agon_core::{ProposalStatus, Reaction};
        let start = board
            .messages()
            .iter()
            .position(|m| m.persona == proposal.proposer && m.time >= proposal.time)
            .map_or(0, |i| i + 1);
        for (persona, _) in proposal
            .reactions
            .iter()
            .filter(|(_, r)| **r == Reaction::Oppose)
        {
            let after = || {
                board.messages()[start.min(board.messages().len())..]
                    .iter()
                    .filter(move |m| &m.persona == persona)
            };
            let named = after().find(|m| m.content.contains(proposal.id.as_str()));
            let Some(message) = named.or_else(|| after().next()) else {
                continue;
            };
            let impact = matches!(
                proposal.status,
                ProposalStatus::Rejected | ProposalStatus::Modified
            );
            out.push(DissentDraft {
                agent: board.persona_name(persona).to_owned(),
                round_id: format!("{debate}/{}", proposal.id),
                timestamp: message.time,
                context: context("proposal"),
                text: message.content.clone(),
                citations: citations(rubric_name(board), &message.content),
                impact,
                feedback_incorporated: proposal.status == ProposalStatus::Modified,
            });
        }
    }
    let time = board
        .messages()
        .last()
        .map_or(DateTime::UNIX_EPOCH, |m| m.time);
    for p in board.debaters() {
        let Some(state) = board.position(&p.id) else {
            continue;
        };
        for d in state
            .disagreements
            .iter()
            .filter(|d| d.intensity == Intensity::Strong)
        {
            let impact = moved_since(board, &d.with, d.round + 1);
            out.push(DissentDraft {
                agent: p.name.clone(),
                round_id: format!("{debate}/round_{}", d.round),
                timestamp: time,
                context: context("disagreement"),
                text: d.on.clone(),
                citations: if board.rubric().is_some() {
                    d.criteria.clone()
                } else {
                    citations(rubric_name(board), &d.on)
                },
                impact,
                feedback_incorporated: impact,
            });
        }
    }
    out
}

/// How many rounds each debater spoke in, by name.
pub fn rounds_participated(board: &Blackboard) -> BTreeMap<String, u32> {
    let mut rounds: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    for p in board.debaters() {
        rounds.entry(p.name.clone()).or_default();
    }
    for m in board.messages() {
        if board.persona(&m.persona).is_some_and(|p| p.is_debater()) {
            rounds
                .entry(board.persona_name(&m.persona).to_owned())
                .or_default()
                .insert(m.round);
        }
    }
    rounds
        .into_iter()
        .map(|(name, r)| (name, r.len() as u32))
        .collect()
}

/// What a debate adds to one agent's memory.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRecord {
    /// The agent's name.
    pub agent: String,
    /// The model its last message came from (empty when unknown).
    pub model: String,
    /// The role it played: a dialectic agent's (`architect`, `kiss`, …),
    /// else `debater`.
    pub role: String,
    /// Rounds it spoke in.
    pub rounds: u32,
    /// Its dissents.
    pub dissents: Vec<DissentDraft>,
}

/// What the debate adds to each debater's memory, by name.
pub fn agent_records(board: &Blackboard, debate: &DebateId) -> Vec<AgentRecord> {
    agent_records_judged(board, debate, &Judged::new())
}

/// [`agent_records`] with judged critique impacts ([`dissents_judged`]).
pub fn agent_records_judged(
    board: &Blackboard,
    debate: &DebateId,
    judged: &Judged,
) -> Vec<AgentRecord> {
    let drafts = dissents_judged(board, debate, judged);
    rounds_participated(board)
        .into_iter()
        .map(|(agent, rounds)| {
            let model = board
                .messages()
                .iter()
                .rev()
                .filter(|m| board.persona_name(&m.persona) == agent)
                .find_map(|m| m.meta.as_ref().map(|meta| meta.model.clone()))
                .unwrap_or_default();
            let dissents = drafts
                .iter()
                .filter(|d| d.agent == agent)
                .cloned()
                .collect();
            let role = board
                .debaters()
                .find(|p| p.name == agent)
                .and_then(|p| p.specialty)
                .map_or_else(|| "debater".to_owned(), |r| r.as_str().to_owned());
            AgentRecord {
                agent,
                model,
                role,
                rounds,
                dissents,
            }
        })
        .collect()
}

/// The final output of a debate: the judge's solution of the latest round
/// (dialectic), else the synthesis (structured). `(text, artifact type)`.
pub fn final_output(bb: &Blackboard) -> Option<(String, &'static str)> {
    if let Some(solution) = bb.solutions().last() {
        return Some((solution.description.clone(), "solution"));
    }
    bb.messages()
        .iter()
        .rev()
        .find(|m| m.kind == MessageKind::Synthesis)
        .map(|m| (m.content.clone(), "synthesis"))
}

/// The round id overrides of a debate's final output are recorded under.
pub fn final_round_id(debate: &DebateId) -> String {
    format!("{debate}/final")
}

/// The seed of a debate's draw for `round`: stable across runs and
/// resumes (FNV-1a of `DEBATE/ROUND`).
pub fn draw_seed(debate: &DebateId, round: u32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in format!("{debate}/{round}").bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Seed 003's devil's-advocate draw among `candidates` (id, name), with
/// the memories found for them (by position; a missing one is a new agent),
/// as the event that records it; `None` without candidates.
pub fn draw(
    debate: &DebateId,
    round: u32,
    candidates: &[(PersonaId, String)],
    memories: &[Option<AgentMemory>],
) -> Option<agon_core::DebateEvent> {
    use agon_trust::{Candidate, INITIAL_TRUST, select_devils_advocate};
    let pool: Vec<Candidate> = candidates
        .iter()
        .enumerate()
        .map(
            |(i, (_, name))| match memories.get(i).and_then(Option::as_ref) {
                Some(m) => Candidate::of(m),
                None => Candidate {
                    name: name.clone(),
                    trust: INITIAL_TRUST,
                    on_probation: true,
                },
            },
        )
        .collect();
    let seed = draw_seed(debate, round);
    let id_of = |name: &str| {
        candidates
            .iter()
            .find(|(_, n)| n == name)
            .map(|(id, _)| id.clone())
    };
    let selection = select_devils_advocate(&pool, seed)?;
    Some(agon_core::DebateEvent::DevilsAdvocateChosen {
        round,
        persona: id_of(&selection.chosen)?,
        pool: selection
            .pool
            .iter()
            .filter_map(|(name, trust)| {
                Some((
                    id_of(name)?,
                    (trust.clamp(0.0, 1.0) * 1000.0).round() as u16,
                ))
            })
            .collect(),
        fallback: selection.fallback,
        seed,
    })
}
