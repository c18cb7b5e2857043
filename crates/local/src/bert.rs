//! A BERT encoder (all-MiniLM-L6-v2 and its family) on plain f32 buffers:
//! the last layer's hidden states of one sequence, which the embedder
//! pools. Hugging Face's `BertModel` forward pass (embeddings, then per
//! layer: self-attention, add and norm, the feed-forward with GELU, add and
//! norm). The four projections of a layer run on the crate's int8 kernels
//! by default ([`Precision`]; [`crate::llama::Int8Matrix`]) or its tiled
//! f32 kernels ([`crate::llama::dense_products`]); attention's products on
//! [`crate::llama::row_products`]. One sequence at a time, unpadded:
//! a batch pays for no padding, and a text's vector does not depend on
//! the batch it came in.

use half::{bf16, f16};
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use crate::llama::{
    Int8Activations, Int8Matrix, dense_products, int8_fast, int8_products, row_products,
};

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

/// How a loaded encoder multiplies its projections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Precision {
    /// Weights quantized per output row to `i8`, activations per token to
    /// `u8` at each product: on a CPU with AVX-512 VNNI, about 3 times as many
    /// embeddings a second as [`Precision::F32`] (elsewhere portable Rust,
    /// with the same bits but slower than f32). A vector is within a cosine
    /// of 0.997 of the float64 reference's.
    Int8,
    /// Plain `f32` products: within f32 rounding of the float64 reference
    /// (their bits differ slightly between instruction sets).
    F32,
}

impl Precision {
    /// The faster of the two on this CPU: [`Precision::Int8`] where its
    /// vector kernel runs (AVX-512 VNNI, unless `AGON_CPU_KERNELS` asks
    /// for less), else [`Precision::F32`]. The embedder's default.
    pub fn fastest() -> Self {
        if int8_fast() {
            Precision::Int8
        } else {
            Precision::F32
        }
    }
}

/// A `Linear` layer's weights as the encoder multiplies them.
enum Projection {
    /// `outputs × inputs` values, one output per row.
    F32 { weight: Vec<f32>, inputs: usize },
    /// Quantized and packed.
    Int8(Int8Matrix),
}

/// A `Linear` layer.
struct Linear {
    projection: Projection,
    bias: Vec<f32>,
}

impl Linear {
    fn new(weight: Vec<f32>, bias: Vec<f32>, inputs: usize, precision: Precision) -> Self {
        let projection = match precision {
            Precision::F32 => Projection::F32 { weight, inputs },
            Precision::Int8 => Projection::Int8(Int8Matrix::quantize(&weight, inputs)),
        };
        Self { projection, bias }
    }

    /// `x` (rows of the layer's inputs) times the weights, plus the bias.
    fn forward(&self, x: &[f32]) -> Vec<f32> {
        let outputs = self.bias.len();
        match &self.projection {
            Projection::F32 { weight, inputs } => {
                let mut out = vec![0.0; x.len() / inputs * outputs];
                dense_products(x, weight, *inputs, &mut out);
                for row in out.chunks_exact_mut(outputs) {
                    for (o, b) in row.iter_mut().zip(&self.bias) {
                        *o += b;
                    }
                }
                out
            }
            Projection::Int8(weights) => {
                let activations = Int8Activations::quantize(x, weights);
                let mut out = vec![0.0; x.len() / weights.inputs() * outputs];
                int8_products(weights, &activations, &self.bias, &mut out);
                out
            }
        }
    }
}

/// A layer norm over each row of `weight.len()` values.
struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

impl Norm {
    fn forward(&self, x: &mut [f32]) {
        let n = self.weight.len();
        for row in x.chunks_exact_mut(n) {
            let mean = row.iter().sum::<f32>() / n as f32;
            let variance = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32;
            let scale = 1.0 / (variance + self.eps).sqrt();
            for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *v = (*v - mean) * scale * w + b;
            }
        }
    }
}

struct Layer {
    /// Query, key and value stacked: `3 · hidden` outputs.
    qkv: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    intermediate: Linear,
    out: Linear,
    out_norm: Norm,
}

/// A loaded BERT encoder.
pub struct Bert {
    words: Vec<f32>,
    positions: Vec<f32>,
    token_types: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    act: HiddenAct,
}

/// The weights of a safetensors file by name, as f32.
struct Weights<'a> {
    file: SafeTensors<'a>,
    prefix: &'static str,
    precision: Precision,
}

