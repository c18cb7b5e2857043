//! The embedded index: every memory in process, vectors in one contiguous
//! `Vec<f32>`, filters compiled to integer codes, exact cosine search by dot
//! product over unit vectors, and BM25 over the same records.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::bm25::Bm25;
use crate::record::{MemoryFilter, MemoryKind, MemoryMeta, MemoryRecord};

/// A slot's score, ordered for a bounded min-heap (ties: lower slot wins).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hit(f32, u32);

impl Eq for Hit {}

impl PartialOrd for Hit {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Hit {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

/// Exact in-process index. Slots are dense, in insertion order.
#[derive(Debug)]
pub struct ExactIndex {
    dims: usize,
    vectors: Vec<f32>,
    embedded: Vec<bool>,
    metas: Vec<MemoryMeta>,
    persona: Vec<u32>,
    debate: Vec<u32>,
    kind: Vec<u8>,
    persona_codes: HashMap<String, u32>,
    debate_codes: HashMap<String, u32>,
    by_id: HashMap<String, u32>,
    bm25: Bm25,
}

/// A filter compiled to codes; `None` when it can match nothing.
struct Compiled {
    persona: Option<u32>,
    debate: Option<u32>,
    exclude: Option<u32>,
    kinds: u8,
}

/// Dot product, eight lanes at a time so the compiler vectorizes it.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let (a8, a_rest) = a.as_chunks::<8>();
    let (b8, b_rest) = b.as_chunks::<8>();
    let mut acc = [0.0f32; 8];
    for (x, y) in a8.iter().zip(b8) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

impl ExactIndex {
    /// An empty index of `dims`-dimensional vectors.
    pub fn new(dims: usize) -> Self {
        Self {
            dims,
            vectors: Vec::new(),
            embedded: Vec::new(),
            metas: Vec::new(),
            persona: Vec::new(),
            debate: Vec::new(),
            kind: Vec::new(),
            persona_codes: HashMap::new(),
            debate_codes: HashMap::new(),
            by_id: HashMap::new(),
            bm25: Bm25::new(),
        }
    }

    /// Vector length.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Number of memories.
    pub fn len(&self) -> usize {
        self.metas.len()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.metas.is_empty()
    }

    /// Whether a memory with this id is present.
    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// The memory in `slot`.
    pub fn meta(&self, slot: u32) -> &MemoryMeta {
        &self.metas[slot as usize]
    }

    /// The slot of a memory id.
    pub fn slot(&self, id: &str) -> Option<u32> {
        self.by_id.get(id).copied()
    }

    /// Persona ids present, sorted.
    pub fn personas(&self) -> Vec<String> {
        let mut v: Vec<String> = self.persona_codes.keys().cloned().collect();
        v.sort();
        v
    }

    /// Adds a record (already validated: unit vector of `dims`). Returns
    /// `false`, changing nothing, when its id is already present.
    pub fn insert(&mut self, record: MemoryRecord) -> bool {
        self.insert_parts(record.meta(), Some(&record.embedding))
    }

    /// Adds a memory whose vector may be missing (during a reindex); a
    /// memory without a vector is found by BM25 only.
    pub fn insert_parts(&mut self, meta: MemoryMeta, embedding: Option<&[f32]>) -> bool {
        if self.by_id.contains_key(&meta.id) {
            return false;
        }
        let slot = self.metas.len() as u32;
        let next = self.persona_codes.len() as u32;
        let p = *self
            .persona_codes
            .entry(meta.persona.as_str().to_owned())
            .or_insert(next);
        let next = self.debate_codes.len() as u32;
        let d = *self
            .debate_codes
            .entry(meta.debate.as_str().to_owned())
            .or_insert(next);
        match embedding {
            Some(v) if v.len() == self.dims => {
                self.vectors.extend_from_slice(v);
                self.embedded.push(true);
            }
            _ => {
                self.vectors.extend(std::iter::repeat_n(0.0, self.dims));
                self.embedded.push(false);
            }
        }
        self.persona.push(p);
        self.debate.push(d);
        self.kind.push(meta.kind.code());
        self.bm25.add(&meta.content);
        self.by_id.insert(meta.id.clone(), slot);
        self.metas.push(meta);
        true
    }

    /// The index without the memories of `debate`, and how many it had.
    pub fn without_debate(&self, debate: &str) -> (Self, usize) {
        let mut kept = Self::new(self.dims);
        let mut removed = 0;
        for (slot, meta) in self.metas.iter().enumerate() {
            if meta.debate.as_str() == debate {
                removed += 1;
                continue;
            }
            let start = slot * self.dims;
            let vector = self.embedded[slot].then(|| &self.vectors[start..start + self.dims]);
            kept.insert_parts(meta.clone(), vector);
        }
        (kept, removed)
    }

