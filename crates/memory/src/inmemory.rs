//! A [`MemoryIndex`] that lives only in process (tests, the recall harness,
//! a scratch memory): the same [`ExactIndex`] the embedded backend uses,
//! without a database underneath.

use std::collections::{HashMap, HashSet};

use agon_core::{DebateId, PersonaId};
use async_trait::async_trait;
use tokio::sync::RwLock;

use crate::error::MemoryError;
use crate::exact::ExactIndex;
use crate::index::{DebateInfo, MemoryIndex};
use crate::record::Superseded;
use crate::record::{
    Candidate, EmbeddingSpace, LexicalHit, MemoryFilter, MemoryMeta, MemoryRecord, normalize,
    prepare_batch,
};

#[derive(Debug, Default)]
struct State {
    space: Option<EmbeddingSpace>,
    index: Option<ExactIndex>,
    debates: HashMap<DebateId, DebateInfo>,
    /// The closed memories, with what closed them.
    superseded: HashMap<String, Superseded>,
}

/// An in-process, non-persistent memory index.
#[derive(Debug, Default)]
pub struct InMemoryIndex {
    state: RwLock<State>,
}

impl InMemoryIndex {
    /// Records a debate's topic and start for the labels of cross-debate
    /// recall (the database backends read them from the event store).
    pub async fn note_debate(&self, info: &DebateInfo) {
        self.state
            .write()
            .await
            .debates
            .insert(info.debate.clone(), info.clone());
    }

    /// An empty, unbound index.
    pub fn new() -> Self {
        Self::default()
    }
}

fn empty() -> ExactIndex {
    ExactIndex::new(0)
}

