//! Host twin of `kernels/hola.cu`: the same blocks of NPB non-zeros, the same block row ranges
//! from the row-start buffer, the same three block modes (one row / bit masks / COO), the same
//! per-thread row starts, row-end bit masks and empty-row warp flags of Alg. 4, the same plain
//! stores of completed rows, the same choice between the warp segmented reduction of Alg. 6 and
//! per-lane adds for leftovers, and the same write paths (plain write with beta for rows owned
//! by one block; for rows shared between blocks, each block's part into its carry slot and
//! y = alpha*(sum of the parts in block order) + beta*y once all are in). The warp width is a
//! parameter, so tests can make many warps out of a few threads. Where the GPU order is set by
//! atomics, the reference adds in thread order: results agree to rounding, not bitwise.
//!
//! It also checks the kernel's invariants as it goes (every row of a bit-mask block is stored
//! exactly once; leftovers only go to rows that exist) and panics if one fails, so the tests
//! exercise the partitioning logic itself.
#![forbid(unsafe_code)]

use crate::csr::Csr;
use crate::scalar::Scalar;

/// The thread layout the kernel runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Threads per block (a multiple of `warp`).
    pub threads: usize,
    /// Non-zeros per thread (at most 32: one bit each in a `u32` mask).
    pub npt: usize,
    /// Lanes per warp (32 on the GPU).
    pub warp: usize,
}

impl Layout {
    /// The GPU's layout for `p`.
    pub fn gpu(p: &super::Params) -> Self {
        Layout {
            threads: p.threads as usize,
            npt: p.npt as usize,
            warp: 32,
        }
    }

    /// Non-zeros per block.
    pub fn npb(&self) -> usize {
        self.threads * self.npt
    }

    fn check(&self) {
        assert!(
            self.warp > 0
                && self.threads % self.warp == 0
                && self.warp <= 32
                && (1..=32).contains(&self.npt),
            "invalid HOLA layout {self:?}"
        );
    }
}

/// A block's share of the matrix (`HolaBlock` in the kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// First non-zero.
    pub bs: usize,
    /// Non-zeros (NPB except in the last block).
    pub bn: usize,
    /// First row.
    pub r0: usize,
    /// Rows in the block's range, empty ones included.
    pub nrows: usize,
    /// The first row began in an earlier block and spans three blocks or more.
    pub first_shared: bool,
    /// The last row goes on in the next block and spans three blocks or more.
    pub last_shared: bool,
    /// The first row began in the previous block and ends in this one: that block's row.
    pub first_skip: bool,
    /// The last row starts in this block and ends in the next: the block reads the row's tail,
    /// non-zeros `bs + npb .. tail_end`, itself (0: no such row).
    pub tail_end: usize,
}

/// Block `b` of the split (`hola_block`), with ownership (`own`: a row spanning two blocks is
/// the first one's) or without (every row crossing a block boundary is shared).
pub fn block(row_ptr: &[i32], starts: &[i32], npb: usize, b: usize, own: bool) -> Block {
    let rows = row_ptr.len() - 1;
    let nnz = row_ptr[rows] as usize;
    let nblocks = starts.len() - 1;
    let bs = b * npb;
    let r0 = starts[b] as usize;
    let (mut r1, mut last_shared, mut tail_end) = (rows, false, 0);
    if b + 1 < nblocks {
        let rn = starts[b + 1] as usize;
        let (a, e) = (row_ptr[rn] as usize, row_ptr[rn + 1] as usize);
        r1 = rn;
        if a < bs + npb {
            r1 = rn + 1;
            if own && a >= bs && e <= bs + 2 * npb {
                tail_end = e;
            } else {
                last_shared = true;
            }
        }
    }
    let a0 = row_ptr[r0] as usize;
    let first_skip = own && a0 < bs && a0 + npb >= bs && row_ptr[r0 + 1] as usize <= bs + npb;
    Block {
        bs,
        bn: npb.min(nnz - bs),
        r0,
        nrows: r1 - r0,
        first_shared: a0 < bs && !first_skip,
        last_shared,
        first_skip,
        tail_end,
    }
}

