//! The BCCOO and BCCOO+ formats (yaSpMV, Yan et al. PPoPP'14, §2.2–2.4), built on the host.
//!
//! Two steps:
//! 1. [`block`]: the matrix cut into `bh x bw` blocks (§2.2), with BCCOO+'s vertical slices
//!    stacked top-down (§2.3), in *logical* order: block row by block row, blocks of a block
//!    row by column. One k-way merge of the block row's `bh` CSR rows per block row, so the
//!    whole pass is O(nnz x bh). The result ([`Blocked`]) keeps each block's column, the last
//!    block of every block row (the row stops) and each CSR entry's logical slot.
//! 2. [`layout`]: the arrays the kernel reads, for a thread tile and a flag word type:
//!    - bit flags (§2.2): one bit per block, 0 = last block of its block row, padded with 1s to
//!      a whole number of workgroup tiles; stored in u8/u16/u32 words, LSB first;
//!    - column indices: `u16` (fewer than 65535 block columns), `u32`, or the segmented
//!      difference of §2.2 (`i16` deltas within a thread tile, -1 = "read the u32 array"; the
//!      first block of every tile is always -1);
//!    - per-height value arrays (§2.2): array `i` holds row `i` of every block, `bw` values per
//!      block, arrays back to back in one allocation;
//!    - the offline transpose (§3.2.2): block `j` of thread `t` is stored at
//!      `(t / 32) * 32 * tile + j * 32 + t % 32` — every warp's 32 x tile matrix is
//!      transposed, so a warp's j-th loads are 32 consecutive entries (coalesced). The paper
//!      transposes across the whole array; a warp-wide transpose gives the same coalescing and
//!      does not depend on the workgroup size, so one layout serves every workgroup size the
//!      tuner times. Flag words are transposed the same way (word `q` of thread `t` at
//!      `(t / 32) * 32 * words + q * 32 + t % 32`);
//!    - the first-result entry of every thread (§2.4): the block row its first row stop closes
//!      (= row stops before its tile), one more entry at the end;
//!    - [`Bccoo::wg_info`]: per workgroup, the "skip the scan" check of §2.4 (every thread tile
//!      has a row stop) and whether the workgroup waits for / publishes a carry (§3.2.4).
//!
//! Empty rows. The paper's bit flags have one bit per block, so a block row without blocks has
//! no row stop of its own (§2.2's "replace [a difference > 1] with multiple 1s" cannot be done
//! without a block to carry the extra bit). We do what the authors' code does: an empty block
//! row gets one all-zero block at block column 0, whose row stop makes the kernel write that
//! block row like any other — so every row of y is written exactly once, with
//! `y = alpha*0 + beta*y` (and `y = 0` without reading y when beta = 0). The same holds for
//! every slice of BCCOO+ (each slice writes every block row of its part of the temporary
//! buffer). The cost is one block per empty block row.
//!
//! Duplicate entries (tessera's CSR keeps them; they add): a second entry at an occupied
//! position of the current block opens a new block at the same block column, so each CSR entry
//! has its own value slot and `update_values` stays a plain scatter.
//!
//! x at the right edge: a block at the last block column may reach past the matrix's last
//! column when `cols % bw != 0`; the kernel (and the reference) read x only below `cols`.
#![forbid(unsafe_code)]

use super::params::{ColMode, FormatParams, MatrixFacts, Shape, WARP};
use crate::csr::Csr;
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// Per-workgroup flags of [`Bccoo::wg_info`]: every thread tile of the workgroup has a row stop,
/// so the parallel segmented scan of `last_partial_sums` can be skipped (§2.4).
pub const WG_SKIP_SCAN: u8 = 1;
/// The workgroup's first block continues a block row of the previous workgroup: wait for its
/// carry (adjacent synchronisation, §3.2.4).
pub const WG_WAIT: u8 = 2;
/// The workgroup's last block does not end its block row: publish the carry for the next one.
pub const WG_PUBLISH: u8 = 4;

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
                // An empty block row: one zero block so that it has a row stop (module doc).
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

/// The column index arrays, in stored (transposed, padded) order.
#[derive(Debug, Clone, PartialEq)]
pub enum ColArrays {
    /// Block columns as u16.
    U16(Vec<u16>),
    /// Block columns as u32.
    U32(Vec<u32>),
    /// Segmented differences within each thread tile (-1 = read `full`), and the full array.
    Delta {
        /// The differences (2 bytes per block: what a product reads).
        delta: Vec<i16>,
        /// Every block column (read only where `delta` is -1).
        full: Vec<u32>,
    },
}

