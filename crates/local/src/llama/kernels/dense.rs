//! f32 matrix products for the sentence embedder's BERT: `out[t][r] =
//! x[t] · w[r]` with the weights stored one output per row (as PyTorch's
//! `Linear` saves them). A tile of activation rows × weight rows keeps its
//! sums in registers, so each loaded weight vector serves several tokens
//! and each activation vector several outputs.
//!
//! Three builds, chosen with the chat model's instruction set
//! ([`super::isa`]): AVX-512 (16 lanes, tiles of 4 × 4 products, fused
//! multiply-add) and AVX2 + FMA (8 lanes, 4 × 2 tiles, fused), both one
//! intrinsics loop written once as a macro, over blocks of 32 weight rows
//! that every group of activation rows reads while they are in the core's
//! cache (a matrix read from memory once: 25–38 → 59–64 GFLOP/s on one
//! AVX-512 core for 24 tokens × 384–1,536); and portable Rust (one product
//! at a time in 8 lanes, a multiply then an add). Unlike the chat model's kernels
//! these do not give the same bits on every instruction set (lane counts
//! and fusing differ); each agrees with a float64 reference to f32
//! rounding (the embedder's reference test).

#[cfg(target_arch = "x86_64")]
use std::sync::LazyLock;

use super::Isa;

/// Whether the AVX-512 build may run: the CPU has AVX-512 F (every
/// AVX-512 VNNI CPU does; checked rather than assumed).
#[cfg(target_arch = "x86_64")]
static AVX512F: LazyLock<bool> = LazyLock::new(|| {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("fma")
});

/// `out[t * w_rows + r] = x[t] · w[r]`, where `x` holds rows of `k` values
/// and `w` holds `w_rows = w.len() / k` rows of `k` values.
///
/// # Panics
/// If `k` is 0, a length is not a multiple of `k`, or `out` has not
/// `x_rows × w_rows` values (a bug in the caller).
pub(crate) fn products(x: &[f32], w: &[f32], k: usize, out: &mut [f32]) {
    products_on(super::isa(), x, w, k, out);
}

