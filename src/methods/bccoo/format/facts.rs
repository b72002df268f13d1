//! The matrix facts the fixed rule and the tuner start from, sampled from the CSR arrays.
#![forbid(unsafe_code)]

use crate::csr::Csr;
use crate::methods::bccoo::params::{MatrixFacts, Shape};
use crate::scalar::Scalar;

/// Non-zeros scanned per block height by [`facts`] (sampled block rows beyond that).
const SAMPLE_NNZ: usize = 1 << 20;

/// What the fixed rule and the tuner need: block counts of every shape and the rate of column
/// jumps too far for a short delta, estimated from block rows sampled at a fixed stride (all
/// of them below ~1M non-zeros). Empty block rows count one block each; duplicates are
/// ignored.
pub fn facts<T: Scalar>(a: &Csr<T>) -> MatrixFacts {
    let (rows, cols, nnz) = (a.rows(), a.cols(), a.nnz());
    let (rp, ci) = (a.row_ptr(), a.col_ind());
    let widths = [1u32, 2, 4];
    let mut buf: Vec<i32> = Vec::new();
    let mut blocks = Vec::new();
    let (mut jumps, mut far) = (0usize, 0usize);
    for bh in 1..=4usize {
        let nbr = rows.div_ceil(bh);
        let stride = nnz.div_ceil(SAMPLE_NNZ).max(1);
        let mut counts = [0usize; 3];
        let mut sampled = 0usize;
        for br in (0..nbr).step_by(stride) {
            sampled += 1;
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
                    jumps += 1;
                    let d = w[1] as i64 - w[0] as i64;
                    if d == -1 || !(-32767..=32767).contains(&d) {
                        far += 1;
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
        let scale = if sampled == 0 {
            0.0
        } else {
            nbr as f64 / sampled as f64
        };
        for (wi, &bw) in widths.iter().enumerate() {
            blocks.push((Shape { bw, bh: bh as u32 }, counts[wi] as f64 * scale));
        }
    }
    MatrixFacts {
        rows,
        cols,
        val_bytes: std::mem::size_of::<T>(),
        blocks,
        far_jumps: if jumps == 0 {
            0.0
        } else {
            far as f64 / jumps as f64
        },
    }
}
