//! Int8 dot products of Q8 weight rows with Q8 activation rows, the inner
//! loop of every matrix product of the model. Blocks of 32 `i8` values share
//! one `f32` scale: `dot = Σ_b  w_scale[b] · x_scale[b] · Σ_i w[b,i] · x[b,i]`.
//!
//! The instruction set is chosen once at run time: AVX-512 VNNI (on 256-bit
//! vectors), AVX2 + FMA, or portable Rust. On the first two the weights are
//! packed at load, eight rows side by side ([`packed`]; a file's Q4_1
//! weights are packed as they are stored, [`packed_q4`]); portable Rust
//! multiplies the row-major layout ([`matmul`]).
//!
//! Attention's f32 loops (the query heads of one key/value head over its
//! cached keys and values) are plain Rust, compiled twice: for any x86-64
//! (SSE2, four lanes) and with AVX2 and FMA enabled (eight lanes), chosen by
//! the same detection; on AVX2 a query's scores against eight keys are
//! intrinsics (eight accumulators, then a transpose). The cache holds
//! half-precision floats; each block of positions is widened to f32 once
//! (F16C on x86, `half` elsewhere: the conversion is exact) into a buffer
//! every query of the piece then reads. All give the same
//! bits: every sum runs in one fixed order, the code has no `mul_add`, and
//! Rust does not fuse a multiply and an add by itself; the softmax's `e^x`
//! is the crate's own polynomial ([`exp`]), not a call to the C library.
//!
//! This is the only module of the crate with `unsafe` code: unaligned 32-byte
//! loads from slices whose length is checked right before, and calls into
//! functions compiled for CPU features detected at run time.
#![allow(unsafe_code)]

pub(crate) mod dense;
pub(crate) mod int8;
pub(crate) mod packed;
pub(crate) mod packed_q4;

use std::sync::LazyLock;

use half::f16;
use half::slice::HalfFloatSliceExt;

/// Values per quantization block.
pub(crate) const BLOCK: usize = 32;

/// The instruction set the kernels run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isa {
    /// Portable Rust (any CPU).
    Portable,
    /// AVX2 with FMA (x86-64-v3).
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512 VNNI with 256-bit vectors (`vpdpbusd`).
    #[cfg(target_arch = "x86_64")]
    Avx512Vnni,
}

/// Environment variable that caps the instruction set (`portable`, `avx2`
/// or `avx512vnni`), for benchmarks and for working around a CPU problem.
pub(crate) const KERNELS_ENV: &str = "AGON_CPU_KERNELS";

static DETECTED: LazyLock<Isa> =
    LazyLock::new(|| choose(detect(), std::env::var(KERNELS_ENV).ok().as_deref()));

/// `best`, or the lesser instruction set `requested` names (anything else,
/// including a better one than the CPU has, keeps `best`).
fn choose(best: Isa, requested: Option<&str>) -> Isa {
    match requested.map(str::trim) {
        Some("portable") => Isa::Portable,
        #[cfg(target_arch = "x86_64")]
        Some("avx2") if best != Isa::Portable => Isa::Avx2,
        _ => best,
    }
}

fn detect() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        let avx2 = avx2_fma_f16c();
        if avx2 && is_x86_feature_detected!("avx512vnni") && is_x86_feature_detected!("avx512vl") {
            return Isa::Avx512Vnni;
        }
        if avx2 {
            return Isa::Avx2;
        }
    }
    Isa::Portable
}

/// AVX2, FMA and F16C (every AVX2 CPU made has F16C; the attention kernels
/// read the half-precision KV cache with it).
#[cfg(target_arch = "x86_64")]
fn avx2_fma_f16c() -> bool {
    is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("fma")
        && is_x86_feature_detected!("f16c")
}

/// The instruction set in use: the best this CPU supports, unless
/// [`KERNELS_ENV`] asks for a lesser one.
pub(crate) fn isa() -> Isa {
    *DETECTED
}

/// Every instruction set this CPU can run (for tests comparing them).
#[cfg(test)]
pub(crate) fn available() -> Vec<Isa> {
    let mut all = vec![Isa::Portable];
    #[cfg(target_arch = "x86_64")]
    {
        if avx2_fma_f16c() {
            all.push(Isa::Avx2);
        }
        if detect() == Isa::Avx512Vnni {
            all.push(Isa::Avx512Vnni);
        }
    }
    all
}

