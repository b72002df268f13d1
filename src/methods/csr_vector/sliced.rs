//! CSR_VECTOR's sliced mode: the columns cut into vertical slices whose part of x fits in one
//! block's shared memory (kernels/csr_vector.cu, `csr_vector_sliced`), for long rows over
//! many columns.
//!
//! Why. A product of such a matrix (linear programs: a few thousand rows of thousands of
//! entries each, over a million columns) reads one random x value per entry. x fits in the L2,
//! but each read is a request for a 32-byte sector of it, and the L2 answers about 10^11 such
//! requests per second on an H100: the product runs at 40-45% of the DRAM bandwidth whatever
//! kernel reads the CSR (HOLA 108 µs, cuSPARSE 104 µs on the LP generator's 11M entries in
//! f64). Staged in shared memory, a slice of x is read from the L2 once per block, coalesced,
//! and the entries read it from shared memory (session 18's run C: 86.8 µs in f64 and 56.2 µs
//! in f32 against cuSPARSE's 105.3 and 98.0; notes/csr_vector.md).
//!
//! The cost: every row writes one partial sum per slice and a second kernel adds them, so a
//! row must have many entries in each slice to pay for it ([`MIN_PER_SLICE`]), and each block
//! copies a whole slice of x however few entries it has there.
//!
//! This is yaSpMV's vertical slicing (BCCOO+, `methods::bccoo`) with the slice staged where
//! today's GPUs have room for it: the paper's slices counted on the texture cache.
#![forbid(unsafe_code)]

use crate::csr::RowStats;
use std::fmt;

/// Bytes of x one block stages: two blocks fit in an H100's or H200's 228 KiB per SM.
pub(crate) const SLICE_BYTES: usize = 96 * 1024;
/// Threads per block (measured in session 18's run A: 512 about 1.7x faster than 256 on the
/// LP generator: a block waits for its slice before it starts, so it needs many rows in flight).
pub(crate) const BLOCK: u32 = 512;
/// Non-zeros below which the mode is not used: small products are bound by their launches,
/// and the mode takes two.
pub(crate) const MIN_NNZ: usize = 1_000_000;
/// Mean entries per row and slice from which the mode is used. Measured in session 18's run A
/// (H100, rows of 2,600 random columns; sliced against the better of a CSR-vector kernel and
/// cuSPARSE): 29 per slice 1.18x (f64, 1.09M columns), 58 1.55x (f32), 16 1.15x (f32, 4M
/// columns), 8 0.74x (f64, 4M columns); session 19's run G (rows of 1,200, the mode forced,
/// against the better of HOLA and cuSPARSE): 13.5 1.04x (f64, 1.09M columns: 50.8 against
/// 52.9 µs), 14.6 1.49x (f32, 2M columns), 7.4 0.77x (f64, 2M columns). Between 7.4-8 and 13.5
/// the f64 ratio crosses 1 near 12.7 (linear between the two); f32 gains more at the same
/// count. 16 until session 19.
pub(crate) const MIN_PER_SLICE: f64 = 13.0;

/// A sliced product's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slicing {
    /// Columns per slice (x values one block stages).
    pub width: usize,
    /// Slices: `ceil(cols / width)`.
    pub slices: usize,
    /// Row ranges per slice: the work items are `slices x chunks`.
    pub chunks: usize,
    /// Threads per row group (a power of two up to 32), from the entries per row and slice.
    pub coop: u32,
    /// Threads per block.
    pub block: u32,
}

impl Slicing {
    /// Work items (blocks of the sliced kernel).
    pub fn items(&self) -> usize {
        self.slices * self.chunks
    }

    /// Dynamic shared memory per block, for `val_bytes`-byte values.
    pub fn shared_bytes(&self, val_bytes: usize) -> usize {
        self.width * val_bytes
    }

