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
/// At least this many non-zeros make a Dns tile (§III.D).
pub const DNS_MIN_NNZ: usize = 128;

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
    /// `variation` of §III.D: population std-dev of the valid rows' lengths over their mean.
    pub fn variation(&self) -> f64 {
        let n = self.valid_rows as f64;
        let mean = self.nnz as f64 / n;
        if mean == 0.0 {
            return 0.0;
        }
        let var = self.row_count[..self.valid_rows]
            .iter()
            .map(|&c| (c as f64 - mean).powi(2))
            .sum::<f64>()
            / n;
        var.sqrt() / mean
    }
}

/// Figure 5 for one tile, in the paper's order: COO (fewer than 12 non-zeros and rows uneven,
/// read as variation > te: in a full tile fewer than 12 entries can never be even over 16
/// rows, so this only matters in edge tiles), Dns (>= 128), DnsRow (every non-empty row full),
/// DnsCol (every non-empty column full), then ELL (variation <= te), HYB (> th), CSR.
pub fn select(s: &TileShape, p: &TileParams) -> TileFormat {
    if s.duplicates {
        return TileFormat::Coo;
    }
    let cv = s.variation();
    if s.nnz < COO_MAX_NNZ && cv > p.te {
        TileFormat::Coo
    } else if s.nnz >= DNS_MIN_NNZ {
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

fn too_big(what: &str, n: usize) -> Error {
    Error::NotSupported(format!(
        "TILE: {what} would be {n}, past the 32-bit offsets of the format"
    ))
}

/// Builds the format of `a` with `p`.
pub fn build<T: Scalar>(a: &Csr<T>, p: &TileParams) -> Result<Tiled<T>> {
    if !p.is_valid() {
        return Err(Error::InvalidValue(format!("invalid TILE parameters {p}")));
    }
    let (rows, cols) = (a.rows(), a.cols());
    let tile_rows = rows.div_ceil(TILE);
    if tile_rows >= SPLIT_ROW as usize {
        return Err(too_big("the tile-row count", tile_rows));
    }
    let vsz = std::mem::size_of::<T>();
    let (rp, ci, va) = (a.row_ptr(), a.col_ind(), a.values());
    let mut f = Tiled {
        rows,
        cols,
        params: *p,
        tile_ptr: vec![0],
        tile_col: Vec::new(),
        tile_nnz: vec![0],
        format: Vec::new(),
        width: Vec::new(),
        val_ptr: vec![0],
        idx_ptr: vec![0],
        idx: Vec::new(),
        values: Vec::new(),
        item_row: Vec::new(),
        item_start: vec![0],
        split_rows: Vec::new(),
        deferred: None,
        value_slot: vec![u32::MAX; a.nnz()],
        census: Census::default(),
    };
    // Deferred entries: CSR index k.
    let mut deferred_k: Vec<usize> = Vec::new();
    // (tile column, local row, local column, k) of one tile row.
    let mut ents: Vec<(u32, u8, u8, usize)> = Vec::new();
    for tr in 0..tile_rows {
        cancel::check_every(tr * TILE)?;
        let r0 = tr * TILE;
        let vr = TILE.min(rows - r0);
        ents.clear();
        for rl in 0..vr {
            let r = r0 + rl;
            let (b, e) = (rp[r] as usize, rp[r + 1] as usize);
            for (k, &c) in (b..e).zip(&ci[b..e]) {
                let c = c as usize;
                ents.push(((c / TILE) as u32, rl as u8, (c % TILE) as u8, k));
            }
        }
        // Stable: duplicates keep their CSR order.
        ents.sort_by_key(|e| (e.0, e.1, e.2));
        let mut i = 0;
        while i < ents.len() {
            let tc = ents[i].0;
            let mut e = i;
            while e < ents.len() && ents[e].0 == tc {
                e += 1;
            }
            emit_tile(&mut f, &ents[i..e], tc, vr, vsz, &mut deferred_k)?;
            i = e;
        }
        f.tile_ptr.push(f.tile_col.len() as u32);
    }
    if f.values.len() + deferred_k.len() > u32::MAX as usize {
        return Err(too_big(
            "the value count",
            f.values.len() + deferred_k.len(),
        ));
    }
    // Work items (§III.D): at most tbalance tiles per warp; an empty tile row still gets one
    // (it writes beta*y).
    let tb = p.tbalance as usize;
    for tr in 0..tile_rows {
        let (s, e) = (f.tile_ptr[tr] as usize, f.tile_ptr[tr + 1] as usize);
        if p.tbalance == TBALANCE_UNLIMITED || e - s <= tb {
            f.item_row.push(tr as u32);
            f.item_start.push(e as u32);
        } else {
            f.split_rows.push(tr as u32);
            let mut t = s;
            while t < e {
                t = (t + tb).min(e);
                f.item_row.push(tr as u32 | SPLIT_ROW);
                f.item_start.push(t as u32);
            }
        }
    }
    // The deferred matrix, in CSR order (k order is row-major with sorted columns).
    let tile_len = f.values.len();
    f.census.deferred_nnz = deferred_k.len();
    if !deferred_k.is_empty() {
        deferred_k.sort_unstable();
        let trip: Vec<(usize, usize, T)> = deferred_k
            .iter()
            .map(|&k| (row_of(rp, k), ci[k] as usize, va[k]))
            .collect();
        let csr = Csr::from_triplets(rows, cols, &trip)?;
        f.values.extend_from_slice(csr.values());
        for (i, &k) in deferred_k.iter().enumerate() {
            f.value_slot[k] = (tile_len + csr.input_slot(i)) as u32;
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

fn row_of(rp: &[i32], k: usize) -> usize {
    rp.partition_point(|&p| p as usize <= k) - 1
}

/// Appends one tile (entries sorted by row then column) in its selected format.
fn emit_tile<T: Scalar>(
    f: &mut Tiled<T>,
    ents: &[(u32, u8, u8, usize)],
    tc: u32,
    vr: usize,
    vsz: usize,
    deferred_k: &mut Vec<usize>,
) -> Result<()> {
    let mut s = TileShape {
        row_count: [0; TILE],
        col_count: [0; TILE],
        nnz: ents.len(),
        valid_rows: vr,
        valid_cols: TILE.min(f.cols - tc as usize * TILE),
        duplicates: false,
    };
    for (i, e) in ents.iter().enumerate() {
        s.row_count[e.1 as usize] += 1;
        s.col_count[e.2 as usize] += 1;
        if i > 0 && (ents[i - 1].1, ents[i - 1].2) == (e.1, e.2) {
            s.duplicates = true;
        }
    }
    let fmt = select(&s, &f.params);
    f.census.tiles[fmt as usize] += 1;
    f.census.nnz[fmt as usize] += s.nnz;
    let defer = f.params.deferred;
    if defer && fmt == TileFormat::Coo {
        deferred_k.extend(ents.iter().map(|e| e.3));
        return Ok(());
    }
    let vb = f.values.len();
    let ib = f.idx.len();
    let mut stored = s.nnz;
    let mut width = 0usize;
    // (slot within the tile's values, k) pairs; values filled from them.
    let mut put: Vec<(usize, usize)> = Vec::with_capacity(ents.len());
    match fmt {
        TileFormat::Csr => {
            let mut off = 0usize;
            for r in 0..TILE {
                f.idx.push(off as u8);
                off += s.row_count[r];
            }
            f.idx.resize(ib + TILE + s.nnz.div_ceil(2), 0);
            for (j, e) in ents.iter().enumerate() {
                set_nibble(&mut f.idx[ib + TILE..], j, e.2 as usize);
                put.push((j, e.3));
            }
            f.values.resize(vb + s.nnz, T::ZERO);
        }
        TileFormat::Coo => {
            for (j, e) in ents.iter().enumerate() {
                f.idx.push(e.1 << 4 | e.2);
                put.push((j, e.3));
            }
            f.values.resize(vb + s.nnz, T::ZERO);
        }
        TileFormat::Ell | TileFormat::Hyb => {
            let w = if fmt == TileFormat::Ell {
                s.row_count.iter().copied().max().unwrap_or(0)
            } else {
                hyb_width(&s.row_count, vsz)
            };
            width = w;
            f.idx.resize(ib + 8 * w, 0);
            f.values.resize(vb + 16 * w, T::ZERO);
            let mut seen = [0usize; TILE];
            let mut coo: Vec<&(u32, u8, u8, usize)> = Vec::new();
            for e in ents {
                let r = e.1 as usize;
                let j = seen[r];
                seen[r] += 1;
                if j < w {
                    let slot = j * TILE + r;
                    set_nibble(&mut f.idx[ib..], slot, e.2 as usize);
                    put.push((slot, e.3));
                } else {
                    coo.push(e);
                }
            }
            if defer {
                stored -= coo.len();
                deferred_k.extend(coo.iter().map(|e| e.3));
                if w == 0 {
                    // Everything went to the deferred matrix: no tile left.
                    return Ok(());
                }
            } else {
                for (i, e) in coo.iter().enumerate() {
                    f.idx.push(e.1 << 4 | e.2);
                    put.push((16 * w + i, e.3));
                }
                f.values.resize(vb + 16 * w + coo.len(), T::ZERO);
            }
        }
        TileFormat::Dns => {
            f.values.resize(vb + TILE * TILE, T::ZERO);
            for e in ents {
                put.push((e.2 as usize * TILE + e.1 as usize, e.3));
            }
        }
        TileFormat::DnsRow | TileFormat::DnsCol => {
            let by_row = fmt == TileFormat::DnsRow;
            let counts = if by_row { &s.row_count } else { &s.col_count };
            let mut pos = [usize::MAX; TILE];
            for (i, c) in counts.iter().enumerate() {
                if *c > 0 {
                    pos[i] = width;
                    f.idx.push(i as u8);
                    width += 1;
                }
            }
            f.values.resize(vb + width * TILE, T::ZERO);
            for e in ents {
                let (r, c) = (e.1 as usize, e.2 as usize);
                let slot = if by_row {
                    pos[r] * TILE + c
                } else {
                    pos[c] * TILE + r
                };
                put.push((slot, e.3));
            }
        }
    }
    if width > u8::MAX as usize {
        return Err(Error::Internal(format!("TILE: tile width {width} > 255")));
    }
    let ranges_ok = f.values.len() <= u32::MAX as usize && f.idx.len() <= u32::MAX as usize;
    if !ranges_ok {
        return Err(too_big(
            "the value or index count",
            f.values.len().max(f.idx.len()),
        ));
    }
    f.tile_col.push(tc);
    f.format.push(fmt as u8);
    f.width.push(width as u8);
    let last = *f.tile_nnz.last().unwrap_or(&0);
    f.tile_nnz.push(last + stored as u32);
    f.val_ptr.push(f.values.len() as u32);
    f.idx_ptr.push(f.idx.len() as u32);
    put_values(f, vb, &put);
    Ok(())
}

fn put_values<T: Scalar>(f: &mut Tiled<T>, vb: usize, put: &[(usize, usize)]) {
    // Only the slots are recorded here; `build` fills the values through them at the end.
    for &(slot, k) in put {
        f.value_slot[k] = (vb + slot) as u32;
    }
}

impl<T: Scalar> Tiled<T> {
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
        format!(
            "{}; {} warps, {} split tile rows",
            self.census.summary(),
            self.item_row.len(),
            self.split_rows.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(rows: &[usize], vr: usize, vc: usize) -> TileShape {
        let mut s = TileShape {
            row_count: [0; TILE],
            col_count: [0; TILE],
            nnz: rows.iter().sum(),
            valid_rows: vr,
            valid_cols: vc,
            duplicates: false,
        };
        s.row_count[..rows.len()].copy_from_slice(rows);
        s
    }

    #[test]
    fn hyb_width_takes_the_fewest_bytes() {
        let mut rc = [1usize; TILE];
        rc[0] = 9;
        // f64: w = 1 costs 16*8 + 8 + 8*9 = 208; w = 9 costs 16*9*8.5 = 1224; w = 0: 24*9 = 216.
        assert_eq!(hyb_width(&rc, 8), 1);
        assert_eq!(hyb_width(&[0; TILE], 8), 0);
    }

    #[test]
    fn variation_is_std_dev_over_mean_of_the_valid_rows() {
        let s = shape(&[2, 2, 2, 2], 4, 16);
        assert_eq!(s.variation(), 0.0);
        let s = shape(&[1, 3], 2, 16);
        assert!((s.variation() - 0.5).abs() < 1e-12);
    }
}