/// The owned last row's tail (`k.tail_end`), as `hola_tail` and the warp sums add it: thread t
/// takes non-zeros `bs + npb + t + j*threads`.
fn tail_sum<T: Scalar>(a: &Csr<T>, k: &Block, lay: Layout, x: &[T]) -> T {
    let (ci, va) = (a.col_ind(), a.values());
    let start = k.bs + lay.npb();
    let mut lanes: Vec<T> = (0..lay.threads)
        .map(|t| {
            (0..lay.npt)
                .map(|j| start + t + j * lay.threads)
                .filter(|&p| p < k.tail_end)
                .fold(T::ZERO, |acc, p| acc + va[p] * x[ci[p] as usize])
        })
        .collect();
    lanes
        .chunks_mut(lay.warp)
        .fold(T::ZERO, |acc, w| acc + warp_tree_sum(w))
}

/// How a block runs (§3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One row: block-wide sum.
    OneRow,
    /// Row starts and bit masks in shared memory.
    BitMask,
    /// More rows than non-zeros per block: per-thread binary search, atomics to y.
    Coo,
}

impl Block {
    /// The block's mode.
    pub fn mode(&self, npb: usize) -> Mode {
        if self.nrows == 1 {
            Mode::OneRow
        } else if self.nrows > npb {
            Mode::Coo
        } else {
            Mode::BitMask
        }
    }
}

/// Alg. 4's shared arrays for one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalRows {
    /// Per thread: local index of the row holding its first non-zero; -1 without non-zeros.
    pub row: Vec<i32>,
    /// Per thread: bit j set when its j-th non-zero ends a row (or the block).
    pub bits: Vec<u32>,
    /// Per warp: its threads must step over empty rows.
    pub flag: Vec<bool>,
    /// Local indices of the empty rows (their output buffer entry is 0).
    pub empty: Vec<usize>,
}

/// Alg. 4 (AssignRowsLocal) for a bit-mask block.
pub fn assign_rows(row_ptr: &[i32], k: &Block, lay: Layout) -> LocalRows {
    let npb = lay.npb();
    let mut l = LocalRows {
        row: vec![-1; lay.threads],
        bits: vec![0; lay.threads],
        flag: vec![false; lay.threads / lay.warp],
        empty: Vec::new(),
    };
    for i in 0..k.nrows {
        let r = k.r0 + i;
        let a = (row_ptr[r] as i64 - k.bs as i64).max(0) as usize;
        let e = ((row_ptr[r + 1] as i64 - k.bs as i64).max(0) as usize).min(npb);
        if a >= e {
            l.empty.push(i);
            if a > 0 {
                l.flag[(a - 1) / (lay.warp * lay.npt)] = true;
            }
        } else {
            let (ta, tb) = (a.div_ceil(lay.npt), (e - 1) / lay.npt);
            for t in ta..=tb {
                l.row[t] = i as i32;
            }
            l.bits[tb] |= 1 << ((e - 1) - tb * lay.npt);
        }
    }
    l
}

/// The local row after `row` that holds a non-zero (`hola_next_row`).
fn next_row(row: usize, flagged: bool, k: &Block, row_ptr: &[i32]) -> usize {
    let mut row = row + 1;
    if flagged {
        while row < k.nrows && row_ptr[k.r0 + row] == row_ptr[k.r0 + row + 1] {
            row += 1;
        }
    }
    row
}

/// The row holding non-zero p (`hola_find_row`).
fn find_row(row_ptr: &[i32], k: &Block, p: usize) -> usize {
    let rows = &row_ptr[k.r0..k.r0 + k.nrows];
    k.r0 + rows.partition_point(|&v| v as usize <= p) - 1
}

fn scaled<T: Scalar>(beta: T, y: T) -> T {
    if beta == T::ZERO {
        T::ZERO
    } else {
        beta * y
    }
}

/// Sum of `lanes` in the order of `tessera_group_sum<32>` (offsets width/2 .. 1).
fn warp_tree_sum<T: Scalar>(lanes: &mut [T]) -> T {
    let mut o = lanes.len() / 2;
    while o > 0 {
        for l in 0..o {
            let add = lanes[l + o];
            lanes[l] += add;
        }
        o /= 2;
    }
    lanes[0]
}