    /// Sets the vector of a present memory (reindexing).
    pub fn set_embedding(&mut self, id: &str, embedding: &[f32]) -> bool {
        let Some(slot) = self.slot(id) else {
            return false;
        };
        if embedding.len() != self.dims {
            return false;
        }
        let start = slot as usize * self.dims;
        self.vectors[start..start + self.dims].copy_from_slice(embedding);
        self.embedded[slot as usize] = true;
        true
    }

    /// Ids of memories without a vector, in slot order.
    pub fn unembedded(&self) -> Vec<&MemoryMeta> {
        self.metas
            .iter()
            .zip(&self.embedded)
            .filter(|(_, e)| !**e)
            .map(|(m, _)| m)
            .collect()
    }

    fn compile(&self, filter: &MemoryFilter) -> Option<Compiled> {
        let persona = match &filter.persona {
            Some(p) => Some(*self.persona_codes.get(p.as_str())?),
            None => None,
        };
        let debate = match &filter.debate {
            Some(d) => Some(*self.debate_codes.get(d.as_str())?),
            None => None,
        };
        let exclude = filter
            .exclude_debate
            .as_ref()
            .and_then(|d| self.debate_codes.get(d.as_str()).copied());
        let kinds = if filter.kinds.is_empty() {
            MemoryKind::ALL.iter().fold(0u8, |m, k| m | (1 << k.code()))
        } else {
            filter.kinds.iter().fold(0u8, |m, k| m | (1 << k.code()))
        };
        Some(Compiled {
            persona,
            debate,
            exclude,
            kinds,
        })
    }

    #[inline]
    fn accepts(&self, c: &Compiled, slot: usize) -> bool {
        c.persona.is_none_or(|p| self.persona[slot] == p)
            && c.debate.is_none_or(|d| self.debate[slot] == d)
            && c.exclude.is_none_or(|d| self.debate[slot] != d)
            && c.kinds & (1 << self.kind[slot]) != 0
    }

    /// The `n` memories most similar to the unit vector `query` that pass
    /// `filter`, most similar first, with their cosine similarity.
    pub fn search(&self, query: &[f32], filter: &MemoryFilter, n: usize) -> Vec<(u32, f32)> {
        if n == 0 || query.len() != self.dims {
            return Vec::new();
        }
        let Some(c) = self.compile(filter) else {
            return Vec::new();
        };
        let mut heap: BinaryHeap<Reverse<Hit>> = BinaryHeap::with_capacity(n + 1);
        for (slot, row) in self.vectors.chunks_exact(self.dims).enumerate() {
            if !self.embedded[slot] || !self.accepts(&c, slot) {
                continue;
            }
            let hit = Hit(dot(query, row), slot as u32);
            if heap.len() < n {
                heap.push(Reverse(hit));
            } else if let Some(Reverse(worst)) = heap.peek()
                && hit > *worst
            {
                heap.pop();
                heap.push(Reverse(hit));
            }
        }
        let mut out: Vec<Hit> = heap.into_iter().map(|Reverse(h)| h).collect();
        out.sort_by(|a, b| b.cmp(a));
        out.into_iter().map(|Hit(s, slot)| (slot, s)).collect()
    }

    /// The `n` best BM25 matches of `query` that pass `filter`.
    pub fn lexical(&self, query: &str, filter: &MemoryFilter, n: usize) -> Vec<(u32, f32)> {
        let Some(c) = self.compile(filter) else {
            return Vec::new();
        };
        self.bm25
            .search(query, n, |slot| self.accepts(&c, slot as usize))
    }

    /// Cosine similarity of a memory to the unit vector `query` (0 for a
    /// memory without a vector).
    pub fn similarity(&self, slot: u32, query: &[f32]) -> f32 {
        let slot = slot as usize;
        if !self.embedded[slot] || query.len() != self.dims {
            return 0.0;
        }
        dot(
            query,
            &self.vectors[slot * self.dims..(slot + 1) * self.dims],
        )
    }

    /// Number of memories passing `filter`.
    pub fn count(&self, filter: &MemoryFilter) -> usize {
        let Some(c) = self.compile(filter) else {
            return 0;
        };
        (0..self.len()).filter(|&s| self.accepts(&c, s)).count()
    }

    /// Up to `limit` memories passing `filter`, ordered by (debate, time,
    /// id).
    pub fn matching(&self, filter: &MemoryFilter, limit: usize) -> Vec<MemoryMeta> {
        let Some(c) = self.compile(filter) else {
            return Vec::new();
        };
        let mut out: Vec<&MemoryMeta> = (0..self.len())
            .filter(|&s| self.accepts(&c, s))
            .map(|s| self.meta(s as u32))
            .collect();
        out.sort_by(|a, b| (&a.debate, a.created, &a.id).cmp(&(&b.debate, b.created, &b.id)));
        out.into_iter().take(limit).cloned().collect()
    }

