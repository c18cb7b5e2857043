//! What a turn recalls from vector memory: the query for a persona's turn
//! in a phase, and the knobs of the scored retrieval that answers it
//! ([`RetrievalConfig`], run by `agon-memory`). Pure; the orchestrator
//! runs the recall.

use agon_core::{Blackboard, PersonaId};
use serde::{Deserialize, Serialize};

use crate::error::ContextError;
use crate::phase::Phase;

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
    /// Weight of a memory whose persona the query names.
    pub speaker_weight: f32,
    /// Hours after which recency halves.
    pub recency_half_life_hours: f32,
    /// Share of BM25 in relevance (the rest is cosine similarity); 0 makes
    /// relevance plain cosine as in Generative Agents.
    pub lexical_share: f32,
    /// The `k` constant of reciprocal-rank fusion.
    pub rrf_k: f32,
    /// Memories returned on each side of a hit as its context (the
    /// neighbouring memories of the same debate that pass the filter).
    pub neighbours: usize,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        Self {
            candidates: 100,
            k: 8,
            recency_weight: 0.5,
            relevance_weight: 3.0,
            importance_weight: 2.0,
            speaker_weight: 0.25,
            recency_half_life_hours: 168.0,
            lexical_share: 0.3,
            rrf_k: 60.0,
            neighbours: 1,
        }
    }
}

impl RetrievalConfig {
    /// Largest `k` or candidate count accepted.
    pub const MAX_RESULTS: usize = 1_000;

    /// Largest number of neighbours on each side of a hit.
    pub const MAX_NEIGHBOURS: usize = 5;

    /// Checks every knob; errors name the field.
    pub fn validate(&self) -> Result<(), ContextError> {
        let bad = |field: &str, reason: String| ContextError::InvalidRetrieval {
            field: field.to_owned(),
            reason,
        };
        if self.k == 0 || self.k > Self::MAX_RESULTS {
            return Err(bad(
                "k",
                format!("{} is outside 1-{}", self.k, Self::MAX_RESULTS),
            ));
        }
        if self.candidates < self.k || self.candidates > Self::MAX_RESULTS * 10 {
            return Err(bad(
                "candidates",
                format!(
                    "{} must be at least k ({}) and at most {}",
                    self.candidates,
                    self.k,
                    Self::MAX_RESULTS * 10
                ),
            ));
        }
        for (field, w) in [
            ("recency_weight", self.recency_weight),
            ("relevance_weight", self.relevance_weight),
            ("importance_weight", self.importance_weight),
            ("speaker_weight", self.speaker_weight),
        ] {
            if !w.is_finite() || w < 0.0 {
                return Err(bad(field, format!("{w} must be a finite number ≥ 0")));
            }
        }
        if !(self.recency_half_life_hours.is_finite() && self.recency_half_life_hours > 0.0) {
            return Err(bad(
                "recency_half_life_hours",
                format!("{} must be > 0", self.recency_half_life_hours),
            ));
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
        if self.neighbours > Self::MAX_NEIGHBOURS {
            return Err(bad(
                "neighbours",
                format!("{} is above {}", self.neighbours, Self::MAX_NEIGHBOURS),
            ));
        }
        Ok(())
    }
}

/// The recall query of a turn: what is discussed plus the latest message
/// of someone else in the turn's scope before the board's newest message,
/// with its speaker's name (`NAME: MESSAGE`), so memories that mention that
/// persona match.
///
/// The newest message is left out of the query: the turn's view shows it
/// whole (RECENT EXCHANGE, the room's exchange), and without it the query
/// is known one turn ahead ([`next_recall_query`]), so the orchestrator
/// embeds it while the turn before waits on its model and the recall
/// costs the turn only its search.
///
/// A long session's turn ([`Phase::Deliberate`]) is not planned ahead, so
/// its query takes the newest message: the one it answers.
pub fn recall_query(bb: &Blackboard, persona: &PersonaId, phase: &Phase) -> Option<String> {
    let upto = if phase.plans_ahead() {
        bb.messages().len().saturating_sub(1)
    } else {
        bb.messages().len()
    };
    recall_query_upto(bb, persona, phase, upto)
}

/// Whose memories a turn recalls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecallScope {
    /// The persona's own memories: what it said, its positions, its
    /// reflections and crux cards (of this debate, or of every debate
    /// with cross-debate recall). A debate's turns.
    Own,
    /// Every participant's memories of this debate, shown only when one
    /// matches the query closely ([`SESSION_MIN_SIMILARITY`]): the long
    /// session's earlier messages, which the rolling summaries compressed
    /// (seed 001's long-term tier). A deliberation's turns.
    Session,
}

