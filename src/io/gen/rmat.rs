//! `powerlaw`: the R-MAT graph, drawn in parallel blocks, deduplicated by sorting, and its
//! vertices relabelled by a seeded bijection.
#![forbid(unsafe_code)]

use super::random::{RandomStream, PERMUTATION, VALUES};
use super::{mul, Args, Build, Kind, Plan};
use crate::error::Result;

/// `powerlaw:LOG2ROWS,AVG,SEED`: square, 2^LOG2ROWS rows, 2^LOG2ROWS*AVG non-zeros.
pub(super) fn plan_powerlaw(a: &Args<'_>) -> Result<Plan> {
    let scale = a.uint(0)?;
    if scale > 30 {
        return Err(a.err(format!(
            "LOG2ROWS = {scale}: 2^{scale} rows exceed 2^31-1, the largest tessera \
             supports"
        )));
    }
    let rows = 1usize << scale;
    let avg = a.size(1)?;
    let nnz = a.fit("non-zeros", mul(&[rows, avg]))?;
    if avg > 0 && avg * 8 > rows {
        return Err(a.err(format!(
            "AVG = {avg} is more than 2^LOG2ROWS/8 = {}: an R-MAT matrix that full \
             takes very long to fill with distinct entries",
            rows / 8
        )));
    }
    let seed = a.uint(2)?;
    Plan::exact(
        rows,
        rows,
        nnz,
        Kind::PowerLaw {
            scale: scale as u32,
            seed,
        },
    )
}

/// The R-MAT structure ([`rmat_structure`]), then random values in CSR order.
pub(super) fn powerlaw(scale: u32, nnz: usize, seed: u64, b: &mut Build) {
    rmat_structure(scale, nnz, seed, b);
    b.random_values(&mut RandomStream::new("powerlaw", seed, VALUES));
}

