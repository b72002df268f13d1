//! AUTO, all of it: which method runs a matrix. With TESSERA_TUNING_NONE (and ONLINE, whose
//! tuning happens inside the chosen method) a rule on the row statistics and the device's SM
//! count decides between CSR_VECTOR, HOLA, BRC, BCCOO and TILE ([`heuristic`]: hand-made from
//! the method studies, refined by a model fitted on a generated training set, notes/auto.md);
//! with QUICK/EXHAUSTIVE on a GPU every implemented method is timed on the real matrix
//! ([`by_timing`]).
#![forbid(unsafe_code)]

use crate::backend::cuda::csr::GpuCsr;
use crate::backend::cuda::{Device, Stream};
use crate::csr::RowStats;
use crate::error::{Error, Result};
use crate::methods::gpu::{pick_fastest, Tuner};
use crate::methods::{self, GpuMethod, Request};
use crate::scalar::Scalar;
use crate::types::{Algorithm, Tuning};
use std::sync::Arc;

pub use crate::methods::{implemented, IMPLEMENTED};

/// AUTO's heuristic. CSR_VECTOR (one launch, no atomics, deterministic) for matrices whose rows
/// are alike; HOLA (strict non-zero split, two launches) where CSR_VECTOR's row-per-group work
/// split breaks down. Measured on an H100/H200 (notes/hola.md, notes/csr_vector.md):
/// - a row longer than 8× the mean (arrow, circuit, power-law, as-caida, cit-HepPh, watt_2,
///   Groebner): one thread group per row leaves the long rows to a handful of threads
///   (CSR_VECTOR 3.7 ms on arrow, HOLA 0.007 ms);
/// - a mean above 128 entries (dense, LP): 32 threads per row cannot fill the GPU (up to a mean
///   of 1,024 CSR_VECTOR's pieces mode takes them instead: [`over_csr`]);
/// - at least 4M non-zeros with 10 or more per row (stencil27, elasticity, uniform random):
///   HOLA's 1024-entry blocks stream better than CSR_VECTOR's row groups (H100, f64: 0.125 vs
///   0.137 ms, 0.112 vs 0.121, 0.151 vs 0.189). Below that size CSR_VECTOR's single launch
///   wins, and with shorter rows (lap3d7: 0.160 vs 0.164 ms) its groups are as good.
///
/// And BRC (its ELL+BRC hybrid) for large matrices of short rows that are all about as long
/// (stencils, uniform random): the ELL part is read column-major without row pointers, and the
/// rows longer than its width are few (H100, f64, against the better cuSPARSE: lap3d7 160³
/// 1.41x vs HOLA 1.19x, grid2d 725² 2.28x vs 1.21x, stencil27 100³ 1.15x vs 1.05x, uniform
/// 1.07x vs 1.01x; not elasticity's 81-entry rows: 1.09x vs 1.11x). Its analysis is slower
/// (0.46 s against HOLA's 0.04 s on lap3d7 160³: it sorts the rows by length).
///
/// And TILE for large matrices (>= 1M non-zeros) at least half dense, and in f64 at least 61%
/// dense ([`tile_min_density`]): its Dns tiles carry no indices at all and read each 16-value x
/// segment once per 256 entries (H100, f64, dense 2000²: 2.48x against the better cuSPARSE,
/// BCCOO 1.47x, HOLA 1.01x; notes/tile.md).
///
/// And CSR_VECTOR for long rows over many columns (linear programs), which it runs in its
/// sliced mode (x staged in shared memory one vertical slice at a time,
/// `methods::csr_vector::sliced`): every other method there waits on the L2's rate of random x
/// reads (H100, LP generator, f64 / f32: HOLA 108.4 / 101.9 µs, cuSPARSE 105.3 / 98.0, sliced
/// 86.8 / 56.2, session 18's run C). `val_bytes` (4 or 8) sets the slice's width in columns, as
/// it does for CSR_VECTOR itself: f32 slices hold twice the columns, so more matrices suit.
///
/// And, fitted on AUTO's training set (`scripts/auto-training`, `scripts/auto-fit.py`,
/// notes/auto.md: a regret-minimising tree over the row statistics, the value type and the
/// non-zeros per SM, with the rules above as one of its choices), a format for matrices with
/// many empty rows (graphs with isolated vertices: the R-MAT power-law and empty-row
/// generators, 10^3 to 10^7 non-zeros): BRC above [`GRAPH_BRC_NNZ_PER_SM`] non-zeros per SM.
/// Below it the fit of session 11 gave BCCOO; since HOLA's one-wave ownership (session 14),
/// its shared row-start table and the overlapped second kernel (session 19) HOLA is the faster
/// there: on the 16 training pairs BCCOO had, HOLA was faster on 14 (4-22%), BCCOO on 2 (4-9%:
/// power-law 2^14, second seed), H100, session 19's run D (notes/auto.md). They now take the
/// rule of the methods over the CSR arrays ([`over_csr`]), which gives them HOLA.
/// The same BRC, above the same size, for rows whose lengths have a graph's heavy tail
/// ([`heavy_tailed`]) whatever their empty rows: the fit's split on empty rows stood for that
/// tail on its training set, which had no graph with 1-37% empty rows.
///
/// `deterministic` keeps CSR_VECTOR (HOLA, BRC and BCCOO combine shared rows with float
/// atomics). `sm` is the device's SM count (the host backend's fixed rules use 14).
pub fn heuristic(stats: &RowStats, val_bytes: usize, deterministic: bool, sm: u32) -> Algorithm {
    if deterministic || stats.nnz == 0 {
        return Algorithm::CsrVector;
    }
    if dense_for_tile(stats, tile_min_density(val_bytes)) {
        return Algorithm::Tile;
    }
    let mean = stats.mean.max(1.0);
    let even_short_rows = stats.nnz >= 1_000_000
        && stats.mean <= 32.0
        && stats.max as f64 <= 1.5 * mean
        && stats.std_dev <= 0.25 * mean;
    if even_short_rows {
        return Algorithm::Brc;
    }
    if crate::methods::csr_vector::sliced::suits(stats, val_bytes) {
        return Algorithm::CsrVector;
    }
    if (stats.empty_rows as f64 > GRAPH_EMPTY_ROWS * stats.rows as f64 || heavy_tailed(stats))
        && stats.nnz as f64 > GRAPH_BRC_NNZ_PER_SM * sm.max(1) as f64
    {
        return Algorithm::Brc;
    }
    over_csr(stats, sm)
}