impl ColArrays {
    /// Bytes stored.
    pub fn bytes(&self) -> usize {
        match self {
            ColArrays::U16(v) => v.len() * 2,
            ColArrays::U32(v) => v.len() * 4,
            ColArrays::Delta { delta, full } => delta.len() * 2 + full.len() * 4,
        }
    }

    /// The block column at stored position `p`, decoded the way the kernel does: `prev` is the
    /// column of the previous block of the same thread tile.
    pub fn decode(&self, p: usize, prev: u32) -> u32 {
        match self {
            ColArrays::U16(v) => v[p] as u32,
            ColArrays::U32(v) => v[p],
            ColArrays::Delta { delta, full } => {
                let d = delta[p];
                if d == -1 {
                    full[p]
                } else {
                    (prev as i64 + d as i64) as u32
                }
            }
        }
    }
}

/// BCCOO / BCCOO+ arrays as the kernel reads them.
#[derive(Debug, Clone, PartialEq)]
pub struct Bccoo<T> {
    /// The format's parameters.
    pub params: FormatParams,
    /// Rows of the matrix.
    pub rows: usize,
    /// Columns of the matrix.
    pub cols: usize,
    /// Non-zeros of the matrix.
    pub nnz: usize,
    /// Block rows per slice.
    pub block_rows: usize,
    /// Columns per slice.
    pub slice_width: usize,
    /// Logical blocks (before padding).
    pub blocks: usize,
    /// Threads (padded to a multiple of the workgroup size and of 32).
    pub threads: usize,
    /// Bit flag words, little-endian bytes, transposed per warp.
    pub bits: Vec<u8>,
    /// Column indices.
    pub col: ColArrays,
    /// Value arrays: `bh` arrays of `padded_blocks * bw` values, back to back.
    pub values: Vec<T>,
    /// First-result entry of every thread, plus the total (threads + 1 entries).
    pub res_entry: Vec<u32>,
    /// Where each CSR non-zero (tessera's order) lives in `values`.
    pub value_slot: Vec<u32>,
    /// Delta escapes beyond the first block of every tile (Delta mode only).
    pub escapes: usize,
}

/// Stored position of logical block `b` for tile `tile` (warp-wide transpose).
#[inline]
pub fn position(b: usize, tile: usize) -> usize {
    let (t, j) = (b / tile, b % tile);
    (t / WARP) * WARP * tile + j * WARP + t % WARP
}

/// Stored index of flag word `q` of thread `t` with `words` words per thread.
#[inline]
pub fn word_index(t: usize, q: usize, words: usize) -> usize {
    (t / WARP) * WARP * words + q * WARP + t % WARP
}

/// Lays `blk` out for `fp` (its shape and slices must match): tiles, bit flags, the column
/// arrays, the transposed values and the value map, padded to whole groups of `pad_threads`
/// threads (a multiple of 32: the workgroup size, or the largest one the tuner will try).
pub fn layout<T: Scalar>(
    a: &Csr<T>,
    blk: &Blocked,
    fp: &FormatParams,
    pad_threads: usize,
) -> Result<Bccoo<T>> {
    layout_with(a, blk, blk.slot.clone(), fp, pad_threads)
}

