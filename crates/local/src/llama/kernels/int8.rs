//! Int8 products for the sentence embedder's BERT: `out[t][r] = x[t] · w[r]
//! + bias[r]` with the weights quantized once per output row (symmetric,
//! `i8`, `w ≈ s_w · q_w`) and the activations per token at each product
//! (asymmetric, `u8` with a zero point, `x ≈ s_x · (q_x − z)`), so that a
//! product is one exact `i32` sum over the whole row:
//! `x · w ≈ s_x · s_w · (Σ q_x·q_w − z · Σ q_w)`.
//!
//! An embedding is dominated by these products (each layer's four
//! projections); on this crate's AVX-512 VNNI CPUs `vpdpbusd` multiplies
//! 64 `u8 × i8` pairs an instruction, 3.4 times the `f32` fused
//! multiply-adds of the same width, and the exact integer sums need no
//! per-block conversion. The weights are packed sixteen rows side by side
//! (a 512-bit vector's lanes): step `s` of a group holds values
//! `4s..4s + 4` of each row, row `i` at bytes `4i..4i + 4`, which one
//! `vpdpbusd` multiplies by the same four activation bytes broadcast.
//!
//! Two builds: AVX-512 VNNI (tiles of up to eight tokens against one
//! group) and portable Rust (the same packed layout, one token and group at
//! a time). Both give the same bits: the sums are exact integers, and the
//! conversion, scaling and bias run in the same order with no fused
//! multiply-add.

use super::Isa;

/// Weight rows side by side in a packed group (a 512-bit vector's `i32`
/// lanes).
pub(crate) const LANES: usize = 16;

/// Values a step of the packed layout holds per row (a `vpdpbusd` lane's
/// four byte pairs).
const STEP: usize = 4;

/// A weight matrix quantized per row and packed in groups of [`LANES`]
/// rows (the last group padded with zero rows; each row padded with zeros
/// to a multiple of four values).
#[derive(Debug, Clone)]
pub(crate) struct Int8Matrix {
    /// Per group and step, `LANES × 4` bytes: row `i`'s values at `4i`.
    packed: Vec<i8>,
    /// Per row (padded to whole groups), `s_w = max|w| / 127`.
    scales: Vec<f32>,
    /// Per row (padded to whole groups), `Σ q_w`.
    sums: Vec<i32>,
    rows: usize,
    /// Values per row as given.
    inputs: usize,
    /// Values per row padded to a multiple of [`STEP`].
    k: usize,
}

impl Int8Matrix {
    /// Quantizes `weights` (rows of `inputs` values, one output per row, as
    /// PyTorch's `Linear` stores them): per row `s_w = max|w| / 127`,
    /// `q = round(w / s_w)` (half away from zero).
    ///
    /// # Panics
    /// If `inputs` is 0 or does not divide the weights (a bug in the
    /// caller).
    pub fn quantize(weights: &[f32], inputs: usize) -> Self {
        assert!(
            inputs > 0 && weights.len().is_multiple_of(inputs),
            "int8 matrix: rows must be whole"
        );
        let rows = weights.len() / inputs;
        let k = inputs.next_multiple_of(STEP);
        let steps = k / STEP;
        let groups = rows.div_ceil(LANES);
        let mut matrix = Self {
            packed: vec![0; groups * steps * LANES * STEP],
            scales: vec![0.0; groups * LANES],
            sums: vec![0; groups * LANES],
            rows,
            inputs,
            k,
        };
        for (r, row) in weights.chunks_exact(inputs).enumerate() {
            let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
            let scale = max / 127.0;
            let inverse = if scale == 0.0 { 0.0 } else { 1.0 / scale };
            matrix.scales[r] = scale;
            let (group, lane) = (r / LANES, r % LANES);
            for (i, &v) in row.iter().enumerate() {
                // In [-127, 127] by construction of `scale`.
                let q = (v * inverse).round() as i8;
                matrix.sums[r] += i32::from(q);
                let step = group * steps + i / STEP;
                matrix.packed[(step * LANES + lane) * STEP + i % STEP] = q;
            }
        }
        matrix
    }

    /// Values per row (inputs).
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    fn steps(&self) -> usize {
        self.k / STEP
    }
}

/// Activation rows quantized per row: `x ≈ s_x · (q − z)`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Int8Activations {
    /// `tokens × k` values (`k` the weights' padded row length; padding 0).
    quants: Vec<u8>,
    /// Per token, `s_x`.
    scales: Vec<f32>,
    /// Per token, the zero point `z`.
    zeros: Vec<i32>,
    k: usize,
}

