//! Token counting. The assembler measures every piece of text it emits with a
//! [`TokenCounter`], so budgets hold for the tokenizer the caller chooses.

use tiktoken_rs::CoreBPE;

/// Counts (and cuts) text in tokens. Implementations must be deterministic.
pub trait TokenCounter: Send + Sync {
    /// Number of tokens in `text`.
    fn count(&self, text: &str) -> usize;

    /// The longest prefix of `text` with at most `max_tokens` tokens.
    ///
    /// The default implementation binary-searches over character boundaries
    /// with [`TokenCounter::count`]; tokenizers that can decode should
    /// override it.
    fn truncate(&self, text: &str, max_tokens: usize) -> String {
        if self.count(text) <= max_tokens {
            return text.to_owned();
        }
        // Prefix ends on character boundaries; `ends[lo]` always fits and the
        // whole text (the last end) does not.
        let mut ends: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        ends.push(text.len());
        let (mut lo, mut hi) = (0usize, ends.len() - 1);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.count(&text[..ends[mid]]) <= max_tokens {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        text[..ends[lo]].to_owned()
    }
}

/// Which OpenAI encoding a [`TiktokenCounter`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    /// GPT-4o and later (the default).
    #[default]
    O200kBase,
    /// GPT-4 and GPT-3.5.
    Cl100kBase,
}

/// A [`TokenCounter`] over tiktoken's BPE encodings (vocabularies are
/// compiled into the binary; nothing is downloaded).
#[derive(Clone, Copy)]
pub struct TiktokenCounter {
    bpe: &'static CoreBPE,
    encoding: Encoding,
}

impl std::fmt::Debug for TiktokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TiktokenCounter")
            .field("encoding", &self.encoding)
            .finish()
    }
}

impl Default for TiktokenCounter {
    fn default() -> Self {
        Self::new(Encoding::default())
    }
}

impl TiktokenCounter {
    /// A counter for `encoding`. The vocabulary is parsed once per process
    /// (about 100 ms for o200k) and shared by every counter.
    pub fn new(encoding: Encoding) -> Self {
        let bpe = match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        Self { bpe, encoding }
    }

    /// The encoding in use.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl TokenCounter for TiktokenCounter {
    fn count(&self, text: &str) -> usize {
        self.bpe.count_ordinary(text)
    }

    fn truncate(&self, text: &str, max_tokens: usize) -> String {
        let tokens = self.bpe.encode_ordinary(text);
        if tokens.len() <= max_tokens {
            return text.to_owned();
        }
        // A token may end inside a multi-byte character; back off until the
        // prefix decodes, then make sure re-encoding stays within the limit.
        let mut keep = max_tokens;
        while keep > 0 {
            if let Ok(prefix) = self.bpe.decode(&tokens[..keep])
                && self.count(&prefix) <= max_tokens
            {
                return prefix;
            }
            keep -= 1;
        }
        String::new()
    }
}

/// Memoizes another counter's counts. A debate assembles many contexts
/// whose items (ledger lines, recent messages) repeat from call to call, so
/// one cache per debate saves most of the tokenizing. Bounded: the cache is
/// cleared when it reaches `capacity` entries.
#[derive(Debug)]
pub struct CachedCounter<C> {
    inner: C,
    capacity: usize,
    cache: std::sync::Mutex<std::collections::HashMap<u64, usize>>,
}

impl<C: TokenCounter> CachedCounter<C> {
    /// Default number of cached counts.
    pub const DEFAULT_CAPACITY: usize = 16_384;

    /// Wraps `inner` with a cache of [`CachedCounter::DEFAULT_CAPACITY`] entries.
    pub fn new(inner: C) -> Self {
        Self::with_capacity(inner, Self::DEFAULT_CAPACITY)
    }

    /// Wraps `inner` with a cache of at most `capacity` entries.
    pub fn with_capacity(inner: C, capacity: usize) -> Self {
        Self {
            inner,
            capacity: capacity.max(1),
            cache: std::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }

    /// The wrapped counter.
    pub fn inner(&self) -> &C {
        &self.inner
    }

    fn key(text: &str) -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        BuildHasherDefault::<DefaultHasher>::default().hash_one(text)
    }
}

impl<C: TokenCounter> TokenCounter for CachedCounter<C> {
    fn count(&self, text: &str) -> usize {
        let key = Self::key(text);
        if let Some(&count) = self
            .cache
            .lock()
            .ok()
            .and_then(|cache| cache.get(&key).copied())
            .as_ref()
        {
            return count;
        }
        let count = self.inner.count(text);
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= self.capacity {
                cache.clear();
            }
            cache.insert(key, count);
        }
        count
    }

    fn truncate(&self, text: &str, max_tokens: usize) -> String {
        self.inner.truncate(text, max_tokens)
    }
}

/// One token per character: a counter whose arithmetic tests can do by hand.
#[cfg(test)]
pub(crate) struct PerChar;

#[cfg(test)]
impl TokenCounter for PerChar {
    fn count(&self, text: &str) -> usize {
        text.chars().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_truncate_keeps_the_longest_fitting_prefix() {
        assert_eq!(PerChar.truncate("héllo wörld", 5), "héllo");
        assert_eq!(PerChar.truncate("abc", 10), "abc");
        assert_eq!(PerChar.truncate("abc", 0), "");
    }

    #[test]
    fn tiktoken_counts_and_truncates_within_limit() {
        let counter = TiktokenCounter::default();
        let text = "The quick brown fox jumps over the lazy dog. Ünïcödé 数字 12345 🙂🙂";
        let total = counter.count(text);
        assert!(total > 10, "{total}");
        for limit in 0..=total + 1 {
            let cut = counter.truncate(text, limit);
            assert!(counter.count(&cut) <= limit, "limit {limit}: {cut:?}");
            assert!(text.starts_with(&cut));
        }
        assert_eq!(counter.truncate(text, total), text);
    }

    #[test]
    fn cached_counter_agrees_with_its_inner_counter_and_stays_bounded() {
        let cached = CachedCounter::with_capacity(TiktokenCounter::default(), 4);
        let raw = TiktokenCounter::default();
        for round in 0..3 {
            for i in 0..10 {
                let text = format!("message {i} of the debate, round {round}");
                assert_eq!(cached.count(&text), raw.count(&text));
                assert_eq!(
                    cached.count(&text),
                    raw.count(&text),
                    "second lookup hits the cache"
                );
            }
        }
        assert!(cached.cache.lock().unwrap().len() <= 4);
        assert_eq!(
            cached.truncate("a b c d e f", 2),
            raw.truncate("a b c d e f", 2)
        );
    }

    #[test]
    fn encodings_differ_on_the_same_text() {
        let text = "Agon gives multi-agent debates a real memory.";
        let o200k = TiktokenCounter::new(Encoding::O200kBase);
        let cl100k = TiktokenCounter::new(Encoding::Cl100kBase);
        assert_eq!(o200k.encoding(), Encoding::O200kBase);
        assert!(o200k.count(text) > 0 && cl100k.count(text) > 0);
    }
}
