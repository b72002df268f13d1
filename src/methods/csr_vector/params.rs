//! CSR_VECTOR's tunables and the paper's fixed rule (Reguly & Giles 2012, §5.4), plus the
//! candidate sets for QUICK/EXHAUSTIVE tuning and the neighbourhood ONLINE tuning walks (§6).
//!
//! Kernel defines (`kernels/csr_vector.cu`): `COOP` only, one of [`COOP_VALUES`]. The block
//! size and `repeat` are launch arguments, so one module per `coop` serves every block size and
//! repeat that tuning tries; the value type is in the entry point's name (`_f32`/`_f64`).
#![forbid(unsafe_code)]

pub use super::kernel::{COOP_VALUES, KERNELS};
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
/// §6 step 4: block sizes move in steps of 32 between these bounds; the floor is 96 in single
/// and 64 in double precision ([`block_size_floor`]). The candidate sets use 64 for both.
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

/// §6 step 4's lower bound on the block size: 96 threads in single, 64 in double precision.
pub fn block_size_floor(is_f64: bool) -> u32 {
    if is_f64 {
        64
    } else {
        96
    }
}

/// The smallest number of blocks the fixed rule aims for on a device with `sm_count` SMs.
///
/// §5.4 asks for "at least 1500 blocks" on the paper's 14-SM Fermi: about 107 blocks per SM. We
/// keep that per-SM figure, `ceil(1500 * sm_count / 14)`, so an H100 or H200 (132 SMs) aims for
/// 14,143 blocks: the same number of waves of resident blocks per SM as on the paper's GPU,
/// which is what the rule is about (load balance across SMs vs. data reuse within a group).
/// The host backend has no SMs and uses the paper's 14; the CUDA backend reads the device's
/// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`.
pub fn min_blocks(sm_count: u32) -> usize {
    (PAPER_MIN_BLOCKS as usize * sm_count.max(1) as usize).div_ceil(PAPER_SM_COUNT as usize)
}

/// `coop` from the mean row length (§5.4 rule 2).
///
/// The paper says "the smallest power of two which is larger than the square root of the average
/// row length"; tessera takes the next power of two >= sqrt(mean) (its first design fixed it
/// so), which differs only when sqrt(mean) is itself a power of two (mean 16 -> 4, not 8).
/// ONLINE/QUICK tuning try the doubled value anyway. Capped at the warp size.
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

/// How many timed calls each ONLINE candidate gets; its time is their minimum (the paper times
/// one call per candidate and notes that noise then matters, §6; three damp it cheaply).
pub const ONLINE_SAMPLES: u32 = 3;
/// §6 step 1: a change in time above 5% sends the search to `repeat` (step 3), below to `coop`.
pub const ONLINE_STEP1_THRESHOLD: f64 = 0.05;
/// Where the ONLINE search is (paper §6, steps 1-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnlinePhase {
    /// Timing the fixed rule.
    Baseline,
    /// Step 1: halved `repeat` (twice the blocks).
    Step1,
    /// Step 2: doubling `coop` (the first try also sets the block size to 192).
    CoopUp {
        /// True for the first doubling (whose failure turns the search downwards).
        first: bool,
    },
    /// Step 2, other way: halving `coop`.
    CoopDown,
    /// Step 3: halving `repeat` further.
    RepeatDown,
    /// Step 3: doubling `repeat`.
    RepeatUp,
    /// Step 4: block size +32.
    BlockUp {
        /// True for the first step (whose failure turns the search downwards).
        first: bool,
    },
    /// Step 4: block size -32.
    BlockDown,
    /// Settled on the best setting.
    Done,
}

/// The run-time tuner of §6: it proposes a setting, is told how long calls with it took, and
/// walks the neighbourhood of the fixed rule until no step helps. Pure logic: the CUDA backend
/// times the calls with events and feeds the times in.
#[derive(Debug, Clone)]
pub struct OnlineTuner {
    fixed: Params,
    best: Params,
    best_ms: f64,
    fixed_ms: f64,
    trial: Params,
    samples: Vec<f64>,
    phase: OnlinePhase,
    rows: usize,
    block_floor: u32,
    timed_calls: u32,
}

impl OnlineTuner {
    /// Starts from the fixed rule's `fixed` for a matrix of `rows` rows.
    pub fn new(fixed: Params, rows: usize, is_f64: bool) -> Self {
        OnlineTuner {
            fixed,
            best: fixed,
            best_ms: f64::INFINITY,
            fixed_ms: f64::INFINITY,
            trial: fixed,
            samples: Vec::new(),
            phase: OnlinePhase::Baseline,
            rows,
            block_floor: block_size_floor(is_f64),
            timed_calls: 0,
        }
    }

    /// The setting to time next, or None once settled.
    pub fn trial(&self) -> Option<Params> {
        (self.phase != OnlinePhase::Done).then_some(self.trial)
    }

