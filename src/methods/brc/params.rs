//! BRC's tunables and the paper's fixed rule (Ashari et al., ICS'14, §3.3 and Algorithm 1), the
//! ELL width of the ELL+BRC hybrid (§5, §8) chosen the way CUSP's HYB chooses its ELL width, and
//! the candidate sets for QUICK/EXHAUSTIVE tuning (the paper's bounded 24-point search, §5).
//!
//! Kernel defines (`kernels/brc.cu`): none. B1, `rep`, the block size and the hybrid's ELL width
//! are launch arguments, so one module serves every candidate the tuner tries; the value type is
//! in the entry point's name (`_f32`/`_f64`).
#![forbid(unsafe_code)]

pub use super::kernel::KERNELS;
use crate::csr::RowStats;
use std::fmt;

/// Warp size: B1 on the device (one block of B1 rows = one warp).
pub(crate) const WARP: u32 = 32;

/// B1, the block height (§3.3). The paper used 32 for every experiment and says B1 "can be
/// chosen to be as big as the thread block size" when the row-length deviation is small.
///
/// Decision: 32 always, on every matrix. A larger B1 only saves per-block metadata (8 bytes
/// per block: 0.25 byte per row at B1 = 32, under 2% of even a 2-entry f32 row), while every
/// row of a larger block is padded to the width of its longest row, so padding can only grow,
/// and the one-warp-per-block property (no divergence in T inside a warp; §3.1) becomes
/// one-CTA-per-block. The format and the kernel still accept any B1 >= 1 (the paper's Figure 2
/// uses B1 = 3, tests use it): the kernel maps threads to block rows as Figure 3 does
/// (`cb = tid / B1`, `b_row = tid % B1`), so a block of B1 = 64 or 128 rows is simply two or four
/// consecutive warps with the same T.
pub(crate) const FIXED_B1: u32 = WARP;

/// C in Eq. 3. The paper does not print it; Table 1's B2 column equals round(mu + sigma) on
/// every matrix below the cap (CAN 64+14 -> 78, SPH 72+19 -> 91, ACC 22+14 -> 36, WEB 3+25 ->
/// 28, ...), so C = 1.
pub(crate) const EQ3_C: u32 = 1;

/// The paper's device maximum for B2 on Kepler (§3.3: "a maximum of 200 by a simple search").
pub(crate) const PAPER_MAX_B2: u32 = 200;

/// Our device maximum for B2 (§3.3's "predefined maximum B2 size ... depending on the device
/// characteristic"), for Hopper (H100/H200) and used on every device and on the host.
///
/// Why 64 and not Kepler's 200. The cap only acts on matrices whose mu + sigma exceeds it,
/// i.e. matrices of long rows, and there it sets how many warps the matrix yields: about
/// nnz / (32 * B2). Per SM, Hopper is close to the paper's Kepler (memory bandwidth per SM:
/// K20X 288 GB/s / 14 = 21 GB/s, H100 3.35 TB/s / 132 = 25 GB/s; similar DRAM latency), so
/// the per-warp work the paper found acceptable is not what limits us; what changed is the
/// number of SMs, 14 -> 132, i.e. 896 -> 8448 resident warps. With B2 = 200 the LP matrix of
/// Table 1 (11.3 M nnz) yields ~1,800 warps and a dense 2000^2 block ~630: a fifth and a
/// thirteenth of one wave of resident warps. 64 triples that (one wave for LP), still gives
/// each thread 64 independent loads (enough to keep several in flight per thread when the
/// loop is unrolled by 4) and adds at most one atomic (8 bytes) per 64 entries (768 bytes in
/// f64): about 1% traffic. QUICK/EXHAUSTIVE tuning try 16..256 anyway.
pub(crate) const MAX_B2: u32 = 64;

/// Algorithm 1's "MaxOfCoalescing": the largest `rep` the fixed rule uses when sigma > mu.
/// The paper does not give its value; 4 interleaves each warp's top-of-order (wide) block with
/// three narrower ones further down, and the rule lowers it so the grid keeps at least one wave
/// of resident warps ([`fixed_rep`]).
pub(crate) const MAX_OF_COALESCING: u32 = 4;

/// Resident warps per SM on sm_80/sm_90 (2048 threads): one "wave" for [`fixed_rep`].
pub(crate) const RESIDENT_WARPS_PER_SM: usize = 64;

