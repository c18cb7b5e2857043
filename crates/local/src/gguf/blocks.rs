//! GGML's tensor types and how their blocks turn back into floats: the
//! formulas of ggml's `dequantize_row_*` (ggml-quants.c), in its order of
//! operations, checked against the `gguf` Python package's NumPy
//! implementation (tests/fixtures/gguf_blocks_reference.py).

use half::{bf16, f16};

/// Values per K-quant super-block.
const QK_K: usize = 256;

/// A GGML tensor type this crate can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GgmlType {
    F32,
    F16,
    Bf16,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q2K,
    Q3K,
    Q4K,
    Q5K,
    Q6K,
}

impl GgmlType {
    /// The type of GGML's numeric id, or an error naming the id.
    pub fn from_id(id: u32) -> Result<Self, String> {
        Ok(match id {
            0 => Self::F32,
            1 => Self::F16,
            2 => Self::Q4_0,
            3 => Self::Q4_1,
            6 => Self::Q5_0,
            7 => Self::Q5_1,
            8 => Self::Q8_0,
            10 => Self::Q2K,
            11 => Self::Q3K,
            12 => Self::Q4K,
            13 => Self::Q5K,
            14 => Self::Q6K,
            30 => Self::Bf16,
            other => {
                return Err(format!(
                    "GGML type {other} is not supported (F32, F16, BF16, Q4_0, Q4_1, Q5_0, \
                     Q5_1, Q8_0 and Q2_K–Q6_K are)"
                ));
            }
        })
    }

    /// Values per block.
    pub fn block_values(self) -> usize {
        match self {
            Self::F32 | Self::F16 | Self::Bf16 => 1,
            Self::Q4_0 | Self::Q4_1 | Self::Q5_0 | Self::Q5_1 | Self::Q8_0 => 32,
            Self::Q2K | Self::Q3K | Self::Q4K | Self::Q5K | Self::Q6K => QK_K,
        }
    }

    /// Bytes per block.
    pub fn block_bytes(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::F16 | Self::Bf16 => 2,
            Self::Q4_0 => 18,
            Self::Q4_1 => 20,
            Self::Q5_0 => 22,
            Self::Q5_1 => 24,
            Self::Q8_0 => 34,
            Self::Q2K => 84,
            Self::Q3K => 110,
            Self::Q4K => 144,
            Self::Q5K => 176,
            Self::Q6K => 210,
        }
    }

    /// Writes the values of `data` (whole blocks of this type) to `out`,
    /// which holds exactly as many values as the blocks do.
    pub fn dequantize(self, data: &[u8], out: &mut [f32]) {
        let (bytes, values) = (self.block_bytes(), self.block_values());
        debug_assert_eq!(data.len() / bytes * values, out.len());
        for (block, y) in data.chunks_exact(bytes).zip(out.chunks_exact_mut(values)) {
            match self {
                Self::F32 => y[0] = f32::from_le_bytes([block[0], block[1], block[2], block[3]]),
                Self::F16 => y[0] = half(block, 0),
                Self::Bf16 => y[0] = bf16::from_le_bytes([block[0], block[1]]).to_f32(),
                Self::Q4_0 => q4_0(block, y),
                Self::Q4_1 => q4_1(block, y),
                Self::Q5_0 => q5_0(block, y),
                Self::Q5_1 => q5_1(block, y),
                Self::Q8_0 => q8_0(block, y),
                Self::Q2K => q2_k(block, y),
                Self::Q3K => q3_k(block, y),
                Self::Q4K => q4_k(block, y),
                Self::Q5K => q5_k(block, y),
                Self::Q6K => q6_k(block, y),
            }
        }
    }
}

/// The little-endian half-precision float at `at`.
fn half(block: &[u8], at: usize) -> f32 {
    f16::from_le_bytes([block[at], block[at + 1]]).to_f32()
}

fn q4_0(b: &[u8], y: &mut [f32]) {
    let d = half(b, 0);
    let qs = &b[2..18];
    for (j, &q) in qs.iter().enumerate() {
        y[j] = ((q & 0x0F) as i32 - 8) as f32 * d;
        y[j + 16] = ((q >> 4) as i32 - 8) as f32 * d;
    }
}

fn q4_1(b: &[u8], y: &mut [f32]) {
    let (d, m) = (half(b, 0), half(b, 2));
    let qs = &b[4..20];
    for (j, &q) in qs.iter().enumerate() {
        y[j] = (q & 0x0F) as f32 * d + m;
        y[j + 16] = (q >> 4) as f32 * d + m;
    }
}

