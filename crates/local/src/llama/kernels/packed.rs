//! Q8 weights packed eight rows side by side, so that one vector
//! instruction adds four products to each of the eight rows' sums.
//!
//! The plain kernels take each weight row alone: per block of 32 values a
//! `vpdpbusd` (or AVX2's `vpmaddubsw` + `vpmaddwd`) gives eight partial sums
//! of one row, which are converted to floats and scaled one vector per row
//! and block, and the sign trick (`|w|` as unsigned, `x` with `w`'s sign)
//! costs two more instructions a block and row. Here the vector's eight
//! 32-bit lanes are eight weight rows: step `j` of a block holds bytes
//! `4j..4j + 4` of each row, multiplied by the same four activation bytes
//! broadcast to every lane. After the eight steps of a block each lane holds
//! its row's whole block sum as an exact integer, which is converted and
//! scaled once for the eight rows.
//!
//! On AVX-512 VNNI, `vpdpbusd` multiplies unsigned by signed bytes, so the
//! activations are given as `x + 128` (in `1..=255`) and each lane starts
//! from `−128 · Σ w` of its row's block: the sums are then `Σ x·w` exactly,
//! one instruction a step. AVX2 keeps the sign trick per step (its
//! `vpmaddubsw` would saturate on `x + 128`).
//!
//! Every (row, activation row) pair's result is the same sequence of
//! operations whatever the kernel, the tile or the split of the work: the
//! block's exact integer sum, converted, times `w_scale · x_scale`, added
//! (fused) to the running sum in block order. A batch therefore gives each
//! token's bits, and AVX2 and VNNI give the same bits.

use half::f16;

use super::BLOCK;

/// Rows side by side in a packed group (the lanes of a 256-bit vector).
pub(crate) const GROUP: usize = 8;

/// A Q8 matrix's rows packed in groups of [`GROUP`] (the last group padded
/// with zero rows), with each group's per-block scales and weight sums.
#[derive(Debug, Clone, Default)]
pub(crate) struct PackedMatrix {
    /// Per group and block, `GROUP × 32` bytes: step `j` (of 8) holds bytes
    /// `4j..4j + 4` of each row's block, row `i` at `4i`.
    quants: Vec<i8>,
    /// Per group and block, the rows' scales (every Q8 scale is a
    /// half-precision value: GGUF's Q8_0 stores it so, and
    /// [`super::super::q8::Q8Matrix::quantize`] rounds it so).
    scales: Vec<f16>,
    /// Per group and block, `Σ w` of each row's block (at most
    /// `32 · 127` in size); VNNI's lanes start from `−128` times it.
    sums: Vec<i16>,
    rows: usize,
    k: usize,
}

impl PackedMatrix {
    /// Packs `rows` rows of `k` values (`quants` row-major, one scale per
    /// block of 32).
    pub fn pack(quants: &[i8], scales: &[f32], k: usize) -> Self {
        let blocks = k / BLOCK;
        let rows = quants.len().checked_div(k).unwrap_or(0);
        let groups = rows.div_ceil(GROUP);
        let mut packed = Self {
            quants: vec![0; groups * blocks * GROUP * BLOCK],
            scales: vec![f16::ZERO; groups * blocks * GROUP],
            sums: vec![0; groups * blocks * GROUP],
            rows,
            k,
        };
        for r in 0..rows {
            let (g, i) = (r / GROUP, r % GROUP);
            for b in 0..blocks {
                let block = &quants[r * k + b * BLOCK..][..BLOCK];
                let at = (g * blocks + b) * GROUP;
                let scale = scales[r * blocks + b];
                packed.scales[at + i] = f16::from_f32(scale);
                debug_assert_eq!(
                    packed.scales[at + i].to_f32(),
                    scale,
                    "a Q8 scale is an f16"
                );
                packed.sums[at + i] = block.iter().map(|&w| i16::from(w)).sum();
                for (j, four) in block.chunks_exact(4).enumerate() {
                    let to = at * BLOCK + j * GROUP * 4 + i * 4;
                    packed.quants[to..to + 4].copy_from_slice(four);
                }
            }
        }
        packed
    }

