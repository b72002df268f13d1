//! The matrix facts the fixed rule and the tuner start from, sampled from the CSR arrays.
#![forbid(unsafe_code)]

use crate::csr::Csr;
use crate::methods::bccoo::params::{MatrixFacts, Shape};
use crate::scalar::Scalar;

/// Non-zeros scanned per block height by [`facts`] (sampled block rows beyond that).
const SAMPLE_NNZ: usize = 1 << 20;

/// The stride between the block rows [`facts`] samples (every block row below ~1M non-zeros).
pub fn sample_stride(nnz: usize) -> usize {
    nnz.div_ceil(SAMPLE_NNZ).max(1)
}

/// Block rows of height `bh` that [`facts`] samples at `stride`: `0, stride, 2 stride, ...`.
pub fn sampled_block_rows(rows: usize, bh: usize, stride: usize) -> usize {
    rows.div_ceil(bh).div_ceil(stride)
}

/// The sampled counts behind [`MatrixFacts`]: `blocks[bh - 1][w]` blocks of `bh x (1 << w)`
/// among the sampled block rows, and the 1x1 column jumps counted and those too far for a
/// short. The host ([`facts`]) and the device build (`bccoo::device`) count the same samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampledCounts {
    /// Blocks per block height (1-4) and width (1, 2, 4).
    pub blocks: [[u64; 3]; 4],
    /// Column jumps between consecutive entries of the sampled 1x1 rows.
    pub jumps: u64,
    /// Of those, the ones a short delta cannot hold.
    pub far: u64,
}

impl SampledCounts {
    /// The facts of a `rows x cols` matrix of `nnz` entries and `val_bytes` values, scaled from
    /// these samples (taken at [`sample_stride`]).
    pub fn facts(&self, rows: usize, cols: usize, nnz: usize, val_bytes: usize) -> MatrixFacts {
        let stride = sample_stride(nnz);
        let mut blocks = Vec::with_capacity(12);
        for bh in 1..=4usize {
            let sampled = sampled_block_rows(rows, bh, stride);
            let scale = if sampled == 0 {
                0.0
            } else {
                rows.div_ceil(bh) as f64 / sampled as f64
            };
            for (wi, bw) in [1u32, 2, 4].into_iter().enumerate() {
                let n = self.blocks[bh - 1][wi] as f64 * scale;
                blocks.push((Shape { bw, bh: bh as u32 }, n));
            }
        }
        MatrixFacts {
            rows,
            cols,
            val_bytes,
            blocks,
            far_jumps: if self.jumps == 0 {
                0.0
            } else {
                self.far as f64 / self.jumps as f64
            },
        }
    }
}

/// What the fixed rule and the tuner need: block counts of every shape and the rate of column
/// jumps too far for a short delta, estimated from block rows sampled at a fixed stride (all
/// of them below ~1M non-zeros). Empty block rows count one block each; duplicates are
/// ignored.
pub fn facts<T: Scalar>(a: &Csr<T>) -> MatrixFacts {
    sampled_counts(a).facts(a.rows(), a.cols(), a.nnz(), std::mem::size_of::<T>())
}

/// The samples of [`facts`], counted on the host.
pub fn sampled_counts<T: Scalar>(a: &Csr<T>) -> SampledCounts {
    let (rows, nnz) = (a.rows(), a.nnz());
    let (rp, ci) = (a.row_ptr(), a.col_ind());
    let widths = [1u32, 2, 4];
    let mut buf: Vec<i32> = Vec::new();
    let mut out = SampledCounts::default();
    let stride = sample_stride(nnz);
    for bh in 1..=4usize {
        let nbr = rows.div_ceil(bh);
        let counts = &mut out.blocks[bh - 1];
        for br in (0..nbr).step_by(stride) {
            let (r0, r1) = (br * bh, ((br + 1) * bh).min(rows));
            let (k0, k1) = (rp[r0] as usize, rp[r1] as usize);
            if k0 == k1 {
                counts.iter_mut().for_each(|c| *c += 1);
                continue;
            }
            let sorted: &[i32] = if bh == 1 {
                // Column deltas beyond a short, within the row and into the next row.
                let k2 = if r1 < rows && rp[r1 + 1] > rp[r1] {
                    k1 + 1
                } else {
                    k1
                };
                for w in ci[k0..k2].windows(2) {
                    out.jumps += 1;
                    let d = w[1] as i64 - w[0] as i64;
                    if d == -1 || !(-32767..=32767).contains(&d) {
                        out.far += 1;
                    }
                }
                &ci[k0..k1]
            } else {
                buf.clear();
                buf.extend_from_slice(&ci[k0..k1]);
                buf.sort_unstable();
                &buf
            };
            // Distinct block columns of the block row: changes along its sorted columns.
            for (wi, &bw) in widths.iter().enumerate() {
                let shift = bw.trailing_zeros();
                let mut last = u32::MAX;
                for &c in sorted {
                    let bc = (c as u32) >> shift;
                    if bc != last {
                        counts[wi] += 1;
                        last = bc;
                    }
                }
            }
        }
    }
    out
}
