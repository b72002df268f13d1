// TILE's kernel file and the values each of its defines may take. Plain data:
// `build.rs` compiles this file too (through `src/methods/list.rs`), to build the kernels
// into the library; [`super::params`] re-exports it.

use super::KernelFile;

/// TILE's kernel file (TileSpMV, Niu et al.): the tile-row kernel and the pre-scale of split
/// tile rows. No defines: te, th, tbalance and the deferral shape the host-built format; the
/// rest are launch arguments.
pub const KERNELS: KernelFile = KernelFile {
    name: "tile.cu",
    source: include_str!("../../../kernels/tile.cu"),
    defines: &[],
};
