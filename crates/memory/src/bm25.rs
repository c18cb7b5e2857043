//! An in-process BM25 inverted index (Robertson–Spärck Jones idf, k1 = 1.2,
//! b = 0.75), documents addressed by dense `u32` slots.

use std::collections::HashMap;

use crate::text::Analyzer;

/// BM25's term-frequency saturation.
pub const K1: f32 = 1.2;
/// BM25's length normalization.
pub const B: f32 = 0.75;

/// BM25 over documents added one by one.
#[derive(Debug, Default)]
pub struct Bm25 {
    analyzer: Analyzer,
    postings: HashMap<String, Vec<(u32, u32)>>,
    doc_len: Vec<u32>,
    total_len: u64,
}

impl Bm25 {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    /// Whether no document was added.
    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// The analyzer used for documents and queries.
    pub fn analyzer(&self) -> &Analyzer {
        &self.analyzer
    }

    /// Adds the next document; its slot is the number of documents before it.
    pub fn add(&mut self, text: &str) -> u32 {
        let slot = self.doc_len.len() as u32;
        let terms = self.analyzer.terms(text);
        let mut tf: HashMap<String, u32> = HashMap::new();
        for t in &terms {
            *tf.entry(t.clone()).or_default() += 1;
        }
        for (term, n) in tf {
            self.postings.entry(term).or_default().push((slot, n));
        }
        self.doc_len.push(terms.len() as u32);
        self.total_len += terms.len() as u64;
        slot
    }

    /// The `n` best documents for `query` among those `accept` admits, best
    /// first, with their scores (only documents sharing a term score).
    pub fn search(&self, query: &str, n: usize, accept: impl Fn(u32) -> bool) -> Vec<(u32, f32)> {
        if n == 0 || self.is_empty() {
            return Vec::new();
        }
        let mut terms = self.analyzer.terms(query);
        terms.sort();
        terms.dedup();
        let docs = self.doc_len.len() as f32;
        let avg_len = (self.total_len as f32 / docs).max(1.0);
        // Dense scores (every term's weight is above 0, so a 0 is a
        // document not reached yet): a long session's query shares its
        // common words with most documents.
        let mut scores = vec![0.0f32; self.doc_len.len()];
        let mut reached: Vec<u32> = Vec::new();
        for term in &terms {
            let Some(list) = self.postings.get(term) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = (1.0 + (docs - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                if !accept(doc) {
                    continue;
                }
                let tf = tf as f32;
                let len = self.doc_len[doc as usize] as f32;
                let s = idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg_len));
                let score = &mut scores[doc as usize];
                if *score == 0.0 {
                    reached.push(doc);
                }
                *score += s;
            }
        }
        let mut ranked: Vec<(u32, f32)> = reached
            .into_iter()
            .map(|doc| (doc, scores[doc as usize]))
            .collect();
        let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if ranked.len() > n {
            ranked.select_nth_unstable_by(n, order);
            ranked.truncate(n);
        }
        ranked.sort_by(order);
        ranked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rare_terms_outrank_common_ones_and_filters_apply() {
        let mut index = Bm25::new();
        index.add("cars in the city are noisy");
        index.add("the city council met about cars");
        index.add("Lena moved to Porto last spring");
        index.add("cars cars cars");
        let hits = index.search("Where did Lena move?", 10, |_| true);
        assert_eq!(hits[0].0, 2);
        assert_eq!(hits.len(), 1);
        let hits = index.search("city cars", 10, |d| d != 0);
        assert!(hits.iter().all(|h| h.0 != 0));
        assert_eq!(hits[0].0, 1, "both terms beat one repeated term: {hits:?}");
        assert!(index.search("", 10, |_| true).is_empty());
        assert!(index.search("cars", 0, |_| true).is_empty());
    }
}
