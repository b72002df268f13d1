//! BRC filled on the device (cuda.rs's `prepare`, when [`super::fills_on_device`]): the plan
//! (Algorithm 1's queue, the blocks, the destinations), then `brc_ell_fill` and `brc_fill`
//! (kernels/brc.cu) place the columns, values and value map from the device CSR. The plan is
//! made on the device too where it can be ([`plans_on_device`]): the rows of each length counted
//! there and read back (a word per length, not per row), the fixed rule and `format::layout` on
//! the host from those counts, then `brc_plan_count`, a scan, `brc_plan_place` and
//! `brc_plan_queue` place the rows. Otherwise the row offsets are read back and `format::plan`
//! runs on the host. A child module of cuda.rs, whose `BrcGpu` it makes.

use super::{block_info, BrcGpu, Kernels, OnDevice};
use crate::backend::cuda::csr::GpuCsr;
use crate::backend::cuda::scan::{exclusive_scan, workspace_bytes};
use crate::backend::cuda::{launch, launch_shared, Device, DeviceBuffer, KernelArgs, Stream};
use crate::backend::trace;
use crate::error::{Error, Result};
use crate::methods::brc::format;
use crate::methods::brc::host::variant_for;
use crate::methods::brc::params;
use crate::methods::Request;
use crate::scalar::Scalar;
use std::sync::Arc;

/// The most buckets (distinct remaining row lengths) the device plan takes: `brc_plan_count`
/// and `brc_plan_place` keep a word per bucket in shared memory (32 KiB, under the 48 KiB a
/// launch gets without opting in). A matrix with more is planned on the host.
const PLAN_MAX_BUCKETS: usize = 8192;

/// The most counts (a word per bucket and tile, plus the rows to scale per tile) the device
/// plan lays out: above it its tiles grow, so the counts, their scan and the tiles' zeroing
/// stay below a few products' time.
const PLAN_MAX_COUNTS: usize = 1 << 22;

/// Rows of one tile of the device plan at least (one warp walks them 32 at a time).
const PLAN_MIN_TILE: usize = 1024;

/// Threads per CTA of `brc_plan_lengths` and `brc_plan_queue`.
const PLAN_BLOCK: u32 = 256;

/// True when BRC's device fill also makes its plan on the device: the atomic variant (the
/// deterministic one's partial ranges are made row by row on the host), for a matrix whose
/// longest row is shorter than its row count (the lengths' counts, read back, are then fewer
/// words than the row offsets). `TESSERA_BRC_DEVICE_PLAN=0` turns it off (read once per
/// process).
pub fn plans_on_device(stats: &crate::csr::RowStats, deterministic: bool) -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| !crate::backend::switched_off("TESSERA_BRC_DEVICE_PLAN"))
        && !deterministic
        && stats.nnz > 0
        && stats.max < stats.rows
        && stats.rows < i32::MAX as usize
}

/// The device fill's kernels take blocks of one warp (B1 = 32, what the fixed rule gives).
fn warp_blocks(p: &params::Params) -> Result<()> {
    if p.b1 != params::WARP {
        return Err(Error::Internal(format!(
            "BRC's device fill takes B1 = 32, the fixed rule gave {p}"
        )));
    }
    Ok(())
}

/// For a trace line: the build's work on `stream` waited for, and when it was done (in
/// microseconds since `t0`), or why the wait failed.
fn done_at(dev: &Arc<Device>, stream: Stream, t0: std::time::Instant) -> String {
    match crate::backend::cuda::synchronize(dev, stream) {
        Ok(()) => format!("done at {:.1} us", t0.elapsed().as_secs_f64() * 1e6),
        Err(e) => format!("its wait failed: {e}"),
    }
}