/// The carry protocol: the parts of each row shared between blocks, by row, in block order.
#[derive(Debug, Default)]
struct Carry<T> {
    parts: std::collections::BTreeMap<usize, Vec<(usize, T)>>,
}

impl<T: Scalar> Carry<T> {
    /// Block `b` hands in its part of shared row `r`.
    fn put(&mut self, b: usize, r: usize, part: T) {
        let v = self.parts.entry(r).or_default();
        assert!(
            v.last().is_none_or(|&(p, _)| p < b),
            "row {r}: block {b} carried twice or out of order"
        );
        v.push((b, part));
    }

    /// After checking that every shared row got exactly one part from each block it spans
    /// (what the kernel's counters count): in carry mode y[r] = alpha*(sum of the parts) +
    /// beta*y[r]; otherwise as `hola_prescale` + atomics do it, y[r] = beta*y[r] and then
    /// alpha*part added for each part.
    fn finish(self, rp: &[i32], npb: usize, carry_mode: bool, alpha: T, beta: T, y: &mut [T]) {
        for (r, parts) in self.parts {
            let (s, e) = (rp[r] as usize / npb, (rp[r + 1] as usize - 1) / npb);
            let blocks: Vec<usize> = parts.iter().map(|&(b, _)| b).collect();
            assert_eq!(
                blocks,
                (s..=e).collect::<Vec<_>>(),
                "row {r}: carried parts"
            );
            if carry_mode {
                let sum = parts.iter().fold(T::ZERO, |acc, &(_, v)| acc + v);
                y[r] = if beta == T::ZERO {
                    alpha * sum
                } else {
                    alpha * sum + beta * y[r]
                };
            } else {
                y[r] = scaled(beta, y[r]);
                for (_, v) in parts {
                    y[r] += alpha * v;
                }
            }
        }
    }
}

/// y = alpha*A*x + beta*y as `hola_spmv` (`own` false: after `hola_prescale`) or
/// `hola_spmv_carry` / `hola_spmv_own` (`own` true: ownership, shared rows carried) computes
/// it, with the row-start buffer `starts`
/// (`format::row_starts(row_ptr, lay.npb())`). `beta == 0` never reads y.
#[allow(clippy::too_many_arguments)]
pub fn spmv<T: Scalar>(
    a: &Csr<T>,
    starts: &[i32],
    lay: Layout,
    own: bool,
    alpha: T,
    x: &[T],
    beta: T,
    y: &mut [T],
) {
    lay.check();
    let (rp, ci, va) = (a.row_ptr(), a.col_ind(), a.values());
    let npb = lay.npb();
    assert_eq!(
        starts.len(),
        a.nnz().div_ceil(npb) + 1,
        "row starts for another NPB"
    );
    if a.nnz() == 0 {
        y.iter_mut().for_each(|v| *v = scaled(beta, *v));
        return;
    }
    let mut carry = Carry::default();
    let mut prod = vec![T::ZERO; npb];
    for b in 0..starts.len() - 1 {
        let k = block(rp, starts, npb, b, own);
        for (j, p) in prod.iter_mut().enumerate() {
            let q = k.bs + j;
            *p = if j < k.bn {
                va[q] * x[ci[q] as usize]
            } else {
                T::ZERO
            };
        }
        let tail = if k.tail_end > 0 {
            tail_sum(a, &k, lay, x)
        } else {
            T::ZERO
        };
        match k.mode(npb) {
            Mode::OneRow if k.first_skip => {}
            Mode::OneRow => {
                // Per-thread sums, a tree per warp, then the warps in order.
                let mut s = tail;
                for w in prod.chunks(lay.npt * lay.warp) {
                    let mut lanes: Vec<T> = w
                        .chunks(lay.npt)
                        .map(|t| t.iter().fold(T::ZERO, |acc, &v| acc + v))
                        .collect();
                    s += warp_tree_sum(&mut lanes);
                }
                let r = k.r0;
                if k.first_shared || k.last_shared {
                    carry.put(b, r, s);
                    continue;
                }
                y[r] = if beta == T::ZERO {
                    alpha * s
                } else {
                    alpha * s + beta * y[r]
                };
            }
            Mode::Coo => coo_block(rp, &k, lay, (&prod, tail), alpha, beta, y, |r, v| {
                carry.put(b, r, v)
            }),
            Mode::BitMask => bitmask_block(rp, &k, lay, (&prod, tail), alpha, beta, y, |r, v| {
                carry.put(b, r, v)
            }),
        }
    }
    carry.finish(rp, npb, own, alpha, beta, y);
}