impl Int8Activations {
    /// Quantizes rows of `inputs` values for products with `weights`: per
    /// row, the range `[min(x, 0), max(x, 0)]` spread over 0..=255
    /// (`s_x = (max − min) / 255`, `z = round(−min / s_x)`,
    /// `q = ⌊x / s_x + z + ½⌋` clamped to 0..=255); zero is represented
    /// exactly. Plain arithmetic the compiler vectorizes (no call to the C
    /// library's `roundf`, which took a third of an embedding's time).
    ///
    /// # Panics
    /// If the rows are not `weights.inputs()` values long (a bug in the
    /// caller).
    pub fn quantize(values: &[f32], weights: &Int8Matrix) -> Self {
        let inputs = weights.inputs;
        assert!(
            values.len().is_multiple_of(inputs),
            "int8 activations: rows must be whole"
        );
        let tokens = values.len() / inputs;
        let mut quantized = Self {
            quants: vec![0; tokens * weights.k],
            scales: Vec::with_capacity(tokens),
            zeros: Vec::with_capacity(tokens),
            k: weights.k,
        };
        let vector = fast();
        for (row, quants) in values
            .chunks_exact(inputs)
            .zip(quantized.quants.chunks_exact_mut(weights.k))
        {
            let (min, max) = range_with_zero(row);
            let scale = (max - min) / 255.0;
            let inverse = if scale == 0.0 { 0.0 } else { 1.0 / scale };
            // `−min · inverse` is in [0, 255]: `+ ½` then truncation rounds.
            let zero = (-min * inverse + 0.5) as i32;
            let shift = zero as f32 + 0.5;
            match vector {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `fast` (`vnni_runs_on`) checked
                // AVX-512 F.
                true => unsafe { x86::quantize_row(row, inverse, shift, quants) },
                _ => quantize_row(row, inverse, shift, quants),
            }
            quantized.scales.push(scale);
            quantized.zeros.push(zero);
        }
        quantized
    }

    fn tokens(&self) -> usize {
        self.scales.len()
    }
}

/// Whether this CPU runs a vector int8 kernel (AVX-512 VNNI, as the
/// crate's instruction set choice has it): elsewhere the portable build
/// runs, several times slower than the f32 kernels. Where it runs, the
/// activations are quantized with AVX-512 F too (the same bytes as the
/// portable loop).
pub(crate) fn fast() -> bool {
    vnni_runs_on(super::isa())
}

/// Whether the VNNI kernel runs under instruction set `isa`: the crate
/// chose AVX-512 VNNI, and the CPU has AVX-512 F (every VNNI CPU does;
/// checked rather than assumed, as the f32 kernels check it).
fn vnni_runs_on(isa: Isa) -> bool {
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512Vnni {
        return is_x86_feature_detected!("avx512f");
    }
    let _ = isa;
    false
}

/// `q = trunc(clamp(x · inverse + shift, 0, 255))` for each value of a
/// row, in portable Rust (a multiply, then an add: never fused).
fn quantize_row(row: &[f32], inverse: f32, shift: f32, quants: &mut [u8]) {
    for (q, &v) in quants.iter_mut().zip(row) {
        *q = (v * inverse + shift).clamp(0.0, 255.0) as u8;
    }
}

/// `(min(row, 0), max(row, 0))`, sixteen lanes at a time (which the
/// compiler vectorizes; a fold through `f32::min` does not).
fn range_with_zero(row: &[f32]) -> (f32, f32) {
    let (mut lo, mut hi) = ([0f32; LANES], [0f32; LANES]);
    let mut chunks = row.chunks_exact(LANES);
    for chunk in &mut chunks {
        for ((l, h), &v) in lo.iter_mut().zip(hi.iter_mut()).zip(chunk) {
            *l = if v < *l { v } else { *l };
            *h = if v > *h { v } else { *h };
        }
    }
    let fold = |acc: (f32, f32), &v: &f32| (acc.0.min(v), acc.1.max(v));
    let tail = chunks.remainder().iter().fold((0f32, 0f32), fold);
    let lo = lo.iter().fold(tail.0, |m, &v| m.min(v));
    let hi = hi.iter().fold(tail.1, |m, &v| m.max(v));
    (lo, hi)
}

/// `out[t * w.rows() + r] = x[t] · w[r] + bias[r]` on the best kernel this
/// CPU runs.
///
/// # Panics
/// If the shapes disagree (a bug in the caller).
pub(crate) fn products(w: &Int8Matrix, x: &Int8Activations, bias: &[f32], out: &mut [f32]) {
    products_on(super::isa(), w, x, bias, out);
}

