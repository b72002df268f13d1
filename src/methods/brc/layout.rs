//! BRC's plan from the histogram of the row lengths alone: the host half of the device plan
//! (`fill.rs`). Everything of [`super::plan`]'s result that names no row follows from how many
//! rows have each length: the slots, the blocks' widths and offsets, the queue's rounds, the
//! buckets of the stable counting sort (where each remaining length's rows start in the sorted
//! list) and the lengths of the row lists. The device then places the rows
//! (`kernels/brc.cu`: `brc_plan_count`, `brc_plan_place`, `brc_plan_queue`), so the host reads
//! one word per distinct length instead of `rows + 1` row offsets and walks the lengths and the
//! blocks, not the rows. Atomic variant only (the deterministic one's partial ranges follow the
//! rows: `plan` builds it). A child module of format.rs.
//!
//! Why the widths need no rows: the queue is round after round of prefixes of the sorted list
//! (plan.rs), whose remaining lengths descend, so within a round the pieces' lengths descend too;
//! a block's width is the length of its first piece or of the first piece of a round that starts
//! inside it, whichever is longer, and the length of the piece at any place of the queue is read
//! off the buckets.
#![forbid(unsafe_code)]

use super::{summary_of, too_large, Variant, SPLIT};
use crate::error::{Error, Result};

/// `bucket_of` of a remaining length that no BRC row has (0 among them: such rows are in no
/// block). `kernels/brc.cu`'s BRC_NO_BUCKET.
pub const NO_BUCKET: u32 = u32::MAX;

/// The row-free part of a BRC plan (atomic variant): what [`layout`] computes from the lengths'
/// histogram, and what the device's plan kernels read.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
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
    /// The ELL width k, never above the longest row.
    pub ell_width: usize,
    /// Slots stored, ELL part and blocks.
    pub slots: usize,
    /// T of each block.
    pub nnz_per_block: Vec<u32>,
    /// Start of each block in the BRC part, plus the end.
    pub block_offset: Vec<u32>,
    /// Pieces in the queue (block rows that are not dummies).
    pub pieces: usize,
    /// Rows in the sorted list (those with entries past the ELL width).
    pub in_brc: usize,
    /// The bucket of each remaining length 0 ..= the longest (descending lengths: bucket 0 is
    /// the longest), [`NO_BUCKET`] for lengths no row has and for 0.
    pub bucket_of: Vec<u32>,
    /// Distinct remaining lengths: buckets.
    pub buckets: usize,
    /// Where each round of the queue starts, then the pieces (rounds + 1 entries).
    pub round_start: Vec<u32>,
    /// Rows listed to scale (split and empty rows of a pure BRC form; none in a hybrid).
    pub n_scale: usize,
    /// Rows that the BRC part holds in more than one block row.
    pub split_rows: usize,
    /// Rows without entries.
    pub empty_rows: usize,
}

impl Layout {
    /// Slots of the ELL part.
    pub fn ell_slots(&self) -> usize {
        self.rows * self.ell_width
    }

    /// Blocks of the BRC part.
    pub fn num_blocks(&self) -> usize {
        self.nnz_per_block.len()
    }

    /// Block rows (`num_blocks * b1`).
    pub fn block_rows(&self) -> usize {
        self.num_blocks() * self.b1
    }

    /// Rounds of the queue.
    pub fn rounds(&self) -> usize {
        self.round_start.len() - 1
    }

    /// As [`super::Plan::summary`].
    pub fn summary(&self) -> String {
        summary_of(
            (self.slots, self.nnz, self.ell_slots()),
            self.num_blocks(),
            (self.split_rows, self.empty_rows),
            Variant::Atomic,
        )
    }
}

