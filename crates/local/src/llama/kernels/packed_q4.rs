//! Q4_1 weights (GGUF's blocks of 32 four-bit values `q` with an f16 scale
//! `d` and an f16 minimum `m`: `w = d·q + m`) packed eight rows side by
//! side, multiplied as stored: 0.625 bytes a weight against Q8's 1.125, so
//! a decoded token, which is bound by reading the weights, reads 45 % less.
//!
//! The layout follows [`super::packed`]: a vector's eight 32-bit lanes are
//! eight weight rows, and step `j` of a block multiplies four values of
//! each row by the same four activation bytes broadcast to every lane. A
//! block of a group is four 32-byte vectors; vector `v` holds bytes
//! `4v..4v + 4` of each row's 16 (row `i` at `4i`), whose low nibbles are
//! the row's values `4v..4v + 4` (step `v`) and whose high nibbles are
//! values `16 + 4v..` (step `v + 4`), as GGUF stores them. So one load
//! serves two steps: the nibbles are masked out, no offset is needed
//! (`vpdpbusd` and `vpmaddubsw` take them as the unsigned operand, the
//! activations as the signed one; AVX2's pairs stay below `2 · 15 · 127`,
//! no saturation).
//!
//! `Σ w·x` over a block is `d · dx · Σ q·xq + m · dx · Σ xq`: the first
//! sum is exact in each lane, the second is the activation block's own
//! (`dx · Σ xq`, computed once per activation row and block,
//! [`ActivationSums`]). Every (row, activation row) pair's result is the
//! same sequence of operations whatever the kernel, tile or split: per
//! block in order, `s = fma(d·dx, Σ q·xq, s)` then `s = fma(m, dx·Σ xq,
//! s)`. A batch gives each token's bits, and AVX2 and VNNI give the same
//! bits.

use half::f16;

use super::BLOCK;
use super::packed::{GROUP, group_slots};

/// Bytes of a Q4_1 block in GGUF: `d`, `m` (f16 each), 16 bytes of nibbles.
pub(crate) const Q4_1_BLOCK_BYTES: usize = 20;

/// Nibble bytes of one row's block.
const NIBBLES: usize = BLOCK / 2;

/// A Q4_1 matrix's rows packed in groups of [`GROUP`] (the last group
/// padded with zero rows).
#[derive(Debug, Clone, Default)]
pub(crate) struct PackedQ4Matrix {
    /// Per group and block, `GROUP × 16` bytes: vector `v` (of 4) holds
    /// bytes `4v..4v + 4` of each row's block, row `i` at `4i`.
    nibbles: Vec<u8>,
    /// Per group and block, the rows' scales `d`.
    scales: Vec<f16>,
    /// Per group and block, the rows' minimums `m`.
    mins: Vec<f16>,
    rows: usize,
    k: usize,
}

impl PackedQ4Matrix {
    /// Packs GGUF Q4_1 data: rows of `k / 32` blocks of
    /// [`Q4_1_BLOCK_BYTES`] each, row after row.
    ///
    /// # Panics
    /// If `k` is not a multiple of 32 or `data` is not whole rows (the
    /// loader checks the tensor's shape first).
    pub fn pack(data: &[u8], k: usize) -> Self {
        assert!(k.is_multiple_of(BLOCK), "Q4_1 rows are whole blocks");
        let blocks = k / BLOCK;
        let row_bytes = blocks * Q4_1_BLOCK_BYTES;
        assert!(
            row_bytes > 0 && data.len().is_multiple_of(row_bytes),
            "Q4_1 data is whole rows"
        );
        let rows = data.len() / row_bytes;
        let groups = rows.div_ceil(GROUP);
        let mut packed = Self {
            nibbles: vec![0; groups * blocks * GROUP * NIBBLES],
            scales: vec![f16::ZERO; groups * blocks * GROUP],
            mins: vec![f16::ZERO; groups * blocks * GROUP],
            rows,
            k,
        };
        for (r, row) in data.chunks_exact(row_bytes).enumerate() {
            let (g, i) = (r / GROUP, r % GROUP);
            for (b, block) in row.chunks_exact(Q4_1_BLOCK_BYTES).enumerate() {
                let at = (g * blocks + b) * GROUP;
                packed.scales[at + i] = f16::from_le_bytes([block[0], block[1]]);
                packed.mins[at + i] = f16::from_le_bytes([block[2], block[3]]);
                for (v, four) in block[4..].chunks_exact(4).enumerate() {
                    let to = at * NIBBLES + v * GROUP * 4 + i * 4;
                    packed.nibbles[to..to + 4].copy_from_slice(four);
                }
            }
        }
        packed
    }

