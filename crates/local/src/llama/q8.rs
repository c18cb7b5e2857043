//! Q8 matrices (blocks of 32 `i8` with one `f32` scale, the values of
//! GGUF's Q8_0) and the quantization of activations before each product.

use std::ops::Range;

use half::f16;

use super::kernels::packed::{self, Activations, PackedMatrix};
use super::kernels::{self, BLOCK, Q8Rows};
use super::pool;

/// A row-major matrix quantized in blocks of 32 along its rows; a weight
/// matrix may be packed for the CPU's kernel instead ([`Q8Matrix::pack`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Q8Matrix {
    quants: Vec<i8>,
    scales: Vec<f32>,
    k: usize,
    /// The rows packed for the SIMD kernels; then `quants` and `scales`
    /// are empty.
    packed: Option<PackedMatrix>,
}

impl Q8Matrix {
    /// Quantizes `rows × k` values (`k` a multiple of 32) the way GGUF's
    /// Q8_0 does: per block `d = max|x| / 127` (stored as f16), `q = round(x / d)`.
    pub fn quantize(values: &[f32], k: usize) -> Self {
        let mut matrix = Self {
            quants: vec![0; values.len()],
            scales: vec![0.0; values.len() / BLOCK],
            k,
            packed: None,
        };
        kernels::quantize(values, &mut matrix.quants, &mut matrix.scales);
        matrix
    }

    /// From GGUF Q8_0 blocks (34 bytes: f16 scale then 32 `i8`), taken as is.
    pub fn from_q8_0_blocks(data: &[u8], k: usize) -> Self {
        let blocks = data.len() / 34;
        let mut quants = Vec::with_capacity(blocks * BLOCK);
        let mut scales = Vec::with_capacity(blocks);
        for block in data.chunks_exact(34) {
            scales.push(f16::from_le_bytes([block[0], block[1]]).to_f32());
            quants.extend(block[2..].iter().map(|&b| b as i8));
        }
        Self {
            quants,
            scales,
            k,
            packed: None,
        }
    }

    /// Packs the rows for the packed kernels when this CPU runs one
    /// (AVX2 or AVX-512 VNNI; [`packed`]), dropping the row-major copy;
    /// otherwise nothing changes. For weights (activations are quantized
    /// afresh at each step).
    pub fn pack(&mut self) {
        if self.packed.is_none() && packed::available() {
            self.packed = Some(PackedMatrix::pack(&self.quants, &self.scales, self.k));
            self.quants = Vec::new();
            self.scales = Vec::new();
        }
    }

    /// Stacks matrices with the same row length (for fused projections),
    /// before they are packed.
    pub fn stack(parts: &[Self]) -> Self {
        debug_assert!(parts.iter().all(|p| p.packed.is_none()));
        let k = parts.first().map_or(0, |p| p.k);
        Self {
            quants: parts
                .iter()
                .flat_map(|p| p.quants.iter().copied())
                .collect(),
            scales: parts
                .iter()
                .flat_map(|p| p.scales.iter().copied())
                .collect(),
            k,
            packed: None,
        }
    }

    /// Rows `tokens` of an activation matrix (not packed): their values
    /// and their scales.
    pub fn activation_rows(&self, tokens: Range<usize>) -> (&[i8], &[f32]) {
        let blocks = self.k / BLOCK;
        (
            &self.quants[tokens.start * self.k..tokens.end * self.k],
            &self.scales[tokens.start * blocks..tokens.end * blocks],
        )
    }

