//! The same GGUF chat models on llama.cpp (feature `llama-cpp`): the
//! fastest CPU path, for users who can build llama.cpp (cmake and libclang at
//! build time). Same ChatML template, sampling, stop sequences, streaming and
//! schema-constrained JSON (llguidance, through llama.cpp's sampler chain) as
//! [`LocalChat`](super::LocalChat).
//!
//! One worker thread owns the model and its context; requests queue on a
//! channel and run in order. The KV cache keeps the tokens of the previous
//! call, and a new prompt recomputes only what follows the longest common
//! prefix (the system prompt and persona contract a debate repeats).

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Instant;

use async_trait::async_trait;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

use super::chat::{GenerationStats, JSON_MIN_TOKENS, LocalChat, SMOLLM2_FILE};
use super::decoding::{REPEAT_PENALTY, REPEAT_WINDOW};
use super::files::{models_dir, verify};
use super::guidance::Guidance;
use super::output::{LocalGeneration, OnText, Outcome};
use super::{inference, invalid, output};
use agon_llm::ProviderError;
use agon_llm::{ChatRequest, JsonSchema};

/// Largest context the worker allocates (tokens), whatever the model was trained on.
const MAX_CONTEXT: u32 = 8192;

/// The process-wide llama.cpp backend (it may be initialised only once).
fn backend() -> Result<&'static LlamaBackend, ProviderError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            // llama.cpp logs every load and decode to stderr; keep the CLI quiet.
            llama_cpp_2::send_logs_to_tracing(
                llama_cpp_2::LogOptions::default().with_logs_enabled(false),
            );
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| inference(format!("initialising llama.cpp: {e}")))
}

/// One generation request for the worker.
struct Generate {
    request: ChatRequest,
    seed: u32,
    schema: Option<JsonSchema>,
    on_text: OnText,
    reply: tokio::sync::oneshot::Sender<Outcome>,
}

/// Work for the model's thread.
enum Job {
    Generate(Generate),
    /// Token ids of a text, special tokens recognized.
    Encode {
        text: String,
        reply: mpsc::SyncSender<Vec<u32>>,
    },
}

/// A llama-family GGUF chat model on llama.cpp, shared by every caller.
#[derive(Clone)]
pub struct LlamaCppChat {
    jobs: mpsc::Sender<Job>,
    model_id: String,
    seed: u32,
}

impl std::fmt::Debug for LlamaCppChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlamaCppChat")
            .field("model_id", &self.model_id)
            .finish()
    }
}

impl LlamaCppChat {
    /// SmolLM2-135M-Instruct from the models directory.
    pub fn smollm2() -> Result<Self, ProviderError> {
        Self::load(&models_dir().join(SMOLLM2_FILE))
    }

    /// Loads a llama-family GGUF with a ChatML template on a worker thread
    /// and waits until it is ready. The file is checked (and checksummed if
    /// pinned) first; a file llama.cpp cannot load, or of another
    /// architecture, is an error naming it.
    pub fn load(path: &Path) -> Result<Self, ProviderError> {
        verify(path)?;
        let backend = backend()?;
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, loaded) = mpsc::sync_channel::<Result<(), ProviderError>>(1);
        let owned: PathBuf = path.to_owned();
        std::thread::Builder::new()
            .name("agon-llama-cpp".into())
            .spawn(move || worker(backend, &owned, &ready, &queue))
            .map_err(|e| inference(format!("starting the llama.cpp worker: {e}")))?;
        loaded
            .recv()
            .map_err(|_| invalid(path, "the llama.cpp worker stopped while loading"))??;
        let model_id = path.file_name().and_then(|n| n.to_str()).map_or_else(
            || "llama-cpp".to_owned(),
            |n| n.trim_end_matches(".gguf").to_owned(),
        );
        Ok(Self {
            jobs,
            model_id,
            seed: 299_792_458,
        })
    }

    /// The same model with another sampling seed.
    pub fn with_seed(mut self, seed: u32) -> Self {
        self.seed = seed;
        self
    }

    /// Queues a generation on the worker; the receiver gets its outcome.
    fn submit(
        &self,
        request: ChatRequest,
        schema: Option<JsonSchema>,
        on_text: OnText,
    ) -> Result<tokio::sync::oneshot::Receiver<Outcome>, ProviderError> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.jobs
            .send(Job::Generate(Generate {
                request,
                seed: self.seed,
                schema,
                on_text,
                reply,
            }))
            .map_err(|_| inference("the llama.cpp worker has stopped"))?;
        Ok(answer)
    }

    /// Generates synchronously (from outside an async runtime), calling
    /// `on_text` with each new piece of text; returns the full text, the
    /// finish reason and timings.
    pub fn generate_blocking(
        &self,
        request: &ChatRequest,
        schema: Option<&JsonSchema>,
        on_text: impl FnMut(&str) + Send + 'static,
    ) -> Outcome {
        self.submit(request.clone(), schema.cloned(), Box::new(on_text))?
            .blocking_recv()
            .map_err(|_| inference("the llama.cpp worker dropped the request"))?
    }

    /// Token ids of `text` as llama.cpp tokenizes it (special tokens
    /// recognized, nothing added): the reference the in-process tokenizer is
    /// checked against.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, ProviderError> {
        let (reply, ids) = mpsc::sync_channel(1);
        self.jobs
            .send(Job::Encode {
                text: text.to_owned(),
                reply,
            })
            .map_err(|_| inference("the llama.cpp worker has stopped"))?;
        ids.recv()
            .map_err(|_| inference("the llama.cpp worker dropped the request"))
    }
}

