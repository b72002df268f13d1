//! TileSpMV's tunables (§III.D): the variation thresholds `te` and `th` of the format
//! selection (Figure 5), `tbalance` (the most tiles one warp runs), and whether the COO data is
//! deferred to a separate CSR matrix (TileSpMV_DeferredCOO). The fixed rule is the paper's:
//! te = 0.2, th = 1.0, tbalance = 8, deferred when nnz > 1.8M (§IV.B). The candidate sets for
//! QUICK/EXHAUSTIVE tuning are here too.
//!
//! Kernel defines (`kernels/tile.cu`): none. Everything above shapes the format built on the
//! host or is a launch argument, so one module serves every candidate.
#![forbid(unsafe_code)]

pub use super::kernel::KERNELS;
use std::fmt;

/// The paper's `te` (§III.D: "we experimentally set te and th to 0.2 and 1.0").
pub const PAPER_TE: f64 = 0.2;
/// The paper's `th`.
pub const PAPER_TH: f64 = 1.0;
/// The paper's `tbalance` (§III.D: "always set to 8 in our code").
pub const PAPER_TBALANCE: u32 = 8;
/// The paper's size from which TileSpMV_DeferredCOO wins (§IV.B: "larger than a certain size
/// (1.8M in our work)"); we read the size as the number of non-zeros.
pub const DEFERRED_MIN_NNZ: usize = 1_800_000;
/// The fixed rule's `tbalance` on a small grid (our addition to §III.D; see [`small_grid`]).
pub const SMALL_GRID_TBALANCE: u32 = 4;
/// Warps of tile_spmv one SM holds (128-thread blocks, 32 registers a thread: 16 blocks).
pub const WARPS_PER_SM: usize = 64;

/// True when the work items at the paper's tbalance fill at most half of the GPU's warp slots
/// and some tile row is already split (so the prescale launch runs anyway). Then every warp
/// runs at once and the product waits on the longest chain of tiles, so the fixed rule halves
/// tbalance (H100, f64, QUICK's timings in one process: bcsstk16 598 items, 0.0139 -> 0.0098
/// ms; sparse-images 457 items, 0.0136 -> 0.0094; dense 2000² 2000 items, 0.0112 -> 0.0097;
/// not stencil27, whose 122574 items fill the GPU many times: 0.174 -> 0.181). Without a split
/// tile row, halving would add the prescale launch (watt_2: 0 -> 55 split tile rows, 6.1 ->
/// 10.2 µs in two runs). notes/tile.md has the runs.
pub fn small_grid(items: usize, split_tile_rows: usize, sm_count: u32) -> bool {
    split_tile_rows > 0 && 2 * items <= sm_count as usize * WARPS_PER_SM
}

/// Why the fixed rule took [`SMALL_GRID_TBALANCE`]: `items` work items at `tbalance` on `sm` SMs.
pub fn small_grid_reason(items: usize, tbalance: u32, sm_count: u32) -> String {
    format!(
        "tbalance {SMALL_GRID_TBALANCE}: {items} warps at {tbalance} fill under half of {sm_count} SMs x {WARPS_PER_SM}"
    )
}

/// `tbalance` meaning "never split a tile row" (the deterministic variant).
pub const TBALANCE_UNLIMITED: u32 = u32::MAX;

/// One TileSpMV configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TileParams {
    /// Variation (std-dev / mean of a tile's row lengths) at or below which a tile is ELL.
    pub te: f64,
    /// Variation above which a tile is HYB (between te and th: CSR).
    pub th: f64,
    /// The most tiles one warp runs; a longer tile row is split across warps (atomics).
    /// [`TBALANCE_UNLIMITED`]: one warp per tile row, no atomics.
    pub tbalance: u32,
    /// TileSpMV_DeferredCOO: COO tiles and HYB's COO parts computed as a separate CSR matrix
    /// by HOLA.
    pub deferred: bool,
}

impl TileParams {
    /// The paper's parameters with deferral as given.
    pub fn paper(deferred: bool) -> Self {
        TileParams {
            te: PAPER_TE,
            th: PAPER_TH,
            tbalance: PAPER_TBALANCE,
            deferred,
        }
    }

    /// True for parameters the format builder accepts.
    pub fn is_valid(&self) -> bool {
        self.te.is_finite()
            && self.th.is_finite()
            && self.te >= 0.0
            && self.th >= self.te
            && self.tbalance >= 1
    }
}

