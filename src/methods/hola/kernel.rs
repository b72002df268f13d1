// HOLA's kernel file and the values each of its defines may take. Plain data:
// `build.rs` compiles this file too (through `src/methods/list.rs`), to build the kernels
// into the library; [`super::params`] re-exports it.

use super::KernelFile;

/// Allowed `THREADS` (first: the default). Multiples of the warp; with NPT 8 and f64 the
/// shared output buffer of 512 threads is 32 KiB, under the 48 KiB of static shared memory.
pub const THREADS_VALUES: &[i64] = &[256, 128, 512];
/// Allowed `NPT`: powers of two holding whole 16-byte vectors (Alg. 5: 2 doubles or 4 floats
/// or 4 column ids per vector).
pub const NPT_VALUES: &[i64] = &[8, 4];
/// `SORT`: 0 off, 1 sort each thread's column ids before gathering x (§3.2).
pub const SORT_VALUES: &[i64] = &[0, 1];

/// HOLA's kernel file (Steinberger et al.): row starts, prescale, SpMV and SpMVT.
pub const KERNELS: KernelFile = KernelFile {
    name: "hola.cu",
    source: include_str!("../../../kernels/hola.cu"),
    defines: &[
        ("THREADS", THREADS_VALUES),
        ("NPT", NPT_VALUES),
        ("SORT", SORT_VALUES),
    ],
};