/// The cosine similarity (query to memory) a memory of a long session
/// must reach to be shown, whatever the others score.
pub const SESSION_MIN_SIMILARITY: f32 = 0.45;

/// How many of a long session's best matches a turn looks at, by words
/// and by meaning: the worst of them is the session's background for the
/// query, which a memory must stand out from to be shown.
pub const SESSION_CANDIDATES: usize = 32;

/// How far above the background similarity (the worst of the
/// [`SESSION_CANDIDATES`] best) a long session's memory must stand to be
/// shown. A session's messages are all on its topic, so an ordinary
/// turn's query resembles many of them about equally.
pub const SESSION_STANDOUT: f32 = 0.2;

/// How many times the background BM25 score (the worst of the
/// [`SESSION_CANDIDATES`] best) the best must reach for a long session's
/// turn to search by meaning at all.
pub const SESSION_LEXICAL_STANDOUT: f32 = 1.5;

/// Whether the words of a long session's query single out some memories:
/// `scores` are its [`SESSION_CANDIDATES`] best BM25 scores (any order).
/// No hit: no; fewer than 4 hits: yes (the words are rare in the
/// session); else the best must be [`SESSION_LEXICAL_STANDOUT`] times the
/// worst. A turn whose words do not stand out embeds nothing and searches
/// nothing more: most turns pay nothing.
pub fn session_words_stand_out(scores: &[f32]) -> bool {
    let Some(best) = scores.iter().copied().reduce(f32::max) else {
        return false;
    };
    if best <= 0.0 {
        return false;
    }
    if scores.len() < 4 {
        return true;
    }
    let background = scores.iter().copied().fold(f32::INFINITY, f32::min);
    best >= background * SESSION_LEXICAL_STANDOUT
}

/// The similarity a long session's memory must reach to be shown, given
/// the similarities of its [`SESSION_CANDIDATES`] best (any order): at
/// least [`SESSION_MIN_SIMILARITY`] and, among 4 candidates or more,
/// [`SESSION_STANDOUT`] above the worst of them. Below it a turn shows no
/// RELEVANT EARLIER CONTEXT and pays no token for it.
pub fn session_recall_bar(similarities: &[f32]) -> f32 {
    if similarities.len() < 4 {
        return SESSION_MIN_SIMILARITY;
    }
    let background = similarities.iter().copied().fold(f32::INFINITY, f32::min);
    (background + SESSION_STANDOUT).max(SESSION_MIN_SIMILARITY)
}

/// What a turn recalls with: whose memories, the persona's other names
/// (taken out of the query as its id is) and the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnRecall {
    /// Whose memories.
    pub persona: PersonaId,
    /// Its display name and, for a role agent, its role.
    pub aliases: Vec<String>,
    /// The query ([`recall_query`]).
    pub query: String,
    /// Whose memories: the persona's own, or the whole session's.
    pub scope: RecallScope,
}

/// `persona`'s recall in `phase` on `bb` ([`recall_query`] with the
/// persona's other names), or `None` when the phase recalls nothing.
pub fn turn_recall(bb: &Blackboard, persona: &PersonaId, phase: &Phase) -> Option<TurnRecall> {
    recall_query(bb, persona, phase).map(|query| TurnRecall {
        persona: persona.clone(),
        aliases: bb.persona(persona).map_or_else(Vec::new, |p| {
            std::iter::once(p.name.clone())
                .chain(p.specialty.map(|r| r.as_str().to_owned()))
                .collect()
        }),
        query,
        scope: if matches!(phase, Phase::Deliberate { .. }) {
            RecallScope::Session
        } else {
            RecallScope::Own
        },
    })
}