/// The density (non-zeros over rows x columns) from which [`heuristic`] gives a large matrix
/// TILE. From half dense most of its tiles hold at least 128 entries and are Dns, storing all
/// 256 values: at density `d` about `v / d` bytes a non-zero (`v` the value's bytes) where a
/// method over the CSR arrays reads `v + 4` (the value and its column). TILE reads fewer from
/// `d = v / (v + 4)`, 67% in f64 and 50% in f32; it runs up to about 10% ahead of that count
/// where part of its tiles are not Dns, so the floor takes the count with that allowance
/// ([`TILE_BYTES_ALLOWANCE`]): 61% in f64, and the half-dense floor (50%) in f32.
///
/// Measured on an H200 (session 31, runs A and B: named TILE against HOLA per product, random
/// square matrices; notes/tile.md), f64: 53% 25.4 against 21.4 us, 60% 22.8 against 23.1, 65%
/// 35.6 against 37.5 (4000²), 97% 22.1 against 32.3; f32: 53% 11.9 against 16.6, 60% 9.5
/// against 18.0. Below half dense the tiles are ELL and CSR with 4-bit columns, and TILE won
/// there too (30%: f64 14.0 against 20.1, f32 13.4 against 16.3; 40%: 15.6 against 18.5, f32
/// even), but a matrix's density says little about its tiles' fill below that (a banded
/// matrix of 1% has full tiles, a random one of 30% tiles of 77 entries): taking them needs
/// a tile census, not the row statistics, and is not done.
pub fn tile_min_density(val_bytes: usize) -> f64 {
    let v = val_bytes.max(1) as f64;
    (v / (TILE_BYTES_ALLOWANCE * (v + 4.0))).max(HALF_DENSE)
}

/// How many more bytes TILE may read than the CSR method and still be taken
/// ([`tile_min_density`]).
const TILE_BYTES_ALLOWANCE: f64 = 1.1;

/// The least density at which TILE is taken or tried: Figure 5's Dns tiles need half a tile.
const HALF_DENSE: f64 = 0.5;

/// At least 1M non-zeros and at least `density` of the rows x columns cells.
fn dense_for_tile(stats: &RowStats, density: f64) -> bool {
    stats.nnz >= 1_000_000 && stats.nnz as f64 >= density * stats.rows as f64 * stats.cols as f64
}

