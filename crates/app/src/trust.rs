//! Agent trust memory in the store (seed 003): each agent's
//! [`AgentMemory`] lives in the store's per-persona record of its name,
//! under `"trust"`, and is changed only through the store's transactional
//! update, so two debates finishing at once lose nothing.
//!
//! Human overrides of a debate's final output (`agon override`) and the
//! regret check (`agon trust check`) are here; the formulas are in
//! [`agon_trust`].

use std::sync::Arc;

use agon_core::{Blackboard, DebateId, PersonaId};
pub use agon_protocol::trust_harvest::{draw, draw_seed, final_output, final_round_id};
use agon_store::{EventStore, StoreError};
use agon_trust::{
    AgentMemory, EventContext, TrustError, check_reverts, latest_decisions, revert_earlier,
    reverts_due,
};
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
            serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(text))
                .map_err(|e| TrustStoreError::Malformed {
                    what: format!("file {file}, field `{}`", e.path()),
                    source: e.into_inner(),
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
        let current = latest_decisions(&self.all().await?)
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
    /// debate): [`record`](Self::record) of its
    /// [`agent_records`](agon_protocol::trust_harvest::agent_records).
    pub async fn record_debate(
        &self,
        debate: &DebateId,
        bb: &Blackboard,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, TrustStoreError> {
        self.record(
            debate,
            &agon_protocol::trust_harvest::agent_records(bb, debate),
            now,
        )
        .await
    }

    /// Adds each record to its agent's memory, once per debate: the rounds
    /// spoken and the dissents. Returns the agents updated.
    pub async fn record(
        &self,
        debate: &DebateId,
        records: &[agon_protocol::trust_harvest::AgentRecord],
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, TrustStoreError> {
        self.record_embedded(debate, records, now, None)
            .await
            .map(|(agents, _)| agents)
    }

    /// [`record`](Self::record), with novelty measured by the cosine of
    /// the embeddings of `embedder` (seed 003) when one is given. Each
    /// dissent's embedding is stored with it once (seed 003's suggestion):
    /// only the new dissents, and past ones stored without an embedding of
    /// this embedder's model, are embedded. When the embedder fails, the
    /// words' cosine is used and the reason is returned (a warning for the
    /// caller).
    pub async fn record_embedded(
        &self,
        debate: &DebateId,
        records: &[agon_protocol::trust_harvest::AgentRecord],
        now: DateTime<Utc>,
        embedder: Option<&agon_memory::Memory>,
    ) -> Result<(Vec<String>, Option<String>), TrustStoreError> {
        let mut warning = None;
        for r in records {
            let mut vectors: std::collections::HashMap<String, Vec<f32>> =
                std::collections::HashMap::new();
            let model = embedder.map(|m| m.space().model.clone());
            if let (Some(memory), Some(model)) =
                (embedder.filter(|_| !r.dissents.is_empty()), &model)
            {
                let mut texts: Vec<String> = r.dissents.iter().map(|d| d.text.clone()).collect();
                if let Some(past) = self.get(&r.agent).await? {
                    for d in &past.dissent_history {
                        match d
                            .embedding
                            .as_ref()
                            .filter(|e| &e.model == model)
                            .and_then(|e| e.vector())
                        {
                            Some(v) => {
                                vectors.insert(d.dissent_text.clone(), v);
                            }
                            None => texts.push(d.dissent_text.clone()),
                        }
                    }
                }
                texts.sort();
                texts.dedup();
                texts.retain(|t| !vectors.contains_key(t));
                match memory.embed_documents(&texts).await {
                    Ok(embedded) => vectors.extend(texts.into_iter().zip(embedded)),
                    Err(e) => {
                        vectors.clear();
                        warning = Some(format!(
                            "dissent novelty measured by words, not embeddings: {e}"
                        ));
                    }
                }
            }
            let similarity = |a: &str, b: &str| match (vectors.get(a), vectors.get(b)) {
                (Some(x), Some(y)) => agon_protocol::trust_harvest::cosine(x, y),
                _ => agon_protocol::trust_harvest::word_cosine(a, b),
            };
            self.update(&r.agent, &r.model, now, &|m| {
                if !r.model.is_empty() {
                    m.model.clone_from(&r.model);
                }
                if !r.role.is_empty() {
                    m.primary_role.clone_from(&r.role);
                }
                let was_on_probation = m.on_probation();
                m.record_debate_with(debate.as_str(), r.rounds, &r.dissents, now, &similarity);
                // Probation is counted in rounds; the memory keeps when
                // the agent came off it.
                if was_on_probation && !m.on_probation() {
                    m.probation_until = Some(now);
                }
                // Each dissent keeps its embedding, written once.
                if let Some(model) = &model {
                    for d in &mut m.dissent_history {
                        if d.embedding.as_ref().is_some_and(|e| &e.model == model) {
                            continue;
                        }
                        if let Some(v) = vectors.get(&d.dissent_text) {
                            d.embedding = Some(agon_trust::DissentEmbedding::encode(model, v));
                        }
                    }
                }
            })
            .await?;
        }
        Ok((records.iter().map(|r| r.agent.clone()).collect(), warning))
    }

    /// Seed 003's regret inference at `now` over every agent: an override
    /// whose deadline has passed is regretted when the output of its round
    /// (the latest human decision on it, by anyone) is no longer its
    /// decision. Returns how many overrides were marked.
    pub async fn check(&self, now: DateTime<Utc>) -> Result<usize, TrustStoreError> {
        self.check_all(now).await.map(|(_, marked)| marked)
    }

    /// The memories of `names`, in order (`None` for an agent with none),
    /// after [`check`](Self::check) at `now`: what a debate reads before a
    /// draw or its standings, so trust is never stale. One read of every
    /// memory (the inference needs them all), and a write for each it
    /// changed. Also returns how many overrides were marked.
    pub async fn read_checked(
        &self,
        names: &[String],
        now: DateTime<Utc>,
    ) -> Result<(Vec<Option<AgentMemory>>, usize), TrustStoreError> {
        let (all, marked) = self.check_all(now).await?;
        let read = names
            .iter()
            .map(|name| all.iter().find(|m| &m.agent_name == name).cloned())
            .collect();
        Ok((read, marked))
    }

    /// Every memory after the regret inference at `now`, and how many
    /// overrides it marked.
    async fn check_all(
        &self,
        now: DateTime<Utc>,
    ) -> Result<(Vec<AgentMemory>, usize), TrustStoreError> {
        let mut all = self.all().await?;
        let latest = latest_decisions(&all);
        let mut marked = 0;
        for m in &mut all {
            if !reverts_due(m, &latest, now) {
                continue;
            }
            let count = std::sync::atomic::AtomicUsize::new(0);
            let (name, model) = (m.agent_name.clone(), m.model.clone());
            *m = self
                .update(&name, &model, now, &|memory| {
                    let n = latest
                        .iter()
                        .map(|(round, (_, text))| check_reverts(memory, round, text, now))
                        .sum();
                    count.store(n, std::sync::atomic::Ordering::Relaxed);
                })
                .await?;
            marked += count.load(std::sync::atomic::Ordering::Relaxed);
        }
        Ok((all, marked))
    }
}