    /// The work items as the kernel computes them from its block index: (slice, first row, end
    /// row) per item, the rows of each slice cut into `chunks` ranges of equal length.
    #[cfg(test)]
    fn item_table(&self, rows: usize) -> Vec<i32> {
        let mut t = Vec::with_capacity(3 * self.items());
        for s in 0..self.slices {
            for c in 0..self.chunks {
                t.push(s as i32);
                t.push((rows * c / self.chunks) as i32);
                t.push((rows * (c + 1) / self.chunks) as i32);
            }
        }
        t
    }
}

impl fmt::Display for Slicing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sliced: {} slices of {} columns staged in shared memory, {} items, coop={} block={}",
            self.slices,
            self.width,
            self.items(),
            self.coop,
            self.block
        )
    }
}

/// True when a matrix with these statistics suits the sliced mode with `val_bytes`-byte values
/// (4-byte values have twice as many columns per slice, so more matrices suit it in f32): AUTO's
/// rule (`select::heuristic`) gives such matrices to CSR_VECTOR. Session 19's training run E
/// (H100): the LP generator with rows of 1,200 over 1.09M columns is 45 slices of 27 entries per
/// row in f32, where AUTO judged by f64's 89 slices of 13.5 (then under the 16 of the time) and
/// ran HOLA at 54.5 µs against the sliced mode's 32.3.
pub fn suits(stats: &RowStats, val_bytes: usize) -> bool {
    shape(stats, val_bytes, SLICE_BYTES).is_some()
}

/// (width, slices) when the statistics pass the thresholds for `val_bytes`-byte values and
/// slices of `slice_bytes`:
/// - every row costs a bound and a partial sum in every slice, so the rows need at least
///   [`MIN_PER_SLICE`] entries per slice on average, over all slices;
/// - and their entries must spread over at least half the columns ([`MIN_SPREAD`]): rows whose
///   x reads fall in a narrower window, a band, find them in the L1 and the L2 as their
///   neighbours read them, and leave most slices empty. Session 18's runs D and E (H100, f64):
///   3D elasticity 24³ (4 slices of 41,472 columns, 81 entries per row within ~3,500) sliced
///   40.8 µs against HOLA's 20.3; 48³ (27 slices, rows within ~14,000 columns) 870 µs against
///   BRC's 115.
fn shape(stats: &RowStats, val_bytes: usize, slice_bytes: usize) -> Option<(usize, usize)> {
    let width = slice_bytes / val_bytes.max(1);
    if width == 0 || stats.rows == 0 || stats.nnz < MIN_NNZ {
        return None;
    }
    let slices = stats.cols.div_ceil(width);
    let worth = slices >= 2
        && stats.col_spread >= MIN_SPREAD * stats.cols as f64
        && stats.mean / slices as f64 >= MIN_PER_SLICE
        && !has_long_rows(stats);
    worth.then_some((width, slices))
}

/// A row longer than [`LONG_ROW`] times the mean: one row group reads all of it, slice by
/// slice, while the others wait (the rule by which `select::heuristic` sends such rows to HOLA
/// when they are not sliced). Session 35's run C (H200): R-MAT power-law 2^16 x 128 (rows of
/// up to 22,970 entries, mean 128) sliced in 6 slices ran 205 µs a product in f64 against
/// cuSPARSE's 55.5, BRC's 33.3 and HOLA's 58.9; 2^16 x 64 in f32 (3 slices) 163 µs against
/// 25.9 (BRC 13.5).
pub(crate) fn has_long_rows(stats: &RowStats) -> bool {
    stats.max as f64 > LONG_ROW * stats.mean.max(1.0)
}

/// See [`has_long_rows`].
const LONG_ROW: f64 = 8.0;

/// The fraction of the columns a row's entries must spread over, on average (first to last
/// column), for the sliced mode.
pub(crate) const MIN_SPREAD: f64 = 0.5;

