//! CSR -> BRC on the host (Ashari et al., ICS'14, §3.1-3.2, Algorithm 1), with the optional ELL
//! part of the ELL+BRC hybrid (§5, §8), the per-block-row destinations the kernel writes
//! through, the lists of rows that need a second kernel (split and empty rows), and the value
//! map. [`build`] is [`plan`], which reads the row offsets alone (steps 1-3, the destinations and
//! the row lists), then [`fill`], which places the columns and values (step 4) and writes the
//! value map; the device fill (`brc_fill`, cuda.rs) completes the same plan.
//!
//! Algorithm 1 as built here:
//! 1. The non-empty rows (of the BRC part: the rows longer than the ELL width k, with their
//!    first k entries removed) are sorted by length, descending, stably (a counting sort: ties
//!    keep row order). Empty rows are in no block: they are never stored, so a block whose
//!    rows would all be empty cannot exist; their y is handled by the row lists below.
//! 2. The sorted rows form a FIFO queue. A block takes the next B1 queue entries; each brings
//!    min(remaining, B2) entries, and a row with more left is re-queued at the back with its
//!    remainder (so a row longer than B2 appears in several blocks, and when the queue is
//!    shorter than B1 even several times in one block). When the queue runs dry the last block
//!    gets dummy rows (`row_perm` = [`DUMMY`]).
//! 3. Block b is B1 x T_b with T_b = the longest piece in it (Eq. 2: min(B2, longest remaining
//!    row)), stored column-major: slot (row r, entry j) at `block_offset[b] + j*B1 + r`.
//!    `nnz_per_block[b]` = T_b, `block_offset` has num_blocks + 1 entries.
//! 4. Padding (value 0) reuses a column index that another lane of the same warp loads in the
//!    same instruction, so it costs no extra x traffic (§3.1: "the same column index of the
//!    previous rows in the block"): the column of the nearest row above with a real entry in
//!    that slot; for a padded first row (possible after re-queueing: a short row of one
//!    vertical block followed by remainders of the next) the nearest such row below. Every slot
//!    j < T_b has a real entry in some row of the block, so the rule always finds one.
//!
//! The value array is one buffer, ELL part first (rows x k, column-major: row i's j-th entry
//! at `j*rows + i`, no permutation, padded the same way within each aligned group of 32 rows),
//! then the BRC blocks; `value_slot[k]` is where CSR entry k lives in it.
#![forbid(unsafe_code)]

use crate::csr::{try_vec_filled, Csr};
use crate::error::{Error, Result};
use crate::methods::cancel;
use crate::scalar::Scalar;

#[path = "plan.rs"]
mod planning;
pub use planning::{plan, plan_on};
#[path = "layout.rs"]
mod layout;
pub use layout::{layout, Layout, NO_BUCKET};

/// `row_perm` / `dest` of a dummy block row (the last block's filler).
pub const DUMMY: u32 = u32::MAX;

/// Flag bit in `dest`: the block row holds part of a row that other block rows (or the ELL part)
/// also contribute to; the low 31 bits are then the row (atomic variant: atomicAdd of
/// alpha*partial into a y made ready beforehand) or an index into the partial-sum buffer
/// (deterministic variant). Without the flag the low bits are a row the block row owns
/// entirely: y = alpha*sum + beta*y, no atomic.
pub const SPLIT: u32 = 1 << 31;

/// Rows of the ELL part's padding groups (a warp).
const ELL_GROUP: usize = 32;

/// How split rows are summed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// atomicAdd of alpha*partial into y (y of split and empty rows scaled by beta first).
    Atomic,
    /// Partials written to a buffer, reduced per row in a fixed order by a second kernel: the
    /// product is bitwise reproducible run to run.
    Deterministic,
}

/// A matrix in BRC (optionally ELL+BRC) form, with everything the kernels read: its [`Plan`]
/// (reached through `Deref`: `f.dest`, `f.num_blocks()`) and the arrays [`fill`] writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Brc<T> {
    /// The layout: blocks, destinations, row lists (its piece ranges emptied by [`fill`]: only
    /// the device fill reads them).
    pub plan: Plan,
    /// Values: `rows * ell_width` ELL slots, then the BRC blocks. Padding is zero.
    pub values: Vec<T>,
    /// Column index of each slot (padding: a column another lane loads anyway).
    pub col: Vec<i32>,
    /// Where each CSR non-zero lives in `values`.
    pub value_slot: Vec<u32>,
}