/// True when AUTO's rule is sure enough of `target` to keep it without a trial: TILE on a
/// matrix at least [`SURE_TILE_DENSITY`] dense (its Dns tiles then hold nearly only entries and
/// read their values without column indices: fewer bytes than any method over the CSR arrays
/// reads, at most 4 + 8 / 0.9 against 12 in f64). The trial's samples of short products time
/// the host's work as well as the GPU's and are not reliable enough to overturn that (session
/// 38, run G: TILE timed at 14.1 µs against its steady 6.9 on the dense 2000² in f32).
/// Both sides at least [`SURE_TILE_SIDE`]: a thin matrix (a million rows of two columns is as
/// dense) pads its edge tiles, and is tried as before.
pub fn sure_of(target: Algorithm, stats: &RowStats) -> bool {
    target == Algorithm::Tile
        && stats.rows.min(stats.cols) >= SURE_TILE_SIDE
        && dense_for_tile(stats, SURE_TILE_DENSITY)
}

/// The density from which [`sure_of`] keeps TILE without a trial.
const SURE_TILE_DENSITY: f64 = 0.9;
/// The shorter side from which [`sure_of`] keeps TILE without a trial (32 tiles of 16).
const SURE_TILE_SIDE: usize = 512;

/// Row lengths spread like a graph's degrees (a heavy tail from rows of few or no entries):
/// a standard deviation above [`HEAVY_TAIL_CV`] times the mean, and a shortest row under half
/// the mean. The second part leaves out matrices whose rows are nearly all of one length with
/// a few very long ones (circuits: rows of 5 and four of 100,000, a coefficient of variation of
/// 37), which HOLA's non-zero split serves and BRC's row blocks do not.
///
/// Measured on an H200 (session 35, run B, `tessera bench --steady --methods hola,brc`, µs per
/// product, f64 / f32; bench-results/h200-2026-11-27-s35/run-b-spans-powerlaw/): R-MAT
/// power-law graphs with 11-35% empty rows, inside the training set's gap of
/// [`GRAPH_EMPTY_ROWS`] (none from 1% to 37%), where the rule gave HOLA (and still gives
/// CSR_VECTOR's sliced mode to 2^15 x 32 in f32, which comes first): 2^15 x 32 (24% empty,
/// variation 4.1) BRC 12.2 / 10.1 against HOLA 12.7 / 10.9; 2^16 x 64 (18%) 23.6 / 13.5
/// against 33.4 / 29.6; 2^16 x 128 (11%) 33.3 / 23.9 against 58.9 / 52.4; 2^17 x 64 (20%) 43.2
/// / 32.5 against 62.3 / 60.5; 2^18 x 64 (23%) 99.2 / 77.7 against 121.5 / 118.6; 2^18 x 32
/// (32%) 55.0 / 43.8 against 64.0 / 59.5; 2^19 x 32 (35%) 111.8 / 93.6 against 124.9 / 117.1.
/// HOLA was slower than cuSPARSE on eleven of those fourteen (0.86-0.98), BRC faster on all
/// (1.04-2.02). Left out by the shortest row: circuit 10^6 (BRC 55.5 / 50.0 against HOLA 43.1
/// / 39.1). The empty-row generator (50% empty, variation 2.5) already takes BRC by its empty
/// rows, and AUTO's trial sends it back to HOLA (BRC 137.9 / 126.1 against 129.8 / 122.5): the
/// trial times every format AUTO swaps in against the method it replaces.
fn heavy_tailed(stats: &RowStats) -> bool {
    let mean = stats.mean;
    mean > 0.0 && stats.std_dev > HEAVY_TAIL_CV * mean && (stats.min as f64) < 0.5 * mean
}

/// The coefficient of variation of the row lengths from which [`heavy_tailed`] counts them as a
/// graph's degrees: the R-MAT graphs above have 3.8 to 9.1, the even and banded rows of the
/// suite well under 1.
const HEAVY_TAIL_CV: f64 = 2.0;

/// The fraction of empty rows above which [`heuristic`] gives a matrix a format of its own
/// (the fitted split: the training matrices have either at most 1% or 37-50% empty rows).
const GRAPH_EMPTY_ROWS: f64 = 0.3656;