/// Threads per CTA (§4: "The thread block size was set to 128").
pub(crate) const BLOCK_SIZE: u32 = 128;

/// CUSP HYB's `relative_speed`: ELL is assumed 3x as fast per entry as COO, so a column of the
/// ELL part pays off while at least a third of the rows fill it.
pub(crate) const HYB_RELATIVE_SPEED: f64 = 3.0;

/// CUSP HYB's `breakeven_threshold`: a column with fewer than 4096 filled rows goes to COO
/// whatever the fraction.
pub(crate) const HYB_BREAKEVEN_ROWS: usize = 4096;

/// §8: "A hybrid format of ELL and BRC works better than either pure BRC or pure HYB in
/// matrices with 0 < sigma <= 2/3 mu".
pub(crate) const HYBRID_SIGMA_OVER_MU: f64 = 2.0 / 3.0;

/// The `rep` values of the bounded search (4 of the 24 points).
pub(crate) const REP_CANDIDATES: [u32; 4] = [1, 2, 4, 8];

/// The fixed B2 values of the bounded search, beside Eq. 3's own (6 B2 values x 4 reps = the
/// paper's 24 points; a value at or above the longest row is the same format and is dropped).
pub(crate) const B2_CANDIDATES: [u32; 5] = [16, 32, 64, 128, 256];

/// One BRC configuration: the format's shape (`b1`, `b2`, `ell_width`) and the launch (`rep`,
/// `block_size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Params {
    /// B1: rows per block (§3.1); 32 on the device.
    pub b1: u32,
    /// B2: the most entries of one row in one block (§3.2, Eq. 2-3).
    pub b2: u32,
    /// Thread coarsening: block rows per thread, a grid apart (§3.3, Figure 3's `rep`).
    pub rep: u32,
    /// The hybrid's ELL width k (§5/§8): each row's first k entries are stored in an ELL part;
    /// 0 = pure BRC.
    pub ell_width: u32,
    /// Threads per CTA: a multiple of 32.
    pub block_size: u32,
}

impl Params {
    /// True when the format can be built and the kernels launched with these values.
    pub fn is_valid(&self) -> bool {
        self.b1 >= 1
            && self.b2 >= 1
            && self.rep >= 1
            && self.block_size % WARP == 0
            && (WARP..=1024).contains(&self.block_size)
    }

    /// The part of the parameters that shapes the format (the rest is the launch).
    pub fn format_key(&self) -> (u32, u32, u32) {
        (self.b1, self.b2, self.ell_width)
    }

    /// CTAs of the BRC kernel for `block_rows` block rows (num_blocks * B1): Figure 3's grid,
    /// each thread taking `rep` block rows a grid apart.
    pub fn grid_size(&self, block_rows: usize) -> usize {
        block_rows
            .div_ceil(self.rep as usize)
            .div_ceil(self.block_size as usize)
    }
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "B1={} B2={} rep={} block_size={} ",
            self.b1, self.b2, self.rep, self.block_size
        )?;
        if self.ell_width == 0 {
            write!(f, "hybrid=off")
        } else {
            write!(f, "hybrid=ELL(k={})+BRC", self.ell_width)
        }
    }
}

/// Mean, standard deviation and maximum of the row lengths the BRC part stores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartStats {
    /// Rows counted.
    pub rows: usize,
    /// Mean length (mu).
    pub mean: f64,
    /// Population standard deviation (sigma).
    pub std_dev: f64,
    /// Longest (MaxNZ).
    pub max: usize,
}

/// The row lengths a rule reads, as (length, rows of that length) pairs: one pair a row from
/// the row offsets ([`lengths_of`]), or one pair a length from a histogram ([`lengths_in`], the
/// device plan's: `fill.rs`). Every function below gives the same answer from either.
pub trait RowLengths: Iterator<Item = (usize, usize)> + Clone {}
impl<I: Iterator<Item = (usize, usize)> + Clone> RowLengths for I {}

/// The lengths of the rows of `row_ptr` (base 0, sound), a pair a row.
pub fn lengths_of(row_ptr: &[i32]) -> impl RowLengths + '_ {
    row_ptr.windows(2).map(|w| ((w[1] - w[0]) as usize, 1))
}

/// The lengths counted in `hist` (`hist[l]`: rows of length l), a pair a length present.
pub fn lengths_in(hist: &[u32]) -> impl RowLengths + '_ {
    hist.iter()
        .enumerate()
        .filter(|&(_, &n)| n > 0)
        .map(|(l, &n)| (l, n as usize))
}