impl<T: Scalar> BrcGpu<T> {
    /// The fixed rule's format of the device CSR `csr`, built on the device: the plan made on
    /// the device ([`plans_on_device`]), or made on the host from the row offsets (`rows + 1`
    /// of them downloaded, waited for; `format::plan`) and its metadata uploaded; then on
    /// `stream` the ELL part (if any) filled by `brc_ell_fill` (one warp per 32 rows) and the
    /// blocks by `brc_fill` (one warp per block): the same arrays format.rs builds.
    pub(super) fn fill_on_device(
        kernels: Kernels,
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        req: &Request<'_, T>,
    ) -> Result<Self> {
        let kernels = if plans_on_device(req.stats, req.deterministic) {
            match Self::plan_and_fill_on_device(kernels, dev, stream, csr, req)? {
                Ok(m) => return Ok(m),
                Err(kernels) => kernels,
            }
        } else {
            kernels
        };
        let t0 = std::time::Instant::now();
        let us = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e6;
        let st = req.stats;
        let rp_dev = csr.arrays().0;
        let mut rp = crate::csr::try_vec_filled(st.rows + 1, 0i32, "BRC's row offsets")?;
        crate::backend::cuda::copy_to_host(dev, stream, rp_dev, &mut rp)?;
        let read = us(t0);
        let sm = dev.sm_count();
        let rule = params::fixed_rule(&rp, st, sm);
        let p = rule.params;
        warp_blocks(&p)?;
        let plan = format::plan(
            &rp,
            st.cols,
            p.b1 as usize,
            p.b2 as usize,
            p.ell_width as usize,
            variant_for(req.deterministic),
        )?;
        drop(rp);
        let planned = us(t0);
        let sz = std::mem::size_of::<T>();
        let arrays = DeviceBuffer::alloc_parts(
            dev,
            [plan.slots * sz, plan.slots * 4, st.nnz * 4],
            "BRC's format (values, columns, value map)",
        )?;
        // The format's metadata (its block table among it) first: the fill reads that table.
        let on = OnDevice::with_plan::<T>(dev, stream, &plan, p.format_key(), arrays)?;
        let uploaded = us(t0);
        let pieces = if plan.num_blocks() > 0 {
            Some((
                DeviceBuffer::from_slice(dev, stream, &plan.piece_start, "BRC piece starts")?,
                DeviceBuffer::from_slice(dev, stream, &plan.piece_len, "BRC piece lengths")?,
            ))
        } else {
            None
        };
        let pieces_at = pieces.as_ref().map(|(s, l)| (s.addr(), l.addr()));
        Self::queue_fills(&kernels, dev, stream, csr, &on, pieces_at)?;
        // The piece arrays are freed after the launches are queued: in the stream's order
        // under allocating_on (AUTO's background build), after a wait for the device otherwise
        // (DeviceBuffer's drop).
        drop(pieces);
        let queued = us(t0);
        trace(2, || {
            let done = done_at(dev, stream, t0);
            format!(
                "BRC's device fill of {} rows, {} slots: row offsets read at {read:.1} us, rule and plan at {planned:.1} us, plan arrays uploaded at {uploaded:.1} us, fill queued at {queued:.1} us, {done}",
                st.rows, plan.slots
            )
        });
        let how = format!(
            "planned from the row offsets and filled on the device; {}; {sm} SMs",
            rule.why
        );
        Ok(Self::assemble(kernels, dev, on, p, &how))
    }

