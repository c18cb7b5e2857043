//! A llama-family GGUF chat model in process (SmolLM2-135M-Instruct by
//! default): ChatML template, batched prompt processing, KV-cache
//! checkpoints of recent prompts (a new prompt starts from the one it
//! shares the longest prefix with), temperature / top-p sampling with a
//! seed (greedy at 0), stop sequences, streaming.
//!
//! The transformer itself is [`super::llama`]: every weight is held as Q8
//! (Q8_0 as stored, other types requantized at load) and runs on int8 SIMD
//! kernels; the crate's GGUF reader loads the file and builds the tokenizer
//! from its metadata.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use tokenizers::Tokenizer;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;

use super::decoding::{Decoding, Verdict};
use super::files::{models_dir, verify};
use super::gguf::{Gguf, Value, tokenizer_from_gguf};
use super::guidance::Guidance;
use super::llama::{KvCache, Llama};
use super::output::{GenerationStats, LocalGeneration, OnText};
use super::sampling::{Sampler, Sampling};
use super::{inference, invalid, output};
use agon_llm::ProviderError;
use agon_llm::{ChatRequest, JsonSchema, Role};

/// Fewest tokens constrained JSON may use (see `generate`).
pub(crate) const JSON_MIN_TOKENS: usize = 512;

/// The default chat model file in the models directory.
pub const SMOLLM2_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// Whole prompts kept as checkpoints (least recently used cut back to
/// their system turn first).
const RECENT_PROMPTS: usize = 4;
/// System turns kept as checkpoints besides (one per role or persona;
/// least recently used dropped first).
const SYSTEM_TURNS: usize = 8;
/// Positions all checkpoints hold together, at most (SmolLM2: 23 KB a
/// position, so ~190 MB): beyond it the least recently used go first.
const CHECKPOINT_POSITIONS: usize = 8192;

/// The model after reading a whole prompt: its tokens and state.
struct Checkpoint {
    tokens: Vec<u32>,
    cache: KvCache,
    /// Tokens of its system turn (the part a role's calls share).
    system: usize,
}

/// Tokens at the start of `a` and `b` that are the same.
fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Which of `held` (checkpoints' tokens) shares the longest prefix with
/// `prompt`, and how long it is, leaving at least the prompt's last token
/// to read (its logits are the caller's); the most recent wins a tie.
/// `None` when none shares a token.
fn best_prefix<'a>(
    held: impl Iterator<Item = &'a [u32]>,
    prompt: &[u32],
) -> Option<(usize, usize)> {
    let most = prompt.len().saturating_sub(1);
    held.enumerate()
        .map(|(i, tokens)| (i, common_prefix(tokens, prompt).min(most)))
        .filter(|&(_, shared)| shared > 0)
        .max_by_key(|&(i, shared)| (shared, i))
}

/// The state after the longest prefix of `prompt` a checkpoint holds, and
/// its length ([`best_prefix`]); that checkpoint becomes the most recently
/// used.
fn start_from(checkpoints: &mut Vec<Checkpoint>, prompt: &[u32]) -> Option<(KvCache, usize)> {
    let (i, shared) = best_prefix(checkpoints.iter().map(|c| c.tokens.as_slice()), prompt)?;
    let checkpoint = checkpoints.remove(i);
    let cache = checkpoint.cache.prefix(shared);
    checkpoints.push(checkpoint);
    let shared = cache.len();
    Some((cache, shared))
}