impl<T> std::ops::Deref for Brc<T> {
    type Target = Plan;

    fn deref(&self) -> &Plan {
        &self.plan
    }
}

impl<T: Scalar> Brc<T> {
    /// Bytes of every array the method keeps (the host's extra bytes; the device holds the same
    /// arrays, with the block metadata interleaved).
    pub fn bytes(&self) -> usize {
        self.values.len() * std::mem::size_of::<T>()
            + 4 * (self.col.len()
                + self.nnz_per_block.len()
                + self.block_offset.len()
                + self.dest.len()
                + self.row_perm.len()
                + self.scale_rows.len()
                + self.fix_rows.len()
                + self.fix_ptr.len()
                + self.value_slot.len())
            + self.partial_len() * std::mem::size_of::<T>()
    }

    /// The CSR's values changed (same pattern): rewrite ours through the value map.
    pub fn update_values(&mut self, a: &Csr<T>) {
        crate::methods::scatter_values(a.values(), &self.value_slot, &mut self.values);
    }
}

/// One row of the sorted list: its destination (the row, with [`SPLIT`] set when other pieces
/// or the ELL part also add to it), where in the CSR its BRC part starts and where the row
/// ends. The list is in length order, so it carries everything the plan reads of its row:
/// looking `rp` up per piece would miss the cache about once a piece.
#[derive(Debug, Clone, Copy)]
struct Piece {
    dest: u32,
    start: u32,
    end: u32,
}

impl Piece {
    fn row(&self) -> u32 {
        self.dest & !SPLIT
    }
}

/// B1 and B2 must be at least 1 (`plan` and `layout` refuse other shapes).
fn check_shape(b1: usize, b2: usize) -> Result<()> {
    if b1 == 0 || b2 == 0 {
        return Err(Error::InvalidValue(format!(
            "BRC needs B1 >= 1 and B2 >= 1, got B1 = {b1}, B2 = {b2}"
        )));
    }
    Ok(())
}

/// The start of each block of widths `nnz_per_block` (B1 rows each) in the BRC part, plus the
/// end, and the slots stored with an ELL part of `ell_slots` before them: an error when those
/// exceed what a 32-bit value map addresses. `plan` and `layout` both end with this.
fn block_offsets(nnz_per_block: &[u32], b1: usize, ell_slots: usize) -> Result<(Vec<u32>, usize)> {
    let mut block_offset = Vec::new();
    block_offset
        .try_reserve_exact(nnz_per_block.len() + 1)
        .map_err(|_| {
            Error::AllocFailed(format!("BRC: offsets of {} blocks", nnz_per_block.len()))
        })?;
    let mut total = ell_slots as u128;
    for &t in nnz_per_block {
        block_offset.push((total - ell_slots as u128) as u32);
        total += (b1 * t as usize) as u128;
        if total > u32::MAX as u128 {
            return Err(too_large("the stored slots (ELL + BRC)", total));
        }
    }
    block_offset.push((total - ell_slots as u128) as u32);
    Ok((block_offset, total as usize))
}

fn too_large(what: &str, n: u128) -> Error {
    Error::NotSupported(format!(
        "BRC: {what} would be {n}, above the 2^32-1 a 32-bit value map can address; use another algorithm for this matrix"
    ))
}