/// [`products`] on instruction set `isa`.
pub(crate) fn products_on(isa: Isa, x: &[f32], w: &[f32], k: usize, out: &mut [f32]) {
    assert!(
        k > 0 && x.len().is_multiple_of(k) && w.len().is_multiple_of(k),
        "dense products: rows must be whole"
    );
    assert_eq!(
        out.len(),
        (x.len() / k) * (w.len() / k),
        "dense products: output size"
    );
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `AVX512F` checked AVX-512 F, AVX2 and FMA on this CPU.
        Isa::Avx512Vnni if *AVX512F => unsafe { x86::products_avx512(x, w, k, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` and `Isa::Avx512Vnni` are only chosen on CPUs
        // with AVX2 and FMA.
        Isa::Avx2 | Isa::Avx512Vnni => unsafe { x86::products_avx2(x, w, k, out) },
        Isa::Portable => products_portable(x, w, k, out),
    }
}

/// The portable build: each product the chat model's eight-lane
/// [`super::dot_f32`] (which the compiler vectorizes for any x86-64 or ARM
/// CPU).
fn products_portable(x: &[f32], w: &[f32], k: usize, out: &mut [f32]) {
    let rows = w.len() / k;
    for (t, x_row) in x.chunks_exact(k).enumerate() {
        for (r, w_row) in w.chunks_exact(k).enumerate() {
            out[t * rows + r] = super::dot_f32(x_row, w_row);
        }
    }
}

/// `out[t][c] = Σ_i a[t][i] · b[i][c]`: `a` holds rows of `inner` values,
/// `b` holds `inner` rows of `out`'s width. Each output row is built as a
/// sum of `b`'s rows scaled by `a`'s values (a multiply, then an add; never
/// fused), so a product never needs a horizontal sum: attention's products
/// of one head (32 values a query and key) are too short for
/// [`products`]' tiles, whose per-product reductions took a fifth of an
/// embedding's time. Compiled for AVX-512, AVX2 and any x86-64 (or other
/// CPU) alike; the builds differ only in lane counts, which do not change
/// the order of any sum, so all give the same bits.
///
/// # Panics
/// If a length is not a whole number of rows (a bug in the caller).
pub(crate) fn row_products(a: &[f32], b: &[f32], inner: usize, out: &mut [f32]) {
    row_products_on(super::isa(), a, b, inner, out);
}

/// [`row_products`] on instruction set `isa`.
pub(crate) fn row_products_on(isa: Isa, a: &[f32], b: &[f32], inner: usize, out: &mut [f32]) {
    assert!(
        inner > 0 && a.len().is_multiple_of(inner) && b.len().is_multiple_of(inner),
        "row products: rows must be whole"
    );
    let width = b.len() / inner;
    assert_eq!(
        out.len(),
        a.len() / inner * width,
        "row products: output size"
    );
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `AVX512F` checked AVX-512 F on this CPU.
        Isa::Avx512Vnni if *AVX512F => unsafe { x86::row_products_avx512(a, b, inner, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: both instruction sets are only chosen on CPUs with AVX2.
        Isa::Avx2 | Isa::Avx512Vnni => unsafe { x86::row_products_avx2(a, b, inner, out) },
        _ => row_products_body(a, b, inner, out),
    }
}

/// [`row_products`]' loops, which each build vectorizes for its lanes.
#[inline(always)]
fn row_products_body(a: &[f32], b: &[f32], inner: usize, out: &mut [f32]) {
    let width = b.len() / inner;
    if width == 0 {
        return;
    }
    for (row, a_row) in out.chunks_exact_mut(width).zip(a.chunks_exact(inner)) {
        row.fill(0.0);
        for (&scale, b_row) in a_row.iter().zip(b.chunks_exact(width)) {
            for (o, &v) in row.iter_mut().zip(b_row) {
                *o += scale * v;
            }
        }
    }
}

/// One dot product in `L` lanes, fused (the AVX tiles' edges).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn dot<const L: usize>(a: &[f32], b: &[f32], fma: impl Fn(f32, f32, f32) -> f32) -> f32 {
    let mut lanes = [0.0f32; L];
    let (a_l, b_l) = (a.chunks_exact(L), b.chunks_exact(L));
    let (a_tail, b_tail) = (a_l.remainder(), b_l.remainder());
    for (x, y) in a_l.zip(b_l) {
        for l in 0..L {
            lanes[l] = fma(x[l], y[l], lanes[l]);
        }
    }
    let mut sum = lanes_sum(&lanes);
    for (x, y) in a_tail.iter().zip(b_tail) {
        sum = fma(*x, *y, sum);
    }
    sum
}

/// The lanes added up in a fixed order.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn lanes_sum<const L: usize>(lanes: &[f32; L]) -> f32 {
    let mut sum = -0.0f32;
    for lane in lanes {
        sum += lane;
    }
    sum
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::dot;

    /// [`super::row_products`] with AVX-512's sixteen lanes.
    #[target_feature(enable = "avx512f")]
    pub(super) fn row_products_avx512(a: &[f32], b: &[f32], inner: usize, out: &mut [f32]) {
        super::row_products_body(a, b, inner, out);
    }

    /// [`super::row_products`] with AVX2's eight lanes.
    #[target_feature(enable = "avx2")]
    pub(super) fn row_products_avx2(a: &[f32], b: &[f32], inner: usize, out: &mut [f32]) {
        super::row_products_body(a, b, inner, out);
    }

    /// Weight rows taken at a time: every activation row passes over them
    /// while they are in the core's cache (a matrix is read from memory
    /// once, not once per group of activation rows).
    const ROW_BLOCK: usize = 32;

    /// Sums of `T` activation rows × `TN` weight rows kept in vector
    /// registers over `k` (4 rows at a time, then 1 for the rest); weight
    /// rows past a multiple of `TN`, and `k`'s tail, in scalar code.
    macro_rules! products_kernel {
        ($name:ident, $tile:ident, $features:literal, $vec:ty, $lanes:literal, $tn:literal,
         $zero:ident, $load:ident, $fmadd:ident, $reduce:ident) => {
            #[target_feature(enable = $features)]
            pub(super) fn $name(x: &[f32], w: &[f32], k: usize, out: &mut [f32]) {
                let (tokens, rows) = (x.len() / k, w.len() / k);
                let fma = |a: f32, b: f32, c: f32| a.mul_add(b, c);
                let mut block = 0;
                while block < rows {
                    let end = (block + ROW_BLOCK).min(rows);
                    let whole_end = block + (end - block) / $tn * $tn;
                    let mut t0 = 0;
                    while t0 < tokens {
                        // Four activation rows at a time, and the last one
                        // to three as one tile (taken one row at a time,
                        // each loaded weight vector served one product).
                        let group = (tokens - t0).min(4);
                        let mut r0 = block;
                        while r0 < whole_end {
                            match group {
                                4 => $tile::<4>(x, w, k, out, t0, r0, rows),
                                3 => $tile::<3>(x, w, k, out, t0, r0, rows),
                                2 => $tile::<2>(x, w, k, out, t0, r0, rows),
                                _ => $tile::<1>(x, w, k, out, t0, r0, rows),
                            }
                            r0 += $tn;
                        }
                        for t in t0..t0 + group {
                            for r in whole_end..end {
                                out[t * rows + r] =
                                    dot::<$lanes>(&x[t * k..][..k], &w[r * k..][..k], fma);
                            }
                        }
                        t0 += group;
                    }
                    block = end;
                }
            }

            /// Activation rows `t0..t0 + T` × weight rows `r0..r0 + TN`.
            #[inline]
            #[target_feature(enable = $features)]
            fn $tile<const T: usize>(
                x: &[f32],
                w: &[f32],
                k: usize,
                out: &mut [f32],
                t0: usize,
                r0: usize,
                rows: usize,
            ) {
                const TN: usize = $tn;
                let whole = k - k % $lanes;
                let mut xs: [&[f32]; T] = [&[]; T];
                for (i, row) in xs.iter_mut().enumerate() {
                    *row = &x[(t0 + i) * k..][..k];
                }
                let mut ws: [&[f32]; TN] = [&[]; TN];
                for (j, row) in ws.iter_mut().enumerate() {
                    *row = &w[(r0 + j) * k..][..k];
                }
                let mut acc: [[$vec; TN]; T] = [[$zero(); TN]; T];
                let mut at = 0;
                while at < whole {
                    // SAFETY: every row slice holds `k` values and
                    // `at + lanes <= whole <= k`; loadu needs no alignment.
                    // A loop, not `array::from_fn`: a closure does not
                    // inherit the target features, so it was not inlined.
                    let mut xv: [$vec; T] = [$zero(); T];
                    for i in 0..T {
                        xv[i] = unsafe { $load(xs[i].as_ptr().add(at)) };
                    }
                    for j in 0..TN {
                        // SAFETY: as above.
                        let wv = unsafe { $load(ws[j].as_ptr().add(at)) };
                        for i in 0..T {
                            acc[i][j] = $fmadd(xv[i], wv, acc[i][j]);
                        }
                    }
                    at += $lanes;
                }
                for i in 0..T {
                    for j in 0..TN {
                        let mut sum = $reduce(acc[i][j]);
                        for at in whole..k {
                            sum = xs[i][at].mul_add(ws[j][at], sum);
                        }
                        out[(t0 + i) * rows + r0 + j] = sum;
                    }
                }
            }
        };
    }

    /// Sixteen lanes added up.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn reduce512(v: __m512) -> f32 {
        _mm512_reduce_add_ps(v)
    }

    /// Eight lanes added up.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn reduce256(v: __m256) -> f32 {
        let pair = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let pair = _mm_add_ps(pair, _mm_movehl_ps(pair, pair));
        _mm_cvtss_f32(_mm_add_ss(pair, _mm_shuffle_ps::<1>(pair, pair)))
    }

    products_kernel!(
        products_avx512,
        tile_avx512,
        "avx512f,avx2,fma",
        __m512,
        16,
        4,
        _mm512_setzero_ps,
        _mm512_loadu_ps,
        _mm512_fmadd_ps,
        reduce512
    );
    products_kernel!(
        products_avx2,
        tile_avx2,
        "avx2,fma",
        __m256,
        8,
        2,
        _mm256_setzero_ps,
        _mm256_loadu_ps,
        _mm256_fmadd_ps,
        reduce256
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every build of the row products gives the same bits, within f32
    /// rounding of a float64 product, for attention's shapes (a head of 32
    /// values, widths that are not multiples of the lanes).
    #[test]
    fn every_build_of_the_row_products_gives_the_same_bits() {
        use super::super::bits;
        for (rows, inner, width) in [
            (1, 1, 1),
            (7, 32, 7),
            (25, 25, 32),
            (40, 32, 40),
            (3, 5, 17),
        ] {
            let a: Vec<f32> = (0..rows * inner)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0)
                .collect();
            let b: Vec<f32> = (0..inner * width)
                .map(|i| ((i * 53 % 97) as f32 - 48.0) / 30.0)
                .collect();
            let mut expected = vec![f32::NAN; rows * width];
            row_products_on(Isa::Portable, &a, &b, inner, &mut expected);
            for t in 0..rows {
                for c in 0..width {
                    let exact: f64 = (0..inner)
                        .map(|i| f64::from(a[t * inner + i]) * f64::from(b[i * width + c]))
                        .sum();
                    let got = f64::from(expected[t * width + c]);
                    assert!(
                        (got - exact).abs() < 1e-4 * (1.0 + exact.abs()),
                        "{got} vs {exact}"
                    );
                }
            }
            for isa in super::super::available() {
                let mut out = vec![f32::NAN; rows * width];
                row_products_on(isa, &a, &b, inner, &mut out);
                assert_eq!(
                    bits(&out),
                    bits(&expected),
                    "{isa:?}, {rows}×{inner}×{width}"
                );
            }
        }
    }

    /// Every build agrees with a float64 product, for shapes with whole
    /// tiles, edges and a `k` that is not a multiple of the lanes.
    #[test]
    fn every_build_matches_a_float64_product() {
        for (tokens, rows, k) in [
            (1, 1, 1),
            (5, 7, 40),
            (9, 13, 384),
            (3, 2, 17),
            (8, 8, 32),
            (6, 70, 40),
        ] {
            let x: Vec<f32> = (0..tokens * k)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0)
                .collect();
            let w: Vec<f32> = (0..rows * k)
                .map(|i| ((i * 53 % 97) as f32 - 48.0) / 31.0)
                .collect();
            for isa in super::super::available() {
                let mut out = vec![f32::NAN; tokens * rows];
                products_on(isa, &x, &w, k, &mut out);
                for t in 0..tokens {
                    for r in 0..rows {
                        let exact: f64 = (0..k)
                            .map(|i| f64::from(x[t * k + i]) * f64::from(w[r * k + i]))
                            .sum();
                        let got = f64::from(out[t * rows + r]);
                        assert!(
                            (got - exact).abs() <= 1e-5 * (1.0 + exact.abs()),
                            "{isa:?} {tokens}×{rows}×{k} at ({t}, {r}): {got} vs {exact}"
                        );
                    }
                }
            }
        }
    }
}
