//! A BERT encoder (all-MiniLM-L6-v2 and its family) on candle's tensors:
//! the last layer's hidden states of a padded batch, which the embedder
//! pools. The same operations, in the same order, as candle-transformers'
//! `bert` model (itself Hugging Face's `BertModel`), so the vectors are the
//! ones it gave; written here so that one encoder does not bring a crate of
//! a hundred models into the build.

use candle_core::{Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder, embedding, layer_norm, linear};
use serde::Deserialize;

/// The activation between a layer's two feed-forward projections, as
/// `config.json`'s `hidden_act` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HiddenAct {
    /// The exact GELU (with the error function): BERT's and MiniLM's.
    Gelu,
    /// GELU's tanh approximation.
    #[serde(alias = "gelu_pytorch_tanh", alias = "gelu_approximate")]
    GeluNew,
    /// max(0, x).
    Relu,
}

/// What the encoder reads of a BERT `config.json` (other keys are ignored).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Config {
    /// Token embeddings.
    pub vocab_size: usize,
    /// Width of every hidden state (the embedding's dimensions).
    pub hidden_size: usize,
    /// Transformer layers.
    pub num_hidden_layers: usize,
    /// Attention heads per layer.
    pub num_attention_heads: usize,
    /// Feed-forward width.
    pub intermediate_size: usize,
    /// The feed-forward activation.
    pub hidden_act: HiddenAct,
    /// Positions the position embeddings cover.
    pub max_position_embeddings: usize,
    /// Token types (segments).
    pub type_vocab_size: usize,
    /// Layer norm epsilon.
    pub layer_norm_eps: f64,
}

struct Embeddings {
    words: Embedding,
    positions: Embedding,
    token_types: Embedding,
    norm: LayerNorm,
}

impl Embeddings {
    fn load(vb: VarBuilder, c: &Config) -> Result<Self> {
        Ok(Self {
            words: embedding(c.vocab_size, c.hidden_size, vb.pp("word_embeddings"))?,
            positions: embedding(
                c.max_position_embeddings,
                c.hidden_size,
                vb.pp("position_embeddings"),
            )?,
            token_types: embedding(
                c.type_vocab_size,
                c.hidden_size,
                vb.pp("token_type_embeddings"),
            )?,
            norm: layer_norm(c.hidden_size, c.layer_norm_eps, vb.pp("LayerNorm"))?,
        })
    }

    fn forward(&self, ids: &Tensor, types: &Tensor) -> Result<Tensor> {
        let (_, width) = ids.dims2()?;
        let summed = (self.words.forward(ids)? + self.token_types.forward(types)?)?;
        let positions = Tensor::arange(0u32, width as u32, ids.device())?;
        let summed = summed.broadcast_add(&self.positions.forward(&positions)?)?;
        self.norm.forward(&summed)
    }
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    act: HiddenAct,
    out: Linear,
    out_norm: LayerNorm,
    heads: usize,
    head_size: usize,
}

impl Layer {
    fn load(vb: VarBuilder, c: &Config) -> Result<Self> {
        let (hidden, eps) = (c.hidden_size, c.layer_norm_eps);
        let attention = vb.pp("attention");
        let own = attention.pp("self");
        Ok(Self {
            query: linear(hidden, hidden, own.pp("query"))?,
            key: linear(hidden, hidden, own.pp("key"))?,
            value: linear(hidden, hidden, own.pp("value"))?,
            attention_out: linear(hidden, hidden, attention.pp("output").pp("dense"))?,
            attention_norm: layer_norm(hidden, eps, attention.pp("output").pp("LayerNorm"))?,
            intermediate: linear(
                hidden,
                c.intermediate_size,
                vb.pp("intermediate").pp("dense"),
            )?,
            act: c.hidden_act,
            out: linear(c.intermediate_size, hidden, vb.pp("output").pp("dense"))?,
            out_norm: layer_norm(hidden, eps, vb.pp("output").pp("LayerNorm"))?,
            heads: c.num_attention_heads,
            head_size: hidden / c.num_attention_heads,
        })
    }

    /// `(batch, width, hidden)` → `(batch, width, heads, head)` as
    /// `(batch, heads, width, head)`, contiguous.
    fn by_head(&self, xs: &Tensor) -> Result<Tensor> {
        let (batch, width, _) = xs.dims3()?;
        xs.reshape((batch, width, self.heads, self.head_size))?
            .transpose(1, 2)?
            .contiguous()
    }

    fn forward(&self, hidden: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let query = self.by_head(&self.query.forward(hidden)?)?;
        let key = self.by_head(&self.key.forward(hidden)?)?;
        let value = self.by_head(&self.value.forward(hidden)?)?;
        let scores = (query.matmul(&key.t()?)? / (self.head_size as f64).sqrt())?;
        let probabilities =
            candle_nn::ops::softmax(&scores.broadcast_add(mask)?, candle_core::D::Minus1)?;
        let context = probabilities
            .matmul(&value)?
            .transpose(1, 2)?
            .contiguous()?
            .flatten_from(candle_core::D::Minus2)?;
        let attended = self
            .attention_norm
            .forward(&(self.attention_out.forward(&context)? + hidden)?)?;
        let intermediate = self.intermediate.forward(&attended)?;
        let intermediate = match self.act {
            HiddenAct::Gelu => intermediate.gelu_erf()?,
            HiddenAct::GeluNew => intermediate.gelu()?,
            HiddenAct::Relu => intermediate.relu()?,
        };
        self.out_norm
            .forward(&(self.out.forward(&intermediate)? + attended)?)
    }
}

/// A loaded BERT encoder.
pub struct Bert {
    embeddings: Embeddings,
    layers: Vec<Layer>,
}

impl Bert {
    /// The encoder's weights from `vb` (names as Hugging Face saves them,
    /// at the root or under `bert.`).
    pub fn load(vb: VarBuilder, config: &Config) -> Result<Self> {
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb
        };
        if config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            candle_core::bail!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size,
                config.num_attention_heads
            );
        }
        let encoder = vb.pp("encoder").pp("layer");
        Ok(Self {
            embeddings: Embeddings::load(vb.pp("embeddings"), config)?,
            layers: (0..config.num_hidden_layers)
                .map(|i| Layer::load(encoder.pp(i), config))
                .collect::<Result<_>>()?,
        })
    }

    /// The last layer's hidden states, `(batch, width, hidden)`, of token
    /// ids, token types and an attention mask (1 for a real token, 0 for
    /// padding), each `(batch, width)`.
    pub fn forward(&self, ids: &Tensor, types: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let mut hidden = self.embeddings.forward(ids, types)?;
        let dtype = hidden.dtype();
        // A padded key gets f32::MIN added to its score: no weight after the
        // softmax (Hugging Face's extended attention mask).
        let mask = mask.unsqueeze(1)?.unsqueeze(1)?.to_dtype(dtype)?;
        let mask = (mask.ones_like()? - &mask)?
            .broadcast_mul(&Tensor::new(f32::MIN, mask.device())?.to_dtype(dtype)?)?;
        for layer in &self.layers {
            hidden = layer.forward(&hidden, &mask)?;
        }
        Ok(hidden)
    }
}
