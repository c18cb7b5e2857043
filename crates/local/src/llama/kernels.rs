//! Int8 dot products of Q8 weight rows with Q8 activation rows, the inner
//! loop of every matrix product of the model. Blocks of 32 `i8` values share
//! one `f32` scale: `dot = Σ_b  w_scale[b] · x_scale[b] · Σ_i w[b,i] · x[b,i]`.
//!
//! Three implementations, chosen once at run time: AVX-512 VNNI (on 256-bit
//! vectors), AVX2 + FMA, and portable Rust. The SIMD ones use the usual sign
//! trick (`|w|` as unsigned times `x` carrying `w`'s sign), which is exact
//! because both sides are quantized to `[-127, 127]`.
//!
//! Attention's f32 loops (one query head over the cached keys and values)
//! are plain Rust, compiled twice: for any x86-64 (SSE2, four lanes) and with
//! AVX2 and FMA enabled (eight lanes), chosen by the same detection. The two
//! give the same bits: the code has no `mul_add`, and Rust does not fuse a
//! multiply and an add by itself, so only the vector width differs.
//!
//! This is the only module of the crate with `unsafe` code: unaligned 32-byte
//! loads from slices whose length is checked right before, and calls into
//! functions compiled for CPU features detected at run time.
#![allow(unsafe_code)]

