//! Prefix stability (issue 35): how much of each call's prompt repeats a
//! prompt sent earlier in the same debate, by call kind. Providers cache
//! prompt prefixes (OpenAI automatically, Anthropic at the breakpoints a
//! request marks), so that share is the upper bound of what caching can
//! bill at the cache rate. A call's text is what a provider sees first to
//! last: the structured-output schema, then the messages in order.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use agon_context::{TiktokenCounter, TokenCounter};

/// The shortest prefix the providers cache (OpenAI; Anthropic's Sonnet and
/// Opus), in tokens.
pub const CACHE_MIN_TOKENS: usize = 1_024;

/// The text a provider reads of an OpenAI chat-completions request body,
/// in order: `response_format`'s schema, then every message.
pub fn request_text(body: &serde_json::Value) -> String {
    let mut text = String::new();
    if !body["response_format"].is_null() {
        text.push_str(&body["response_format"].to_string());
        text.push('\n');
    }
    for m in body["messages"].as_array().into_iter().flatten() {
        text.push_str(m["content"].as_str().unwrap_or_default());
        text.push('\n');
    }
    text
}

/// One call kind's figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindStability {
    /// Calls.
    pub calls: usize,
    /// Prompt tokens.
    pub tokens: usize,
    /// Tokens of the longest prefix each call shares with an earlier one.
    pub shared: usize,
    /// The same, counting only prefixes of [`CACHE_MIN_TOKENS`] or more.
    pub cacheable: usize,
    /// Tokens a cache would write: the part of each call's prefix that a
    /// later call reuses and no earlier call had written.
    pub writes: usize,
}

/// A debate's prefix stability, by call kind.
#[derive(Debug, Clone, Default)]
pub struct Stability {
    /// Call kind → figures.
    pub kinds: BTreeMap<String, KindStability>,
}

/// Bytes two texts share from the start, on a character boundary.
pub fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .take_while(|((_, x), y)| x == y)
        .last()
        .map_or(0, |((i, c), _)| i + c.len_utf8())
}

/// The stability of `calls` (kind, text), in the order they were sent.
pub fn stability(calls: &[(String, String)], counter: &TiktokenCounter) -> Stability {
    let n = calls.len();
    // Longest prefix each call shares with an earlier and a later one.
    let mut earlier = vec![0usize; n];
    let mut later = vec![0usize; n];
    for i in 0..n {
        for j in 0..i {
            let shared = common_prefix(&calls[i].1, &calls[j].1);
            earlier[i] = earlier[i].max(shared);
            later[j] = later[j].max(shared);
        }
    }
    let mut out = Stability::default();
    for (i, (kind, text)) in calls.iter().enumerate() {
        let tokens = counter.count(text);
        let read = counter.count(&text[..earlier[i]]);
        let reused = counter.count(&text[..later[i]]);
        let cacheable = if read >= CACHE_MIN_TOKENS { read } else { 0 };
        let writes = if reused >= CACHE_MIN_TOKENS {
            reused.saturating_sub(cacheable)
        } else {
            0
        };
        let k = out.kinds.entry(kind.clone()).or_default();
        k.calls += 1;
        k.tokens += tokens;
        k.shared += read;
        k.cacheable += cacheable;
        k.writes += writes;
    }
    out
}

fn percent(part: usize, whole: usize) -> f64 {
    100.0 * part as f64 / whole.max(1) as f64
}

impl Stability {
    /// The figures over every kind.
    pub fn total(&self) -> KindStability {
        self.kinds
            .values()
            .fold(KindStability::default(), |mut t, k| {
                t.calls += k.calls;
                t.tokens += k.tokens;
                t.shared += k.shared;
                t.cacheable += k.cacheable;
                t.writes += k.writes;
                t
            })
    }

    /// The table `cargo xtask bench …` prints.
    pub fn table(&self) -> String {
        let mut s = format!(
            "  {:<22} {:>5} {:>8} {:>20} {:>24}\n",
            "call", "calls", "tokens", "shared with earlier", "cacheable (≥1,024-token)"
        );
        let row = |name: &str, k: &KindStability| {
            format!(
                "  {:<22} {:>5} {:>8} {:>12} ({:>4.1} %) {:>14} ({:>4.1} %)\n",
                name,
                k.calls,
                k.tokens,
                k.shared,
                percent(k.shared, k.tokens),
                k.cacheable,
                percent(k.cacheable, k.tokens)
            )
        };
        for (kind, k) in &self.kinds {
            s.push_str(&row(kind, k));
        }
        s.push_str(&row("total", &self.total()));
        s
    }

    /// The input cost of these prompts at `input`, and with caching at
    /// `read` for cached prefixes and `write` for their first write (USD
    /// per million tokens): a projection, as if every cacheable prefix
    /// were cached.
    pub fn projected_cost(&self, input: f64, read: f64, write: f64) -> (f64, f64) {
        let t = self.total();
        let plain = t.tokens as f64 * input / 1e6;
        let uncached = t.tokens.saturating_sub(t.cacheable + t.writes);
        let cached =
            (uncached as f64 * input + t.cacheable as f64 * read + t.writes as f64 * write) / 1e6;
        (plain, cached)
    }

    /// The input cost if every shared prefix were read at `read`, whatever
    /// its length (the bound without the providers' 1,024-token minimum,
    /// writes not counted).
    pub fn unbounded_cost(&self, input: f64, read: f64) -> f64 {
        let t = self.total();
        ((t.tokens - t.shared) as f64 * input + t.shared as f64 * read) / 1e6
    }

    /// Projection lines for Claude Sonnet 4 and GPT-4o list prices.
    pub fn projection(&self) -> String {
        let (sonnet, sonnet_cached) = self.projected_cost(3.00, 0.30, 3.75);
        let (gpt, gpt_cached) = self.projected_cost(2.50, 1.25, 2.50);
        format!(
            "  input cost at list prices (projection: every cacheable prefix cached): \
             Claude Sonnet 4 ${sonnet:.4} → ${sonnet_cached:.4} ({:.0} %), \
             GPT-4o ${gpt:.4} → ${gpt_cached:.4} ({:.0} %)\n  \
             without the 1,024-token minimum (every shared prefix read from a cache): \
             Claude Sonnet 4 ${:.4} ({:.0} %), GPT-4o ${:.4} ({:.0} %)\n",
            100.0 * sonnet_cached / sonnet.max(1e-12),
            100.0 * gpt_cached / gpt.max(1e-12),
            self.unbounded_cost(3.00, 0.30),
            100.0 * self.unbounded_cost(3.00, 0.30) / sonnet.max(1e-12),
            self.unbounded_cost(2.50, 1.25),
            100.0 * self.unbounded_cost(2.50, 1.25) / gpt.max(1e-12),
        )
    }
}