    /// The personas with memories passing `filter`, sorted.
    pub fn personas_matching(&self, filter: &MemoryFilter) -> Vec<String> {
        let Some(c) = self.compile(filter) else {
            return Vec::new();
        };
        let mut codes: Vec<u32> = (0..self.len())
            .filter(|&s| self.accepts(&c, s))
            .map(|s| self.persona[s])
            .collect();
        codes.sort_unstable();
        codes.dedup();
        let mut names: Vec<String> = self
            .persona_codes
            .iter()
            .filter(|(_, code)| codes.binary_search(code).is_ok())
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        names
    }

    /// Up to `n` memories on each side of `slot` in its debate that pass
    /// `filter`, by (time, id), oldest first, `slot` left out.
    pub fn neighbours(&self, slot: u32, filter: &MemoryFilter, n: usize) -> Vec<u32> {
        let Some(c) = self.compile(filter) else {
            return Vec::new();
        };
        if n == 0 || slot as usize >= self.len() {
            return Vec::new();
        }
        let debate = self.debate[slot as usize];
        let key = |s: u32| (self.metas[s as usize].created, &self.metas[s as usize].id);
        let mut same: Vec<u32> = (0..self.len() as u32)
            .filter(|&s| {
                s == slot || (self.debate[s as usize] == debate && self.accepts(&c, s as usize))
            })
            .collect();
        same.sort_by(|&a, &b| key(a).cmp(&key(b)));
        let Some(at) = same.iter().position(|&s| s == slot) else {
            return Vec::new();
        };
        let from = at.saturating_sub(n);
        let to = (at + n + 1).min(same.len());
        same[from..to]
            .iter()
            .copied()
            .filter(|&s| s != slot)
            .collect()
    }

    /// Whether `kind` is one of the codes.
    pub fn kind_of(&self, slot: u32) -> MemoryKind {
        self.metas[slot as usize].kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agon_core::{DebateId, PersonaId};
    use chrono::{TimeZone, Utc};

    fn record(
        id: &str,
        persona: &str,
        debate: &str,
        kind: MemoryKind,
        v: [f32; 3],
    ) -> MemoryRecord {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        MemoryRecord {
            id: id.into(),
            debate: DebateId::new(debate),
            persona: PersonaId::new(persona),
            content: format!("memory {id}"),
            kind,
            importance: 5,
            round: 1,
            created: Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
            embedding: v.iter().map(|x| x / norm).collect(),
            subject: None,
        }
    }

    #[test]
    fn dot_matches_naive_sum_on_odd_lengths() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.1).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-4);
    }

    #[test]
    fn exact_search_ranks_by_cosine_and_applies_every_filter() {
        let mut index = ExactIndex::new(3);
        assert!(index.insert(record(
            "a",
            "mara",
            "d1",
            MemoryKind::Message,
            [1.0, 0.0, 0.0]
        )));
        assert!(index.insert(record(
            "b",
            "mara",
            "d2",
            MemoryKind::Reflection,
            [0.9, 0.1, 0.0]
        )));
        assert!(index.insert(record(
            "c",
            "theo",
            "d1",
            MemoryKind::Message,
            [1.0, 0.05, 0.0]
        )));
        assert!(index.insert(record(
            "d",
            "mara",
            "d1",
            MemoryKind::Position,
            [0.0, 1.0, 0.0]
        )));
        assert!(!index.insert(record("a", "x", "y", MemoryKind::Message, [1.0, 0.0, 0.0])));
        let q = [1.0, 0.0, 0.0];
        let ids = |hits: Vec<(u32, f32)>| -> Vec<String> {
            hits.iter()
                .map(|(s, _)| index.meta(*s).id.clone())
                .collect()
        };
        assert_eq!(
            ids(index.search(&q, &MemoryFilter::default(), 2)),
            ["a", "c"]
        );
        let mara = MemoryFilter::persona("mara");
        assert_eq!(ids(index.search(&q, &mara, 10)), ["a", "b", "d"]);
        let other = MemoryFilter {
            exclude_debate: Some(DebateId::new("d1")),
            ..mara.clone()
        };
        assert_eq!(ids(index.search(&q, &other, 10)), ["b"]);
        let kinds = MemoryFilter {
            kinds: vec![MemoryKind::Position, MemoryKind::Reflection],
            ..mara.clone()
        };
        assert_eq!(ids(index.search(&q, &kinds, 10)), ["b", "d"]);
        let nobody = MemoryFilter::persona("nobody");
        assert!(index.search(&q, &nobody, 10).is_empty());
        assert_eq!(index.count(&mara), 3);
        assert!(index.search(&q, &mara, 0).is_empty());
    }
}