    /// Number of rows (without the padding).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Row `r` as floats, written to `out` (`k` values): `d·q + m`, as
    /// GGUF dequantizes Q4_1 (for tests: the model multiplies the packed
    /// nibbles).
    #[cfg(test)]
    pub fn dequantize_row(&self, r: usize, out: &mut [f32]) {
        let blocks = self.k / BLOCK;
        let (g, i) = (r / GROUP, r % GROUP);
        for (b, out) in out.chunks_exact_mut(BLOCK).enumerate().take(blocks) {
            let at = (g * blocks + b) * GROUP;
            let (d, m) = (self.scales[at + i].to_f32(), self.mins[at + i].to_f32());
            for v in 0..4 {
                let from = at * NIBBLES + v * GROUP * 4 + i * 4;
                for (n, &byte) in self.nibbles[from..from + 4].iter().enumerate() {
                    out[4 * v + n] = f32::from(byte & 0x0f) * d + m;
                    out[NIBBLES + 4 * v + n] = f32::from(byte >> 4) * d + m;
                }
            }
        }
    }

    /// Rows `first..end` (`first` a multiple of [`GROUP`]).
    pub fn view(&self, first: usize, end: usize) -> PackedQ4Rows<'_> {
        debug_assert!(first <= end && end <= self.rows);
        let slots = group_slots(first, end, self.k);
        let bytes = slots.start * NIBBLES..slots.end * NIBBLES;
        PackedQ4Rows {
            nibbles: &self.nibbles[bytes],
            scales: &self.scales[slots.clone()],
            mins: &self.mins[slots],
            rows: end - first,
            k: self.k,
        }
    }
}

/// Some packed Q4_1 rows (whole groups), as [`PackedQ4Matrix::view`]
/// gives them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PackedQ4Rows<'a> {
    nibbles: &'a [u8],
    scales: &'a [f16],
    mins: &'a [f16],
    rows: usize,
    k: usize,
}

/// Activation rows for the Q4_1 kernel: Q8 values with one scale per block
/// of 32, and each block's `scale · Σ values`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ActivationSums<'a> {
    /// `tokens × k` quantized values.
    pub quants: &'a [i8],
    /// One scale per block of 32.
    pub scales: &'a [f32],
    /// Per block, `scale · Σ quants` ([`block_sums`]).
    pub sums: &'a [f32],
    /// Values per row.
    pub k: usize,
}

impl ActivationSums<'_> {
    fn rows(&self) -> usize {
        self.quants.len().checked_div(self.k).unwrap_or(0)
    }
}

/// Per block of 32 activation values, `scale · Σ quants` (the sum exact,
/// one rounding), into `out`.
pub(crate) fn block_sums(quants: &[i8], scales: &[f32], out: &mut Vec<f32>) {
    out.clear();
    out.extend(
        quants
            .chunks_exact(BLOCK)
            .zip(scales)
            .map(|(block, &d)| d * block.iter().map(|&q| i32::from(q)).sum::<i32>() as f32),
    );
}

/// `out[t * stride + r] = w[r] · x[t]` for every packed row `r` and
/// activation row `t`, on the instruction set in use.
///
/// # Panics
/// If the shapes disagree, or no packed kernel runs on this CPU
/// ([`super::packed::available`] is false): bugs in the caller.
pub(crate) fn matmul(w: PackedQ4Rows<'_>, x: ActivationSums<'_>, out: &mut [f32], stride: usize) {
    matmul_on(super::isa(), w, x, out, stride);
}

