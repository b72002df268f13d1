//! A caller's CSR arrays already in device memory, validated and converted on the device
//! (`util_import_rows` and `util_import_cols` in `kernels/util.cu`) into tessera's own buffers
//! (int32 indices, base 0), with the row statistics computed there too: what
//! `tessera_create_csr` does with device arrays, instead of copying them through the host and
//! checking them there. Columns unsorted within a row are reported, not sorted: the caller
//! then takes the host path, which sorts.

use super::check::{CheckSlab, DeferredCheck, Fuse, BIG_WORK_BYTES, WORK_BYTES};
use super::device::Scratch;
use super::kernels::{self, KernelSpec};
use super::{
    copy_to_device, copy_to_host, launch, Device, DeviceBuffer, Function, KernelArgs, Ready, Stream,
};
use crate::csr::RowStats;
use crate::error::{Error, Result};
use crate::types::IndexBase;
use std::sync::Arc;

/// The caller's CSR in device memory, sizes already checked (each array device-accessible and
/// long enough).
#[derive(Debug, Clone, Copy)]
pub struct DeviceCsr {
    /// Rows, columns and stored entries.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Stored entries.
    pub nnz: usize,
    /// Device addresses of row_ptr (rows + 1 indices), col_ind (nnz indices), values (nnz).
    pub row_ptr: u64,
    /// See `row_ptr`.
    pub col_ind: u64,
    /// See `row_ptr`.
    pub values: u64,
    /// int64 indices (else int32).
    pub is64: bool,
    /// The index base.
    pub base: IndexBase,
}

/// tessera's own copy on the device: int32 row_ptr and col_ind, base 0, columns sorted within
/// each row; the values copied as they are.
#[derive(Debug)]
pub struct Imported {
    /// rows + 1 int32.
    pub row_ptr: DeviceBuffer,
    /// nnz int32.
    pub col_ind: DeviceBuffer,
    /// nnz values.
    pub values: DeviceBuffer,
    /// The row statistics (as [`crate::csr::Csr::stats`] computes them on the host).
    pub stats: RowStats,
    /// Milliseconds spent allocating tessera's three arrays, and in the kernels, the copy and
    /// the read-backs after (`TESSERA_TRACE`).
    pub ms: [f64; 2],
}

/// Threads per block of the import kernels (at most kernels/util.cu's UTIL_IMPORT_WARPS warps).
const BLOCK: u32 = 256;
/// Status words of the kernels (kernels/util.cu).
pub(super) const STATUS: usize = 11;
/// The inspection's words: the accumulators, the blocks done, the result (kernels/util.cu).
const SCRATCH_WORDS: usize = 2 * STATUS + 1;
/// Where the result starts in the scratch words.
const RESULT_AT: u64 = (STATUS as u64 + 1) * 8;
const _: () = assert!(SCRATCH_WORDS * 8 <= super::device::SCRATCH_BYTES);

/// How many tiles `util_inspect` cuts a matrix into: each at most 2,048 rows (one batch of a
/// block's eight loads in flight per thread) and 8,192 entries (four batches), and at least four
/// per SM where there are 256 rows plus entries for each (small matrices spread over the GPU
/// rather than a few blocks). Each tile costs a block a few dependent round trips to memory,
/// so larger tiles take fewer of them in turn: tiles of 1,024 rows and 4,096 entries left the
/// 7-point Laplacian 160³'s check at 153 µs (H100, 26% of the DRAM bandwidth; session 16).
fn inspect_tiles(rows: usize, nnz: usize, sm: usize) -> usize {
    let cap = rows.div_ceil(2048).max(nnz.div_ceil(8192));
    let spread = (4 * sm.max(1)).min((rows + nnz).div_ceil(256));
    cap.max(spread).max(1)
}