/// Keeps the state after `prompt` (whose first `system` tokens are its
/// system turn). No checkpoint is kept that is a prefix of another (the
/// longer serves whatever the shorter would), so the new one replaces
/// those it extends. At most [`RECENT_PROMPTS`] whole prompts are held and
/// [`CHECKPOINT_POSITIONS`] positions in all: beyond either, the least
/// recently used prompt is cut back to its system turn (what a role's calls
/// share, and small); at most [`SYSTEM_TURNS`] of those are held, the least
/// recently used dropped first.
fn keep_checkpoint(
    checkpoints: &mut Vec<Checkpoint>,
    prompt: &[u32],
    system: usize,
    cache: &KvCache,
) {
    drop_prefixes(checkpoints, prompt);
    let whole = |c: &Checkpoint| c.tokens.len() > c.system;
    let positions = |checkpoints: &[Checkpoint]| -> usize {
        checkpoints.iter().map(|c| c.tokens.len()).sum::<usize>() + prompt.len()
    };
    while checkpoints.iter().filter(|c| whole(c)).count() >= RECENT_PROMPTS
        || positions(checkpoints) > CHECKPOINT_POSITIONS
    {
        let Some(oldest) = checkpoints.iter_mut().find(|c| whole(c)) else {
            break;
        };
        oldest.tokens.truncate(oldest.system);
        oldest.cache.truncate(oldest.system);
        drop_prefixes(checkpoints, prompt);
    }
    while !checkpoints.is_empty()
        && (checkpoints.iter().filter(|c| !whole(c)).count() > SYSTEM_TURNS
            || positions(checkpoints) > CHECKPOINT_POSITIONS)
    {
        let oldest = checkpoints.iter().position(|c| !whole(c)).unwrap_or(0);
        checkpoints.remove(oldest);
    }
    checkpoints.push(Checkpoint {
        tokens: prompt.to_vec(),
        cache: cache.clone(),
        system,
    });
}

/// Drops every checkpoint whose tokens are a prefix of `prompt` or of
/// another checkpoint's tokens (of two equal ones, the less recently used
/// goes), and the empty ones.
fn drop_prefixes(checkpoints: &mut Vec<Checkpoint>, prompt: &[u32]) {
    let mut i = 0;
    while i < checkpoints.len() {
        let tokens = &checkpoints[i].tokens;
        let covered = tokens.is_empty()
            || prompt.starts_with(tokens)
            || checkpoints.iter().enumerate().any(|(j, other)| {
                j != i
                    && other.tokens.starts_with(tokens)
                    && (other.tokens.len() > tokens.len() || j > i)
            });
        if covered {
            checkpoints.remove(i);
        } else {
            i += 1;
        }
    }
}

struct Engine {
    model: Llama,
    tokenizer: Tokenizer,
    eos: Vec<u32>,
    checkpoints: Vec<Checkpoint>,
    guidance: Guidance,
}

/// An in-process chat model. One loaded model shared by every caller;
/// requests queue on it and run on blocking threads.
#[derive(Clone)]
pub struct LocalChat {
    engine: Arc<Mutex<Engine>>,
    model_id: String,
    seed: u64,
}

impl std::fmt::Debug for LocalChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalChat")
            .field("model_id", &self.model_id)
            .finish()
    }
}

/// SmolLM2's pre-tokenizer: digits one by one, then byte-level without a prefix space.
fn fix_pre_tokenizer(tokenizer: &mut Tokenizer) {
    let digits = PreTokenizerWrapper::Digits(Digits::new(true));
    let bytes = PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, true));
    tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::Sequence(Sequence::new(vec![
        digits, bytes,
    ]))));
}

impl LocalChat {
    /// SmolLM2-135M-Instruct from the models directory.
    pub fn smollm2() -> Result<Self, ProviderError> {
        Self::load(&models_dir().join(SMOLLM2_FILE))
    }

