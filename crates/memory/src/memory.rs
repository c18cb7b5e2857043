//! [`Memory`]: an index and an embedder together — remember drafts (embed
//! in batches, insert), recall (fusion → scoring) and reindex.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agon_llm::{Embedder, InputType};
use serde::{Deserialize, Serialize};

use crate::error::MemoryError;
use crate::harvest::MemoryDraft;
use crate::index::MemoryIndex;
use crate::names::{NamedQuery, split_names_as};
use crate::query_cache::Recent;
use crate::record::{EmbeddingSpace, MemoryFilter, MemoryRecord};
use crate::score::{MAX_RESULTS, RetrievalConfig, ScoredMemory, ScoringInput, fuse, score};

/// The result of a recall: the memories, best first, and notes on how the
/// request was interpreted (k clamped, persona without memories, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Recall {
    /// Retrieved memories with their score components, best first.
    pub memories: Vec<ScoredMemory>,
    /// What a user should know about the result.
    pub notes: Vec<String>,
}

impl Recall {
    /// The memories with their context, for a reader with a budget: each
    /// hit, best first, followed by its neighbours not shown yet (so a
    /// budget cut keeps the best hits and the turns around them), each
    /// memory once.
    pub fn expanded(&self) -> Vec<&crate::record::MemoryMeta> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for hit in &self.memories {
            for m in std::iter::once(&hit.memory).chain(&hit.context) {
                if seen.insert(m.id.as_str()) {
                    out.push(m);
                }
            }
        }
        out
    }
}

/// How many replacements recall follows from a superseded memory to the
/// one that holds now.
const MAX_SUCCESSION_STEPS: usize = 16;

/// Vector memory: a [`MemoryIndex`] bound to an [`Embedder`].
#[derive(Clone)]
pub struct Memory {
    index: Arc<dyn MemoryIndex>,
    embedder: Arc<dyn Embedder>,
    space: EmbeddingSpace,
    config: RetrievalConfig,
    /// What recent recalls computed ([`Memory::recall_ahead`]).
    recent: Arc<RecentRecalls>,
}

/// Recent recalls' results and their queries' embeddings, with the write
/// generation a result is valid for.
#[derive(Debug)]
struct RecentRecalls {
    /// Bumped after every write through this memory: a result kept from
    /// an earlier generation is computed again.
    generation: AtomicU64,
    /// Recall key → (generation when computed, result).
    results: Recent<(u64, Recall)>,
    /// A query's dense text → its normalized embedding (valid whatever
    /// was written since), or the embedding under way.
    vectors: Recent<Arc<tokio::sync::OnceCell<Vec<f32>>>>,
    /// A debate's id → its topic and start (they never change).
    debates: Recent<crate::DebateInfo>,
    /// A persona → (generation when counted, whether it has a corpus):
    /// asked before every turn that may show evidence.
    corpora: Recent<(u64, bool)>,
    /// Recalls done ahead whose turns have not asked them yet (recall key →
    /// request): computed again after a write, so that their turns find
    /// them current.
    ahead: Recent<AheadRecall>,
}

/// A recall asked ahead of its turn ([`Memory::recall_ahead`]).
#[derive(Debug, Clone)]
struct AheadRecall {
    query: String,
    filter: MemoryFilter,
    k: usize,
    aliases: Vec<(agon_core::PersonaId, Vec<String>)>,
}

impl Default for RecentRecalls {
    fn default() -> Self {
        Self {
            generation: AtomicU64::new(0),
            // A debate's next few turns, several debates at once.
            results: Recent::new(32),
            vectors: Recent::new(64),
            debates: Recent::new(256),
            corpora: Recent::new(64),
            // The next turn or two of a debate.
            ahead: Recent::new(4),
        }
    }
}

impl std::fmt::Debug for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("backend", &self.index.backend())
            .field("space", &self.space)
            .field("config", &self.config)
            .finish()
    }
}