/// R-MAT edges, relabelled by a random permutation, until `nnz` distinct ones are drawn: the
/// sorted CSR structure goes into `b` (values are filled by the caller).
///
/// Rounds: draw as many edges as are still missing, sort them, drop repeats and those already
/// held, merge; stop when `nnz` are distinct (at the default size about 4% of draws repeat and
/// it takes a handful of rounds). Draws come in blocks of [`RMAT_BLOCK`], each from its own
/// ChaCha stream (round, block), so the blocks can be drawn on several threads and the result
/// does not depend on how many there are. Sorting beats a hash set here: one set lookup per
/// draw misses the cache and the TLB every time.
fn rmat_structure(scale: u32, nnz: usize, seed: u64, b: &mut Build) {
    let n = 1usize << scale;
    let relabel = &Relabel::new(&mut RandomStream::new("powerlaw", seed, PERMUTATION), scale);
    // Keys are row << scale | col: sorted keys are CSR order. `held` is the first round's
    // distinct keys, `extra` those of later rounds (few), both sorted; merged once at the end.
    let (mut held, mut extra, mut fresh, mut tmp): (Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut round = 0u64;
    while held.len() + extra.len() < nnz {
        fresh.clear();
        fresh.resize(nnz - held.len() - extra.len(), 0);
        let blocks: Vec<(usize, &mut [u64])> = fresh.chunks_mut(RMAT_BLOCK).enumerate().collect();
        par_for_each(blocks, |(block, out)| {
            let stream = (1 << 40) | (round << 32) | block as u64;
            rmat_draws(
                &mut RandomStream::new("powerlaw", seed, stream),
                scale,
                relabel,
                out,
            );
        });
        sort_keys(&mut fresh, &mut tmp, 2 * scale);
        fresh.dedup();
        if round == 0 {
            std::mem::swap(&mut held, &mut fresh);
        } else {
            let (mut i, mut j) = (0, 0);
            fresh.retain(|&k| {
                i = gallop(&held, i, k);
                j = gallop(&extra, j, k);
                held.get(i) != Some(&k) && extra.get(j) != Some(&k)
            });
            extra = merge_sorted(&extra, &fresh);
        }
        round += 1;
    }
    let held = merge_sorted(&held, &extra);
    drop((extra, fresh, tmp));
    let mask = (1u64 << scale) - 1;
    b.row_ptr.clear();
    b.row_ptr.push(0);
    b.col.clear();
    let mut row = 0;
    for &k in &held {
        while (k >> scale) as usize > row {
            b.row_ptr.push(b.col.len() as i32);
            row += 1;
        }
        b.col.push((k & mask) as i32);
    }
    b.row_ptr.resize(n + 1, b.col.len() as i32);
}

/// The union of two sorted vectors without common elements, sorted.
pub(super) fn merge_sorted(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut i = 0;
    for &x in b {
        let k = gallop(a, i, x);
        out.extend_from_slice(&a[i..k]);
        out.push(x);
        i = k;
    }
    out.extend_from_slice(&a[i..]);
    out
}

/// The first index `>= from` whose element is `>= x` in sorted `a` (`a.len()` if none), found
/// by doubling steps from `from`: cheap when the answer is near.
pub(super) fn gallop(a: &[u64], from: usize, x: u64) -> usize {
    let mut step = 1;
    let mut lo = from;
    while lo + step < a.len() && a[lo + step] < x {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step + 1).min(a.len());
    lo + a[lo..hi].partition_point(|&y| y < x)
}

/// Draws per R-MAT block (each block has its own stream).
const RMAT_BLOCK: usize = 1 << 16;

/// A seeded bijection of `0..2^scale`: three rounds of multiply by an odd number, add, mask,
/// xor-shift (each step is invertible modulo 2^scale). It scatters R-MAT's hubs, which would
/// otherwise all sit at low indices, without a table lookup per draw (a 4 MB permutation
/// table misses the cache on every lookup: such lookups take half the generation time).
pub(super) struct Relabel {
    mask: u64,
    half: u32,
    mul: [u64; 3],
    add: [u64; 3],
}

impl Relabel {
    pub(super) fn new(s: &mut RandomStream, scale: u32) -> Self {
        let mut r = Relabel {
            mask: (1u64 << scale) - 1,
            half: scale.div_ceil(2).max(1),
            mul: [0; 3],
            add: [0; 3],
        };
        for k in 0..3 {
            r.mul[k] = s.u64() | 1;
            r.add[k] = s.u64();
        }
        r
    }

    #[inline]
    pub(super) fn apply(&self, x: u64) -> u64 {
        let mut x = x;
        for k in 0..3 {
            x = x.wrapping_mul(self.mul[k]).wrapping_add(self.add[k]) & self.mask;
            x ^= x >> self.half;
        }
        x
    }
}

/// Fills `out` with R-MAT edges as relabelled keys `label(row) << scale | label(col)`.
fn rmat_draws(s: &mut RandomStream, scale: u32, relabel: &Relabel, out: &mut [u64]) {
    // Probabilities in 1/65536ths; one 16-bit slice of a draw per level.
    const A: u64 = 37355; // 0.57
    const AB: u64 = A + 12452; // + 0.19
    const ABC: u64 = AB + 12452; // + 0.19; d = 0.05 is the rest
    for o in out {
        let (mut r, mut c) = (0u64, 0u64);
        let mut bits = 0u64;
        for level in 0..scale {
            if level % 4 == 0 {
                bits = s.u64();
            }
            let x = bits & 0xffff;
            bits >>= 16;
            // Branch-free quadrant: c and d set the row bit, b and d the column bit.
            let (ge_a, ge_ab, ge_abc) = (x >= A, x >= AB, x >= ABC);
            r |= u64::from(ge_ab) << level;
            c |= u64::from(ge_a ^ ge_ab ^ ge_abc) << level;
        }
        *o = (relabel.apply(r) << scale) | relabel.apply(c);
    }
}

/// Sorts keys of `bits` significant bits: one counting pass on the top 8 bits into `tmp`, then
/// the 256 buckets (in cache) on several threads.
fn sort_keys(v: &mut Vec<u64>, tmp: &mut Vec<u64>, bits: u32) {
    let shift = bits.saturating_sub(8);
    let mut count = [0usize; 257];
    for &x in v.iter() {
        count[(x >> shift) as usize + 1] += 1;
    }
    for d in 0..256 {
        count[d + 1] += count[d];
    }
    tmp.clear();
    tmp.resize(v.len(), 0);
    let mut next = count;
    for &x in v.iter() {
        let d = (x >> shift) as usize;
        tmp[next[d]] = x;
        next[d] += 1;
    }
    let mut buckets = Vec::with_capacity(256);
    let mut rest: &mut [u64] = tmp;
    for d in 0..256 {
        let (head, tail) = rest.split_at_mut(count[d + 1] - count[d]);
        buckets.push(head);
        rest = tail;
    }
    par_for_each(buckets, |b| b.sort_unstable());
    std::mem::swap(v, tmp);
}

/// Runs `f` on every item, spread over the machine's cores (at most 8). Items go to threads
/// round-robin; results must not depend on which thread runs what.
fn par_for_each<T: Send>(items: Vec<T>, f: impl Fn(T) + Sync) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(items.len());
    if threads <= 1 {
        items.into_iter().for_each(f);
        return;
    }
    let mut lists: Vec<Vec<T>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, item) in items.into_iter().enumerate() {
        lists[i % threads].push(item);
    }
    let f = &f;
    std::thread::scope(|scope| {
        for list in lists {
            scope.spawn(move || list.into_iter().for_each(f));
        }
    });
}