#[allow(clippy::too_many_arguments)]
fn coo_block<T: Scalar>(
    rp: &[i32],
    k: &Block,
    lay: Layout,
    (prod, tail): (&[T], T),
    alpha: T,
    beta: T,
    y: &mut [T],
    mut carry: impl FnMut(usize, T),
) {
    let (first, last) = (k.r0, k.r0 + k.nrows - 1);
    let mut acc_first = T::ZERO;
    let mut acc_last = T::ZERO;
    for i in 0..k.nrows {
        let shared =
            (i == 0 && (k.first_shared || k.first_skip)) || (i == k.nrows - 1 && k.last_shared);
        if !shared {
            y[k.r0 + i] = scaled(beta, y[k.r0 + i]);
        }
    }
    if k.tail_end > 0 {
        y[last] += alpha * tail;
    }
    let pend = k.bs + k.bn;
    for t in 0..lay.threads {
        let p0 = k.bs + t * lay.npt;
        if p0 >= pend {
            continue;
        }
        let mut r = find_row(rp, k, p0);
        let mut end = rp[r + 1] as usize;
        let mut acc = T::ZERO;
        for j in 0..lay.npt {
            let p = p0 + j;
            if p >= pend {
                break;
            }
            acc += prod[p - k.bs];
            if p + 1 == end || j == lay.npt - 1 || p + 1 == pend {
                if r == first && k.first_skip {
                    // the previous block's row
                } else if r == first && k.first_shared {
                    acc_first += acc;
                } else if r == last && k.last_shared {
                    acc_last += acc;
                } else {
                    y[r] += alpha * acc;
                }
                acc = T::ZERO;
                if p + 1 == end && j < lay.npt - 1 && p + 1 < pend {
                    loop {
                        r += 1;
                        end = rp[r + 1] as usize;
                        if end > p + 1 {
                            break;
                        }
                    }
                }
            }
        }
    }
    if k.first_shared {
        carry(first, acc_first);
    }
    if k.last_shared {
        carry(last, acc_last);
    }
}