/// [`layout`], turning `slot` (a copy of `blk.slot`, or the vector itself) into the value map
/// in place.
fn layout_with<T: Scalar>(
    a: &Csr<T>,
    blk: &Blocked,
    mut slot: Vec<u32>,
    fp: &FormatParams,
    pad_threads: usize,
) -> Result<Bccoo<T>> {
    if fp.shape != blk.shape || fp.slices != blk.slices || !fp.is_valid() {
        return Err(Error::Internal(format!(
            "BCCOO layout {fp:?} for blocks of {} with {} slices",
            blk.shape, blk.slices
        )));
    }
    if pad_threads == 0 || pad_threads % WARP != 0 {
        return Err(Error::Internal(format!(
            "BCCOO padding to {pad_threads} threads: not a multiple of {WARP}"
        )));
    }
    if fp.col == ColMode::U16 && blk.cols.div_ceil(fp.shape.bw as usize) >= 65535 {
        return Err(Error::Internal(format!(
            "BCCOO u16 column indices for {} block columns",
            blk.cols.div_ceil(fp.shape.bw as usize)
        )));
    }
    let tile = fp.tile as usize;
    let (bw, bh) = (fp.shape.bw as usize, fp.shape.bh as usize);
    let area = bw * bh;
    let blocks = blk.blocks();
    let threads = blocks.div_ceil(tile).div_ceil(pad_threads) * pad_threads;
    let padded = threads * tile;
    if padded * area > u32::MAX as usize {
        return Err(Error::NotSupported(format!(
            "BCCOO with {} blocks of {} values and tile {tile} needs {} value slots, more than 32-bit slots address",
            padded,
            area,
            padded * area
        )));
    }

    // Stored position of every logical block (the warp-wide transpose), without divisions.
    let mut posb = vec![0u32; blocks];
    for (t, chunk) in posb.chunks_mut(tile).enumerate() {
        let base = (t / WARP) * WARP * tile + t % WARP;
        for (j, p) in chunk.iter_mut().enumerate() {
            *p = (base + j * WARP) as u32;
        }
    }

    // Values and the value map.
    let mut values = vec![T::ZERO; padded * area];
    let shift = bw.trailing_zeros();
    let scatter = match area {
        1 => scatter_values::<T, 1>,
        2 => scatter_values::<T, 2>,
        3 => scatter_values::<T, 3>,
        4 => scatter_values::<T, 4>,
        6 => scatter_values::<T, 6>,
        8 => scatter_values::<T, 8>,
        12 => scatter_values::<T, 12>,
        _ => scatter_values::<T, 16>,
    };
    scatter(a.values(), &mut slot, &posb, shift, padded, &mut values);
    let value_slot = slot;

    // Bit flags: all 1, a 0 at every row stop.
    let w = fp.word_bits as usize;
    let words = fp.words_per_thread();
    let wbytes = w / 8;
    let mut bits = vec![0xffu8; threads * words * wbytes];
    for &e in &blk.ends {
        let e = e as usize;
        let (t, j) = (e / tile, e % tile);
        let wi = word_index(t, j / w, words);
        let bit = j % w;
        bits[wi * wbytes + bit / 8] &= !(1u8 << (bit % 8));
    }

    // First-result entries: row stops before each thread's tile (§2.4, Figure 6b).
    let mut res_entry = vec![0u32; threads + 1];
    {
        let mut e = 0usize;
        for (t, r) in res_entry.iter_mut().enumerate() {
            let start = t * tile;
            while e < blk.ends.len() && (blk.ends[e] as usize) < start {
                e += 1;
            }
            *r = e as u32;
        }
    }

    // Column indices.
    let colv = &blk.col;
    let col_at = |b: usize| if b < blocks { colv[b] } else { 0 };
    let mut escapes = 0usize;
    let col = match fp.col {
        ColMode::U16 => {
            let mut v = vec![0u16; padded];
            for (&c, &p) in colv.iter().zip(&posb) {
                v[p as usize] = c as u16;
            }
            ColArrays::U16(v)
        }
        ColMode::U32 => {
            let mut v = vec![0u32; padded];
            for (&c, &p) in colv.iter().zip(&posb) {
                v[p as usize] = c;
            }
            ColArrays::U32(v)
        }
        ColMode::Delta => {
            let mut full = vec![0u32; padded];
            let mut delta = vec![0i16; padded];
            for t in 0..threads {
                let mut prev = 0u32;
                let base = (t / WARP) * WARP * tile + t % WARP;
                for j in 0..tile {
                    let b = t * tile + j;
                    let c = col_at(b);
                    let p = base + j * WARP;
                    full[p] = c;
                    // §2.2: a difference beyond a signed short becomes -1 ("read the original
                    // array"); a true difference of -1 is stored as the escape too, and the
                    // first block of a tile always is one (no inter-thread dependency).
                    let d = c as i64 - prev as i64;
                    delta[p] = if j == 0 {
                        -1
                    } else if d == -1 || !(-32767..=32767).contains(&d) {
                        escapes += 1;
                        -1
                    } else {
                        d as i16
                    };
                    prev = c;
                }
            }
            ColArrays::Delta { delta, full }
        }
    };

    Ok(Bccoo {
        params: *fp,
        rows: blk.rows,
        cols: blk.cols,
        nnz: blk.nnz,
        block_rows: blk.block_rows,
        slice_width: blk.slice_width,
        blocks,
        threads,
        bits,
        col,
        values,
        res_entry,
        value_slot,
        escapes,
    })
}

/// [`block`] then [`layout`] (the logical slots become the value map in place).
pub fn build<T: Scalar>(a: &Csr<T>, fp: &FormatParams, pad_threads: usize) -> Result<Bccoo<T>> {
    let mut blk = block(a, fp.shape, fp.slices)?;
    let slot = std::mem::take(&mut blk.slot);
    layout_with(a, &blk, slot, fp, pad_threads)
}

/// The value scatter of [`layout`] for blocks of `AREA` values (a constant, so that the
/// division by it is a multiplication): each logical slot `b * AREA + i * bw + k` becomes
/// `(i * padded + position(b)) * bw + k`, in place, and the value goes there.
fn scatter_values<T: Scalar, const AREA: usize>(
    csr_values: &[T],
    slot: &mut [u32],
    posb: &[u32],
    shift: u32,
    padded: usize,
    values: &mut [T],
) {
    let mask = (1usize << shift) - 1;
    for (s, &v) in slot.iter_mut().zip(csr_values) {
        let ls = *s as usize;
        let (b, r) = (ls / AREA, ls % AREA);
        let (i, k) = (r >> shift, r & mask);
        let dst = ((i * padded + posb[b] as usize) << shift) + k;
        values[dst] = v;
        *s = dst as u32;
    }
}