    /// Number of rows (without the padding).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Row `r` as floats, written to `out` (`k` values).
    pub fn dequantize_row(&self, r: usize, out: &mut [f32]) {
        let blocks = self.k / BLOCK;
        let (g, i) = (r / GROUP, r % GROUP);
        for (b, out) in out.chunks_exact_mut(BLOCK).enumerate().take(blocks) {
            let at = (g * blocks + b) * GROUP;
            let d = self.scales[at + i].to_f32();
            for (j, out) in out.chunks_exact_mut(4).enumerate() {
                let from = at * BLOCK + j * GROUP * 4 + i * 4;
                for (o, &q) in out.iter_mut().zip(&self.quants[from..from + 4]) {
                    *o = f32::from(q) * d;
                }
            }
        }
    }

    /// Rows `first..end` (`first` a multiple of [`GROUP`]).
    pub fn view(&self, first: usize, end: usize) -> PackedRows<'_> {
        debug_assert!(first <= end && end <= self.rows);
        let slots = group_slots(first, end, self.k);
        let bytes = slots.start * BLOCK..slots.end * BLOCK;
        PackedRows {
            quants: &self.quants[bytes],
            scales: &self.scales[slots.clone()],
            sums: &self.sums[slots],
            rows: end - first,
            k: self.k,
        }
    }
}

/// The (group, block, row-in-group) slots of rows `first..end` of a packed
/// matrix with rows of `k` values: whole groups, `first` a multiple of
/// [`GROUP`]. A packed matrix keeps each per-row-and-block value (a scale,
/// a sum) in one slot, and its values' bytes in a run of slots times the
/// bytes per row and block.
pub(crate) fn group_slots(first: usize, end: usize, k: usize) -> std::ops::Range<usize> {
    debug_assert!(first.is_multiple_of(GROUP) && first <= end);
    let per_group = k / BLOCK * GROUP;
    first / GROUP * per_group..end.div_ceil(GROUP) * per_group
}

/// Some packed rows (whole groups), as [`PackedMatrix::view`] gives them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PackedRows<'a> {
    quants: &'a [i8],
    scales: &'a [f16],
    sums: &'a [i16],
    rows: usize,
    k: usize,
}

/// Activation rows for the packed kernel.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Activations<'a> {
    /// `tokens × k` quantized values.
    pub quants: &'a [i8],
    /// The same values plus 128 ([`offset_activations`]), which the VNNI
    /// kernel reads; empty for the other kernels.
    pub offset: &'a [u8],
    /// One scale per block of 32.
    pub scales: &'a [f32],
    /// Values per row.
    pub k: usize,
}

impl Activations<'_> {
    fn rows(&self) -> usize {
        self.quants.len().checked_div(self.k).unwrap_or(0)
    }
}

/// Writes `i8` activations as `x + 128` into `out` where the kernel in use
/// reads them ([`Activations::offset`]); leaves `out` empty otherwise.
pub(crate) fn offset_activations(quants: &[i8], out: &mut Vec<u8>) {
    out.clear();
    #[cfg(target_arch = "x86_64")]
    if super::isa() == super::Isa::Avx512Vnni {
        offset_activations_for_any(quants, out);
    }
}

/// [`offset_activations`] whatever the kernel in use (for tests of every
/// kernel).
fn offset_activations_for_any(quants: &[i8], out: &mut Vec<u8>) {
    out.clear();
    out.extend(quants.iter().map(|&q| (q as u8) ^ 0x80));
}

/// Whether this CPU runs a packed kernel: AVX2 (with FMA) or AVX-512 VNNI,
/// as the crate's instruction set choice has it. Portable Rust keeps the
/// row-major layout.
pub(crate) fn available() -> bool {
    runs_on(super::isa())
}

fn runs_on(isa: super::Isa) -> bool {
    isa != super::Isa::Portable
}

/// The packed kernels this CPU runs (for tests of every kernel).
#[cfg(test)]
pub(crate) fn kernels() -> Vec<super::Isa> {
    let isas: Vec<_> = super::available()
        .into_iter()
        .filter(|&isa| runs_on(isa))
        .collect();
    if isas.is_empty() {
        eprintln!("no AVX2 on this CPU: no packed kernel runs here");
    }
    isas
}

/// `n` pseudo-random Q8 values in `-127..=127` (tests).
#[cfg(test)]
pub(crate) fn pseudo_random_i8(n: usize, seed: u32) -> Vec<i8> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            ((state >> 16) % 255) as i8 ^ 0x7f_u8 as i8
        })
        .map(|q| q.max(-127))
        .collect()
}