    /// The best setting measured so far (the fixed rule until something beats it).
    pub fn best(&self) -> Params {
        self.best
    }

    /// The fixed rule the search started from.
    pub fn fixed(&self) -> Params {
        self.fixed
    }

    /// The phase.
    pub fn phase(&self) -> OnlinePhase {
        self.phase
    }

    /// True once settled.
    pub fn is_done(&self) -> bool {
        self.phase == OnlinePhase::Done
    }

    /// Calls timed so far.
    pub fn timed_calls(&self) -> u32 {
        self.timed_calls
    }

    /// The best time measured, in milliseconds (infinite before the first).
    pub fn best_ms(&self) -> f64 {
        self.best_ms
    }

    /// The fixed rule's measured time, in milliseconds (infinite before it is measured).
    pub fn fixed_ms(&self) -> f64 {
        self.fixed_ms
    }

    /// Records the time of one call made with [`OnlineTuner::trial`]'s setting. A time that
    /// is not finite and positive is ignored.
    pub fn record(&mut self, ms: f64) {
        if self.phase == OnlinePhase::Done || !(ms.is_finite() && ms > 0.0) {
            return;
        }
        self.timed_calls += 1;
        self.samples.push(ms);
        if self.samples.len() < ONLINE_SAMPLES as usize {
            return;
        }
        let t = self.samples.iter().copied().fold(f64::INFINITY, f64::min);
        self.samples.clear();
        self.advance(t);
    }

    fn valid(&self, p: Params) -> bool {
        p.is_valid() && p.block_size >= self.block_floor && p.block_size <= BLOCK_SIZE_MAX
    }

    /// Moves to `phase` trying `p`, or, when `p` is not a valid step, on to `otherwise`.
    fn try_or(&mut self, phase: OnlinePhase, p: Params, otherwise: fn(&mut Self)) {
        if self.valid(p) && p != self.best {
            self.phase = phase;
            self.trial = p;
        } else {
            otherwise(self);
        }
    }

    fn step2(&mut self) {
        let p = Params {
            coop: self.best.coop * 2,
            block_size: 192,
            ..self.best
        };
        if p.coop <= WARP {
            self.try_or(OnlinePhase::CoopUp { first: true }, p, Self::coop_down);
        } else {
            self.coop_down();
        }
    }

    fn coop_down(&mut self) {
        let p = Params {
            coop: self.best.coop / 2,
            ..self.best
        };
        self.try_or(OnlinePhase::CoopDown, p, Self::step4);
    }

    fn step4(&mut self) {
        let p = Params {
            block_size: self.best.block_size + 32,
            ..self.best
        };
        self.try_or(OnlinePhase::BlockUp { first: true }, p, Self::block_down);
    }

    fn block_down(&mut self) {
        let p = Params {
            block_size: self.best.block_size.saturating_sub(32),
            ..self.best
        };
        self.try_or(OnlinePhase::BlockDown, p, Self::finish);
    }

    fn finish(&mut self) {
        self.phase = OnlinePhase::Done;
        self.trial = self.best;
    }

    fn repeat_down(&mut self) {
        let p = Params {
            repeat: self.best.repeat / 2,
            ..self.best
        };
        self.try_or(OnlinePhase::RepeatDown, p, Self::step2);
    }

    fn repeat_up(&mut self) {
        let p = Params {
            repeat: self.best.repeat * 2,
            ..self.best
        };
        // More repeat than rows would leave a single block doing everything.
        if self.best.grid_size(self.rows) > 1 {
            self.try_or(OnlinePhase::RepeatUp, p, Self::step2);
        } else {
            self.step2();
        }
    }