impl fmt::Display for TileParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "te={} th={} tbalance=", self.te, self.th)?;
        if self.tbalance == TBALANCE_UNLIMITED {
            write!(f, "inf")?;
        } else {
            write!(f, "{}", self.tbalance)?;
        }
        write!(f, " deferred={}", if self.deferred { "on" } else { "off" })
    }
}

/// The fixed rule: the paper's thresholds, deferred when nnz > 1.8M. A deterministic request
/// gets the variant without atomics: whole tile rows per warp and nothing deferred (HOLA's
/// product is not bitwise reproducible). Returns the parameters and the reason, as text.
pub fn fixed_rule(nnz: usize, deterministic: bool) -> (TileParams, String) {
    if deterministic {
        let p = TileParams {
            tbalance: TBALANCE_UNLIMITED,
            ..TileParams::paper(false)
        };
        return (
            p,
            "fixed rule III.D, deterministic variant: no split tile rows, no deferral".into(),
        );
    }
    let deferred = nnz > DEFERRED_MIN_NNZ;
    (
        TileParams::paper(deferred),
        format!(
            "fixed rule III.D, nnz {} 1.8M",
            if deferred { ">" } else { "<=" }
        ),
    )
}

/// `tbalance` values QUICK times besides the paper's 8 (our addition to §III.D, which fixes 8):
/// a shorter item halves a warp's chain of tiles, which is what a small matrix (a few hundred
/// warps on the whole GPU) waits on; a longer one needs fewer split tile rows and atomics.
pub const QUICK_TBALANCE: [u32; 2] = [4, 16];
/// `tbalance` values EXHAUSTIVE adds (with both deferral settings, at the paper's te/th).
pub const EXHAUSTIVE_TBALANCE: [u32; 4] = [2, 4, 16, 32];

/// The candidates QUICK/EXHAUSTIVE time, the fixed rule first. QUICK: the fixed rule, the same
/// with deferral toggled, and tbalance 4 and 16. EXHAUSTIVE: te in {0.1, 0.2, 0.4} x th in
/// {0.5, 1, 2} x deferral off/on, then tbalance 2, 4, 16, 32 x deferral off/on at the fixed te/th.
/// A deterministic request is not tuned (its variant has one shape).
pub fn candidates(fixed: TileParams, exhaustive: bool) -> Vec<TileParams> {
    let mut out = vec![fixed];
    let mut push = |p: TileParams| {
        if p.is_valid() && !out.contains(&p) {
            out.push(p);
        }
    };
    push(TileParams {
        deferred: !fixed.deferred,
        ..fixed
    });
    if !exhaustive {
        for tbalance in QUICK_TBALANCE {
            push(TileParams { tbalance, ..fixed });
        }
    }
    if exhaustive {
        for te in [0.1, 0.2, 0.4] {
            for th in [0.5, 1.0, 2.0] {
                for deferred in [fixed.deferred, !fixed.deferred] {
                    push(TileParams {
                        te,
                        th,
                        deferred,
                        ..fixed
                    });
                }
            }
        }
        for tbalance in EXHAUSTIVE_TBALANCE {
            for deferred in [fixed.deferred, !fixed.deferred] {
                push(TileParams {
                    tbalance,
                    deferred,
                    ..fixed
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_rule_defers_above_1_8m_nonzeros_and_never_when_deterministic() {
        assert!(!fixed_rule(1_800_000, false).0.deferred);
        assert!(fixed_rule(1_800_001, false).0.deferred);
        let (d, _) = fixed_rule(5_000_000, true);
        assert!(!d.deferred);
        assert_eq!(d.tbalance, TBALANCE_UNLIMITED);
        assert_eq!(
            TileParams::paper(false).to_string(),
            "te=0.2 th=1 tbalance=8 deferred=off"
        );
    }

    #[test]
    fn small_grids_are_those_the_items_fill_at_most_half_of() {
        assert!(small_grid(4224, 1, 132));
        assert!(!small_grid(4225, 1, 132));
        assert!(!small_grid(100, 0, 132));
    }

    #[test]
    fn candidates_start_with_the_fixed_rule_and_are_distinct() {
        let f = TileParams::paper(false);
        let q = candidates(f, false);
        let tb = |tbalance| TileParams { tbalance, ..f };
        assert_eq!(q, vec![f, TileParams::paper(true), tb(4), tb(16)]);
        let e = candidates(f, true);
        assert_eq!(e[0], f);
        assert_eq!(e.len(), 18 + 8);
        assert!(e.contains(&TileParams {
            tbalance: 2,
            ..TileParams::paper(true)
        }));
        for (i, a) in e.iter().enumerate() {
            assert!(e[i + 1..].iter().all(|b| b != a));
        }
    }
}