/// Rows of a Q8 matrix: `quants` is `rows × k` values, `scales` `rows × k/32`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Q8Rows<'a> {
    /// Quantized values, row-major.
    pub quants: &'a [i8],
    /// One scale per block of 32 values, row-major.
    pub scales: &'a [f32],
    /// Values per row (a multiple of 32).
    pub k: usize,
}

impl Q8Rows<'_> {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.quants.len() / self.k
    }

    fn consistent(&self) -> bool {
        self.k > 0
            && self.k.is_multiple_of(BLOCK)
            && self.quants.len().is_multiple_of(self.k)
            && self.scales.len() * BLOCK == self.quants.len()
    }
}

/// `out[t * stride + r] = w[r] · x[t]` for every weight row `r` and
/// activation row `t`, on the row-major layout, in portable Rust: the
/// products where no packed kernel runs ([`packed::available`]; on AVX2 and
/// AVX-512 VNNI the weights are packed at load).
///
/// # Panics
/// If the shapes disagree (a bug in the caller, not bad input).
pub(crate) fn matmul(w: Q8Rows<'_>, x: Q8Rows<'_>, out: &mut [f32], stride: usize) {
    assert!(
        w.consistent() && x.consistent() && w.k == x.k,
        "q8 matmul: inconsistent shapes"
    );
    let (rows, tokens) = (w.rows(), x.rows());
    assert!(
        tokens == 0 || rows == 0 || (tokens - 1) * stride + rows <= out.len(),
        "q8 matmul: output too small"
    );
    let blocks = w.k / BLOCK;
    for (r, (w_row, w_scales)) in w
        .quants
        .chunks_exact(w.k)
        .zip(w.scales.chunks_exact(blocks))
        .enumerate()
    {
        for t in 0..tokens {
            let x_row = &x.quants[t * x.k..(t + 1) * x.k];
            let x_scales = &x.scales[t * blocks..(t + 1) * blocks];
            out[t * stride + r] = portable_dot(w_row, w_scales, x_row, x_scales);
        }
    }
}

impl Isa {
    /// The name [`KERNELS_ENV`] accepts.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => "avx2",
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512Vnni => "avx512vnni",
        }
    }
}

/// Quantizes `values` in blocks of 32 as GGUF's Q8_0 does: per block
/// `d = max|x| / 127` (stored as f16), `q = round(x / d)` (half away from
/// zero), into `quants` (as many) and `scales` (one a block). On AVX2 CPUs
/// eight values at a time, with the same bits as the portable loop (the C
/// library's `roundf` per value).
pub(crate) fn quantize(values: &[f32], quants: &mut [i8], scales: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if isa() != Isa::Portable {
        // SAFETY: both SIMD instruction sets are only chosen when the CPU
        // has AVX2 (and so SSE4.1) and F16C.
        unsafe { x86::quantize_avx2(values, quants, scales) };
        return;
    }
    quantize_body(values, quants, scales);
}

/// [`quantize`] in portable Rust.
fn quantize_body(values: &[f32], quants: &mut [i8], scales: &mut [f32]) {
    for ((block, q), scale) in values
        .chunks_exact(BLOCK)
        .zip(quants.chunks_exact_mut(BLOCK))
        .zip(scales.iter_mut())
    {
        let mut max = 0f32;
        for x in block {
            max = max.max(x.abs());
        }
        let d = max / 127.0;
        let inverse = if d == 0.0 { 0.0 } else { 1.0 / d };
        *scale = f16::from_f32(d).to_f32();
        for (q, x) in q.iter_mut().zip(block) {
            // In [-127, 127] by construction of `d`.
            *q = (x * inverse).round() as i8;
        }
    }
}