#[async_trait]
impl MemoryIndex for InMemoryIndex {
    fn backend(&self) -> &'static str {
        "in-memory"
    }

    async fn space(&self) -> Result<Option<EmbeddingSpace>, MemoryError> {
        Ok(self.state.read().await.space.clone())
    }

    async fn bind(&self, space: &EmbeddingSpace) -> Result<(), MemoryError> {
        let mut state = self.state.write().await;
        match &state.space {
            Some(stored) => stored.check(space),
            None => {
                state.space = Some(space.clone());
                state.index = Some(ExactIndex::new(space.dimensions));
                Ok(())
            }
        }
    }

    async fn insert(&self, mut records: Vec<MemoryRecord>) -> Result<usize, MemoryError> {
        let mut state = self.state.write().await;
        let State { space, index, .. } = &mut *state;
        if records.is_empty() {
            return Ok(0);
        }
        prepare_batch(space.as_ref(), &mut records)?;
        let Some(index) = index.as_mut() else {
            return Err(MemoryError::Invalid {
                what: "memory insert".into(),
                reason: "the store is bound to no embedder yet (call bind first)".into(),
            });
        };
        Ok(records
            .into_iter()
            .filter(|r| index.insert(r.clone()))
            .count())
    }

    async fn existing(&self, ids: &[String]) -> Result<HashSet<String>, MemoryError> {
        let state = self.state.read().await;
        let index = state.index.as_ref();
        Ok(ids
            .iter()
            .filter(|id| index.is_some_and(|i| i.contains(id)))
            .cloned()
            .collect())
    }

    async fn search(
        &self,
        query: &[f32],
        filter: &MemoryFilter,
        n: usize,
    ) -> Result<Vec<Candidate>, MemoryError> {
        let state = self.state.read().await;
        let empty = empty();
        let index = state.index.as_ref().unwrap_or(&empty);
        Ok(index
            .search(query, filter, n)
            .into_iter()
            .map(|(slot, similarity)| Candidate {
                memory: index.meta(slot).clone(),
                similarity,
            })
            .collect())
    }

    async fn lexical(
        &self,
        query: &str,
        filter: &MemoryFilter,
        n: usize,
    ) -> Result<Vec<LexicalHit>, MemoryError> {
        let state = self.state.read().await;
        let empty = empty();
        let index = state.index.as_ref().unwrap_or(&empty);
        Ok(index
            .lexical(query, filter, n)
            .into_iter()
            .map(|(slot, score)| LexicalHit {
                id: index.meta(slot).id.clone(),
                score,
            })
            .collect())
    }

    async fn fetch(&self, ids: &[String], query: &[f32]) -> Result<Vec<Candidate>, MemoryError> {
        let state = self.state.read().await;
        let empty = empty();
        let index = state.index.as_ref().unwrap_or(&empty);
        Ok(ids
            .iter()
            .filter_map(|id| index.slot(id))
            .map(|slot| Candidate {
                memory: index.meta(slot).clone(),
                similarity: index.similarity(slot, query),
            })
            .collect())
    }

    async fn count(&self, filter: &MemoryFilter) -> Result<usize, MemoryError> {
        let state = self.state.read().await;
        Ok(state.index.as_ref().map_or(0, |i| i.count(filter)))
    }

    async fn matching(
        &self,
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<MemoryMeta>, MemoryError> {
        let state = self.state.read().await;
        Ok(state
            .index
            .as_ref()
            .map_or_else(Vec::new, |i| i.matching(filter, limit)))
    }

    async fn personas(&self, filter: &MemoryFilter) -> Result<Vec<String>, MemoryError> {
        let state = self.state.read().await;
        Ok(state
            .index
            .as_ref()
            .map_or_else(Vec::new, |i| i.personas_matching(filter)))
    }

    async fn neighbours(
        &self,
        id: &str,
        filter: &MemoryFilter,
        n: usize,
    ) -> Result<Vec<MemoryMeta>, MemoryError> {
        let state = self.state.read().await;
        let Some(index) = state.index.as_ref() else {
            return Ok(Vec::new());
        };
        let Some(slot) = index.slot(id) else {
            return Ok(Vec::new());
        };
        Ok(index
            .neighbours(slot, filter, n)
            .into_iter()
            .map(|s| index.meta(s).clone())
            .collect())
    }

    async fn debates(&self, ids: &[DebateId]) -> Result<Vec<DebateInfo>, MemoryError> {
        let state = self.state.read().await;
        Ok(ids
            .iter()
            .filter_map(|d| state.debates.get(d).cloned())
            .collect())
    }

    async fn delete_debate(&self, debate: &DebateId) -> Result<usize, MemoryError> {
        let mut state = self.state.write().await;
        let Some(index) = &state.index else {
            return Ok(0);
        };
        let (kept, removed) = index.without_debate(debate.as_str());
        state.index = Some(kept);
        Ok(removed)
    }

    async fn reset_space(&self, space: &EmbeddingSpace) -> Result<(), MemoryError> {
        let mut state = self.state.write().await;
        let mut fresh = ExactIndex::new(space.dimensions);
        if let Some(old) = &state.index {
            for slot in 0..old.len() as u32 {
                fresh.insert_parts(old.meta(slot).clone(), None);
            }
        }
        state.index = Some(fresh);
        state.space = Some(space.clone());
        Ok(())
    }

    async fn unembedded(&self, limit: usize) -> Result<Vec<MemoryMeta>, MemoryError> {
        let state = self.state.read().await;
        Ok(state.index.as_ref().map_or_else(Vec::new, |i| {
            i.unembedded().into_iter().take(limit).cloned().collect()
        }))
    }

    async fn set_embeddings(&self, items: Vec<(String, Vec<f32>)>) -> Result<(), MemoryError> {
        let mut state = self.state.write().await;
        let Some(index) = state.index.as_mut() else {
            return Ok(());
        };
        for (id, mut v) in items {
            if v.len() != index.dims() {
                return Err(MemoryError::BadRecord {
                    id,
                    reason: format!(
                        "embedding has {} dimensions, expected {}",
                        v.len(),
                        index.dims()
                    ),
                });
            }
            normalize(&mut v).map_err(|reason| MemoryError::BadRecord {
                id: id.clone(),
                reason,
            })?;
            index.set_embedding(&id, &v);
        }
        Ok(())
    }
    async fn on_subject(
        &self,
        persona: &PersonaId,
        subject: &str,
    ) -> Result<Vec<MemoryMeta>, MemoryError> {
        let state = self.state.read().await;
        let Some(index) = state.index.as_ref() else {
            return Ok(Vec::new());
        };
        let filter = MemoryFilter::persona(persona.clone());
        Ok(index
            .matching(&filter, usize::MAX)
            .into_iter()
            .filter(|m| m.subject.as_deref() == Some(subject))
            .collect())
    }

    async fn set_superseded(
        &self,
        items: Vec<(String, Option<Superseded>)>,
    ) -> Result<(), MemoryError> {
        let mut state = self.state.write().await;
        for (id, superseded) in items {
            match superseded {
                Some(s) => state.superseded.insert(id, s),
                None => state.superseded.remove(&id),
            };
        }
        Ok(())
    }

    async fn superseded(&self, ids: &[String]) -> Result<HashMap<String, Superseded>, MemoryError> {
        let state = self.state.read().await;
        Ok(ids
            .iter()
            .filter_map(|id| state.superseded.get(id).map(|s| (id.clone(), s.clone())))
            .collect())
    }
}