/// The worker: loads the model, reports readiness, then serves jobs until
/// every handle is dropped.
fn worker(
    backend: &'static LlamaBackend,
    path: &Path,
    ready: &mpsc::SyncSender<Result<(), ProviderError>>,
    queue: &mpsc::Receiver<Job>,
) {
    let model = match load_model(backend, path) {
        Ok(model) => model,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let mut engine = match Engine::new(backend, &model, path) {
        Ok(engine) => engine,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    if ready.send(Ok(())).is_err() {
        return;
    }
    while let Ok(job) = queue.recv() {
        match job {
            Job::Generate(mut job) => {
                let outcome = engine.generate(
                    &job.request,
                    job.seed,
                    job.schema.as_ref(),
                    &mut job.on_text,
                );
                let _ = job.reply.send(outcome);
            }
            Job::Encode { text, reply } => {
                let ids = engine.tokenize(&text).iter().map(|t| t.0 as u32).collect();
                let _ = reply.send(ids);
            }
        }
    }
}

fn load_model(backend: &LlamaBackend, path: &Path) -> Result<LlamaModel, ProviderError> {
    let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
        .map_err(|e| invalid(path, format!("llama.cpp cannot load it: {e}")))?;
    let arch = model
        .meta_val_str("general.architecture")
        .unwrap_or_default();
    if arch != "llama" {
        return Err(invalid(
            path,
            format!("architecture `{arch}` is not supported (llama-family GGUF only)"),
        ));
    }
    Ok(model)
}

/// The model's context and what its KV cache holds.
struct Engine<'m> {
    model: &'m LlamaModel,
    context: LlamaContext<'m>,
    /// Tokens whose keys and values are in the cache, in order.
    cached: Vec<LlamaToken>,
    guidance: Guidance,
    batch_size: usize,
}

impl<'m> Engine<'m> {
    fn new(
        backend: &LlamaBackend,
        model: &'m LlamaModel,
        path: &Path,
    ) -> Result<Self, ProviderError> {
        let window = model.n_ctx_train().clamp(512, MAX_CONTEXT);
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .try_into()
            .unwrap_or(2);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(window))
            .with_n_batch(window)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let context = model
            .new_context(backend, params)
            .map_err(|e| invalid(path, format!("creating a llama.cpp context: {e}")))?;
        let env = LlamaSampler::llguidance_tok_env(model);
        let guidance = Guidance::from_env(&env)
            .map_err(|e| invalid(path, format!("building the token trie: {e}")))?;
        Ok(Self {
            model,
            context,
            cached: Vec::new(),
            guidance,
            batch_size: window as usize,
        })
    }

    fn tokenize(&self, text: &str) -> Vec<LlamaToken> {
        self.model.vocab().tokenize(text.as_bytes(), false, true)
    }

    fn window(&self) -> usize {
        self.context.n_ctx() as usize
    }

    /// Puts `prompt` in the KV cache, recomputing only what follows the
    /// longest prefix it shares with what is cached; returns how many
    /// tokens were reused. The last prompt token is always recomputed so
    /// its logits are fresh.
    fn prefill(&mut self, prompt: &[LlamaToken]) -> Result<usize, ProviderError> {
        let shared = self
            .cached
            .iter()
            .zip(prompt)
            .take_while(|(a, b)| a == b)
            .count()
            .min(prompt.len().saturating_sub(1));
        let from = u32::try_from(shared).map_err(inference)?;
        let cleared = self
            .context
            .clear_kv_cache_seq(Some(0), Some(from), None)
            .map_err(inference)?;
        let shared = if cleared {
            shared
        } else {
            self.context.clear_kv_cache();
            0
        };
        self.cached.truncate(shared);
        let mut batch = LlamaBatch::new(self.batch_size, 1);
        for chunk in prompt[shared..].chunks(self.batch_size) {
            batch.clear();
            let start = self.cached.len();
            for (i, token) in chunk.iter().enumerate() {
                let position = i32::try_from(start + i).map_err(inference)?;
                let last = start + i + 1 == prompt.len();
                batch.add(*token, position, &[0], last).map_err(inference)?;
            }
            self.context.decode(&mut batch).map_err(inference)?;
            self.cached.extend_from_slice(chunk);
        }
        Ok(shared)
    }

    fn sampler(
        &self,
        request: &ChatRequest,
        seed: u32,
        schema: Option<&JsonSchema>,
    ) -> Result<LlamaSampler, ProviderError> {
        let mut chain = Vec::new();
        if let Some(schema) = schema {
            chain.push(LlamaSampler::from(self.guidance.matcher(schema)?));
        }
        chain.push(LlamaSampler::penalties(
            self.model.n_vocab(),
            REPEAT_WINDOW as i32,
            REPEAT_PENALTY,
            0.0,
            0.0,
        ));
        match request.temperature {
            Some(t) if t > 0.0 => {
                chain.push(LlamaSampler::top_p(0.95, 1));
                chain.push(LlamaSampler::temp(t));
                chain.push(LlamaSampler::dist(seed));
            }
            _ => chain.push(LlamaSampler::greedy()),
        }
        Ok(LlamaSampler::chain_simple(chain))
    }

    fn generate(
        &mut self,
        request: &ChatRequest,
        seed: u32,
        schema: Option<&JsonSchema>,
        on_text: &mut OnText,
    ) -> Outcome {
        request.validate()?;
        let mut sampler = self.sampler(request, seed, schema)?;
        let (prefix, rest) = LocalChat::chatml(request);
        let prompt = self.tokenize(&format!("{prefix}{rest}"));
        let max_tokens = if let Some(schema) = schema {
            (request.max_tokens as usize).max(crate::guidance::json_token_floor(
                &schema.schema,
                JSON_MIN_TOKENS,
            ))
        } else {
            request.max_tokens as usize
        };
        if prompt.len() + max_tokens > self.window() {
            return Err(ProviderError::InvalidRequest {
                reason: format!(
                    "llama-cpp: the prompt has {} tokens and up to {max_tokens} more were asked for, over the context window of {} tokens",
                    prompt.len(),
                    self.window()
                ),
            });
        }
        let mut stats = GenerationStats {
            prompt_tokens: prompt.len(),
            ..GenerationStats::default()
        };
        let started = Instant::now();
        stats.reused_tokens = self.prefill(&prompt)?;
        stats.prompt_time = started.elapsed();

        let generation_started = Instant::now();
        let mut bytes: Vec<u8> = Vec::new();
        let stops: &[String] = if schema.is_some() { &[] } else { &request.stop };
        let mut text = output::GrowingText::new(stops);
        let mut finish = "length".to_owned();
        let mut batch = LlamaBatch::new(1, 1);
        for _ in 0..max_tokens {
            let next = sampler.sample(&self.context, -1);
            if self.model.vocab().is_eog(next) {
                finish = "stop".to_owned();
                break;
            }
            stats.generated_tokens += 1;
            bytes.extend(self.model.vocab().token_to_piece(next, false, None));
            // Emit only whole characters (a token may end inside one).
            let whole = match std::str::from_utf8(&bytes) {
                Ok(all) => all.len(),
                Err(e) => e.valid_up_to(),
            };
            let decoded = String::from_utf8_lossy(&bytes[..whole]).into_owned();
            if text.update(decoded, on_text) {
                finish = "stop".to_owned();
                break;
            }
            batch.clear();
            let position = i32::try_from(self.cached.len()).map_err(inference)?;
            batch.add(next, position, &[0], true).map_err(inference)?;
            self.context.decode(&mut batch).map_err(inference)?;
            self.cached.push(next);
        }
        stats.generation_time = generation_started.elapsed();
        Ok((text.into_text(), finish, stats))
    }
}

#[async_trait]
impl LocalGeneration for LlamaCppChat {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    async fn run(
        &self,
        request: ChatRequest,
        schema: Option<JsonSchema>,
        on_text: OnText,
    ) -> Outcome {
        self.submit(request, schema, on_text)?
            .await
            .map_err(|_| inference("the llama.cpp worker dropped the request"))?
    }
}

crate::output::local_chat_model!(LlamaCppChat);
