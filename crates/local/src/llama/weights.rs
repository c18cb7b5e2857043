//! A projection's weights as the model keeps them: a file's Q4_1 matrices
//! packed as stored where the CPU runs a packed kernel
//! ([`kernels::packed_q4`]), every other type (and Q4_1 in portable Rust)
//! as Q8 ([`Q8Matrix`]).

use super::kernels::packed::{self, GROUP};
use super::kernels::packed_q4::{self, ActivationSums, PackedQ4Matrix};
use super::q8::{self, Q8Matrix};
use crate::gguf::GgmlType;

/// A matrix of a GGUF file as read, before it is packed.
pub(crate) enum Stored {
    /// Q8 values (Q8_0 as stored; other types requantized).
    Q8(Q8Matrix),
    /// GGUF Q4_1 blocks as stored, rows of `k` values.
    Q4_1 { data: Vec<u8>, k: usize },
}

impl Stored {
    /// As Q8 values (Q4_1 dequantized, then quantized as Q8_0).
    fn into_q8(self) -> Q8Matrix {
        match self {
            Stored::Q8(matrix) => matrix,
            Stored::Q4_1 { data, k } => {
                let ty = GgmlType::Q4_1;
                let mut values = vec![0.0; data.len() / ty.block_bytes() * ty.block_values()];
                ty.dequantize(&data, &mut values);
                Q8Matrix::quantize(&values, k)
            }
        }
    }
}

/// A weight matrix, packed for the kernel in use.
#[derive(Debug, Clone)]
pub(crate) enum Weights {
    /// Q8 (packed where the CPU runs a packed kernel).
    Q8(Q8Matrix),
    /// Q4_1 as the file stores it, packed.
    Q4(PackedQ4Matrix),
}

impl Weights {
    /// `parts` stacked row after row (fused projections) and packed: as
    /// Q4_1 when every part is Q4_1 and a packed kernel runs on this CPU,
    /// else as Q8. The parts have the same row length.
    pub fn stacked(parts: Vec<Stored>) -> Self {
        let all_q4 = parts.iter().all(|p| matches!(p, Stored::Q4_1 { .. }));
        if all_q4 && packed::available() {
            let mut k = 0;
            let mut data = Vec::new();
            for part in parts {
                if let Stored::Q4_1 {
                    data: part,
                    k: part_k,
                } = part
                {
                    debug_assert!(k == 0 || k == part_k);
                    k = part_k;
                    data.extend_from_slice(&part);
                }
            }
            return Weights::Q4(PackedQ4Matrix::pack(&data, k));
        }
        let parts: Vec<Q8Matrix> = parts.into_iter().map(Stored::into_q8).collect();
        let mut matrix = if parts.len() == 1 {
            parts.into_iter().next().unwrap_or_default()
        } else {
            Q8Matrix::stack(&parts)
        };
        matrix.pack();
        Weights::Q8(matrix)
    }

    /// `out[t][r] = self[r] · x[t]`, as [`Q8Matrix::matmul`] (the same
    /// splits over the pool; every split gives the same bits).
    pub fn matmul(&self, x: &Q8Matrix, out: &mut [f32]) {
        let w = match self {
            Weights::Q8(matrix) => return matrix.matmul(x, out),
            Weights::Q4(matrix) => matrix,
        };
        let (quants, scales) = x.activation_rows(0..x.rows());
        let mut sums = Vec::new();
        packed_q4::block_sums(quants, scales, &mut sums);
        let k = x.k();
        let blocks = k / super::kernels::BLOCK;
        q8::split(w.rows(), x.rows(), out, |rows, tokens, part, stride| {
            debug_assert!(rows.start.is_multiple_of(GROUP));
            let (quants, scales) = x.activation_rows(tokens.clone());
            let activations = ActivationSums {
                quants,
                scales,
                sums: &sums[tokens.start * blocks..tokens.end * blocks],
                k,
            };
            packed_q4::matmul(w.view(rows.start, rows.end), activations, part, stride);
        });
    }
}

#[cfg(test)]
mod tests {
    use half::f16;

    use super::*;
    use crate::llama::kernels::BLOCK;

    /// One Q4_1 row of `k` values: every block `d = 0.01`, `m = −0.07`,
    /// nibbles counting up; and the values they stand for.
    fn q4_1_row(k: usize) -> (Vec<u8>, Vec<f32>) {
        let (d, m) = (f16::from_f32(0.01), f16::from_f32(-0.07));
        let mut data = Vec::new();
        let mut values = vec![0.0; k];
        for b in 0..k / BLOCK {
            data.extend(d.to_le_bytes());
            data.extend(m.to_le_bytes());
            for j in 0..BLOCK / 2 {
                let (low, high) = (j as u8, 15 - j as u8);
                data.push(low | high << 4);
                values[b * BLOCK + j] = f32::from(low) * d.to_f32() + m.to_f32();
                values[b * BLOCK + BLOCK / 2 + j] = f32::from(high) * d.to_f32() + m.to_f32();
            }
        }
        (data, values)
    }

    #[test]
    fn q4_1_stacked_as_stored_or_beside_q8_gives_the_products_of_its_values() {
        // Q4_1 alone (packed as stored where a packed kernel runs), and
        // beside a Q8 part (requantized with it): both multiply the values
        // the blocks stand for.
        let k = 64;
        let (data, values) = q4_1_row(k);
        let x: Vec<f32> = (0..k).map(|i| (i as f32 * 0.37).sin()).collect();
        let mut activations = Q8Matrix::default();
        q8::quantize_rows(&x, k, &mut activations);
        let exact: f32 = values.iter().zip(&x).map(|(w, x)| w * x).sum();

        let alone = Weights::stacked(vec![Stored::Q4_1 {
            data: data.clone(),
            k,
        }]);
        assert_eq!(
            matches!(alone, Weights::Q4(_)),
            packed::available(),
            "Q4_1 kept as stored exactly where a packed kernel runs"
        );
        let mut out = vec![0.0; 1];
        alone.matmul(&activations, &mut out);
        assert!((out[0] - exact).abs() < 0.02, "{} vs {exact}", out[0]);

        let beside = Weights::stacked(vec![
            Stored::Q4_1 { data, k },
            Stored::Q8(Q8Matrix::quantize(&values, k)),
        ]);
        assert!(matches!(beside, Weights::Q8(_)));
        let mut out = vec![0.0; 2];
        beside.matmul(&activations, &mut out);
        for got in out {
            assert!((got - exact).abs() < 0.02, "{got} vs {exact}");
        }
    }
}