impl Memory {
    /// Binds `index` to `embedder` (first use) or checks that it is bound to
    /// the same model and dimension ([`MemoryError::EmbedderMismatch`] names
    /// both otherwise).
    pub async fn open(
        index: Arc<dyn MemoryIndex>,
        embedder: Arc<dyn Embedder>,
        config: RetrievalConfig,
    ) -> Result<Self, MemoryError> {
        config.validate().map_err(MemoryError::from)?;
        let space = EmbeddingSpace::of(embedder.as_ref());
        index.bind(&space).await?;
        Ok(Self {
            index,
            embedder,
            space,
            config,
            recent: Arc::default(),
        })
    }

    /// The index.
    pub fn index(&self) -> &Arc<dyn MemoryIndex> {
        &self.index
    }

    /// The retrieval settings.
    pub fn config(&self) -> &RetrievalConfig {
        &self.config
    }

    /// The embedding space.
    pub fn space(&self) -> &EmbeddingSpace {
        &self.space
    }

    /// The embeddings of `texts` as documents, with the memory's embedder
    /// (in its batches), in order.
    pub async fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, MemoryError> {
        self.embed(texts, InputType::Document).await
    }

    /// `texts` embedded for a caller that waits on them.
    pub(crate) async fn embed(
        &self,
        texts: &[String],
        input: InputType,
    ) -> Result<Vec<Vec<f32>>, MemoryError> {
        self.embed_as(texts, input, Urgency::Waited).await
    }

