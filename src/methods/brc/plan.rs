//! BRC's plan (steps 1-3 of Algorithm 1, the destinations and the row lists, from the row
//! offsets alone; format.rs's module comment): [`plan`], and [`plan_on`] with the passes on a
//! given number of host threads. A child module of format.rs, whose `Plan` it makes.
#![forbid(unsafe_code)]

use super::{block_offsets, check_shape, too_large, Piece, Plan, Variant, DUMMY, SPLIT};
use crate::csr::try_vec_filled;
use crate::error::{Error, Result};
use crate::methods::cancel;

/// Rows below which [`plan`] runs on the calling thread alone.
const PARALLEL_ROWS: usize = 1 << 17;
/// The most threads [`plan`] uses.
const MAX_THREADS: usize = 8;

/// The [`Plan`] of the BRC form of a CSR with row offsets `rp` (base 0, sound) and `cols`
/// columns: steps 1-3 of Algorithm 1 (module comment), the destinations and the row lists.
/// The arguments and errors are [`super::build`]'s. Above [`PARALLEL_ROWS`] rows its passes
/// run on up to [`MAX_THREADS`] host threads ([`plan_on`]; the result is the same).
pub fn plan(
    rp: &[i32],
    cols: usize,
    b1: usize,
    b2: usize,
    ell_width: usize,
    variant: Variant,
) -> Result<Plan> {
    let rows = rp.len().saturating_sub(1);
    let threads = if rows < PARALLEL_ROWS {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |t| t.get())
            .min(MAX_THREADS)
            .min(rows / (PARALLEL_ROWS / 4))
    };
    plan_on(rp, cols, b1, b2, ell_width, variant, threads)
}

/// Runs `f(i, part)` for each of `parts` on its own scoped thread (the first on the calling
/// thread), each under the caller's cancel flag; the results in order.
fn on_threads<P: Send, R: Send>(
    parts: Vec<P>,
    f: impl Fn(usize, P) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let flag = cancel::current();
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else {
        return Ok(Vec::new());
    };
    std::thread::scope(|s| {
        let f = &f;
        let others: Vec<_> = parts
            .enumerate()
            .map(|(i, part)| {
                let flag = flag.clone();
                s.spawn(move || cancel::with(flag, || f(i + 1, part)))
            })
            .collect();
        let mut out = vec![f(0, first)];
        out.extend(
            others
                .into_iter()
                .map(|h| h.join().expect("a BRC plan thread panicked")),
        );
        out.into_iter().collect()
    })
}

/// Splits `v` into consecutive parts of the given lengths (which sum to at most its length).
fn split_parts<'a, V>(mut v: &'a mut [V], lens: &[usize]) -> Vec<&'a mut [V]> {
    let mut out = Vec::with_capacity(lens.len());
    for &n in lens {
        let (head, tail) = v.split_at_mut(n);
        out.push(head);
        v = tail;
    }
    out
}

/// What one chunk of rows contributes to the counting sort: how many of its rows have each
/// remaining length, its split and empty rows.
struct ChunkCount {
    count: Vec<u32>,
    split_rows: usize,
    empty_rows: usize,
}

/// Where each length's rows begin in a list sorted by length, descending, given how many rows
/// have each length (`count[l]`; length 0 is not in the list), and the list's length.
fn starts_of(count: &[u32]) -> (Vec<u32>, u32) {
    let mut start = vec![0u32; count.len()];
    let mut pos = 0u32;
    for l in (1..count.len()).rev() {
        start[l] = pos;
        pos += count[l];
    }
    (start, pos)
}