use std::sync::LazyLock;

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
        let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
        if avx2 && is_x86_feature_detected!("avx512vnni") && is_x86_feature_detected!("avx512vl") {
            return Isa::Avx512Vnni;
        }
        if avx2 {
            return Isa::Avx2;
        }
    }
    Isa::Portable
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
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
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
/// activation row `t`, on instruction set `isa`.
///
/// # Panics
/// If the shapes disagree (a bug in the caller, not bad input).
pub(crate) fn matmul_on(isa: Isa, w: Q8Rows<'_>, x: Q8Rows<'_>, out: &mut [f32], stride: usize) {
    assert!(
        w.consistent() && x.consistent() && w.k == x.k,
        "q8 matmul: inconsistent shapes"
    );
    let (rows, tokens) = (w.rows(), x.rows());
    assert!(
        tokens == 0 || rows == 0 || (tokens - 1) * stride + rows <= out.len(),
        "q8 matmul: output too small"
    );
    match isa {
        Isa::Portable => matmul_portable(w, x, out, stride),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` is only returned when the CPU has AVX2 and FMA.
        Isa::Avx2 => unsafe { x86::matmul_avx2(w, x, out, stride) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512Vnni` is only returned when the CPU has
        // AVX2, FMA, AVX-512 VNNI and AVX-512 VL.
        Isa::Avx512Vnni => unsafe { x86::matmul_vnni(w, x, out, stride) },
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

/// [`matmul_on`] with the instruction set in use.
pub(crate) fn matmul(w: Q8Rows<'_>, x: Q8Rows<'_>, out: &mut [f32], stride: usize) {
    matmul_on(isa(), w, x, out, stride);
}

/// One head's slice of the key/value cache: position `j`'s key is
/// `keys[j * stride + offset..][..head_dim]`, its value likewise.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeadCache<'a> {
    /// Keys, one row of `stride` values per position.
    pub keys: &'a [f32],
    /// Values, laid out as the keys.
    pub values: &'a [f32],
    /// Values per position (all key/value heads).
    pub stride: usize,
    /// Where this head's key and value start in a position's row.
    pub offset: usize,
    /// Positions the query sees (`0..seen`).
    pub seen: usize,
}

/// Causal attention of one query head `q` over `cache`, into `out` (the
/// head's `q.len()` values): `out = Σ_j softmax_j(scale · q·k_j) · v_j`.
///
/// # Panics
/// If the cache is shorter than `seen` positions (a bug in the caller).
pub(crate) fn attend_head(q: &[f32], cache: HeadCache<'_>, scale: f32, out: &mut [f32]) {
    attend_head_on(isa(), q, cache, scale, out);
}

/// [`attend_head`] on instruction set `isa`.
pub(crate) fn attend_head_on(
    isa: Isa,
    q: &[f32],
    cache: HeadCache<'_>,
    scale: f32,
    out: &mut [f32],
) {
    let needed = cache.seen.saturating_sub(1) * cache.stride + cache.offset + q.len();
    assert!(
        cache.seen == 0 || (cache.keys.len() >= needed && cache.values.len() >= needed),
        "attention: cache shorter than the positions seen"
    );
    match isa {
        Isa::Portable => attention_body(q, cache, scale, out),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: both are only returned when the CPU has AVX2 and FMA.
        Isa::Avx2 | Isa::Avx512Vnni => unsafe { x86::attention_avx2(q, cache, scale, out) },
    }
}

/// [`attend_head`]'s loops; inlined into each caller, so compiled with its
/// CPU features. Plain `for` loops: an iterator's `fold` (`sum`, `collect`)
/// may stay an out-of-line call, compiled for the baseline CPU.
#[inline(always)]
fn attention_body(q: &[f32], cache: HeadCache<'_>, scale: f32, out: &mut [f32]) {
    let hd = q.len();
    let row = |j: usize| -> std::ops::Range<usize> {
        let start = j * cache.stride + cache.offset;
        start..start + hd
    };
    let mut weights = vec![0.0f32; cache.seen];
    let mut max = f32::NEG_INFINITY;
    for (j, w) in weights.iter_mut().enumerate() {
        *w = dot_f32(q, &cache.keys[row(j)]) * scale;
        max = max.max(*w);
    }
    let mut total = 0.0;
    for w in &mut weights {
        *w = (*w - max).exp();
        total += *w;
    }
    out.fill(0.0);
    for (j, w) in weights.iter().enumerate() {
        let w = w / total;
        for (o, &v) in out.iter_mut().zip(&cache.values[row(j)]) {
            *o += w * v;
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

/// Activation rows a SIMD kernel takes per pass over a weight row.
const TILE: usize = 4;

/// Stores the product of weight row `r` and activation row `t` at
/// `out[t * stride + r]` for every pair of rows: [`TILE`] activation rows
/// at a time (`dot_tile`: in the SIMD kernels their blocks are read
/// together, so the weight block is loaded and its sign taken once, and
/// the tile's sums are independent chains), the last rows one at a time
/// (`dot`). Each product sums the same terms in the same order as `dot`
/// would, so the results are the same bits. Inlined into each kernel, so
/// the closures are compiled with that kernel's CPU features.
#[inline(always)]
fn each_product_tiled(
    w: Q8Rows<'_>,
    x: Q8Rows<'_>,
    out: &mut [f32],
    stride: usize,
    mut dot: impl FnMut(&[i8], &[f32], &[i8], &[f32]) -> f32,
    mut dot_tile: impl FnMut(&[i8], &[f32], [(&[i8], &[f32]); TILE]) -> [f32; TILE],
) {
    let blocks = w.k / BLOCK;
    let tokens = x.rows();
    let x_row = |t: usize| {
        (
            &x.quants[t * x.k..(t + 1) * x.k],
            &x.scales[t * blocks..(t + 1) * blocks],
        )
    };
    for (r, (w_row, w_scales)) in w
        .quants
        .chunks_exact(w.k)
        .zip(w.scales.chunks_exact(blocks))
        .enumerate()
    {
        let mut t = 0;
        while t + TILE <= tokens {
            let sums = dot_tile(
                w_row,
                w_scales,
                [x_row(t), x_row(t + 1), x_row(t + 2), x_row(t + 3)],
            );
            for (i, sum) in sums.into_iter().enumerate() {
                out[(t + i) * stride + r] = sum;
            }
            t += TILE;
        }
        while t < tokens {
            let (x_quants, x_scales) = x_row(t);
            out[t * stride + r] = dot(w_row, w_scales, x_quants, x_scales);
            t += 1;
        }
    }
}

fn matmul_portable(w: Q8Rows<'_>, x: Q8Rows<'_>, out: &mut [f32], stride: usize) {
    each_product_tiled(w, x, out, stride, portable_dot, |w_row, w_scales, xs| {
        xs.map(|(x_row, x_scales)| portable_dot(w_row, w_scales, x_row, x_scales))
    });
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

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{BLOCK, Q8Rows, TILE, each_product_tiled};

    /// Loads one block of 32 values.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load(block: &[i8]) -> __m256i {
        assert!(block.len() >= BLOCK);
        // SAFETY: the slice holds at least 32 bytes (checked above) and
        // `loadu` has no alignment requirement.
        unsafe { _mm256_loadu_si256(block.as_ptr().cast()) }
    }

    /// Horizontal sum of eight lanes.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn sum_lanes(v: __m256) -> f32 {
        let quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
        let one = _mm_add_ss(pair, _mm_shuffle_ps::<0b01>(pair, pair));
        _mm_cvtss_f32(one)
    }

    macro_rules! matmul_kernel {
        ($name:ident, $features:literal, $block_dot:ident) => {
            /// See [`super::matmul_on`]; shapes are checked by the caller.
            #[target_feature(enable = $features)]
            pub(super) fn $name(w: Q8Rows<'_>, x: Q8Rows<'_>, out: &mut [f32], stride: usize) {
                let dot = |w_row: &[i8], w_scales: &[f32], x_row: &[i8], x_scales: &[f32]| {
                    let mut acc = _mm256_setzero_ps();
                    for ((wb, xb), (ws, xs)) in w_row
                        .chunks_exact(BLOCK)
                        .zip(x_row.chunks_exact(BLOCK))
                        .zip(w_scales.iter().zip(x_scales))
                    {
                        let (wv, xv) = (load(wb), load(xb));
                        // |w| as unsigned bytes; x with w's sign.
                        let dot = $block_dot(_mm256_sign_epi8(wv, wv), _mm256_sign_epi8(xv, wv));
                        acc =
                            _mm256_fmadd_ps(_mm256_set1_ps(ws * xs), _mm256_cvtepi32_ps(dot), acc);
                    }
                    sum_lanes(acc)
                };
                // The same terms in the same order for each of the tile's
                // rows; the weight block loaded and made unsigned once.
                let dot_tile = |w_row: &[i8], w_scales: &[f32], xs: [(&[i8], &[f32]); TILE]| {
                    let mut acc = [_mm256_setzero_ps(); TILE];
                    for (b, (wb, ws)) in w_row.chunks_exact(BLOCK).zip(w_scales).enumerate() {
                        let wv = load(wb);
                        let unsigned = _mm256_sign_epi8(wv, wv);
                        for (acc, (x_row, x_scales)) in acc.iter_mut().zip(xs) {
                            let xv = load(&x_row[b * BLOCK..]);
                            let dot = $block_dot(unsigned, _mm256_sign_epi8(xv, wv));
                            *acc = _mm256_fmadd_ps(
                                _mm256_set1_ps(ws * x_scales[b]),
                                _mm256_cvtepi32_ps(dot),
                                *acc,
                            );
                        }
                    }
                    [
                        sum_lanes(acc[0]),
                        sum_lanes(acc[1]),
                        sum_lanes(acc[2]),
                        sum_lanes(acc[3]),
                    ]
                };
                each_product_tiled(w, x, out, stride, dot, dot_tile);
            }
        };
    }

    /// Eight partial sums of 4 products of a block (AVX2).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn block_dot_avx2(unsigned: __m256i, signed: __m256i) -> __m256i {
        let pairs = _mm256_maddubs_epi16(unsigned, signed);
        _mm256_madd_epi16(pairs, _mm256_set1_epi16(1))
    }

    /// Eight partial sums of 4 products of a block (one `vpdpbusd`).
    #[inline]
    #[target_feature(enable = "avx2,avx512vnni,avx512vl")]
    fn block_dot_vnni(unsigned: __m256i, signed: __m256i) -> __m256i {
        _mm256_dpbusd_epi32(_mm256_setzero_si256(), unsigned, signed)
    }

    /// See [`super::attend_head_on`]; the cache's length is checked by the
    /// caller.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn attention_avx2(
        q: &[f32],
        cache: super::HeadCache<'_>,
        scale: f32,
        out: &mut [f32],
    ) {
        super::attention_body(q, cache, scale, out);
    }

    matmul_kernel!(matmul_avx2, "avx2,fma", block_dot_avx2);
    matmul_kernel!(matmul_vnni, "avx2,fma,avx512vnni,avx512vl", block_dot_vnni);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attention_gives_the_same_bits_on_every_instruction_set() {
        // A deterministic cache: 3 key/value heads of 64 values, 37 positions.
        let (hd, stride, seen) = (64, 192, 37);
        let value = |i: usize| ((i * 7919 % 1000) as f32 - 500.0) / 250.0;
        let keys: Vec<f32> = (0..seen * stride).map(value).collect();
        let values: Vec<f32> = (0..seen * stride).map(|i| value(i + 17)).collect();
        let q: Vec<f32> = (0..hd).map(|i| value(i * 3 + 5)).collect();
        let cache = HeadCache {
            keys: &keys,
            values: &values,
            stride,
            offset: 64,
            seen,
        };
        let mut reference = vec![0.0; hd];
        attend_head_on(Isa::Portable, &q, cache, 0.125, &mut reference);
        assert!(reference.iter().all(|v| v.is_finite()));
        assert!(reference.iter().any(|&v| v != 0.0));
        // The weights sum to one: each output lies within its values' range.
        for (i, &o) in reference.iter().enumerate() {
            let column = (0..seen).map(|j| values[j * stride + 64 + i]);
            let (lo, hi) = column.fold((f32::MAX, f32::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
            assert!(o >= lo - 1e-5 && o <= hi + 1e-5, "{o} outside {lo}..{hi}");
        }
        for isa in available() {
            let mut out = vec![1.0; hd];
            attend_head_on(isa, &q, cache, 0.125, &mut out);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&out), bits(&reference), "{}", isa.name());
        }
    }

    #[test]
    #[should_panic(expected = "cache shorter")]
    fn attention_over_a_short_cache_is_a_bug_caught() {
        let (keys, values, q) = (vec![0.0; 100], vec![0.0; 100], vec![0.0; 64]);
        let cache = HeadCache {
            keys: &keys,
            values: &values,
            stride: 64,
            offset: 0,
            seen: 2,
        };
        attend_head(&q, cache, 1.0, &mut vec![0.0; 64]);
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