    /// Values per row.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        match &self.packed {
            Some(packed) => packed.rows(),
            None => self.quants.len().checked_div(self.k).unwrap_or(0),
        }
    }

    /// Row `r` as floats, written to `out` (`k` values).
    pub fn dequantize_row(&self, r: usize, out: &mut [f32]) {
        if let Some(packed) = &self.packed {
            packed.dequantize_row(r, out);
            return;
        }
        let blocks = self.k / BLOCK;
        let quants = &self.quants[r * self.k..(r + 1) * self.k];
        let scales = &self.scales[r * blocks..(r + 1) * blocks];
        for ((out, q), d) in out
            .chunks_exact_mut(BLOCK)
            .zip(quants.chunks_exact(BLOCK))
            .zip(scales)
        {
            for (o, &q) in out.iter_mut().zip(q) {
                *o = f32::from(q) * d;
            }
        }
    }

    fn view(&self, rows: std::ops::Range<usize>) -> Q8Rows<'_> {
        let blocks = self.k / BLOCK;
        Q8Rows {
            quants: &self.quants[rows.start * self.k..rows.end * self.k],
            scales: &self.scales[rows.start * blocks..rows.end * blocks],
            k: self.k,
        }
    }

    /// `out[t][r] = self[r] · x[t]`: `out` holds `x.rows() × self.rows()`
    /// values, token-major. Runs on the shared thread pool: split by rows
    /// for up to [`FEW_TOKENS`] activation rows (decoding, a draft's
    /// verification: reading the weights is most of their cost, and each
    /// weight row is then read once for all of them), by activation rows
    /// otherwise (each thread then streams the weights once for its tokens).
    /// Every split gives the same bits.
    pub fn matmul(&self, x: &Q8Matrix, out: &mut [f32]) {
        match &self.packed {
            Some(packed) => {
                let mut offset = Vec::new();
                packed::offset_activations(&x.quants, &mut offset);
                let activations = |t: Range<usize>| {
                    let (quants, scales) = x.activation_rows(t.clone());
                    Activations {
                        quants,
                        offset: offset.get(t.start * x.k..t.end * x.k).unwrap_or_default(),
                        scales,
                        k: x.k,
                    }
                };
                split(self.rows(), x.rows(), out, |rows, tokens, part, stride| {
                    packed::matmul(
                        packed.view(rows.start, rows.end),
                        activations(tokens),
                        part,
                        stride,
                    );
                });
            }
            None => split(self.rows(), x.rows(), out, |rows, tokens, part, stride| {
                kernels::matmul(self.view(rows), x.view(tokens), part, stride);
            }),
        }
    }
}

/// Spreads a product of a `rows`-row weight matrix with `tokens`
/// activation rows over the pool (see [`Q8Matrix::matmul`]):
/// `product(rows, tokens, out, stride)` writes `out[t * stride + r]` for
/// the rows and tokens given (relative to their starts); the rows of a
/// piece start at a multiple of 16.
pub(crate) fn split(
    rows: usize,
    tokens: usize,
    out: &mut [f32],
    product: impl Fn(Range<usize>, Range<usize>, &mut [f32], usize) + Sync,
) {
    debug_assert_eq!(out.len(), rows * tokens);
    let chunk = rows
        .div_ceil(pool::threads() * 4)
        .next_multiple_of(16)
        .max(16);
    if tokens == 1 {
        pool::for_each_chunk(out, chunk, |start, part| {
            product(start..start + part.len(), 0..1, part, 0);
        });
    } else if tokens <= FEW_TOKENS {
        // Piece p holds rows `p * chunk..` for every token, token-major.
        let piece = chunk * tokens;
        let mut pieces = vec![0.0; rows.div_ceil(chunk) * piece];
        pool::for_each_chunk(&mut pieces, piece, |start, part| {
            let first = start / tokens;
            let end = (first + chunk).min(rows);
            product(first..end, 0..tokens, part, chunk);
        });
        for (p, part) in pieces.chunks_exact(piece).enumerate() {
            let first = p * chunk;
            let n = (first + chunk).min(rows) - first;
            for (t, row) in part.chunks_exact(chunk).enumerate() {
                out[t * rows + first..t * rows + first + n].copy_from_slice(&row[..n]);
            }
        }
    } else {
        let per_thread = tokens.div_ceil(pool::threads());
        pool::for_each_chunk(out, per_thread * rows, |start, part| {
            let first = start / rows;
            let count = part.len() / rows;
            product(0..rows, first..first + count, part, rows);
        });
    }
}

/// Most activation rows multiplied with the weights split by rows (see
/// [`Q8Matrix::matmul`]).
pub(crate) const FEW_TOKENS: usize = 16;

