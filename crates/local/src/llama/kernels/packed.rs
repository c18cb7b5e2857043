//! Q8 weights packed for AVX-512 VNNI: eight rows side by side, so that one
//! `vpdpbusd` adds four products to each of the eight rows' sums.
//!
//! The plain kernels take each weight row alone: per block of 32 values a
//! `vpdpbusd` gives eight partial sums of one row, which are converted to
//! floats and scaled one vector per row and block, and the sign trick
//! (`|w|` as unsigned, `x` with `w`'s sign) costs two more instructions a
//! block and row. Here the vector's eight 32-bit lanes are eight weight rows:
//! step `j` of a block holds bytes `4j..4j + 4` of each row, multiplied by
//! the same four activation bytes broadcast to every lane. After the eight
//! steps of a block each lane holds its row's whole block sum as an exact
//! integer, which is converted and scaled once for the eight rows.
//!
//! `vpdpbusd` multiplies unsigned by signed bytes, so the activations are
//! given as `x + 128` (in `1..=255`) and each lane starts from
//! `−128 · Σ w` of its row's block: the sums are then `Σ x·w` exactly.
//!
//! Every (row, activation row) pair's result is the same sequence of
//! operations whatever the tile or the split of the work: the block's exact
//! integer sum, converted, times `w_scale · x_scale`, added (fused) to the
//! running sum in block order. A batch therefore gives each token's bits.

use super::BLOCK;

/// Rows side by side in a packed group (the lanes of a 256-bit vector).
pub(crate) const GROUP: usize = 8;

/// A Q8 matrix's rows packed in groups of [`GROUP`] (the last group padded
/// with zero rows), with each group's per-block scales and offsets.
#[derive(Debug, Clone, Default)]
pub(crate) struct PackedMatrix {
    /// Per group and block, `GROUP × 32` bytes: step `j` (of 8) holds bytes
    /// `4j..4j + 4` of each row's block, row `i` at `4i`.
    quants: Vec<i8>,
    /// Per group and block, the rows' scales.
    scales: Vec<f32>,
    /// Per group and block, `−128 · Σ w` of each row's block.
    offsets: Vec<i32>,
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
            scales: vec![0.0; groups * blocks * GROUP],
            offsets: vec![0; groups * blocks * GROUP],
            rows,
            k,
        };
        for r in 0..rows {
            let (g, i) = (r / GROUP, r % GROUP);
            for b in 0..blocks {
                let block = &quants[r * k + b * BLOCK..][..BLOCK];
                let at = (g * blocks + b) * GROUP;
                packed.scales[at + i] = scales[r * blocks + b];
                packed.offsets[at + i] = -128 * block.iter().map(|&w| i32::from(w)).sum::<i32>();
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
            let d = self.scales[at + i];
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
        debug_assert!(first.is_multiple_of(GROUP) && first <= end && end <= self.rows);
        let blocks = self.k / BLOCK;
        let (g0, g1) = (first / GROUP, end.div_ceil(GROUP));
        let per_group = blocks * GROUP;
        PackedRows {
            quants: &self.quants[g0 * per_group * BLOCK..g1 * per_group * BLOCK],
            scales: &self.scales[g0 * per_group..g1 * per_group],
            offsets: &self.offsets[g0 * per_group..g1 * per_group],
            rows: end - first,
            k: self.k,
        }
    }
}

/// Some packed rows (whole groups), as [`PackedMatrix::view`] gives them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PackedRows<'a> {
    quants: &'a [i8],
    scales: &'a [f32],
    offsets: &'a [i32],
    rows: usize,
    k: usize,
}

/// Activation rows for the packed kernel: each value as `x + 128`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OffsetRows<'a> {
    /// `tokens × k` bytes, each an `i8` activation plus 128.
    pub quants: &'a [u8],
    /// One scale per block of 32.
    pub scales: &'a [f32],
    /// Values per row.
    pub k: usize,
}

impl OffsetRows<'_> {
    fn rows(&self) -> usize {
        self.quants.len().checked_div(self.k).unwrap_or(0)
    }
}

/// Writes `i8` activations as `x + 128` into `out` (the same length).
pub(crate) fn offset_activations(quants: &[i8], out: &mut Vec<u8>) {
    out.clear();
    out.extend(quants.iter().map(|&q| (q as u8) ^ 0x80));
}