/// Non-zeros per SM above which such a matrix gets BRC (the fitted split, 10^3.492: on 132 SMs
/// about 410,000 non-zeros, between the training matrices of 262,144 non-zeros, where BRC was
/// not the fastest, and 1,048,576, BRC fastest).
const GRAPH_BRC_NNZ_PER_SM: f64 = 3104.0;

/// The heuristic's choice among the methods that run on the CSR arrays themselves (no format
/// to build): HOLA or CSR_VECTOR, by the rules of [`heuristic`], and one more for grids of one
/// wave: there a product lasts as long as its slowest thread group, and CSR_VECTOR's group
/// reads its longest row in `ceil(max / (2 coop))` trips one after another (each lane loads two
/// entries per trip, `kernels/csr_vector.cu`), where HOLA's blocks read their 1024 entries in
/// one round (one wave: at most two HOLA blocks per SM, where it runs in one launch,
/// `hola::params::own_mode`). From `DEEP_TRIPS` (8) trips HOLA is faster. H100, HOLA over
/// CSR_VECTOR per product with CSR_VECTOR's two entries per lane (session 17's training run E
/// and session 18's suite run F; notes/auto.md, session 19): 6 trips 1.01-1.06 (elasticity 3³
/// and 6³, zenios), 9 trips 0.88 (sparse-images), 4 trips and fewer 0.97-1.19. Before that
/// kernel (session 15) the same rule counted rounds of one entry, from 10.
///
/// Rows of 129-1,024 entries on average (`methods::csr_vector::pieces::suits`) go to
/// CSR_VECTOR first, which runs them in its pieces mode (a warp per piece of a row): 1.1-1.7x
/// faster than HOLA on random rows of 150-500 entries on an H200 (session 29, run A;
/// notes/csr_vector.md). Longer rows of about one length, on enough rows to fill the device
/// (`methods::csr_vector::wide::suits`), go to its wide mode (a block per row, 128-bit loads):
/// 1.2-1.8x faster than HOLA on dense rows of 1,000-4,000 (session 38).
pub fn over_csr(stats: &RowStats, sm: u32) -> Algorithm {
    over_csr_with(stats, sm, true)
}

/// [`over_csr`], with CSR_VECTOR's wide mode (`wide`) or without it: HOLA then takes its rows,
/// as before the mode. Without it for the method a TILE trial times TILE against
/// ([`background_plan`]): in session 38's run G the trial's samples of TILE's short products
/// ran 1.5-2x its steady time (the trial's own host work, when the caller's loop is bound by
/// its launches) and kept the wide mode over TILE on the dense 2000² in f32 (9.3 µs against
/// TILE's 6.9) and a band at 51% in f64 (17.5 against 15.5); against HOLA (14.4 and 21.6) the
/// same samples keep TILE.
fn over_csr_with(stats: &RowStats, sm: u32, wide: bool) -> Algorithm {
    if crate::methods::csr_vector::pieces::suits(stats)
        || (wide && crate::methods::csr_vector::wide::suits(stats, sm))
    {
        return Algorithm::CsrVector;
    }
    let coop = crate::methods::csr_vector::params::coop_for_mean(stats.mean) as usize;
    let hola_blocks = crate::methods::hola::params::fixed_rule(stats).blocks(stats.nnz);
    let one_wave = hola_blocks <= 2 * sm.max(1) as usize;
    let deep = one_wave && stats.max.div_ceil(2 * coop) >= DEEP_TRIPS;
    if needs_split(stats) || deep {
        Algorithm::Hola
    } else {
        Algorithm::CsrVector
    }
}

/// Rows that CSR_VECTOR's row groups serve badly in a grid of any size (the first three rules
/// of [`over_csr`]): a row longer than 8x the mean, a mean above 128, or at least 4M non-zeros
/// with 10 or more per row. The cuSPARSE drop-in leaves such matrices to cuSPARSE.
pub fn needs_split(stats: &RowStats) -> bool {
    let long_rows = crate::methods::csr_vector::sliced::has_long_rows(stats);
    let wide = stats.mean > 128.0;
    let large = stats.nnz >= 4_000_000 && stats.mean >= 10.0;
    long_rows || wide || large
}

/// CSR_VECTOR's trips on its longest row from which [`over_csr`] takes HOLA in a grid of one
/// wave (between the measured 6, CSR_VECTOR faster, and 9, HOLA faster).
const DEEP_TRIPS: usize = 8;