    /// Queues on `stream` the fills of `on`'s arrays from `csr`: the ELL part's (`brc_ell_fill`,
    /// when `on` has one), then the blocks' (`brc_fill`) from the block rows' pieces at
    /// `pieces` (piece starts, piece lengths: `on.block_rows` u32 each; `None` without blocks).
    fn queue_fills(
        kernels: &Kernels,
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        on: &OnDevice,
        pieces: Option<(u64, u64)>,
    ) -> Result<()> {
        let (rp, ci, va) = csr.arrays();
        let (val, col, slot) = (on.values.addr(), on.col.addr(), on.value_slot.addr());
        let (rows, k) = (on.rows, on.ell_width);
        if k > 0 {
            let args = KernelArgs::new()
                .push(rows as i32)
                .push(k as i32)
                .push(rp)
                .push(ci)
                .push(va)
                .push(col)
                .push(val)
                .push(slot);
            // SAFETY: brc_ell_fill_<T>(int rows, int k, const int* rp, const int* ci, const T*
            // va, int* col, T* val, unsigned* slot): rp, ci, va are tessera's int32 CSR of
            // `rows` rows; col and val hold the format's slots, of which the first rows * k
            // (< 2^32: the plan checked) are the ELL part, slot nnz entries; whole warps (128
            // threads a block), one per 32 rows.
            unsafe {
                launch(
                    dev,
                    &kernels.ell_fill,
                    rows.div_ceil(32).div_ceil(4),
                    128,
                    stream,
                    args,
                )?
            };
        }
        let blocks = on.block_rows / 32;
        if let (true, Some((starts, lens))) = (blocks > 0, pieces) {
            let args = KernelArgs::new()
                .push(blocks as i32)
                .push(on.ell_slots as u32)
                .push(on.block_info.addr())
                .push(starts)
                .push(lens)
                .push(ci)
                .push(va)
                .push(col)
                .push(val)
                .push(slot);
            // SAFETY: brc_fill_<T>(int blocks, unsigned ell_slots, const uint2* block_info,
            // const unsigned* piece_start, const unsigned* piece_len, const int* ci, const T*
            // va, int* col, T* val, unsigned* slot): block_info has `blocks` entries whose slots
            // (ell_slots + offset + T * 32) lie within the format's slots (its plan checked the
            // total fits in 32 bits), piece_start/piece_len 32 per block naming entries < nnz
            // of the int32 CSR ci/va (written before on `stream`), slot nnz entries; 128
            // threads a block (the kernel's staging arrays are sized for its four warps), a
            // warp per BRC block.
            unsafe { launch(dev, &kernels.fill, blocks.div_ceil(4), 128, stream, args)? };
        }
        Ok(())
    }

