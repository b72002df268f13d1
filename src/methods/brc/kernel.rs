// BRC's kernel file and the values each of its defines may take. Plain data:
// `build.rs` compiles this file too (through `src/methods/list.rs`), to build the kernels
// into the library; [`super::params`] re-exports it.

use super::KernelFile;

/// BRC's kernel file (Ashari et al.): the SpMV, its ELL part (hybrid) and the split/empty-row
/// kernels. No defines: B1, rep, the ELL width and the block size are launch arguments.
pub const KERNELS: KernelFile = KernelFile {
    name: "brc.cu",
    source: include_str!("../../../kernels/brc.cu"),
    defines: &[],
};