/// AUTO with TUNING_NONE when the heuristic picks a method with a format of its own (BRC,
/// TILE, BCCOO): `Some((now, later))`, the method over the CSR arrays to run from the first product
/// ([`over_csr`]) and the one to build in the background and swap in when ready. `None` when
/// the heuristic's choice runs on the CSR itself (it is built at analyze, as every named
/// method is), and when `TESSERA_BACKGROUND_BUILD=0` asks for the final format at analyze.
///
/// `trial`: the caller will time the format against the method it replaces once it swaps in
/// and keep the faster (the CUDA backend with a spare core, `matrix/trial.rs`). Then a format
/// the rule is not sure of is tried too ([`trial_candidate`]).
pub fn background_plan(
    stats: &RowStats,
    val_bytes: usize,
    requested: Algorithm,
    tuning: Tuning,
    deterministic: bool,
    sm: u32,
    trial: bool,
) -> Option<(Algorithm, Algorithm)> {
    if requested != Algorithm::Auto || tuning != Tuning::None || !background_enabled() {
        return None;
    }
    let later = heuristic(stats, val_bytes, deterministic, sm);
    if has_own_format(later) {
        // TILE on a matrix it is sure of runs without a trial ([`sure_of`]): the wide mode may
        // run before it. Any other TILE is timed against the method it replaces, which must
        // then not be the wide mode ([`over_csr_with`]).
        let wide = later != Algorithm::Tile || sure_of(later, stats);
        return Some((over_csr_with(stats, sm, wide), later));
    }
    let tried = (trial && trial_enabled() && !deterministic)
        .then(|| trial_candidate(stats, val_bytes))
        .flatten();
    tried.map(|t| {
        let now = if t == Algorithm::Tile && later == Algorithm::CsrVector {
            over_csr_with(stats, sm, false)
        } else {
            later
        };
        (now, t)
    })
}

/// True for the methods with a format of their own (BRC, TILE, BCCOO), which AUTO builds in
/// the background and times against the method they replace (`matrix/trial.rs`).
pub fn has_own_format(a: Algorithm) -> bool {
    matches!(a, Algorithm::Brc | Algorithm::Tile | Algorithm::Bccoo)
}

/// A heavy format worth trying on the caller's products where [`heuristic`] keeps a method over
/// the CSR arrays: BRC for large matrices whose rows are all about as long but longer than
/// [`heuristic`]'s 32 (finite-element matrices with several unknowns per node: 81 entries per
/// row for 3D elasticity). Measured on the H100 (f64 / f32, per product, BRC against the better
/// of HOLA and CSR_VECTOR, session 17's run A): elasticity 32³ 0.97 / 0.95, 40³ 0.93 / 0.85,
/// 48³ 1.01 / 0.99, 56³ 1.00 / 0.93, but 24³ 1.64 / 1.47 and uniform rows of 64 1.06 / 1.08:
/// no rule on the row statistics separates them, a trial does.
///
/// And TILE for large matrices at least half dense but below [`tile_min_density`] (f64 from
/// 50% to 61%): counted by density its Dns tiles there carry 40-50% zeros, but a matrix whose
/// entries sit together (a band, a triangle) fills its tiles whatever its density, and the row
/// statistics do not tell which: the trial does. Measured on an H200 (session 31, run F, f64,
/// per product): a band at 51% TILE 15.5 us against HOLA's 21.3 (cuSPARSE 23.9), at 58% 8.7
/// against 13.9 (cuSPARSE 13.5: HOLA alone loses there); random 3000² at 53% 25.4 against
/// 21.4, where the trial's margin for products of 26 us (15%) keeps TILE (timed 26.0 against
/// 23.1 in the trial). TILE comes before BRC: such rows are long and even in the random case,
/// where BRC is no faster than HOLA (21.7 against 21.4 us).
pub fn trial_candidate(stats: &RowStats, val_bytes: usize) -> Option<Algorithm> {
    if dense_for_tile(stats, HALF_DENSE) && !dense_for_tile(stats, tile_min_density(val_bytes)) {
        return Some(Algorithm::Tile);
    }
    let mean = stats.mean.max(1.0);
    let even_rows = stats.nnz >= 1_000_000
        && stats.mean > 32.0
        && stats.max as f64 <= 1.5 * mean
        && stats.std_dev <= 0.25 * mean;
    even_rows.then_some(Algorithm::Brc)
}

