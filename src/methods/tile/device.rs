//! TILE's format built on the device from the device CSR (`kernels/tile.cu`, "The format built
//! on the device"): the arrays format.rs builds on the host (its oracle: the tests compare
//! every array), without the copies a host build makes over the host link (the CSR down for a
//! matrix kept on the device, the format up), which made AUTO start TILE's host build only after
//! 800 products (`select::background_start_after`).
//!
//! The steps, on one stream: the census of every tile of the tile grid (format, width, values
//! and index bytes), its scan into offsets, the work items of the fixed rule's two tbalance
//! values, one read-back of the totals (the allocation sizes, and whether anything is deferred),
//! then the fill. Matrices whose tile grid has more than a quarter as many tiles as non-zeros are
//! left to the host build ([`builds_on_device`]); so are those with entries the fixed rule
//! defers (TileSpMV_DeferredCOO above 1.8M non-zeros: COO tiles, HYB remainders), found by the
//! census ([`build`] answers `None`).

use super::cuda::OnDevice;
use super::format::{too_big, Census};
use super::params::{self, TileParams};
use crate::backend::cuda::csr::{suffix, GpuCsr};
use crate::backend::cuda::kernels::KernelSpec;
use crate::backend::cuda::scan::{exclusive_scan, workspace_bytes};
use crate::backend::cuda::{
    copy_to_host, launch, synchronize, Device, DeviceBuffer, KernelArgs, Stream,
};
use crate::backend::trace;
use crate::csr::RowStats;
use crate::error::Result;
use crate::scalar::Scalar;
use std::sync::Arc;

/// Threads per block of the build kernels (TILE_BUILD_THREADS in tile.cu): 16 half-warps.
const THREADS: u32 = 256;
/// u64 words of the census (TILE_CENSUS_WORDS): tiles per format, non-zeros per format,
/// deferred entries.
const CENSUS_WORDS: usize = 15;
/// The read-back: the census, the grid's three totals (stored tiles, values, index bytes), the
/// tile rows' four (items and split rows at each tbalance).
const RESULT_WORDS: usize = CENSUS_WORDS + 3 + 4;
/// Bytes of a grid tile's entry ranges kept by the census for the fill (16 lanes' uint2).
const RANGE_BYTES: usize = 16 * 8;
/// The tile side.
const TILE: usize = super::format::TILE;

/// True when TILE's fixed rule builds on the device for a matrix of these statistics (kept
/// on the device in int32 arrays: the caller checks that): a tile grid of at most a quarter
/// as many tiles as non-zeros (every matrix AUTO gives TILE, at least half dense, has about
/// 1/128), under 2^31 tiles. `TESSERA_TILE_DEVICE_BUILD=0` builds on the host.
pub fn builds_on_device(stats: &RowStats) -> bool {
    let grid = stats.rows.div_ceil(TILE) as u128 * stats.cols.div_ceil(TILE) as u128;
    stats.nnz > 0
        && 4 * grid <= stats.nnz as u128
        && grid < i32::MAX as u128
        && !crate::backend::switched_off("TESSERA_TILE_DEVICE_BUILD")
}

