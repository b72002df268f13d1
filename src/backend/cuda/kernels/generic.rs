//! The kernel files of the backend itself, over the CSR on the device, and the text prepended
//! to every kernel file. Plain data: `build.rs` compiles this file too.

use super::KernelFile;

/// Text prepended to every kernel file.
pub const COMMON: &str = include_str!("../../../../kernels/common.cuh");

/// Threads cooperating on one row in the transpose kernel: powers of two up to a warp.
pub const TRANSPOSE_COOP_VALUES: &[i64] = &[1, 2, 4, 8, 16, 32];

/// The atomic transpose product over CSR (every method's TRANSPOSE path).
pub const TRANSPOSE: KernelFile = KernelFile {
    name: "transpose.cu",
    source: include_str!("../../../../kernels/transpose.cu"),
    defines: &[("COOP", TRANSPOSE_COOP_VALUES)],
};

/// y scaling and the value-map scatter.
pub const UTIL: KernelFile = KernelFile {
    name: "util.cu",
    source: include_str!("../../../../kernels/util.cu"),
    defines: &[],
};