/// [`matmul`] on instruction set `isa`.
pub(crate) fn matmul_on(
    isa: super::Isa,
    w: PackedQ4Rows<'_>,
    x: ActivationSums<'_>,
    out: &mut [f32],
    stride: usize,
) {
    let blocks = w.k / BLOCK;
    let groups = w.rows.div_ceil(GROUP);
    let tokens = x.rows();
    assert!(
        w.k == x.k
            && w.k.is_multiple_of(BLOCK)
            && x.quants.len() == tokens * x.k
            && x.scales.len() * BLOCK == x.quants.len()
            && x.sums.len() == x.scales.len()
            && w.nibbles.len() == groups * blocks * GROUP * NIBBLES
            && w.scales.len() == groups * blocks * GROUP
            && w.mins.len() == w.scales.len(),
        "packed Q4_1 matmul: inconsistent shapes"
    );
    assert!(
        tokens == 0 || w.rows == 0 || (tokens - 1) * stride + w.rows <= out.len(),
        "packed Q4_1 matmul: output too small"
    );
    match isa {
        super::Isa::Portable => panic!("packed Q4_1 matmul: no packed kernel in portable Rust"),
        // SAFETY: `Isa::Avx2` is only chosen when the CPU has AVX2, FMA and
        // F16C; the shapes were checked above.
        #[cfg(target_arch = "x86_64")]
        super::Isa::Avx2 => unsafe { x86::matmul_avx2(w, x, out, stride) },
        // SAFETY: `Isa::Avx512Vnni` is only chosen when the CPU has AVX2,
        // FMA, F16C, AVX-512 VNNI and AVX-512 VL; shapes checked above.
        #[cfg(target_arch = "x86_64")]
        super::Isa::Avx512Vnni => unsafe { x86::matmul_vnni(w, x, out, stride) },
    }
}

