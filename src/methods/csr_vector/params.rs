//! CSR_VECTOR's tunables and the paper's fixed rule (Reguly & Giles 2012, §5.4), plus the
//! candidate sets for QUICK/EXHAUSTIVE tuning and the neighbourhood ONLINE tuning walks (§6).
//!
//! Kernel defines (`kernels/csr_vector.cu`, when the CUDA backend lands): `COOP`, `REPEAT`,
//! `BLOCK_SIZE`, `VALUE_T`.
#![forbid(unsafe_code)]

use crate::csr::RowStats;
use std::fmt;

/// The paper's GPU (Tesla C2070/M2070, Fermi) had 14 SMs.
pub(crate) const PAPER_SM_COUNT: u32 = 14;
/// §5.4 rule 3: "at least 1500 blocks" — on 14 SMs.
pub(crate) const PAPER_MIN_BLOCKS: u32 = 1500;
/// §5.4 rule 1.
pub(crate) const FIXED_BLOCK_SIZE: u32 = 128;
/// Warp size: the largest `coop` (§5.1).
pub(crate) const WARP: u32 = 32;
/// §6 step 4: block sizes move in steps of 32 between these bounds (96 is the f32 floor, 64 f64;
/// we use 64 for both).
pub(crate) const BLOCK_SIZE_MIN: u32 = 64;
/// §6 step 4 upper bound.
pub(crate) const BLOCK_SIZE_MAX: u32 = 512;

/// One CSR_VECTOR configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Params {
    /// Threads cooperating on one row: a power of two, 1..=32.
    pub coop: u32,
    /// Rows each thread group handles in turn.
    pub repeat: u32,
    /// Threads per block: a multiple of 32 (and of `coop`).
    pub block_size: u32,
}

impl Params {
    /// Rows one block covers.
    pub fn rows_per_block(&self) -> usize {
        (self.block_size / self.coop) as usize * self.repeat as usize
    }

    /// Blocks needed for `rows` rows.
    pub fn grid_size(&self, rows: usize) -> usize {
        rows.div_ceil(self.rows_per_block())
    }

    /// True when the kernel can be built and launched with these values.
    pub fn is_valid(&self) -> bool {
        self.coop.is_power_of_two()
            && self.coop <= WARP
            && self.repeat >= 1
            && self.block_size % WARP == 0
            && (BLOCK_SIZE_MIN..=1024).contains(&self.block_size)
    }
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "coop={} repeat={} block_size={}",
            self.coop, self.repeat, self.block_size
        )
    }
}

/// The smallest number of blocks the fixed rule aims for on a device with `sm_count` SMs.
///
/// §5.4 asks for "at least 1500 blocks" on the paper's 14-SM Fermi: about 107 blocks per SM. We
/// keep that per-SM figure, `ceil(1500 * sm_count / 14)`, so an H100 (132 SMs) aims for 14,143
/// blocks. The host backend has no SMs and uses the paper's 14.
pub fn min_blocks(sm_count: u32) -> usize {
    (PAPER_MIN_BLOCKS as usize * sm_count.max(1) as usize).div_ceil(PAPER_SM_COUNT as usize)
}

/// `coop` from the mean row length (§5.4 rule 2).
///
/// The paper says "the smallest power of two which is larger than the square root of the average
/// row length"; ARCHITECTURE.md fixes it as the next power of two >= sqrt(mean), which differs
/// only when sqrt(mean) is itself a power of two (mean 16 -> 4, not 8). We follow
/// ARCHITECTURE.md; ONLINE/QUICK tuning try the doubled value anyway. Capped at the warp size.
pub fn coop_for_mean(mean: f64) -> u32 {
    let r = mean.max(1.0).sqrt();
    let mut c = 1u32;
    while (c as f64) < r && c < WARP {
        c *= 2;
    }
    c
}

