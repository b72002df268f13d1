//! TileSpMV's format (§III.B): the matrix cut into 16x16 tiles, each stored in one of seven
//! formats chosen by Figure 5's rules (§III.D), plus the warp work list (§III.D, `tbalance`)
//! and, for TileSpMV_DeferredCOO, the separate CSR matrix of the COO data.
//!
//! Level 1 (the paper's three arrays): `tile_ptr` (tile rows + 1: first tile of each tile row),
//! `tile_col` (`tileColIdx`), `tile_nnz` (tiles + 1: offsets of the tiles' non-zero counts;
//! the host reference takes a CSR tile's 17th row offset from it, as the paper does; the GPU
//! kernel takes it from `val_ptr`, so `tile_nnz` is not uploaded).
//!
//! Level 2. The paper keeps one set of arrays per format (`csrVal`, `cooVal`, `ellVal`, ...);
//! we keep one value array and one index-byte array for all tiles, with per-tile offsets
//! `val_ptr` and `idx_ptr`, a format byte and a width byte per tile (the paper's extra
//! `tilewidth` array; it also carries DnsRow/DnsCol's count of dense rows/columns). The bytes
//! of each format are the paper's:
//! - CSR: idx = 16 u8 row offsets, then the 4-bit column indices packed two per byte (entry j
//!   in byte j/2, low nibble when j is even); values row-major (nnz).
//! - COO: idx = one byte per entry, row << 4 | column; values row-major (nnz).
//! - ELL: width w = the longest row; slot s = j*16 + r (column-major, row r's j-th entry);
//!   idx = 16w nibbles packed as for CSR; values 16w, padding 0 (column 0).
//! - HYB: ELL part of width w chosen by least bytes (§III.B: from the longest row down to 0,
//!   keeping a strictly smaller size), then COO part (bytes and values as COO). With deferral
//!   the COO part moves to the deferred matrix.
//! - Dns: no idx; values 256, column-major (v[c*16 + r]).
//! - DnsRow: width k = dense rows; idx = k row ids; values k*16, row i's 16 values contiguous.
//! - DnsCol: width k = dense columns; idx = k column ids; values k*16, column i's 16 values
//!   contiguous (by row).
//!
//! Edge tiles (matrix size not a multiple of 16; the reference code truncated such matrices):
//! a tile has `vr` valid rows and `vc` valid columns; a "full" row of DnsRow has `vc` entries,
//! a full column of DnsCol `vr`; dense slots outside the matrix are padding (value 0), and the
//! kernel reads x as 0 there and never writes y past the last row.
//!
//! Duplicate entries (tessera's CSR keeps them; they add): a tile holding two entries at one
//! position is stored as COO, which stores every entry on its own (our choice: the dense
//! formats have one slot per position and CSR's u8 row offsets assume <= 16 per row).
#![forbid(unsafe_code)]

use super::params::{TileParams, TBALANCE_UNLIMITED};
use crate::csr::Csr;
use crate::error::{Error, Result};
use crate::methods::cancel;
use crate::methods::hola::host::HolaHost;
use crate::methods::Request;
use crate::scalar::Scalar;
use crate::types::Tuning;

/// Tile side (§III.A: "always 16-by-16 in this work").
pub const TILE: usize = 16;
/// Work-item flag: the tile row is split across warps (atomic adds into a pre-scaled y).
pub const SPLIT_ROW: u32 = 0x8000_0000;
/// Fewer non-zeros than this (with uneven rows) make a COO tile (§III.D).
pub const COO_MAX_NNZ: usize = 12;
/// At least this many non-zeros make a whole tile Dns (§III.D): half its 256 cells.
pub const DNS_MIN_NNZ: usize = 128;
/// Valid cells from which an edge tile (the last tile row or column of a matrix whose size is
/// not a multiple of 16) is Dns at half of them, as a whole tile is ([`dns_min_nnz`]).
pub const DNS_EDGE_MIN_CELLS: usize = 128;