    /// A llama-family GGUF with a ChatML template. The file is checked (and
    /// checksummed if pinned) first; an unsupported architecture or
    /// tokenizer is an error naming the file.
    pub fn load(path: &Path) -> Result<Self, ProviderError> {
        verify(path)?;
        // Buffered: the header is ~100,000 small reads (the tokenizer's
        // strings); the tensors' large reads bypass the buffer.
        let mut file =
            std::io::BufReader::new(std::fs::File::open(path).map_err(|e| invalid(path, e))?);
        let gguf = Gguf::read(&mut file).map_err(|e| invalid(path, e))?;
        let arch = gguf
            .get("general.architecture")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if arch != "llama" {
            return Err(invalid(
                path,
                format!("architecture `{arch}` is not supported (llama-family GGUF only)"),
            ));
        }
        let mut tokenizer =
            tokenizer_from_gguf(&gguf).map_err(|e| invalid(path, format!("tokenizer: {e}")))?;
        fix_pre_tokenizer(&mut tokenizer);
        let mut eos = Vec::new();
        if let Some(id) = gguf
            .get("tokenizer.ggml.eos_token_id")
            .and_then(Value::as_u32)
        {
            eos.push(id);
        }
        if let Some(id) = tokenizer.token_to_id("<|im_end|>") {
            eos.push(id);
        }
        if eos.is_empty() {
            return Err(invalid(
                path,
                "no end-of-turn token (eos or <|im_end|>) in the vocabulary",
            ));
        }
        let vocab = tokenizer.get_vocab_size(true);
        let eot = tokenizer.token_to_id("<|im_end|>").unwrap_or(eos[0]);
        let guidance = Guidance::new(&tokenizer, vocab, eot)
            .map_err(|e| invalid(path, format!("building the token trie: {e}")))?;
        let model = Llama::from_gguf(&gguf, &mut file)
            .map_err(|e| invalid(path, format!("loading weights: {e}")))?;
        let model_id = path.file_name().and_then(|n| n.to_str()).map_or_else(
            || "local".to_owned(),
            |n| n.trim_end_matches(".gguf").to_owned(),
        );
        Ok(Self {
            engine: Arc::new(Mutex::new(Engine {
                model,
                tokenizer,
                eos,
                checkpoints: Vec::new(),
                guidance,
            })),
            model_id,
            seed: 299_792_458,
        })
    }

    /// The same model with another sampling seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The ChatML prompt for a request, split into the shared prefix (system
    /// turn) and the rest.
    pub fn chatml(request: &ChatRequest) -> (String, String) {
        let prefix = match &request.system {
            Some(system) => format!("<|im_start|>system\n{system}<|im_end|>\n"),
            None => String::new(),
        };
        let mut rest = String::new();
        for m in &request.messages {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            rest.push_str(&format!("<|im_start|>{role}\n{}<|im_end|>\n", m.content));
        }
        rest.push_str("<|im_start|>assistant\n");
        (prefix, rest)
    }