/// A second heavy format to try after `first`, the one [`background_plan`] tries on a matrix the
/// rule keeps over the CSR arrays ([`trial_candidate`]): BCCOO, whose `bh x 1` blocks carry one
/// column index per block of rows (3D elasticity: three unknowns per node). Built after the
/// first (on the device for a matrix kept there: 200 products; from a host copy thousands of
/// products later, [`background_start_after`]) and swapped in once the first trial is over,
/// then timed against the form that trial kept.
/// Measured on the H100 (session 18's run D, per product, µs, f64 / f32): elasticity 24³ BCCOO
/// 12.5 / 9.7 against BRC 24.0 / 9.9 and HOLA 20.3 / 15.1; 32³ 45.9 / 17.5 against the best
/// other 37.9 / 28.2; 40³ 78.5 / 58.7 against 65.1 / 45.4; 48³ 100.0 / 66.8 against 112.0 /
/// 79.6; 56³ 169.2 / 118.8 against 172.1 / 117.0. Neither the size nor the row statistics
/// separate these.
pub fn then_try(stats: &RowStats, val_bytes: usize, first: Algorithm) -> Option<Algorithm> {
    (first == Algorithm::Brc && trial_candidate(stats, val_bytes) == Some(first))
        .then_some(Algorithm::Bccoo)
}

/// [`then_try`] where a trial will follow, as [`background_plan`] decides it: `trial` (the
/// caller times what swaps in), trials not switched off, not `deterministic`.
pub fn second_trial(
    stats: &RowStats,
    val_bytes: usize,
    first: Algorithm,
    deterministic: bool,
    trial: bool,
) -> Option<Algorithm> {
    (trial && trial_enabled() && !deterministic)
        .then(|| then_try(stats, val_bytes, first))
        .flatten()
}

/// False when `TESSERA_TRIAL` is `0` (or `off`, `false`, `no`): a heavy format that AUTO swaps
/// in stays without being timed against the method it replaced, and [`trial_candidate`]'s
/// formats are not built. Read once per process.
pub fn trial_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| !crate::backend::switched_off("TESSERA_TRIAL"))
}

/// True when this process may use more than one core (`available_parallelism`, which follows
/// its CPU affinity and cgroup quota): a background build then runs beside the caller's thread
/// instead of taking its time. MPI launchers commonly bind each rank to one core. Measured on
/// the H100 machine with two ranks bound to one core each (PETSc, 3D Laplacian 128³): the
/// background build of BRC made the first solve 0.83 s against 0.67 s without it.
///
/// Read once per process (`available_parallelism` reads the cgroup's files, tens of
/// microseconds that a first product would otherwise pay): an affinity changed later is not
/// seen.
pub fn spare_core() -> bool {
    static SPARE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SPARE.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2))
}

/// False when `TESSERA_BACKGROUND_BUILD` is `0` (or `off`, `false`, `no`).
pub fn background_enabled() -> bool {
    !crate::backend::switched_off("TESSERA_BACKGROUND_BUILD")
}

/// How many times a device product moves a byte while the background build moves one over
/// the host link, in effect. Measured on the H100 machine (PETSc, one rank, 3D Laplacian 128³,
/// CG: 319 products of 80 us): building BRC in the background (downloading the 183 MB CSR,
/// uploading the ~190 MB format) made the first solve 28 ms slower (19-43 ms over three rounds)
/// than running CSR_VECTOR alone, as if the copies had stopped the products for 373 MB at
/// ~14 GB/s, while a product reads its 183 MB at ~2.3 TB/s: a ratio of about 170. The copies
/// share the copy engines with the caller's own small transfers (a Krylov solver reads a dot
/// product back every iteration), which wait behind them. 200 leans towards building later.
const DEVICE_PER_LINK: f64 = 200.0;

/// The fraction of a product's time a heavy format saves over the method on the CSR arrays,
/// from the measurements [`heuristic`] cites: BRC 6-18% on stencils and uniform random rows
/// (1.88x on a 2D grid), 8% on the 3D Laplacian 128³ in PETSc; TILE 2.4x on a dense matrix
/// (taken as half of a product here: one matrix measured).
fn expected_gain(target: Algorithm) -> f64 {
    match target {
        Algorithm::Tile => 0.5,
        _ => 0.1,
    }
}