#[allow(clippy::too_many_arguments)]
fn bitmask_block<T: Scalar>(
    rp: &[i32],
    k: &Block,
    lay: Layout,
    (prod, tail): (&[T], T),
    alpha: T,
    beta: T,
    y: &mut [T],
    mut carry: impl FnMut(usize, T),
) {
    let l = assign_rows(rp, k, lay);
    let mut out: Vec<Option<T>> = vec![None; k.nrows];
    for &i in &l.empty {
        out[i] = Some(T::ZERO);
    }
    // Per thread: completed rows stored, then (row, leftover, open).
    let mut left = Vec::with_capacity(lay.threads);
    for t in 0..lay.threads {
        let flagged = l.flag[t / lay.warp];
        let mut row = l.row[t];
        let mut acc = T::ZERO;
        let mut open = false;
        for j in 0..lay.npt {
            acc += prod[t * lay.npt + j];
            open |= t * lay.npt + j < k.bn;
            if (l.bits[t] >> j) & 1 == 1 {
                assert!(row >= 0, "block {k:?} thread {t}: a row end without a row");
                let slot = &mut out[row as usize];
                assert!(
                    slot.is_none(),
                    "block {k:?} thread {t}: local row {row} stored twice"
                );
                *slot = Some(acc);
                acc = T::ZERO;
                open = false;
                row = next_row(row as usize, flagged, k, rp) as i32;
            }
        }
        left.push((row, acc, open));
    }
    let add = |out: &mut Vec<Option<T>>, row: i32, v: T| {
        let slot = out
            .get_mut(usize::try_from(row).unwrap_or(usize::MAX))
            .unwrap_or_else(|| panic!("block {k:?}: leftover for local row {row}"));
        *slot = Some(slot.expect("a continuing row is stored by the thread where it ends") + v);
    };
    for w in 0..lay.threads / lay.warp {
        let lanes = &left[w * lay.warp..(w + 1) * lay.warp];
        let bits = &l.bits[w * lay.warp..(w + 1) * lay.warp];
        let no_end = (0..lay.warp)
            .filter(|&i| (w * lay.warp + i) * lay.npt < k.bn && bits[i] == 0)
            .count();
        if no_end > lay.warp / 2 {
            // Alg. 6, in the kernel's doubling order.
            let head: Vec<bool> = (0..lay.warp).map(|i| bits[i] != 0 || i == 0).collect();
            let seg_end: Vec<usize> = (0..lay.warp)
                .map(|i| {
                    (i + 1..lay.warp)
                        .find(|&h| head[h])
                        .map_or(lay.warp - 1, |h| h - 1)
                })
                .collect();
            let mut v: Vec<T> = lanes
                .iter()
                .map(|&(_, acc, open)| if open { acc } else { T::ZERO })
                .collect();
            let mut o = 1;
            while o < lay.warp {
                let prev = v.clone();
                for i in 0..lay.warp {
                    if i + o <= seg_end[i] {
                        v[i] += prev[i + o];
                    }
                }
                o *= 2;
            }
            for i in 0..lay.warp {
                if head[i] && (i..=seg_end[i]).any(|j| lanes[j].2) {
                    add(&mut out, lanes[i].0, v[i]);
                }
            }
        } else {
            for &(row, acc, open) in lanes {
                if open {
                    add(&mut out, row, acc);
                }
            }
        }
    }
    if k.tail_end > 0 {
        add(&mut out, k.nrows as i32 - 1, tail);
    }
    for (i, v) in out.into_iter().enumerate() {
        let v = v.unwrap_or_else(|| panic!("block {k:?}: local row {i} never stored"));
        let r = k.r0 + i;
        if i == 0 && k.first_skip {
            continue;
        }
        if (i == 0 && k.first_shared) || (i == k.nrows - 1 && k.last_shared) {
            carry(r, v);
            continue;
        }
        let v = alpha * v;
        y[r] = if beta == T::ZERO { v } else { v + beta * y[r] };
    }
}

/// The row of every non-zero of block `k` as the transposed kernel finds it (one row, binary
/// search, or bit masks and flags); `None` for padding.
pub fn element_rows(rp: &[i32], k: &Block, lay: Layout) -> Vec<Option<usize>> {
    let npb = lay.npb();
    let pend = k.bs + k.bn;
    let mut rows = vec![None; npb];
    match k.mode(npb) {
        Mode::OneRow => rows[..k.bn].iter_mut().for_each(|r| *r = Some(k.r0)),
        Mode::Coo => {
            for t in 0..lay.threads {
                let p0 = k.bs + t * lay.npt;
                if p0 >= pend {
                    continue;
                }
                let mut r = find_row(rp, k, p0);
                let mut end = rp[r + 1] as usize;
                for j in 0..lay.npt {
                    let p = p0 + j;
                    if p < pend {
                        rows[p - k.bs] = Some(r);
                    }
                    if p + 1 == end && p + 1 < pend && j < lay.npt - 1 {
                        loop {
                            r += 1;
                            end = rp[r + 1] as usize;
                            if end > p + 1 {
                                break;
                            }
                        }
                    }
                }
            }
        }
        Mode::BitMask => {
            let l = assign_rows(rp, k, lay);
            for t in 0..lay.threads {
                let flagged = l.flag[t / lay.warp];
                let mut row = l.row[t];
                if row < 0 {
                    continue;
                }
                for j in 0..lay.npt {
                    let q = t * lay.npt + j;
                    if q < k.bn {
                        rows[q] = Some(k.r0 + row as usize);
                    }
                    if (l.bits[t] >> j) & 1 == 1 {
                        row = next_row(row as usize, flagged, k, rp) as i32;
                    }
                }
            }
        }
    }
    rows
}

