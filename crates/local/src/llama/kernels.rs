//! Int8 dot products of Q8 weight rows with Q8 activation rows, the inner
//! loop of every matrix product of the model. Blocks of 32 `i8` values share
//! one `f32` scale: `dot = Σ_b  w_scale[b] · x_scale[b] · Σ_i w[b,i] · x[b,i]`.
//!
//! Three implementations, chosen once at run time: AVX-512 VNNI (on 256-bit
//! vectors), AVX2 + FMA, and portable Rust. The SIMD ones use the usual sign
//! trick (`|w|` as unsigned times `x` carrying `w`'s sign), which is exact
//! because both sides are quantized to `[-127, 127]`.
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

/// Calls `dot(w_row, w_scales, x_row, x_scales)` for every pair of rows
/// and stores the result at `out[t * stride + r]`. Inlined into each
/// kernel, so the closure is compiled with that kernel's CPU features.
#[inline(always)]
fn each_product(
    w: Q8Rows<'_>,
    x: Q8Rows<'_>,
    out: &mut [f32],
    stride: usize,
    mut dot: impl FnMut(&[i8], &[f32], &[i8], &[f32]) -> f32,
) {
    let blocks = w.k / BLOCK;
    for (r, (w_row, w_scales)) in w
        .quants
        .chunks_exact(w.k)
        .zip(w.scales.chunks_exact(blocks))
        .enumerate()
    {
        for (t, (x_row, x_scales)) in x
            .quants
            .chunks_exact(x.k)
            .zip(x.scales.chunks_exact(blocks))
            .enumerate()
        {
            out[t * stride + r] = dot(w_row, w_scales, x_row, x_scales);
        }
    }
}

fn matmul_portable(w: Q8Rows<'_>, x: Q8Rows<'_>, out: &mut [f32], stride: usize) {
    each_product(w, x, out, stride, |w_row, w_scales, x_row, x_scales| {
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
    });
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{BLOCK, Q8Rows, each_product};

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
                each_product(w, x, out, stride, |w_row, w_scales, x_row, x_scales| {
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
                });
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

    matmul_kernel!(matmul_avx2, "avx2,fma", block_dot_avx2);
    matmul_kernel!(matmul_vnni, "avx2,fma,avx512vnni,avx512vl", block_dot_vnni);
}

#[cfg(test)]
mod tests {
    use super::*;

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