    #[tracing::instrument(level = "debug", name = "embedding", skip_all, fields(texts = texts.len(), model = %self.space.model))]
    async fn embed_as(
        &self,
        texts: &[String],
        input: InputType,
        urgency: Urgency,
    ) -> Result<Vec<Vec<f32>>, MemoryError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.embedder.max_batch().max(1)) {
            let embedded = match urgency {
                Urgency::Waited => self.embedder.embed(batch, input).await,
                Urgency::Background => self.embedder.embed_in_background(batch, input).await,
            };
            let vectors = embedded.map_err(|source| MemoryError::Embedding {
                model: self.space.model.clone(),
                source,
            })?;
            if vectors.len() != batch.len() {
                return Err(MemoryError::Invalid {
                    what: format!("embedder {}", self.space.model),
                    reason: format!(
                        "returned {} vectors for {} texts",
                        vectors.len(),
                        batch.len()
                    ),
                });
            }
            out.extend(vectors);
        }
        Ok(out)
    }

    /// Stores the drafts not stored yet, embedded in batches. Returns how
    /// many were new. A NaN or zero vector fails with the memory's id.
    pub async fn remember(&self, drafts: Vec<MemoryDraft>) -> Result<usize, MemoryError> {
        self.remember_as(drafts, Urgency::Waited).await
    }

    /// [`remember`](Self::remember) for a writer that runs beside a
    /// debate: the embeddings are computed in the background
    /// ([`agon_llm::Embedder::embed_in_background`]), so that the debate's
    /// own steps come first on a busy CPU.
    pub async fn remember_in_background(
        &self,
        drafts: Vec<MemoryDraft>,
    ) -> Result<usize, MemoryError> {
        self.remember_as(drafts, Urgency::Background).await
    }

    #[tracing::instrument(level = "debug", name = "remember", skip_all, fields(drafts = drafts.len()))]
    async fn remember_as(
        &self,
        drafts: Vec<MemoryDraft>,
        urgency: Urgency,
    ) -> Result<usize, MemoryError> {
        let records = self.embed_drafts(drafts, urgency).await?;
        self.store_embedded(records).await
    }

    /// The drafts not stored yet (each once), embedded: the first half of
    /// [`remember_in_background`](Self::remember_in_background), for a
    /// writer that embeds its drafts as they come and stores them in
    /// batches ([`store_embedded`](Self::store_embedded)).
    pub async fn embed_in_background(
        &self,
        drafts: Vec<MemoryDraft>,
    ) -> Result<Vec<MemoryRecord>, MemoryError> {
        self.embed_drafts(drafts, Urgency::Background).await
    }

    /// [`embed_in_background`](Self::embed_in_background) for a caller
    /// that waits on the result (at its own priority).
    pub(crate) async fn embed_waited(
        &self,
        drafts: Vec<MemoryDraft>,
    ) -> Result<Vec<MemoryRecord>, MemoryError> {
        self.embed_drafts(drafts, Urgency::Waited).await
    }

    async fn embed_drafts(
        &self,
        drafts: Vec<MemoryDraft>,
        urgency: Urgency,
    ) -> Result<Vec<MemoryRecord>, MemoryError> {
        if drafts.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = drafts.iter().map(|d| d.id.clone()).collect();
        let existing = self.index.existing(&ids).await?;
        let mut seen = HashSet::new();
        let fresh: Vec<MemoryDraft> = drafts
            .into_iter()
            .filter(|d| !existing.contains(&d.id) && seen.insert(d.id.clone()))
            .collect();
        if fresh.is_empty() {
            return Ok(Vec::new());
        }
        let texts: Vec<String> = fresh.iter().map(|d| d.content.clone()).collect();
        let vectors = self.embed_as(&texts, InputType::Document, urgency).await?;
        Ok(fresh
            .into_iter()
            .zip(vectors)
            .map(|(d, embedding)| d.into_record(embedding))
            .collect())
    }

    /// Stores memories already embedded (by
    /// [`embed_in_background`](Self::embed_in_background)) in one write,
    /// and closes what each replaces. Returns how many were new.
    pub async fn store_embedded(&self, records: Vec<MemoryRecord>) -> Result<usize, MemoryError> {
        if records.is_empty() {
            return Ok(0);
        }
        let subjects: std::collections::BTreeSet<(agon_core::PersonaId, String)> = records
            .iter()
            .filter_map(|r| r.subject.clone().map(|s| (r.persona.clone(), s)))
            .collect();
        let stored = self.index.insert(records).await;
        // A memory on a subject closes the persona's earlier ones on it
        // (or is born closed when a later one is already stored).
        let rechained = match &stored {
            Ok(_) => crate::validity::rechain_all(self.index.as_ref(), &subjects)
                .await
                .map(|_| ()),
            Err(_) => Ok(()),
        };
        self.wrote();
        rechained.and(stored)
    }

    /// The topic and start of each debate of `ids` that the index knows,
    /// looked up once per debate (they never change).
    pub async fn debate_infos(
        &self,
        ids: &[agon_core::DebateId],
    ) -> Result<Vec<crate::DebateInfo>, MemoryError> {
        let mut known = Vec::new();
        let mut missing = Vec::new();
        for id in ids {
            match self.recent.debates.get(id.as_str()) {
                Some(info) => known.push(info),
                None if !missing.contains(id) => missing.push(id.clone()),
                None => {}
            }
        }
        if !missing.is_empty() {
            for info in self.index.debates(&missing).await? {
                self.recent.debates.put(info.debate.as_str(), info.clone());
                known.push(info);
            }
        }
        Ok(known)
    }

    /// Whether `persona` has a corpus, as counted since the last write
    /// through this memory (a corpus added through another process shows
    /// after the next write here, or in the next debate's memory).
    pub(crate) async fn has_corpus_kept(
        &self,
        persona: &agon_core::PersonaId,
    ) -> Result<bool, MemoryError> {
        let generation = self.recent.generation.load(Ordering::SeqCst);
        if let Some((kept, has)) = self.recent.corpora.get(persona.as_str())
            && kept == generation
        {
            return Ok(has);
        }
        let has = self.has_corpus(persona).await?;
        self.recent.corpora.put(persona.as_str(), (generation, has));
        Ok(has)
    }

    /// Marks every recall result kept so far as out of date (after a
    /// write through this memory), and computes again, in the background,
    /// the recalls done ahead that their turns have not asked yet: a write
    /// lands while a turn waits on its model, and the turn after it would
    /// otherwise search again itself, on the debate's critical path.
    pub(crate) fn wrote(&self) {
        self.recent.generation.fetch_add(1, Ordering::SeqCst);
        let pending = self.recent.ahead.values();
        if pending.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let memory = self.clone();
        runtime.spawn(async move {
            for ahead in pending {
                // A failure costs nothing: the turn searches itself.
                let _ = memory
                    .recall_kept(
                        &ahead.query,
                        &ahead.filter,
                        ahead.k,
                        &ahead.aliases,
                        Urgency::Background,
                    )
                    .await;
            }
        });
    }

    /// The best `k` memories for `query` under `filter`: the names of the
    /// personas under `filter` taken out of the query ([`crate::names::split_names`]), BM25
    /// and dense rankings fused (reciprocal rank) into `config.candidates`
    /// candidates, then scored by recency, relevance, importance and
    /// speaker; each with up to `config.neighbours` neighbouring memories on
    /// each side as its context.
    ///
    /// Errors: an empty query and `k = 0` are [`MemoryError::Invalid`].
    /// Not errors (empty or shortened result with a note): a persona or
    /// debate without memories, `k` above 1,000 (clamped).
    pub async fn recall(
        &self,
        query: &str,
        filter: &MemoryFilter,
        k: usize,
    ) -> Result<Recall, MemoryError> {
        self.recall_aliased(query, filter, k, &[]).await
    }

    /// [`recall`](Self::recall), where a persona may also be named other
    /// than by its id: `aliases` pairs a persona with its other names (its
    /// display name, a dialectic agent's role: `System Architect` and
    /// `architect` for `agent-architect`), which are taken out of the query
    /// as its id is.
    #[tracing::instrument(level = "debug", name = "recall", skip_all, fields(k))]
    pub async fn recall_aliased(
        &self,
        query: &str,
        filter: &MemoryFilter,
        k: usize,
        aliases: &[(agon_core::PersonaId, Vec<String>)],
    ) -> Result<Recall, MemoryError> {
        self.recall_kept(query, filter, k, aliases, Urgency::Waited)
            .await
    }

    /// [`recall_aliased`](Self::recall_aliased), keeping its result until
    /// the next write through this memory.
    async fn recall_kept(
        &self,
        query: &str,
        filter: &MemoryFilter,
        k: usize,
        aliases: &[(agon_core::PersonaId, Vec<String>)],
        urgency: Urgency,
    ) -> Result<Recall, MemoryError> {
        let key = recall_key(query, filter, k, aliases);
        if urgency == Urgency::Waited {
            // Its turn asks it: no longer computed again after writes.
            self.recent.ahead.take(&key);
        }
        let generation = self.recent.generation.load(Ordering::SeqCst);
        if let Some((kept, recall)) = self.recent.results.get(&key)
            && kept == generation
        {
            return Ok(recall);
        }
        let recall = self
            .search_aliased(query, filter, k, aliases, urgency)
            .await?;
        self.recent.results.put(&key, (generation, recall.clone()));
        Ok(recall)
    }

    /// Computes `query`'s recall ahead of the turn that will ask it (the
    /// same filter, `k` and names): kept, it is that turn's result; a write
    /// through this memory before the turn asks computes it again in the
    /// background (the query's embedding kept). Called while the turn
    /// before waits on its model, it takes the embedding and the search
    /// off the critical path. Another process's writes in between
    /// are not seen: the result is then as of the turn before. Its query
    /// is embedded in the background
    /// ([`agon_llm::Embedder::embed_in_background`]): nothing waits on it.
    pub async fn recall_ahead(
        &self,
        query: &str,
        filter: &MemoryFilter,
        k: usize,
        aliases: &[(agon_core::PersonaId, Vec<String>)],
    ) -> Result<(), MemoryError> {
        self.recent.ahead.put(
            &recall_key(query, filter, k, aliases),
            AheadRecall {
                query: query.to_owned(),
                filter: filter.clone(),
                k,
                aliases: aliases.to_vec(),
            },
        );
        self.recall_kept(query, filter, k, aliases, Urgency::Background)
            .await
            .map(|_| ())
    }

    /// [`Memory::recall_aliased`] without the kept results.
    async fn search_aliased(
        &self,
        query: &str,
        filter: &MemoryFilter,
        k: usize,
        aliases: &[(agon_core::PersonaId, Vec<String>)],
        urgency: Urgency,
    ) -> Result<Recall, MemoryError> {
        let query = query.trim();
        if query.is_empty() {
            return Err(MemoryError::Invalid {
                what: "recall query".into(),
                reason: "the query is empty".into(),
            });
        }
        if k == 0 {
            return Err(MemoryError::Invalid {
                what: "recall k".into(),
                reason: "k must be at least 1".into(),
            });
        }
        let mut notes = Vec::new();
        let k = if k > MAX_RESULTS {
            notes.push(format!("k = {k} clamped to {MAX_RESULTS}"));
            MAX_RESULTS
        } else {
            k
        };
        // The personas under the filter: none means no memories (one query
        // answers both, and the names are taken out of the query below).
        let personas = self.index.personas(filter).await?;
        if personas.is_empty() {
            notes.push(match (&filter.persona, &filter.debate) {
                (Some(p), Some(d)) => format!("no memories of persona {p} in debate {d}"),
                (Some(p), None) => format!("no memories of persona {p}"),
                (None, Some(d)) => format!("no memories in debate {d}"),
                (None, None) => "the memory store is empty".to_owned(),
            });
            return Ok(Recall {
                memories: Vec::new(),
                notes,
            });
        }
        let (names, owners) = names_and_owners(&personas, aliases);
        let named = split_names_as(query, &names, &owners);
        let qv = self.query_vector(&named.dense, urgency).await?;
        let config = RetrievalConfig {
            k,
            candidates: self.config.candidates.max(k),
            ..self.config
        };
        let mut memories = self.score(&named, &qv, filter, &config).await?;
        if config.neighbours > 0 {
            for m in &mut memories {
                m.context = self
                    .index
                    .neighbours(&m.memory.id, filter, config.neighbours)
                    .await?;
            }
        }
        self.apply_validity(&mut memories, query, &qv).await?;
        Ok(Recall { memories, notes })
    }

    /// Validity ([`crate::validity`]): each superseded hit gets its
    /// successor; unless the query asks how something changed
    /// ([`crate::asks_about_change`]: then the history keeps its scored
    /// order), current hits rank first, a superseded hit is kept only when
    /// its successor is not a hit and no better superseded hit shows the
    /// same successor, and superseded neighbours leave a hit's context.
    async fn apply_validity(
        &self,
        memories: &mut Vec<ScoredMemory>,
        query: &str,
        query_vector: &[f32],
    ) -> Result<(), MemoryError> {
        // Only a memory on a subject can have been closed.
        let ids: Vec<String> = memories
            .iter()
            .flat_map(|m| std::iter::once(&m.memory).chain(&m.context))
            .filter(|m| m.subject.is_some())
            .map(|m| m.id.clone())
            .collect();
        if ids.is_empty() {
            return Ok(());
        }
        let closed = self.index.superseded(&ids).await?;
        if closed.is_empty() {
            return Ok(());
        }
        let history = crate::validity::asks_about_change(query);
        // Each closed hit's successor is the memory that holds now: the
        // chain of replacements followed to its end.
        let mut latest: std::collections::HashMap<String, String> = memories
            .iter()
            .filter_map(|m| Some((m.memory.id.clone(), closed.get(&m.memory.id)?.by.clone())))
            .collect();
        for _ in 0..MAX_SUCCESSION_STEPS {
            let ends: Vec<String> = latest.values().cloned().collect();
            let next = self.index.superseded(&ends).await?;
            if next.is_empty() {
                break;
            }
            for end in latest.values_mut() {
                if let Some(s) = next.get(end.as_str()) {
                    *end = s.by.clone();
                }
            }
        }
        let wanted: Vec<String> = latest.values().cloned().collect();
        let found: std::collections::HashMap<String, crate::record::MemoryMeta> = self
            .index
            .fetch(&wanted, query_vector)
            .await?
            .into_iter()
            .map(|c| (c.memory.id.clone(), c.memory))
            .collect();
        let successors: std::collections::HashMap<String, crate::record::MemoryMeta> = latest
            .into_iter()
            .filter_map(|(id, end)| Some((closed.get(&id)?.by.clone(), found.get(&end)?.clone())))
            .collect();
        for m in memories.iter_mut() {
            if !history {
                m.context.retain(|c| !closed.contains_key(&c.id));
            }
            m.successor = closed.get(&m.memory.id).and_then(|s| {
                successors
                    .get(&s.by)
                    .map(|memory| crate::validity::Successor {
                        until: s.until,
                        memory: memory.clone(),
                    })
            });
        }
        if !history {
            // One superseded hit per stance that holds now is enough to
            // say it changed (its note shows the current one); and none
            // when that current memory is a hit itself.
            let shown: std::collections::HashSet<String> = memories
                .iter()
                .filter(|m| m.successor.is_none())
                .map(|m| m.memory.id.clone())
                .collect();
            let mut noted = std::collections::HashSet::new();
            memories.retain(|m| match &m.successor {
                None => true,
                Some(s) => !shown.contains(&s.memory.id) && noted.insert(s.memory.id.clone()),
            });
            // A stable sort: current memories first, each group in its
            // scored order.
            memories.sort_by_key(|m| m.successor.is_some());
        }
        Ok(())
    }

    /// The normalized embedding of a recall query's dense text: kept from
    /// an earlier recall, or embedded now (and kept).
    async fn query_vector(&self, dense: &str, urgency: Urgency) -> Result<Vec<f32>, MemoryError> {
        // One cell per query text: a turn that asks while its recall done
        // ahead is still embedding the same text waits for that embedding
        // instead of computing a second one beside it.
        let cell = self
            .recent
            .vectors
            .get_or_insert_with(dense, || Arc::new(tokio::sync::OnceCell::new()));
        // The embedding is boxed: the recall's futures nest deep under a
        // caller's (a debate run, a worker's job), and boxing here keeps
        // them within the compiler's default query depth for a layout.
        let qv = cell
            .get_or_try_init(|| {
                Box::pin(async {
                    let mut vectors = self
                        .embed_as(&[dense.to_owned()], InputType::Query, urgency)
                        .await?;
                    let mut qv = vectors.pop().unwrap_or_default();
                    crate::record::normalize(&mut qv).map_err(|reason| MemoryError::Invalid {
                        what: format!("query embedding from {}", self.space.model),
                        reason,
                    })?;
                    Ok::<_, MemoryError>(qv)
                })
            })
            .await?;
        Ok(qv.clone())
    }

    /// Fusion and scoring for a query already split by persona names
    /// ([`crate::names::split_names`]) and embedded (its `dense` text).
    pub async fn score(
        &self,
        query: &NamedQuery,
        query_vector: &[f32],
        filter: &MemoryFilter,
        config: &RetrievalConfig,
    ) -> Result<Vec<ScoredMemory>, MemoryError> {
        let n = config.candidates;
        let dense = self.index.search(query_vector, filter, n).await?;
        let lexical = self.index.lexical(&query.lexical, filter, n).await?;
        let dense_ids: Vec<String> = dense.iter().map(|c| c.memory.id.clone()).collect();
        let lexical_ids: Vec<String> = lexical.iter().map(|h| h.id.clone()).collect();
        let fused = fuse(&dense_ids, &lexical_ids, config.rrf_k, n);
        let mut known: std::collections::HashMap<String, crate::record::Candidate> = dense
            .into_iter()
            .map(|c| (c.memory.id.clone(), c))
            .collect();
        let missing: Vec<String> = fused
            .iter()
            .filter(|id| !known.contains_key(*id))
            .cloned()
            .collect();
        for c in self.index.fetch(&missing, query_vector).await? {
            known.insert(c.memory.id.clone(), c);
        }
        let bm25: std::collections::HashMap<&str, f32> =
            lexical.iter().map(|h| (h.id.as_str(), h.score)).collect();
        let inputs: Vec<ScoringInput> = fused
            .iter()
            .filter_map(|id| {
                known.remove(id).map(|c| ScoringInput {
                    lexical: bm25.get(id.as_str()).copied().unwrap_or(0.0),
                    similarity: c.similarity,
                    speaker: query
                        .named
                        .iter()
                        .any(|p| p.as_str() == c.memory.persona.as_str()),
                    memory: c.memory,
                })
            })
            .collect();
        Ok(score(inputs, config))
    }

    /// Re-embeds every memory with `embedder` and binds the store to it
    /// (`agon memory reindex`). `progress` receives (done, total so far).
    pub async fn reindex(
        index: Arc<dyn MemoryIndex>,
        embedder: Arc<dyn Embedder>,
        mut progress: impl FnMut(usize) + Send,
    ) -> Result<usize, MemoryError> {
        let space = EmbeddingSpace::of(embedder.as_ref());
        index.reset_space(&space).await?;
        let memory = Self {
            index: Arc::clone(&index),
            embedder,
            space,
            config: RetrievalConfig::default(),
            recent: Arc::default(),
        };
        let mut done = 0;
        loop {
            let batch = index.unembedded(256).await?;
            if batch.is_empty() {
                return Ok(done);
            }
            let texts: Vec<String> = batch.iter().map(|m| m.content.clone()).collect();
            let vectors = memory.embed(&texts, InputType::Document).await?;
            let items: Vec<(String, Vec<f32>)> =
                batch.iter().map(|m| m.id.clone()).zip(vectors).collect();
            index.set_embeddings(items).await?;
            done += batch.len();
            progress(done);
        }
    }
}