/// The recall query `persona`'s turn in `phase` will ask once one more
/// message is on the board ([`recall_query`] then): the query to embed
/// ahead, while that message is being written.
pub fn next_recall_query(bb: &Blackboard, persona: &PersonaId, phase: &Phase) -> Option<String> {
    recall_query_upto(bb, persona, phase, bb.messages().len())
}

/// [`recall_query`] reading the messages before index `upto`.
fn recall_query_upto(
    bb: &Blackboard,
    persona: &PersonaId,
    phase: &Phase,
    upto: usize,
) -> Option<String> {
    // A phase whose view has no RELEVANT EARLIER CONTEXT section (a
    // deliberation turn, a listening bid, the judge's phases) would pay
    // for an embedding and a search and drop the result.
    let shows_memories = phase
        .shares()
        .iter()
        .any(|(kind, _)| *kind == crate::section::SectionKind::RelevantEarlierContext);
    if !shows_memories {
        return None;
    }
    turn_query(bb, persona, phase, upto)
}

/// The query for EVIDENCE from `persona`'s corpus in `phase`: what is
/// discussed plus the message being answered, as for recall (an opening
/// asks with the topic and its context); a dialectic critique or
/// refinement asks with the problem and the proposal at hand (the
/// target's, or one's own). `None` in phases that show no evidence.
pub fn evidence_query(bb: &Blackboard, persona: &PersonaId, phase: &Phase) -> Option<String> {
    if !phase.shows_evidence() {
        return None;
    }
    let at_hand = match phase {
        Phase::Critique { round, target } => Some((target, *round)),
        Phase::Refine { round } => Some((persona, *round)),
        _ => None,
    };
    if let Some((owner, round)) = at_hand
        && let Some(proposal) =
            crate::dialectic::round_message(bb, owner, &agon_core::MessageKind::Proposal, round)
    {
        let problem = bb.topic().map(|t| t.question.as_str()).unwrap_or_default();
        return Some(format!("{problem}\n{}", proposal.content));
    }
    turn_query(bb, persona, phase, bb.messages().len())
}