impl<T: Scalar> Bccoo<T> {
    /// Blocks including the padding: threads x tile.
    pub fn padded_blocks(&self) -> usize {
        self.threads * self.params.tile as usize
    }

    /// Entries the kernel writes: y's rows for BCCOO; the temporary buffer (slices x block
    /// rows x bh, slice by slice) for BCCOO+.
    pub fn out_len(&self) -> usize {
        if self.params.slices == 1 {
            self.rows
        } else {
            self.params.slices as usize * self.block_rows * self.params.shape.bh as usize
        }
    }

    /// Stride between slices in the temporary buffer (BCCOO+).
    pub fn slice_stride(&self) -> usize {
        self.block_rows * self.params.shape.bh as usize
    }

    /// Flag word `q` of thread `t`, read the way the kernel reads it.
    pub fn word(&self, t: usize, q: usize) -> u32 {
        let wb = self.params.word_bits as usize / 8;
        let i = word_index(t, q, self.params.words_per_thread()) * wb;
        let mut w = 0u32;
        for (n, &byte) in self.bits[i..i + wb].iter().enumerate() {
            w |= (byte as u32) << (8 * n);
        }
        w
    }

    /// True when logical block `b` is the last of its block row (its flag is 0).
    pub fn is_stop(&self, b: usize) -> bool {
        let tile = self.params.tile as usize;
        let w = self.params.word_bits as usize;
        let (t, j) = (b / tile, b % tile);
        (self.word(t, j / w) >> (j % w)) & 1 == 0
    }

    /// Per-workgroup flags for workgroups of `wg` threads ([`WG_SKIP_SCAN`], [`WG_WAIT`],
    /// [`WG_PUBLISH`]); `threads` must be a multiple of `wg`.
    pub fn wg_info(&self, wg: usize) -> Vec<u8> {
        assert!(
            wg > 0 && self.threads % wg == 0,
            "workgroups of {wg} threads"
        );
        let nwg = self.threads / wg;
        let tile = self.params.tile as usize;
        let mut info = vec![0u8; nwg];
        let mut publish_prev = false;
        for (w, inf) in info.iter_mut().enumerate() {
            let t0 = w * wg;
            let all_stop = (t0..t0 + wg).all(|t| self.res_entry[t + 1] > self.res_entry[t]);
            if all_stop {
                *inf |= WG_SKIP_SCAN;
            }
            if publish_prev {
                *inf |= WG_WAIT;
            }
            // The open segment at the workgroup's end matters only inside real blocks (the
            // last real block is a row stop, so a non-stop real block has a real successor)
            // and only when there is a next workgroup.
            let last = (w + 1) * wg * tile - 1;
            publish_prev = w + 1 < nwg && last < self.blocks && !self.is_stop(last);
            if publish_prev {
                *inf |= WG_PUBLISH;
            }
        }
        info
    }

    /// Bytes the format keeps (values, bit flags, column arrays, first-result entries, the
    /// value map), without per-workgroup data and workspace.
    pub fn bytes(&self) -> usize {
        self.values.len() * std::mem::size_of::<T>()
            + self.bits.len()
            + self.col.bytes()
            + self.res_entry.len() * 4
            + self.value_slot.len() * 4
    }

    /// Bytes one product reads of the format: values (padding included), bit flags, column
    /// indices (2 bytes per block when compressed, plus 4 per escape), first-result entries,
    /// one info byte per workgroup of `wg` threads. x and y are not included.
    pub fn traffic_bytes(&self, wg: usize) -> usize {
        let cols = match &self.col {
            ColArrays::U16(v) => v.len() * 2,
            ColArrays::U32(v) => v.len() * 4,
            ColArrays::Delta { delta, .. } => delta.len() * 2 + (self.threads + self.escapes) * 4,
        };
        self.values.len() * std::mem::size_of::<T>()
            + self.bits.len()
            + cols
            + self.res_entry.len() * 4
            + self.threads / wg.max(1)
    }

    /// Bit flags in logical block order (0 = row stop), padding included: Figure 3's array
    /// read back through the stored (transposed) words.
    pub fn logical_bit_flags(&self) -> Vec<u8> {
        (0..self.padded_blocks())
            .map(|b| u8::from(!self.is_stop(b)))
            .collect()
    }