/// The sorted list from each chunk's own (`locals`, with their `counts`): for each length
/// from the longest down, each chunk's rows of that length in chunk order; `count[l]` is the
/// rows of length l in all, `in_brc` their sum. Lengths are split into ranges of about equal
/// rows, one per thread, each writing its part of the list.
fn merge(
    locals: &[Vec<Piece>],
    counts: &[ChunkCount],
    in_brc: usize,
    count: &[usize],
    threads: usize,
) -> Result<Vec<Piece>> {
    let mut sorted: Vec<Piece> = Vec::new();
    sorted
        .try_reserve_exact(in_brc)
        .map_err(|_| Error::AllocFailed(format!("BRC: a list of {in_brc} rows")))?;
    sorted.resize(
        in_brc,
        Piece {
            dest: 0,
            start: 0,
            end: 0,
        },
    );
    // starts[c][l]: where chunk c's rows of length l begin in its list.
    let starts: Vec<Vec<u32>> = counts.iter().map(|cc| starts_of(&cc.count).0).collect();
    let per_thread = in_brc.div_ceil(threads.max(1)).max(1);
    // Length ranges (descending: from hi down to lo, inclusive) and their rows.
    let mut ranges = Vec::new();
    let mut lens = Vec::new();
    let (mut hi, mut acc) = (count.len() - 1, 0);
    for l in (1..count.len()).rev() {
        acc += count[l];
        if acc >= per_thread || l == 1 {
            ranges.push((hi, l));
            lens.push(acc);
            hi = l - 1;
            acc = 0;
        }
    }
    let parts: Vec<_> = ranges
        .into_iter()
        .zip(split_parts(&mut sorted, &lens))
        .collect();
    on_threads(parts, |_, ((hi, lo), out)| {
        let mut at = 0;
        for l in (lo..=hi).rev() {
            for (c, local) in locals.iter().enumerate() {
                let n = counts[c].count[l] as usize;
                let s = starts[c][l] as usize;
                out[at..at + n].copy_from_slice(&local[s..s + n]);
                at += n;
            }
        }
        Ok(())
    })?;
    Ok(sorted)
}