/// [`products`] on instruction set `isa` (AVX2 runs the portable build).
pub(crate) fn products_on(
    isa: Isa,
    w: &Int8Matrix,
    x: &Int8Activations,
    bias: &[f32],
    out: &mut [f32],
) {
    assert!(
        x.k == w.k && x.quants.len() == x.tokens() * x.k && x.zeros.len() == x.tokens(),
        "int8 products: activations not quantized for these weights"
    );
    assert_eq!(bias.len(), w.rows, "int8 products: one bias per row");
    assert_eq!(out.len(), x.tokens() * w.rows, "int8 products: output size");
    #[cfg(target_arch = "x86_64")]
    if vnni_runs_on(isa) {
        // SAFETY: `Isa::Avx512Vnni` is only chosen on CPUs with AVX-512
        // VNNI, and `vnni_runs_on` checked AVX-512 F; shapes checked above.
        unsafe { x86::products_vnni(w, x, bias, out) };
        return;
    }
    products_portable(w, x, bias, out);
}

/// One output from its exact sum: `(Σ q_x·q_w − z · Σ q_w) · (s_x · s_w) +
/// bias`, each step rounded as the vector build rounds it.
#[inline(always)]
fn finish(sum: i32, zero: i32, w_sum: i32, x_scale: f32, w_scale: f32, bias: f32) -> f32 {
    (sum - zero * w_sum) as f32 * (x_scale * w_scale) + bias
}