/// Every row's product with one activation row as an `f64` sum of its
/// dequantized terms, for tests.
#[cfg(test)]
pub(crate) fn reference(w: &PackedQ4Matrix, x: &[i8], x_scales: &[f32]) -> Vec<f64> {
    let dequantize_row = |r, row: &mut [f32]| w.dequantize_row(r, row);
    super::packed::reference_of(w.rows, w.k, dequantize_row, x, x_scales)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::super::packed::x86::{four, load_bytes, load_f16, store_lanes};
    use super::{ActivationSums, BLOCK, GROUP, NIBBLES, PackedQ4Rows};

    /// Activation rows a pass over a group's blocks takes.
    const TILE: usize = 4;

    /// The loops both kernels share: for each group and tile of activation
    /// rows, a block's nibbles are unpacked once into its eight steps
    /// (step `j`: values `4j..4j + 4` of each row), and `dot(steps, xb)`
    /// gives the eight rows' exact `Σ q·xq` against each activation block
    /// `xb` of the tile, which is scaled and added in block order, then
    /// the minimum's term.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn each_group(
        w: PackedQ4Rows<'_>,
        x: ActivationSums<'_>,
        out: &mut [f32],
        stride: usize,
        dot: impl Fn(&[__m256i; 8], &[i8]) -> __m256i,
    ) {
        let blocks = w.k / BLOCK;
        let tokens = x.rows();
        let per_group = blocks * GROUP;
        let mask = _mm256_set1_epi8(0x0f);
        for g in 0..w.rows.div_ceil(GROUP) {
            let nibbles = &w.nibbles[g * per_group * NIBBLES..][..per_group * NIBBLES];
            let scales = &w.scales[g * per_group..][..per_group];
            let mins = &w.mins[g * per_group..][..per_group];
            let valid = (w.rows - g * GROUP).min(GROUP);
            let mut t = 0;
            while t < tokens {
                let n = (tokens - t).min(TILE);
                let mut sums = [_mm256_setzero_ps(); TILE];
                for b in 0..blocks {
                    let ws = load_f16(&scales[b * GROUP..]);
                    let wm = load_f16(&mins[b * GROUP..]);
                    let block = &nibbles[b * GROUP * NIBBLES..][..GROUP * NIBBLES];
                    let mut steps = [_mm256_setzero_si256(); 8];
                    for v in 0..4 {
                        let bytes = load_bytes(&block[v * GROUP * 4..]);
                        steps[v] = _mm256_and_si256(bytes, mask);
                        steps[v + 4] = _mm256_and_si256(_mm256_srli_epi16::<4>(bytes), mask);
                    }
                    for (i, sum) in sums.iter_mut().enumerate().take(n) {
                        let row = t + i;
                        let xb = &x.quants[row * x.k + b * BLOCK..][..BLOCK];
                        let exact = dot(&steps, xb);
                        let at = row * blocks + b;
                        let scale = _mm256_mul_ps(ws, _mm256_set1_ps(x.scales[at]));
                        *sum = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(exact), *sum);
                        *sum = _mm256_fmadd_ps(wm, _mm256_set1_ps(x.sums[at]), *sum);
                    }
                }
                for (i, sum) in sums.iter().enumerate().take(n) {
                    let at = (t + i) * stride + g * GROUP;
                    store_lanes(*sum, &mut out[at..at + valid]);
                }
                t += n;
            }
        }
    }

    /// AVX-512 VNNI: one `vpdpbusd` a step, nibbles (unsigned) times the
    /// activations (signed) as they are.
    #[target_feature(enable = "avx2,fma,f16c,avx512vnni,avx512vl")]
    pub(super) fn matmul_vnni(
        w: PackedQ4Rows<'_>,
        x: ActivationSums<'_>,
        out: &mut [f32],
        stride: usize,
    ) {
        let dot = |steps: &[__m256i; 8], xb: &[i8]| {
            // Two chains (exact integers: the order does not matter).
            let mut acc = [_mm256_setzero_si256(), _mm256_setzero_si256()];
            for (j, &step) in steps.iter().enumerate() {
                let bytes = _mm256_set1_epi32(four(xb, j, |v| v as u8));
                acc[j % 2] = _mm256_dpbusd_epi32(acc[j % 2], step, bytes);
            }
            _mm256_add_epi32(acc[0], acc[1])
        };
        each_group(w, x, out, stride, dot);
    }

    /// AVX2: per step the nibbles (unsigned) times the activations (signed)
    /// with `vpmaddubsw` (pairs at most `2 · 15 · 127`: exact in 16 bits),
    /// then the pairs summed to 32 bits.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) fn matmul_avx2(
        w: PackedQ4Rows<'_>,
        x: ActivationSums<'_>,
        out: &mut [f32],
        stride: usize,
    ) {
        let ones = _mm256_set1_epi16(1);
        let dot = |steps: &[__m256i; 8], xb: &[i8]| {
            let mut acc = [_mm256_setzero_si256(), _mm256_setzero_si256()];
            for (j, &step) in steps.iter().enumerate() {
                let pairs = _mm256_maddubs_epi16(step, _mm256_set1_epi32(four(xb, j, |v| v as u8)));
                acc[j % 2] = _mm256_add_epi32(acc[j % 2], _mm256_madd_epi16(pairs, ones));
            }
            _mm256_add_epi32(acc[0], acc[1])
        };
        each_group(w, x, out, stride, dot);
    }
}

#[cfg(test)]
mod tests {
    use super::super::bits;
    use super::super::packed::{kernels, pseudo_random_i8, scales};
    use super::*;