/// The fixed rule of §5.4: block size 128; `coop` from the mean row length; `repeat` as large as
/// possible while the grid keeps at least [`min_blocks`] blocks (rule 3; at least 1).
pub fn fixed_rule(stats: &RowStats, sm_count: u32) -> Params {
    let coop = coop_for_mean(stats.mean);
    let block_size = FIXED_BLOCK_SIZE;
    let groups_per_block = (block_size / coop) as usize;
    let blocks_at_repeat_1 = stats.rows.div_ceil(groups_per_block);
    let repeat = (blocks_at_repeat_1 / min_blocks(sm_count)).clamp(1, 1 << 16) as u32;
    Params {
        coop,
        repeat,
        block_size,
    }
}

/// Candidates for analyze-time tuning: QUICK varies `coop` around the rule (x1/2, x2) and
/// `repeat` (x1/2, x2); EXHAUSTIVE takes every `coop`, a spread of `repeat`s and block sizes
/// 64..=512 in steps of 64. The fixed rule's own choice is always first.
pub fn candidates(stats: &RowStats, sm_count: u32, exhaustive: bool) -> Vec<Params> {
    let base = fixed_rule(stats, sm_count);
    let mut out = vec![base];
    let mut push = |p: Params| {
        if p.is_valid() && !out.contains(&p) {
            out.push(p);
        }
    };
    if exhaustive {
        for coop in [1, 2, 4, 8, 16, 32] {
            for repeat in [1, 2, 4, 8, 16, 32] {
                for block_size in (BLOCK_SIZE_MIN..=BLOCK_SIZE_MAX).step_by(64) {
                    push(Params {
                        coop,
                        repeat,
                        block_size,
                    });
                }
            }
        }
    } else {
        for coop in [base.coop / 2, base.coop * 2] {
            push(Params { coop, ..base });
        }
        for repeat in [base.repeat / 2, base.repeat * 2] {
            push(Params { repeat, ..base });
        }
        push(Params {
            block_size: 256,
            ..base
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(rows: usize, mean: f64) -> RowStats {
        RowStats {
            rows,
            cols: rows,
            nnz: (rows as f64 * mean) as usize,
            mean,
            std_dev: 0.0,
            min: 0,
            max: 0,
            empty_rows: 0,
            col_spread: 0.0,
        }
    }

    #[test]
    fn coop_is_the_next_power_of_two_of_the_root_mean_row_length_capped_at_the_warp() {
        assert_eq!(coop_for_mean(0.0), 1);
        assert_eq!(coop_for_mean(1.0), 1);
        assert_eq!(coop_for_mean(3.0), 2);
        assert_eq!(coop_for_mean(7.0), 4); // lap3d7: sqrt 2.6 -> 4
        assert_eq!(coop_for_mean(16.0), 4);
        assert_eq!(coop_for_mean(81.0), 16);
        assert_eq!(coop_for_mean(2600.0), 32);
    }

    #[test]
    fn fixed_rule_keeps_at_least_1500_blocks_per_14_sms() {
        // 4.1M rows of 7: coop 4, 32 groups per block, 128,000 blocks at repeat 1.
        let p = fixed_rule(&stats(4_096_000, 7.0), 14);
        assert_eq!((p.coop, p.block_size), (4, 128));
        assert_eq!(p.repeat, 85);
        assert!(p.grid_size(4_096_000) >= 1500);
        let p = fixed_rule(&stats(4_096_000, 7.0), 132);
        assert_eq!(min_blocks(132), 14_143);
        assert!(p.grid_size(4_096_000) >= 14_143 && p.repeat == 9);
        // Small matrices get repeat 1.
        assert_eq!(fixed_rule(&stats(100, 3.0), 14).repeat, 1);
    }

    #[test]
    fn candidates_start_with_the_fixed_rule_and_are_all_launchable() {
        let s = stats(1_000_000, 16.0);
        for exhaustive in [false, true] {
            let c = candidates(&s, 14, exhaustive);
            assert_eq!(c[0], fixed_rule(&s, 14));
            assert!(c.iter().all(Params::is_valid));
            assert!(c.len() > if exhaustive { 200 } else { 4 });
        }
    }
}