/// The part of the BRC form that depends on the row lengths alone (Algorithm 1's queue, the
/// blocks, the destinations and the row lists): what [`fill`] on the host, or `brc_fill` on the
/// device (`cuda.rs`), completes with the columns, the values and the value map.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Rows of the matrix.
    pub rows: usize,
    /// Columns of the matrix.
    pub cols: usize,
    /// Non-zeros of the matrix.
    pub nnz: usize,
    /// B1: rows per block.
    pub b1: usize,
    /// B2: the most entries of one row per block.
    pub b2: usize,
    /// The ELL width k (0: pure BRC). Never above the longest row.
    pub ell_width: usize,
    /// The variant the destinations and row lists were built for.
    pub variant: Variant,
    /// Slots stored, ELL part and blocks (padding and dummy rows included).
    pub slots: usize,
    /// The CSR entry each block row's piece starts at (`block_rows()` entries; 0 for dummies).
    pub piece_start: Vec<u32>,
    /// The entries of each block row's piece (0 for dummies).
    pub piece_len: Vec<u32>,
    /// Original row of each block row (`num_blocks * b1` entries), [`DUMMY`] for filler rows.
    pub row_perm: Vec<u32>,
    /// T of each block (the paper's "non-zeros per block").
    pub nnz_per_block: Vec<u32>,
    /// Start of each block in the BRC part (relative to `ell_slots()`), plus the end.
    pub block_offset: Vec<u32>,
    /// What the kernel does with each block row's sum: [`DUMMY`], a row, or [`SPLIT`] | index.
    pub dest: Vec<u32>,
    /// Atomic variant, pure BRC: rows whose y must become beta*y before the BRC kernel (split
    /// rows, which receive atomics, and empty rows, which appear in no block), ascending.
    pub scale_rows: Vec<u32>,
    /// Deterministic variant: the rows the reduction kernel finishes, ascending (pure BRC:
    /// split and empty rows; hybrid: every row with a BRC part).
    pub fix_rows: Vec<u32>,
    /// Deterministic variant: row `fix_rows[i]`'s partials are `partial[fix_ptr[i]..fix_ptr[i+1]]`,
    /// in the order of their block rows.
    pub fix_ptr: Vec<u32>,
    /// Rows that the BRC part holds in more than one block row.
    pub split_rows: usize,
    /// Rows without entries.
    pub empty_rows: usize,
}

impl Plan {
    /// Slots of the ELL part (`rows * ell_width`).
    pub fn ell_slots(&self) -> usize {
        self.rows * self.ell_width
    }

    /// Blocks of the BRC part.
    pub fn num_blocks(&self) -> usize {
        self.nnz_per_block.len()
    }

    /// Block rows of the BRC part (`num_blocks * b1`): the BRC kernel's work items.
    pub fn block_rows(&self) -> usize {
        self.row_perm.len()
    }

    /// Entries of the deterministic variant's partial-sum buffer.
    pub fn partial_len(&self) -> usize {
        self.fix_ptr.last().copied().unwrap_or(0) as usize
    }

    /// True when the ELL part writes every row first, so the BRC part only adds to y.
    pub fn accumulates(&self) -> bool {
        self.ell_width > 0
    }

    /// Slots stored (ELL + BRC, padding and dummy rows included).
    pub fn stored_slots(&self) -> usize {
        self.slots
    }

    /// Padding overhead: stored slots / nnz (1.0 for a matrix without entries).
    pub fn padding(&self) -> f64 {
        if self.nnz == 0 {
            1.0
        } else {
            self.slots as f64 / self.nnz as f64
        }
    }

    /// The shape of the format for `describe()`: [`summary_of`] of this plan.
    pub fn summary(&self) -> String {
        summary_of(
            (self.slots, self.nnz, self.ell_slots()),
            self.num_blocks(),
            (self.split_rows, self.empty_rows),
            self.variant,
        )
    }
}

/// The shape of a BRC format for `describe()`: blocks, split and empty rows, the variant, and
/// the padding overhead (`padding=` stored slots / nnz, which `tessera bench` prints), from
/// (stored slots, nnz, ELL slots), the blocks and (split rows, empty rows).
pub fn summary_of(
    (slots, nnz, ell_slots): (usize, usize, usize),
    blocks: usize,
    (split_rows, empty_rows): (usize, usize),
    variant: Variant,
) -> String {
    format!(
        "padding={:.3} (stored slots {slots} / nnz {nnz}; ELL {ell_slots}), blocks={blocks}, split_rows={split_rows}, empty_rows={empty_rows}, {}",
        if nnz == 0 { 1.0 } else { slots as f64 / nnz as f64 },
        match variant {
            Variant::Atomic => "atomic (float atomicAdd for split rows: not bitwise reproducible)",
            Variant::Deterministic => "deterministic (split rows' partials reduced in a fixed order)",
        }
    )
}