    /// Token ids of `text` (special tokens recognized).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, ProviderError> {
        let engine = self
            .engine
            .lock()
            .map_err(|_| inference("the model lock is poisoned"))?;
        engine
            .tokenizer
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| inference(format!("tokenizing: {e}")))
    }

    /// Text of token ids (special tokens kept).
    pub fn decode(&self, ids: &[u32]) -> Result<String, ProviderError> {
        let engine = self
            .engine
            .lock()
            .map_err(|_| inference("the model lock is poisoned"))?;
        engine
            .tokenizer
            .decode(ids, false)
            .map_err(|e| inference(format!("decoding: {e}")))
    }

    /// Generates synchronously, calling `on_text` with each new piece of
    /// text; returns the full text, the finish reason and timings.
    pub fn generate_blocking(
        &self,
        request: &ChatRequest,
        on_text: impl FnMut(&str),
    ) -> Result<(String, String, GenerationStats), ProviderError> {
        self.generate(request, None, on_text, &AtomicBool::new(false))
    }

    /// Generates output constrained to `schema` (llguidance masks the logits
    /// at every step, so the output always parses); returns the text and timings.
    pub fn generate_json_blocking(
        &self,
        request: &ChatRequest,
        schema: &JsonSchema,
    ) -> Result<(String, String, GenerationStats), ProviderError> {
        self.generate(request, Some(schema), |_| {}, &AtomicBool::new(false))
    }

    /// One generation; it ends early, with an error, once `cancelled` is
    /// set (checked before the prompt is read and before every token).
    fn generate(
        &self,
        request: &ChatRequest,
        schema: Option<&JsonSchema>,
        mut on_text: impl FnMut(&str),
        cancelled: &AtomicBool,
    ) -> Result<(String, String, GenerationStats), ProviderError> {
        let check = || {
            if cancelled.load(Ordering::Relaxed) {
                Err(inference("cancelled: the caller stopped waiting"))
            } else {
                Ok(())
            }
        };
        request.validate()?;
        let mut engine = self
            .engine
            .lock()
            .map_err(|_| inference("the model lock is poisoned"))?;
        let matcher = match schema {
            Some(schema) => Some(engine.guidance.matcher(schema)?),
            None => None,
        };
        let (prefix_text, rest_text) = Self::chatml(request);
        let encode = |t: &str| -> Result<Vec<u32>, ProviderError> {
            engine
                .tokenizer
                .encode(t, false)
                .map(|e| e.get_ids().to_vec())
                .map_err(|e| inference(format!("tokenizing: {e}")))
        };
        let prefix = encode(&prefix_text)?;
        let rest = encode(&rest_text)?;
        let prompt_len = prefix.len() + rest.len();
        // Constrained JSON must be allowed to close: the grammar bounds its
        // length (strings and arrays are capped), so a low `max_tokens` is
        // raised to that floor rather than cutting the JSON short.
        let max_tokens = if let Some(schema) = schema.filter(|_| matcher.is_some()) {
            (request.max_tokens as usize).max(crate::guidance::json_token_floor(
                &schema.schema,
                JSON_MIN_TOKENS,
            ))
        } else {
            request.max_tokens as usize
        };
        let wanted = prompt_len + max_tokens;
        let context = engine.model.config().context;
        if wanted > context {
            return Err(ProviderError::InvalidRequest {
                reason: format!(
                    "local: the prompt has {prompt_len} tokens and up to {max_tokens} more were asked for, over the model's context window of {context} tokens"
                ),
            });
        }
        let mut stats = GenerationStats {
            prompt_tokens: prompt_len,
            ..GenerationStats::default()
        };
        let started = Instant::now();
        check()?;
        let system = prefix.len();
        let mut prompt = prefix;
        prompt.extend_from_slice(&rest);
        // Start from the checkpoint sharing the longest prefix with this
        // prompt (a batch and its parts give the same bits, so the output
        // is the same as from an empty cache), read the rest, keep the
        // state after the prompt for the calls that follow.
        let engine = &mut *engine;
        let (mut cache, shared) = start_from(&mut engine.checkpoints, &prompt)
            .unwrap_or_else(|| (engine.model.new_cache(), 0));
        stats.reused_tokens = shared;
        let mut logits = engine
            .model
            .forward(&mut cache, &prompt[shared..])
            .map_err(inference)?;
        keep_checkpoint(&mut engine.checkpoints, &prompt, system, &cache);
        stats.prompt_time = started.elapsed();

        let sampling = match request.temperature {
            Some(t) if t > 0.0 => Sampling::Nucleus {
                top_p: 0.95,
                temperature: t,
            },
            _ => Sampling::Greedy,
        };
        let generation_started = Instant::now();
        let engine = &*engine;
        let mut decoding = Decoding::new(
            prompt,
            max_tokens,
            matcher,
            Sampler::new(self.seed, sampling),
            &engine.eos,
            &request.stop,
        );
        let mut finish = "length";
        // Tokens chosen (and given to the grammar) that the model has not read.
        let mut unread: Vec<u32> = Vec::new();
        loop {
            if unread.is_empty() {
                if decoding.room() == 0 {
                    break;
                }
                check()?;
                let Some(next) = decoding.choose(&mut logits, None)? else {
                    finish = "stop";
                    break;
                };
                let (step, stop) = decoding.take(next, &engine.tokenizer, &mut on_text)?;
                if stop {
                    finish = "stop";
                    break;
                }
                unread = step;
            }
            // The unread tokens and a draft of what may follow, in one pass;
            // each drafted token is kept while it is the token chosen.
            let drafted = decoding.draft().to_vec();
            let read_before = cache.len();
            let mut batch = std::mem::take(&mut unread);
            let taken = batch.len();
            batch.extend_from_slice(&drafted);
            let rows = engine
                .model
                .forward_last(&mut cache, &batch, drafted.len() + 1)
                .map_err(inference)?;
            stats.draft_tokens += drafted.len();
            match decoding.verify(&drafted, &rows, &engine.tokenizer, &mut on_text)? {
                Verdict::Finished => {
                    finish = "stop";
                    break;
                }
                Verdict::Continue {
                    kept,
                    unread: chosen,
                    logits: next,
                } => {
                    stats.accepted_draft_tokens += kept;
                    cache.truncate(read_before + taken + kept);
                    unread = chosen;
                    logits = next;
                }
            }
        }
        stats.generated_tokens = decoding.generated().len();
        stats.forced_tokens = decoding.forced;
        stats.generation_time = generation_started.elapsed();
        Ok((decoding.into_text(), finish.to_owned(), stats))
    }
}

