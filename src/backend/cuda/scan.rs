//! Exclusive prefix sums of u32 counts on the device (`kernels/util.cu`, `util_scan_*`): the
//! offsets of a format built on the device from counts its census kernel wrote (TILE's tiles,
//! values and index bytes per tile, its work items per tile row).

use super::kernels::{self, KernelSpec};
use super::{launch, Device, KernelArgs, Stream};
use crate::error::{Error, Result};
use std::sync::Arc;

/// Threads per block of the scan kernels (UTIL_SCAN_THREADS in util.cu).
const SCAN_THREADS: u32 = 256;
/// Values per block (UTIL_SCAN_ITEMS in util.cu).
const SCAN_ITEMS: usize = 1024;

/// Bytes of the workspace [`exclusive_scan`] needs for `fields` arrays of `n` counts.
pub fn workspace_bytes(n: usize, fields: usize) -> usize {
    n.div_ceil(SCAN_ITEMS).max(1) * fields * 8
}

/// Replaces, on `stream`, each of `fields` arrays of `n + 1` u32 at `data` (field f at
/// `data + 4 f (n + 1)`) by the exclusive prefix sums of its first `n` values, with its total
/// (modulo 2^32) at index `n`; the exact totals, as u64, go to `totals` (`fields` words of
/// device memory). `workspace`: [`workspace_bytes`] of device memory, for the block sums.
/// Asynchronous; allocates nothing (a free of a temporary would wait for the device).
pub fn exclusive_scan(
    dev: &Arc<Device>,
    stream: Stream,
    (data, n, fields): (u64, usize, usize),
    totals: u64,
    workspace: u64,
) -> Result<()> {
    if fields == 0 || fields > i32::MAX as usize {
        return Err(Error::Internal(format!("a scan of {fields} fields")));
    }
    let util = dev.module(&KernelSpec::new(&kernels::UTIL, &[])?)?;
    let blocks = n.div_ceil(SCAN_ITEMS).max(1);
    let sums_fn = util.function("util_scan_sums")?;
    let blocks_fn = util.function("util_scan_blocks")?;
    let apply_fn = util.function("util_scan_apply")?;
    let args = KernelArgs::new()
        .push(n as i64)
        .push(fields as i32)
        .push(data)
        .push(workspace);
    // SAFETY: util_scan_sums(long long n, int fields, const unsigned* data, unsigned long
    // long* sums): data holds fields arrays of n + 1 u32 (the caller's contract); workspace
    // (sums) holds blocks * fields u64 (workspace_bytes), one per block of UTIL_SCAN_ITEMS values
    // and field.
    unsafe { launch(dev, &sums_fn, blocks, SCAN_THREADS, stream, args)? };
    let args = KernelArgs::new()
        .push(n as i64)
        .push(blocks as i64)
        .push(fields as i32)
        .push(data)
        .push(workspace)
        .push(totals);
    // SAFETY: util_scan_blocks(long long n, long long nblocks, int fields, unsigned* data,
    // unsigned long long* sums, unsigned long long* totals): one block; sums as above, totals
    // `fields` u64 (the caller's contract), data's index n of each field written.
    unsafe { launch(dev, &blocks_fn, 1, SCAN_THREADS, stream, args)? };
    let args = KernelArgs::new()
        .push(n as i64)
        .push(fields as i32)
        .push(data)
        .push(workspace);
    // SAFETY: util_scan_apply(long long n, int fields, unsigned* data, const unsigned long
    // long* sums): as util_scan_sums, writing data's first n values of each field.
    unsafe { launch(dev, &apply_fn, blocks, SCAN_THREADS, stream, args)? };
    Ok(())
}