/// One key/value head's slice of the cache: position `j`'s key is
/// `keys[j * stride + offset..][..head_dim]`, its value likewise. Half
/// precision: read as the exact f32 each stands for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeadCache<'a> {
    /// Keys, one row of `stride` values per position.
    pub keys: &'a [f16],
    /// Values, laid out as the keys.
    pub values: &'a [f16],
    /// Values per position (all key/value heads).
    pub stride: usize,
    /// Where this head's key and value start in a position's row.
    pub offset: usize,
    /// Values per head.
    pub head_dim: usize,
}

/// The query heads that read one key/value head: query `i` is
/// `values[i * head_dim..][..head_dim]` and sees positions `0..seen[i]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Queries<'a> {
    /// The queries' values, one after another.
    pub values: &'a [f32],
    /// Positions each query sees.
    pub seen: &'a [usize],
}

/// Keys (and values) read at a time by every query of [`attend`]: a block
/// stays in the first-level cache while each query reads it.
const KEY_BLOCK: usize = 64;

/// Causal attention of the query heads that read one key/value head: each
/// query's result goes to its place in `out` (as in [`Queries`]):
/// `Σ_j softmax_j(scale · q·k_j) · v_j`. The queries share each pass over
/// the keys and values (the cache is read once, not once per query); each
/// query's sums run in the same order as if it were alone, so the result
/// does not depend on which queries are grouped.
///
/// # Panics
/// If the shapes disagree or the cache is shorter than a query sees (a bug
/// in the caller).
pub(crate) fn attend(queries: Queries<'_>, cache: HeadCache<'_>, scale: f32, out: &mut [f32]) {
    attend_on(isa(), queries, cache, scale, out);
}

/// [`attend`] on instruction set `isa`.
pub(crate) fn attend_on(
    isa: Isa,
    queries: Queries<'_>,
    cache: HeadCache<'_>,
    scale: f32,
    out: &mut [f32],
) {
    let hd = cache.head_dim;
    let Queries { values, seen } = queries;
    assert!(
        hd > 0 && values.len() == seen.len() * hd && out.len() == values.len(),
        "attention: queries, positions and output disagree"
    );
    let longest = seen.iter().copied().max().unwrap_or(0);
    let needed = longest.saturating_sub(1) * cache.stride + cache.offset + hd;
    assert!(
        longest == 0 || (cache.keys.len() >= needed && cache.values.len() >= needed),
        "attention: cache shorter than the positions seen"
    );
    match isa {
        Isa::Portable => attention_body(
            queries,
            cache,
            scale,
            out,
            |q, keys| keys.map(|key| dot_f32(q, key)),
            |half, out| half.convert_to_f32_slice(out),
        ),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: both are only returned when the CPU has AVX2, FMA and F16C.
        Isa::Avx2 | Isa::Avx512Vnni => unsafe { x86::attention_avx2(queries, cache, scale, out) },
    }
}