#[async_trait]
impl LocalGeneration for LocalChat {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    async fn run(
        &self,
        request: ChatRequest,
        schema: Option<JsonSchema>,
        on_text: OnText,
    ) -> output::Outcome {
        let this = self.clone();
        // A caller that stops waiting (a stopped worker, an aborted turn, a
        // timeout) drops this future: the generation then stops at its next
        // token instead of holding the model, and the process, until done.
        let cancel = CancelOnDrop(Arc::new(AtomicBool::new(false)));
        let cancelled = Arc::clone(&cancel.0);
        tokio::task::spawn_blocking(move || {
            this.generate(&request, schema.as_ref(), on_text, &cancelled)
        })
        .await
        .map_err(|e| inference(format!("the generation task failed: {e}")))?
    }
}

/// Sets its flag when dropped: the future of a generation holds one, so a
/// generation learns that nobody waits for it any more.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Where the default chat model is expected.
pub fn default_chat_path() -> PathBuf {
    models_dir().join(SMOLLM2_FILE)
}

crate::output::local_chat_model!(LocalChat);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use super::*;

    fn tokens(held: &[Checkpoint]) -> Vec<Vec<u32>> {
        held.iter().map(|c| c.tokens.clone()).collect()
    }

    #[test]
    fn the_longest_shared_prefix_is_chosen_leaving_a_token_to_read() {
        let held: Vec<Vec<u32>> = vec![vec![1, 2, 3], vec![1, 2, 3, 4, 5], vec![9, 9], vec![1, 2]];
        let best = |prompt: &[u32]| best_prefix(held.iter().map(Vec::as_slice), prompt);
        assert_eq!(best(&[1, 2, 3, 4, 6]), Some((1, 4)));
        // The whole prompt held: its last token is still read.
        assert_eq!(best(&[1, 2, 3, 4, 5]), Some((1, 4)));
        // A tie: the most recently used (the later) wins.
        assert_eq!(best(&[1, 2, 7]), Some((3, 2)));
        assert_eq!(best(&[5, 1, 2]), None);
        assert_eq!(best(&[1]), None, "a one-token prompt reads its token");
    }

    #[test]
    fn a_kept_prompt_replaces_its_prefixes_and_the_oldest_are_cut_back_to_their_system_turn() {
        let mut held = Vec::new();
        let keep = |held: &mut Vec<Checkpoint>, prompt: &[u32]| {
            keep_checkpoint(held, prompt, 1, &KvCache::default());
        };
        keep(&mut held, &[1, 2, 3]);
        keep(&mut held, &[7, 8]);
        keep(&mut held, &[1, 2, 3, 4]);
        assert_eq!(tokens(&held), [vec![7, 8], vec![1, 2, 3, 4]]);
        keep(&mut held, &[10, 0]);
        keep(&mut held, &[11, 0]);
        keep(&mut held, &[12, 0]);
        assert_eq!(
            tokens(&held),
            [
                vec![7],
                vec![1, 2, 3, 4],
                vec![10, 0],
                vec![11, 0],
                vec![12, 0]
            ],
            "beyond {RECENT_PROMPTS} prompts the oldest is cut back to its system turn"
        );
        keep(&mut held, &[1, 2, 9]);
        assert_eq!(
            tokens(&held),
            [
                vec![7],
                vec![10, 0],
                vec![11, 0],
                vec![12, 0],
                vec![1, 2, 9]
            ],
            "[1], cut back, is a prefix of the new prompt"
        );
        for first in 20..40 {
            keep(&mut held, &[first, 0]);
        }
        let expected: Vec<Vec<u32>> = (28..36)
            .map(|first| vec![first])
            .chain((36..40).map(|first| vec![first, 0]))
            .collect();
        assert_eq!(tokens(&held), expected, "{SYSTEM_TURNS} system turns kept");

        // Positions are bounded too.
        let mut held = Vec::new();
        keep(&mut held, &[5, 6, 7]);
        keep(&mut held, &[5, 8]);
        let long: Vec<u32> = (300..300 + CHECKPOINT_POSITIONS as u32 - 1).collect();
        keep(&mut held, &long);
        let lengths: Vec<usize> = held.iter().map(|c| c.tokens.len()).collect();
        assert_eq!(lengths, [1, long.len()]);
        assert_eq!(held[0].tokens, [5]);
        let longer: Vec<u32> = (400..400 + CHECKPOINT_POSITIONS as u32).collect();
        keep(&mut held, &longer);
        assert_eq!(held.len(), 1, "a prompt of the whole budget is kept alone");
        assert_eq!(held[0].tokens.len(), longer.len());
    }

    fn counting() -> ChatRequest {
        ChatRequest::new("Count from 1 to 50, separated by commas.")
            .with_system("You are a concise assistant.")
            .with_temperature(0.0)
            .with_max_tokens(64)
    }

    /// A generation whose caller stopped waiting ends at its next token
    /// (the real model: `cargo xtask models` fetches it).
    #[test]
    fn a_cancelled_generation_stops_at_its_next_token() {
        let model = LocalChat::smollm2().unwrap_or_else(|e| panic!("{e}"));
        let cancelled = AtomicBool::new(false);
        let mut pieces = 0;
        let err = model
            .generate(
                &counting(),
                None,
                |_| {
                    pieces += 1;
                    if pieces == 3 {
                        cancelled.store(true, Ordering::Relaxed);
                    }
                },
                &cancelled,
            )
            .unwrap_err();
        assert!(err.to_string().contains("cancelled"), "{err}");
        assert_eq!(pieces, 3, "no text after the cancellation");
        // Cancelled before it starts: the prompt is not even read.
        let err = model
            .generate(
                &counting(),
                None,
                |_| panic!("no text"),
                &AtomicBool::new(true),
            )
            .unwrap_err();
        assert!(err.to_string().contains("cancelled"), "{err}");
        // The model serves the next call as usual.
        let (text, _, stats) = model.generate_blocking(&counting(), |_| {}).unwrap();
        assert!(text.starts_with('1'), "{text:?}");
        assert!(stats.generated_tokens > 3, "{stats:?}");
    }

    #[test]
    fn dropping_the_guard_cancels() {
        let flag = {
            let guard = CancelOnDrop(Arc::new(AtomicBool::new(false)));
            let flag = Arc::clone(&guard.0);
            assert!(!flag.load(Ordering::Relaxed));
            flag
        };
        assert!(flag.load(Ordering::Relaxed));
    }
}