/// Validates and converts `p` on `stream` (and waits). `Ok(None)`: the arrays are valid but
/// some row's columns are not sorted. Errors name the entry as the host path does.
pub fn import(
    dev: &Arc<Device>,
    stream: Stream,
    p: &DeviceCsr,
    value_bytes: usize,
) -> Result<Option<Imported>> {
    let base = p.base.offset();
    let t0 = std::time::Instant::now();
    // Eight blocks of 256 per SM fill it; more blocks only add same-address atomics at the end.
    let grid = |n: usize| {
        n.div_ceil(BLOCK as usize)
            .clamp(1, 8 * dev.sm_count().max(1) as usize)
    };
    let util = dev.module(&KernelSpec::new(&kernels::UTIL, &[])?)?;
    let rows_fn = util.function("util_import_rows")?;
    let cols_fn = util.function("util_import_cols")?;
    // tessera's three arrays and the kernels' status words: one allocation.
    let sizes = [(p.rows + 1) * 4, p.nnz * 4, p.nnz * value_bytes, STATUS * 8];
    let [row_ptr, col_ind, values, st] =
        DeviceBuffer::alloc_parts(dev, sizes, "the CSR arrays (row_ptr, col_ind, values)")?;
    let t1 = std::time::Instant::now();
    st.zero(stream)?;
    if p.rows > 0 {
        let args = KernelArgs::new()
            .push(p.rows as i64)
            .push(p.nnz as i64)
            .push(base)
            .push(p.row_ptr)
            .push(p.col_ind)
            .push(p.is64 as i32)
            .push(row_ptr.addr())
            .push(st.addr());
        // SAFETY: util_import_rows(long long rows, long long nnz, long long base, const void*
        // row_ptr, const void* col_ind, int is64, int* out, unsigned long long* status): the
        // caller checked row_ptr for rows + 1 and col_ind for nnz indices of that width; the
        // kernel reads col_ind only inside rows it found within 0..nnz; out holds rows + 1,
        // status STATUS words.
        unsafe { launch(dev, &rows_fn, grid(p.rows), BLOCK, stream, args) }?;
    } else {
        copy_to_device(dev, stream, &[0i32], row_ptr.addr())?;
    }
    if p.nnz > 0 {
        let args = KernelArgs::new()
            .push(p.nnz as i64)
            .push(p.cols as i64)
            .push(base)
            .push(p.col_ind)
            .push(p.is64 as i32)
            .push(col_ind.addr())
            .push(st.addr());
        // SAFETY: util_import_cols(long long nnz, long long cols, long long base, const void*
        // col_ind, int is64, int* out, unsigned long long* status): col_ind holds nnz indices
        // (checked by the caller), out nnz int32, status STATUS words.
        unsafe { launch(dev, &cols_fn, grid(p.nnz), BLOCK, stream, args) }?;
        copy_raw(dev, stream, &values, p.values)?;
    }
    // The one wait of a valid import.
    let mut status = [0u64; STATUS];
    copy_to_host(dev, stream, st.addr(), &mut status)?;
    let ms = [
        (t1 - t0).as_secs_f64() * 1e3,
        t1.elapsed().as_secs_f64() * 1e3,
    ];
    decode(dev, stream, p, status, [row_ptr, col_ind, values], ms)
}

/// Validates `p` and measures its rows on `stream` (and waits) as [`import`] does, keeping
/// nothing: for a CSR that tessera reads in place (`GpuCsr::borrowed`). `Ok(None)`: valid, but
/// some row's columns are not sorted.
pub fn inspect(dev: &Arc<Device>, stream: Stream, p: &DeviceCsr) -> Result<Option<RowStats>> {
    let status = if p.rows > 0 {
        inspection_status(dev, stream, p)?
    } else {
        // No rows to check: decode checks row_ptr[0] and row_ptr[rows] itself.
        [0; STATUS]
    };
    decode_stats(dev, stream, p, status)
}

/// `util_inspect`'s status words for `p` (rows > 0): one kernel whose words are the device's
/// scratch memory, which it leaves zero (no allocation, no clearing, no free); one read-back.
fn inspection_status(dev: &Arc<Device>, stream: Stream, p: &DeviceCsr) -> Result<[u64; STATUS]> {
    let t0 = std::time::Instant::now();
    let mut scratch = dev.scratch()?;
    let (inspect_fn, resident) = inspect_kernel(dev, &mut scratch, p.is64 as usize)?;
    if !scratch.zero {
        // First use, or a use that failed half-way: cleared on this stream (a synchronous
        // memset would break another thread's graph capture).
        DeviceBuffer::borrowed(dev, scratch.addr, SCRATCH_WORDS * 8).zero(stream)?;
    }
    // The scratch words are no longer known to be zero until the read-back succeeds.
    scratch.zero = false;
    let words = [scratch.addr, scratch.addr + RESULT_AT, 0];
    // SAFETY: the accumulators and the result are the scratch memory (SCRATCH_WORDS words,
    // zero), held by this guard until the read-back; no verdict.
    unsafe { launch_inspect(dev, stream, p, (&inspect_fn, resident), words, None) }?;
    let t1 = std::time::Instant::now();
    let mut status = [0u64; STATUS];
    copy_to_host(dev, stream, scratch.addr + RESULT_AT, &mut status)?;
    scratch.zero = true;
    crate::backend::trace(2, || {
        format!(
            "inspection of {} rows: launch {:.1} us, read-back {:.1} us",
            p.rows,
            (t1 - t0).as_secs_f64() * 1e6,
            t1.elapsed().as_secs_f64() * 1e6
        )
    });
    Ok(status)
}