/// The sliced mode's shape for a matrix on a device, or None where the plain kernel runs.
/// `shared_per_block`: the most dynamic shared memory a block may use; `shared_per_sm`, `sm`:
/// the device's. The rows of each slice are cut into as many ranges as fill the resident
/// blocks once (more would start a second, mostly idle wave: session 18's run A, 267 items on
/// 264 resident blocks 1.3x slower than 178).
pub fn rule(
    stats: &RowStats,
    val_bytes: usize,
    (shared_per_block, shared_per_sm, sm): (u32, u32, u32),
) -> Option<Slicing> {
    let over = overrides();
    if over.off {
        return None;
    }
    let slice_bytes = over
        .kib
        .map_or(SLICE_BYTES, |k| k * 1024)
        .min(shared_per_block as usize);
    let (width, slices) = if over.force {
        let width = slice_bytes / val_bytes.max(1);
        (width > 0 && stats.rows > 0).then(|| (width, stats.cols.div_ceil(width).max(1)))?
    } else {
        shape(stats, val_bytes, slice_bytes)?
    };
    let per_sm = (shared_per_sm as usize / (slice_bytes + 1024)).max(1);
    let resident = per_sm * sm.max(1) as usize;
    let chunks = over
        .chunks
        .unwrap_or((resident / slices).max(1))
        .clamp(1, stats.rows.max(1));
    let per_slice = stats.mean / slices as f64;
    let coop = over.coop.unwrap_or_else(|| coop_for(per_slice));
    Some(Slicing {
        width,
        slices,
        chunks,
        coop,
        block: over.block.unwrap_or(BLOCK),
    })
}

/// Threads per row group for `per_slice` entries per row and slice: a power of two, about a
/// quarter of them (each lane reads two entries per trip, so a row is about two trips), from 4
/// to 32. Measured in session 18's run B (H100, LP generator, µs per product): 29 entries per
/// slice in f64, coop 4 / 8 / 16: 96.0 / 85.2 / 94.2 (rows of 500 over 200,000 columns: 79.8 /
/// 68.5 / 69.9); 58 in f32, coop 8 / 16: 61.1 / 58.7.
fn coop_for(per_slice: f64) -> u32 {
    let want = (per_slice / 4.0).ceil().clamp(1.0, 32.0) as u32;
    want.next_power_of_two().clamp(4, 32)
}

/// `TESSERA_CSR_SLICES`, for measurements: `off`, or comma-separated `force` (slice whatever
/// the thresholds say), `kib=N`, `chunks=N`, `coop=N`, `block=N`. Read at each analyze.
#[derive(Debug, Default)]
struct Overrides {
    off: bool,
    force: bool,
    kib: Option<usize>,
    chunks: Option<usize>,
    coop: Option<u32>,
    block: Option<u32>,
}