/// The portable build: one token against one group at a time.
fn products_portable(w: &Int8Matrix, x: &Int8Activations, bias: &[f32], out: &mut [f32]) {
    let group_bytes = w.steps() * LANES * STEP;
    for (t, x_row) in x.quants.chunks_exact(x.k).enumerate() {
        for (g, group) in w.packed.chunks_exact(group_bytes).enumerate() {
            let mut sums = [0i32; LANES];
            for (step, four) in group
                .chunks_exact(LANES * STEP)
                .zip(x_row.chunks_exact(STEP))
            {
                for (sum, lane) in sums.iter_mut().zip(step.chunks_exact(STEP)) {
                    for (&q, &a) in lane.iter().zip(four) {
                        *sum += i32::from(a) * i32::from(q);
                    }
                }
            }
            let first = g * LANES;
            for (i, &sum) in sums.iter().enumerate().take(w.rows - first) {
                let r = first + i;
                out[t * w.rows + r] = finish(
                    sum,
                    x.zeros[t],
                    w.sums[r],
                    x.scales[t],
                    w.scales[r],
                    bias[r],
                );
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{Int8Activations, Int8Matrix, LANES, STEP};

    /// [`super::quantize_row`] sixteen values at a time (a multiply, then
    /// an add; `max` with 0 first, so a NaN gives 0 as `as u8` does); the
    /// tail in portable Rust.
    #[target_feature(enable = "avx512f")]
    pub(super) fn quantize_row(row: &[f32], inverse: f32, shift: f32, quants: &mut [u8]) {
        let (scale, add) = (_mm512_set1_ps(inverse), _mm512_set1_ps(shift));
        let (low, high) = (_mm512_setzero_ps(), _mm512_set1_ps(255.0));
        let whole = row.len() / LANES * LANES;
        for (values, out) in row[..whole]
            .chunks_exact(LANES)
            .zip(quants[..whole].chunks_exact_mut(LANES))
        {
            // SAFETY: 16 values in `values` and 16 bytes in `out`; neither
            // `loadu` nor `storeu` needs alignment.
            unsafe {
                let v = _mm512_loadu_ps(values.as_ptr());
                let v = _mm512_add_ps(_mm512_mul_ps(v, scale), add);
                let v = _mm512_min_ps(_mm512_max_ps(v, low), high);
                let bytes = _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v));
                _mm_storeu_si128(out.as_mut_ptr().cast(), bytes);
            }
        }
        super::quantize_row(&row[whole..], inverse, shift, &mut quants[whole..]);
    }

    /// Tokens a pass over a group takes (one accumulator each).
    const TILE: usize = 8;

    /// AVX-512 VNNI: per group, tiles of up to [`TILE`] tokens, one
    /// `vpdpbusd` per token and step.
    #[target_feature(enable = "avx512f,avx512vnni")]
    pub(super) fn products_vnni(
        w: &Int8Matrix,
        x: &Int8Activations,
        bias: &[f32],
        out: &mut [f32],
    ) {
        let tokens = x.tokens();
        let group_bytes = w.steps() * LANES * STEP;
        for (g, group) in w.packed.chunks_exact(group_bytes).enumerate() {
            let mut t = 0;
            while t < tokens {
                let n = (tokens - t).min(TILE);
                match n {
                    8 => tile::<8>(w, x, bias, out, g, group, t),
                    7 => tile::<7>(w, x, bias, out, g, group, t),
                    6 => tile::<6>(w, x, bias, out, g, group, t),
                    5 => tile::<5>(w, x, bias, out, g, group, t),
                    4 => tile::<4>(w, x, bias, out, g, group, t),
                    3 => tile::<3>(w, x, bias, out, g, group, t),
                    2 => tile::<2>(w, x, bias, out, g, group, t),
                    _ => tile::<1>(w, x, bias, out, g, group, t),
                }
                t += n;
            }
        }
    }

    /// Tokens `first..first + N` against group `g` (its packed bytes
    /// `group`).
    #[inline]
    #[target_feature(enable = "avx512f,avx512vnni")]
    fn tile<const N: usize>(
        w: &Int8Matrix,
        x: &Int8Activations,
        bias: &[f32],
        out: &mut [f32],
        g: usize,
        group: &[i8],
        first: usize,
    ) {
        let k = x.k;
        let rows: [&[u8]; N] = std::array::from_fn(|i| &x.quants[(first + i) * k..][..k]);
        let mut sums = [_mm512_setzero_si512(); N];
        for (s, step) in group.chunks_exact(LANES * STEP).enumerate() {
            // SAFETY: `step` holds 64 bytes; `loadu` has no alignment
            // requirement.
            let weights = unsafe { _mm512_loadu_si512(step.as_ptr().cast()) };
            for (sum, row) in sums.iter_mut().zip(&rows) {
                // SAFETY: `row` holds `k = 4 · steps` bytes and `s < steps`.
                let four = unsafe { row.as_ptr().add(s * STEP).cast::<i32>().read_unaligned() };
                *sum = _mm512_dpbusd_epi32(*sum, _mm512_set1_epi32(four), weights);
            }
        }
        let at = g * LANES;
        let valid = (w.rows - at).min(LANES);
        let mut lane_bias = [0f32; LANES];
        lane_bias[..valid].copy_from_slice(&bias[at..at + valid]);
        // SAFETY: `scales` and `sums` are padded to whole groups, so lanes
        // `at..at + 16` exist; `lane_bias` holds 16 values.
        let (w_scales, w_sums, lane_bias) = unsafe {
            (
                _mm512_loadu_ps(w.scales[at..at + LANES].as_ptr()),
                _mm512_loadu_si512(w.sums[at..at + LANES].as_ptr().cast()),
                _mm512_loadu_ps(lane_bias.as_ptr()),
            )
        };
        for (i, sum) in sums.iter().enumerate() {
            let t = first + i;
            let exact = _mm512_sub_epi32(
                *sum,
                _mm512_mullo_epi32(_mm512_set1_epi32(x.zeros[t]), w_sums),
            );
            let scale = _mm512_mul_ps(_mm512_set1_ps(x.scales[t]), w_scales);
            let value = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(exact), scale), lane_bias);
            let mut lanes = [0f32; LANES];
            // SAFETY: `lanes` holds 16 floats; `storeu` has no alignment
            // requirement.
            unsafe { _mm512_storeu_ps(lanes.as_mut_ptr(), value) };
            out[t * w.rows + at..][..valid].copy_from_slice(&lanes[..valid]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{bits, pseudo_random};
    use super::*;

    /// Every kernel gives the portable build's bits, for shapes with a
    /// padded last group, rows padded to a multiple of four, and token
    /// counts that leave every tile size; and a token's row does not depend
    /// on the tokens beside it.
    #[test]
    fn every_kernel_gives_the_same_bits_and_a_token_the_same_alone() {
        for (rows, inputs) in [(37, 64), (16, 30), (5, 388)] {
            let w = Int8Matrix::quantize(&pseudo_random(rows * inputs, 3), inputs);
            let bias = pseudo_random(rows, 4);
            for tokens in [1, 7, 8, 9, 19] {
                let values = pseudo_random(tokens * inputs, 5 + tokens as u32);
                let x = Int8Activations::quantize(&values, &w);
                let mut expected = vec![f32::NAN; tokens * rows];
                products_on(Isa::Portable, &w, &x, &bias, &mut expected);
                for isa in crate::llama::kernels::available() {
                    let mut out = vec![f32::NAN; tokens * rows];
                    products_on(isa, &w, &x, &bias, &mut out);
                    assert_eq!(
                        bits(&out),
                        bits(&expected),
                        "{isa:?}, {rows}×{inputs}, {tokens} tokens"
                    );
                }
                for t in [0, tokens - 1] {
                    let alone = Int8Activations::quantize(&values[t * inputs..][..inputs], &w);
                    let mut out = vec![0.0; rows];
                    products(&w, &alone, &bias, &mut out);
                    assert_eq!(bits(&out), bits(&expected[t * rows..][..rows]), "token {t}");
                }
            }
        }
    }

    /// The AVX-512 quantization gives the portable loop's bytes, values out
    /// of range, halves and a NaN included.
    #[test]
    fn vector_quantization_gives_the_portable_bytes() {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx512f") {
            let mut row: Vec<f32> = pseudo_random(53, 31).iter().map(|v| v * 300.0).collect();
            row[3] = f32::NAN;
            row[4] = 0.5;
            row[5] = -0.5;
            row[17] = f32::INFINITY;
            for (inverse, shift) in [(1.0, 0.5), (0.37, 127.5), (2.5, 255.5)] {
                let (mut portable, mut vector) = (vec![0u8; 53], vec![0u8; 53]);
                quantize_row(&row, inverse, shift, &mut portable);
                // SAFETY: AVX-512 F was detected above.
                unsafe { x86::quantize_row(&row, inverse, shift, &mut vector) };
                assert_eq!(vector, portable, "inverse {inverse}, shift {shift}");
            }
            return;
        }
        eprintln!("no AVX-512 F on this CPU: only the portable loop runs");
    }

    /// The quantized products track the float products: two 8-bit roundings
    /// (the weights' to 1/254 of a row's largest value, the activations' to
    /// 1/510 of a row's range) over 384 terms.
    #[test]
    fn quantized_products_track_the_float_products() {
        let (rows, inputs, tokens) = (40, 384, 6);
        let weights = pseudo_random(rows * inputs, 11);
        let values: Vec<f32> = pseudo_random(tokens * inputs, 12)
            .into_iter()
            .map(|v| v * 3.0 + 0.5)
            .collect();
        let bias = pseudo_random(rows, 13);
        let w = Int8Matrix::quantize(&weights, inputs);
        let x = Int8Activations::quantize(&values, &w);
        let mut out = vec![0.0; tokens * rows];
        products(&w, &x, &bias, &mut out);
        let mut worst = 0f64;
        for t in 0..tokens {
            for r in 0..rows {
                let exact: f64 = weights[r * inputs..][..inputs]
                    .iter()
                    .zip(&values[t * inputs..][..inputs])
                    .map(|(a, b)| f64::from(*a) * f64::from(*b))
                    .sum::<f64>()
                    + f64::from(bias[r]);
                worst = worst.max((f64::from(out[t * rows + r]) - exact).abs());
            }
        }
        // Activations in [-2.5, 3.5] (steps of 6/255) and weights in
        // [-1, 1] (steps of 2/254): each rounding error of random sign,
        // ~0.11 in standard deviation over 384 terms, ~0.35 in the worst of
        // 240.
        assert!(worst < 0.5, "largest difference {worst}");
        assert!(worst > 0.0, "no rounding at all: not quantized?");
    }

    /// An all-zero row and an all-zero token give the bias exactly; a
    /// constant token's product is the row's sum times the constant, to
    /// the weights' rounding (32 terms of ±0.004).
    #[test]
    fn zeros_and_constants_are_exact() {
        let inputs = 32;
        let mut weights = pseudo_random(3 * inputs, 21);
        weights[..inputs].fill(0.0);
        let bias = [0.25, -1.5, 2.0];
        let w = Int8Matrix::quantize(&weights, inputs);
        let x = Int8Activations::quantize(&[0.0; 32], &w);
        let mut out = [f32::NAN; 3];
        products(&w, &x, &bias, &mut out);
        assert_eq!(out, bias);
        let x = Int8Activations::quantize(&[2.0; 32], &w);
        products(&w, &x, &bias, &mut out);
        assert_eq!(out[0], 0.25);
        let row_sum: f32 = weights[inputs..2 * inputs].iter().sum();
        assert!((out[1] - (2.0 * row_sum - 1.5)).abs() < 0.1, "{}", out[1]);
    }
}