/// y = alpha*A^T*x + beta*y as `hola_spmvt` computes it (Alg. 7). `beta == 0` never reads y.
pub fn spmv_transpose<T: Scalar>(
    a: &Csr<T>,
    starts: &[i32],
    lay: Layout,
    alpha: T,
    x: &[T],
    beta: T,
    y: &mut [T],
) {
    lay.check();
    let (rp, ci, va) = (a.row_ptr(), a.col_ind(), a.values());
    let npb = lay.npb();
    assert_eq!(
        starts.len(),
        a.nnz().div_ceil(npb) + 1,
        "row starts for another NPB"
    );
    y.iter_mut().for_each(|v| *v = scaled(beta, *v));
    for b in 0..starts.len() - 1 {
        let k = block(rp, starts, npb, b, false);
        for (j, r) in element_rows(rp, &k, lay).into_iter().enumerate() {
            if j >= k.bn {
                break;
            }
            let r = r.unwrap_or_else(|| panic!("block {k:?}: non-zero {j} got no row"));
            let q = k.bs + j;
            assert!(
                (rp[r] as usize..rp[r + 1] as usize).contains(&q),
                "block {k:?}: non-zero {q} assigned to row {r}"
            );
            y[ci[q] as usize] += va[q] * (alpha * x[r]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::format::row_starts;
    use super::*;
    use crate::types::Operation;

    const LAYOUTS: &[Layout] = &[
        Layout {
            threads: 4,
            npt: 2,
            warp: 2,
        },
        Layout {
            threads: 8,
            npt: 4,
            warp: 4,
        },
        Layout {
            threads: 4,
            npt: 1,
            warp: 4,
        },
        Layout {
            threads: 64,
            npt: 8,
            warp: 32,
        },
        Layout {
            threads: 256,
            npt: 8,
            warp: 32,
        },
    ];

    fn products(a: &Csr<f64>, lay: Layout) -> (Vec<f64>, Vec<f64>) {
        let starts = row_starts(a.row_ptr(), lay.npb());
        let x: Vec<f64> = (0..a.cols()).map(|i| 1.0 + (i % 7) as f64).collect();
        let xt: Vec<f64> = (0..a.rows()).map(|i| 1.0 - (i % 5) as f64).collect();
        let mut y = vec![f64::NAN; a.rows()];
        spmv(a, &starts, lay, false, 1.0, &x, 0.0, &mut y);
        let mut yt = vec![f64::NAN; a.cols()];
        spmv_transpose(a, &starts, lay, 1.0, &xt, 0.0, &mut yt);
        (y, yt)
    }

    fn assert_close(what: &str, got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-12 * (1.0 + w.abs()),
                "{what}: y[{i}] = {g}, want {w}"
            );
        }
    }

    /// Checks both products against the plain CSR product for every layout and alpha/beta.
    fn check(name: &str, a: &Csr<f64>) {
        for &lay in LAYOUTS {
            let starts = row_starts(a.row_ptr(), lay.npb());
            for op in [Operation::NonTranspose, Operation::Transpose] {
                let (xl, yl) = match op {
                    Operation::NonTranspose => (a.cols(), a.rows()),
                    Operation::Transpose => (a.rows(), a.cols()),
                };
                let x: Vec<f64> = (0..xl).map(|i| ((i * 37) % 11) as f64 - 4.5).collect();
                for (alpha, beta) in [(1.0, 0.0), (-2.0, 0.5), (3.0, 1.0)] {
                    let y0: Vec<f64> = (0..yl).map(|i| (i % 3) as f64 - 1.0).collect();
                    let mut want = y0.clone();
                    a.spmv_f64(op, alpha, &x, beta, &mut want);
                    let mut y = if beta == 0.0 {
                        vec![f64::NAN; yl]
                    } else {
                        y0.clone()
                    };
                    match op {
                        Operation::NonTranspose => {
                            spmv(a, &starts, lay, alpha == 3.0, alpha, &x, beta, &mut y)
                        }
                        Operation::Transpose => {
                            spmv_transpose(a, &starts, lay, alpha, &x, beta, &mut y)
                        }
                    }
                    assert_close(&format!("{name} {lay:?} {op} {alpha} {beta}"), &y, &want);
                }
            }
        }
    }

    #[test]
    fn hand_computed_figure_1_matrix() {
        // The matrix of Figure 1 (5 x 10): val/col/row_ptr as printed.
        let val = [
            5., 9., 1., 2., 3., 6., 3., 6., 3., 6., 3., 7., 1., 1., 4., 8., 1., 5., 7.,
        ];
        let col = [1, 3, 6, 0, 1, 2, 4, 5, 7, 8, 9, 2, 6, 0, 2, 3, 4, 8, 9];
        let rp = [0, 3, 11, 13, 14, 19];
        let mut t = Vec::new();
        for r in 0..5 {
            for k in rp[r]..rp[r + 1] {
                t.push((r, col[k], val[k]));
            }
        }
        let a = Csr::from_triplets(5, 10, &t).unwrap();
        let (y, _) = products(
            &a,
            Layout {
                threads: 2,
                npt: 2,
                warp: 2,
            },
        );
        let want: Vec<f64> = (0..5)
            .map(|r| {
                (rp[r]..rp[r + 1])
                    .map(|k| val[k] * (1.0 + (col[k] % 7) as f64))
                    .sum()
            })
            .collect();
        assert_eq!(y, want);
        // By hand, x_j = 1 + (j mod 7): row 0 = 5·2 + 9·4 + 1·7 = 53.
        assert_eq!(y[0], 53.0);
        check("figure 1", &a);
    }

    #[test]
    fn a_row_spanning_two_blocks_is_its_first_blocks_and_longer_ones_are_shared() {
        // Blocks of 4. Row 0 = 0..3, row 1 = 3..6 (blocks 0, 1: block 0's, with the tail 4..6),
        // row 2 = 6..15 (blocks 1, 2, 3: shared), row 3 = 15..17 (blocks 3, 4: block 3's).
        let rp = [0, 3, 6, 15, 17];
        let starts = row_starts(&rp, 4);
        assert_eq!(starts, vec![0, 1, 2, 2, 3, 4]);
        let flags = |b| {
            let k = block(&rp, &starts, 4, b, true);
            (
                k.r0,
                k.nrows,
                k.first_skip,
                k.first_shared,
                k.last_shared,
                k.tail_end,
            )
        };
        assert_eq!(flags(0), (0, 2, false, false, false, 6));
        assert_eq!(flags(1), (1, 2, true, false, true, 0));
        assert_eq!(flags(2), (2, 1, false, true, true, 0));
        assert_eq!(flags(3), (2, 2, false, true, false, 17));
        assert_eq!(flags(4), (3, 1, true, false, false, 0));
        // Without ownership every crossing row is shared.
        let k = block(&rp, &starts, 4, 1, false);
        assert_eq!(
            (k.first_skip, k.first_shared, k.last_shared, k.tail_end),
            (false, true, true, 0)
        );
        let t: Vec<(usize, usize, f64)> = (0..4)
            .flat_map(|r| {
                (rp[r]..rp[r + 1]).map(move |p| (r, (p - rp[r]) as usize, p as f64 + 1.0))
            })
            .collect();
        let a = Csr::<f64>::from_triplets(4, 10, &t).unwrap();
        assert_eq!(a.row_ptr(), rp);
        check("two-block rows", &a);
    }

    #[test]
    fn bit_masks_and_row_starts_of_a_hand_made_block() {
        // rows: 0 [3 nnz], 1 [empty], 2 [1], 3 [4]; 8 non-zeros, one block of 4 threads x 2.
        let rp = [0, 3, 3, 4, 8];
        let lay = Layout {
            threads: 4,
            npt: 2,
            warp: 2,
        };
        let starts = row_starts(&rp, 8);
        assert_eq!(starts, vec![0, 4]);
        let k = block(&rp, &starts, 8, 0, true);
        assert_eq!(
            (k.r0, k.nrows, k.first_shared, k.last_shared),
            (0, 4, false, false)
        );
        let l = assign_rows(&rp, &k, lay);
        // thread 0 has nnz 0,1 (row 0); thread 1 has 2 (row 0, ends) and 3 (row 2, ends);
        // row 2 starts inside thread 1, so only rows 0 and 3 set row starts;
        // threads 2, 3 have row 3, which ends at thread 3's second non-zero.
        assert_eq!(l.row, vec![0, 0, 3, 3]);
        assert_eq!(l.bits, vec![0, 0b11, 0, 0b10]);
        // The empty row 1 sits at position 3: thread 1 (warp 0) must step over it.
        assert_eq!(l.flag, vec![true, false]);
        assert_eq!(l.empty, vec![1]);
    }

    #[test]
    fn generated_matrices_match_the_plain_product_for_every_layout() {
        for spec in [
            "gen:emptyrows:300,6,3",
            "gen:onerow:50,400,400",
            "gen:random:4,3000,700,2",
            "gen:random:3000,4,3,2",
            "gen:empty:7,9",
            "gen:circuit:400,5,2,300,4",
            "gen:powerlaw:9,8,2",
            "gen:elasticity:3",
            "gen:dense:37,53",
            "gen:lap3d7:6",
        ] {
            let (name, a) = crate::io::load(spec).unwrap();
            check(&name, &a);
        }
    }

    #[test]
    fn rows_ending_on_thread_and_block_boundaries_and_long_empty_runs() {
        // Every row length 1..=9 in turn, runs of 0..=5 empty rows between them, and rows of
        // exactly NPT and NPB entries, for the small layouts.
        let mut t = Vec::new();
        let mut r = 0;
        for len in (1..=9).chain([16, 32, 8, 64, 7]) {
            for c in 0..len {
                t.push((r, (c * 3 + r) % 40, 1.0 + c as f64));
            }
            r += 1 + (len % 6);
        }
        let a = Csr::from_triplets(r + 3, 40, &t).unwrap();
        check("boundaries", &a);
        // Many more empty rows than non-zeros: the COO path.
        let t: Vec<_> = (0..60).map(|i| (i * 37, i % 5, 1.0 + i as f64)).collect();
        let a = Csr::from_triplets(60 * 37 + 100, 5, &t).unwrap();
        let lay = LAYOUTS[0];
        let starts = row_starts(a.row_ptr(), lay.npb());
        let k = block(a.row_ptr(), &starts, lay.npb(), 0, true);
        assert_eq!(k.mode(lay.npb()), Mode::Coo);
        check("hypersparse", &a);
    }

    #[test]
    fn a_row_longer_than_several_blocks_runs_in_one_row_blocks() {
        let mut t: Vec<_> = (0..500).map(|c| (1, c, 1.0 + (c % 9) as f64)).collect();
        t.push((0, 3, 2.0));
        t.push((2, 4, -1.0));
        let a = Csr::from_triplets(3, 500, &t).unwrap();
        let lay = LAYOUTS[1];
        let starts = row_starts(a.row_ptr(), lay.npb());
        let modes: Vec<Mode> = (0..starts.len() - 1)
            .map(|b| block(a.row_ptr(), &starts, lay.npb(), b, true).mode(lay.npb()))
            .collect();
        assert!(modes.iter().filter(|&&m| m == Mode::OneRow).count() >= 10);
        check("long row", &a);
    }

    #[test]
    fn f32_follows_the_same_split() {
        let (_, a) = crate::io::load("gen:powerlaw:8,6,5").unwrap();
        let a32 = a.convert::<f32>();
        let lay = LAYOUTS[3];
        let starts = row_starts(a32.row_ptr(), lay.npb());
        let x: Vec<f32> = (0..a.cols()).map(|i| 1.0 + (i % 3) as f32).collect();
        let mut y = vec![f32::NAN; a.rows()];
        spmv(&a32, &starts, lay, true, 1.0, &x, 0.0, &mut y);
        let mut want = vec![0.0; a.rows()];
        let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        a32.convert::<f64>()
            .spmv_f64(Operation::NonTranspose, 1.0, &x64, 0.0, &mut want);
        for (g, w) in y.iter().zip(&want) {
            assert!((*g as f64 - w).abs() <= 1e-5 * (1.0 + w.abs()));
        }
    }
}
