//! Embeddings over HTTP: Voyage-compatible (`input_type` query|document)
//! and OpenAI-compatible `/embeddings`. Inputs are split into batches of at
//! most `max_batch`; vectors come back in input order.

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::error::ProviderError;
use crate::http::{Endpoint, HttpConfig, bearer_headers};
use crate::secret::ApiKey;
use crate::traits::Embedder;
use crate::types::InputType;

/// The environment variable holding Voyage's key.
pub const VOYAGE_API_KEY: &str = "VOYAGE_API_KEY";

/// Which wire dialect the endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbeddingApi {
    /// Voyage: sends `input_type`.
    Voyage,
    /// OpenAI: no input type.
    OpenAi,
}

/// Settings of an [`HttpEmbedder`].
#[derive(Debug, Clone)]
pub struct EmbeddingConfig {
    /// Provider name ("voyage", "openai", …).
    pub provider: String,
    /// Wire dialect.
    pub api: EmbeddingApi,
    /// Base URL up to `/v1`.
    pub base_url: String,
    /// The key.
    pub api_key: Option<ApiKey>,
    /// The variable errors point to when the key is rejected.
    pub key_env: String,
    /// Model id.
    pub model: String,
    /// Vector length the model returns.
    pub dimensions: usize,
    /// Inputs per request.
    pub max_batch: usize,
    /// Timeouts, retries, concurrency.
    pub http: HttpConfig,
}

impl EmbeddingConfig {
    /// Voyage's `voyage-3` (1024-d, 128 inputs per request) with `VOYAGE_API_KEY` read through `lookup`.
    pub fn voyage(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ProviderError> {
        Ok(Self {
            provider: "voyage".to_owned(),
            api: EmbeddingApi::Voyage,
            base_url: "https://api.voyageai.com/v1".to_owned(),
            api_key: Some(ApiKey::from_lookup("voyage", VOYAGE_API_KEY, lookup)?),
            key_env: VOYAGE_API_KEY.to_owned(),
            model: "voyage-3".to_owned(),
            dimensions: 1_024,
            max_batch: 128,
            http: HttpConfig::default(),
        })
    }

    /// OpenAI's `text-embedding-3-small` (1536-d, 2048 inputs per request)
    /// with `OPENAI_API_KEY` and optional `OPENAI_BASE_URL` read through `lookup`.
    pub fn openai(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ProviderError> {
        Ok(Self {
            provider: "openai".to_owned(),
            api: EmbeddingApi::OpenAi,
            base_url: lookup(crate::openai::OPENAI_BASE_URL)
                .unwrap_or_else(|| "https://api.openai.com/v1".to_owned()),
            api_key: Some(ApiKey::from_lookup(
                "openai",
                crate::openai::OPENAI_API_KEY,
                &lookup,
            )?),
            key_env: crate::openai::OPENAI_API_KEY.to_owned(),
            model: "text-embedding-3-small".to_owned(),
            dimensions: 1_536,
            max_batch: 2_048,
            http: HttpConfig::default(),
        })
    }
}

/// An [`Embedder`] over HTTP.
#[derive(Debug, Clone)]
pub struct HttpEmbedder {
    endpoint: Endpoint,
    key: Option<ApiKey>,
    api: EmbeddingApi,
    model: String,
    dimensions: usize,
    max_batch: usize,
}

impl HttpEmbedder {
    /// A client for `config`.
    pub fn new(config: EmbeddingConfig) -> Result<Self, ProviderError> {
        if config.max_batch == 0 || config.dimensions == 0 {
            return Err(ProviderError::InvalidRequest {
                reason: format!(
                    "{}: max_batch and dimensions must be positive",
                    config.provider
                ),
            });
        }
        Ok(Self {
            endpoint: Endpoint::new(
                &config.provider,
                &config.base_url,
                &config.key_env,
                config.http,
            )?,
            key: config.api_key,
            api: config.api,
            model: config.model,
            dimensions: config.dimensions,
            max_batch: config.max_batch,
        })
    }

    async fn embed_batch(
        &self,
        batch: &[String],
        input_type: InputType,
    ) -> Result<Vec<Vec<f32>>, ProviderError> {
        let mut body = json!({"input": batch, "model": self.model});
        if self.api == EmbeddingApi::Voyage {
            body["input_type"] = json!(input_type.as_str());
        }
        let value = self
            .endpoint
            .post_json(
                "/embeddings",
                &bearer_headers(&self.endpoint.provider, self.key.as_ref())?,
                &body,
                &self.model,
            )
            .await?;
        let data = value.get("data").and_then(Value::as_array).ok_or_else(|| {
            self.endpoint
                .malformed("no `data` array in the embeddings response")
        })?;
        if data.len() != batch.len() {
            return Err(self.endpoint.malformed(format!(
                "{} embeddings for {} inputs",
                data.len(),
                batch.len()
            )));
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; batch.len()];
        for (position, item) in data.iter().enumerate() {
            let index = item
                .get("index")
                .and_then(Value::as_u64)
                .map_or(position, |i| i as usize);
            let vector: Vec<f32> = item
                .get("embedding")
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    self.endpoint
                        .malformed(format!("data[{position}] has no `embedding` array"))
                })?
                .iter()
                .map(|x| x.as_f64().map(|x| x as f32))
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    self.endpoint
                        .malformed(format!("data[{position}].embedding has a non-number"))
                })?;
            if vector.len() != self.dimensions {
                return Err(self.endpoint.malformed(format!(
                    "embedding {index} has {} dimensions, model `{}` is configured for {}",
                    vector.len(),
                    self.model,
                    self.dimensions
                )));
            }
            match out.get_mut(index) {
                Some(slot @ None) => *slot = Some(vector),
                _ => {
                    return Err(self.endpoint.malformed(format!(
                        "embedding index {index} is out of range or repeated"
                    )));
                }
            }
        }
        Ok(out.into_iter().flatten().collect())
    }
}

#[async_trait]
impl Embedder for HttpEmbedder {
    async fn embed(
        &self,
        texts: &[String],
        input_type: InputType,
    ) -> Result<Vec<Vec<f32>>, ProviderError> {
        crate::traits::check_embedding_inputs(&self.endpoint.provider, texts)?;
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.max_batch) {
            vectors.extend(self.embed_batch(batch, input_type).await?);
        }
        Ok(vectors)
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn max_batch(&self) -> usize {
        self.max_batch
    }

    fn model_id(&self) -> &str {
        &self.model
    }
}