/// [`attend`]'s loops; inlined into each caller, so compiled with its CPU
/// features. Plain `for` loops: an iterator's `fold` (`sum`, `collect`) may
/// stay an out-of-line call, compiled for the baseline CPU. `dots8` gives
/// [`dot_f32`] of a query with eight keys, `widen` writes a row of the cache
/// as f32: each block of keys (then of values) is widened once, into a
/// buffer that stays in the first-level cache while every query reads it.
#[inline(always)]
fn attention_body(
    queries: Queries<'_>,
    cache: HeadCache<'_>,
    scale: f32,
    out: &mut [f32],
    dots8: impl Fn(&[f32], [&[f32]; 8]) -> [f32; 8],
    widen: impl Fn(&[f16], &mut [f32]),
) {
    let hd = cache.head_dim;
    let Queries { values, seen } = queries;
    let longest = seen.iter().copied().max().unwrap_or(0);
    // The block of positions from `block` (at most KEY_BLOCK of them, none
    // past the longest query's) as f32, `hd` values a position.
    let mut rows = vec![0.0f32; KEY_BLOCK * hd];
    let widen_block = |rows: &mut [f32], half: &[f16], block: usize| {
        let end = (block + KEY_BLOCK).min(longest);
        let at = |j: usize| j * cache.stride + cache.offset;
        if cache.stride == hd {
            // The block's rows are one run of the cache.
            widen(&half[at(block)..at(end)], &mut rows[..(end - block) * hd]);
        } else {
            for (j, row) in (block..end).zip(rows.chunks_exact_mut(hd)) {
                widen(&half[at(j)..at(j) + hd], row);
            }
        }
    };
    // Query i's weights are `weights[i * longest..][..seen[i]]`.
    let mut weights = vec![0.0f32; seen.len() * longest];
    for block in (0..longest).step_by(KEY_BLOCK) {
        widen_block(&mut rows, cache.keys, block);
        let key = |j: usize| &rows[(j - block) * hd..][..hd];
        for (i, (&seen, q)) in seen.iter().zip(values.chunks_exact(hd)).enumerate() {
            let end = (block + KEY_BLOCK).min(seen);
            if end <= block {
                continue;
            }
            let weights = &mut weights[i * longest..];
            let mut j = block;
            while j + 8 <= end {
                let dots = dots8(q, std::array::from_fn(|k| key(j + k)));
                for (w, dot) in weights[j..j + 8].iter_mut().zip(dots) {
                    *w = dot * scale;
                }
                j += 8;
            }
            for (j, w) in (j..end).zip(&mut weights[j..end]) {
                *w = dot_f32(q, key(j)) * scale;
            }
        }
    }
    for (i, &seen) in seen.iter().enumerate() {
        let w = &mut weights[i * longest..][..seen];
        let mut max = f32::NEG_INFINITY;
        for &x in w.iter() {
            max = max.max(x);
        }
        for x in w.iter_mut() {
            *x = exp(*x - max);
        }
        let total = sum_f32(w);
        for x in w.iter_mut() {
            *x /= total;
        }
    }
    out.fill(0.0);
    for block in (0..longest).step_by(KEY_BLOCK) {
        widen_block(&mut rows, cache.values, block);
        let value = |j: usize| &rows[(j - block) * hd..][..hd];
        for (i, (&seen, o)) in seen.iter().zip(out.chunks_exact_mut(hd)).enumerate() {
            let end = (block + KEY_BLOCK).min(seen);
            if end <= block {
                continue;
            }
            // Four positions per pass over the output (kept in registers
            // for them), each value added in position order as one at a
            // time would.
            let weights = &weights[i * longest..];
            let mut j = block;
            while j + 4 <= end {
                let [w0, w1, w2, w3] = [0, 1, 2, 3].map(|k| weights[j + k]);
                let [v0, v1, v2, v3] = [0, 1, 2, 3].map(|k| value(j + k));
                for ((((o, a), b), c), d) in o.iter_mut().zip(v0).zip(v1).zip(v2).zip(v3) {
                    let mut x = *o;
                    x += w0 * a;
                    x += w1 * b;
                    x += w2 * c;
                    x += w3 * d;
                    *o = x;
                }
                j += 4;
            }
            for (j, &w) in (j..end).zip(&weights[j..end]) {
                for (o, &v) in o.iter_mut().zip(value(j)) {
                    *o += w * v;
                }
            }
        }
    }
}

/// Dot product in eight independent lanes (so it vectorizes), summed in a
/// fixed order whatever the vector width (as `Iterator::sum` would, from
/// −0.0, without its out-of-line `fold`).
#[inline(always)]
pub(crate) fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let mut tail = -0.0f32;
    for (x, y) in a8.remainder().iter().zip(b8.remainder()) {
        tail += x * y;
    }
    for (x, y) in a8.zip(b8) {
        for ((lane, x), y) in lanes.iter_mut().zip(x).zip(y) {
            *lane += x * y;
        }
    }
    let mut sum = -0.0f32;
    for lane in lanes {
        sum += lane;
    }
    sum + tail
}

/// Sum in eight independent lanes, added up in a fixed order (as
/// [`dot_f32`]), so it vectorizes and gives the same bits at any width.
#[inline(always)]
fn sum_f32(a: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let a8 = a.chunks_exact(8);
    let mut tail = -0.0f32;
    for x in a8.remainder() {
        tail += x;
    }
    for x in a8 {
        for (lane, x) in lanes.iter_mut().zip(x) {
            *lane += x;
        }
    }
    let mut sum = -0.0f32;
    for lane in lanes {
        sum += lane;
    }
    sum + tail
}