/// What a background build starts from, for [`background_start_after`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildFrom {
    /// tessera's host copy of the CSR: the format is built on the host and uploaded.
    HostCopy,
    /// A matrix kept on the device without a host copy: the CSR is downloaded, the format
    /// built on the host and uploaded.
    Download,
    /// The device CSR, on the device (BRC's ELL form of even rows, TILE): no copies.
    Device,
}

/// How many products' time a build of `target` on the device from the device CSR takes from the
/// products running beside it (its allocations and launches, which wait on the driver beside
/// the caller's, and its kernels sharing the GPU). Measured with `tessera bench`, read in place:
/// - BRC's ELL form (one pass over the CSR; H100, session 12): the nine products after the
///   first of the 3D Laplacian 160³ took 2.0 ms instead of CSR_VECTOR's 9 x 0.16 ms, about 3.6
///   products more; the 27-point stencil 100³ lost about as much. BRC filled on the device
///   from a plan (sessions 33-34: a download of the row offsets, the plan on up to 8 host
///   threads, one pass over the CSR; 19 ms for 10^6 rows on the H200 machine; since session
///   36 the plan made on the device too, 1.4-1.7 ms) takes the same count: started after 40
///   products, AUTO's time to 100 and 1,000 products on power-law,
///   circuit and empty-row matrices of 10^6 rows was within run-to-run noise of the download
///   path's, which builds nothing before product 4,000 (session 34, run D). Started after 200
///   (session 37, run C, one round, read in place): N = 100 the same (power-law 2^20 x 16
///   1.03-1.05 either way, empty rows and uniform rows 1.00-1.04), N = 1,000 lower (power-law
///   f32 1.12 -> 1.05, f64 1.06 -> 1.04).
/// - TILE's format (census, two scans, a read-back, the fill; about 15 driver calls; session 23,
///   two H200 machines, dense 2000²): started after 8 products, it cost the first 100 products
///   10-37 of HOLA's products beside it (0.96-1.06 of cuSPARSE's time at N = 100 against
///   1.01-1.11 started after 100 products, and 0.74-0.84 against 1.02-1.04 on the slower
///   machine). 50, above both: a solve of 100 products runs without it. Session 24's cheaper
///   build (about 150-250 us alone) did not change that (H200, run B: dense f32 at N = 100
///   0.85-0.93 started after 8, 20 or 50 products, 1.02-1.04 after 100): beside the caller's
///   launches its census starts 0.14-0.9 ms after the worker does (runs E and F's traces).
/// - BCCOO's format (sampled facts and their read-back, the block count, the scan and its
///   read-back, the fill and the tiles; about as many driver calls as TILE's; alone 0.7 ms on
///   3D elasticity 32³ and 2.2-2.5 ms on 48³, 29-45 of its own products, H200, session 25):
///   20, between the two. Other starts were not compared beside a caller's products. Its
///   products are longer than TILE's on the matrices AUTO tries it on (3D elasticity: 12-170 us
///   against TILE's 8 us on dense 2000²), so the same fixed cost is fewer of them. Session 37
///   cut the build to 0.3 ms on 32³ and 0.85-1.15 ms on 48³ (9-18 of its products alone) and
///   kept 20: with one round each, starting after 100 products instead of 200 moved AUTO's
///   N = 100 / 1,000 on elasticity 48³ from 1.02 / 1.17 to 1.09 / 1.10 (f64) and 1.03 / 1.14 to
///   1.10 / 1.11 (f32), no clear gain (the bench's loop queues products far ahead of the swap).
fn device_build_products(target: Algorithm) -> f64 {
    match target {
        Algorithm::Tile => 50.0,
        Algorithm::Bccoo => 20.0,
        _ => 4.0,
    }
}