/// The fewest non-zeros that make a tile of `valid_rows x valid_cols` cells inside the matrix
/// Dns: Figure 5's 128, half of a whole tile; half the valid cells of an edge tile of at least
/// [`DNS_EDGE_MIN_CELLS`] (8 of its 16 rows or columns), whose 256 stored values then hold at
/// least 64 non-zeros. Figure 5 counts against the whole tile, so an edge tile of 8 rows was
/// Dns only when full, and at 60-97% density it was ELL of width 13-16 (where a Dns tile is
/// as large): those tiles made `tile_spmv` 1.5-1.75x slower on random half-dense matrices of
/// 3000 rows than of 3008 (H200, notes/tile.md, session 30). Smaller edge tiles keep the 128,
/// which bounds a Dns tile's padding (a matrix of a few rows would store 256 values a tile).
pub fn dns_min_nnz(valid_rows: usize, valid_cols: usize) -> usize {
    let cells = valid_rows * valid_cols;
    if cells >= DNS_EDGE_MIN_CELLS {
        cells.div_ceil(2)
    } else {
        DNS_MIN_NNZ
    }
}

/// The seven tile formats, in the order of the format byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TileFormat {
    /// Per-tile CSR with u8 row offsets and 4-bit columns.
    Csr = 0,
    /// Row and column packed in one byte per entry.
    Coo = 1,
    /// Column-major ELL of the tile's own width.
    Ell = 2,
    /// ELL part plus COO part.
    Hyb = 3,
    /// All 256 values, column-major.
    Dns = 4,
    /// Only full rows, with their row ids.
    DnsRow = 5,
    /// Only full columns, with their column ids.
    DnsCol = 6,
}

impl TileFormat {
    /// Every format, in format-byte order (a function, not an associated constant, so that
    /// cbindgen does not export it to the C header).
    pub fn all() -> [TileFormat; 7] {
        [
            TileFormat::Csr,
            TileFormat::Coo,
            TileFormat::Ell,
            TileFormat::Hyb,
            TileFormat::Dns,
            TileFormat::DnsRow,
            TileFormat::DnsCol,
        ]
    }

    /// The format of a format byte.
    pub fn from_u8(b: u8) -> TileFormat {
        Self::all()[b as usize]
    }

    /// Short name.
    pub fn name(self) -> &'static str {
        ["csr", "coo", "ell", "hyb", "dns", "row", "col"][self as usize]
    }
}

/// Figure 7 for one matrix: tiles and non-zeros per format as selected (before deferral), and
/// the non-zeros moved to the deferred matrix.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Census {
    /// Tiles per format (format-byte order).
    pub tiles: [usize; 7],
    /// Non-zeros per format.
    pub nnz: [usize; 7],
    /// Non-zeros in the deferred CSR matrix (0 without deferral).
    pub deferred_nnz: usize,
}

impl Census {
    /// Non-empty tiles.
    pub fn total_tiles(&self) -> usize {
        self.tiles.iter().sum()
    }

    /// Non-zeros.
    pub fn total_nnz(&self) -> usize {
        self.nnz.iter().sum()
    }

    /// Percentages of tiles and of non-zeros in format `f`.
    pub fn shares(&self, f: TileFormat) -> (f64, f64) {
        let pct = |a: usize, b: usize| {
            if b == 0 {
                0.0
            } else {
                100.0 * a as f64 / b as f64
            }
        };
        (
            pct(self.tiles[f as usize], self.total_tiles()),
            pct(self.nnz[f as usize], self.total_nnz()),
        )
    }

    /// [`Census::summary`], then the work split: `items` warps, `split` split tile rows.
    pub fn with_work(&self, items: usize, split: usize) -> String {
        format!("{}; {items} warps, {split} split tile rows", self.summary())
    }

    /// Compact text for info.params: `tiles/nnz%: csr 12/30 coo 60/9 ...` (formats with no tile
    /// left out), then the deferred share.
    pub fn summary(&self) -> String {
        let mut s = format!("{} tiles, tiles/nnz%:", self.total_tiles());
        for f in TileFormat::all() {
            if self.tiles[f as usize] > 0 {
                let (t, n) = self.shares(f);
                s.push_str(&format!(" {} {t:.0}/{n:.0}", f.name()));
            }
        }
        if self.deferred_nnz > 0 {
            let d = 100.0 * self.deferred_nnz as f64 / self.total_nnz().max(1) as f64;
            s.push_str(&format!("; deferred {d:.0}% nnz"));
        }
        s
    }
}

/// The deferred part: the COO data as a CSR matrix (rows x cols of the whole matrix) and HOLA
/// ready to run it on the host.
#[derive(Debug, Clone)]
pub struct Deferred<T> {
    /// The deferred entries.
    pub csr: Csr<T>,
    /// HOLA's host form of it (the host twin of the GPU's HOLA on the same CSR).
    pub hola: HolaHost,
}