/// The inspection kernels: int32, int64, and int32 also writing HOLA's row starts ([`Fuse`]).
const INSPECT_KERNELS: [&str; 3] = [
    "util_inspect_i32",
    "util_inspect_i64",
    "util_inspect_starts_i32",
];

/// `util_inspect_*` ([`INSPECT_KERNELS`]`[which]`) and how many of its blocks fit on an SM,
/// looked up once per device (kept in its scratch guard).
fn inspect_kernel(
    dev: &Arc<Device>,
    scratch: &mut Scratch,
    which: usize,
) -> Result<(Function, usize)> {
    if let Some(known) = &scratch.inspect[which] {
        return Ok(known.clone());
    }
    let util = dev.module(&KernelSpec::new(&kernels::UTIL, &[])?)?;
    let f = util.function(INSPECT_KERNELS[which])?;
    let known = (f.clone(), f.resident_blocks(dev, BLOCK));
    scratch.inspect[which] = Some(known.clone());
    Ok(known)
}

/// Launches `util_inspect` over `p` (rows > 0) on `stream` with its words at `[accumulators,
/// result, verdict]` (device addresses; verdict 0 for none), and with `fuse` HOLA's row starts
/// and a zeroed range in the workspace at the address given with it.
///
/// # Safety
/// The accumulators are 12 zero words no other launch in flight uses, the result 11 writable
/// words, the verdict (if not 0) a writable 32-bit word; `p`'s arrays were checked by the
/// caller for rows + 1 and nnz indices of their width; with `fuse`, `nblocks + 1` int32 at the
/// workspace and its `carry_bytes` at `carry_at` are writable and used by nothing in flight.
unsafe fn launch_inspect(
    dev: &Arc<Device>,
    stream: Stream,
    p: &DeviceCsr,
    (f, resident): (&Function, usize),
    [status, result, verdict]: [u64; 3],
    fuse: Option<(Fuse, u64)>,
) -> Result<()> {
    let tiles = inspect_tiles(p.rows, p.nnz, dev.sm_count() as usize);
    let args = KernelArgs::new()
        .push(p.rows as i64)
        .push(p.nnz as i64)
        .push(p.cols as i64)
        .push(p.base.offset())
        .push(tiles as i64)
        .push(p.row_ptr)
        .push(p.col_ind)
        .push(status)
        .push(result)
        .push(verdict);
    let args = match fuse {
        None => args,
        Some((f, work)) => args
            .push(work)
            .push(f.npb as i64)
            .push(f.nblocks as i64)
            .push(work + f.carry_at as u64)
            .push((f.carry_bytes / 4) as i64),
    };
    // As many blocks as are resident at once (each takes its tiles in turn): a second wave
    // would start late with as many tiles as the first.
    let blocks = tiles.min(resident * dev.sm_count().max(1) as usize);
    // SAFETY: util_inspect_{i32,i64}(long long rows, long long nnz, long long cols, long long
    // base, long long tiles, const I* row_ptr, const I* col_ind, unsigned long long* status,
    // unsigned long long* result, unsigned* verdict) and util_inspect_starts_i32(the same, int*
    // starts, long long npb, long long nblocks, int* zero, long long nzero): the kernel reads
    // col_ind only within 0..nnz and writes starts only for rows it found sound; the words and
    // the workspace as this function's contract says.
    unsafe { launch(dev, f, blocks, BLOCK, stream, args) }
}

/// Makes the device's check slab and looks the inspection kernels up, if not done yet: what
/// the first deferred check would otherwise pay (page-locked memory is slow to allocate),
/// paid when a handle opens the device instead.
pub fn prepare_deferred_checks(dev: &Arc<Device>) -> Result<()> {
    let mut scratch = dev.scratch()?;
    for which in 0..INSPECT_KERNELS.len() {
        inspect_kernel(dev, &mut scratch, which)?;
    }
    if scratch.checks.is_none() {
        let _c = dev.enter()?;
        scratch.checks = Some(CheckSlab::new(Stream::default())?);
    }
    Ok(())
}