/// The names a query is split by: every persona under the filter, and the
/// other names (`aliases`) of those among them, each with its owner.
fn names_and_owners(
    personas: &[String],
    aliases: &[(agon_core::PersonaId, Vec<String>)],
) -> (Vec<String>, Vec<String>) {
    let (mut names, mut owners) = (personas.to_vec(), personas.to_vec());
    for (persona, other_names) in aliases {
        if personas.iter().any(|p| p == persona.as_str()) {
            for name in other_names.iter().filter(|n| !n.trim().is_empty()) {
                names.push(name.clone());
                owners.push(persona.as_str().to_owned());
            }
        }
    }
    (names, owners)
}

/// What a recall's result is kept under: its query, filter, `k` and names.
fn recall_key(
    query: &str,
    filter: &MemoryFilter,
    k: usize,
    aliases: &[(agon_core::PersonaId, Vec<String>)],
) -> String {
    format!("{}\u{0}{filter:?}\u{0}{k}\u{0}{aliases:?}", query.trim())
}

/// Whether a caller waits on an embedding, or it is done in the background
/// (a writer's batch, a recall ahead of its turn).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Urgency {
    Waited,
    Background,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use agon_core::{DebateId, PersonaId};

    use super::*;
    use crate::{InMemoryIndex, MemoryKind, MemoryMeta};

    /// A toy embedder for the logic: how often each letter occurs.
    struct Letters;

    #[async_trait::async_trait]
    impl Embedder for Letters {
        async fn embed(
            &self,
            texts: &[String],
            _: InputType,
        ) -> Result<Vec<Vec<f32>>, agon_llm::ProviderError> {
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0.1_f32; 26];
                    for b in t.to_lowercase().bytes().filter(u8::is_ascii_lowercase) {
                        v[usize::from(b - b'a')] += 1.0;
                    }
                    v
                })
                .collect())
        }
        fn dimensions(&self) -> usize {
            26
        }
        fn max_batch(&self) -> usize {
            64
        }
        fn model_id(&self) -> &str {
            "letters"
        }
    }

    fn said(i: i64, text: &str) -> MemoryMeta {
        MemoryMeta {
            id: format!("d/{i}"),
            debate: DebateId::new("d"),
            persona: PersonaId::new("mara"),
            content: text.to_owned(),
            kind: MemoryKind::Message,
            importance: 5,
            round: 1,
            created: chrono::DateTime::from_timestamp(1_700_000_000 + i, 0).unwrap(),
            subject: None,
        }
    }

    /// A write while a turn waits on its model: the recall done ahead for
    /// the next turn is computed again in the background, so that turn
    /// finds a result that sees the write, without searching itself; once
    /// the turn has asked it, later writes leave it alone.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_write_computes_the_recalls_done_ahead_again_until_their_turn_asks() {
        let memory = Memory::open(
            Arc::new(InMemoryIndex::new()),
            Arc::new(Letters),
            RetrievalConfig::default(),
        )
        .await
        .unwrap();
        memory
            .remember(vec![
                said(1, "Congestion pricing cut traffic in Stockholm."),
                said(2, "Pedestrian zones raised retail rents."),
            ])
            .await
            .unwrap();
        let filter = MemoryFilter {
            persona: Some(PersonaId::new("mara")),
            ..MemoryFilter::default()
        };
        let query = "What did congestion pricing do to traffic?";
        let key = recall_key(query, &filter, 5, &[]);
        memory.recall_ahead(query, &filter, 5, &[]).await.unwrap();
        let kept_now = || {
            memory
                .recent
                .results
                .get(&key)
                .filter(|(generation, _)| *generation == memory.generation())
                .map(|(_, recall)| recall)
        };
        assert_eq!(kept_now().unwrap().memories.len(), 2);
        memory
            .remember(vec![said(3, "Congestion pricing in London cut traffic.")])
            .await
            .unwrap();
        let mut refreshed = None;
        for _ in 0..500 {
            refreshed = kept_now();
            if refreshed.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let refreshed = refreshed.expect("recomputed after the write");
        assert_eq!(refreshed.memories.len(), 3, "{refreshed:#?}");
        let asked = memory.recall_aliased(query, &filter, 5, &[]).await.unwrap();
        assert_eq!(asked, refreshed, "the turn's result is the one kept");
        assert!(
            memory.recent.ahead.values().is_empty(),
            "asked: no longer recomputed after writes"
        );
    }

    /// Letter counts, slowly, counting the texts embedded.
    #[derive(Default)]
    struct SlowLetters {
        texts: std::sync::atomic::AtomicUsize,
    }

    #[async_trait::async_trait]
    impl Embedder for SlowLetters {
        async fn embed(
            &self,
            texts: &[String],
            input: InputType,
        ) -> Result<Vec<Vec<f32>>, agon_llm::ProviderError> {
            self.texts.fetch_add(texts.len(), Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(200)).await;
            Letters.embed(texts, input).await
        }
        fn dimensions(&self) -> usize {
            26
        }
        fn max_batch(&self) -> usize {
            64
        }
        fn model_id(&self) -> &str {
            "letters"
        }
    }

    /// A turn that asks its recall while the recall done ahead is still
    /// embedding the query waits for that embedding: the query is embedded
    /// once, not a second time beside the first.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_turn_asking_during_its_recall_ahead_shares_the_query_embedding() {
        let embedder = Arc::new(SlowLetters::default());
        let memory = Memory::open(
            Arc::new(InMemoryIndex::new()),
            Arc::clone(&embedder) as Arc<dyn Embedder>,
            RetrievalConfig::default(),
        )
        .await
        .unwrap();
        memory
            .remember(vec![said(
                1,
                "Congestion pricing cut traffic in Stockholm.",
            )])
            .await
            .unwrap();
        let before = embedder.texts.load(Ordering::SeqCst);
        let filter = MemoryFilter {
            persona: Some(PersonaId::new("mara")),
            ..MemoryFilter::default()
        };
        let query = "What did congestion pricing do to traffic?";
        let ahead = {
            let (memory, filter) = (memory.clone(), filter.clone());
            tokio::spawn(async move { memory.recall_ahead(query, &filter, 5, &[]).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let asked = memory.recall_aliased(query, &filter, 5, &[]).await.unwrap();
        ahead.await.unwrap().unwrap();
        assert_eq!(asked.memories.len(), 1);
        assert_eq!(
            embedder.texts.load(Ordering::SeqCst) - before,
            1,
            "the query is embedded once"
        );
    }

    impl Memory {
        fn generation(&self) -> u64 {
            self.recent.generation.load(Ordering::SeqCst)
        }
    }
}