/// A matrix in TileSpMV's format.
#[derive(Debug, Clone)]
pub struct Tiled<T> {
    /// Rows of the matrix.
    pub rows: usize,
    /// Columns of the matrix.
    pub cols: usize,
    /// The parameters it was built with.
    pub params: TileParams,
    /// `tilePtr`: tile rows + 1.
    pub tile_ptr: Vec<u32>,
    /// `tileColIdx`: one per tile.
    pub tile_col: Vec<u32>,
    /// `tileNnz`: tiles + 1 offsets of the non-zeros stored in the tiles.
    pub tile_nnz: Vec<u32>,
    /// Format byte per tile ([`TileFormat`]).
    pub format: Vec<u8>,
    /// ELL/HYB width, or DnsRow/DnsCol count of dense rows/columns; 0 otherwise.
    pub width: Vec<u8>,
    /// Tiles + 1 offsets into `values`.
    pub val_ptr: Vec<u32>,
    /// Tiles + 1 offsets into `idx`.
    pub idx_ptr: Vec<u32>,
    /// Index bytes of every tile.
    pub idx: Vec<u8>,
    /// The tiles' values (`val_ptr[tiles]` of them), then the deferred matrix's values in its
    /// CSR order (the value map covers both).
    pub values: Vec<T>,
    /// Warp work items: tile row, with [`SPLIT_ROW`] when the row is split across warps.
    pub item_row: Vec<u32>,
    /// Items + 1: item i runs tiles `item_start[i]..item_start[i + 1]`.
    pub item_start: Vec<u32>,
    /// Tile rows split across warps (their rows are pre-scaled by beta).
    pub split_rows: Vec<u32>,
    /// TileSpMV_DeferredCOO's separate matrix.
    pub deferred: Option<Deferred<T>>,
    /// Where each CSR non-zero lives in `values`.
    pub value_slot: Vec<u32>,
    /// Figure 7's counts.
    pub census: Census,
}

/// Column index packed at nibble `j` of `bytes`.
pub fn nibble(bytes: &[u8], j: usize) -> usize {
    let b = bytes[j / 2];
    if j % 2 == 0 {
        (b & 15) as usize
    } else {
        (b >> 4) as usize
    }
}

fn set_nibble(bytes: &mut [u8], j: usize, c: usize) {
    debug_assert!(c < TILE);
    if j % 2 == 0 {
        bytes[j / 2] |= c as u8;
    } else {
        bytes[j / 2] |= (c as u8) << 4;
    }
}

/// What the selection looks at in one tile.
#[derive(Debug, Clone)]
pub struct TileShape {
    /// Entries per row of the tile.
    pub row_count: [usize; TILE],
    /// Entries per column of the tile.
    pub col_count: [usize; TILE],
    /// Entries.
    pub nnz: usize,
    /// Rows of the tile inside the matrix.
    pub valid_rows: usize,
    /// Columns of the tile inside the matrix.
    pub valid_cols: usize,
    /// Two entries share a position.
    pub duplicates: bool,
}

impl TileShape {
    /// `variation` of §III.D: population std-dev of the valid rows' lengths over their mean,
    /// computed as `sqrt(n * sum(len^2) - nnz^2) / nnz` (n valid rows): an exact integer under
    /// one square root and one division, so the device build (`kernels/tile.cu`, `tile_sizes`)
    /// makes the same IEEE operations and the same choice.
    pub fn variation(&self) -> f64 {
        if self.nnz == 0 {
            return 0.0;
        }
        let n = self.valid_rows as u128;
        let s2: u128 = self.row_count[..self.valid_rows]
            .iter()
            .map(|&c| c as u128 * c as u128)
            .sum();
        let x = n * s2 - self.nnz as u128 * self.nnz as u128;
        (x as f64).sqrt() / self.nnz as f64
    }
}

/// Figure 5 for one tile, in the paper's order: COO (fewer than 12 non-zeros and rows uneven,
/// read as variation > te: in a full tile fewer than 12 entries can never be even over 16
/// rows, so this only matters in edge tiles), Dns (at least [`dns_min_nnz`]: 128, or half an
/// edge tile's valid cells), DnsRow (every non-empty row full),
/// DnsCol (every non-empty column full), then ELL (variation <= te), HYB (> th), CSR.
pub fn select(s: &TileShape, p: &TileParams) -> TileFormat {
    if s.duplicates {
        return TileFormat::Coo;
    }
    let cv = s.variation();
    if s.nnz < COO_MAX_NNZ && cv > p.te {
        TileFormat::Coo
    } else if s.nnz >= dns_min_nnz(s.valid_rows, s.valid_cols) {
        TileFormat::Dns
    } else if s.row_count[..s.valid_rows]
        .iter()
        .all(|&c| c == 0 || c == s.valid_cols)
    {
        TileFormat::DnsRow
    } else if s.col_count[..s.valid_cols]
        .iter()
        .all(|&c| c == 0 || c == s.valid_rows)
    {
        TileFormat::DnsCol
    } else if cv <= p.te {
        TileFormat::Ell
    } else if cv > p.th {
        TileFormat::Hyb
    } else {
        TileFormat::Csr
    }
}