/// The [`Layout`] of the BRC form (atomic variant) of a matrix of `cols` columns whose rows'
/// lengths are counted in `hist` (`hist[l]`: rows of length l; longer than the longest row is
/// fine), with blocks of `b1` rows, at most `b2` entries of a row per block and an ELL part of
/// `ell_width` (lowered to the longest row). Equal to [`super::plan`]'s on the same matrix, field
/// for field (tests/brc_host.rs). Errors as `plan`'s.
pub fn layout(hist: &[u32], cols: usize, b1: usize, b2: usize, ell_width: usize) -> Result<Layout> {
    if b1 == 0 || b2 == 0 {
        return Err(Error::InvalidValue(format!(
            "BRC needs B1 >= 1 and B2 >= 1, got B1 = {b1}, B2 = {b2}"
        )));
    }
    let rows: usize = hist.iter().map(|&n| n as usize).sum();
    let nnz: usize = hist.iter().enumerate().map(|(l, &n)| l * n as usize).sum();
    let max_len = hist.iter().rposition(|&n| n > 0).unwrap_or(0);
    let k = ell_width.min(max_len);
    let ell_slots = rows as u128 * k as u128;
    if ell_slots > u32::MAX as u128 {
        return Err(too_large("the ELL part's slots", ell_slots));
    }
    let ell_slots = ell_slots as usize;
    // count[l]: rows whose remaining length (past the ELL part) is l.
    let max_rem = max_len - k;
    let mut count = vec![0usize; max_rem + 1];
    for (l, &n) in hist.iter().enumerate().take(max_len + 1) {
        count[l.saturating_sub(k)] += n as usize;
    }
    let split_rows: usize = count.iter().skip(b2 + 1).sum();
    let empty_rows = hist.first().map_or(0, |&n| n as usize);
    let in_brc: usize = count[1..].iter().sum();
    let pieces: usize = (1..=max_rem).map(|l| count[l] * l.div_ceil(b2)).sum();

    // The queue's rounds (plan.rs): round j holds the rows whose remainder exceeds j * B2.
    let mut round_start = Vec::new();
    let (mut above, mut at, mut l) = (in_brc, 0usize, 1usize);
    while above > 0 {
        round_start.push(at as u32);
        at += above;
        let skip = round_start.len() * b2;
        while l <= skip.min(max_rem) {
            above -= count[l];
            l += 1;
        }
    }
    debug_assert_eq!(at, pieces);
    round_start.push(pieces as u32);
    let num_blocks = pieces.div_ceil(b1);
    let block_rows = num_blocks * b1;
    if block_rows as u128 >= SPLIT as u128 {
        return Err(too_large("the block rows", block_rows as u128));
    }

    // The buckets: the remaining lengths present, longest first, and where each starts.
    let mut bucket_of = vec![NO_BUCKET; max_rem + 1];
    let (mut lens, mut starts) = (Vec::new(), Vec::new());
    let mut placed = 0usize;
    for l in (1..=max_rem).rev() {
        if count[l] > 0 {
            bucket_of[l] = lens.len() as u32;
            lens.push(l);
            starts.push(placed);
            placed += count[l];
        }
    }
    // The length of the piece at queue place q (0 past the pieces): its round j, its row's
    // place i in the sorted list, that row's remaining length, less j * B2, at most B2.
    let last_at_or_before = |v: &[u32], x: usize| v.partition_point(|&s| s as usize <= x) - 1;
    let piece_len = |q: usize| -> usize {
        if q >= pieces {
            return 0;
        }
        let j = last_at_or_before(&round_start, q);
        let i = q - round_start[j] as usize;
        let b = starts.partition_point(|&s| s <= i) - 1;
        (lens[b] - j * b2).min(b2)
    };
    let mut nnz_per_block = Vec::new();
    nnz_per_block
        .try_reserve_exact(num_blocks)
        .map_err(|_| Error::AllocFailed(format!("BRC: widths of {num_blocks} blocks")))?;
    let mut j = 0;
    for b in 0..num_blocks {
        let (first, end) = (b * b1, (b + 1) * b1);
        let mut width = piece_len(first);
        // Rounds that start inside the block (after its first place).
        while j < round_start.len() && (round_start[j] as usize) <= first {
            j += 1;
        }
        while j < round_start.len() && (round_start[j] as usize) < end {
            width = width.max(piece_len(round_start[j] as usize));
            j += 1;
        }
        nnz_per_block.push(width as u32);
    }
    let mut block_offset = Vec::with_capacity(num_blocks + 1);
    let mut total = ell_slots as u128;
    for &t in &nnz_per_block {
        block_offset.push((total - ell_slots as u128) as u32);
        total += (b1 * t as usize) as u128;
        if total > u32::MAX as u128 {
            return Err(too_large("the stored slots (ELL + BRC)", total));
        }
    }
    block_offset.push((total - ell_slots as u128) as u32);
    Ok(Layout {
        rows,
        cols,
        nnz,
        b1,
        b2,
        ell_width: k,
        slots: total as usize,
        nnz_per_block,
        block_offset,
        pieces,
        in_brc,
        buckets: lens.len(),
        bucket_of,
        round_start,
        n_scale: if k == 0 { split_rows + empty_rows } else { 0 },
        split_rows,
        empty_rows,
    })
}