/// The fifth bits of a Q5 block's 32 values, as ggml places them.
fn fifth_bits(qh: u32, j: usize) -> (u8, u8) {
    (
        (((qh >> j) << 4) & 0x10) as u8,
        ((qh >> (j + 12)) & 0x10) as u8,
    )
}

fn q5_0(b: &[u8], y: &mut [f32]) {
    let d = half(b, 0);
    let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
    for (j, &q) in b[6..22].iter().enumerate() {
        let (h0, h1) = fifth_bits(qh, j);
        y[j] = (((q & 0x0F) | h0) as i32 - 16) as f32 * d;
        y[j + 16] = (((q >> 4) | h1) as i32 - 16) as f32 * d;
    }
}

fn q5_1(b: &[u8], y: &mut [f32]) {
    let (d, m) = (half(b, 0), half(b, 2));
    let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    for (j, &q) in b[8..24].iter().enumerate() {
        let (h0, h1) = fifth_bits(qh, j);
        y[j] = ((q & 0x0F) | h0) as f32 * d + m;
        y[j + 16] = ((q >> 4) | h1) as f32 * d + m;
    }
}

fn q8_0(b: &[u8], y: &mut [f32]) {
    let d = half(b, 0);
    for (out, &q) in y.iter_mut().zip(&b[2..34]) {
        *out = (q as i8) as f32 * d;
    }
}

fn q2_k(b: &[u8], y: &mut [f32]) {
    let (scales, qs) = (&b[0..16], &b[16..80]);
    let (d, min) = (half(b, 80), half(b, 82));
    let mut out = 0;
    let mut is = 0;
    for q in qs.chunks_exact(32) {
        for shift in [0, 2, 4, 6] {
            for half_block in [&q[0..16], &q[16..32]] {
                let sc = scales[is];
                is += 1;
                let dl = d * (sc & 0x0F) as f32;
                let ml = min * (sc >> 4) as f32;
                for &v in half_block {
                    y[out] = dl * ((v >> shift) & 3) as f32 - ml;
                    out += 1;
                }
            }
        }
    }
}

/// Q3_K's sixteen 6-bit scales, unpacked from their 12 bytes.
fn q3_k_scales(packed: &[u8]) -> [i8; 16] {
    const KMASK1: u32 = 0x0303_0303;
    const KMASK2: u32 = 0x0f0f_0f0f;
    let word = |i: usize| {
        u32::from_le_bytes([
            packed[4 * i],
            packed[4 * i + 1],
            packed[4 * i + 2],
            packed[4 * i + 3],
        ])
    };
    let (a0, a1, tmp) = (word(0), word(1), word(2));
    let aux = [
        (a0 & KMASK2) | ((tmp & KMASK1) << 4),
        (a1 & KMASK2) | (((tmp >> 2) & KMASK1) << 4),
        ((a0 >> 4) & KMASK2) | (((tmp >> 4) & KMASK1) << 4),
        ((a1 >> 4) & KMASK2) | (((tmp >> 6) & KMASK1) << 4),
    ];
    let mut scales = [0i8; 16];
    for (i, word) in aux.iter().enumerate() {
        for (k, byte) in word.to_le_bytes().iter().enumerate() {
            scales[4 * i + k] = *byte as i8;
        }
    }
    scales
}

fn q3_k(b: &[u8], y: &mut [f32]) {
    let (hmask, qs) = (&b[0..32], &b[32..96]);
    let scales = q3_k_scales(&b[96..108]);
    let d_all = half(b, 108);
    let mut out = 0;
    let mut is = 0;
    let mut m = 1u8;
    for q in qs.chunks_exact(32) {
        for shift in [0, 2, 4, 6] {
            for offset in [0, 16] {
                let dl = d_all * (scales[is] as i32 - 32) as f32;
                is += 1;
                for l in offset..offset + 16 {
                    let high = if hmask[l] & m != 0 { 0 } else { 4 };
                    y[out] = dl * (((q[l] >> shift) & 3) as i32 - high) as f32;
                    out += 1;
                }
            }
            m <<= 1;
        }
    }
}

/// The 6-bit scale and minimum `j` of a Q4_K/Q5_K block's 12 packed bytes
/// (ggml's `get_scale_min_k4`).
fn scale_min_k4(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        (
            (q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4),
            (q[j + 4] >> 4) | ((q[j] >> 6) << 4),
        )
    }
}

