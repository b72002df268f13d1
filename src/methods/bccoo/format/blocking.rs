//! Step 1 of the format: the matrix cut into blocks, in logical order.
#![forbid(unsafe_code)]

use crate::csr::Csr;
use crate::error::{Error, Result};
use crate::methods::bccoo::params::Shape;
use crate::scalar::Scalar;

/// The matrix in blocks, logical order (before tiles, padding and the transpose).
#[derive(Debug, Clone, PartialEq)]
pub struct Blocked {
    /// Block shape.
    pub shape: Shape,
    /// Vertical slices (1 = BCCOO).
    pub slices: u32,
    /// Rows of the matrix.
    pub rows: usize,
    /// Columns of the matrix.
    pub cols: usize,
    /// Non-zeros of the matrix.
    pub nnz: usize,
    /// Block rows per slice: ceil(rows / bh).
    pub block_rows: usize,
    /// Columns per slice (a multiple of bw; the last slice takes the rest), §2.3.
    pub slice_width: usize,
    /// Block column (in the original matrix, §2.3) of every block.
    pub col: Vec<u32>,
    /// For every stacked block row (slice by slice), the index of its last block: the row
    /// stops. Strictly increasing, one per block row.
    pub ends: Vec<u32>,
    /// For every CSR non-zero (tessera's order), its logical slot: block * bh * bw + i * bw + k
    /// for row i and column k inside the block.
    pub slot: Vec<u32>,
}

impl Blocked {
    /// Blocks (empty block rows' zero blocks included).
    pub fn blocks(&self) -> usize {
        self.col.len()
    }

    /// The bit flag array of the paper's figures: 0 = last block of a row, 1 otherwise.
    pub fn bit_flags(&self) -> Vec<u8> {
        let mut f = vec![1u8; self.blocks()];
        for &e in &self.ends {
            f[e as usize] = 0;
        }
        f
    }

    /// The per-height value arrays of the paper's figures (array i: row i of every block, bw
    /// values each), from the CSR values through the logical slots.
    pub fn value_arrays<T: Scalar>(&self, values: &[T]) -> Vec<Vec<T>> {
        let (bw, bh) = (self.shape.bw as usize, self.shape.bh as usize);
        let mut out = vec![vec![T::ZERO; self.blocks() * bw]; bh];
        for (k, &s) in self.slot.iter().enumerate() {
            let s = s as usize;
            let (b, r) = (s / (bw * bh), s % (bw * bh));
            out[r / bw][b * bw + r % bw] = values[k];
        }
        out
    }
}