/// HYB's ELL width (§III.B): from the longest row down to 0, the width with the fewest bytes
/// (ELL: 16w values and 16w nibbles; COO: a value and a byte per entry left over); a narrower
/// width replaces the kept one only when strictly smaller.
pub fn hyb_width(row_count: &[usize; TILE], value_bytes: usize) -> usize {
    let max = row_count.iter().copied().max().unwrap_or(0);
    let bytes = |w: usize| {
        let coo: usize = row_count.iter().map(|&c| c.saturating_sub(w)).sum();
        16 * w * value_bytes + 8 * w + coo * (value_bytes + 1)
    };
    let mut best = (bytes(max), max);
    for w in (0..max).rev() {
        let b = bytes(w);
        if b < best.0 {
            best = (b, w);
        }
    }
    best.1
}

pub(super) fn too_big(what: &str, n: usize) -> Error {
    Error::NotSupported(format!(
        "TILE: {what} would be {n}, past the 32-bit offsets of the format"
    ))
}

/// Builds the format of `a` with `p`, on up to `BUILD_THREADS` (16) threads for a large matrix
/// (the result is the same on any number: [`build_on`]).
pub fn build<T: Scalar>(a: &Csr<T>, p: &TileParams) -> Result<Tiled<T>> {
    build_on(a, p, crate::csr::host_threads(a.nnz(), BUILD_THREADS))
}

/// The most threads one build runs on. The build is compute-bound (per tile: the shape, the
/// selection, the packing), so it scales past the memory-bound CSR passes' 8.
const BUILD_THREADS: usize = 16;

