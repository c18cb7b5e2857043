//! all-MiniLM-L6-v2 (or any BERT-family safetensors model) in process:
//! each text alone at its own length, mean pooling over its tokens,
//! L2-normalized; a batch's texts spread over the cores.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use tokenizers::{Tokenizer, TruncationParams};

use super::bert::{self, Config, Precision};
use super::files::{models_dir, verify};
use super::{PROVIDER, inference, invalid};
use agon_llm::Embedder;
use agon_llm::InputType;
use agon_llm::ProviderError;

/// The default model's directory under the models directory.
pub const MINILM_DIR: &str = "all-MiniLM-L6-v2";

/// The encoder and its tokenizer, loaded once.
struct Loaded {
    model: bert::Bert,
    tokenizer: Tokenizer,
}

/// An in-process sentence embedder. One loaded model, shared without a
/// lock (its forward pass only reads the weights): each call runs on a
/// blocking thread of its own, so a short recall query never waits behind
/// a batch of memories being written; it never stalls the async runtime.
#[derive(Clone)]
pub struct LocalEmbedder {
    bert: Arc<Loaded>,
    model_id: String,
    dimensions: usize,
    max_batch: usize,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("model_id", &self.model_id)
            .field("dimensions", &self.dimensions)
            .finish()
    }
}

impl LocalEmbedder {
    /// Texts per call to the model (each runs alone, unpadded).
    pub const DEFAULT_BATCH: usize = 64;
    /// Longest input in tokens; longer inputs are truncated (MiniLM was trained on 256).
    pub const MAX_TOKENS: usize = 256;

    /// MiniLM from the models directory (see [`models_dir`]).
    pub fn minilm() -> Result<Self, ProviderError> {
        Self::minilm_at(Precision::fastest())
    }

    /// MiniLM from the models directory, its projections multiplied at
    /// `precision` (see [`LocalEmbedder::load_at`]).
    pub fn minilm_at(precision: Precision) -> Result<Self, ProviderError> {
        Self::load_at(&models_dir().join(MINILM_DIR), precision)
    }

    /// A BERT-family model from a directory holding `model.safetensors`,
    /// `tokenizer.json` and `config.json`, its projections at the faster
    /// precision on this CPU ([`Precision::fastest`]: int8 on AVX-512
    /// VNNI). Files are checked (and pinned ones checksummed) before
    /// loading; a problem names the file.
    pub fn load(dir: &Path) -> Result<Self, ProviderError> {
        Self::load_at(dir, Precision::fastest())
    }

    /// As [`LocalEmbedder::load`], the projections multiplied at
    /// `precision`. Both precisions are one embedding space to a store
    /// (the model's id): a text's two vectors agree to a cosine above
    /// 0.997 (the crate's reference tests), so a store written on one CPU
    /// is searched as well from another.
    pub fn load_at(dir: &Path, precision: Precision) -> Result<Self, ProviderError> {
        let weights: PathBuf = dir.join("model.safetensors");
        let tokenizer_path = dir.join("tokenizer.json");
        let config_path = dir.join("config.json");
        for path in [&weights, &tokenizer_path, &config_path] {
            verify(path)?;
        }
        let config: Config = std::fs::read_to_string(&config_path)
            .map_err(|e| invalid(&config_path, e))
            .and_then(|text| {
                serde_json::from_str(&text)
                    .map_err(|e| invalid(&config_path, format!("not a BERT config: {e}")))
            })?;
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|e| invalid(&tokenizer_path, e))?;
        // Each text runs alone at its own length: no padding.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: Self::MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| invalid(&tokenizer_path, e))?;
        let bytes = std::fs::read(&weights).map_err(|e| invalid(&weights, e))?;
        let model = bert::Bert::load(&bytes, &config, precision)
            .map_err(|e| invalid(&weights, format!("not a BERT model: {e}")))?;
        Ok(Self {
            bert: Arc::new(Loaded { model, tokenizer }),
            model_id: dir
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or(MINILM_DIR)
                .to_owned(),
            dimensions: config.hidden_size,
            max_batch: Self::DEFAULT_BATCH,
        })
    }

    /// Embeds one batch synchronously (on the calling thread).
    pub fn embed_blocking(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ProviderError> {
        self.embed_blocking_as(texts, Priority::Caller)
    }

    fn embed_blocking_as(
        &self,
        texts: &[String],
        priority: Priority,
    ) -> Result<Vec<Vec<f32>>, ProviderError> {
        let bert = &self.bert;
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.max_batch) {
            out.extend(embed_batch(bert, batch, priority)?);
        }
        Ok(out)
    }

    /// `texts` embedded on a blocking thread (the async runtime never
    /// stalls) at `priority`.
    async fn embed_on_blocking_thread(
        &self,
        texts: &[String],
        priority: Priority,
    ) -> Result<Vec<Vec<f32>>, ProviderError> {
        agon_llm::check_embedding_inputs(PROVIDER, texts)?;
        let this = self.clone();
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || this.embed_blocking_as(&texts, priority))
            .await
            .map_err(|e| inference(format!("the embedding task failed: {e}")))?
    }
}