/// Queues the check of `p` on `stream` without waiting for it ([`DeferredCheck`]): the
/// kernel's result goes to a slot of the device's check slab, and with `fuse` (int32 arrays; a
/// layout that fits the slot's workspace) it also prepares a provisional HOLA there.
/// `Ok(None)` when there is nothing to queue (no rows: [`inspect`] checks row_ptr itself) or
/// every slot is taken: the caller checks synchronously then.
pub fn inspect_deferred(
    dev: &Arc<Device>,
    stream: Stream,
    p: &DeviceCsr,
    fuse: Option<Fuse>,
) -> Result<Option<DeferredCheck>> {
    if p.rows == 0 {
        return Ok(None);
    }
    let fuse = fuse.filter(|f| {
        !p.is64
            && f.carry_bytes % 4 == 0
            && (f.nblocks + 1) * 4 <= f.carry_at
            && f.carry_at + f.carry_bytes <= BIG_WORK_BYTES
    });
    let t0 = std::time::Instant::now();
    let mut scratch = dev.scratch()?;
    if scratch.checks.is_none() {
        let _c = dev.enter()?;
        scratch.checks = Some(CheckSlab::new(stream)?);
    }
    let Some(slab) = scratch.checks.as_mut() else {
        return Ok(None);
    };
    let Some(slot) = slab.take() else {
        return Ok(None);
    };
    crate::backend::span("check: slot");
    let [status, verdict, result, small] = slab.addresses(slot);
    // The workspace the kernel fills: the slot's when the layout fits it, else a big one if
    // one is free, else none (the provisional HOLA then makes its own).
    let work = fuse.and_then(|f| {
        if f.carry_at + f.carry_bytes <= WORK_BYTES {
            Some((f, (small, None)))
        } else {
            slab.take_big().map(|(i, w)| (f, (w, Some(i))))
        }
    });
    let which = if work.is_some() { 2 } else { p.is64 as usize };
    let kernel = match inspect_kernel(dev, &mut scratch, which) {
        Ok(k) => k,
        Err(e) => {
            if let Some(slab) = scratch.checks.as_mut() {
                slab.give_back(slot);
                if let Some((_, (_, Some(i)))) = work {
                    slab.give_back_big(i);
                }
            }
            return Err(e);
        }
    };
    drop(scratch);
    crate::backend::span("check: kernel");
    // A failure from here on keeps the slot out of the free list (its accumulators may not be
    // zero).
    // SAFETY: the slot's accumulators are zero (the slab was zeroed, and the kernel of its
    // last check, which has finished, left them zero) and only this check uses them; its
    // result words and verdict are writable (host memory mapped for the device, device
    // memory); with `fuse`, the starts and the zeroed range fit the workspace chosen above
    // (the slot's, or a big one taken from the free list), which only this check's matrix
    // uses.
    unsafe {
        launch_inspect(
            dev,
            stream,
            p,
            (&kernel.0, kernel.1),
            [status, result, verdict],
            work.map(|(f, (w, _))| (f, w)),
        )
    }?;
    crate::backend::span("check: launch");
    let ready = Ready::record(dev, stream)?;
    crate::backend::span("check: event");
    crate::backend::trace(2, || {
        format!(
            "deferred inspection of {} rows queued in {:.1} us{}",
            p.rows,
            t0.elapsed().as_secs_f64() * 1e6,
            match work {
                Some((_, (_, Some(_)))) => " (HOLA's row starts in a big workspace)",
                Some(_) => " (HOLA's row starts in the slot)",
                None => "",
            }
        )
    });
    Ok(Some(DeferredCheck::new(
        dev,
        slot,
        ready,
        *p,
        verdict,
        (small, work.map(|(_, w)| w)),
    )))
}

/// The row statistics from an inspection's result words, as [`inspect`] gives them.
pub(super) fn decode_stats(
    dev: &Arc<Device>,
    stream: Stream,
    p: &DeviceCsr,
    status: [u64; STATUS],
) -> Result<Option<RowStats>> {
    let none = || DeviceBuffer::borrowed(dev, 0, 0);
    let imp = decode(dev, stream, p, status, [none(), none(), none()], [0.0; 2])?;
    Ok(imp.map(|i| i.stats))
}