/// What a turn is about (the aspect, the claim, the topic) and the latest
/// message of someone else in its scope among the messages before index
/// `upto`, as `NAME: MESSAGE`.
fn turn_query(bb: &Blackboard, persona: &PersonaId, phase: &Phase, upto: usize) -> Option<String> {
    let (subject, scope): (String, Vec<usize>) = match phase {
        Phase::Opening => (
            bb.topic()
                .map(|t| {
                    format!(
                        "{}\n{}",
                        t.question,
                        t.context.as_deref().unwrap_or_default()
                    )
                })
                .unwrap_or_default(),
            Vec::new(),
        ),
        Phase::Take { aspect, .. } => (
            bb.aspect(aspect)
                .map(|a| format!("{}: {}", a.label, a.description))
                .unwrap_or_default(),
            bb.message_indices_for_aspect(aspect).to_vec(),
        ),
        Phase::CruxEntry { claim } => (
            bb.claim(claim).map(|c| c.claim.clone()).unwrap_or_default(),
            Vec::new(),
        ),
        Phase::CruxExchange { room } => (
            bb.claim_for_room(room)
                .map(|c| c.claim.clone())
                .unwrap_or_default(),
            bb.message_indices_for_room(room).to_vec(),
        ),
        // A long session's every message is on its topic: the message
        // answered alone tells what to recall.
        Phase::Deliberate { .. } => (String::new(), Vec::new()),
        _ => (
            bb.topic().map(|t| t.question.clone()).unwrap_or_default(),
            // The whole transcript (read from its end below).
            Vec::new(),
        ),
    };
    let scoped = matches!(
        phase,
        Phase::Opening | Phase::Take { .. } | Phase::CruxEntry { .. } | Phase::CruxExchange { .. }
    );
    let in_scope: Box<dyn Iterator<Item = usize> + '_> = if scoped {
        Box::new(scope.iter().rev().copied())
    } else {
        Box::new((0..bb.messages().len()).rev())
    };
    let answered = in_scope
        .filter(|&i| i < upto)
        .map(|i| &bb.messages()[i])
        .find(|m| &m.persona != persona)
        .map(|m| {
            let speaker = bb
                .persona(&m.persona)
                .map_or(m.persona.as_str(), |p| p.name.as_str());
            format!("{speaker}: {}", m.content)
        })
        .unwrap_or_default();
    let query = if subject.is_empty() {
        answered
    } else {
        format!("{subject}\n{answered}")
    };
    (!query.trim().is_empty()).then_some(query)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agon_core::AspectId;

    #[test]
    fn a_long_sessions_memory_is_shown_when_it_stands_out() {
        // An ordinary turn: everything alike, nothing stands out.
        let ordinary = [0.89, 0.87, 0.86, 0.86, 0.85, 0.85, 0.84, 0.80, 0.76];
        let bar = session_recall_bar(&ordinary);
        assert!(ordinary.iter().all(|&s| s < bar), "{bar}");
        // A question about an old fact: the fact stands out.
        let question = [0.73, 0.44, 0.39, 0.22, 0.21, 0.20, 0.19, 0.18];
        let bar = session_recall_bar(&question);
        assert!(question[0] >= bar && question[1] < bar, "{bar}");
        // The words: an ordinary turn's best BM25 hits are alike; a
        // question's best stands out.
        assert!(!session_words_stand_out(&[
            24.0, 22.0, 22.0, 21.0, 20.0, 19.0
        ]));
        assert!(session_words_stand_out(&[
            41.8, 21.7, 17.9, 15.6, 15.4, 2.2
        ]));
        assert!(session_words_stand_out(&[3.0]));
        assert!(!session_words_stand_out(&[]));
        // Few candidates: only the floor.
        assert_eq!(session_recall_bar(&[0.5, 0.9]), SESSION_MIN_SIMILARITY);
        assert_eq!(session_recall_bar(&[]), SESSION_MIN_SIMILARITY);
    }

    #[test]
    fn a_deliberation_turn_recalls_the_whole_session_with_the_message_it_answers() {
        let mut bb = Blackboard::new();
        for event in agon_testkit::synthetic::debate(3, 6) {
            bb.apply(&event).unwrap();
        }
        let newest = bb.messages().last().unwrap().clone();
        let other = bb
            .messages()
            .iter()
            .map(|m| m.persona.clone())
            .find(|p| *p != newest.persona)
            .unwrap();
        let recall = turn_recall(&bb, &other, &Phase::Deliberate { turn: 7 }).unwrap();
        assert_eq!(recall.scope, RecallScope::Session);
        let name = &bb.persona(&newest.persona).unwrap().name;
        assert_eq!(recall.query, format!("{name}: {}", newest.content));
        let take = Phase::Take {
            aspect: agon_core::AspectId::new("horizon"),
            miniround: 1,
        };
        assert_eq!(
            turn_recall(&bb, &other, &take).unwrap().scope,
            RecallScope::Own
        );
        assert_eq!(recall_query(&bb, &other, &Phase::Listen { turn: 7 }), None);
    }

    #[test]
    fn the_query_names_the_speaker_of_the_message_answered() {
        let mut bb = Blackboard::new();
        for event in agon_testkit::synthetic::debate(3, 4) {
            bb.apply(&event).unwrap();
        }
        let me = PersonaId::new("p0");
        let phase = Phase::Take {
            aspect: AspectId::new("horizon"),
            miniround: 1,
        };
        let query = recall_query(&bb, &me, &phase).unwrap();
        let newest = bb.messages().len() - 1;
        let answered = bb
            .message_indices_for_aspect(&AspectId::new("horizon"))
            .iter()
            .rev()
            .filter(|&&i| i < newest)
            .map(|&i| &bb.messages()[i])
            .find(|m| m.persona != me)
            .unwrap();
        let name = &bb.persona(&answered.persona).unwrap().name;
        assert!(query.starts_with("HORIZON: "), "{query}");
        assert!(
            query.ends_with(&format!("\n{name}: {}", answered.content)),
            "{query}"
        );
        assert_eq!(recall_query(&bb, &me, &Phase::Opening), None);
    }

    /// The query a turn asks is the one embedded ahead while the message
    /// before it was being written.
    #[test]
    fn the_next_turns_query_is_known_before_the_message_it_follows() {
        let mut bb = Blackboard::new();
        let events = agon_testkit::synthetic::debate(3, 30);
        let phase = Phase::Take {
            aspect: AspectId::new("horizon"),
            miniround: 1,
        };
        let me = PersonaId::new("p0");
        let mut checked = 0;
        let mut ahead = None;
        for event in events {
            let appends_message = matches!(event, agon_core::DebateEvent::MessageAppended { .. });
            if appends_message {
                ahead = next_recall_query(&bb, &me, &phase);
            }
            bb.apply(&event).unwrap();
            if appends_message && bb.messages().len() > 1 {
                assert_eq!(recall_query(&bb, &me, &phase), ahead);
                checked += 1;
            }
        }
        assert!(checked > 10, "{checked}");
    }

    #[test]
    fn phases_that_show_no_memories_ask_for_none() {
        let mut bb = Blackboard::new();
        for event in agon_testkit::synthetic::debate(3, 4) {
            bb.apply(&event).unwrap();
        }
        let me = PersonaId::new("p0");
        for phase in [Phase::Listen { turn: 4 }, Phase::PerspectiveSummary] {
            assert_eq!(recall_query(&bb, &me, &phase), None, "{}", phase.label());
        }
        assert!(recall_query(&bb, &me, &Phase::Closing).is_some());
        assert!(recall_query(&bb, &me, &Phase::Deliberate { turn: 4 }).is_some());
    }

    #[test]
    fn a_critique_or_refinement_asks_for_evidence_on_the_proposal_at_hand() {
        use agon_core::{DebateEvent, DialogueMessage, MessageKind, Persona, Topic};
        let message = |id: &str, persona: &str, content: &str| DialogueMessage {
            id: id.into(),
            persona: persona.into(),
            kind: MessageKind::Proposal,
            aspect: None,
            round: 1,
            miniround: None,
            crux_room: None,
            content: content.into(),
            time: chrono::DateTime::UNIX_EPOCH,
            reply_to: None,
            meta: None,
        };
        let bb = Blackboard::replay(&[
            DebateEvent::DebateStarted {
                debate: "d".into(),
                topic: Topic::new("Design a task queue"),
                aspects: vec![],
                personas: vec![
                    Persona::debater("arch", "Architect", "c", "v"),
                    Persona::debater("perf", "Performance", "c", "v"),
                ],
                time: chrono::DateTime::UNIX_EPOCH,
                protocol: None,
            },
            DebateEvent::MessageAppended {
                message: message("1", "arch", "A Postgres-backed queue with SKIP LOCKED."),
            },
            DebateEvent::MessageAppended {
                message: message("2", "perf", "Kafka partitions per tenant."),
            },
        ])
        .unwrap();
        let perf = PersonaId::new("perf");
        let critique = Phase::Critique {
            round: 1,
            target: "arch".into(),
        };
        assert_eq!(
            evidence_query(&bb, &perf, &critique).unwrap(),
            "Design a task queue\nA Postgres-backed queue with SKIP LOCKED."
        );
        assert_eq!(
            evidence_query(&bb, &perf, &Phase::Refine { round: 1 }).unwrap(),
            "Design a task queue\nKafka partitions per tenant."
        );
    }
}
