// CSR_VECTOR's kernel file and the values each of its defines may take. Plain data:
// `build.rs` compiles this file too (through `src/methods/list.rs`), to build the kernels
// into the library; [`super::params`] re-exports it.

use super::KernelFile;

/// Every `coop` the kernel is built for (§5.1: powers of two up to the warp size).
pub const COOP_VALUES: &[i64] = &[1, 2, 4, 8, 16, 32];

/// CSR_VECTOR's kernel file (Reguly & Giles): `COOP` threads per row is compile-time.
pub const KERNELS: KernelFile = KernelFile {
    name: "csr_vector.cu",
    source: include_str!("../../../kernels/csr_vector.cu"),
    defines: &[("COOP", COOP_VALUES)],
};
