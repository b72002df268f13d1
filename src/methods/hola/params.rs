//! HOLA's tunables (all `-D` defines of `kernels/hola.cu`): threads per block, non-zeros per
//! thread (so NPB = threads·NPT non-zeros per block) and the per-thread column sort; the fixed
//! rule and the candidate sets of QUICK/EXHAUSTIVE tuning.
#![forbid(unsafe_code)]

pub use super::kernel::{KERNELS, NPT_VALUES, SORT_VALUES, THREADS_VALUES};
use crate::csr::RowStats;
use std::fmt;

/// One HOLA configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Params {
    /// Threads per block.
    pub threads: u32,
    /// Non-zeros per thread.
    pub npt: u32,
    /// Sort each thread's column ids before the x gather.
    pub sort: bool,
}

impl Params {
    /// Non-zeros per block (NNZ_PER_BLOCK).
    pub fn npb(&self) -> usize {
        self.threads as usize * self.npt as usize
    }

    /// Blocks for `nnz` non-zeros.
    pub fn blocks(&self, nnz: usize) -> usize {
        nnz.div_ceil(self.npb())
    }

    /// True when the kernel file was compiled (and checked) for these values.
    pub fn is_valid(&self) -> bool {
        THREADS_VALUES.contains(&(self.threads as i64)) && NPT_VALUES.contains(&(self.npt as i64))
    }

    /// The define values in the order of the kernel file: THREADS, NPT, SORT.
    pub fn defines(&self) -> [i64; 3] {
        [self.threads as i64, self.npt as i64, self.sort as i64]
    }
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "threads={} npt={} sort={} ({} non-zeros per block)",
            self.threads,
            self.npt,
            self.sort as u8,
            self.npb()
        )
    }
}

/// The fixed rule (TESSERA_TUNING_NONE). §3.1: "each block of the main SpMV step typically
/// handles between two and four thousand non-zeros"; on an H100 (f64, EXHAUSTIVE over the 12
/// configurations, notes/hola.md) every large matrix preferred 1024 non-zeros per block, split
/// two ways: 128 threads × 8 for regular rows with nearby columns (stencils, elasticity: each
/// thread's x reads fall on few lines) and 256 threads × 4 otherwise (random columns, power-law
/// and circuit rows: more threads keep more x gathers in flight). "Regular and local": no row
/// longer than 8× the mean, the mean first-to-last column distance under a tenth of the
/// columns, and at least 6 entries per row. The per-thread sort stays off: tessera's CSR has
/// sorted columns within rows, so a thread's column ids are already ascending except across a
/// row end, and the sort only costs instructions (it never won on the H100).
///
/// Rows longer on average than such a block ([`LONG_ROWS_MEAN`]) take 512 non-zeros per block,
/// 128 threads × 4: every block then lies within one or two rows, and twice the blocks keep
/// more of them in flight. H100, EXHAUSTIVE over the 12 configurations (session 20, runs N
/// and O): 128 × 4 was the fastest on all ten pairs of a matrix and a value type with mean
/// rows of 1,200 to 2,600 (dense 2000², random rows of 1,500 and 2,000, three LP shapes over
/// 1-4M columns), by 0.3-14% over 256 × 4 (dense 2000² f32 18.7 -> 16.1 us, the LP with rows of
/// 1,200 over 4M columns f64 26.2 -> 24.5 us); at rows of 400 it was not (128 × 8 best in f32,
/// all within 1% in f64).
pub fn fixed_rule(stats: &RowStats) -> Params {
    if stats.mean > LONG_ROWS_MEAN {
        return Params {
            threads: 128,
            npt: 4,
            sort: false,
        };
    }
    let regular = (stats.max as f64) <= 8.0 * stats.mean.max(1.0);
    let local = stats.col_spread <= stats.cols as f64 / 10.0;
    if regular && local && stats.mean >= 6.0 {
        Params {
            threads: 128,
            npt: 8,
            sort: false,
        }
    } else {
        Params {
            threads: 256,
            npt: 4,
            sort: false,
        }
    }
}

/// The mean row length above which [`fixed_rule`] takes blocks of 512 non-zeros.
const LONG_ROWS_MEAN: f64 = 1024.0;

