//! BCCOO / BCCOO+: yaSpMV (Yan, Li, Zhang, Zhou, PPoPP'14). Blocked COO with the row indices
//! compressed to one bit per block (0 = last block of a block row) and the column indices to
//! 16 bits, optionally in vertical slices (BCCOO+); a kernel in which every thread sums a
//! fixed number of consecutive blocks sequentially, every workgroup runs a segmented scan over
//! its threads' last partial sums, and workgroups hand partial row sums to the next one by
//! adjacent synchronisation; and an auto-tuner over Table 1.
//!
//! `params.rs`: Table 1, the fixed rule, the tuner's candidates. `format.rs`: the arrays, built
//! on the host. `device.rs`: the same arrays built on the device (the fixed rule, a matrix kept
//! there). `reference.rs`: the kernel's algorithm on the host over those arrays. `host.rs`: the
//! host backend. `cuda.rs`: upload, tuning with CUDA events, launches (`kernels/bccoo.cu`).

// A method's cuda.rs is one of the places `unsafe` may live (kernel launches): ARCHITECTURE.md.
#[allow(unsafe_code)]
pub mod cuda;
// The device build's launches: CUDA code, as cuda.rs.
#[allow(unsafe_code)]
pub mod device;
pub mod format;
pub mod host;
/// The kernel file and the values each of its defines may take.
pub mod kernel;
pub mod params;
pub mod reference;

use crate::backend::cuda::kernels::KernelFile;

pub use params::Params;

use crate::scalar::Scalar;

/// Bytes one product reads of a CSR matrix beyond x and y (values, column indices, row
/// pointers): what [`format::Bccoo::traffic_bytes`] is compared with.
pub fn csr_matrix_bytes(rows: usize, nnz: usize, val_bytes: usize) -> usize {
    nnz * (val_bytes + 4) + (rows + 1) * 4
}

/// The format part of `describe()`: bytes per product against CSR (the paper's Table 3
/// analogue) and the blocks' fill.
pub fn describe_format<T: Scalar>(f: &format::Bccoo<T>, wg: usize) -> String {
    describe_sizes::<T>(
        &f.params, f.rows, f.nnz, f.blocks, f.threads, f.escapes, wg as u32,
    )
}

/// [`describe_format`] from the format's sizes (a format built on the device).
pub(crate) fn describe_sizes<T: Scalar>(
    fp: &params::FormatParams,
    rows: usize,
    nnz: usize,
    blocks: usize,
    threads: usize,
    escapes: usize,
    wg: u32,
) -> String {
    let val_bytes = std::mem::size_of::<T>();
    let bytes = format::traffic_bytes(fp, threads, val_bytes, escapes, wg as usize);
    let csr = csr_matrix_bytes(rows, nnz, val_bytes);
    let area = fp.shape.area();
    format!(
        "format {:.3} MB/product = {:.3}x CSR's {:.3} MB; {} blocks, fill {:.0}%",
        bytes as f64 / 1e6,
        bytes as f64 / csr.max(1) as f64,
        csr as f64 / 1e6,
        blocks,
        100.0 * nnz as f64 / (blocks * area).max(1) as f64
    )
}