/// Builds the BRC form of `a` with blocks of `b1` rows and at most `b2` entries of a row per
/// block, with each row's first `ell_width` entries in an ELL part (0: pure BRC; a width
/// above the longest row is lowered to it), for `variant`: [`plan`], then [`fill`].
///
/// Errors: `b1` or `b2` of 0 is `InvalidValue`; more than 2^32 - 1 stored slots is
/// `NotSupported` (the value map is 32-bit); an allocation failure is `AllocFailed`.
pub fn build<T: Scalar>(
    a: &Csr<T>,
    b1: usize,
    b2: usize,
    ell_width: usize,
    variant: Variant,
) -> Result<Brc<T>> {
    let plan = plan(a.row_ptr(), a.cols(), b1, b2, ell_width, variant)?;
    fill(plan, a)
}

/// Completes `plan` (of `a`'s row offsets) with `a`'s columns and values: the ELL part, the
/// blocks (step 4 of the module comment: padding included) and the value map.
pub fn fill<T: Scalar>(mut plan: Plan, a: &Csr<T>) -> Result<Brc<T>> {
    let (rows, nnz, k, b1) = (plan.rows, plan.nnz, plan.ell_width, plan.b1);
    let (rp, ci, va) = (a.row_ptr(), a.col_ind(), a.values());
    let len = |r: usize| (rp[r + 1] - rp[r]) as usize;
    let ell_slots = plan.ell_slots();
    let mut values = try_vec_filled(plan.slots, T::ZERO, "BRC values")?;
    let mut col = try_vec_filled(plan.slots, 0i32, "BRC column indices")?;
    let mut value_slot = try_vec_filled(nnz, 0u32, "BRC value map")?;

    // The ELL part: column j of row i at j*rows + i, real entries row by row (sequential
    // reads, k sequential write streams), then the padding of each aligned group of 32 rows
    // that has any: the column of the nearest row above (else below) in the group with a real
    // entry in column j, else column 0 (then the whole group reads one x entry).
    if k > 0 {
        for (i, w) in rp.windows(2).enumerate() {
            cancel::check_every(i)?;
            let (e0, l) = (w[0] as usize, ((w[1] - w[0]) as usize).min(k));
            for j in 0..l {
                let s = j * rows + i;
                values[s] = va[e0 + j];
                col[s] = ci[e0 + j];
                value_slot[e0 + j] = s as u32;
            }
        }
        for g in (0..rows).step_by(ELL_GROUP) {
            let end = (g + ELL_GROUP).min(rows);
            let shortest = (g..end).map(len).min().unwrap_or(0);
            for j in shortest..k {
                let base = j * rows;
                let first = (g..end).find(|&i| len(i) > j).map_or(0, |i| col[base + i]);
                let mut last = first;
                for i in g..end {
                    if len(i) > j {
                        last = col[base + i];
                    } else {
                        col[base + i] = last;
                    }
                }
            }
        }
    }

    // 4. The blocks, column-major: real entries piece by piece (sequential reads of the CSR,
    // writes within the block's few KB), then the padding of the slots that have any (slot j
    // needs it only when some block row's piece is shorter than j+1, or the block has dummies,
    // whose pieces are empty).
    for b in 0..plan.num_blocks() {
        cancel::check_every(b * b1)?;
        let t = plan.nnz_per_block[b] as usize;
        let off = ell_slots + plan.block_offset[b] as usize;
        let pieces = b * b1..(b + 1) * b1;
        let plen = &plan.piece_len[pieces.clone()];
        for (r, (&e0, &l)) in plan.piece_start[pieces].iter().zip(plen).enumerate() {
            let e0 = e0 as usize;
            for (j, e) in (e0..e0 + l as usize).enumerate() {
                let s = off + j * b1 + r;
                values[s] = va[e];
                col[s] = ci[e];
                value_slot[e] = s as u32;
            }
        }
        let shortest = plen.iter().min().map_or(0, |&l| l as usize);
        for j in shortest..t {
            let base = off + j * b1;
            let first = (0..b1)
                .find(|&r| plen[r] as usize > j)
                .map(|r| col[base + r])
                .expect("T is the longest piece of the block");
            let mut last = first;
            for (r, &l) in plen.iter().enumerate() {
                if l as usize > j {
                    last = col[base + r];
                } else {
                    col[base + r] = last;
                }
            }
        }
    }

    plan.piece_start = Vec::new();
    plan.piece_len = Vec::new();
    Ok(Brc {
        plan,
        values,
        col,
        value_slot,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's example (Eq. 1): 4 x 6, values A..J = 1..10.
    ///     [0 A 0 B 0 0]
    ///     [0 0 C 0 D 0]
    ///     [E F G 0 H I]
    ///     [0 0 0 J 0 0]
    fn paper_matrix() -> Csr<f64> {
        let (a, b, c, d, e, f, g, h, i, j) = (1., 2., 3., 4., 5., 6., 7., 8., 9., 10.);
        Csr::from_triplets(
            4,
            6,
            &[
                (0, 1, a),
                (0, 3, b),
                (1, 2, c),
                (1, 4, d),
                (2, 0, e),
                (2, 1, f),
                (2, 2, g),
                (2, 4, h),
                (2, 5, i),
                (3, 3, j),
            ],
        )
        .unwrap()
    }

    #[test]
    fn paper_figure_2b_blocked_row_column() {
        // Figure 2-b's narrative fixes the shape: sorted rows 2 (5), 0 (2), 1 (2), 3 (1); "when
        // scanning rows in V-Block1, we only have one row to use for building Block2", so the
        // first vertical block leaves one row after whole blocks: B1 = 3. B2 by Eq. 3 with
        // C = 1: mu = 2.5, sigma = 1.5 -> round(4.0) = 4 < MaxNZ = 5, so row 2 is split and its
        // last entry (I) fills Block2 with row 3 (J) and a dummy row.
        let f = build(&paper_matrix(), 3, 4, 0, Variant::Atomic).unwrap();
        let (a, b, c, d, e, ff, g, h, i, j) = (1., 2., 3., 4., 5., 6., 7., 8., 9., 10.);
        assert_eq!(f.row_perm, [2, 0, 1, 3, 2, DUMMY]);
        assert_eq!(f.nnz_per_block, [4, 1]);
        assert_eq!(f.block_offset, [0, 12, 15]);
        // Block 1 (rows 2, 0, 1; T = 4) column by column, then block 2 (rows 3, 2, dummy).
        assert_eq!(
            f.values,
            [e, a, c, ff, b, d, g, 0., 0., h, 0., 0., j, i, 0.]
        );
        // Padding reuses the column of the previous row in the block (G's 2, H's 4, I's 5).
        assert_eq!(f.col, [0, 1, 2, 1, 3, 4, 2, 2, 2, 4, 4, 4, 3, 5, 5]);
        // CSR order A B C D E F G H I J -> slots.
        assert_eq!(f.value_slot, [1, 4, 2, 5, 0, 3, 6, 9, 13, 12]);
        assert_eq!((f.split_rows, f.empty_rows), (1, 0));
        assert_eq!(f.dest, [2 | SPLIT, 0, 1, 3, 2 | SPLIT, DUMMY]);
        assert_eq!(f.scale_rows, [2]);
        assert!((f.padding() - 1.5).abs() < 1e-12);
    }

    #[test]
    fn paper_figure_2a_blocked_row_is_brc_with_b2_at_least_the_longest_row() {
        let f = build(&paper_matrix(), 3, 1000, 0, Variant::Atomic).unwrap();
        let (a, b, c, d, e, ff, g, h, i, j) = (1., 2., 3., 4., 5., 6., 7., 8., 9., 10.);
        assert_eq!(f.row_perm, [2, 0, 1, 3, DUMMY, DUMMY]);
        assert_eq!(f.nnz_per_block, [5, 1]);
        assert_eq!(f.block_offset, [0, 15, 18]);
        assert_eq!(
            f.values,
            [e, a, c, ff, b, d, g, 0., 0., h, 0., 0., i, 0., 0., j, 0., 0.]
        );
        assert_eq!(
            f.col,
            [0, 1, 2, 1, 3, 4, 2, 2, 2, 4, 4, 4, 5, 5, 5, 3, 3, 3]
        );
        assert_eq!(f.split_rows, 0);
        assert!(f.scale_rows.is_empty());
    }

    #[test]
    fn paper_example_deterministic_variant_buffers_the_split_row_in_block_order() {
        let f = build(&paper_matrix(), 3, 4, 0, Variant::Deterministic).unwrap();
        assert_eq!(f.dest, [SPLIT, 0, 1, 3, SPLIT | 1, DUMMY]);
        assert_eq!(
            (f.fix_rows.as_slice(), f.fix_ptr.as_slice()),
            (&[2u32][..], &[0u32, 2][..])
        );
        assert_eq!(f.partial_len(), 2);
        assert!(f.scale_rows.is_empty());
    }

    #[test]
    fn a_row_longer_than_the_queue_fills_one_block_several_times() {
        // One row of 10 and B2 = 3: Algorithm 1 takes the front, re-queues the rest; with no
        // other rows the pieces 3, 3, 3, 1 land in one block of B1 = 4.
        let a = Csr::from_triplets(
            1,
            10,
            &(0..10).map(|c| (0, c, c as f64 + 1.0)).collect::<Vec<_>>(),
        )
        .unwrap();
        let f = build(&a, 4, 3, 0, Variant::Atomic).unwrap();
        assert_eq!(f.row_perm, [0, 0, 0, 0]);
        assert_eq!(f.nnz_per_block, [3]);
        assert_eq!(f.values, [1., 4., 7., 10., 2., 5., 8., 0., 3., 6., 9., 0.]);
        assert_eq!(f.col, [0, 3, 6, 9, 1, 4, 7, 7, 2, 5, 8, 8]);
        assert!(f.dest.iter().all(|&d| d == SPLIT));
    }

    #[test]
    fn a_padded_first_row_borrows_the_column_of_the_row_below() {
        // Rows 0 (len 1), 1 (len 1), 2 (len 3), B1 = 2, B2 = 2: sorted 2, 0, 1; the queue
        // yields 2 (2 entries), 0, 1, 2's last entry -> blocks [2, 0] (T 2), [1, 2'] (T 1).
        // Row 0 is padded in slot 1 with the column of row 2 above it (7).
        let a = Csr::from_triplets(
            3,
            9,
            &[
                (0, 0, 1.0),
                (1, 4, 2.0),
                (2, 6, 3.0),
                (2, 7, 4.0),
                (2, 8, 5.0),
            ],
        )
        .unwrap();
        let f = build(&a, 2, 2, 0, Variant::Atomic).unwrap();
        assert_eq!(f.row_perm, [2, 0, 1, 2]);
        assert_eq!(f.nnz_per_block, [2, 1]);
        assert_eq!(f.values, [3., 1., 4., 0., 2., 5.]);
        assert_eq!(f.col, [6, 0, 7, 7, 4, 8]);
        // Now a block whose first row is shorter than the second: rows 0 (len 5), 1 (len 2),
        // B1 = 2, B2 = 3: block 1 [0: 3, 1: 2] (T 3), block 2 [0's remainder: 2] + dummy.
        let a = Csr::from_triplets(
            3,
            9,
            &[
                (0, 0, 1.0),
                (0, 1, 1.0),
                (0, 2, 1.0),
                (0, 3, 1.0),
                (0, 5, 1.0),
                (1, 4, 2.0),
                (1, 6, 2.0),
                (2, 8, 7.0),
            ],
        )
        .unwrap();
        let f = build(&a, 2, 3, 0, Variant::Atomic).unwrap();
        // Sorted: 0 (5), 1 (2), 2 (1). Blocks: [0: 3, 1: 2] T 3; [2: 1, 0: 2] T 2 -> row 2 is
        // padded in slot 1 and has no row above: it borrows the column of row 0 below (5).
        assert_eq!(f.row_perm, [0, 1, 2, 0]);
        assert_eq!(f.nnz_per_block, [3, 2]);
        assert_eq!(&f.col[6..], [8, 3, 5, 5]);
        assert_eq!(&f.values[6..], [7., 1., 0., 1.]);
    }

    #[test]
    fn empty_rows_are_in_no_block_and_in_the_row_lists() {
        let a = Csr::from_triplets(5, 5, &[(1, 1, 1.0), (3, 0, 2.0), (3, 4, 3.0)]).unwrap();
        let f = build(&a, 32, 8, 0, Variant::Atomic).unwrap();
        assert_eq!(f.num_blocks(), 1);
        assert_eq!(&f.row_perm[..3], [3, 1, DUMMY]);
        assert_eq!(f.scale_rows, [0, 2, 4]);
        let f = build(&a, 32, 8, 0, Variant::Deterministic).unwrap();
        assert_eq!(f.fix_rows, [0, 2, 4]);
        assert_eq!(f.fix_ptr, [0, 0, 0, 0]);
        // No entries at all: no blocks, every row scaled.
        let e = Csr::<f64>::from_triplets(3, 2, &[]).unwrap();
        let f = build(&e, 32, 8, 5, Variant::Atomic).unwrap();
        assert_eq!((f.num_blocks(), f.ell_width, f.stored_slots()), (0, 0, 0));
        assert_eq!(f.scale_rows, [0, 1, 2]);
        assert_eq!(f.padding(), 1.0);
    }

    #[test]
    fn hybrid_puts_the_first_k_entries_in_ell_and_the_rest_in_brc() {
        // Rows of lengths 3, 1, 0, 5 with k = 2: ELL 4 x 2, BRC holds row 0's last entry and
        // row 3's last three.
        let t = [
            (0, 0, 1.0),
            (0, 2, 2.0),
            (0, 4, 3.0),
            (1, 1, 4.0),
            (3, 0, 5.0),
            (3, 1, 6.0),
            (3, 2, 7.0),
            (3, 3, 8.0),
            (3, 5, 9.0),
        ];
        let a = Csr::from_triplets(4, 6, &t).unwrap();
        let f = build(&a, 2, 8, 2, Variant::Atomic).unwrap();
        assert_eq!(f.ell_slots(), 8);
        // ELL column 0: rows 0..4 = 1, 4, pad, 5; column 1: 2, pad, pad, 6.
        assert_eq!(&f.values[..8], [1., 4., 0., 5., 2., 0., 0., 6.]);
        assert_eq!(&f.col[..8], [0, 1, 1, 0, 2, 2, 2, 1]);
        // BRC: sorted remainders 3 (3), 0 (1): one block of 2 rows, T = 3.
        assert_eq!(f.row_perm, [3, 0]);
        assert_eq!(&f.values[8..], [7., 3., 8., 0., 9., 0.]);
        assert_eq!(f.dest, [3 | SPLIT, SPLIT]);
        assert!(f.scale_rows.is_empty());
        let f = build(&a, 2, 8, 2, Variant::Deterministic).unwrap();
        assert_eq!(f.fix_rows, [0, 3]);
        assert_eq!(f.fix_ptr, [0, 1, 2]);
        assert_eq!(f.dest, [SPLIT | 1, SPLIT]);
        // k above the longest row is lowered: ELL only, no blocks.
        let f = build(&a, 32, 8, 99, Variant::Atomic).unwrap();
        assert_eq!((f.ell_width, f.num_blocks()), (5, 0));
    }

    #[test]
    fn the_value_map_names_every_entry_once_and_padding_is_zero() {
        let (_, a) = crate::io::load("gen:powerlaw:10,6,3").unwrap();
        for (b1, b2, k) in [(32, 4, 0), (32, 64, 0), (7, 3, 0), (32, 5, 2), (32, 1, 1)] {
            let f = build(&a, b1, b2, k, Variant::Atomic).unwrap();
            let mut seen = vec![false; f.stored_slots()];
            for (e, &s) in f.value_slot.iter().enumerate() {
                assert!(!seen[s as usize], "slot {s} twice");
                seen[s as usize] = true;
                assert_eq!(f.values[s as usize], a.values()[e]);
                assert_eq!(f.col[s as usize], a.col_ind()[e]);
            }
            for (s, &v) in f.values.iter().enumerate() {
                if !seen[s] {
                    assert_eq!(v, 0.0);
                }
            }
            // Every block is as wide as its widest piece, and no block is all padding.
            for b in 0..f.num_blocks() {
                let t = f.nnz_per_block[b] as usize;
                assert!(t >= 1 && t <= b2);
                assert_eq!(f.block_offset[b + 1] - f.block_offset[b], (b1 * t) as u32);
            }
            // Rows sorted by length descending in the first vertical block.
            if k == 0 {
                let n = f.row_perm.iter().filter(|&&r| r != DUMMY).count();
                assert_eq!(
                    n,
                    (0..a.rows())
                        .map(|r| {
                            let l = (a.row_ptr()[r + 1] - a.row_ptr()[r]) as usize;
                            l.div_ceil(b2)
                        })
                        .sum::<usize>()
                );
            }
        }
    }

    #[test]
    fn refuses_zero_block_sizes() {
        let a = paper_matrix();
        assert!(matches!(
            build(&a, 0, 4, 0, Variant::Atomic),
            Err(Error::InvalidValue(_))
        ));
        assert!(matches!(
            build(&a, 3, 0, 0, Variant::Atomic),
            Err(Error::InvalidValue(_))
        ));
    }
}
