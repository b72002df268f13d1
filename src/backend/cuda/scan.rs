//! Exclusive prefix sums of u32 counts on the device (`kernels/util.cu`, `util_scan`): the
//! offsets of a format built on the device from counts its census kernel wrote (TILE's tiles,
//! values and index bytes per tile, its work items per tile row; BCCOO's blocks per block row).

use super::kernels::{self, KernelSpec};
use super::{launch, Device, KernelArgs, Stream};
use crate::error::{Error, Result};
use std::sync::Arc;

/// Threads per block of the scan kernel (UTIL_SCAN_THREADS in util.cu).
const SCAN_THREADS: u32 = 256;
/// Values per block (UTIL_SCAN_ITEMS in util.cu).
const SCAN_ITEMS: usize = 1024;

/// Blocks of the scan of `n` counts.
fn blocks(n: usize) -> usize {
    n.div_ceil(SCAN_ITEMS).max(1)
}

/// Bytes of the workspace [`exclusive_scan`] needs for `fields` arrays of `n` counts (the
/// blocks' ticket and one word per block and field), which must be zero when it starts.
pub fn workspace_bytes(n: usize, fields: usize) -> usize {
    (1 + blocks(n) * fields) * 8
}

/// Replaces, on `stream`, each of `fields` arrays of `n + 1` u32 at `data` (field f at
/// `data + 4 f (n + 1)`) by the exclusive prefix sums of its first `n` values, with its total
/// (modulo 2^32) at index `n`; the exact totals, as u64, go to `totals` (`fields` words of
/// device memory). `workspace`: [`workspace_bytes`] of device memory, zeroed by the caller
/// before (a build zeroes it with its other words: one memset for all). One launch;
/// asynchronous; allocates nothing (a free of a temporary would wait for the device).
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
    let args = KernelArgs::new()
        .push(n as i64)
        .push(fields as i32)
        .push(data)
        .push(workspace)
        .push(totals);
    // SAFETY: util_scan(long long n, int fields, unsigned* data, unsigned long long* words,
    // unsigned long long* totals): data holds fields arrays of n + 1 u32 (the caller's
    // contract), words 1 + blocks * fields zeroed u64 (workspace_bytes, zeroed: the caller's
    // contract), totals `fields` u64. One block per UTIL_SCAN_ITEMS counts (at least one): the
    // blocks' tickets run 0 .. blocks, so every look-back ends at block 0.
    unsafe {
        launch(
            dev,
            &util.function("util_scan")?,
            blocks(n),
            SCAN_THREADS,
            stream,
            args,
        )
    }
}