/// Whose CPU priority a batch is computed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Priority {
    /// The caller's (on the calling thread when one thread suffices).
    Caller,
    /// Lowered ([`crate::priority`]), on threads of the batch's own.
    Background,
}

/// The texts' embeddings: each text's hidden states (alone, unpadded)
/// averaged over its tokens and L2-normalized. Texts are spread over the
/// compute threads (`AGON_THREADS`, else the CPUs) when there are several;
/// one text at the caller's priority runs on the calling thread.
fn embed_batch(
    bert: &Loaded,
    texts: &[String],
    priority: Priority,
) -> Result<Vec<Vec<f32>>, ProviderError> {
    let encodings = bert
        .tokenizer
        .encode_batch(texts.to_vec(), true)
        .map_err(|e| inference(format!("tokenizing: {e}")))?;
    let threads = crate::llama::configured_threads()
        .min(encodings.len())
        .max(1);
    if threads == 1 && priority == Priority::Caller {
        return encodings
            .iter()
            .map(|e| embed_one(&bert.model, e))
            .collect();
    }
    // Thread `i` takes texts i, i + threads, …: neighbours differ in length
    // less than halves do.
    let mut vectors: Vec<Option<Result<Vec<f32>, ProviderError>>> = vec![None; encodings.len()];
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|first| {
                let encodings = &encodings;
                scope.spawn(move || {
                    if priority == Priority::Background {
                        crate::priority::lower_this_thread();
                    }
                    (first..encodings.len())
                        .step_by(threads)
                        .map(|i| (i, embed_one(&bert.model, &encodings[i])))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for worker in workers {
            // A panicked worker leaves its texts `None`: an error below.
            if let Ok(done) = worker.join() {
                done.into_iter().for_each(|(i, v)| vectors[i] = Some(v));
            }
        }
    });
    vectors
        .into_iter()
        .map(|v| v.unwrap_or_else(|| Err(inference("an embedding thread panicked"))))
        .collect()
}

/// One text's embedding: mean of its hidden states, L2-normalized.
fn embed_one(
    bert: &bert::Bert,
    encoding: &tokenizers::Encoding,
) -> Result<Vec<f32>, ProviderError> {
    let hidden = bert
        .forward(encoding.get_ids(), encoding.get_type_ids())
        .map_err(inference)?;
    let width = bert.hidden_size();
    let tokens = (hidden.len() / width).max(1);
    let mut mean = vec![0.0f32; width];
    for row in hidden.chunks_exact(width) {
        for (m, v) in mean.iter_mut().zip(row) {
            *m += v;
        }
    }
    for m in &mut mean {
        *m /= tokens as f32;
    }
    let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    for m in &mut mean {
        *m /= norm;
    }
    Ok(mean)
}

#[async_trait]
impl Embedder for LocalEmbedder {
    /// `input_type` is ignored: MiniLM is symmetric.
    async fn embed(
        &self,
        texts: &[String],
        _input_type: InputType,
    ) -> Result<Vec<Vec<f32>>, ProviderError> {
        self.embed_on_blocking_thread(texts, Priority::Caller).await
    }

    /// The same vectors as `embed`, computed on threads of their own at a
    /// lowered priority (nice 10: `src/priority.rs`).
    async fn embed_in_background(
        &self,
        texts: &[String],
        _input_type: InputType,
    ) -> Result<Vec<Vec<f32>>, ProviderError> {
        self.embed_on_blocking_thread(texts, Priority::Background)
            .await
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn max_batch(&self) -> usize {
        self.max_batch
    }

    fn model_id(&self) -> &str {
        &self.model_id
    }
}