/// `e^x` for `x <= 0` (attention's shifted scores), within about 2 ulp of
/// the exact value, 0 below −87 (where `e^x` leaves the normal floats).
/// Branch-free multiplies and adds only (Cephes' `expf` polynomial on
/// `x − n·ln 2`, then `2^n` from its bits), so a loop of it vectorizes and
/// gives the same bits at any vector width, where `f32::exp` is a call per
/// value.
#[inline(always)]
fn exp(x: f32) -> f32 {
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    // ln 2 in two parts: `n · LN2_HI` is exact for the `n` used here.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // 1.5 · 2^23: adding it rounds to the nearest integer, kept in the
    // low bits of the float.
    const ROUND: f32 = 12_582_912.0;
    let clamped = x.max(-87.0);
    let shifted = clamped * LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = clamped - n * LN2_HI - n * LN2_LO;
    let mut p = 1.987_569_1e-4_f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let e = p * (r * r) + r + 1.0;
    // 2^n: n (in −126..=0) in the exponent's bits.
    let n_bits = shifted.to_bits().wrapping_sub(ROUND.to_bits()) as i32;
    let two_n = f32::from_bits(((n_bits + 127) as u32) << 23);
    if x < -87.0 { 0.0 } else { e * two_n }
}

fn portable_dot(w_row: &[i8], w_scales: &[f32], x_row: &[i8], x_scales: &[f32]) -> f32 {
    let mut sum = 0f32;
    for ((wb, xb), (ws, xs)) in w_row
        .chunks_exact(BLOCK)
        .zip(x_row.chunks_exact(BLOCK))
        .zip(w_scales.iter().zip(x_scales))
    {
        let dot: i32 = wb
            .iter()
            .zip(xb)
            .map(|(&a, &b)| i32::from(a) * i32::from(b))
            .sum();
        sum += ws * xs * dot as f32;
    }
    sum
}

/// The bit patterns of `v`, to compare products exactly (tests).
#[cfg(test)]
pub(crate) fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|f| f.to_bits()).collect()
}

