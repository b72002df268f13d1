//! BCCOO's format built on the device from the device CSR (`kernels/bccoo.cu`, "The format built
//! on the device"): the arrays format.rs builds on the host (its oracle: the tests compare every
//! array), without the copies a host build makes over the host link (the CSR down for a matrix
//! kept on the device, the format up), which made AUTO start BCCOO's build only after 4,000
//! products (`select::background_start_after`).
//!
//! The steps, on one stream: the sampled facts of every block shape (format/facts.rs's samples,
//! counted by `bccoo_facts`) and their read-back, the fixed rule on the host; then the blocks of
//! every block row counted (and each entry's block within its block row), scanned into each
//! block row's first block, one read-back of the total (the allocation sizes), the tiles (bit
//! flags, first-result entries, per-workgroup flags) and the fill (a warp group's blocks staged
//! in shared memory: values, columns or deltas, value map; it finds its block rows in the
//! tiles' first-result entries). BCCOO only: BCCOO+'s slices (never the fixed rule's) are built
//! on the host.

use super::cuda::Arrays;
use super::format::{self, SampledCounts};
use super::params::{self, ColMode, MatrixFacts, Params};
use crate::backend::cuda::csr::{suffix, GpuCsr};
use crate::backend::cuda::kernels::KernelSpec;
use crate::backend::cuda::scan::{exclusive_scan, workspace_bytes};
use crate::backend::cuda::{
    copy_to_host, launch, launch_shared, Device, DeviceBuffer, KernelArgs, Stream,
};
use crate::backend::trace;
use crate::csr::RowStats;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::sync::Arc;

/// Threads per block of the facts, count and fill kernels (BCCOO_BUILD_THREADS in bccoo.cu).
const THREADS: u32 = 256;
/// Warps per block of the facts kernel, a sampled block row each.
const WARPS: usize = THREADS as usize / 32;
/// u64 words `bccoo_facts` writes: 4 heights x 3 widths of blocks, the jumps and the far ones.
const FACT_WORDS: usize = 14;
/// Blocks of the facts kernel per block height, at most (grid-stride).
const MAX_FACTS_GRID: usize = 1 << 14;
/// Blocks of the count kernel (a warp per block row, grid-stride) per SM, at most: enough
/// resident warps to hide its reads' latency.
const COUNT_BLOCKS_PER_SM: usize = 16;
/// The margin over the facts' estimate of the blocks that the format is allocated for before
/// the count reports, where the facts sample block rows at a stride above 1 (at stride 1 they
/// count every block). Measured with the fixed rule's shape: elasticity 48³ (stride 25) and
/// 20³, the 27-point stencil 40³, random rows and power-law rows within 0.01% of the count;
/// elasticity 32³ in f32 (3x2 blocks at stride 8, a stride that aliases with the grid) 8.3%
/// under it. The bytes allocated past the format are counted in `device_bytes` (`Arrays`'s
/// `slack`).
const GUESS_MARGIN: f64 = 0.10;
/// And the blocks added to it (a format of 4096 more blocks of up to 16 values is at most 512
/// KiB more).
const GUESS_SLACK_BLOCKS: usize = 4096;
/// Shared memory the fill stages a warp group's blocks in, at most (under the 48 KiB a launch
/// gets without opting in, and small enough for several blocks per SM).
const STAGE_BYTES: usize = 32 << 10;

/// True when BCCOO's fixed rule builds on the device for a matrix of these statistics (kept on
/// the device in int32 arrays: the caller checks that): some non-zeros, whose value map's
/// 32-bit slots the host build also requires. `TESSERA_BCCOO_DEVICE_BUILD=0` builds on the host.
pub fn builds_on_device(stats: &RowStats) -> bool {
    stats.nnz > 0
        && stats.nnz <= u32::MAX as usize
        && stats.rows < i32::MAX as usize
        && !crate::backend::switched_off("TESSERA_BCCOO_DEVICE_BUILD")
}

/// The kernels of the device build: compiled in the 1x1 specialisation only (bccoo.cu).
pub fn build_spec() -> Result<KernelSpec> {
    KernelSpec::new(&params::KERNELS, &[1, 1])
}

fn module(dev: &Arc<Device>) -> Result<Arc<crate::backend::cuda::Module>> {
    dev.module(&build_spec()?)
}