/// Products AUTO runs with the method on the CSR arrays before its worker starts building the
/// heavy format `target` (on the CUDA backend; the host backend starts at once: there the
/// build only takes a spare core). The rule is the ski-rental one: a build disturbs the
/// products running beside it, so it starts once the products run so far would have saved
/// that much had the format been there from the start. Then a matrix used for fewer products
/// never pays for a format it does not recoup, and one used for many pays at most twice the
/// least it could have.
///
/// The disturbance: a build from the host copies the format up (about the CSR's size), and
/// for a matrix kept on the device without a host copy the CSR down as well ([`DEVICE_PER_LINK`]
/// products per copy: 2,000 products for BRC from a host copy, 4,000 without one); a build on
/// the device ([`BuildFrom::Device`]) moves no copies and costs `device_build_products`
/// (40 products for BRC, 100 for TILE, 200 for BCCOO). The counts are independent of the
/// matrix's size (a product reads the CSR once). `TESSERA_BACKGROUND_AFTER=n` sets it (`0`: at
/// once).
pub fn background_start_after(target: Algorithm, from: BuildFrom) -> u64 {
    if let Some(n) = std::env::var("TESSERA_BACKGROUND_AFTER")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        return n;
    }
    let cost = match from {
        BuildFrom::HostCopy => DEVICE_PER_LINK,
        BuildFrom::Download => 2.0 * DEVICE_PER_LINK,
        BuildFrom::Device => device_build_products(target),
    };
    (cost / expected_gain(target)).ceil() as u64
}

/// Resolves the requested algorithm for a matrix with these statistics: AUTO by
/// [`heuristic`]; a named method if this build has it, else NOT_SUPPORTED.
pub fn choose(
    stats: &RowStats,
    val_bytes: usize,
    requested: Algorithm,
    deterministic: bool,
    sm: u32,
) -> Result<Algorithm> {
    match requested {
        Algorithm::Auto => Ok(heuristic(stats, val_bytes, deterministic, sm)),
        a if implemented(a) => Ok(a),
        a => Err(Error::NotSupported(format!(
            "{} is not implemented in tessera {} yet; the implemented methods are {}",
            a.c_name(),
            env!("CARGO_PKG_VERSION"),
            IMPLEMENTED
                .iter()
                .map(|a| a.c_name())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The methods AUTO times with QUICK/EXHAUSTIVE: every implemented one, the heuristic's choice
/// first (it wins ties). Methods whose product is not bitwise reproducible are dropped later,
/// after preparing, when the handle asks for determinism.
pub fn timed_candidates(
    stats: &RowStats,
    val_bytes: usize,
    deterministic: bool,
    sm: u32,
) -> Vec<Algorithm> {
    let first = heuristic(stats, val_bytes, deterministic, sm);
    std::iter::once(first)
        .chain(IMPLEMENTED.iter().copied().filter(|&a| a != first))
        .collect()
}

/// AUTO with QUICK/EXHAUSTIVE on a GPU: prepares the methods of [`timed_candidates`] one at a
/// time and times each on the matrix with scratch vectors, keeping only the fastest so far on
/// the device. The heuristic's choice is the incumbent, replaced only by a method at least
/// `MIN_GAIN` faster (the one rule of every tuner, `methods::gpu::tune`). QUICK times each
/// method's fixed rule; EXHAUSTIVE lets each method run its own QUICK search first (a method's
/// EXHAUSTIVE search can take seconds). Methods that are not bitwise reproducible are skipped
/// when the handle asks for determinism. Returns the method, its GPU form and a sentence for
/// `info.params`.
pub fn by_timing<T: Scalar>(
    dev: &Arc<Device>,
    stream: Stream,
    csr: &GpuCsr<T>,
    req: &Request<'_, T>,
) -> Result<(Algorithm, Box<dyn GpuMethod<T>>, String)> {
    let each = Request {
        tuning: match req.tuning {
            Tuning::Exhaustive => Tuning::Quick,
            _ => Tuning::None,
        },
        ..*req
    };
    let mut tuner = Tuner::new::<T>(dev, stream, req.stats.rows, req.stats.cols, "auto")?;
    let picked = pick_fastest(
        &mut tuner,
        None,
        timed_candidates(
            req.stats,
            std::mem::size_of::<T>(),
            req.deterministic,
            dev.sm_count(),
        ),
        |&alg| {
            let m = methods::prepare_gpu(alg, dev, stream, csr, &each)?;
            Ok((!req.deterministic || m.deterministic()).then_some(m))
        },
        |m, _, x, y| m.spmv(csr, stream, T::ONE, x, T::ZERO, y),
    )?
    .ok_or_else(|| Error::Internal("AUTO found no method to time (none deterministic?)".into()))?;
    let times: Vec<String> = picked
        .timings
        .iter()
        .map(|(alg, ms)| format!("{alg} {ms:.4} ms"))
        .collect();
    Ok((
        picked.cand,
        picked.ready,
        format!("AUTO timed {}: chose {}; ", times.join(", "), picked.cand),
    ))
}

#[cfg(test)]
mod tests;