/// `n` block scales, each exact in f16 (tests).
#[cfg(test)]
pub(crate) fn scales(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| 0.001 + ((i as u32 * 7 + seed) % 13) as f32 * 0.0005)
        .map(|d| f16::from_f32(d).to_f32())
        .collect()
}

/// `out[t * stride + r] = w[r] · x[t]` for every packed row `r` and
/// activation row `t`, on the instruction set in use.
///
/// # Panics
/// If the shapes disagree, or no packed kernel runs on this CPU
/// ([`available`] is false): bugs in the caller.
pub(crate) fn matmul(w: PackedRows<'_>, x: Activations<'_>, out: &mut [f32], stride: usize) {
    matmul_on(super::isa(), w, x, out, stride);
}

/// [`matmul`] on instruction set `isa`.
pub(crate) fn matmul_on(
    isa: super::Isa,
    w: PackedRows<'_>,
    x: Activations<'_>,
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
            && w.quants.len() == groups * blocks * GROUP * BLOCK
            && w.scales.len() == groups * blocks * GROUP
            && w.sums.len() == w.scales.len(),
        "packed matmul: inconsistent shapes"
    );
    assert!(
        tokens == 0 || w.rows == 0 || (tokens - 1) * stride + w.rows <= out.len(),
        "packed matmul: output too small"
    );
    match isa {
        super::Isa::Portable => panic!("packed matmul: no packed kernel in portable Rust"),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` is only chosen when the CPU has AVX2, FMA and
        // F16C; the shapes were checked above.
        super::Isa::Avx2 => unsafe { x86::matmul_avx2(w, x, out, stride) },
        #[cfg(target_arch = "x86_64")]
        super::Isa::Avx512Vnni => {
            assert!(
                x.offset.len() == x.quants.len(),
                "packed matmul: VNNI reads the activations offset by 128"
            );
            // SAFETY: `Isa::Avx512Vnni` is only chosen when the CPU has
            // AVX2, FMA, F16C, AVX-512 VNNI and AVX-512 VL; shapes checked
            // above.
            unsafe { x86::matmul_vnni(w, x, out, stride) }
        }
    }
}

/// Every row's product with one activation row as an `f64` sum, for
/// tests: `Σ_b w_scale · x_scale · Σ_i w·x`.
#[cfg(test)]
pub(crate) fn reference(w: &PackedMatrix, x: &[i8], x_scales: &[f32]) -> Vec<f64> {
    reference_of(w.rows, w.k, |r, row| w.dequantize_row(r, row), x, x_scales)
}

/// The `f64` products of `rows` weight rows of `k` values (row `r` written
/// by `dequantize_row(r, out)`) with one activation row, for tests of
/// every packed format.
#[cfg(test)]
pub(crate) fn reference_of(
    rows: usize,
    k: usize,
    dequantize_row: impl Fn(usize, &mut [f32]),
    x: &[i8],
    x_scales: &[f32],
) -> Vec<f64> {
    let mut row = vec![0.0; k];
    (0..rows)
        .map(|r| {
            dequantize_row(r, &mut row);
            row.chunks_exact(BLOCK)
                .zip(x.chunks_exact(BLOCK).zip(x_scales))
                .map(|(wb, (xb, xs))| {
                    wb.iter()
                        .zip(xb)
                        .map(|(&a, &b)| f64::from(a) * f64::from(b) * f64::from(*xs))
                        .sum::<f64>()
                })
                .sum()
        })
        .collect()
}

#[cfg(target_arch = "x86_64")]
pub(super) mod x86 {
    use std::arch::x86_64::*;

    use half::f16;

    use super::{Activations, BLOCK, GROUP, PackedRows};

    /// Activation rows a pass over a group's blocks takes.
    const TILE: usize = 4;

    /// The four activation bytes of step `j` of a block, as one `i32`.
    #[inline(always)]
    pub(in super::super) fn four<T: Copy>(block: &[T], j: usize, byte: impl Fn(T) -> u8) -> i32 {
        i32::from_le_bytes([
            byte(block[4 * j]),
            byte(block[4 * j + 1]),
            byte(block[4 * j + 2]),
            byte(block[4 * j + 3]),
        ])
    }

    /// The loops both kernels share: for each group and tile of activation
    /// rows, `block_sums(steps, start, row, b)` gives the eight rows' exact
    /// sums of block `b` against activation row `row` (`steps` the block's
    /// packed bytes, `start` the lanes' starting values: `−128 · Σ w` when
    /// `offsets`, zeros otherwise), which are scaled and added in block
    /// order.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn each_group(
        w: PackedRows<'_>,
        x: Activations<'_>,
        out: &mut [f32],
        stride: usize,
        offsets: bool,
        block_sums: impl Fn(&[i8], __m256i, usize, usize) -> __m256i,
    ) {
        let blocks = w.k / BLOCK;
        let tokens = x.rows();
        let per_group = blocks * GROUP;
        for g in 0..w.rows.div_ceil(GROUP) {
            let quants = &w.quants[g * per_group * BLOCK..][..per_group * BLOCK];
            let scales = &w.scales[g * per_group..][..per_group];
            let sums_w = &w.sums[g * per_group..][..per_group];
            let valid = (w.rows - g * GROUP).min(GROUP);
            let mut t = 0;
            while t < tokens {
                let n = (tokens - t).min(TILE);
                let mut sums = [_mm256_setzero_ps(); TILE];
                for b in 0..blocks {
                    let ws = load_f16(&scales[b * GROUP..]);
                    let start = if offsets {
                        let sum = _mm256_cvtepi16_epi32(load_epi16(&sums_w[b * GROUP..]));
                        _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32::<7>(sum))
                    } else {
                        _mm256_setzero_si256()
                    };
                    let steps = &quants[b * GROUP * BLOCK..][..GROUP * BLOCK];
                    for (i, sum) in sums.iter_mut().enumerate().take(n) {
                        let row = t + i;
                        let exact = block_sums(steps, start, row, b);
                        let scale = _mm256_mul_ps(ws, _mm256_set1_ps(x.scales[row * blocks + b]));
                        *sum = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(exact), *sum);
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

    /// AVX-512 VNNI: one `vpdpbusd` a step, the activations offset by 128
    /// and each lane started from `−128 · Σ w`.
    #[target_feature(enable = "avx2,fma,f16c,avx512vnni,avx512vl")]
    pub(super) fn matmul_vnni(
        w: PackedRows<'_>,
        x: Activations<'_>,
        out: &mut [f32],
        stride: usize,
    ) {
        let block_sums = |steps: &[i8], start: __m256i, row: usize, b: usize| {
            let xb = &x.offset[row * x.k + b * BLOCK..][..BLOCK];
            // Two chains of four steps (exact integers: the order does not
            // matter).
            let mut acc = [start, _mm256_setzero_si256()];
            for (j, step) in steps.chunks_exact(GROUP * 4).enumerate() {
                let bytes = _mm256_set1_epi32(four(xb, j, |v| v));
                acc[j % 2] = _mm256_dpbusd_epi32(acc[j % 2], bytes, load_bytes(step));
            }
            _mm256_add_epi32(acc[0], acc[1])
        };
        each_group(w, x, out, stride, true, block_sums);
    }

    /// AVX2: per step `|w|` as unsigned bytes times the activations with
    /// `w`'s sign (`vpmaddubsw`, pairs summed exactly: `2 · 127²` fits in
    /// 16 bits), then the pairs summed to 32 bits; the lanes start from 0.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) fn matmul_avx2(
        w: PackedRows<'_>,
        x: Activations<'_>,
        out: &mut [f32],
        stride: usize,
    ) {
        let ones = _mm256_set1_epi16(1);
        let block_sums = |steps: &[i8], _start: __m256i, row: usize, b: usize| {
            let xb = &x.quants[row * x.k + b * BLOCK..][..BLOCK];
            let mut acc = [_mm256_setzero_si256(), _mm256_setzero_si256()];
            for (j, step) in steps.chunks_exact(GROUP * 4).enumerate() {
                let wv = load_bytes(step);
                let xv = _mm256_set1_epi32(four(xb, j, |v| v as u8));
                let pairs =
                    _mm256_maddubs_epi16(_mm256_sign_epi8(wv, wv), _mm256_sign_epi8(xv, wv));
                acc[j % 2] = _mm256_add_epi32(acc[j % 2], _mm256_madd_epi16(pairs, ones));
            }
            _mm256_add_epi32(acc[0], acc[1])
        };
        each_group(w, x, out, stride, false, block_sums);
    }

    /// The first `out.len()` (at most 8) lanes of `sums`, into `out`.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(in super::super) fn store_lanes(sums: __m256, out: &mut [f32]) {
        let mut lanes = [0.0f32; GROUP];
        // SAFETY: `lanes` holds 8 floats; `storeu` has no alignment
        // requirement.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), sums) };
        out.copy_from_slice(&lanes[..out.len()]);
    }

    /// The first 32 bytes of `v` (bytes, signed or not).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(in super::super) fn load_bytes<T: Copy>(v: &[T]) -> __m256i {
        assert!(std::mem::size_of::<T>() == 1 && v.len() >= 32);
        // SAFETY: 32 one-byte values are in `v` (checked above); `loadu`
        // has no alignment requirement.
        unsafe { _mm256_loadu_si256(v.as_ptr().cast()) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn load_epi16(v: &[i16]) -> __m128i {
        assert!(v.len() >= GROUP);
        // SAFETY: 8 `i16` are in `v` (checked above).
        unsafe { _mm_loadu_si128(v.as_ptr().cast()) }
    }

    /// Eight half-precision values as f32 (exact).
    #[inline]
    #[target_feature(enable = "avx2,f16c")]
    pub(in super::super) fn load_f16(v: &[f16]) -> __m256 {
        assert!(v.len() >= GROUP);
        // SAFETY: 8 `f16` (16 bytes) are in `v` (checked above).
        _mm256_cvtph_ps(unsafe { _mm_loadu_si128(v.as_ptr().cast()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_keeps_every_row() {
        // 19 rows: two groups and a padded third.
        let (rows, k) = (19, 96);
        let quants = pseudo_random_i8(rows * k, 1);
        let w_scales = scales(rows * k / BLOCK, 2);
        let packed = PackedMatrix::pack(&quants, &w_scales, k);
        assert_eq!(packed.rows(), rows);
        let mut row = vec![0.0; k];
        for r in 0..rows {
            packed.dequantize_row(r, &mut row);
            for (c, &v) in row.iter().enumerate() {
                let expected = f32::from(quants[r * k + c]) * w_scales[r * k / BLOCK + c / BLOCK];
                assert_eq!(v, expected, "row {r}, column {c}");
            }
        }
    }

    /// The products of `tokens` activation rows with `w` on `isa`, and
    /// their activations.
    fn products(
        isa: super::super::Isa,
        w: &PackedMatrix,
        x: &[i8],
        x_scales: &[f32],
        stride: usize,
    ) -> Vec<f32> {
        let mut offset = Vec::new();
        offset_activations_for_any(x, &mut offset);
        let activations = Activations {
            quants: x,
            offset: &offset,
            scales: x_scales,
            k: w.k,
        };
        let tokens = x.len() / w.k;
        let mut out = vec![f32::NAN; tokens.saturating_sub(1) * stride + w.rows];
        matmul_on(isa, w.view(0, w.rows), activations, &mut out, stride);
        out
    }

    /// Packed weights of `rows × k`, and `tokens` activation rows with
    /// their scales.
    fn fixture(rows: usize, k: usize, tokens: usize) -> (PackedMatrix, Vec<i8>, Vec<f32>) {
        let w = PackedMatrix::pack(
            &pseudo_random_i8(rows * k, 3),
            &scales(rows * k / BLOCK, 4),
            k,
        );
        let x = pseudo_random_i8(tokens * k, 5);
        (w, x, scales(tokens * k / BLOCK, 6))
    }

    #[test]
    fn packed_products_are_the_sums_of_their_terms() {
        let (rows, k, tokens) = (37, 576, 5);
        let (w, x, x_scales) = fixture(rows, k, tokens);
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
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        for pair in results.windows(2) {
            assert_eq!(bits(&pair[0]), bits(&pair[1]));
        }
    }

    #[test]
    fn a_packed_batch_gives_the_bits_of_its_tokens_one_at_a_time() {
        // 11 tokens: two tiles of four and three; 21 rows: a padded group.
        let (rows, k, tokens) = (21, 160, 11);
        let (w, x, x_scales) = fixture(rows, k, tokens);
        let blocks = k / BLOCK;
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
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
                let mut offset = Vec::new();
                offset_activations_for_any(x, &mut offset);
                let one = Activations {
                    quants: x,
                    offset: &offset,
                    scales: x_scales,
                    k,
                };
                let mut later = vec![f32::NAN; rows - GROUP];
                matmul_on(isa, w.view(GROUP, rows), one, &mut later, 0);
                assert_eq!(
                    bits(&alone[GROUP..]),
                    bits(&later),
                    "{isa:?}, token {t}, later groups"
                );
            }
        }
    }
}
