//! The embedded backend: memories in the SQLite store, searched exactly in
//! process by [`ExactIndex`] (loaded on first use, then kept in step with the
//! table by its sequence column, so other processes' inserts are seen).

use std::collections::{HashMap, HashSet};

use agon_core::{DebateId, PersonaId};
use async_trait::async_trait;
use sqlx::{Row, SqlitePool};
use tokio::sync::RwLock;

use crate::error::MemoryError;
use crate::exact::ExactIndex;
use crate::index::{DebateInfo, MemoryIndex};
use crate::record::Superseded;
use crate::record::{
    Candidate, EmbeddingSpace, LexicalHit, MemoryFilter, MemoryMeta, MemoryRecord, prepare_batch,
};
use crate::sql::millis;

/// Memories in a SQLite file (the same file as the debate store, or its own).
#[derive(Debug)]
pub struct SqliteMemory {
    pool: SqlitePool,
    url: String,
    cache: RwLock<Cache>,
}

#[derive(Debug, Default)]
struct Cache {
    index: Option<ExactIndex>,
    seq: i64,
    generation: i64,
}

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl SqliteMemory {
    /// Opens (creating if missing) the SQLite file `url` names
    /// (`sqlite://PATH`, `sqlite:PATH` or a plain path) and migrates it.
    pub async fn open(url: &str) -> Result<Self, MemoryError> {
        let shown = agon_store::redact_url(url);
        let pool = agon_store::sqlite_pool(url, agon_store::BUSY_TIMEOUT).await?;
        {
            // Processes opening a new file at once migrate one at a time.
            let _lock = agon_store::sqlite_migration_lock(url).await?;
            crate::sql::migrate_memory!(&pool, crate::migrations::SQLITE, shown, "")?;
        }
        Ok(Self {
            pool,
            url: shown,
            cache: RwLock::new(Cache::default()),
        })
    }

    async fn stored_space(&self) -> Result<Option<(EmbeddingSpace, i64)>, MemoryError> {
        let row =
            sqlx::query("SELECT model, dimensions, generation FROM memory_space WHERE id = 1")
                .fetch_optional(&self.pool)
                .await
                .map_err(self.db())?;
        Ok(row.map(|r| {
            (
                EmbeddingSpace {
                    model: r.get("model"),
                    dimensions: r.get::<i64, _>("dimensions") as usize,
                },
                r.get("generation"),
            )
        }))
    }

    /// Brings the in-process index up to date with the table and runs `f` on it.
    async fn with_index<R>(&self, f: impl FnOnce(&ExactIndex) -> R) -> Result<R, MemoryError> {
        let Some((space, generation)) = self.stored_space().await? else {
            return Ok(f(&ExactIndex::new(0)));
        };
        {
            let cache = self.cache.read().await;
            if cache.index.is_some() && cache.generation == generation {
                let newest: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0) FROM memories")
                    .fetch_one(&self.pool)
                    .await
                    .map_err(self.db())?;
                if newest == cache.seq
                    && let Some(index) = &cache.index
                {
                    return Ok(f(index));
                }
            }
        }
        let mut cache = self.cache.write().await;
        if cache.generation != generation || cache.index.is_none() {
            cache.index = None;
            cache.seq = 0;
            cache.generation = generation;
        }
        let rows = sqlx::query(
            "SELECT seq, id, debate_id, persona, content, kind, importance, round, created_at, subject, embedding \
             FROM memories WHERE seq > ? ORDER BY seq",
        )
        .bind(cache.seq)
        .fetch_all(&self.pool)
        .await
        .map_err(self.db())?;
        let Cache { index, seq, .. } = &mut *cache;
        let index = index.get_or_insert_with(|| ExactIndex::new(space.dimensions));
        for row in rows {
            *seq = row.get("seq");
            let meta = meta_of(&row)?;
            let embedding: Option<Vec<u8>> = row.get("embedding");
            index.insert_parts(meta, embedding.map(|b| from_blob(&b)).as_deref());
        }
        Ok(f(index))
    }
}

crate::sql::shared_queries!(SqliteMemory, sqlx::sqlite::SqliteRow, i64, i64);