/// Quantizes activation rows of `k` values into a reusable matrix.
pub(crate) fn quantize_rows(values: &[f32], k: usize, into: &mut Q8Matrix) {
    into.k = k;
    into.quants.resize(values.len(), 0);
    into.scales.resize(values.len() / BLOCK, 0.0);
    kernels::quantize(values, &mut into.quants, &mut into.scales);
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::kernels::{bits, pseudo_random};

    fn dense_dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn a_prompt_gives_the_bits_of_its_tokens_one_at_a_time() {
        // The row-major layout's products (portable Rust).
        let (rows, k, tokens) = (19, 576, 11);
        let w = Q8Matrix::quantize(&pseudo_random(rows * k, 5), k);
        let x = Q8Matrix::quantize(&pseudo_random(tokens * k, 6), k);
        let mut together = vec![0.0; rows * tokens];
        kernels::matmul(w.view(0..rows), x.view(0..tokens), &mut together, rows);
        for t in 0..tokens {
            let mut alone = vec![0.0; rows];
            kernels::matmul(w.view(0..rows), x.view(t..t + 1), &mut alone, 0);
            assert_eq!(
                bits(&together[t * rows..(t + 1) * rows]),
                bits(&alone),
                "token {t}"
            );
        }
    }

    #[test]
    fn every_split_of_the_work_gives_the_same_bits() {
        // 1, a few (split by weight rows) and many tokens (split by
        // tokens), against each token's product alone; 150 rows: pieces of
        // 16 rows and a shorter last one.
        let (rows, k) = (150, 64);
        let w = Q8Matrix::quantize(&pseudo_random(rows * k, 7), k);
        for tokens in [1, 3, FEW_TOKENS, FEW_TOKENS + 5] {
            let x = Q8Matrix::quantize(&pseudo_random(tokens * k, 8), k);
            let mut out = vec![f32::NAN; rows * tokens];
            w.matmul(&x, &mut out);
            for t in 0..tokens {
                let mut alone = vec![0.0; rows];
                kernels::matmul(w.view(0..rows), x.view(t..t + 1), &mut alone, 0);
                assert_eq!(
                    bits(&out[t * rows..(t + 1) * rows]),
                    bits(&alone),
                    "{tokens} tokens, token {t}"
                );
            }
        }
    }

    #[test]
    fn every_split_of_a_packed_matrix_gives_the_same_bits() {
        // As above, on the packed kernel where the CPU runs it.
        let (rows, k) = (150, 64);
        let plain = Q8Matrix::quantize(&pseudo_random(rows * k, 7), k);
        let mut w = plain.clone();
        w.pack();
        if w.packed.is_none() {
            eprintln!("no AVX2 on this CPU: nothing is packed");
            return;
        }
        let mut row = vec![0.0; k];
        let mut plain_row = vec![0.0; k];
        for r in [0, 9, rows - 1] {
            w.dequantize_row(r, &mut row);
            plain.dequantize_row(r, &mut plain_row);
            assert_eq!(bits(&row), bits(&plain_row), "row {r}");
        }
        let mut one = Q8Matrix::default();
        for tokens in [1, 3, FEW_TOKENS, FEW_TOKENS + 5] {
            let values = pseudo_random(tokens * k, 8);
            let x = Q8Matrix::quantize(&values, k);
            let mut out = vec![f32::NAN; rows * tokens];
            w.matmul(&x, &mut out);
            let mut reference = vec![0.0; rows * tokens];
            plain.matmul(&x, &mut reference);
            for t in 0..tokens {
                quantize_rows(&values[t * k..(t + 1) * k], k, &mut one);
                let mut alone = vec![0.0; rows];
                w.matmul(&one, &mut alone);
                assert_eq!(
                    bits(&out[t * rows..(t + 1) * rows]),
                    bits(&alone),
                    "{tokens} tokens, token {t}"
                );
                for (a, b) in alone.iter().zip(&reference[t * rows..]) {
                    assert!((a - b).abs() <= 1e-4 * b.abs().max(1.0), "{a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn quantized_products_track_the_float_products() {
        let (rows, k) = (64, 1536);
        let dense_w = pseudo_random(rows * k, 3);
        let w = Q8Matrix::quantize(&dense_w, k);
        for tokens in [1, 7] {
            let dense_x = pseudo_random(tokens * k, 4);
            let x = Q8Matrix::quantize(&dense_x, k);
            let mut out = vec![0.0; rows * tokens];
            w.matmul(&x, &mut out);
            for t in 0..tokens {
                for r in 0..rows {
                    let exact =
                        dense_dot(&dense_w[r * k..(r + 1) * k], &dense_x[t * k..(t + 1) * k]);
                    let got = out[t * rows + r];
                    // Two 8-bit roundings over 1536 terms of size ~1/3.
                    assert!(
                        (got - exact).abs() < 0.25,
                        "row {r} token {t}: {got} vs {exact}"
                    );
                }
            }
        }
    }

    #[test]
    fn q8_0_blocks_are_read_as_stored() {
        let mut data = Vec::new();
        for block in 0..2u8 {
            data.extend(f16::from_f32(0.5 * f32::from(block + 1)).to_le_bytes());
            data.extend((0..32).map(|i| (i as i8 - 16) as u8));
        }
        let m = Q8Matrix::from_q8_0_blocks(&data, 64);
        let mut row = vec![0.0; 64];
        m.dequantize_row(0, &mut row);
        assert_eq!(row[0], -8.0);
        assert_eq!(row[31], 7.5);
        assert_eq!(row[32], -16.0);
        assert_eq!(m.rows(), 1);
    }

    #[test]
    fn zero_blocks_quantize_to_zero() {
        let m = Q8Matrix::quantize(&[0.0; 64], 32);
        let mut row = vec![1.0; 32];
        m.dequantize_row(1, &mut row);
        assert!(row.iter().all(|&v| v == 0.0));
    }
}
