//! Agent trust memory in the store (seed 003): each agent's
//! [`AgentMemory`] lives in the store's per-persona record of its name,
//! under `"trust"`, and is changed only through the store's transactional
//! update, so two debates finishing at once lose nothing.
//!
//! Human overrides of a debate's final output (`agon override`) and the
//! regret check (`agon trust check`) are here; the formulas are in
//! [`agon_core::trust`].

use std::collections::BTreeMap;
use std::sync::Arc;

use agon_core::trust::{AgentMemory, EventContext, TrustError, check_reverts, revert_earlier};
use agon_core::{Blackboard, DebateId, MessageKind, PersonaId};
use agon_store::{EventStore, StoreError};
use chrono::{DateTime, Utc};

/// The key of the memory inside a persona record.
const KEY: &str = "trust";

/// Why a trust-memory operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TrustStoreError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A memory breaks a rule (a time in the future, a score out of range…).
    #[error(transparent)]
    Memory(#[from] TrustError),
    /// A stored or imported memory does not have the seed's layout.
    #[error("agent memory {what}: {source}")]
    Malformed {
        /// Whose, or which file.
        what: String,
        /// What did not fit (serde names the field).
        #[source]
        source: serde_json::Error,
    },
    /// No memory under that name.
    #[error("no agent named `{name}` in the trust memory (known: {known})")]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The names there are.
        known: String,
    },
    /// The debate has nothing a human could override.
    #[error("debate `{debate}` has no final output to override (no synthesis or solution yet)")]
    NoFinalOutput {
        /// The debate.
        debate: String,
    },
    /// `--agent` names someone who did not take part.
    #[error("`{agent}` did not take part in debate `{debate}` (participants: {participants})")]
    NotAParticipant {
        /// The debate.
        debate: String,
        /// The name given.
        agent: String,
        /// Who did.
        participants: String,
    },
    /// The override text is empty.
    #[error("the human decision for debate `{debate}` is empty")]
    EmptyDecision {
        /// The debate.
        debate: String,
    },
}

/// The trust memories in a store.
#[derive(Clone)]
pub struct TrustStore {
    store: Arc<dyn EventStore>,
}

fn decode(
    name: &str,
    doc: Option<&serde_json::Value>,
) -> Result<Option<AgentMemory>, TrustStoreError> {
    match doc.and_then(|d| d.get(KEY)) {
        None => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|source| TrustStoreError::Malformed {
                what: format!("of `{name}` in the store"),
                source,
            }),
    }
}