#[async_trait]
impl MemoryIndex for SqliteMemory {
    fn backend(&self) -> &'static str {
        "embedded"
    }

    async fn space(&self) -> Result<Option<EmbeddingSpace>, MemoryError> {
        Ok(self.stored_space().await?.map(|(s, _)| s))
    }

    async fn bind(&self, space: &EmbeddingSpace) -> Result<(), MemoryError> {
        sqlx::query("INSERT OR IGNORE INTO memory_space (id, model, dimensions) VALUES (1, ?, ?)")
            .bind(&space.model)
            .bind(space.dimensions as i64)
            .execute(&self.pool)
            .await
            .map_err(self.db())?;
        match self.space().await? {
            Some(stored) => stored.check(space),
            None => Ok(()),
        }
    }

    async fn insert(&self, mut records: Vec<MemoryRecord>) -> Result<usize, MemoryError> {
        if records.is_empty() {
            return Ok(0);
        }
        let space = self.space().await?;
        prepare_batch(space.as_ref(), &mut records)?;
        let mut tx = self.pool.begin().await.map_err(self.db())?;
        let mut new = 0;
        for r in &records {
            let done = sqlx::query(
                "INSERT OR IGNORE INTO memories \
                 (id, debate_id, persona, content, kind, importance, round, created_at, embedding, subject) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(&r.id)
            .bind(r.debate.as_str())
            .bind(r.persona.as_str())
            .bind(&r.content)
            .bind(r.kind.as_str())
            .bind(r.importance as i64)
            .bind(r.round as i64)
            .bind(millis(r.created))
            .bind(to_blob(&r.embedding))
            .bind(r.subject.as_deref())
            .execute(&mut *tx)
            .await
            .map_err(self.db())?;
            new += done.rows_affected() as usize;
        }
        tx.commit().await.map_err(self.db())?;
        Ok(new)
    }

    async fn existing(&self, ids: &[String]) -> Result<HashSet<String>, MemoryError> {
        self.with_index(|index| {
            ids.iter()
                .filter(|id| index.contains(id))
                .cloned()
                .collect()
        })
        .await
    }

    async fn search(
        &self,
        query: &[f32],
        filter: &MemoryFilter,
        n: usize,
    ) -> Result<Vec<Candidate>, MemoryError> {
        self.with_index(|index| {
            index
                .search(query, filter, n)
                .into_iter()
                .map(|(slot, similarity)| Candidate {
                    memory: index.meta(slot).clone(),
                    similarity,
                })
                .collect()
        })
        .await
    }

    async fn lexical(
        &self,
        query: &str,
        filter: &MemoryFilter,
        n: usize,
    ) -> Result<Vec<LexicalHit>, MemoryError> {
        self.with_index(|index| {
            index
                .lexical(query, filter, n)
                .into_iter()
                .map(|(slot, score)| LexicalHit {
                    id: index.meta(slot).id.clone(),
                    score,
                })
                .collect()
        })
        .await
    }

    async fn fetch(&self, ids: &[String], query: &[f32]) -> Result<Vec<Candidate>, MemoryError> {
        self.with_index(|index| {
            ids.iter()
                .filter_map(|id| index.slot(id))
                .map(|slot| Candidate {
                    memory: index.meta(slot).clone(),
                    similarity: index.similarity(slot, query),
                })
                .collect()
        })
        .await
    }

    async fn count(&self, filter: &MemoryFilter) -> Result<usize, MemoryError> {
        self.with_index(|index| index.count(filter)).await
    }

    async fn matching(
        &self,
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<MemoryMeta>, MemoryError> {
        self.with_index(|index| index.matching(filter, limit)).await
    }

    async fn personas(&self, filter: &MemoryFilter) -> Result<Vec<String>, MemoryError> {
        self.with_index(|index| index.personas_matching(filter))
            .await
    }

    async fn neighbours(
        &self,
        id: &str,
        filter: &MemoryFilter,
        n: usize,
    ) -> Result<Vec<MemoryMeta>, MemoryError> {
        self.with_index(|index| match index.slot(id) {
            Some(slot) => index
                .neighbours(slot, filter, n)
                .into_iter()
                .map(|s| index.meta(s).clone())
                .collect(),
            None => Vec::new(),
        })
        .await
    }

    async fn debates(&self, ids: &[DebateId]) -> Result<Vec<DebateInfo>, MemoryError> {
        self.debate_infos(ids).await
    }

    async fn delete_debate(&self, debate: &DebateId) -> Result<usize, MemoryError> {
        let mut tx = self.pool.begin().await.map_err(self.db())?;
        let done = sqlx::query("DELETE FROM memories WHERE debate_id = ?")
            .bind(debate.as_str())
            .execute(&mut *tx)
            .await
            .map_err(self.db())?;
        // A new generation: every process's in-memory index reloads.
        sqlx::query("UPDATE memory_space SET generation = generation + 1")
            .execute(&mut *tx)
            .await
            .map_err(self.db())?;
        tx.commit().await.map_err(self.db())?;
        Ok(done.rows_affected() as usize)
    }

    async fn reset_space(&self, space: &EmbeddingSpace) -> Result<(), MemoryError> {
        let mut tx = self.pool.begin().await.map_err(self.db())?;
        sqlx::query("UPDATE memories SET embedding = NULL")
            .execute(&mut *tx)
            .await
            .map_err(self.db())?;
        sqlx::query(
            "INSERT INTO memory_space (id, model, dimensions, generation) VALUES (1, ?, ?, 1) \
             ON CONFLICT (id) DO UPDATE SET model = excluded.model, \
             dimensions = excluded.dimensions, generation = memory_space.generation + 1",
        )
        .bind(&space.model)
        .bind(space.dimensions as i64)
        .execute(&mut *tx)
        .await
        .map_err(self.db())?;
        tx.commit().await.map_err(self.db())?;
        Ok(())
    }

    async fn unembedded(&self, limit: usize) -> Result<Vec<MemoryMeta>, MemoryError> {
        self.unembedded_metas(limit).await
    }

    async fn set_embeddings(&self, items: Vec<(String, Vec<f32>)>) -> Result<(), MemoryError> {
        let Some(space) = self.space().await? else {
            return Ok(());
        };
        let mut tx = self.pool.begin().await.map_err(self.db())?;
        for (id, mut v) in items {
            space.prepare(&id, &mut v)?;
            sqlx::query("UPDATE memories SET embedding = ? WHERE id = ?")
                .bind(to_blob(&v))
                .bind(&id)
                .execute(&mut *tx)
                .await
                .map_err(self.db())?;
        }
        sqlx::query("UPDATE memory_space SET generation = generation + 1 WHERE id = 1")
            .execute(&mut *tx)
            .await
            .map_err(self.db())?;
        tx.commit().await.map_err(self.db())?;
        Ok(())
    }
    async fn on_subject(
        &self,
        persona: &PersonaId,
        subject: &str,
    ) -> Result<Vec<MemoryMeta>, MemoryError> {
        self.subject_metas(persona, subject).await
    }

    async fn set_superseded(
        &self,
        items: Vec<(String, Option<Superseded>)>,
    ) -> Result<(), MemoryError> {
        self.write_superseded(items).await
    }

    async fn superseded(&self, ids: &[String]) -> Result<HashMap<String, Superseded>, MemoryError> {
        self.read_superseded(ids).await
    }
}
