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

use super::{block_offsets, check_shape, summary_of, too_large, Variant, SPLIT};
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
/// lengths are `lengths` ((length, rows of that length) pairs, ascending lengths, each once:
/// `params::lengths_in` of a histogram), with blocks of `b1` rows, at most `b2` entries of a
/// row per block and an ELL part of `ell_width` (lowered to the longest row). Equal to
/// [`super::plan`]'s on the same matrix, field for field (tests/brc_host.rs). Errors as
/// `plan`'s.
pub fn layout(
    lengths: impl Iterator<Item = (usize, usize)>,
    cols: usize,
    b1: usize,
    b2: usize,
    ell_width: usize,
) -> Result<Layout> {
    check_shape(b1, b2)?;
    // The totals, and the lengths present (every pass below walks those alone: a graph's
    // longest row is tens of thousands, its distinct lengths a few hundred).
    let (mut rows, mut nnz) = (0usize, 0usize);
    let mut present: Vec<(usize, usize)> = Vec::new();
    for (l, n) in lengths.filter(|&(_, n)| n > 0) {
        if present.last().is_some_and(|&(p, _)| p >= l) {
            return Err(Error::Internal(format!(
                "BRC's layout takes ascending row lengths, got {l} after {}",
                present.last().map_or(0, |p| p.0)
            )));
        }
        rows += n;
        nnz += l * n;
        present.push((l, n));
    }
    let max_len = present.last().map_or(0, |&(l, _)| l);
    let k = ell_width.min(max_len);
    let ell_slots = rows as u128 * k as u128;
    if ell_slots > u32::MAX as u128 {
        return Err(too_large("the ELL part's slots", ell_slots));
    }
    let ell_slots = ell_slots as usize;
    let max_rem = max_len - k;
    let empty_rows = present.first().filter(|p| p.0 == 0).map_or(0, |p| p.1);
    // The buckets: the remaining lengths present (past the ELL part), longest first, their rows,
    // and where each starts in the sorted list.
    let (mut lens, mut counts, mut starts) = (Vec::new(), Vec::new(), Vec::new());
    let mut bucket_of = vec![NO_BUCKET; max_rem + 1];
    let mut in_brc = 0usize;
    for &(l, n) in present.iter().rev().take_while(|&&(l, _)| l > k) {
        bucket_of[l - k] = lens.len() as u32;
        lens.push(l - k);
        counts.push(n);
        starts.push(in_brc);
        in_brc += n;
    }
    let split_rows: usize = lens
        .iter()
        .zip(&counts)
        .take_while(|&(&l, _)| l > b2)
        .map(|(_, &n)| n)
        .sum();
    let pieces: usize = lens
        .iter()
        .zip(&counts)
        .map(|(&l, &n)| n * l.div_ceil(b2))
        .sum();

    // The queue's rounds (plan.rs): round j holds the rows whose remainder exceeds j * B2, a
    // prefix of the buckets (`above` of them) that shortens as j grows.
    let mut round_start = Vec::new();
    let (mut above, mut at) = (lens.len(), 0usize);
    loop {
        let skip = round_start.len() * b2;
        while above > 0 && lens[above - 1] <= skip {
            above -= 1;
        }
        if above == 0 {
            break;
        }
        round_start.push(at as u32);
        at += starts[above - 1] + counts[above - 1];
    }
    debug_assert_eq!(at, pieces);
    round_start.push(pieces as u32);
    let num_blocks = pieces.div_ceil(b1);
    let block_rows = num_blocks * b1;
    if block_rows as u128 >= SPLIT as u128 {
        return Err(too_large("the block rows", block_rows as u128));
    }
    // Each block's width: the length of its first piece (its round j, its row's place i in
    // the sorted list, that row's remaining length less j * B2, at most B2), walked in queue
    // order (the bucket of place i moves on within a round and starts again at the next, so
    // the walk takes a step per block and per bucket of each round); then, for each round that
    // starts inside a block, the length of that round's first piece (the longest row's) if
    // longer.
    let mut nnz_per_block = Vec::new();
    nnz_per_block
        .try_reserve_exact(num_blocks)
        .map_err(|_| Error::AllocFailed(format!("BRC: widths of {num_blocks} blocks")))?;
    let (mut j, mut bucket) = (0usize, 0usize);
    for b in 0..num_blocks {
        let q = b * b1;
        while round_start[j + 1] as usize <= q {
            j += 1;
            bucket = 0;
        }
        let i = q - round_start[j] as usize;
        while bucket + 1 < starts.len() && starts[bucket + 1] <= i {
            bucket += 1;
        }
        nnz_per_block.push((lens[bucket] - j * b2).min(b2) as u32);
    }
    for (j, &q) in round_start
        .iter()
        .enumerate()
        .take(round_start.len() - 1)
        .skip(1)
    {
        let (b, first) = ((q as usize) / b1, (lens[0] - j * b2).min(b2) as u32);
        if q as usize % b1 != 0 && nnz_per_block[b] < first {
            nnz_per_block[b] = first;
        }
    }
    let (block_offset, slots) = block_offsets(&nnz_per_block, b1, ell_slots)?;
    Ok(Layout {
        rows,
        cols,
        nnz,
        b1,
        b2,
        ell_width: k,
        slots,
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