/// The record `doc` with `memory` under [`KEY`], everything else kept.
fn encode(doc: Option<&serde_json::Value>, memory: &AgentMemory) -> serde_json::Value {
    let mut doc = doc
        .filter(|d| d.is_object())
        .cloned()
        .unwrap_or_else(|| serde_json::json!({}));
    doc[KEY] = serde_json::to_value(memory).unwrap_or(serde_json::Value::Null);
    doc
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
    use agon_core::trust::{Candidate, INITIAL_TRUST, select_devils_advocate};
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

impl TrustStore {
    /// The trust memories of `store`.
    pub fn new(store: Arc<dyn EventStore>) -> Self {
        Self { store }
    }

    /// The memory of `name`, if there is one.
    pub async fn get(&self, name: &str) -> Result<Option<AgentMemory>, TrustStoreError> {
        let record = self.store.persona_record(&PersonaId::new(name)).await?;
        decode(name, record.as_ref().map(|r| &r.doc))
    }

    /// The memory of `name`, or [`TrustStoreError::UnknownAgent`].
    pub async fn require(&self, name: &str) -> Result<AgentMemory, TrustStoreError> {
        match self.get(name).await? {
            Some(m) => Ok(m),
            None => Err(TrustStoreError::UnknownAgent {
                name: name.to_owned(),
                known: {
                    let names: Vec<String> = self
                        .all()
                        .await?
                        .into_iter()
                        .map(|m| m.agent_name)
                        .collect();
                    if names.is_empty() {
                        "none yet".to_owned()
                    } else {
                        names.join(", ")
                    }
                },
            }),
        }
    }

    /// Every agent's memory, by name.
    pub async fn all(&self) -> Result<Vec<AgentMemory>, TrustStoreError> {
        let mut out = Vec::new();
        for record in self.store.persona_records().await? {
            if let Some(m) = decode(record.persona.as_str(), Some(&record.doc))? {
                out.push(m);
            }
        }
        Ok(out)
    }

    /// Changes `name`'s memory in one transaction: `change` gets the
    /// current memory (a new one at `now` if there is none) and edits it.
    /// A stored memory that does not decode is an error, and is left as it
    /// is.
    pub async fn update(
        &self,
        name: &str,
        model: &str,
        now: DateTime<Utc>,
        change: &(dyn Fn(&mut AgentMemory) + Send + Sync),
    ) -> Result<AgentMemory, TrustStoreError> {
        // Refuse before writing when what is there does not decode.
        self.get(name).await?;
        let id = PersonaId::new(name);
        let record = self
            .store
            .update_persona_record(&id, &|doc| {
                let mut memory = decode(name, doc)
                    .ok()
                    .flatten()
                    .unwrap_or_else(|| AgentMemory::new(name, model, now));
                change(&mut memory);
                encode(doc, &memory)
            })
            .await?;
        decode(name, Some(&record.doc))?.ok_or_else(|| TrustStoreError::UnknownAgent {
            name: name.to_owned(),
            known: String::new(),
        })
    }

    /// Stores `text` (a memory file in the seed's layout) as its agent's
    /// memory, replacing what was there. Checked first: nothing is written
    /// when it does not decode or validate at `now`.
    pub async fn import(
        &self,
        file: &str,
        text: &str,
        now: DateTime<Utc>,
    ) -> Result<AgentMemory, TrustStoreError> {
        let memory: AgentMemory =
            serde_json::from_str(text).map_err(|source| TrustStoreError::Malformed {
                what: format!("file {file}"),
                source,
            })?;
        memory.validate(now)?;
        let id = PersonaId::new(memory.agent_name.trim());
        self.store
            .update_persona_record(&id, &|doc| encode(doc, &memory))
            .await?;
        Ok(memory)
    }

    /// Records that a human replaced the final output of the debate `bb`
    /// with `decision`, in the memory of `agent` (a participant) or of
    /// every debater. Earlier overrides of the same debate are reverted at
    /// once. Returns the agents whose memory changed.
    pub async fn record_override(
        &self,
        debate: &DebateId,
        bb: &Blackboard,
        decision: &str,
        agent: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, TrustStoreError> {
        if decision.trim().is_empty() {
            return Err(TrustStoreError::EmptyDecision {
                debate: debate.to_string(),
            });
        }
        let (output, artifact) =
            final_output(bb).ok_or_else(|| TrustStoreError::NoFinalOutput {
                debate: debate.to_string(),
            })?;
        let participants: Vec<String> = bb.debaters().map(|p| p.name.clone()).collect();
        let agents: Vec<String> = match agent {
            None => participants.clone(),
            Some(name) => {
                let found = participants
                    .iter()
                    .find(|p| p.eq_ignore_ascii_case(name.trim()))
                    .ok_or_else(|| TrustStoreError::NotAParticipant {
                        debate: debate.to_string(),
                        agent: name.to_owned(),
                        participants: participants.join(", "),
                    })?;
                vec![found.clone()]
            }
        };
        let round = final_round_id(debate);
        // What the output is now: the latest human decision on it, if any.
        let current = self
            .latest_decisions()
            .await?
            .remove(&round)
            .map_or(output, |(_, text)| text);
        let context = EventContext {
            task: bb.topic().map(|t| t.question.clone()).unwrap_or_default(),
            artifact_type: Some(artifact.to_owned()),
        };
        for name in &agents {
            self.update(name, "", now, &|m| {
                m.log_override(
                    round.clone(),
                    context.clone(),
                    current.clone(),
                    decision,
                    now,
                );
                revert_earlier(m, &round, "human", now);
            })
            .await?;
        }
        Ok(agents)
    }

    /// Records what the debate `bb` adds to each debater's memory (once per
    /// debate): the rounds they spoke in and their dissents
    /// ([`agon_core::trust_harvest`]). Returns the agents updated.
    pub async fn record_debate(
        &self,
        debate: &DebateId,
        bb: &Blackboard,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, TrustStoreError> {
        let drafts = agon_core::trust_harvest::dissents(bb, debate);
        let mut updated = Vec::new();
        for (name, rounds) in agon_core::trust_harvest::rounds_participated(bb) {
            let mine: Vec<_> = drafts.iter().filter(|d| d.agent == name).cloned().collect();
            let model = bb
                .messages()
                .iter()
                .rev()
                .filter(|m| bb.persona_name(&m.persona) == name)
                .find_map(|m| m.meta.as_ref().map(|meta| meta.model.clone()))
                .unwrap_or_default();
            self.update(&name, &model, now, &|m| {
                if !model.is_empty() {
                    m.model.clone_from(&model);
                }
                m.record_debate(debate.as_str(), rounds, &mine, now);
            })
            .await?;
            updated.push(name);
        }
        Ok(updated)
    }

    /// The `devils_advocate_chosen` event of `round`: the candidates'
    /// trust and probation read from their memories (an agent without one
    /// is new: 0.6, on probation), then seed 003's draw ([`draw`]).
    pub async fn devils_advocate(
        &self,
        debate: &DebateId,
        round: u32,
        candidates: &[(PersonaId, String)],
    ) -> Result<Option<agon_core::DebateEvent>, TrustStoreError> {
        let mut known = Vec::new();
        for (_, name) in candidates {
            known.push(self.get(name).await?);
        }
        Ok(draw(debate, round, candidates, &known))
    }

    /// The latest human decision per overridden round, over every agent:
    /// `round → (time, text)`.
    async fn latest_decisions(
        &self,
    ) -> Result<BTreeMap<String, (DateTime<Utc>, String)>, TrustStoreError> {
        let mut latest: BTreeMap<String, (DateTime<Utc>, String)> = BTreeMap::new();
        for m in self.all().await? {
            for o in &m.override_history {
                let newer = latest
                    .get(&o.round_id)
                    .is_none_or(|(time, _)| o.timestamp > *time);
                if newer {
                    latest.insert(o.round_id.clone(), (o.timestamp, o.human_decision.clone()));
                }
            }
        }
        Ok(latest)
    }

    /// Seed 003's regret inference at `now` over every agent: an override
    /// whose deadline has passed is regretted when the output of its round
    /// (the latest human decision on it, by anyone) is no longer its
    /// decision. Returns how many overrides were marked.
    pub async fn check(&self, now: DateTime<Utc>) -> Result<usize, TrustStoreError> {
        let latest = self.latest_decisions().await?;
        let mut marked = 0;
        for m in self.all().await? {
            let due = m.override_history.iter().any(|o| {
                !o.regret
                    && now > o.auto_check_deadline
                    && latest
                        .get(&o.round_id)
                        .is_some_and(|(_, text)| text.trim() != o.human_decision.trim())
            });
            if !due {
                continue;
            }
            let latest = latest.clone();
            let count = std::sync::atomic::AtomicUsize::new(0);
            self.update(&m.agent_name, &m.model, now, &|memory| {
                let mut n = 0;
                for (round, (_, text)) in &latest {
                    n += check_reverts(memory, round, text, now);
                }
                count.store(n, std::sync::atomic::Ordering::Relaxed);
            })
            .await?;
            marked += count.load(std::sync::atomic::Ordering::Relaxed);
        }
        Ok(marked)
    }
}