/// Row lengths of the BRC part when each row's first `k` entries go to ELL: for k = 0 the
/// matrix's own statistics (every row, empty ones included, as the paper's Table 1 counts
/// them); for k > 0 the remainders `len - k` of the rows longer than k. The sums are exact
/// (integers), so the answer does not depend on the order of `lengths`.
pub fn part_stats(lengths: impl RowLengths, stats: &RowStats, k: usize) -> PartStats {
    if k == 0 {
        return PartStats {
            rows: stats.rows,
            mean: stats.mean,
            std_dev: stats.std_dev,
            max: stats.max,
        };
    }
    let (mut n, mut sum, mut sq, mut max) = (0usize, 0u128, 0u128, 0usize);
    for (len, count) in lengths {
        if len > k {
            let r = (len - k) as u128;
            n += count;
            sum += r * count as u128;
            sq += r * r * count as u128;
            max = max.max(len - k);
        }
    }
    if n == 0 {
        return PartStats {
            rows: 0,
            mean: 0.0,
            std_dev: 0.0,
            max: 0,
        };
    }
    let mean = sum as f64 / n as f64;
    PartStats {
        rows: n,
        mean,
        std_dev: (sq as f64 / n as f64 - mean * mean).max(0.0).sqrt(),
        max,
    }
}

/// Eq. 3: B2 = min(C * round(mu + sigma), MaxNZ), then capped by [`MAX_B2`]; at least 1.
pub fn eq3_b2(p: &PartStats) -> u32 {
    let raw = (EQ3_C as f64 * (p.mean + p.std_dev).round()).max(1.0);
    let b2 = raw.min(p.max.max(1) as f64).min(MAX_B2 as f64);
    b2 as u32
}

/// The ELL width CUSP's HYB would choose (`compute_optimal_entries_per_row`): the smallest k
/// such that fewer than max(rows / 3, 4096) rows are longer than k ("relative speed" 3,
/// "breakeven threshold" 4096); the longest row's length when no k qualifies. The paper (§2.4)
/// quotes the same rule. Matrices under 4096 rows thus get k = 0 (HYB puts them in COO), and
/// matrices whose rows are all the same length get k = that length (ELL only).
pub fn hyb_ell_width(lengths: impl RowLengths) -> u32 {
    let (mut rows, mut nnz, mut max) = (0usize, 0usize, 0usize);
    for (l, n) in lengths.clone() {
        rows += n;
        nnz += l * n;
        max = max.max(l);
    }
    // The search stops by k = 3*nnz/rows at the latest (more than a third of the rows longer
    // than that would hold more than nnz entries), so longer rows share one bucket.
    let cap = max.min(3 * nnz / rows.max(1) + 1);
    let mut histogram = vec![0usize; cap + 1];
    for (l, n) in lengths {
        histogram[l.min(cap)] += n;
    }
    let mut longer = rows;
    for (k, &h) in histogram.iter().enumerate().take(cap) {
        longer -= h; // rows longer than k
        if HYB_RELATIVE_SPEED * (longer as f64) < rows as f64 || longer < HYB_BREAKEVEN_ROWS {
            return k as u32;
        }
    }
    max as u32
}

/// Pieces the BRC part holds for these row lengths, B2 and ELL width: sum over rows of
/// ceil((len - k) / B2) (Algorithm 1 re-queues a row until its remainder fits).
pub fn count_pieces(lengths: impl RowLengths, b2: u32, k: u32) -> usize {
    let (b2, k) = (b2.max(1) as usize, k as usize);
    lengths
        .map(|(l, n)| l.saturating_sub(k).div_ceil(b2) * n)
        .sum()
}

/// Algorithm 1's `rep`: 1 unless sigma > mu; then [`MAX_OF_COALESCING`], lowered until the grid
/// keeps at least one wave of resident warps (`sm_count` x 64) — coarsening a grid that does
/// not fill the device only lengthens each warp's work.
pub fn fixed_rep(p: &PartStats, block_rows: usize, sm_count: u32) -> u32 {
    if p.std_dev <= p.mean {
        return 1;
    }
    let warps = block_rows.div_ceil(WARP as usize);
    let wave = sm_count.max(1) as usize * RESIDENT_WARPS_PER_SM;
    (warps / wave).clamp(1, MAX_OF_COALESCING as usize) as u32
}