fn q4_k(b: &[u8], y: &mut [f32]) {
    let (d, min) = (half(b, 0), half(b, 2));
    let (scales, qs) = (&b[4..16], &b[16..144]);
    for (i, q) in qs.chunks_exact(32).enumerate() {
        let (sc1, m1) = scale_min_k4(2 * i, scales);
        let (sc2, m2) = scale_min_k4(2 * i + 1, scales);
        let (d1, m1) = (d * sc1 as f32, min * m1 as f32);
        let (d2, m2) = (d * sc2 as f32, min * m2 as f32);
        let y = &mut y[64 * i..64 * (i + 1)];
        for (l, &v) in q.iter().enumerate() {
            y[l] = d1 * (v & 0x0F) as f32 - m1;
            y[l + 32] = d2 * (v >> 4) as f32 - m2;
        }
    }
}

fn q5_k(b: &[u8], y: &mut [f32]) {
    let (d, min) = (half(b, 0), half(b, 2));
    let (scales, qh, qs) = (&b[4..16], &b[16..48], &b[48..176]);
    for (i, ql) in qs.chunks_exact(32).enumerate() {
        let (sc1, m1) = scale_min_k4(2 * i, scales);
        let (sc2, m2) = scale_min_k4(2 * i + 1, scales);
        let (d1, m1) = (d * sc1 as f32, min * m1 as f32);
        let (d2, m2) = (d * sc2 as f32, min * m2 as f32);
        let (u1, u2) = (1u8 << (2 * i), 2u8 << (2 * i));
        let y = &mut y[64 * i..64 * (i + 1)];
        for (l, &v) in ql.iter().enumerate() {
            let h1 = if qh[l] & u1 != 0 { 16 } else { 0 };
            let h2 = if qh[l] & u2 != 0 { 16 } else { 0 };
            y[l] = d1 * ((v & 0x0F) + h1) as f32 - m1;
            y[l + 32] = d2 * ((v >> 4) + h2) as f32 - m2;
        }
    }
}

fn q6_k(b: &[u8], y: &mut [f32]) {
    let d = half(b, 208);
    for n in 0..2 {
        let ql = &b[64 * n..64 * (n + 1)];
        let qh = &b[128 + 32 * n..128 + 32 * (n + 1)];
        let sc = &b[192 + 8 * n..192 + 8 * (n + 1)];
        let y = &mut y[128 * n..128 * (n + 1)];
        for l in 0..32 {
            let is = l / 16;
            let q1 = ((ql[l] & 0x0F) | ((qh[l] & 3) << 4)) as i32 - 32;
            let q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) as i32 - 32;
            let q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i32 - 32;
            let q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i32 - 32;
            let scale = |k: usize| d * (sc[is + k] as i8) as f32;
            y[l] = scale(0) * q1 as f32;
            y[l + 32] = scale(2) * q2 as f32;
            y[l + 64] = scale(4) * q3 as f32;
            y[l + 96] = scale(6) * q4 as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every type's blocks give the floats of the `gguf` package's NumPy
    /// dequantization (tests/fixtures/gguf_blocks_reference.py): seeded
    /// random blocks, three of each type.
    #[test]
    fn blocks_dequantize_as_the_gguf_reference_does() {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/gguf_blocks.json")).unwrap();
        let types = [
            ("F16", GgmlType::F16),
            ("BF16", GgmlType::Bf16),
            ("Q4_0", GgmlType::Q4_0),
            ("Q4_1", GgmlType::Q4_1),
            ("Q5_0", GgmlType::Q5_0),
            ("Q5_1", GgmlType::Q5_1),
            ("Q8_0", GgmlType::Q8_0),
            ("Q2_K", GgmlType::Q2K),
            ("Q3_K", GgmlType::Q3K),
            ("Q4_K", GgmlType::Q4K),
            ("Q5_K", GgmlType::Q5K),
            ("Q6_K", GgmlType::Q6K),
        ];
        for (name, ty) in types {
            let entry = &fixture[name];
            let hex = entry["bytes"].as_str().unwrap();
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let expected: Vec<f32> = serde_json::from_value(entry["values"].clone()).unwrap();
            assert_eq!(
                bytes.len() / ty.block_bytes() * ty.block_values(),
                expected.len()
            );
            assert!(expected.len() >= 3 * ty.block_values(), "{name}");
            let mut ours = vec![f32::NAN; expected.len()];
            ty.dequantize(&bytes, &mut ours);
            for (i, (a, b)) in ours.iter().zip(&expected).enumerate() {
                let tolerance = 1e-6 * b.abs().max(1e-3);
                assert!(
                    (a - b).abs() <= tolerance,
                    "{name} value {i}: ours {a}, reference {b}"
                );
            }
        }
    }

    #[test]
    fn unknown_type_ids_are_named() {
        let err = GgmlType::from_id(16).unwrap_err();
        assert!(err.contains("GGML type 16"), "{err}");
        assert_eq!(GgmlType::from_id(3), Ok(GgmlType::Q4_1));
    }
}