    /// The fill with its plan made on the device ([`plans_on_device`]; module comment):
    /// `Ok(Err(kernels))` when the matrix has more distinct row lengths than the plan's kernels
    /// take ([`PLAN_MAX_BUCKETS`]; the caller then plans on the host).
    fn plan_and_fill_on_device(
        kernels: Kernels,
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
        req: &Request<'_, T>,
    ) -> Result<std::result::Result<Self, Kernels>> {
        let t0 = std::time::Instant::now();
        let us = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e6;
        let st = req.stats;
        let rows = st.rows;
        let sm = dev.sm_count();
        let rp = csr.arrays().0;
        // 1. The rows of each length, counted on the device: hist[l] for l <= the longest row
        // the statistics name, and rows longer than that (none, if they are right) in the word
        // after.
        let hist_len = st.max + 2;
        let hist_dev = DeviceBuffer::zeroed(dev, stream, 4 * hist_len, "BRC's row-length counts")?;
        let args = KernelArgs::new()
            .push(rows as i32)
            .push(st.max as i32)
            .push(rp)
            .push(hist_dev.addr());
        // SAFETY: brc_plan_lengths(int rows, int max_len, const int* rp, unsigned* hist): rp
        // is tessera's int32 CSR's `rows + 1` row offsets (rows < 2^31: plans_on_device); hist
        // holds max_len + 2 zeroed words (a row longer than max_len counts in the last);
        // whole warps (PLAN_BLOCK threads a block), grid-stride.
        unsafe {
            launch(
                dev,
                &kernels.plan_lengths,
                rows.div_ceil(PLAN_BLOCK as usize)
                    .clamp(1, 16 * sm.max(1) as usize),
                PLAN_BLOCK,
                stream,
                args,
            )?
        };
        let mut hist = crate::csr::try_vec_filled(hist_len, 0u32, "BRC's row-length counts")?;
        crate::backend::cuda::copy_to_host(dev, stream, hist_dev.addr(), &mut hist)?;
        drop(hist_dev);
        let counted = us(t0);
        let total: u64 = hist.iter().map(|&n| n as u64).sum();
        if hist[hist_len - 1] != 0 || total != rows as u64 {
            return Err(Error::Internal(format!(
                "BRC's device plan: the row-length counts ({total} rows, {} longer than {}) disagree with the matrix's statistics ({rows} rows)",
                hist[hist_len - 1],
                st.max
            )));
        }
        hist.pop();
        // 2. The fixed rule and the layout, from the lengths present (one pass over the
        // counts).
        let present: Vec<(usize, usize)> = params::lengths_in(&hist).collect();
        drop(hist);
        let rule = params::fixed_rule_of(present.iter().copied(), st, sm);
        let p = rule.params;
        warp_blocks(&p)?;
        let l = format::layout(
            present.into_iter(),
            st.cols,
            p.b1 as usize,
            p.b2 as usize,
            p.ell_width as usize,
        )?;
        if l.buckets > PLAN_MAX_BUCKETS {
            return Ok(Err(kernels));
        }
        let laid_out = us(t0);
        // 3. The format and the plan's arrays: the kept ones in one allocation with the format,
        // the temporaries in another.
        let sz = std::mem::size_of::<T>();
        let block_rows = l.block_rows();
        let [values, col, value_slot, block_table, dest, scale_rows] = DeviceBuffer::alloc_parts(
            dev,
            [
                l.slots * sz,
                l.slots * 4,
                st.nnz * 4,
                8 * l.num_blocks(),
                4 * block_rows,
                4 * l.n_scale,
            ],
            "BRC's format (values, columns, value map, blocks, destinations, rows to scale)",
        )?;
        block_table.fill_from(stream, &block_info(&l.nnz_per_block, &l.block_offset))?;
        let places = l.in_brc > 0 || l.n_scale > 0;
        // Tiles: of at least PLAN_MIN_TILE rows, few enough that the counts stay under
        // PLAN_MAX_COUNTS; a multiple of 32 rows each.
        let max_tiles = (PLAN_MAX_COUNTS / (l.buckets + 1)).max(1);
        let tile = rows
            .div_ceil(rows.div_ceil(PLAN_MIN_TILE).clamp(1, max_tiles))
            .next_multiple_of(32);
        let tiles = rows.div_ceil(tile);
        let n_counts = (l.buckets + 1) * tiles;
        let tables: Vec<u32> = l.bucket_of.iter().chain(&l.round_start).copied().collect();
        let [table_dev, counts, scan_ws, sorted, piece_start, piece_len] =
            DeviceBuffer::alloc_parts(
                dev,
                [
                    4 * tables.len(),
                    4 * (n_counts + 1),
                    16 + workspace_bytes(n_counts, 1),
                    4 * l.in_brc,
                    4 * block_rows,
                    4 * block_rows,
                ],
                "BRC's device plan (buckets and rounds, tile counts, scan, sorted rows, pieces)",
            )?;
        table_dev.fill_from(stream, &tables)?;
        let bucket_of = table_dev.addr();
        let round_start = bucket_of + 4 * l.bucket_of.len() as u64;
        let (k, b2) = (l.ell_width as i32, l.b2 as i32);
        let scale = (l.n_scale > 0) as i32;
        if places {
            scan_ws.zero(stream)?;
            let shared = (4 * l.buckets) as u32;
            // The arguments brc_plan_count and brc_plan_place begin with.
            let tile_args = || {
                KernelArgs::new()
                    .push(rows as i32)
                    .push(tile as i32)
                    .push(tiles as i32)
                    .push(k)
                    .push(b2)
                    .push(scale)
                    .push(rp)
                    .push(bucket_of)
                    .push(l.buckets as i32)
                    .push(counts.addr())
            };
            let args = tile_args();
            // SAFETY: brc_plan_count(int rows, int tile, int tiles, int k, int b2, int scale,
            // const int* rp, const unsigned* bucket_of, int buckets, unsigned* counts): rp is
            // the CSR's row offsets, whose lengths hist counted (so every remaining length is
            // at most bucket_of's last index, and its bucket below `buckets`); counts holds
            // (buckets + 1) * tiles + 1 words; one warp per tile of `tile` rows (tiles * tile
            // >= rows) with `buckets` words of dynamic shared memory (<= 32 KiB).
            unsafe { launch_shared(dev, &kernels.plan_count, tiles, 32, shared, stream, args)? };
            exclusive_scan(
                dev,
                stream,
                (counts.addr(), n_counts, 1),
                scan_ws.addr(),
                scan_ws.addr() + 16,
            )?;
            let args = tile_args()
                .push(l.in_brc as u32)
                .push(sorted.addr())
                .push(scale_rows.addr());
            // SAFETY: brc_plan_place(int rows, int tile, int tiles, int k, int b2, int scale,
            // const int* rp, const unsigned* bucket_of, int buckets, const unsigned* counts,
            // unsigned in_brc, unsigned* sorted, unsigned* scale_rows): as brc_plan_count, with
            // counts scanned on this stream; the places it names are below in_brc (sorted's
            // length) for the rows with a bucket and below n_scale (scale_rows's) for the
            // listed ones, since the counts are the layout's (both made from the same lengths).
            unsafe { launch_shared(dev, &kernels.plan_place, tiles, 32, shared, stream, args)? };
        }
        if block_rows > 0 {
            let args = KernelArgs::new()
                .push(block_rows as i64)
                .push(l.rounds() as i32)
                .push(round_start)
                .push(sorted.addr())
                .push(rp)
                .push(k)
                .push(b2)
                .push((k > 0) as i32)
                .push(dest.addr())
                .push(piece_start.addr())
                .push(piece_len.addr());
            // SAFETY: brc_plan_queue(long long block_rows, int rounds, const unsigned*
            // round_start, const unsigned* sorted, const int* rp, int k, int b2, int hybrid,
            // unsigned* dest, unsigned* piece_start, unsigned* piece_len): round_start holds
            // rounds + 1 words ending with the pieces (<= block_rows), sorted the in_brc rows
            // brc_plan_place wrote on this stream (each place below a round's length names one),
            // dest and the pieces block_rows words each; grid-stride.
            unsafe {
                launch(
                    dev,
                    &kernels.plan_queue,
                    block_rows
                        .div_ceil(PLAN_BLOCK as usize)
                        .clamp(1, 16 * sm.max(1) as usize),
                    PLAN_BLOCK,
                    stream,
                    args,
                )?
            };
        }
        let empty = || DeviceBuffer::alloc(dev, 0, "");
        let on = OnDevice {
            key: p.format_key(),
            rows,
            ell_width: l.ell_width,
            ell_slots: l.ell_slots(),
            b1: l.b1,
            block_rows,
            n_scale: l.n_scale,
            n_fix: 0,
            accumulate: l.ell_width > 0,
            deterministic: false,
            values,
            col,
            block_info: block_table,
            dest,
            scale_rows,
            fix_rows: empty()?,
            fix_ptr: empty()?,
            partial: empty()?,
            value_slot,
            summary: l.summary(),
            partial_ring: None,
        };
        let planned = us(t0);
        // At trace level 3 the plan's kernels are waited for, so the trace splits the device's
        // time between them and the fill (the wait itself costs the build a few microseconds).
        let plan_done = (crate::backend::trace_level() >= 3).then(|| {
            let _ = crate::backend::cuda::synchronize(dev, stream);
            us(t0)
        });
        Self::queue_fills(
            &kernels,
            dev,
            stream,
            csr,
            &on,
            Some((piece_start.addr(), piece_len.addr())),
        )?;
        // The plan's temporaries are freed after the launches that read them are queued: in
        // the stream's order under allocating_on (AUTO's background build), after a wait for
        // the device otherwise (DeviceBuffer's drop).
        drop((table_dev, counts, scan_ws, sorted, piece_start, piece_len));
        let queued = us(t0);
        trace(2, || {
            let done = done_at(dev, stream, t0);
            format!(
                "BRC's device plan and fill of {rows} rows, {} slots, {} buckets, {tiles} tiles of {tile}: lengths counted at {counted:.1} us, rule and layout at {laid_out:.1} us, plan queued at {planned:.1} us,{} fill queued at {queued:.1} us, {done}",
                l.slots,
                l.buckets,
                plan_done.map_or(String::new(), |t| format!(" plan done at {t:.1} us,"))
            )
        });
        let how = format!(
            "planned and filled on the device (rows of each length counted there); {}; {sm} SMs",
            rule.why
        );
        Ok(Ok(Self::assemble(kernels, dev, on, p, &how)))
    }
}