/// Whether this CPU runs the packed kernel (AVX-512 VNNI with VL, as the
/// crate's instruction set choice has it).
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        super::isa() == super::Isa::Avx512Vnni
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `out[t * stride + r] = w[r] · x[t]` for every packed row `r` and
/// activation row `t`.
///
/// # Panics
/// If the shapes disagree, or the CPU cannot run the kernel ([`available`]
/// is false): bugs in the caller.
pub(crate) fn matmul(w: PackedRows<'_>, x: OffsetRows<'_>, out: &mut [f32], stride: usize) {
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
            && w.offsets.len() == w.scales.len(),
        "packed matmul: inconsistent shapes"
    );
    assert!(
        tokens == 0 || w.rows == 0 || (tokens - 1) * stride + w.rows <= out.len(),
        "packed matmul: output too small"
    );
    assert!(available(), "packed matmul: the CPU has no AVX-512 VNNI");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `available()` checked that the CPU has AVX2, FMA, AVX-512
    // VNNI and AVX-512 VL; the shapes were checked above.
    unsafe {
        x86::matmul_vnni(w, x, out, stride);
    }
}

/// The result of one group and activation row as a plain `f64` sum per row,
/// for tests: `Σ_b w_scale · x_scale · Σ_i w·x`.
#[cfg(test)]
pub(crate) fn reference(w: &PackedMatrix, x: &[i8], x_scales: &[f32]) -> Vec<f64> {
    let mut row = vec![0.0; w.k];
    (0..w.rows)
        .map(|r| {
            w.dequantize_row(r, &mut row);
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
mod x86 {
    use std::arch::x86_64::*;

    use super::{BLOCK, GROUP, OffsetRows, PackedRows};

    /// Activation rows a pass over a group's blocks takes.
    const TILE: usize = 4;

    /// See [`super::matmul`]; shapes and CPU features are checked there.
    #[target_feature(enable = "avx2,fma,avx512vnni,avx512vl")]
    pub(super) fn matmul_vnni(
        w: PackedRows<'_>,
        x: OffsetRows<'_>,
        out: &mut [f32],
        stride: usize,
    ) {
        let blocks = w.k / BLOCK;
        let tokens = x.rows();
        let per_group = blocks * GROUP;
        for g in 0..w.rows.div_ceil(GROUP) {
            let quants = &w.quants[g * per_group * BLOCK..][..per_group * BLOCK];
            let scales = &w.scales[g * per_group..][..per_group];
            let offsets = &w.offsets[g * per_group..][..per_group];
            let valid = (w.rows - g * GROUP).min(GROUP);
            let mut t = 0;
            while t < tokens {
                let n = (tokens - t).min(TILE);
                let mut sums = [_mm256_setzero_ps(); TILE];
                for b in 0..blocks {
                    let ws = load_ps(&scales[b * GROUP..]);
                    let start = load_epi32(&offsets[b * GROUP..]);
                    let steps = &quants[b * GROUP * BLOCK..][..GROUP * BLOCK];
                    for (i, sum) in sums.iter_mut().enumerate().take(n) {
                        let row = t + i;
                        let xb = &x.quants[row * x.k + b * BLOCK..][..BLOCK];
                        // Two chains of four steps (exact integers: the
                        // order does not matter).
                        let mut acc = [start, _mm256_setzero_si256()];
                        for (j, step) in steps.chunks_exact(GROUP * 4).enumerate() {
                            let four = i32::from_le_bytes([
                                xb[4 * j],
                                xb[4 * j + 1],
                                xb[4 * j + 2],
                                xb[4 * j + 3],
                            ]);
                            acc[j % 2] = _mm256_dpbusd_epi32(
                                acc[j % 2],
                                _mm256_set1_epi32(four),
                                load_epi8(step),
                            );
                        }
                        let acc = _mm256_add_epi32(acc[0], acc[1]);
                        let scale = _mm256_mul_ps(ws, _mm256_set1_ps(x.scales[row * blocks + b]));
                        *sum = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(acc), *sum);
                    }
                }
                for (i, sum) in sums.iter().enumerate().take(n) {
                    let at = (t + i) * stride + g * GROUP;
                    let mut lanes = [0.0f32; GROUP];
                    // SAFETY: `lanes` holds 8 floats; `storeu` has no
                    // alignment requirement.
                    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), *sum) };
                    out[at..at + valid].copy_from_slice(&lanes[..valid]);
                }
                t += n;
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn load_epi8(v: &[i8]) -> __m256i {
        assert!(v.len() >= 32);
        // SAFETY: 32 bytes are in `v` (checked above); `loadu` has no
        // alignment requirement.
        unsafe { _mm256_loadu_si256(v.as_ptr().cast()) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn load_epi32(v: &[i32]) -> __m256i {
        assert!(v.len() >= GROUP);
        // SAFETY: 8 `i32` are in `v` (checked above).
        unsafe { _mm256_loadu_si256(v.as_ptr().cast()) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn load_ps(v: &[f32]) -> __m256 {
        assert!(v.len() >= GROUP);
        // SAFETY: 8 `f32` are in `v` (checked above).
        unsafe { _mm256_loadu_ps(v.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pseudo_random_i8(n: usize, seed: u32) -> Vec<i8> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                ((state >> 16) % 255) as i8 ^ 0x7f_u8 as i8
            })
            .map(|q| q.max(-127))
            .collect()
    }

    fn scales(n: usize, seed: u32) -> Vec<f32> {
        (0..n)
            .map(|i| 0.001 + ((i as u32 * 7 + seed) % 13) as f32 * 0.0005)
            .collect()
    }

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

    /// Packed weights, activations, their scales and their products.
    type Products = (PackedMatrix, Vec<i8>, Vec<f32>, Vec<f32>);

    /// The kernel's products, `tokens` activation rows against `rows`
    /// weight rows, or `None` where the CPU cannot run it.
    fn products(rows: usize, k: usize, tokens: usize) -> Option<Products> {
        if !available() {
            eprintln!("no AVX-512 VNNI on this CPU: the packed kernel is not used here");
            return None;
        }
        let w = PackedMatrix::pack(
            &pseudo_random_i8(rows * k, 3),
            &scales(rows * k / BLOCK, 4),
            k,
        );
        let x = pseudo_random_i8(tokens * k, 5);
        let x_scales = scales(tokens * k / BLOCK, 6);
        let mut offset = Vec::new();
        offset_activations(&x, &mut offset);
        let mut out = vec![f32::NAN; tokens * rows];
        let activations = OffsetRows {
            quants: &offset,
            scales: &x_scales,
            k,
        };
        matmul(w.view(0, rows), activations, &mut out, rows);
        Some((w, x, x_scales, out))
    }

    #[test]
    fn packed_products_are_the_sums_of_their_terms() {
        let (rows, k, tokens) = (37, 576, 5);
        let Some((w, x, x_scales, out)) = products(rows, k, tokens) else {
            return;
        };
        let blocks = k / BLOCK;
        for t in 0..tokens {
            let exact = reference(&w, &x[t * k..][..k], &x_scales[t * blocks..][..blocks]);
            for (r, exact) in exact.iter().enumerate() {
                let got = f64::from(out[t * rows + r]);
                assert!(
                    (got - exact).abs() <= 1e-5 * exact.abs().max(1.0),
                    "row {r}, token {t}: {got} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn a_packed_batch_gives_the_bits_of_its_tokens_one_at_a_time() {
        // 11 tokens: two tiles of four and three; 21 rows: a padded group.
        let (rows, k, tokens) = (21, 160, 11);
        let Some((w, x, x_scales, together)) = products(rows, k, tokens) else {
            return;
        };
        let blocks = k / BLOCK;
        for t in 0..tokens {
            let mut offset = Vec::new();
            offset_activations(&x[t * k..][..k], &mut offset);
            let one = OffsetRows {
                quants: &offset,
                scales: &x_scales[t * blocks..][..blocks],
                k,
            };
            let mut alone = vec![f32::NAN; rows];
            matmul(w.view(0, rows), one, &mut alone, 0);
            // A view of the later groups alone gives their bits too.
            let mut later = vec![f32::NAN; rows - GROUP];
            matmul(w.view(GROUP, rows), one, &mut later, 0);
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&together[t * rows..][..rows]),
                bits(&alone),
                "token {t}"
            );
            assert_eq!(
                bits(&alone[GROUP..]),
                bits(&later),
                "token {t}, later groups"
            );
        }
    }
}