/// The facts the fixed rule starts from (format/facts.rs's [`format::facts`], the same
/// samples counted by `bccoo_facts`), for `csr`'s values of `T`. Waits for the read-back.
pub fn facts<T: Scalar>(dev: &Arc<Device>, stream: Stream, csr: &GpuCsr<T>) -> Result<MatrixFacts> {
    let counts = sampled_counts(dev, stream, csr)?;
    Ok(counts.facts(csr.rows(), csr.cols(), csr.nnz(), std::mem::size_of::<T>()))
}

/// The counts behind [`facts`], as the device counted them (tests compare them with
/// [`format::sampled_counts`]).
#[doc(hidden)]
pub fn sampled_counts<T: Scalar>(
    dev: &Arc<Device>,
    stream: Stream,
    csr: &GpuCsr<T>,
) -> Result<SampledCounts> {
    let (rows, nnz) = (csr.rows(), csr.nnz());
    if rows == 0 || csr.index64() {
        return Err(Error::Internal(format!(
            "BCCOO's device facts of a {rows}-row matrix{}",
            if csr.index64() {
                " with int64 indices"
            } else {
                ""
            }
        )));
    }
    let stride = format::sample_stride(nnz);
    let m = module(dev)?;
    let out = DeviceBuffer::zeroed(dev, stream, 8 * FACT_WORDS, "BCCOO's sampled facts")?;
    let (rp, ci, _) = csr.arrays();
    // Blocks per height (a warp per sampled block row, grid-stride): enough for the most
    // sampled block rows (height 1), at most MAX_FACTS_GRID.
    let bph = format::sampled_block_rows(rows, 1, stride)
        .div_ceil(WARPS)
        .clamp(1, MAX_FACTS_GRID);
    let args = KernelArgs::new()
        .push(rows as i32)
        .push(stride as i64)
        .push(bph as i64)
        .push(rp)
        .push(ci)
        .push(out.addr());
    // SAFETY: bccoo_facts(int rows, long long stride, long long bph, const int* rp, const int*
    // ci, unsigned long long* out): rp, ci are tessera's sound int32 CSR of `rows` rows (sorted
    // rows); out holds FACT_WORDS zeroed u64; 4 * bph blocks of THREADS threads, bph per block
    // height, a warp per sampled block row, grid-stride.
    unsafe {
        launch(
            dev,
            &m.function("bccoo_facts")?,
            4 * bph,
            THREADS,
            stream,
            args,
        )?
    };
    let mut r = [0u64; FACT_WORDS];
    copy_to_host(dev, stream, out.addr(), &mut r)?;
    crate::backend::span("bccoo: facts read back");
    let mut c = SampledCounts::default();
    for (bh, row) in c.blocks.iter_mut().enumerate() {
        row.copy_from_slice(&r[3 * bh..3 * bh + 3]);
    }
    c.jumps = r[12];
    c.far = r[13];
    Ok(c)
}