/// Why the fixed rule chose what it chose, for `describe()`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The parameters.
    pub params: Params,
    /// The HYB ELL width of the matrix (whether or not the rule uses it).
    pub hyb_k: u32,
    /// The statistics of the BRC part that Eq. 3 saw.
    pub part: PartStats,
    /// One line of explanation.
    pub why: String,
}

/// The fixed rule (Tuning NONE) for a matrix with this `row_ptr` and these statistics on a
/// device with `sm_count` SMs:
/// - hybrid (§8): on when sigma <= 2/3 mu (QCD/EPI-like rows of equal length included, where
///   the ELL part takes everything) and the HYB width k is > 0; off otherwise;
/// - B1 = 32 ([`FIXED_B1`]); B2 by Eq. 3 over the rows the BRC part holds ([`eq3_b2`]);
/// - rep by Algorithm 1 ([`fixed_rep`]) over the same rows; 128 threads per CTA (§4).
pub fn fixed_rule(row_ptr: &[i32], stats: &RowStats, sm_count: u32) -> Rule {
    fixed_rule_of(lengths_of(row_ptr), stats, sm_count)
}

/// [`fixed_rule`] from any source of the row lengths ([`RowLengths`]): the same rule.
pub fn fixed_rule_of(lengths: impl RowLengths, stats: &RowStats, sm_count: u32) -> Rule {
    let hyb_k = hyb_ell_width(lengths.clone());
    let hybrid = hyb_k > 0 && stats.std_dev <= HYBRID_SIGMA_OVER_MU * stats.mean;
    let k = if hybrid { hyb_k } else { 0 };
    let part = part_stats(lengths.clone(), stats, k as usize);
    let b2 = eq3_b2(&part);
    let block_rows = count_pieces(lengths, b2, k).div_ceil(FIXED_B1 as usize) * FIXED_B1 as usize;
    let rep = fixed_rep(&part, block_rows, sm_count);
    let why = format!(
        "fixed rule: {}; B2 = min(round(mu+sigma) = {}, MaxNZ = {}, cap {MAX_B2}; Kepler: {PAPER_MAX_B2}) over {} with mu = {:.2}, sigma = {:.2} (Eq. 3, C = 1); rep {} (Alg. 1: sigma {} mu)",
        if hybrid {
            format!("hybrid ELL k = {hyb_k} (HYB width; sigma {:.2} <= 2/3 mu {:.2}, §8)", stats.std_dev, stats.mean)
        } else if hyb_k == 0 {
            "pure BRC (HYB width 0)".to_string()
        } else {
            format!("pure BRC (sigma {:.2} > 2/3 mu {:.2}; HYB width would be {hyb_k})", stats.std_dev, stats.mean)
        },
        (part.mean + part.std_dev).round(),
        part.max,
        if hybrid { "the rows' remainders after ELL" } else { "all rows" },
        part.mean,
        part.std_dev,
        rep,
        if part.std_dev > part.mean { ">" } else { "<=" },
    );
    Rule {
        params: Params {
            b1: FIXED_B1,
            b2,
            rep,
            ell_width: k,
            block_size: BLOCK_SIZE,
        },
        hyb_k,
        part,
        why,
    }
}