fn overrides() -> Overrides {
    let mut o = Overrides::default();
    let v = std::env::var("TESSERA_CSR_SLICES").unwrap_or_default();
    for part in v.split(',').map(str::trim) {
        let (k, n) = part.split_once('=').unwrap_or((part, ""));
        let n = n.parse::<usize>().ok().filter(|&n| n > 0);
        match k {
            "off" | "0" => o.off = true,
            "force" => o.force = true,
            "kib" => o.kib = n,
            "chunks" => o.chunks = n,
            "coop" => o.coop = n.map(|c| (c as u32).next_power_of_two().min(32)),
            "block" => o.block = n.map(|b| (b as u32).div_ceil(32).clamp(1, 32) * 32),
            _ => {}
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lp(rows: usize, cols: usize, per_row: usize) -> RowStats {
        RowStats {
            rows,
            cols,
            nnz: rows * per_row,
            mean: per_row as f64,
            std_dev: 0.0,
            min: per_row,
            max: per_row,
            empty_rows: 0,
            col_spread: cols as f64,
        }
    }

    const H100: (u32, u32, u32) = (227 * 1024, 228 * 1024, 132);

    #[test]
    fn long_rows_over_many_columns_are_sliced_and_short_ones_are_not() {
        // The LP generator's shape: 89 slices of 12,288 columns in f64, 29 entries per slice.
        let s = rule(&lp(4284, 1_092_610, 2600), 8, H100).expect("sliced");
        assert_eq!((s.width, s.slices), (12_288, 89));
        // Two blocks per SM: 264 resident, two row ranges per slice.
        assert_eq!(s.chunks, 2);
        assert_eq!(s.coop, 8);
        // f32: twice the columns per slice.
        let s = rule(&lp(4284, 1_092_610, 2600), 4, H100).expect("sliced");
        assert_eq!((s.width, s.slices, s.chunks), (24_576, 45, 5));
        assert!(suits(&lp(4284, 1_092_610, 2600), 8));
        // Rows of 1,200 over 2M columns: 14.6 entries per slice in f32, 7.3 in f64.
        assert!(suits(&lp(4284, 2_000_000, 1200), 4));
        assert!(!suits(&lp(4284, 2_000_000, 1200), 8));
        assert!(suits(&lp(4284, 1_092_610, 1200), 8));
        // 8 entries per slice (4M columns in f64): the partial sums cost more than they save.
        assert!(rule(&lp(4284, 4_000_000, 2600), 8, H100).is_none());
        assert!(!suits(&lp(4284, 4_000_000, 2600), 8));
        // Long rows within a band (3D elasticity 24³ and 48³): the caches serve them.
        let mut band = lp(41_472, 41_472, 81);
        band.col_spread = 3_500.0;
        assert!(rule(&band, 8, H100).is_none());
        assert!(!suits(&band, 8));
        let mut band = lp(331_776, 331_776, 81);
        band.col_spread = 14_000.0;
        assert!(rule(&band, 4, H100).is_none());
        assert!(!suits(&band, 8));
        // Short rows, small matrices, one slice: the plain kernel.
        assert!(!suits(&lp(1_000_000, 1_000_000, 16), 8));
        assert!(!suits(&lp(400, 1_000_000, 2000), 8));
        assert!(!suits(&lp(100_000, 10_000, 100), 8));
        assert!(!suits(&lp(0, 10, 0), 8));
    }

    #[test]
    fn a_graph_whose_longest_row_is_many_times_the_mean_is_not_sliced() {
        // R-MAT 2^16 x 128's statistics: 6 slices of 21 entries per row in f64, 3 of 43 in
        // f32, spread over all the columns, but rows of up to 22,970 entries.
        let mut graph = lp(65_536, 65_536, 128);
        graph.col_spread = 50_000.0;
        assert!(suits(&graph, 8) && suits(&graph, 4));
        graph.max = 22_970;
        graph.min = 0;
        assert!(has_long_rows(&graph));
        assert!(!suits(&graph, 8) && !suits(&graph, 4));
        assert!(rule(&graph, 8, H100).is_none());
        // Eight times the mean is still even enough.
        graph.max = 8 * 128;
        assert!(suits(&graph, 8));
    }

    #[test]
    fn items_cover_every_row_of_every_slice_once() {
        let s = Slicing {
            width: 10,
            slices: 3,
            chunks: 4,
            coop: 4,
            block: 512,
        };
        let t = s.item_table(7);
        assert_eq!(t.len(), 3 * 12);
        for slice in 0..3 {
            let mut covered = vec![0; 7];
            for it in t.chunks(3).filter(|it| it[0] == slice) {
                for r in it[1]..it[2] {
                    covered[r as usize] += 1;
                }
            }
            assert_eq!(covered, vec![1; 7], "slice {slice}");
        }
    }

    #[test]
    fn groups_are_a_quarter_of_the_entries_per_row_and_slice() {
        assert_eq!(coop_for(1.0), 4);
        assert_eq!(coop_for(29.0), 8);
        assert_eq!(coop_for(58.0), 16);
        assert_eq!(coop_for(1000.0), 32);
    }
}