/// [`plan`] on `threads` threads (at least 1): every pass over rows or block rows splits them
/// into `threads` consecutive chunks. Stable throughout, so the plan does not depend on
/// `threads` (tests: [`plan`] against `plan_on(.., 1)`).
#[doc(hidden)]
pub fn plan_on(
    rp: &[i32],
    cols: usize,
    b1: usize,
    b2: usize,
    ell_width: usize,
    variant: Variant,
    threads: usize,
) -> Result<Plan> {
    check_shape(b1, b2)?;
    let rows = rp.len().saturating_sub(1);
    let nnz = rp.last().map_or(0, |&n| n as usize);
    let len = |r: usize| (rp[r + 1] - rp[r]) as usize;
    let row_chunk = rows.div_ceil(threads.max(1)).max(1);
    let row_chunks = || (0..rows.div_ceil(row_chunk)).collect::<Vec<usize>>();
    let rows_of = |c: usize| c * row_chunk..((c + 1) * row_chunk).min(rows);
    let max_len = on_threads(row_chunks(), |_, c| {
        Ok(rows_of(c).map(len).max().unwrap_or(0))
    })?
    .into_iter()
    .max()
    .unwrap_or(0);
    let k = ell_width.min(max_len);
    let ell_slots = rows as u128 * k as u128;
    if ell_slots > u32::MAX as u128 {
        return Err(too_large("the ELL part's slots", ell_slots));
    }
    let ell_slots = ell_slots as usize;

    // 1. Counting sort of the BRC part's rows by remaining length, descending, stable: each
    // chunk counts its rows per length and sorts them into a list of its own; the lists are
    // then merged length by length, chunk after chunk (row order within a length). A chunk's
    // counts take max_rem + 1 words: when that is large against the rows (a few very long
    // rows), one chunk.
    let rem = |r: usize| len(r).saturating_sub(k);
    let is_split = |r: usize| rem(r) > b2;
    let max_rem = max_len.saturating_sub(k);
    let row_chunk = if (max_rem + 1).saturating_mul(threads) <= 2 * rows.max(1) {
        row_chunk
    } else {
        rows.max(1)
    };
    let rows_of = |c: usize| c * row_chunk..((c + 1) * row_chunk).min(rows);
    let chunks: Vec<usize> = (0..rows.div_ceil(row_chunk)).collect();
    let counts = on_threads(chunks.clone(), |_, c| {
        let mut count = try_vec_filled(max_rem + 1, 0u32, "BRC's row-length counts")?;
        let (mut split_rows, mut empty_rows) = (0, 0);
        for r in rows_of(c) {
            cancel::check_every(r)?;
            let l = len(r);
            count[l.saturating_sub(k)] += 1;
            split_rows += (l.saturating_sub(k) > b2) as usize;
            empty_rows += (l == 0) as usize;
        }
        Ok(ChunkCount {
            count,
            split_rows,
            empty_rows,
        })
    })?;
    let split_rows: usize = counts.iter().map(|c| c.split_rows).sum();
    let empty_rows: usize = counts.iter().map(|c| c.empty_rows).sum();
    // count[l]: rows of remaining length l in all chunks.
    let mut count = vec![0usize; max_rem + 1];
    for c in &counts {
        for (t, &n) in count.iter_mut().zip(&c.count) {
            *t += n as usize;
        }
    }
    // Pieces per remaining length (Algorithm 1 re-queues a row until its remainder fits):
    // ceil(l / B2), one division per distinct length rather than per row.
    let pieces_of_len: Vec<u32> = (0..=max_rem).map(|l| l.div_ceil(b2) as u32).collect();
    let pieces_total: usize = (1..=max_rem)
        .map(|l| count[l] * pieces_of_len[l] as usize)
        .sum();
    let in_brc: usize = count[1..].iter().sum();

    // Each chunk's own sorted list (lengths descending, rows ascending within one).
    let hybrid = k > 0;
    let locals = on_threads(chunks.clone(), |_, c| {
        let (mut next, pos) = starts_of(&counts[c].count);
        let mut local = Vec::new();
        local
            .try_reserve_exact(pos as usize)
            .map_err(|_| Error::AllocFailed(format!("BRC: a list of {pos} rows")))?;
        local.resize(
            pos as usize,
            Piece {
                dest: 0,
                start: 0,
                end: 0,
            },
        );
        for r in rows_of(c) {
            cancel::check_every(r)?;
            let (s, e) = (rp[r] as usize, rp[r + 1] as usize);
            let l = (e - s).saturating_sub(k);
            if l > 0 {
                // Split: more than B2 entries in the BRC part (several pieces), or the ELL
                // part writes y first (hybrid).
                let split = hybrid || l > b2;
                local[next[l] as usize] = Piece {
                    dest: if split { r as u32 | SPLIT } else { r as u32 },
                    start: (s + k) as u32,
                    end: e as u32,
                };
                next[l] += 1;
            }
        }
        Ok(local)
    })?;
    // The merge (one chunk: its list is the sorted list): lengths split into as many ranges of
    // about equal rows as there are threads, each range's part of the sorted list written by
    // one thread.
    let sorted = if locals.len() == 1 {
        locals.into_iter().next().expect("one list")
    } else {
        merge(&locals, &counts, in_brc, &count, threads)?
    };

    // 2. Algorithm 1's queue. Rows leave it in sorted order and the remainders of those longer
    // than B2 come back in the same order, so the queue is round after round of prefixes of
    // the sorted list: round j holds the rows whose remainder exceeds j * B2 (a prefix: the
    // list is in descending order), each bringing its entries from j * B2 on. rounds[j] is
    // that prefix's length.
    let mut rounds = Vec::new();
    let mut above = in_brc;
    let mut l = 1;
    while above > 0 {
        rounds.push(above);
        // The rows whose remainder is at most the next round's skip drop out.
        let skip = rounds.len() * b2;
        while l <= skip.min(max_rem) {
            above -= count[l];
            l += 1;
        }
    }
    debug_assert_eq!(rounds.iter().sum::<usize>(), pieces_total);
    let num_blocks = pieces_total.div_ceil(b1);
    let block_rows = num_blocks * b1;
    if block_rows as u128 >= SPLIT as u128 {
        return Err(too_large("the block rows", block_rows as u128));
    }

    // Each block row's piece, its row and what the kernel does with its sum, in queue order,
    // in whole blocks per thread.
    let mut row_perm = try_vec_filled(block_rows, DUMMY, "BRC row_perm")?;
    let mut dest = try_vec_filled(block_rows, DUMMY, "BRC destinations")?;
    let mut piece_start = try_vec_filled(block_rows, 0u32, "BRC piece starts")?;
    let mut plen = try_vec_filled(block_rows, 0u32, "BRC piece lengths")?;
    let mut nnz_per_block = try_vec_filled(num_blocks, 0u32, "BRC nnz_per_block")?;
    let q_chunk = num_blocks.div_ceil(threads.max(1)).max(1) * b1;
    let parts: Vec<_> = row_perm
        .chunks_mut(q_chunk)
        .zip(dest.chunks_mut(q_chunk))
        .zip(piece_start.chunks_mut(q_chunk))
        .zip(plen.chunks_mut(q_chunk))
        .zip(nnz_per_block.chunks_mut(q_chunk / b1))
        .collect();
    on_threads(parts, |t, ((((perm, dst), pstart), pl), widths)| {
        // The round and place in it of this part's first block row.
        let (mut j, mut i) = (0, t * q_chunk);
        while j < rounds.len() && i >= rounds[j] {
            i -= rounds[j];
            j += 1;
        }
        for q in 0..perm.len() {
            if j == rounds.len() {
                break;
            }
            cancel::check_every(q)?;
            let p = sorted[i];
            let skip = (j * b2) as u32;
            perm[q] = p.row();
            pstart[q] = p.start + skip;
            pl[q] = (p.end - p.start - skip).min(b2 as u32);
            dst[q] = p.dest;
            i += 1;
            if i == rounds[j] {
                i = 0;
                j += 1;
            }
        }
        // 3. Blocks: widths (the longest piece of each).
        for (w, block) in widths.iter_mut().zip(pl.chunks(b1)) {
            *w = block.iter().copied().max().unwrap_or(0);
        }
        Ok(())
    })?;
    drop(sorted);
    // Offsets, and the slots' count within 32 bits.
    let (block_offset, slots) = block_offsets(&nnz_per_block, b1, ell_slots)?;

    // The second kernel's row lists.
    let (mut scale_rows, mut fix_rows, mut fix_ptr) = (Vec::new(), Vec::new(), Vec::new());
    match variant {
        Variant::Atomic => {
            if !hybrid {
                // Split rows (they receive atomics) and empty rows (in no block), each chunk
                // writing its own part. Without a branch per row (which rows are empty is as
                // good as random in a graph): every row is written at the part's end, which
                // moves on only past a listed one, and a spare slot per part takes the writes
                // after its last listed row; the parts are closed up after.
                let lens: Vec<usize> = counts
                    .iter()
                    .map(|c| c.split_rows + c.empty_rows + 1)
                    .collect();
                scale_rows =
                    try_vec_filled(lens.iter().sum(), 0u32, "BRC's list of rows to scale")?;
                let parts: Vec<_> = chunks
                    .iter()
                    .copied()
                    .zip(split_parts(&mut scale_rows, &lens))
                    .collect();
                on_threads(parts, |_, (c, out)| {
                    let mut n = 0;
                    for r in rows_of(c) {
                        out[n] = r as u32;
                        n += (is_split(r) || len(r) == 0) as usize;
                    }
                    Ok(())
                })?;
                let (mut from, mut to) = (0, 0);
                for n in lens {
                    scale_rows.copy_within(from..from + n - 1, to);
                    from += n;
                    to += n - 1;
                }
                scale_rows.truncate(to);
            }
        }
        Variant::Deterministic => {
            // Pure BRC: split rows (their pieces) and empty rows (no pieces). Hybrid: every row
            // with a BRC part, all its pieces (the ELL kernel wrote y first). cursor[r] is the
            // next buffer index of row r's pieces, taken in block-row order.
            let mut cursor = try_vec_filled(rows, 0u32, "BRC partial cursors")?;
            fix_ptr.push(0u32);
            for r in 0..rows {
                let buffered = if hybrid || is_split(r) {
                    pieces_of_len[rem(r)]
                } else {
                    0
                };
                let listed = if hybrid {
                    rem(r) > 0
                } else {
                    is_split(r) || len(r) == 0
                };
                if listed {
                    fix_rows.push(r as u32);
                    let at = *fix_ptr.last().expect("starts with 0");
                    cursor[r] = at;
                    fix_ptr.push(at + buffered);
                }
            }
            for d in dest.iter_mut() {
                if *d != DUMMY && *d & SPLIT != 0 {
                    let r = (*d & !SPLIT) as usize;
                    *d = SPLIT | cursor[r];
                    cursor[r] += 1;
                }
            }
        }
    }

    Ok(Plan {
        rows,
        cols,
        nnz,
        b1,
        b2,
        ell_width: k,
        variant,
        slots,
        piece_start,
        piece_len: plen,
        row_perm,
        nnz_per_block,
        block_offset,
        dest,
        scale_rows,
        fix_rows,
        fix_ptr,
        split_rows,
        empty_rows,
    })
}