/// Builds the format of `p` (one slice; its workgroup size pads the threads and sizes the
/// per-workgroup flags) from `csr` on `stream`. Waits for the count's read-back and, at the
/// end, for the build (the escapes' read-back); returns the arrays and the number of blocks.
/// `guess`: the facts' estimate of the blocks of `p`'s shape ([`MatrixFacts::blocks`]), from
/// which the format is allocated while the device counts (where the count comes out above it,
/// the format is allocated after the count instead).
pub(super) fn build<T: Scalar>(
    dev: &Arc<Device>,
    stream: Stream,
    csr: &GpuCsr<T>,
    p: &Params,
    guess: Option<f64>,
) -> Result<Arrays> {
    let t0 = std::time::Instant::now();
    let us = |t: std::time::Instant| t.elapsed().as_secs_f64() * 1e6;
    let fp = p.format;
    let (rows, cols, nnz) = (csr.rows(), csr.cols(), csr.nnz());
    let (bw, bh) = (fp.shape.bw as usize, fp.shape.bh as usize);
    let block_cols = cols.div_ceil(bw);
    if !p.is_valid()
        || fp.slices != 1
        || (fp.col == ColMode::U16 && block_cols >= params::U16_BLOCK_COLS)
        || csr.index64()
        || nnz == 0
        || rows >= i32::MAX as usize
    {
        return Err(Error::Internal(format!(
            "BCCOO's device build of {p} for a {rows} x {cols} matrix of {nnz} entries{}",
            if csr.index64() {
                " (int64 indices)"
            } else {
                ""
            }
        )));
    }
    let m = module(dev)?;
    let shift = bw.trailing_zeros() as i32;
    let area = bw * bh;
    let nbr = rows.div_ceil(bh);
    let (rp, ci, va) = csr.arrays();
    // The total, then the scan's workspace: zeroed together by one memset.
    let [start, res, lid] = DeviceBuffer::alloc_parts(
        dev,
        [4 * (nbr + 1), 16 + workspace_bytes(nbr, 1), 4 * nnz],
        "BCCOO's device build (blocks per block row, totals and scan workspace, entries' blocks)",
    )?;
    res.zero(stream)?;
    // A warp per block row, grid-stride over at most COUNT_BLOCKS_PER_SM blocks per SM.
    let grid = nbr
        .div_ceil(WARPS)
        .clamp(1, COUNT_BLOCKS_PER_SM * dev.sm_count().max(1) as usize);
    let args = KernelArgs::new()
        .push(rows as i32)
        .push(bh as i32)
        .push(shift)
        .push(nbr as i64)
        .push(rp)
        .push(ci)
        .push(start.addr())
        .push(lid.addr());
    // SAFETY: bccoo_block_count(int rows, int bh, int shift, long long nbr, const int* rp,
    // const int* ci, unsigned* count, unsigned* lid): rp, ci are tessera's sound int32 CSR of
    // `rows` rows (sorted rows); count (start) holds nbr + 1 u32, lid nnz u32; a warp per block
    // row, grid-stride over the nbr block rows.
    unsafe {
        launch(
            dev,
            &m.function("bccoo_block_count")?,
            grid,
            THREADS,
            stream,
            args,
        )?
    };
    exclusive_scan(
        dev,
        stream,
        (start.addr(), nbr, 1),
        res.addr(),
        res.addr() + 16,
    )?;
    let queued = us(t0);
    // The value map's size is known before the count reports: allocated while it runs.
    let value_slot = DeviceBuffer::alloc(dev, 4 * nnz, "BCCOO's value map (built on the device)")?;
    let (tile, wg) = (fp.tile as usize, p.wg as usize);
    let vsz = std::mem::size_of::<T>();
    let words = fp.words_per_thread();
    let wbytes = fp.word_bits as usize / 8;
    // The format's threads, padded blocks and arrays (values, bits, columns, full columns,
    // first-result entries, workgroup flags) for `blocks` blocks.
    let layout = |blocks: usize| {
        let threads = blocks.div_ceil(tile).div_ceil(wg) * wg;
        let padded = threads * tile;
        let (col_bytes, full_bytes) = match fp.col {
            ColMode::U16 => (2 * padded, 0),
            ColMode::U32 => (4 * padded, 0),
            ColMode::Delta => (2 * padded, 4 * padded),
        };
        let sizes = [
            vsz * padded * area,
            threads * words * wbytes,
            col_bytes,
            full_bytes,
            4 * (threads + 1),
            threads / wg,
        ];
        (threads, padded, sizes)
    };
    // So is the format, from the facts' estimate of its blocks and a margin (GUESS_MARGIN):
    // the count's read-back is then followed by launches only. On an H200 the format took
    // 220 us to allocate for elasticity 48³ f64 (268 MB) and 34-62 us for 32³ (35-76 MB), after
    // the read-back until session 37.
    let what = "BCCOO's format (built on the device)";
    let guessed = match guess {
        Some(b) if b.is_finite() && b > 0.0 => {
            let margin = if format::sample_stride(nnz) > 1 {
                GUESS_MARGIN
            } else {
                0.0
            };
            let b = (b * (1.0 + margin)).ceil() as usize + GUESS_SLACK_BLOCKS;
            let bytes = DeviceBuffer::parts_bytes(&layout(b.min(nnz + nbr)).2, what)?;
            Some(DeviceBuffer::alloc(dev, bytes, what)?)
        }
        _ => None,
    };
    crate::backend::span("bccoo: count queued, value map, format");
    let mut total = [0u64; 1];
    copy_to_host(dev, stream, res.addr(), &mut total)?;
    crate::backend::span("bccoo: count read back");
    let read = us(t0);
    let blocks = total[0] as usize;
    let (threads, padded, sizes) = layout(blocks);
    if padded * area > u32::MAX as usize {
        return Err(Error::NotSupported(format!(
            "BCCOO with {padded} blocks of {area} values and tile {tile} needs {} value slots, more than 32-bit slots address",
            padded * area
        )));
    }
    let nwg = threads / wg;
    let (parts, slack) = match guessed.map(|g| g.carve(sizes)) {
        Some(Ok(carved)) => carved,
        unused => {
            if let Some(Err(g)) = unused {
                g.free_unused(stream);
            }
            (DeviceBuffer::alloc_parts(dev, sizes, what)?, 0)
        }
    };
    let [values, bits, col, col_full, res_entry, info] = parts;
    let col_mode = match fp.col {
        ColMode::U16 => 0,
        ColMode::U32 => 1,
        ColMode::Delta => 2,
    };
    let args = KernelArgs::new()
        .push(tile as i32)
        .push(fp.word_bits as i32)
        .push(blocks as i64)
        .push(nbr as i64)
        .push(start.addr())
        .push(bits.addr())
        .push(res_entry.addr())
        .push(info.addr());
    // SAFETY: bccoo_tiles(int tile, int word_bits, long long blocks, long long nbr, const
    // unsigned* ends, unsigned char* bits, unsigned* res_entry, unsigned char* wg_info): nwg
    // blocks of wg threads = `threads` format threads of `tile` blocks; bits holds threads *
    // words words of word_bits, res_entry threads + 1 u32, wg_info nwg bytes; ends is start.
    unsafe { launch(dev, &m.function("bccoo_tiles")?, nwg, p.wg, stream, args)? };
    // Block positions per lane the fill stages at a time (each a value block and a column), in
    // 33 places per 32 (the stage's gap against bank conflicts).
    let js = (STAGE_BYTES / (33 * (area * vsz + 4))).clamp(1, tile);
    let stage = 33 * js * (area * vsz + 4);
    let args = KernelArgs::new()
        .push(rows as i32)
        .push(bh as i32)
        .push(shift)
        .push(tile as i32)
        .push(js as i32)
        .push(nbr as i64)
        .push(blocks as i64)
        .push(padded as i64)
        .push(col_mode)
        .push(rp)
        .push(ci)
        .push(va)
        .push(start.addr())
        .push(lid.addr())
        .push(res_entry.addr())
        .push(col.addr())
        .push(col_full.addr())
        .push(values.addr())
        .push(value_slot.addr())
        .push(res.addr() + 8);
    // SAFETY: bccoo_fill_<T>(int rows, int bh, int shift, int tile, int js, long long nbr, long
    // long blocks, long long padded, int col_mode, const int* rp, const int* ci, const T* va,
    // const unsigned* start, const unsigned* lid, const unsigned* res_entry, void* col,
    // unsigned* full, T* values, unsigned* value_slot, unsigned long long* escapes): the CSR as
    // above with its values; start the scanned counts (nbr + 1) whose total is `blocks`, lid as
    // the count wrote it, res_entry as bccoo_tiles wrote it (threads + 1 u32, queued before);
    // one block per warp group (threads / 32 of them) with 33 * js * (area * sizeof(T) + 4)
    // bytes of dynamic shared memory (<= STAGE_BYTES); col holds padded u16 / u32 / i16
    // (col_mode), full padded u32 in delta mode, values bh * padded * bw of T, value_slot nnz
    // u32, escapes one zeroed u64 (res's second word).
    unsafe {
        launch_shared(
            dev,
            &m.function(&format!("bccoo_fill_{}", suffix::<T>()))?,
            threads / 32,
            THREADS,
            stage as u32,
            stream,
            args,
        )?
    };
    crate::backend::span("bccoo: fill and tiles queued");
    let filled = us(t0);
    let mut esc = [0u64; 1];
    copy_to_host(dev, stream, res.addr() + 8, &mut esc)?;
    crate::backend::span("bccoo: escapes read back");
    trace(2, || {
        format!(
            "BCCOO's device build of {nbr} block rows: count and scan queued at {queued:.1} us, read back at {read:.1} us, fill and tiles queued at {filled:.1} us, done at {:.1} us",
            us(t0)
        )
    });
    Ok(Arrays {
        params: fp,
        rows,
        cols,
        nnz,
        block_rows: nbr,
        blocks,
        threads,
        escapes: esc[0] as usize,
        bits,
        col,
        col_full,
        values,
        res_entry,
        slot: value_slot,
        info: vec![(p.wg, info)],
        slack,
    })
}