    fn advance(&mut self, t: f64) {
        // The one rule of every tuner: at least MIN_GAIN faster, so that noise cannot walk the
        // search to a setting slower than the fixed rule it started from.
        let improved = crate::methods::gpu::tune::improves(t, self.best_ms);
        let tried = self.trial;
        if improved {
            self.best = tried;
            self.best_ms = t;
        }
        match self.phase {
            OnlinePhase::Baseline => {
                self.best_ms = t;
                self.fixed_ms = t;
                let p = Params {
                    repeat: self.fixed.repeat / 2,
                    ..self.fixed
                };
                self.try_or(OnlinePhase::Step1, p, Self::step2);
            }
            OnlinePhase::Step1 => {
                // Step 1: the change against the fixed rule decides between steps 3 and 2.
                let change = (t - self.fixed_ms) / self.fixed_ms;
                if change < -ONLINE_STEP1_THRESHOLD {
                    self.repeat_down();
                } else if change > ONLINE_STEP1_THRESHOLD {
                    self.repeat_up();
                } else {
                    self.step2();
                }
            }
            OnlinePhase::CoopUp { first } => {
                if improved {
                    let p = Params {
                        coop: self.best.coop * 2,
                        ..self.best
                    };
                    self.try_or(OnlinePhase::CoopUp { first: false }, p, Self::step4);
                } else if first {
                    self.coop_down();
                } else {
                    self.step4();
                }
            }
            OnlinePhase::CoopDown => {
                if improved {
                    self.coop_down();
                } else {
                    self.step4();
                }
            }
            // After step 3 we also run step 2 (a choice beyond the paper, whose step 1 picks one
            // of them): on an H200 a uniform random matrix moved by 5.1% when repeat was halved,
            // and the paper's walk then never tried coop 16, which is 18% faster there.
            OnlinePhase::RepeatDown => {
                if improved {
                    self.repeat_down();
                } else {
                    self.step2();
                }
            }
            OnlinePhase::RepeatUp => {
                if improved {
                    self.repeat_up();
                } else {
                    self.step2();
                }
            }
            OnlinePhase::BlockUp { first } => {
                if improved {
                    let p = Params {
                        block_size: self.best.block_size + 32,
                        ..self.best
                    };
                    self.try_or(OnlinePhase::BlockUp { first: false }, p, Self::finish);
                } else if first {
                    self.block_down();
                } else {
                    self.finish();
                }
            }
            OnlinePhase::BlockDown => {
                if improved {
                    self.block_down();
                } else {
                    self.finish();
                }
            }
            OnlinePhase::Done => {}
        }
    }
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

    /// Drives a tuner with a cost model until it settles; returns it and the calls it took.
    fn settle(fixed: Params, rows: usize, cost: impl Fn(Params) -> f64) -> OnlineTuner {
        let mut t = OnlineTuner::new(fixed, rows, true);
        let mut calls = 0;
        while let Some(p) = t.trial() {
            assert!(
                p.is_valid() && p.block_size >= 64 && p.block_size <= 512,
                "{p}"
            );
            t.record(cost(p));
            calls += 1;
            assert!(calls < 200, "the search does not settle");
        }
        assert_eq!(t.timed_calls(), calls);
        t
    }

    #[test]
    fn online_tuning_finds_a_better_coop_and_block_size_and_never_ends_slower() {
        let fixed = Params {
            coop: 4,
            repeat: 8,
            block_size: 128,
        };
        // Best at coop 16, block 256; repeat indifferent.
        let cost = |p: Params| {
            1.0 + 0.1 * (p.coop as f64 / 16.0).log2().abs()
                + 0.01 * ((p.block_size as f64 - 256.0) / 32.0).abs()
        };
        let t = settle(fixed, 1_000_000, cost);
        assert_eq!(t.best().coop, 16);
        assert!(cost(t.best()) < cost(fixed) * 0.9);
        assert!(t.best().block_size > 128);
    }

    #[test]
    fn online_tuning_follows_repeat_when_halving_it_changes_time_by_more_than_5_percent() {
        let fixed = Params {
            coop: 4,
            repeat: 16,
            block_size: 128,
        };
        // Fewer rows per group is much better, down to repeat 2.
        let cost = |p: Params| 1.0 + 0.2 * (p.repeat as f64 / 2.0).log2().abs();
        let t = settle(fixed, 1_000_000, cost);
        assert_eq!(t.best().repeat, 2);
        assert_eq!(t.best().coop, 4);
    }

    #[test]
    fn online_tuning_keeps_the_fixed_rule_when_nothing_is_faster_or_times_are_noise() {
        let fixed = Params {
            coop: 8,
            repeat: 4,
            block_size: 128,
        };
        // Everything else 1% slower (within noise): the fixed rule stays.
        let t = settle(fixed, 1_000_000, |p| if p == fixed { 1.0 } else { 0.99 });
        assert_eq!(t.best(), fixed);
        let t = settle(fixed, 1_000_000, |p| if p == fixed { 1.0 } else { 1.5 });
        assert_eq!(t.best(), fixed);
        // Bad samples are ignored.
        let mut t = OnlineTuner::new(fixed, 10, false);
        t.record(f64::NAN);
        t.record(-1.0);
        assert_eq!(t.timed_calls(), 0);
    }

    #[test]
    fn online_tuning_tries_coop_after_optimising_repeat() {
        let fixed = Params {
            coop: 4,
            repeat: 2,
            block_size: 128,
        };
        // Halving repeat gains 6% (step 3), and coop gains 10% per doubling up to 16.
        let cost = |p: Params| {
            let c = 1.0 - 0.1 * (p.coop.min(16) as f64 / 4.0).log2().max(0.0);
            (if p.repeat == 1 { 0.94 } else { 1.0 }) * c
        };
        let t = settle(fixed, 1_000_000, cost);
        assert_eq!((t.best().coop, t.best().repeat), (16, 1));
    }
}