/// The outcome of an import or an inspection from its status words: the first error in the
/// host path's order (the entries it names read back from the caller's arrays), `Ok(None)` for
/// columns unsorted within some row, else the row statistics with `arrays` (tessera's copies;
/// empty buffers when inspecting).
fn decode(
    dev: &Arc<Device>,
    stream: Stream,
    p: &DeviceCsr,
    status: [u64; STATUS],
    arrays: [DeviceBuffer; 3],
    ms: [f64; 2],
) -> Result<Option<Imported>> {
    let base = p.base.offset();
    let isz = if p.is64 { 8 } else { 4 };
    let index = |addr: u64, i: usize| -> Result<i64> {
        if p.is64 {
            let mut v = [0i64];
            copy_to_host(dev, stream, addr + (i * isz) as u64, &mut v)?;
            Ok(v[0])
        } else {
            let mut v = [0i32];
            copy_to_host(dev, stream, addr + (i * isz) as u64, &mut v)?;
            Ok(v[0] as i64)
        }
    };
    let first_error = || -> Result<()> {
        let first = index(p.row_ptr, 0)?;
        if first != base {
            return Err(Error::InvalidMatrix(format!(
                "row_ptr[0] = {first} but it must equal the index base ({base}, {})",
                p.base.c_name()
            )));
        }
        Ok(())
    };
    let last_error = || -> Result<()> {
        let last = index(p.row_ptr, p.rows)?;
        if last != p.nnz as i64 + base {
            return Err(Error::InvalidMatrix(format!(
                "row_ptr[rows] = row_ptr[{}] = {last} but it must equal nnz + base = {}",
                p.rows,
                p.nnz as i64 + base
            )));
        }
        Ok(())
    };
    if p.rows == 0 {
        // No row kernel to check them.
        first_error()?;
        last_error()?;
    }
    // The errors in the host path's order: row_ptr[0], a bad row, row_ptr[rows], a bad column.
    if status[9] != 0 {
        first_error()?;
    }
    if status[0] != 0 {
        let i = !status[0] as usize;
        let (a, b) = (index(p.row_ptr, i)?, index(p.row_ptr, i + 1)?);
        return Err(Error::InvalidMatrix(if a > b {
            format!(
                "row_ptr is not non-decreasing: row_ptr[{i}] = {a} > row_ptr[{}] = {b}",
                i + 1
            )
        } else {
            format!(
                "row_ptr[{}] = {b} points past the last entry: with nnz = {} and base {base} it may be at most {}",
                i + 1,
                p.nnz,
                p.nnz as i64 + base
            )
        }));
    }
    if status[10] != 0 {
        last_error()?;
    }
    if status[1] != 0 {
        let k = !status[1] as usize;
        let c = index(p.col_ind, k)?;
        // row_ptr is valid (checked above): the row of entry k, for the message, by a binary
        // search over the caller's row_ptr (a few reads of one index each).
        let (mut lo, mut hi) = (0usize, p.rows);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if index(p.row_ptr, mid)? - base <= k as i64 {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let row = lo;
        return Err(Error::InvalidMatrix(format!(
            "col_ind[{k}] = {c} (row {}) is out of range: with cols = {} and base {base} columns run from {base} to {}",
            row as i64 + base,
            p.cols,
            p.cols as i64 - 1 + base
        )));
    }
    if status[2] != status[3] {
        return Ok(None);
    }
    let (rows, nnz) = (p.rows, p.nnz);
    let mean = if rows == 0 {
        0.0
    } else {
        nnz as f64 / rows as f64
    };
    let empty = status[7] as usize;
    let stats = RowStats {
        rows,
        cols: p.cols,
        nnz,
        mean,
        std_dev: if rows == 0 {
            0.0
        } else {
            (status[4] as f64 / rows as f64 - mean * mean)
                .max(0.0)
                .sqrt()
        },
        min: if rows == 0 { 0 } else { !status[6] as usize },
        max: status[5] as usize,
        empty_rows: empty,
        col_spread: if rows > empty {
            status[8] as f64 / (rows - empty) as f64
        } else {
            0.0
        },
    };
    let [row_ptr, col_ind, values] = arrays;
    Ok(Some(Imported {
        row_ptr,
        col_ind,
        values,
        stats,
        ms,
    }))
}

/// Copies `dst.bytes()` bytes from device address `src` into `dst` on `stream`.
fn copy_raw(dev: &Arc<Device>, stream: Stream, dst: &DeviceBuffer, src: u64) -> Result<()> {
    let _g = dev.enter()?;
    // SAFETY: dst is our allocation of dst.bytes(); src is device-accessible for that many
    // bytes (checked by the caller).
    super::check(
        unsafe {
            cudarc::driver::sys::cuMemcpyDtoDAsync_v2(dst.addr(), src, dst.bytes(), stream.raw())
        },
        "cuMemcpyDtoDAsync",
    )
}