/// [`build`] on `threads` threads: the tile rows cut into runs of about equal non-zeros, each
/// run built on its own thread into a [`Run`] with offsets from its own start, then the runs
/// joined in order. Every array is the same as a one-thread build's.
pub fn build_on<T: Scalar>(a: &Csr<T>, p: &TileParams, threads: usize) -> Result<Tiled<T>> {
    if !p.is_valid() {
        return Err(Error::InvalidValue(format!("invalid TILE parameters {p}")));
    }
    let (rows, nnz) = (a.rows(), a.nnz());
    let tile_rows = rows.div_ceil(TILE);
    if tile_rows >= SPLIT_ROW as usize {
        return Err(too_big("the tile-row count", tile_rows));
    }
    let rp = a.row_ptr();
    // Run i: tile rows [cut[i], cut[i + 1]), cut where the entries pass i * nnz / threads.
    let threads = threads.clamp(1, tile_rows.max(1));
    let mut cut: Vec<usize> = (0..threads)
        .map(|i| {
            let k = i * nnz / threads;
            // The first tile row whose first row starts at or after entry k.
            let (mut lo, mut hi) = (0, tile_rows);
            while lo < hi {
                let mid = (lo + hi) / 2;
                if (rp[mid * TILE] as usize) < k {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        })
        .collect();
    cut.push(tile_rows);
    cut[0] = 0;
    cut.dedup();
    // Where each CSR entry's value goes: each run writes the slots of its own entries (a
    // contiguous range) relative to its values, moved by its base once all are built.
    let mut value_slot = crate::csr::try_vec_filled(nnz, u32::MAX, "TILE's value map")?;
    let runs: Vec<Run> = if cut.len() <= 2 {
        vec![build_run(a, p, (0, tile_rows), &mut value_slot)?]
    } else {
        // The worker's cancel flag is per thread: each run's thread takes it on.
        let flag = cancel::current();
        std::thread::scope(|s| {
            let handles: Vec<_> = run_slots(a, &cut, &mut value_slot)
                .into_iter()
                .map(|(w, slots)| {
                    let flag = flag.clone();
                    s.spawn(move || cancel::with(flag, || build_run(a, p, w, slots)))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a TILE build thread panicked"))
                .collect::<Result<Vec<Run>>>()
        })?
    };
    join_runs(a, p, runs, value_slot)
}

/// Each run's tile rows (from `cut`) with the part of `value_slot` that holds its entries.
fn run_slots<'a, T: Scalar>(
    a: &Csr<T>,
    cut: &[usize],
    value_slot: &'a mut [u32],
) -> Vec<((usize, usize), &'a mut [u32])> {
    let (rows, rp) = (a.rows(), a.row_ptr());
    let k = |tr: usize| rp[(tr * TILE).min(rows)] as usize;
    let lens: Vec<usize> = cut.windows(2).map(|w| k(w[1]) - k(w[0])).collect();
    cut.windows(2)
        .map(|w| (w[0], w[1]))
        .zip(split_by(value_slot, &lens))
        .collect()
}

/// `v` cut into consecutive parts of `lens` elements.
fn split_by<'a>(mut v: &'a mut [u32], lens: &[usize]) -> Vec<&'a mut [u32]> {
    lens.iter()
        .map(|&n| {
            let (part, rest) = std::mem::take(&mut v).split_at_mut(n);
            v = rest;
            part
        })
        .collect()
}

/// Tile rows [t0, t1) of a build: the level-1 and level-2 arrays with offsets from the run's
/// own start (`tile_ptr`, `tile_nnz`, `val_ptr` and `idx_ptr` hold each tile row's or tile's
/// end), where each of its CSR entries goes, and what it defers.
#[derive(Default)]
struct Run {
    tile_ptr: Vec<u32>,
    tile_col: Vec<u32>,
    tile_nnz: Vec<u32>,
    format: Vec<u8>,
    width: Vec<u8>,
    val_ptr: Vec<u32>,
    idx_ptr: Vec<u32>,
    idx: Vec<u8>,
    /// Values the run's tiles hold, and non-zeros stored.
    values: usize,
    stored: usize,
    /// First CSR entry of the run, and how many it holds.
    k0: usize,
    entries: usize,
    /// Deferred entries: CSR index, and (once the run is built) row.
    deferred_k: Vec<usize>,
    deferred_row: Vec<u32>,
    census: Census,
}

/// Tile rows [t0, t1) into a [`Run`]; `slots` (the run's entries' part of the value map) gets
/// each entry's slot in the run's values (deferred entries keep `u32::MAX`).
fn build_run<T: Scalar>(
    a: &Csr<T>,
    p: &TileParams,
    (t0, t1): (usize, usize),
    slots: &mut [u32],
) -> Result<Run> {
    let (rows, rp, ci) = (a.rows(), a.row_ptr(), a.col_ind());
    let mut run = Run {
        k0: rp[(t0 * TILE).min(rows)] as usize,
        entries: slots.len(),
        ..Run::default()
    };
    let vsz = std::mem::size_of::<T>();
    // (tile column, local row, local column, k) of one tile, by row then column.
    let mut ents: Vec<(u32, u8, u8, usize)> = Vec::new();
    let mut cur = [0usize; TILE];
    let mut end = [0usize; TILE];
    for tr in t0..t1 {
        cancel::check_every(tr * TILE)?;
        let r0 = tr * TILE;
        let vr = TILE.min(rows - r0);
        for rl in 0..vr {
            (cur[rl], end[rl]) = (rp[r0 + rl] as usize, rp[r0 + rl + 1] as usize);
        }
        // The rows' columns are sorted: a merge of the vr rows by tile column yields each
        // tile's entries by row, then column (duplicates in their CSR order).
        loop {
            let tc = (0..vr)
                .filter(|&rl| cur[rl] < end[rl])
                .map(|rl| ci[cur[rl]] as usize / TILE)
                .min();
            let Some(tc) = tc else { break };
            ents.clear();
            for rl in 0..vr {
                while cur[rl] < end[rl] && ci[cur[rl]] as usize / TILE == tc {
                    let c = ci[cur[rl]] as usize;
                    ents.push((tc as u32, rl as u8, (c % TILE) as u8, cur[rl]));
                    cur[rl] += 1;
                }
            }
            emit_tile(&mut run, slots, (a.cols(), p), &ents, (tc as u32, vr, vsz))?;
        }
        run.tile_ptr.push(run.tile_col.len() as u32);
    }
    // The deferred entries in CSR order, with their rows (runs hold increasing entries, so
    // the runs' lists joined are in CSR order too).
    run.deferred_k.sort_unstable();
    let mut r = t0 * TILE;
    run.deferred_row = run
        .deferred_k
        .iter()
        .map(|&k| {
            while rp[r + 1] as usize <= k {
                r += 1;
            }
            r as u32
        })
        .collect();
    Ok(run)
}

/// The runs joined in order into the format, then its work items, its deferred matrix and its
/// values.
fn join_runs<T: Scalar>(
    a: &Csr<T>,
    p: &TileParams,
    runs: Vec<Run>,
    value_slot: Vec<u32>,
) -> Result<Tiled<T>> {
    let (rows, cols) = (a.rows(), a.cols());
    let (ci, va) = (a.col_ind(), a.values());
    let tiles: usize = runs.iter().map(|r| r.tile_col.len()).sum();
    let tile_len: usize = runs.iter().map(|r| r.values).sum();
    let deferred: usize = runs.iter().map(|r| r.deferred_k.len()).sum();
    let idx_len: usize = runs.iter().map(|r| r.idx.len()).sum();
    if tile_len + deferred > u32::MAX as usize {
        return Err(too_big("the value count", tile_len + deferred));
    }
    if idx_len > u32::MAX as usize {
        return Err(too_big("the index count", idx_len));
    }
    let mut f = Tiled {
        rows,
        cols,
        params: *p,
        tile_ptr: Vec::with_capacity(rows.div_ceil(TILE) + 1),
        tile_col: Vec::with_capacity(tiles),
        tile_nnz: Vec::with_capacity(tiles + 1),
        format: Vec::with_capacity(tiles),
        width: Vec::with_capacity(tiles),
        val_ptr: Vec::with_capacity(tiles + 1),
        idx_ptr: Vec::with_capacity(tiles + 1),
        idx: Vec::with_capacity(idx_len),
        values: Vec::new(),
        item_row: Vec::new(),
        item_start: vec![0],
        split_rows: Vec::new(),
        deferred: None,
        value_slot,
        census: Census::default(),
    };
    f.tile_ptr.push(0);
    f.tile_nnz.push(0);
    f.val_ptr.push(0);
    f.idx_ptr.push(0);
    let mut deferred_k: Vec<usize> = Vec::with_capacity(deferred);
    let mut deferred_row: Vec<u32> = Vec::with_capacity(deferred);
    // Each run's value base, then its slots in place (runs hold disjoint ranges of entries).
    let mut bases = Vec::with_capacity(runs.len());
    let (mut tb, mut vb, mut ib, mut sb) = (0u32, 0u32, 0u32, 0u32);
    for r in &runs {
        f.tile_ptr.extend(r.tile_ptr.iter().map(|&t| t + tb));
        f.tile_col.extend_from_slice(&r.tile_col);
        f.format.extend_from_slice(&r.format);
        f.width.extend_from_slice(&r.width);
        f.tile_nnz.extend(r.tile_nnz.iter().map(|&t| t + sb));
        f.val_ptr.extend(r.val_ptr.iter().map(|&t| t + vb));
        f.idx_ptr.extend(r.idx_ptr.iter().map(|&t| t + ib));
        f.idx.extend_from_slice(&r.idx);
        deferred_k.extend_from_slice(&r.deferred_k);
        deferred_row.extend_from_slice(&r.deferred_row);
        for i in 0..7 {
            f.census.tiles[i] += r.census.tiles[i];
            f.census.nnz[i] += r.census.nnz[i];
        }
        bases.push(vb);
        tb += r.tile_col.len() as u32;
        vb += r.values as u32;
        ib += r.idx.len() as u32;
        sb += r.stored as u32;
    }
    place_slots(&mut f.value_slot, &runs, &bases);
    drop(runs);
    f.set_tbalance(p.tbalance);
    // The deferred matrix, in CSR order (k order is row-major with sorted columns).
    f.census.deferred_nnz = deferred_k.len();
    f.values = vec![T::ZERO; tile_len + deferred_k.len()];
    if !deferred_k.is_empty() {
        // In CSR order: its own CSR's arrays as they come.
        let mut d_ptr = vec![0i32; rows + 1];
        for &r in &deferred_row {
            d_ptr[r as usize + 1] += 1;
        }
        for i in 0..rows {
            d_ptr[i + 1] += d_ptr[i];
        }
        let d_col = deferred_k.iter().map(|&k| ci[k]).collect();
        let d_val = deferred_k.iter().map(|&k| va[k]).collect();
        let csr = Csr::from_sorted(rows, cols, d_ptr, d_col, d_val);
        for (i, &k) in deferred_k.iter().enumerate() {
            f.value_slot[k] = (tile_len + i) as u32;
        }
        let stats = csr.stats();
        let hola = HolaHost::new(&Request {
            host: Some(&csr),
            stats: &stats,
            tuning: Tuning::None,
            deterministic: false,
        })?;
        f.deferred = Some(Deferred { csr, hola });
    }
    debug_assert!(f.value_slot.iter().all(|&s| s != u32::MAX));
    f.update_values(a);
    Ok(f)
}

/// Each run's slots (its part of `value_slot`) moved by the run's value base (deferred
/// entries stay `u32::MAX`), in parallel; the first run's base is 0.
fn place_slots(value_slot: &mut [u32], runs: &[Run], bases: &[u32]) {
    let lens: Vec<usize> = runs.iter().map(|r| r.entries).collect();
    std::thread::scope(|s| {
        for (part, &base) in split_by(value_slot, &lens).into_iter().zip(bases).skip(1) {
            s.spawn(move || {
                for d in part.iter_mut().filter(|d| **d != u32::MAX) {
                    *d += base;
                }
            });
        }
    });
}

/// Appends one tile (entries sorted by row then column) in its selected format to `run`, and
/// its entries' slots (in the run's values) to `slots` (the run's part of the value map).
fn emit_tile(
    run: &mut Run,
    slots: &mut [u32],
    (cols, params): (usize, &TileParams),
    ents: &[(u32, u8, u8, usize)],
    (tc, vr, vsz): (u32, usize, usize),
) -> Result<()> {
    let mut s = TileShape {
        row_count: [0; TILE],
        col_count: [0; TILE],
        nnz: ents.len(),
        valid_rows: vr,
        valid_cols: TILE.min(cols - tc as usize * TILE),
        duplicates: false,
    };
    for (i, e) in ents.iter().enumerate() {
        s.row_count[e.1 as usize] += 1;
        s.col_count[e.2 as usize] += 1;
        if i > 0 && (ents[i - 1].1, ents[i - 1].2) == (e.1, e.2) {
            s.duplicates = true;
        }
    }
    let fmt = select(&s, params);
    run.census.tiles[fmt as usize] += 1;
    run.census.nnz[fmt as usize] += s.nnz;
    let defer = params.deferred;
    if defer && fmt == TileFormat::Coo {
        run.deferred_k.extend(ents.iter().map(|e| e.3));
        return Ok(());
    }
    let vb = run.values;
    let ib = run.idx.len();
    let mut stored = s.nnz;
    let mut width = 0usize;
    let mut values = s.nnz;
    // Slot within the tile's values of each entry.
    let k0 = run.k0;
    let mut put = |slot: usize, k: usize| slots[k - k0] = (vb + slot) as u32;
    match fmt {
        TileFormat::Csr => {
            let mut off = 0usize;
            for r in 0..TILE {
                run.idx.push(off as u8);
                off += s.row_count[r];
            }
            run.idx.resize(ib + TILE + s.nnz.div_ceil(2), 0);
            for (j, e) in ents.iter().enumerate() {
                set_nibble(&mut run.idx[ib + TILE..], j, e.2 as usize);
                put(j, e.3);
            }
        }
        TileFormat::Coo => {
            for (j, e) in ents.iter().enumerate() {
                run.idx.push(e.1 << 4 | e.2);
                put(j, e.3);
            }
        }
        TileFormat::Ell | TileFormat::Hyb => {
            let w = if fmt == TileFormat::Ell {
                s.row_count.iter().copied().max().unwrap_or(0)
            } else {
                hyb_width(&s.row_count, vsz)
            };
            width = w;
            run.idx.resize(ib + 8 * w, 0);
            values = 16 * w;
            let mut seen = [0usize; TILE];
            let mut coo: Vec<&(u32, u8, u8, usize)> = Vec::new();
            for e in ents {
                let r = e.1 as usize;
                let j = seen[r];
                seen[r] += 1;
                if j < w {
                    let slot = j * TILE + r;
                    set_nibble(&mut run.idx[ib..], slot, e.2 as usize);
                    put(slot, e.3);
                } else {
                    coo.push(e);
                }
            }
            if defer {
                stored -= coo.len();
                run.deferred_k.extend(coo.iter().map(|e| e.3));
                if w == 0 {
                    // Everything went to the deferred matrix: no tile left.
                    return Ok(());
                }
            } else {
                for (i, e) in coo.iter().enumerate() {
                    run.idx.push(e.1 << 4 | e.2);
                    put(16 * w + i, e.3);
                }
                values += coo.len();
            }
        }
        TileFormat::Dns => {
            values = TILE * TILE;
            for e in ents {
                put(e.2 as usize * TILE + e.1 as usize, e.3);
            }
        }
        TileFormat::DnsRow | TileFormat::DnsCol => {
            let by_row = fmt == TileFormat::DnsRow;
            let counts = if by_row { &s.row_count } else { &s.col_count };
            let mut pos = [usize::MAX; TILE];
            for (i, c) in counts.iter().enumerate() {
                if *c > 0 {
                    pos[i] = width;
                    run.idx.push(i as u8);
                    width += 1;
                }
            }
            values = width * TILE;
            for e in ents {
                let (r, c) = (e.1 as usize, e.2 as usize);
                let slot = if by_row {
                    pos[r] * TILE + c
                } else {
                    pos[c] * TILE + r
                };
                put(slot, e.3);
            }
        }
    }
    if width > u8::MAX as usize {
        return Err(Error::Internal(format!("TILE: tile width {width} > 255")));
    }
    run.values += values;
    run.stored += stored;
    if run.values > u32::MAX as usize || run.idx.len() > u32::MAX as usize {
        return Err(too_big(
            "the value or index count",
            run.values.max(run.idx.len()),
        ));
    }
    run.tile_col.push(tc);
    run.format.push(fmt as u8);
    run.width.push(width as u8);
    run.tile_nnz.push(run.stored as u32);
    run.val_ptr.push(run.values as u32);
    run.idx_ptr.push(run.idx.len() as u32);
    Ok(())
}

impl<T: Scalar> Tiled<T> {
    /// Sets `tbalance` and rebuilds the work items from the tiles (§III.D): at most
    /// `tbalance` tiles per warp; an empty tile row still gets one (it writes beta*y).
    pub fn set_tbalance(&mut self, tbalance: u32) {
        self.params.tbalance = tbalance;
        self.item_row.clear();
        self.item_start.clear();
        self.item_start.push(0);
        self.split_rows.clear();
        let tb = tbalance as usize;
        for tr in 0..self.tile_ptr.len() - 1 {
            let (s, e) = (self.tile_ptr[tr] as usize, self.tile_ptr[tr + 1] as usize);
            if tbalance == TBALANCE_UNLIMITED || e - s <= tb {
                self.item_row.push(tr as u32);
                self.item_start.push(e as u32);
            } else {
                self.split_rows.push(tr as u32);
                let mut t = s;
                while t < e {
                    t = (t + tb).min(e);
                    self.item_row.push(tr as u32 | SPLIT_ROW);
                    self.item_start.push(t as u32);
                }
            }
        }
    }

    /// Tiles stored (deferred COO tiles are not among them).
    pub fn num_tiles(&self) -> usize {
        self.tile_col.len()
    }

    /// Values of the tile part (the deferred values follow them in `values`).
    pub fn tile_values(&self) -> usize {
        *self.val_ptr.last().unwrap_or(&0) as usize
    }

    /// Brings `values` (both parts) and the deferred CSR up to date from `a`'s values.
    pub fn update_values(&mut self, a: &Csr<T>) {
        crate::methods::scatter_values(a.values(), &self.value_slot, &mut self.values);
        let n = self.tile_values();
        if let Some(d) = &mut self.deferred {
            d.csr.values_mut().copy_from_slice(&self.values[n..]);
        }
    }

    /// Bytes of the tile structure (level 1, level 2, work list) and of the deferred CSR,
    /// without the value map: what one product reads beside x and y.
    pub fn format_bytes(&self) -> usize {
        let u32s = self.tile_ptr.len()
            + self.tile_col.len()
            + self.tile_nnz.len()
            + self.val_ptr.len()
            + self.idx_ptr.len()
            + self.item_row.len()
            + self.item_start.len()
            + self.split_rows.len();
        let tile = 4 * u32s
            + self.format.len()
            + self.width.len()
            + self.idx.len()
            + self.tile_values() * std::mem::size_of::<T>();
        tile + self.deferred.as_ref().map_or(0, |d| d.csr.bytes())
    }

    /// Bytes kept beyond the CSR: the format, the value map and (device-side duplicate) the
    /// deferred values in `values`.
    pub fn bytes(&self) -> usize {
        self.format_bytes()
            + 4 * self.value_slot.len()
            + (self.values.len() - self.tile_values()) * std::mem::size_of::<T>()
    }

    /// One line for describe(): the census and the work split.
    pub fn summary(&self) -> String {
        self.census
            .with_work(self.item_row.len(), self.split_rows.len())
    }
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