/// `n` values in [-1, 1) from a linear congruential generator (tests).
#[cfg(test)]
pub(crate) fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
        })
        .collect()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use half::f16;

    use super::BLOCK;

    /// See [`super::quantize`]: a block's 32 values in four vectors; the
    /// rounding half away from zero as `roundf` does it, `trunc(y ±
    /// 0.49999997)` (the largest float below ½, so a value just below a
    /// half does not round up), exact for every `|y| ≤ 127`.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) fn quantize_avx2(values: &[f32], quants: &mut [i8], scales: &mut [f32]) {
        let abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
        let sign = _mm256_castsi256_ps(_mm256_set1_epi32(i32::MIN));
        let below_half = _mm256_set1_ps(0.499_999_97);
        for ((block, q), scale) in values
            .chunks_exact(BLOCK)
            .zip(quants.chunks_exact_mut(BLOCK))
            .zip(scales.iter_mut())
        {
            let v: [__m256; 4] = std::array::from_fn(|i| {
                let eight = &block[i * 8..i * 8 + 8];
                // SAFETY: eight floats are in `eight`; `loadu` has no
                // alignment requirement.
                unsafe { _mm256_loadu_ps(eight.as_ptr()) }
            });
            let m = _mm256_max_ps(
                _mm256_max_ps(_mm256_and_ps(v[0], abs), _mm256_and_ps(v[1], abs)),
                _mm256_max_ps(_mm256_and_ps(v[2], abs), _mm256_and_ps(v[3], abs)),
            );
            let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps::<1>(m));
            let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
            let max = _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps::<0b01>(m, m)));
            let d = max / 127.0;
            let inverse = if d == 0.0 { 0.0 } else { 1.0 / d };
            *scale = f16::from_f32(d).to_f32();
            let inverse = _mm256_set1_ps(inverse);
            let [a, b, c, e] = v.map(|x| {
                let y = _mm256_mul_ps(x, inverse);
                let nudge = _mm256_or_ps(_mm256_and_ps(y, sign), below_half);
                let rounded = _mm256_round_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(
                    _mm256_add_ps(y, nudge),
                );
                _mm256_cvttps_epi32(rounded)
            });
            // Packing works within 128-bit halves; the permutation puts
            // the 32 bytes back in order.
            let bytes = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, e));
            let bytes =
                _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            assert!(q.len() >= BLOCK);
            // SAFETY: `q` holds 32 bytes (checked above); `storeu` has no
            // alignment requirement.
            unsafe { _mm256_storeu_si256(q.as_mut_ptr().cast(), bytes) };
        }
    }

    /// See [`super::attend_on`]; the shapes are checked by the caller.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) fn attention_avx2(
        queries: super::Queries<'_>,
        cache: super::HeadCache<'_>,
        scale: f32,
        out: &mut [f32],
    ) {
        super::attention_body(
            queries,
            cache,
            scale,
            out,
            |q, keys| dots8(q, keys),
            |half, out| widen(half, out),
        );
    }

    /// Eight half-precision values as f32 (exact), from `v[at..at + 8]`.
    ///
    /// # Safety
    /// `at + 8 <= v.len()`.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn load_f16(v: &[f16], at: usize) -> __m256 {
        // SAFETY: eight `f16` (16 bytes) from `at` are in `v` (the
        // caller's promise); `loadu` has no alignment requirement.
        _mm256_cvtph_ps(unsafe { _mm_loadu_si128(v.as_ptr().add(at).cast()) })
    }

    /// `half` as f32 into `out` (the same length), eight at a time.
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    fn widen(half: &[f16], out: &mut [f32]) {
        assert_eq!(
            half.len(),
            out.len(),
            "attention: rows of different lengths"
        );
        let full = half.len() - half.len() % 8;
        for at in (0..full).step_by(8) {
            // SAFETY: `at + 8 <= full <= out.len() == half.len()`;
            // `storeu` has no alignment requirement.
            unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(at), load_f16(half, at)) };
        }
        for (o, h) in out[full..].iter_mut().zip(&half[full..]) {
            *o = h.to_f32();
        }
    }

    /// [`super::dot_f32`] of one query with eight keys, the same bits: each
    /// key's eight lanes accumulate in their own register (eight
    /// independent chains, where one key alone is a chain of dependent
    /// adds), then the eight registers are transposed so that lane `l` of
    /// every key is added in the same order as `dot_f32` adds them, eight
    /// keys at a time.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn dots8(q: &[f32], keys: [&[f32]; 8]) -> [f32; 8] {
        let n = q.len();
        assert!(
            keys.iter().all(|key| key.len() >= n),
            "attention: a key shorter than its query"
        );
        let full = n - n % 8;
        let load = |v: &[f32], at: usize| {
            // SAFETY: `at + 8 <= full <= v.len()` (checked above for the
            // keys; `full <= n` for the query), and `loadu` has no
            // alignment requirement.
            unsafe { _mm256_loadu_ps(v.as_ptr().add(at)) }
        };
        let mut acc = [_mm256_setzero_ps(); 8];
        for at in (0..full).step_by(8) {
            let qv = load(q, at);
            for (acc, key) in acc.iter_mut().zip(keys) {
                *acc = _mm256_add_ps(*acc, _mm256_mul_ps(qv, load(key, at)));
            }
        }
        // Transpose: `lanes[l]` holds lane `l` of every key's sums.
        let [a0, a1, a2, a3, a4, a5, a6, a7] = acc;
        let (t0, t1) = (_mm256_unpacklo_ps(a0, a1), _mm256_unpackhi_ps(a0, a1));
        let (t2, t3) = (_mm256_unpacklo_ps(a2, a3), _mm256_unpackhi_ps(a2, a3));
        let (t4, t5) = (_mm256_unpacklo_ps(a4, a5), _mm256_unpackhi_ps(a4, a5));
        let (t6, t7) = (_mm256_unpacklo_ps(a6, a7), _mm256_unpackhi_ps(a6, a7));
        let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
        let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
        let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
        let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
        let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
        let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
        let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
        let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
        let lanes = [
            _mm256_permute2f128_ps::<0x20>(u0, u4),
            _mm256_permute2f128_ps::<0x20>(u1, u5),
            _mm256_permute2f128_ps::<0x20>(u2, u6),
            _mm256_permute2f128_ps::<0x20>(u3, u7),
            _mm256_permute2f128_ps::<0x31>(u0, u4),
            _mm256_permute2f128_ps::<0x31>(u1, u5),
            _mm256_permute2f128_ps::<0x31>(u2, u6),
            _mm256_permute2f128_ps::<0x31>(u3, u7),
        ];
        // `-0.0 + lane 0` is lane 0, as `dot_f32` starts its sum.
        let mut sums = lanes[0];
        for lane in &lanes[1..] {
            sums = _mm256_add_ps(sums, *lane);
        }
        let mut out = [0.0f32; 8];
        // SAFETY: `out` holds eight values; `storeu` has no alignment
        // requirement.
        unsafe { _mm256_storeu_ps(out.as_mut_ptr(), sums) };
        if full < n {
            for (out, key) in out.iter_mut().zip(keys) {
                let mut tail = -0.0f32;
                for (x, y) in q[full..].iter().zip(&key[full..n]) {
                    tail += x * y;
                }
                *out += tail;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic cache of 3 key/value heads of 64 values, `positions` long.
    fn test_cache(positions: usize) -> (Vec<f16>, Vec<f16>) {
        let value = |i: usize| f16::from_f32(((i * 7919 % 1000) as f32 - 500.0) / 250.0);
        let keys = (0..positions * 192).map(value).collect();
        let values = (0..positions * 192).map(|i| value(i + 17)).collect();
        (keys, values)
    }

    fn of<'a>(values: &'a [f32], seen: &'a [usize]) -> Queries<'a> {
        Queries { values, seen }
    }

    #[test]
    fn attention_gives_the_same_bits_on_every_instruction_set() {
        // SmolLM2's heads of 64 values, and heads whose length is not a
        // multiple of the eight lanes (the keys' tails summed apart); a
        // head's positions one after another (as the model's cache holds
        // them) or every third row of 64 values.
        for (hd, stride) in [(64, 64), (20, 20), (64, 192), (20, 192)] {
            attention_gives_the_same_bits_with(hd, stride);
        }
    }

    fn attention_gives_the_same_bits_with(hd: usize, stride: usize) {
        let seen = 137;
        let (keys, values) = test_cache(seen);
        let q: Vec<f32> = (0..hd)
            .map(|i| ((i * 31 % 17) as f32 - 8.0) / 4.0)
            .collect();
        let cache = HeadCache {
            keys: &keys,
            values: &values,
            stride,
            offset: 64,
            head_dim: hd,
        };
        let mut reference = vec![0.0; hd];
        attend_on(Isa::Portable, of(&q, &[seen]), cache, 0.125, &mut reference);
        assert!(reference.iter().all(|v| v.is_finite()));
        assert!(reference.iter().any(|&v| v != 0.0));
        // The same attention in f64 on the values the cache holds.
        let at = |v: &[f16], j: usize, i: usize| f64::from(v[j * stride + 64 + i].to_f32());
        let scores: Vec<f64> = (0..seen)
            .map(|j| {
                0.125
                    * (0..hd)
                        .map(|i| f64::from(q[i]) * at(&keys, j, i))
                        .sum::<f64>()
            })
            .collect();
        let max = scores.iter().copied().fold(f64::MIN, f64::max);
        let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
        let total: f64 = weights.iter().sum();
        for (i, &o) in reference.iter().enumerate() {
            let exact: f64 = (0..seen)
                .map(|j| weights[j] / total * at(&values, j, i))
                .sum();
            assert!(
                (f64::from(o) - exact).abs() < 1e-5,
                "value {i}: {o} against {exact}"
            );
        }
        for isa in available() {
            let mut out = vec![1.0; hd];
            attend_on(isa, of(&q, &[seen]), cache, 0.125, &mut out);
            assert_eq!(bits(&out), bits(&reference), "{}", isa.name());
        }
    }

    #[test]
    fn queries_read_together_give_the_bits_each_gives_alone() {
        // Six queries (two tokens of three heads) seeing 70 to 140
        // positions: more than one block of keys, blocks read part-way.
        let (hd, stride) = (64, 192);
        let seen = [70, 70, 70, 140, 140, 129];
        let (keys, values) = test_cache(140);
        let queries: Vec<f32> = (0..seen.len() * hd)
            .map(|i| ((i * 37 % 23) as f32 - 11.0) / 8.0)
            .collect();
        let cache = HeadCache {
            keys: &keys,
            values: &values,
            stride,
            offset: 128,
            head_dim: hd,
        };
        for isa in available() {
            let mut together = vec![0.0; queries.len()];
            attend_on(isa, of(&queries, &seen), cache, 0.125, &mut together);
            for (i, &seen) in seen.iter().enumerate() {
                let mut single = vec![0.0; hd];
                let q = &queries[i * hd..(i + 1) * hd];
                attend_on(isa, of(q, &[seen]), cache, 0.125, &mut single);
                assert_eq!(
                    bits(&together[i * hd..(i + 1) * hd]),
                    bits(&single),
                    "query {i}"
                );
            }
        }
    }

    #[test]
    fn quantizing_gives_the_bits_of_the_portable_build() {
        // Halves (ties round away from zero), a zero block, extremes.
        let mut values: Vec<f32> = (0..320).map(|i| (i as f32 - 160.0) * 0.37).collect();
        values[..32]
            .iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v = i as f32 - 15.5);
        values[32..64].fill(0.0);
        values[64] = 1e-30;
        values[65] = -3.4e38;
        // A block whose scale is 1, so its values are rounded as they are.
        let exact = [
            127.0,
            0.5,
            -0.5,
            1.5,
            -2.5,
            2.499_999_8,
            0.499_999_97,
            -126.5,
        ];
        values[96..104].copy_from_slice(&exact);
        let blocks = values.len() / BLOCK;
        let (mut q1, mut s1) = (vec![0i8; values.len()], vec![0f32; blocks]);
        let (mut q2, mut s2) = (vec![0i8; values.len()], vec![0f32; blocks]);
        quantize(&values, &mut q1, &mut s1);
        quantize_body(&values, &mut q2, &mut s2);
        assert_eq!(q1, q2);
        assert_eq!(bits(&s1), bits(&s2));
        // Against the definition, the C library's `roundf` included.
        for (i, (&x, &q)) in values.iter().zip(&q1).enumerate() {
            let max = values[i / BLOCK * BLOCK..][..BLOCK]
                .iter()
                .fold(0f32, |m, v| m.max(v.abs()));
            let d = max / 127.0;
            let expected = if d == 0.0 {
                0
            } else {
                (x * (1.0 / d)).round() as i8
            };
            assert_eq!(q, expected, "value {i}: {x}");
        }
    }

    #[test]
    fn exp_is_within_two_ulp_of_the_exact_value() {
        let mut worst = 0.0f64;
        for i in 0..=870_000 {
            let x = -(i as f32) * 1e-4;
            let exact = f64::from(x).exp();
            let ulp = f64::from(f32::EPSILON) * exact;
            worst = worst.max((f64::from(exp(x)) - exact).abs() / ulp);
        }
        assert!(worst <= 2.0, "{worst} ulp");
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-88.0), 0.0);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
    }

    #[test]
    #[should_panic(expected = "cache shorter")]
    fn attention_over_a_short_cache_is_a_bug_caught() {
        let (keys, values, q) = (vec![f16::ZERO; 100], vec![f16::ZERO; 100], vec![0.0; 64]);
        let cache = HeadCache {
            keys: &keys,
            values: &values,
            stride: 64,
            offset: 0,
            head_dim: 64,
        };
        attend(of(&q, &[2]), cache, 1.0, &mut vec![0.0; 64]);
    }

    #[test]
    fn the_environment_can_only_ask_for_less() {
        let best = detect();
        assert_eq!(choose(best, None), best);
        assert_eq!(choose(best, Some(" portable ")), Isa::Portable);
        assert_eq!(choose(best, Some("avx512vnni")), best);
        assert_eq!(choose(best, Some("nonsense")), best);
        assert_eq!(choose(Isa::Portable, Some("avx2")), Isa::Portable);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(choose(Isa::Avx512Vnni, Some("avx2")), Isa::Avx2);
        assert_eq!(choose(best, Some(best.name())), best);
    }
}
