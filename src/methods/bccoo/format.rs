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
//! no row stop of its own (§2.2's "replace \[a difference > 1\] with multiple 1s" cannot be
//! done without a block to carry the extra bit). We do what the authors' code does: an empty
//! block row gets one all-zero block at block column 0, whose row stop makes the kernel write that
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
//!
//! Files: this one holds the format's types, [`build`] and the readers of the stored arrays;
//! `format/blocking.rs` is step 1, `format/arrays.rs` step 2, `format/facts.rs` the sampled
//! [`MatrixFacts`](super::params::MatrixFacts) the fixed rule and the tuner start from,
//! `format/tests.rs` the unit tests.
#![forbid(unsafe_code)]

mod arrays;
mod blocking;
mod facts;
#[cfg(test)]
pub(crate) mod tests;

pub use arrays::layout;
pub use blocking::{block, Blocked};
pub use facts::{facts, sample_stride, sampled_block_rows, sampled_counts, SampledCounts};

use super::params::{ColMode, FormatParams, WARP};
use crate::csr::Csr;
use crate::error::Result;
use crate::scalar::Scalar;

/// Per-workgroup flags of [`Bccoo::wg_info`]: every thread tile of the workgroup has a row stop,
/// so the parallel segmented scan of `last_partial_sums` can be skipped (§2.4).
pub const WG_SKIP_SCAN: u8 = 1;
/// The workgroup's first block continues a block row of the previous workgroup: wait for its
/// carry (adjacent synchronisation, §3.2.4).
pub const WG_WAIT: u8 = 2;
/// The workgroup's last block does not end its block row: publish the carry for the next one.
pub const WG_PUBLISH: u8 = 4;

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

/// [`block`] then [`layout`] (the logical slots become the value map in place).
pub fn build<T: Scalar>(a: &Csr<T>, fp: &FormatParams, pad_threads: usize) -> Result<Bccoo<T>> {
    let mut blk = block(a, fp.shape, fp.slices)?;
    let slot = std::mem::take(&mut blk.slot);
    arrays::layout_with(a, &blk, slot, fp, pad_threads)
}

/// [`Bccoo::traffic_bytes`] from the format's sizes: `threads` thread tiles of `fp`'s, values of
/// `val_bytes`, `escapes` delta escapes beyond the tiles' first blocks.
pub fn traffic_bytes(
    fp: &FormatParams,
    threads: usize,
    val_bytes: usize,
    escapes: usize,
    wg: usize,
) -> usize {
    let padded = threads * fp.tile as usize;
    let cols = match fp.col {
        ColMode::U16 => padded * 2,
        ColMode::U32 => padded * 4,
        ColMode::Delta => padded * 2 + (threads + escapes) * 4,
    };
    padded * fp.shape.area() * val_bytes
        + threads * fp.words_per_thread() * (fp.word_bits as usize / 8)
        + cols
        + (threads + 1) * 4
        + threads / wg.max(1)
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
        traffic_bytes(
            &self.params,
            self.threads,
            std::mem::size_of::<T>(),
            self.escapes,
            wg,
        )
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