impl Weights<'_> {
    /// The tensor `name` (under the model's prefix), which must have `shape`.
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let full = format!("{}{name}", self.prefix);
        let view = self
            .file
            .tensor(&full)
            .map_err(|_| format!("tensor {full} is missing"))?;
        if view.shape() != shape {
            return Err(format!(
                "tensor {full} has shape {:?}, expected {shape:?}",
                view.shape()
            ));
        }
        let bytes = view.data();
        let values: Vec<f32> = match view.dtype() {
            Dtype::F32 => bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            Dtype::F16 => bytes
                .chunks_exact(2)
                .map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            Dtype::BF16 => bytes
                .chunks_exact(2)
                .map(|b| bf16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            other => return Err(format!("tensor {full} is {other:?}, not a float type")),
        };
        Ok(values)
    }

    fn linear(&self, name: &str, inputs: usize, outputs: usize) -> Result<Linear, String> {
        Ok(Linear::new(
            self.get(&format!("{name}.weight"), &[outputs, inputs])?,
            self.get(&format!("{name}.bias"), &[outputs])?,
            inputs,
            self.precision,
        ))
    }

    /// A layer norm, its parameters named `weight`/`bias` or (older
    /// checkpoints) `gamma`/`beta`.
    fn norm(&self, name: &str, size: usize, eps: f32) -> Result<Norm, String> {
        let named = |new: &str, old: &str| {
            self.get(&format!("{name}.{new}"), &[size])
                .or_else(|_| self.get(&format!("{name}.{old}"), &[size]))
        };
        Ok(Norm {
            weight: named("weight", "gamma")?,
            bias: named("bias", "beta")?,
            eps,
        })
    }
}

impl Bert {
    /// The encoder from the bytes of a safetensors file (names as Hugging
    /// Face saves them, at the root or under `bert.`), its projections
    /// multiplied at `precision`. An error names the tensor that is missing
    /// or has the wrong shape or type.
    pub fn load(bytes: &[u8], c: &Config, precision: Precision) -> Result<Self, String> {
        let file =
            SafeTensors::deserialize(bytes).map_err(|e| format!("not a safetensors file: {e}"))?;
        let prefix = if file
            .tensor("bert.embeddings.word_embeddings.weight")
            .is_ok()
        {
            "bert."
        } else {
            ""
        };
        let w = Weights {
            file,
            prefix,
            precision,
        };
        let (h, eps) = (c.hidden_size, c.layer_norm_eps as f32);
        if c.num_attention_heads == 0 || !h.is_multiple_of(c.num_attention_heads) {
            return Err(format!(
                "hidden_size {h} is not a multiple of num_attention_heads {}",
                c.num_attention_heads
            ));
        }
        let layer = |i: usize| -> Result<Layer, String> {
            let at = format!("encoder.layer.{i}");
            let stacked = |suffix: &str, size: usize| -> Result<Vec<f32>, String> {
                let mut values = Vec::with_capacity(3 * size);
                for p in ["query", "key", "value"] {
                    let name = format!("{at}.attention.self.{p}.{suffix}");
                    let shape: &[usize] = if suffix == "weight" { &[h, h] } else { &[h] };
                    values.extend(w.get(&name, shape)?);
                }
                Ok(values)
            };
            Ok(Layer {
                qkv: Linear::new(stacked("weight", h * h)?, stacked("bias", h)?, h, precision),
                attention_out: w.linear(&format!("{at}.attention.output.dense"), h, h)?,
                attention_norm: w.norm(&format!("{at}.attention.output.LayerNorm"), h, eps)?,
                intermediate: w.linear(
                    &format!("{at}.intermediate.dense"),
                    h,
                    c.intermediate_size,
                )?,
                out: w.linear(&format!("{at}.output.dense"), c.intermediate_size, h)?,
                out_norm: w.norm(&format!("{at}.output.LayerNorm"), h, eps)?,
            })
        };
        Ok(Self {
            words: w.get("embeddings.word_embeddings.weight", &[c.vocab_size, h])?,
            positions: w.get(
                "embeddings.position_embeddings.weight",
                &[c.max_position_embeddings, h],
            )?,
            token_types: w.get(
                "embeddings.token_type_embeddings.weight",
                &[c.type_vocab_size, h],
            )?,
            embedding_norm: w.norm("embeddings.LayerNorm", h, eps)?,
            layers: (0..c.num_hidden_layers)
                .map(layer)
                .collect::<Result<_, _>>()?,
            hidden: h,
            heads: c.num_attention_heads,
            act: c.hidden_act,
        })
    }

    /// Width of a hidden state.
    pub fn hidden_size(&self) -> usize {
        self.hidden
    }

    /// The last layer's hidden states of one sequence, `ids.len() × hidden`
    /// values, from its token ids and token types (segments).
    pub fn forward(&self, ids: &[u32], types: &[u32]) -> Result<Vec<f32>, String> {
        let h = self.hidden;
        let width = ids.len();
        if width * h > self.positions.len() {
            return Err(format!("{width} tokens exceed the model's positions"));
        }
        let mut x = vec![0.0f32; width * h];
        for (p, ((row, &id), &kind)) in x.chunks_exact_mut(h).zip(ids).zip(types).enumerate() {
            let word = self
                .words
                .get(id as usize * h..(id as usize + 1) * h)
                .ok_or_else(|| format!("token id {id} is outside the vocabulary"))?;
            let kind = self
                .token_types
                .get(kind as usize * h..(kind as usize + 1) * h)
                .ok_or_else(|| format!("token type {kind} is unknown"))?;
            let position = &self.positions[p * h..(p + 1) * h];
            for (((v, a), b), c) in row.iter_mut().zip(word).zip(kind).zip(position) {
                *v = a + b + c;
            }
        }
        self.embedding_norm.forward(&mut x);
        for layer in &self.layers {
            x = self.layer(layer, x, width);
        }
        Ok(x)
    }