    /// Block columns in logical order, decoded through the stored arrays.
    pub fn logical_cols(&self) -> Vec<u32> {
        let tile = self.params.tile as usize;
        let mut out = Vec::with_capacity(self.padded_blocks());
        for t in 0..self.threads {
            let mut prev = 0;
            for j in 0..tile {
                let c = self.col.decode(position(t * tile + j, tile), prev);
                out.push(c);
                prev = c;
            }
        }
        out
    }

    /// The value arrays in logical order (one per block-row height), padding included.
    pub fn logical_values(&self) -> Vec<Vec<T>> {
        let (bw, bh) = (self.params.shape.bw as usize, self.params.shape.bh as usize);
        let (tile, padded) = (self.params.tile as usize, self.padded_blocks());
        (0..bh)
            .map(|i| {
                (0..padded)
                    .flat_map(|b| {
                        let s = (i * padded + position(b, tile)) * bw;
                        self.values[s..s + bw].to_vec()
                    })
                    .collect()
            })
            .collect()
    }
}

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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Eq. 1's matrix A with a..p = 1..16.
    pub(crate) fn paper_a() -> Csr<f64> {
        let e = [
            (0, 2, 1.0),
            (0, 6, 2.0),
            (0, 7, 3.0),
            (1, 2, 4.0),
            (1, 3, 5.0),
            (1, 6, 6.0),
            (2, 4, 7.0),
            (2, 5, 8.0),
            (2, 6, 9.0),
            (2, 7, 10.0),
            (3, 0, 11.0),
            (3, 1, 12.0),
            (3, 4, 13.0),
            (3, 5, 14.0),
            (3, 6, 15.0),
            (3, 7, 16.0),
        ];
        Csr::from_triplets(4, 8, &e).unwrap()
    }

    /// Eq. 2's matrix C with 1x1 blocks A'..P' = 1..16.
    pub(crate) fn paper_c() -> Csr<f64> {
        let pos = [
            (0, 0),
            (0, 2),
            (0, 4),
            (0, 6),
            (0, 7),
            (1, 3),
            (1, 6),
            (2, 1),
            (2, 3),
            (2, 5),
            (3, 1),
            (3, 2),
            (3, 3),
            (3, 5),
            (3, 6),
            (3, 7),
        ];
        let e: Vec<_> = pos
            .iter()
            .enumerate()
            .map(|(k, &(r, c))| (r, c, (k + 1) as f64))
            .collect();
        Csr::from_triplets(4, 8, &e).unwrap()
    }

    fn fp(bh: u32, bw: u32, slices: u32, tile: u32, word_bits: u32, col: ColMode) -> FormatParams {
        FormatParams {
            shape: Shape { bw, bh },
            slices,
            tile,
            word_bits,
            col,
        }
    }

    // a..p
    const A: f64 = 1.0;
    const B: f64 = 2.0;
    const C: f64 = 3.0;
    const D: f64 = 4.0;
    const E: f64 = 5.0;
    const F: f64 = 6.0;
    const G: f64 = 7.0;
    const H: f64 = 8.0;
    const I: f64 = 9.0;
    const J: f64 = 10.0;
    const K: f64 = 11.0;
    const L: f64 = 12.0;
    const M: f64 = 13.0;
    const N: f64 = 14.0;
    const O: f64 = 15.0;
    const P: f64 = 16.0;

    #[test]
    fn paper_figures_2_and_3_bccoo_of_a_with_2x2_blocks() {
        let a = paper_a();
        let blk = block(&a, Shape { bw: 2, bh: 2 }, 1).unwrap();
        // Figure 3: Bit Flag = [1 0 1 1 0], Col_index = [1 3 0 2 3].
        assert_eq!(blk.bit_flags(), [1, 0, 1, 1, 0]);
        assert_eq!(blk.col, [1, 3, 0, 2, 3]);
        // Figure 2's row index [0 0 1 1 1] is what the stops encode: block rows end at 1, 4.
        assert_eq!(blk.ends, [1, 4]);
        // Figure 2/3: Value = ([a 0 b c 0 0 g h i j], [d e f 0 k l m n o p]).
        assert_eq!(
            blk.value_arrays(a.values()),
            vec![
                vec![A, 0.0, B, C, 0.0, 0.0, G, H, I, J],
                vec![D, E, F, 0.0, K, L, M, N, O, P]
            ]
        );
        // The stored layout reads back to the same arrays (then padding: flags 1, zeros).
        let f = layout(&a, &blk, &fp(2, 2, 1, 4, 8, ColMode::U16), 32).unwrap();
        assert_eq!(f.threads, 32);
        assert_eq!(f.logical_bit_flags()[..5], [1, 0, 1, 1, 0]);
        assert!(f.logical_bit_flags()[5..].iter().all(|&b| b == 1));
        assert_eq!(f.logical_cols()[..5], [1, 3, 0, 2, 3]);
        let v = f.logical_values();
        assert_eq!(v[0][..10], [A, 0.0, B, C, 0.0, 0.0, G, H, I, J]);
        assert_eq!(v[1][..10], [D, E, F, 0.0, K, L, M, N, O, P]);
        assert!(v.iter().all(|r| r[10..].iter().all(|&x| x == 0.0)));
    }

    #[test]
    fn paper_figure_4_bccoo_plus_of_a_with_two_slices() {
        let a = paper_a();
        let blk = block(&a, Shape { bw: 2, bh: 2 }, 2).unwrap();
        assert_eq!(blk.slice_width, 4);
        // Figure 4b: Bit Flag = [0 0 0 1 0], Col_index = [1 0 3 2 3] (columns of A, not B).
        assert_eq!(blk.bit_flags(), [0, 0, 0, 1, 0]);
        assert_eq!(blk.col, [1, 0, 3, 2, 3]);
        // Value = ([a 0 0 0 b c g h i j], [d e k l f 0 m n o p]).
        assert_eq!(
            blk.value_arrays(a.values()),
            vec![
                vec![A, 0.0, 0.0, 0.0, B, C, G, H, I, J],
                vec![D, E, K, L, F, 0.0, M, N, O, P]
            ]
        );
        let f = layout(&a, &blk, &fp(2, 2, 2, 8, 8, ColMode::U16), 32).unwrap();
        assert_eq!(f.out_len(), 2 * 2 * 2);
        assert_eq!(f.logical_cols()[..5], [1, 0, 3, 2, 3]);
    }

    #[test]
    fn paper_figure_6_first_result_entries_of_c() {
        let c = paper_c();
        let blk = block(&c, Shape { bw: 1, bh: 1 }, 1).unwrap();
        // Figure 6a / Figure 7 (the 16-bit version; Figure 6a's printed array drops a 1).
        assert_eq!(
            blk.bit_flags(),
            [1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0]
        );
        assert_eq!(blk.col, [0, 2, 4, 6, 7, 3, 6, 1, 3, 5, 1, 2, 3, 5, 6, 7]);
        assert_eq!(
            blk.value_arrays(c.values()),
            vec![(1..=16).map(|v| v as f64).collect::<Vec<_>>()]
        );
        // Figure 6b: four threads of four blocks: Result Entry = [0 0 2 3].
        let f = layout(&c, &blk, &fp(1, 1, 1, 4, 8, ColMode::U16), 32).unwrap();
        assert_eq!(f.res_entry[..4], [0, 0, 2, 3]);
        // The padding threads (4..32) start after the last of the 4 block rows.
        assert!(f.res_entry[4..].iter().all(|&r| r == 4));
        // §2.4's check: with 4 threads per workgroup every tile but thread 0's has a stop, so
        // Figure 9's start flags are [0 1 1 1] and the scan is needed; a workgroup of the
        // padding threads has no stop at all.
        let info = f.wg_info(32);
        assert_eq!(info, [0]);
    }

    #[test]
    fn every_block_shape_of_a_small_matrix_has_the_hand_counted_blocks() {
        // A = [[1 2 0 0 5], [0 3 0 0 0], [0 0 0 0 0], [4 0 0 6 7]] (row 2 empty).
        let a = Csr::from_triplets(
            4,
            5,
            &[
                (0, 0, 1.0),
                (0, 1, 2.0),
                (0, 4, 5.0),
                (1, 1, 3.0),
                (3, 0, 4.0),
                (3, 3, 6.0),
                (3, 4, 7.0),
            ],
        )
        .unwrap();
        // (bh, bw) -> (block columns, stops) by hand.
        type Case = ((u32, u32), &'static [u32], &'static [u32]);
        let cases: &[Case] = &[
            ((1, 1), &[0, 1, 4, 1, 0, 0, 3, 4], &[2, 3, 4, 7]),
            ((1, 2), &[0, 2, 0, 0, 0, 1, 2], &[1, 2, 3, 6]),
            ((1, 4), &[0, 1, 0, 0, 0, 1], &[1, 2, 3, 5]),
            ((2, 1), &[0, 1, 4, 0, 3, 4], &[2, 5]),
            ((2, 2), &[0, 2, 0, 1, 2], &[1, 4]),
            ((2, 4), &[0, 1, 0, 1], &[1, 3]),
            ((3, 1), &[0, 1, 4, 0, 3, 4], &[2, 5]),
            ((3, 2), &[0, 2, 0, 1, 2], &[1, 4]),
            ((3, 4), &[0, 1, 0, 1], &[1, 3]),
            ((4, 1), &[0, 1, 3, 4], &[3]),
            ((4, 2), &[0, 1, 2], &[2]),
            ((4, 4), &[0, 1], &[1]),
        ];
        for &((bh, bw), cols, ends) in cases {
            let blk = block(&a, Shape { bw, bh }, 1).unwrap();
            assert_eq!(blk.col, cols, "{bh}x{bw} columns");
            assert_eq!(blk.ends, ends, "{bh}x{bw} stops");
            // Every value lands once, at its own row and column inside its block.
            let arrays = blk.value_arrays(a.values());
            let total: f64 = arrays.iter().flatten().sum();
            assert_eq!(total, 28.0, "{bh}x{bw}");
            for (k, &s) in blk.slot.iter().enumerate() {
                let (b, r) = (
                    s as usize / (bw * bh) as usize,
                    s as usize % (bw * bh) as usize,
                );
                let row = (0..4).find(|&r| a.row_ptr()[r + 1] as usize > k).unwrap();
                let c = a.col_ind()[k] as usize;
                assert_eq!(r / bw as usize, row % bh as usize);
                assert_eq!(r % bw as usize, c % bw as usize);
                assert_eq!(blk.col[b] as usize, c / bw as usize);
            }
        }
    }

    #[test]
    fn an_empty_block_row_gets_one_zero_block_with_a_row_stop() {
        let a = Csr::from_triplets(3, 3, &[(0, 1, 1.0), (2, 2, 2.0)]).unwrap();
        let blk = block(&a, Shape { bw: 1, bh: 1 }, 1).unwrap();
        assert_eq!(blk.col, [1, 0, 2]);
        assert_eq!(blk.bit_flags(), [0, 0, 0]);
        assert_eq!(blk.value_arrays(a.values()), vec![vec![1.0, 0.0, 2.0]]);
        let e = Csr::<f64>::from_triplets(5, 0, &[]).unwrap();
        let blk = block(&e, Shape { bw: 2, bh: 2 }, 1).unwrap();
        assert_eq!(blk.blocks(), 3);
        assert_eq!(blk.ends, [0, 1, 2]);
    }

    #[test]
    fn duplicate_entries_get_their_own_blocks_and_slots() {
        let a = Csr::from_triplets(2, 2, &[(0, 1, 1.0), (0, 1, 2.0), (1, 1, 3.0)]).unwrap();
        let blk = block(&a, Shape { bw: 2, bh: 2 }, 1).unwrap();
        assert_eq!(blk.col, [0, 0]);
        let mut slots = blk.slot.clone();
        slots.sort();
        slots.dedup();
        assert_eq!(slots.len(), 3, "one slot per entry");
        // Block 0 takes the first (0, 1) and (1, 1); the second (0, 1) opens block 1.
        let v = blk.value_arrays(a.values());
        assert_eq!(v, vec![vec![0.0, 1.0, 0.0, 2.0], vec![0.0, 3.0, 0.0, 0.0]]);
    }

    #[test]
    fn delta_compression_escapes_big_and_minus_one_differences() {
        // One row, block columns 0, 5, 4, 70000, 70001, 3 -> with tile 8 the deltas are
        // [-1 (first), 5, -1 (true -1), -1 (> 32767), 1, -1 (< -32767)].
        let cols = [0usize, 5, 4, 70000, 70001, 3];
        let e: Vec<_> = cols
            .iter()
            .enumerate()
            .map(|(r, &c)| (r, c, 1.0 + r as f64))
            .collect();
        let a = Csr::from_triplets(6, 70002, &e).unwrap();
        let f = build(&a, &fp(1, 1, 1, 8, 8, ColMode::Delta), 32).unwrap();
        let ColArrays::Delta { delta, full } = &f.col else {
            panic!("delta mode")
        };
        let logical: Vec<i16> = (0..6).map(|b| delta[position(b, 8)]).collect();
        assert_eq!(logical, [-1, 5, -1, -1, 1, -1]);
        assert_eq!(f.escapes, 3);
        assert_eq!(full[position(3, 8)], 70000);
        assert_eq!(
            f.logical_cols()[..6],
            cols.map(|c| c as u32),
            "decoded like the kernel"
        );
        // Second thread's tile starts with an escape again.
        assert_eq!(delta[position(8, 8)], -1);
    }

    #[test]
    fn words_and_positions_are_transposed_per_warp() {
        // 40 threads of 8 blocks -> 64 threads after padding to 32: thread 33 is lane 1 of
        // warp 1.
        assert_eq!(position(33 * 8 + 3, 8), 32 * 8 + 3 * 32 + 1);
        assert_eq!(word_index(33, 1, 2), 32 * 2 + 32 + 1);
        let n = 40 * 8;
        let e: Vec<_> = (0..n).map(|r| (r, r % 7, 1.0)).collect();
        let a = Csr::from_triplets(n, 7, &e).unwrap();
        for w in [8, 16, 32] {
            let f = build(&a, &fp(1, 1, 1, 8, w, ColMode::U16), 32).unwrap();
            assert_eq!(f.threads, 64);
            assert_eq!(
                f.bits.len(),
                64 * (8usize.div_ceil(w as usize)) * w as usize / 8
            );
            assert!((0..n).all(|b| f.is_stop(b)));
            assert!((n..f.padded_blocks()).all(|b| !f.is_stop(b)));
            assert_eq!(f.res_entry[33], 33 * 8);
        }
    }

    #[test]
    fn wg_info_marks_skips_waits_and_publishes() {
        // One long row of 100 blocks then 100 rows of one block, tile 8, workgroups of 32
        // threads (256 blocks).
        let mut e: Vec<_> = (0..100).map(|c| (0usize, c, 1.0)).collect();
        e.extend((1..=300).map(|r| (r, 0usize, 1.0)));
        let a = Csr::from_triplets(301, 100, &e).unwrap();
        let f = build(&a, &fp(1, 1, 1, 8, 8, ColMode::U16), 32).unwrap();
        assert_eq!(f.blocks, 400);
        let info = f.wg_info(32);
        assert_eq!(info.len(), 2);
        // Workgroup 0 holds the long row (threads 0..12 have no stop) and ends at a stop.
        assert_eq!(info[0], 0);
        // Workgroup 1: blocks 256..400 all stops, then padding tiles without stops.
        assert_eq!(info[1], 0);
        // A row crossing the workgroup boundary: 300 blocks in row 0.
        let e: Vec<_> = (0..300).map(|c| (0usize, c, 1.0)).collect();
        let a = Csr::from_triplets(1, 300, &e).unwrap();
        let f = build(&a, &fp(1, 1, 1, 8, 8, ColMode::U16), 32).unwrap();
        assert_eq!(f.wg_info(32), [WG_PUBLISH, WG_WAIT]);
        // Only stops: every workgroup skips the scan.
        let e: Vec<_> = (0..512).map(|r| (r, 0usize, 1.0)).collect();
        let a = Csr::from_triplets(512, 1, &e).unwrap();
        let f = build(&a, &fp(1, 1, 1, 8, 8, ColMode::U16), 32).unwrap();
        assert_eq!(f.wg_info(32), [WG_SKIP_SCAN, WG_SKIP_SCAN]);
    }

    #[test]
    fn value_map_points_at_every_value_and_padding_stays_zero() {
        let (_, a) = crate::io::load("gen:random:300,700,9,5").unwrap();
        for (bh, bw) in [(1, 1), (3, 2), (4, 4)] {
            let f = build(&a, &fp(bh, bw, 1, 16, 16, ColMode::U16), 64).unwrap();
            let mut seen = vec![false; f.values.len()];
            for (k, &s) in f.value_slot.iter().enumerate() {
                assert!(!seen[s as usize]);
                seen[s as usize] = true;
                assert_eq!(f.values[s as usize], a.values()[k]);
            }
            assert!(f.values.iter().zip(&seen).all(|(&v, &s)| s || v == 0.0));
        }
    }

    #[test]
    fn the_estimated_escape_rate_is_that_of_consecutive_1x1_blocks() {
        // far_jumps: deltas between consecutive 1x1 blocks beyond a short (the layout escapes
        // these, except where a tile starts, which escapes anyway).
        for spec in [
            "gen:random:2000,300000,20,3",
            "gen:lap3d7:40",
            "gen:uniform:50000,8,2",
        ] {
            let (_, a) = crate::io::load(spec).unwrap();
            let est = facts(&a).far_jumps;
            let blk = block(&a, Shape { bw: 1, bh: 1 }, 1).unwrap();
            let far = blk
                .col
                .windows(2)
                .filter(|w| {
                    let d = w[1] as i64 - w[0] as i64;
                    d == -1 || !(-32767..=32767).contains(&d)
                })
                .count();
            let real = far as f64 / (blk.blocks() - 1) as f64;
            assert!(
                (est - real).abs() < 0.01,
                "{spec}: estimated {est}, real {real}"
            );
        }
    }

    #[test]
    fn estimated_block_counts_are_exact_without_sampling() {
        let (_, a) = crate::io::load("gen:random:200,300,6,3").unwrap();
        let f = facts(&a);
        for s in Shape::all() {
            let blk = block(&a, s, 1).unwrap();
            assert_eq!(f.blocks_of(s), blk.blocks() as f64, "{s}");
        }
    }
}
