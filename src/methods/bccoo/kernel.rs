// BCCOO's kernel file and the values each of its defines may take. Plain data:
// `build.rs` compiles this file too (through `src/methods/list.rs`), to build the kernels
// into the library; [`super::params`] re-exports it.

use super::KernelFile;

/// Block widths the kernel is built for (Table 1).
pub const BW_VALUES: &[i64] = &[1, 2, 4];
/// Block heights the kernel is built for (Table 1).
pub const BH_VALUES: &[i64] = &[1, 2, 3, 4];

/// BCCOO's kernel file (yaSpMV): the SpMV and BCCOO+'s combine kernel. Block width and height
/// are compile-time (the per-thread register arrays); the workgroup size and the rest of the
/// paper's Table 1 are launch arguments.
pub const KERNELS: KernelFile = KernelFile {
    name: "bccoo.cu",
    source: include_str!("../../../kernels/bccoo.cu"),
    defines: &[("BCCOO_BW", BW_VALUES), ("BCCOO_BH", BH_VALUES)],
};