    fn layer(&self, layer: &Layer, x: Vec<f32>, width: usize) -> Vec<f32> {
        let h = self.hidden;
        let head = h / self.heads;
        let qkv = layer.qkv.forward(&x);
        let mut context = vec![0.0f32; width * h];
        let scale = 1.0 / (head as f32).sqrt();
        let (mut q, mut kt, mut v) = (
            vec![0.0f32; width * head],
            vec![0.0f32; head * width],
            vec![0.0f32; width * head],
        );
        let mut scores = vec![0.0f32; width * width];
        let mut mixed = vec![0.0f32; width * head];
        for n in 0..self.heads {
            for (t, row) in qkv.chunks_exact(3 * h).enumerate() {
                let at = n * head;
                q[t * head..(t + 1) * head].copy_from_slice(&row[at..at + head]);
                for (d, &value) in row[h + at..h + at + head].iter().enumerate() {
                    kt[d * width + t] = value;
                }
                v[t * head..(t + 1) * head].copy_from_slice(&row[2 * h + at..2 * h + at + head]);
            }
            row_products(&q, &kt, head, &mut scores);
            for row in scores.chunks_exact_mut(width) {
                softmax_scaled(row, scale);
            }
            row_products(&scores, &v, width, &mut mixed);
            for (t, row) in mixed.chunks_exact(head).enumerate() {
                context[t * h + n * head..t * h + (n + 1) * head].copy_from_slice(row);
            }
        }
        let mut attended = layer.attention_out.forward(&context);
        add_into(&mut attended, &x);
        layer.attention_norm.forward(&mut attended);
        let mut inner = layer.intermediate.forward(&attended);
        for v in &mut inner {
            *v = self.act.apply(*v);
        }
        let mut out = layer.out.forward(&inner);
        add_into(&mut out, &attended);
        layer.out_norm.forward(&mut out);
        out
    }
}

impl HiddenAct {
    fn apply(self, v: f32) -> f32 {
        match self {
            HiddenAct::Gelu => 0.5 * v * (1.0 + erf(v * std::f32::consts::FRAC_1_SQRT_2)),
            HiddenAct::GeluNew => {
                let inner = (2.0 / std::f32::consts::PI).sqrt() * (v + 0.044715 * v * v * v);
                0.5 * v * (1.0 + inner.tanh())
            }
            HiddenAct::Relu => v.max(0.0),
        }
    }
}

/// The error function in single precision, without a branch or a call
/// (so a loop over a layer's values vectorizes): Eigen's rational
/// approximation (`generic_fast_erf_float`), odd numerator over even
/// denominator in `x²` on `[-4, 4]`, where `erf` is ±1 in f32 beyond.
/// Within 5e-7 of the exact value everywhere (the test below); it replaced
/// `libm::erff`, whose calls (and the `expf` inside them) took 17 % of an
/// embedding's time.
fn erf(x: f32) -> f32 {
    const ALPHA: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.954_600_1e-3,
        -1.609_603_3e-2,
    ];
    const BETA: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329_2e-3,
        -1.426_473_9e-2,
    ];
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    // Plain products and sums: `mul_add` is a library call where the
    // build may not assume FMA.
    let p = ALPHA[1..].iter().fold(ALPHA[0], |p, &a| p * x2 + a);
    let q = BETA[1..].iter().fold(BETA[0], |q, &b| q * x2 + b);
    x * p / q
}

/// `row ← softmax(scale · row)`.
fn softmax_scaled(row: &mut [f32], scale: f32) {
    let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)) * scale;
    let mut sum = 0.0f32;
    for v in row.iter_mut() {
        *v = (*v * scale - max).exp();
        sum += *v;
    }
    for v in row.iter_mut() {
        *v /= sum;
    }
}

fn add_into(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

#[cfg(test)]
mod tests {
    use super::erf;

    /// The approximation against the exact error function (in f64) over
    /// [-6, 6] in steps of 1e-4, the tails clamped to ±1 included.
    #[test]
    fn erf_is_within_5e_7_of_the_exact_value() {
        let mut worst = (0.0f64, 0.0f32);
        for i in -60_000..=60_000 {
            let x = i as f32 * 1e-4;
            let error = (f64::from(erf(x)) - libm::erf(f64::from(x))).abs();
            if error > worst.0 {
                worst = (error, x);
            }
        }
        assert!(worst.0 < 5e-7, "erf({}) is off by {:e}", worst.1, worst.0);
        assert_eq!(erf(0.0), 0.0);
        assert_eq!(erf(-9.0), -erf(9.0));
    }
}