/// Whether a grid of `blocks` blocks runs with ownership (kernels/hola.cu: a row spanning two
/// blocks is read whole by the first, rows spanning three or more are carried; one launch):
/// while the grid runs in one wave, `resident` blocks per SM on `sm_count` SMs. A block with a
/// row's tail to read pays one more dependent round trip (the tail's column ids, then x); in
/// one wave that adds less than the `hola_prescale` launch it saves, over many waves it costs
/// throughput. Measured on an H100 (notes/hola.md, session 14): cit-HepPh, 412 blocks of 256 x 4
/// (one wave): 9.3 -> 8.2 us; Andrews, 743 blocks (two waves): 12.7 -> 13.7 us; lap3d7 160^3,
/// 27,850 blocks: 0.165 -> 0.198 ms.
pub fn own_mode(blocks: usize, sm_count: u32, resident: usize) -> bool {
    blocks <= sm_count as usize * resident
}

/// Whether rows may be shared between blocks: a row spanning three blocks of `npb` non-zeros or
/// more (longer than `npb + 1`), whose parts the kernel combines in carry mode or with
/// `hola_prescale` and atomics. A row spanning two blocks belongs to the block where it starts,
/// which reads its tail itself (kernels/hola.cu, `HolaBlock`), so without longer rows the core
/// kernel runs alone: one launch, no carry workspace. `None`: the longest row is not known yet.
pub fn needs_combine(longest_row: Option<usize>, npb: usize) -> bool {
    longest_row.is_none_or(|m| m > npb + 1)
}

/// Candidates for QUICK (`exhaustive` false: the fixed rule, the other 1024-per-block split,
/// half and double the block, and the sort) or EXHAUSTIVE (every compiled combination). The fixed rule comes first.
pub fn candidates(stats: &RowStats, exhaustive: bool) -> Vec<Params> {
    let fixed = fixed_rule(stats);
    let mut out = vec![fixed];
    let mut push = |p: Params| {
        if p.is_valid() && !out.contains(&p) {
            out.push(p);
        }
    };
    if exhaustive {
        for &t in THREADS_VALUES {
            for &n in NPT_VALUES {
                for s in [false, true] {
                    push(Params {
                        threads: t as u32,
                        npt: n as u32,
                        sort: s,
                    });
                }
            }
        }
    } else {
        // The other 1024-per-block split, the doubled and halved block, and the sort.
        let other = if fixed.npt == 8 { (256, 4) } else { (128, 8) };
        push(Params {
            threads: other.0,
            npt: other.1,
            ..fixed
        });
        push(Params {
            threads: fixed.threads * 2,
            ..fixed
        });
        push(Params {
            threads: fixed.threads / 2,
            ..fixed
        });
        push(Params {
            sort: !fixed.sort,
            ..fixed
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csr::Csr;

    #[test]
    fn candidates_start_with_the_fixed_rule_and_are_all_compiled_values() {
        let a = Csr::<f64>::from_triplets(2, 2, &[(0, 0, 1.0)]).unwrap();
        let s = a.stats();
        for ex in [false, true] {
            let c = candidates(&s, ex);
            assert_eq!(c[0], fixed_rule(&s));
            assert!(c.iter().all(Params::is_valid));
            let mut d = c.clone();
            d.dedup();
            assert_eq!(d.len(), c.len());
        }
        assert_eq!(candidates(&s, false).len(), 5);
        assert_eq!(candidates(&s, true).len(), 12);
        assert_eq!(fixed_rule(&s).npb(), 1024);
    }

    #[test]
    fn rows_longer_than_a_block_take_blocks_of_512() {
        let rule = |spec: &str| fixed_rule(&crate::io::load(spec).unwrap().1.stats());
        let long = rule("gen:dense:64,1025");
        assert_eq!((long.threads, long.npt, long.npb()), (128, 4, 512));
        assert_eq!(rule("gen:dense:64,1024").npb(), 1024);
        assert_eq!(
            rule("gen:uniform:2000,400,1"),
            Params {
                threads: 256,
                npt: 4,
                sort: false
            }
        );
    }

    #[test]
    fn rows_of_up_to_npb_plus_one_need_no_combining() {
        assert!(!needs_combine(Some(0), 1024));
        assert!(!needs_combine(Some(1025), 1024));
        assert!(needs_combine(Some(1026), 1024));
        assert!(needs_combine(None, 1024));
    }
}