/// Builds the format of `fixed` (the fixed rule's parameters) from `csr` on `stream`, with
/// the fixed rule's tbalance for a device of `sm` SMs. Waits for the census's read-back, and
/// returns once the device is done with the build's temporaries (their free waits for it,
/// `DeviceBuffer`'s drop). `None` when the format would defer entries (built on the host
/// instead); else the format (with the tbalance used in its parameters) and how it was built.
pub(super) fn build<T: Scalar>(
    dev: &Arc<Device>,
    stream: Stream,
    csr: &GpuCsr<T>,
    fixed: TileParams,
    sm: u32,
) -> Result<Option<(OnDevice<T>, String)>> {
    let t0 = std::time::Instant::now();
    let us = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e6;
    let m = dev.module(&KernelSpec::new(&params::KERNELS, &[])?)?;
    crate::backend::span("tile: module");
    let (rows, cols, nnz) = (csr.rows(), csr.cols(), csr.nnz());
    let (trows, tcols) = (rows.div_ceil(TILE), cols.div_ceil(TILE));
    let grid = trows * tcols;
    let (rp, ci, va) = csr.arrays();
    // The census's words, then the two scans' workspaces: zeroed together by one memset.
    let (ws_grid, ws_rows) = (workspace_bytes(grid, 3), workspace_bytes(trows, 4));
    // Each grid tile's 16 entry ranges from the census for the fill (128 bytes a grid tile),
    // where that is at most the column array's size: the fill then makes none of the census's
    // binary searches again.
    let ranges_bytes = if grid * RANGE_BYTES <= 4 * nnz {
        grid * RANGE_BYTES
    } else {
        0
    };
    let [gb, gf, rf, res, ranges] = DeviceBuffer::alloc_parts(
        dev,
        [
            2 * grid,
            12 * (grid + 1),
            16 * (trows + 1),
            8 * RESULT_WORDS + ws_grid + ws_rows,
            ranges_bytes,
        ],
        "TILE's device build (tile census, row census, totals, scan workspaces, entry ranges)",
    )?;
    let work_grid = res.addr() + 8 * RESULT_WORDS as u64;
    let work_rows = work_grid + ws_grid as u64;
    crate::backend::span("tile: temporaries");
    res.zero(stream)?;
    crate::backend::span("tile: zero");
    let halves_per_block = THREADS as usize / 16;
    let args = KernelArgs::new()
        .push(rows as i32)
        .push(cols as i32)
        .push(tcols as i64)
        .push(grid as i64)
        .push(rp)
        .push(ci)
        .push(fixed.te)
        .push(fixed.th)
        .push(std::mem::size_of::<T>() as i32)
        .push(fixed.deferred as i32)
        .push(gb.addr())
        .push(gf.addr())
        .push(res.addr())
        .push(ranges.addr());
    // SAFETY: tile_census(int rows, int cols, long long tcols, long long ngrid, const int* rp,
    // const int* ci, double te, double th, int vsz, int defer, unsigned char* gb, unsigned* gf,
    // unsigned long long* census, uint2* ranges): rp, ci are tessera's sound int32 CSR of rows
    // x cols (sorted rows: the matrix was checked); gb holds 2 * ngrid bytes, gf 3 * (ngrid + 1)
    // u32, census CENSUS_WORDS zeroed u64 (the head of res); ranges null or 16 uint2 per grid
    // tile (RANGE_BYTES); THREADS threads a block, grid-stride.
    unsafe {
        launch(
            dev,
            &m.function("tile_census")?,
            grid.div_ceil(halves_per_block).max(1),
            THREADS,
            stream,
            args,
        )?
    };
    crate::backend::span("tile: census");
    let total = |i: usize| res.addr() + 8 * i as u64;
    exclusive_scan(
        dev,
        stream,
        (gf.addr(), grid, 3),
        total(CENSUS_WORDS),
        work_grid,
    )?;
    crate::backend::span("tile: scan");
    let small = params::SMALL_GRID_TBALANCE;
    let args = KernelArgs::new()
        .push(trows as i64)
        .push(tcols as i64)
        .push(gf.addr())
        .push(fixed.tbalance)
        .push(small)
        .push(rf.addr());
    // SAFETY: tile_rows_census(long long trows, long long tcols, const unsigned* tile_off,
    // unsigned ta, unsigned tb, unsigned* rf): tile_off is gf's first array, scanned (ngrid + 1
    // = trows * tcols + 1 values); rf holds 4 * (trows + 1) u32; one thread per tile row.
    unsafe {
        launch(
            dev,
            &m.function("tile_rows_census")?,
            trows.div_ceil(THREADS as usize).max(1),
            THREADS,
            stream,
            args,
        )?
    };
    crate::backend::span("tile: rows census");
    exclusive_scan(
        dev,
        stream,
        (rf.addr(), trows, 4),
        total(CENSUS_WORDS + 3),
        work_rows,
    )?;
    crate::backend::span("tile: row scan");
    let queued = us(t0);
    // The value map's size is known before the census reports (a slot per non-zero): allocated
    // while the device runs it, so that only the rest waits for the totals (on an H200, 48-55
    // MB allocated after the read-back took about 100 us; run C of session 24).
    let value_slot = DeviceBuffer::alloc(dev, 4 * nnz, "TILE's value map (built on the device)")?;
    // So are the values, sized for a format that stores every entry once and nothing else
    // (dense blocks in Dns tiles, CSR and COO tiles), the most of the format's bytes: a format
    // with padding (ELL, HYB, DnsRow, DnsCol, Dns tiles with zeros) allocates its own after the
    // read-back instead. On an H200 the 32 MB of dense 2000² f64 took 40-50 us there (session 28).
    let vsz = std::mem::size_of::<T>();
    let values_guess = DeviceBuffer::alloc(dev, vsz * nnz, "TILE's values (built on the device)")?;
    crate::backend::span("tile: value map, values");
    let mut r = [0u64; RESULT_WORDS];
    copy_to_host(dev, stream, res.addr(), &mut r)?;
    crate::backend::span("tile: read back");
    let read = us(t0);
    let mut census = Census::default();
    for f in 0..7 {
        census.tiles[f] = r[f] as usize;
        census.nnz[f] = r[7 + f] as usize;
    }
    census.deferred_nnz = r[14] as usize;
    if census.deferred_nnz > 0 {
        value_slot.free_unused(stream);
        values_guess.free_unused(stream);
        return Ok(None);
    }
    let [tiles, tile_values, idx_bytes, items_a, split_a, items_b, split_b] =
        std::array::from_fn(|i| r[CENSUS_WORDS + i] as usize);
    if tile_values > u32::MAX as usize {
        return Err(too_big("the value count", tile_values));
    }
    if idx_bytes > u32::MAX as usize {
        return Err(too_big("the index count", idx_bytes));
    }
    // The fixed rule's tbalance (fixed_rule_on_host in cuda.rs makes the same choice).
    let (mut tbalance, mut items, mut split, mut why) = (fixed.tbalance, items_a, split_a, None);
    if fixed.tbalance == params::PAPER_TBALANCE && params::small_grid(items_a, split_a, sm) {
        why = Some(params::small_grid_reason(items_a, fixed.tbalance, sm));
        (tbalance, items, split) = (small, items_b, split_b);
    }
    let guessed = tile_values == nnz;
    let [tile_col, format, width, val_ptr, idx_ptr, idx, padded, item_row, item_start, split_rows] =
        DeviceBuffer::alloc_parts(
            dev,
            [
                4 * tiles,
                tiles,
                tiles,
                4 * (tiles + 1),
                4 * (tiles + 1),
                idx_bytes.div_ceil(4) * 4,
                if guessed { 0 } else { vsz * tile_values },
                4 * items,
                4 * (items + 1),
                4 * split,
            ],
            "TILE's format (built on the device)",
        )?;
    let values = if guessed {
        values_guess
    } else {
        values_guess.free_unused(stream);
        padded
    };
    crate::backend::span("tile: format");
    // The chosen tbalance's item and split offsets: rf's arrays 0, 1 (ta) or 2, 3 (tb).
    let pick = if tbalance == fixed.tbalance { 0 } else { 2 };
    let rf_at = |i: u64| rf.addr() + 4 * i * (trows as u64 + 1);
    let idx_words = idx.bytes() / 4;
    let args = KernelArgs::new()
        .push(trows as i64)
        .push(tcols as i64)
        .push(gb.addr())
        .push(gf.addr())
        .push(tbalance)
        .push(rf_at(pick))
        .push(rf_at(pick + 1))
        .push(item_row.addr())
        .push(item_start.addr())
        .push(split_rows.addr())
        .push(idx.addr())
        .push(idx_words as i64);
    // SAFETY: tile_items(long long trows, long long tcols, const unsigned char* gb, const
    // unsigned* tile_off, unsigned bal, const unsigned* item_off, const unsigned* split_off,
    // unsigned* item_row, unsigned* item_start, unsigned* split_rows, unsigned* idx, long long
    // idx_words): gb as tile_census wrote it (ngrid formats), tile_off gf's first array scanned;
    // the scanned offsets of tile_rows_census at `bal`, whose totals sized item_row (items),
    // item_start (items + 1) and split_rows (split); idx holds idx_words u32. Grid-stride.
    unsafe {
        launch(
            dev,
            &m.function("tile_items")?,
            grid.max(idx_words)
                .div_ceil(THREADS as usize)
                .clamp(1, 65_535),
            THREADS,
            stream,
            args,
        )?
    };
    crate::backend::span("tile: items");
    let args = KernelArgs::new()
        .push(rows as i32)
        .push(tcols as i64)
        .push(grid as i64)
        .push(rp)
        .push(ci)
        .push(va)
        .push(gb.addr())
        .push(gf.addr())
        .push(tile_col.addr())
        .push(format.addr())
        .push(width.addr())
        .push(val_ptr.addr())
        .push(idx_ptr.addr())
        .push(idx.addr())
        .push(values.addr())
        .push(value_slot.addr())
        .push(ranges.addr());
    // SAFETY: tile_fill_<T>(int rows, long long tcols, long long ngrid, const int* rp, const
    // int* ci, const T* va, const unsigned char* gb, const unsigned* gf, unsigned* tile_col,
    // unsigned char* fmt, unsigned char* width, unsigned* val_ptr, unsigned* idx_ptr, unsigned*
    // idx, T* values, unsigned* value_slot, const uint2* ranges): gb and gf as tile_census and
    // the scan left them, whose totals sized every output (idx rounded up to whole words,
    // zeroed by tile_items); value_slot holds nnz u32; ranges null or as tile_census wrote them
    // earlier on this stream; THREADS threads a block, grid-stride.
    unsafe {
        launch(
            dev,
            &m.function(&format!("tile_fill_{}", suffix::<T>()))?,
            grid.div_ceil(halves_per_block).max(1),
            THREADS,
            stream,
            args,
        )?
    };
    crate::backend::span("tile: fill");
    let filled = us(t0);
    synchronize(dev, stream)?;
    crate::backend::span("tile: done");
    trace(2, || {
        format!(
            "TILE's device build of {grid} grid tiles: census and scans queued at {queued:.1} us, read back at {read:.1} us, fill queued at {filled:.1} us, done at {:.1} us",
            us(t0)
        )
    });
    let how = match why {
        Some(w) => format!("built on the device; {w}"),
        None => "built on the device".to_string(),
    };
    Ok(Some((
        OnDevice {
            params: TileParams { tbalance, ..fixed },
            rows,
            cols,
            nitems: items,
            nsplit: split,
            tile_values,
            item_row,
            item_start,
            tile_col,
            format,
            width,
            val_ptr,
            idx_ptr,
            idx,
            values,
            split_rows,
            value_slot,
            deferred: None,
            summary: census.with_work(items, split),
        },
        how,
    )))
}