/// Cuts `a` into `shape` blocks, stacking `slices` vertical slices (§2.2, §2.3).
pub fn block<T: Scalar>(a: &Csr<T>, shape: Shape, slices: u32) -> Result<Blocked> {
    let (rows, cols, nnz) = (a.rows(), a.cols(), a.nnz());
    let (bw, bh) = (shape.bw as usize, shape.bh as usize);
    if ![1, 2, 4].contains(&bw) || !(1..=4).contains(&bh) || slices == 0 {
        return Err(Error::InvalidValue(format!(
            "BCCOO block {shape} with {slices} slices is not a shape of Table 1"
        )));
    }
    let area = bw * bh;
    let (shift, mask) = (bw.trailing_zeros(), (bw - 1) as u32);
    let block_rows = rows.div_ceil(bh);
    let slices_us = slices as usize;
    // §2.3 / the authors' code: slice width = cols / (bw * slices) * bw, the last slice takes
    // the rest.
    let slice_width = if slices_us == 1 {
        cols
    } else {
        cols / (bw * slices_us) * bw
    };
    if slices_us > 1 && slice_width == 0 {
        return Err(Error::InvalidValue(format!(
            "BCCOO+: {slices} slices of a {cols}-column matrix with {bw}-wide blocks would be empty"
        )));
    }
    let stacked = block_rows
        .checked_mul(slices_us)
        .filter(|&n| n <= u32::MAX as usize)
        .ok_or_else(|| {
            Error::NotSupported(format!(
                "BCCOO+: {block_rows} block rows x {slices} slices exceed 2^32 result entries"
            ))
        })?;
    // Slots are u32 (the value map): blocks * area must stay below 2^32.
    let max_blocks = (u32::MAX as usize) / area;
    let (rp, ci) = (a.row_ptr(), a.col_ind());
    let mut col: Vec<u32> = Vec::with_capacity((nnz / area).max(stacked) + stacked / 2 + 1);
    let mut ends: Vec<u32> = Vec::with_capacity(stacked);
    let mut slot = vec![0u32; nnz];
    // BCCOO+: each row's first entry not yet given to a slice.
    let mut cursor: Vec<usize> = if slices_us > 1 {
        rp[..rows].iter().map(|&v| v as usize).collect()
    } else {
        Vec::new()
    };
    for s in 0..slices_us {
        let c_end = if s + 1 == slices_us {
            cols
        } else {
            (s + 1) * slice_width
        } as i32;
        for br in 0..block_rows {
            let r0 = br * bh;
            let h = bh.min(rows - r0);
            let mut head = [0usize; 4];
            let mut end = [0usize; 4];
            for i in 0..h {
                let r = r0 + i;
                if slices_us == 1 {
                    head[i] = rp[r] as usize;
                    end[i] = rp[r + 1] as usize;
                } else {
                    let (st, row_end) = (cursor[r], rp[r + 1] as usize);
                    let mut e = st;
                    while e < row_end && ci[e] < c_end {
                        e += 1;
                    }
                    cursor[r] = e;
                    head[i] = st;
                    end[i] = e;
                }
            }
            let first = col.len();
            if h == 1 {
                let mut cur_bc = u32::MAX;
                let mut occ = 0u32;
                let mut base = 0u32;
                let (k0, k1) = (head[0], end[0]);
                for (&c, s) in ci[k0..k1].iter().zip(&mut slot[k0..k1]) {
                    let c = c as u32;
                    let (bc, pos) = (c >> shift, c & mask);
                    if bc != cur_bc || occ & (1 << pos) != 0 {
                        base = (col.len() * area) as u32;
                        col.push(bc);
                        cur_bc = bc;
                        occ = 0;
                    }
                    occ |= 1 << pos;
                    *s = base + pos;
                }
            } else {
                // One block per step: the smallest block column among the rows' next entries,
                // then every row's entries in that block column (a duplicate of an entry
                // already in the block ends that row's share: the next step opens a new block
                // at the same column).
                loop {
                    let mut bc = u32::MAX;
                    for i in 0..h {
                        if head[i] < end[i] {
                            bc = bc.min(ci[head[i]] as u32 >> shift);
                        }
                    }
                    if bc == u32::MAX {
                        break;
                    }
                    let base = (col.len() * area) as u32;
                    col.push(bc);
                    let mut occ = 0u32;
                    for i in 0..h {
                        let row_base = (i * bw) as u32;
                        while head[i] < end[i] {
                            let c = ci[head[i]] as u32;
                            let pos = row_base + (c & mask);
                            if c >> shift != bc || occ & (1 << pos) != 0 {
                                break;
                            }
                            occ |= 1 << pos;
                            slot[head[i]] = base + pos;
                            head[i] += 1;
                        }
                    }
                }
            }
            if col.len() == first {
                // An empty block row: one zero block so that it has a row stop (see "Empty rows"
                // in the format module's doc).
                col.push(0);
            }
            if col.len() > max_blocks {
                return Err(Error::NotSupported(format!(
                    "BCCOO with {shape} blocks needs more than {max_blocks} blocks: the value map's 32-bit slots cannot address them"
                )));
            }
            ends.push((col.len() - 1) as u32);
        }
    }
    Ok(Blocked {
        shape,
        slices,
        rows,
        cols,
        nnz,
        block_rows,
        slice_width,
        col,
        ends,
        slot,
    })
}