/// Candidates for analyze-time tuning; the fixed rule's choice is always first.
///
/// QUICK (about 7): B2 x{1/2, 1, 2} (clamped to the part's longest row) x rep {rule's, 1 or 4},
/// then the other side of the hybrid switch (pure BRC when the rule chose the hybrid, the
/// hybrid with the HYB width when it did not and that width is > 0) with its own Eq. 3 B2.
///
/// EXHAUSTIVE: the paper's bounded search (§5: 24 points) — B2 in {Eq. 3's value, 16, 32, 64,
/// 128, 256} x rep in {1, 2, 4, 8}, duplicates (B2 at or above the longest row) dropped — for
/// pure BRC, and the same 24 for the hybrid with the HYB width when that width is > 0 and
/// below the longest row.
pub fn candidates(
    row_ptr: &[i32],
    stats: &RowStats,
    sm_count: u32,
    exhaustive: bool,
) -> Vec<Params> {
    let rule = fixed_rule(row_ptr, stats, sm_count);
    let base = rule.params;
    let mut out = vec![base];
    let mut push = |p: Params| {
        if p.is_valid() && !out.contains(&p) {
            out.push(p);
        }
    };
    // The widths worth trying: pure BRC, and the HYB width when it leaves something to BRC
    // or covers everything (then the BRC part is empty and B2/rep do not matter).
    let mut widths = vec![0u32];
    if rule.hyb_k > 0 {
        widths.push(rule.hyb_k);
    }
    for &k in &widths {
        let part = part_stats(lengths_of(row_ptr), stats, k as usize);
        let longest = part.max.max(1) as u32;
        let clamp = |b2: u32| b2.clamp(1, longest);
        let eq3 = eq3_b2(&part);
        if exhaustive {
            let mut b2s = vec![eq3];
            b2s.extend(B2_CANDIDATES);
            for b2 in b2s {
                for rep in REP_CANDIDATES {
                    push(Params {
                        b2: clamp(b2),
                        rep,
                        ell_width: k,
                        ..base
                    });
                }
            }
        } else if k == base.ell_width {
            for b2 in [base.b2 / 2, base.b2, base.b2.saturating_mul(2)] {
                for rep in [base.rep, if base.rep == 1 { 4 } else { 1 }] {
                    push(Params {
                        b2: clamp(b2),
                        rep,
                        ..base
                    });
                }
            }
        } else {
            let block_rows = count_pieces(lengths_of(row_ptr), eq3, k).div_ceil(base.b1 as usize)
                * base.b1 as usize;
            push(Params {
                b2: eq3,
                rep: fixed_rep(&part, block_rows, sm_count),
                ell_width: k,
                ..base
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row_ptr_of(lengths: &[usize]) -> Vec<i32> {
        let mut rp = vec![0i32];
        for &l in lengths {
            rp.push(rp.last().unwrap() + l as i32);
        }
        rp
    }

    fn stats_of(lengths: &[usize]) -> RowStats {
        let n = lengths.len();
        let nnz: usize = lengths.iter().sum();
        let mean = nnz as f64 / n as f64;
        let var = lengths
            .iter()
            .map(|&l| (l as f64 - mean) * (l as f64 - mean))
            .sum::<f64>()
            / n as f64;
        RowStats {
            rows: n,
            cols: n,
            nnz,
            mean,
            std_dev: var.sqrt(),
            min: lengths.iter().copied().min().unwrap_or(0),
            max: lengths.iter().copied().max().unwrap_or(0),
            empty_rows: lengths.iter().filter(|&&l| l == 0).count(),
            col_spread: 0.0,
        }
    }

    #[test]
    fn eq3_reproduces_table_1_b2_values_below_the_paper_cap() {
        // (mu, sigma, max, B2 in Table 1) for CAN, ACC, ECO, EPI, WEB, CIR, HAR, WIN, QCD.
        for (mu, sigma, max, want) in [
            (64.0, 14.0, 78, 78),
            (22.0, 14.0, 81, 36),
            (6.0, 4.0, 44, 10),
            (4.0, 0.0, 4, 4),
            (3.0, 25.0, 4700, 28),
            (6.0, 4.0, 353, 10),
            (51.0, 28.0, 145, 79),
            (53.0, 5.0, 180, 58),
            (39.0, 0.0, 39, 39),
        ] {
            let p = PartStats {
                rows: 1,
                mean: mu,
                std_dev: sigma,
                max,
            };
            let b2 = (EQ3_C as f64 * (mu + sigma)).round().min(max as f64) as u32;
            assert_eq!(b2, want, "mu {mu} sigma {sigma}");
            assert_eq!(eq3_b2(&p), want.min(MAX_B2));
        }
        // DEN and LP hit the paper's cap of 200; ours is 64.
        let den = PartStats {
            rows: 2000,
            mean: 2000.0,
            std_dev: 0.0,
            max: 2000,
        };
        assert_eq!(eq3_b2(&den), MAX_B2);
        // An empty matrix still gets a valid B2.
        let none = PartStats {
            rows: 0,
            mean: 0.0,
            std_dev: 0.0,
            max: 0,
        };
        assert_eq!(eq3_b2(&none), 1);
    }

    #[test]
    fn hyb_width_follows_cusp_rule() {
        // Under 4096 rows HYB puts everything in COO.
        assert_eq!(hyb_ell_width(lengths_of(&row_ptr_of(&[5; 100]))), 0);
        // All rows equal: ELL takes everything.
        assert_eq!(hyb_ell_width(lengths_of(&row_ptr_of(&[7; 10_000]))), 7);
        // 9000 rows of 3 and 3000 of 20: at k = 3 only 3000 < 12000/3 + ... rows are longer
        // (3000 < max(4000, 4096)), so k = 3.
        let mut l = vec![3usize; 9000];
        l.extend([20usize; 3000]);
        assert_eq!(hyb_ell_width(lengths_of(&row_ptr_of(&l))), 3);
        // 6000 rows of 2 and 6000 of 10: at k = 2, 6000 rows are longer: >= 4000 and >= 4096,
        // so k grows until the long rows end: k = 10.
        let mut l = vec![2usize; 6000];
        l.extend([10usize; 6000]);
        assert_eq!(hyb_ell_width(lengths_of(&row_ptr_of(&l))), 10);
        assert_eq!(hyb_ell_width(lengths_of(&[0])), 0);
        // One very long row does not size the histogram.
        let mut l = vec![1usize; 9999];
        l.push(1_000_000);
        assert_eq!(hyb_ell_width(lengths_of(&row_ptr_of(&l))), 1);
    }

    #[test]
    fn fixed_rule_coarsens_only_when_sigma_exceeds_mu_and_the_grid_is_large() {
        // sigma > mu, small matrix: rep stays 1.
        let mut l = vec![1usize; 10_000];
        l.extend([3000usize; 100]);
        let s = stats_of(&l);
        assert!(s.std_dev > s.mean);
        let r = fixed_rule(&row_ptr_of(&l), &s, 132);
        assert_eq!((r.params.rep, r.params.ell_width), (1, 0));
        assert_eq!(r.params.b1, 32);
        // On a 1-SM device the same matrix has several waves: rep > 1.
        let r = fixed_rule(&row_ptr_of(&l), &s, 1);
        assert!(
            r.params.rep > 1 && r.params.rep <= MAX_OF_COALESCING,
            "{:?}",
            r
        );
        assert!(r.why.contains("sigma >"), "{}", r.why);
    }

    #[test]
    fn fixed_rule_picks_the_hybrid_for_low_deviation_and_ell_only_for_equal_rows() {
        let l = vec![9usize; 5000];
        let s = stats_of(&l);
        let r = fixed_rule(&row_ptr_of(&l), &s, 132);
        assert_eq!(r.params.ell_width, 9);
        assert_eq!(count_pieces(lengths_of(&row_ptr_of(&l)), r.params.b2, 9), 0);
        // Low deviation but a long tail: hybrid with k = 5 and BRC for the rest.
        let mut l = vec![5usize; 9000];
        l.extend([8usize; 1000]);
        let s = stats_of(&l);
        let r = fixed_rule(&row_ptr_of(&l), &s, 132);
        assert_eq!(r.params.ell_width, 5);
        assert_eq!(r.part.rows, 1000);
        assert_eq!(r.params.b2, 3);
    }

    #[test]
    fn candidates_start_with_the_rule_are_valid_and_number_24_per_width_when_exhaustive() {
        let mut l = vec![3usize; 9000];
        l.extend([400usize; 300]);
        let rp = row_ptr_of(&l);
        let s = stats_of(&l);
        let rule = fixed_rule(&rp, &s, 132).params;
        for exhaustive in [false, true] {
            let c = candidates(&rp, &s, 132, exhaustive);
            assert_eq!(c[0], rule);
            assert!(c.iter().all(Params::is_valid));
            let widths: std::collections::BTreeSet<u32> = c.iter().map(|p| p.ell_width).collect();
            assert_eq!(widths.len(), 2, "{c:?}");
            if exhaustive {
                // Eq. 3 gives 64 (capped), a duplicate of the fixed 64: 5 B2 x 4 reps per width.
                assert_eq!(c.len(), 40, "{c:?}");
            } else {
                assert!(c.len() >= 5 && c.len() <= 8, "{c:?}");
            }
        }
    }

    #[test]
    fn grid_covers_every_block_row_with_rep() {
        let p = Params {
            b1: 32,
            b2: 8,
            rep: 3,
            ell_width: 0,
            block_size: 128,
        };
        for n in [1usize, 127, 128, 384, 385, 100_000] {
            let threads = p.grid_size(n) * 128;
            assert!(threads * 3 >= n && (threads - 128) * 3 < n, "{n}");
        }
    }
}