    /// GGUF Q4_1 data of `rows × k` pseudo-random values.
    fn q4_1_data(rows: usize, k: usize, seed: u32) -> Vec<u8> {
        let mut state = seed;
        let mut next = move || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            state >> 8
        };
        let mut data = Vec::new();
        for _ in 0..rows * k / BLOCK {
            let d = 0.001 + (next() % 97) as f32 * 0.0003;
            let m = -((next() % 89) as f32) * 0.0004;
            data.extend(f16::from_f32(d).to_le_bytes());
            data.extend(f16::from_f32(m).to_le_bytes());
            data.extend((0..NIBBLES).map(|_| (next() & 0xff) as u8));
        }
        data
    }

    #[test]
    fn packing_keeps_every_value_as_gguf_dequantizes_it() {
        // 19 rows: two groups and a padded third; GGUF's Q4_1 formula on
        // the unpacked bytes.
        let (rows, k) = (19, 96);
        let data = q4_1_data(rows, k, 1);
        let packed = PackedQ4Matrix::pack(&data, k);
        assert_eq!(packed.rows(), rows);
        let mut row = vec![0.0; k];
        for r in 0..rows {
            packed.dequantize_row(r, &mut row);
            for (b, values) in row.chunks_exact(BLOCK).enumerate() {
                let block = &data[(r * k / BLOCK + b) * Q4_1_BLOCK_BYTES..][..Q4_1_BLOCK_BYTES];
                let d = f16::from_le_bytes([block[0], block[1]]).to_f32();
                let m = f16::from_le_bytes([block[2], block[3]]).to_f32();
                for j in 0..NIBBLES {
                    let byte = block[4 + j];
                    assert_eq!(values[j], f32::from(byte & 0x0f) * d + m, "row {r}");
                    assert_eq!(values[j + NIBBLES], f32::from(byte >> 4) * d + m);
                }
            }
        }
    }

    fn products(
        isa: super::super::Isa,
        w: &PackedQ4Matrix,
        x: &[i8],
        x_scales: &[f32],
        stride: usize,
    ) -> Vec<f32> {
        let mut sums = Vec::new();
        block_sums(x, x_scales, &mut sums);
        let activations = ActivationSums {
            quants: x,
            scales: x_scales,
            sums: &sums,
            k: w.k,
        };
        let tokens = x.len() / w.k;
        let mut out = vec![f32::NAN; tokens.saturating_sub(1) * stride + w.rows];
        matmul_on(isa, w.view(0, w.rows), activations, &mut out, stride);
        out
    }

    #[test]
    fn q4_1_products_are_the_sums_of_their_terms_on_every_kernel() {
        let (rows, k, tokens) = (37, 576, 5);
        let w = PackedQ4Matrix::pack(&q4_1_data(rows, k, 3), k);
        let x = pseudo_random_i8(tokens * k, 5);
        let x_scales = scales(tokens * k / BLOCK, 6);
        let blocks = k / BLOCK;
        let mut results = Vec::new();
        for isa in kernels() {
            let out = products(isa, &w, &x, &x_scales, rows);
            for t in 0..tokens {
                let exact = reference(&w, &x[t * k..][..k], &x_scales[t * blocks..][..blocks]);
                for (r, exact) in exact.iter().enumerate() {
                    let got = f64::from(out[t * rows + r]);
                    assert!(
                        (got - exact).abs() <= 1e-5 * exact.abs().max(1.0),
                        "{isa:?}: row {r}, token {t}: {got} vs {exact}"
                    );
                }
            }
            results.push(out);
        }
        // The kernels sum the same exact integers the same way.
        for pair in results.windows(2) {
            assert_eq!(bits(&pair[0]), bits(&pair[1]));
        }
    }

    #[test]
    fn a_q4_1_batch_gives_the_bits_of_its_tokens_one_at_a_time() {
        // 11 tokens: two tiles of four and three; 21 rows: a padded group.
        let (rows, k, tokens) = (21, 160, 11);
        let w = PackedQ4Matrix::pack(&q4_1_data(rows, k, 7), k);
        let x = pseudo_random_i8(tokens * k, 8);
        let x_scales = scales(tokens * k / BLOCK, 9);
        let blocks = k / BLOCK;
        for isa in kernels() {
            let together = products(isa, &w, &x, &x_scales, rows);
            for t in 0..tokens {
                let (x, x_scales) = (&x[t * k..][..k], &x_scales[t * blocks..][..blocks]);
                let alone = products(isa, &w, x, x_scales, 0);
                assert_eq!(
                    bits(&together[t * rows..][..rows]),
                    bits(&alone),
                    "{isa:?}, token {t}"
                );
                // A view of the later groups alone gives their bits too.
                let mut sums = Vec::new();
                block_sums(x, x_scales, &mut sums);
                let one = ActivationSums {
                    quants: x,
                    scales: x_scales,
                    sums: &sums,
                    k,
                };
                let mut later = vec![f32::NAN; rows - GROUP];
                matmul_on(isa, w.view(GROUP, rows), one, &mut later, 0);
                assert_eq!(bits(&alone[GROUP..]), bits(&later), "{isa:?}, later groups");
            }
        }
    }
}
