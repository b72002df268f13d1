//! The SpMV methods, one folder each, plus what they share: the two traits a method implements
//! (its host reference over its own arrays, and its GPU form), the one list of methods
//! ([`methods!`](crate::methods) below: the [`Algorithm`] each implements, its kernel file, how
//! its host and GPU forms are built), the value map scatter used by `update_values`, the generic
//! transpose over CSR, and the GPU toolkit the methods share ([`gpu`]).
//!
//! Adding a method: a folder with `kernel.rs` (its kernel file), `params.rs` (its tunables),
//! `format.rs`, `reference.rs`, `host.rs` (a [`HostMethod`]) and `cuda.rs` (a [`GpuMethod`]);
//! a `.cu` file under `kernels/`; its value in the C enum `Algorithm`; and one line in
//! `list.rs`.
// `deny`, not `forbid`: each method's `cuda.rs` opts back in (unsafe lives only in the API layer
// and CUDA code); format.rs, reference.rs and params.rs forbid it themselves.
#![deny(unsafe_code)]

pub mod bccoo;
pub mod brc;
pub mod cancel;
pub mod csr_vector;
pub mod gpu;
pub mod hola;
pub mod tile;
pub mod transpose;

use crate::backend::cuda::csr::GpuCsr;
use crate::backend::cuda::kernels::{self, KernelFile, KernelSpec};
use crate::backend::cuda::{Device, Stream};
use crate::csr::{Csr, RowStats};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::types::{Algorithm, Tuning};
use std::sync::Arc;

/// What analyze hands a method: the matrix and how to choose parameters.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a, T> {
    /// tessera's CSR of the matrix on the host (sorted columns, base 0): absent when the matrix
    /// lives on the device only and the method does not read it ([`needs_host_csr`]).
    pub host: Option<&'a Csr<T>>,
    /// Its row statistics.
    pub stats: &'a RowStats,
    /// NONE: the method's fixed rule; QUICK/EXHAUSTIVE: time candidates (GPU only); ONLINE:
    /// tune during the first products (methods without ONLINE tuning treat it as QUICK).
    pub tuning: Tuning,
    /// The handle asks for a bitwise reproducible product (`TESSERA_DETERMINISTIC=1`): a method
    /// with a deterministic variant uses it.
    pub deterministic: bool,
}

impl<'a, T> Request<'a, T> {
    /// The request of a method's fixed rule (TUNING_NONE): what AUTO's background build asks.
    pub fn fixed_rule(csr: &'a Csr<T>, stats: &'a RowStats, deterministic: bool) -> Self {
        Request {
            host: Some(csr),
            stats,
            tuning: Tuning::None,
            deterministic,
        }
    }

    /// The request of a method's fixed rule over the device CSR alone (no host copy): what
    /// AUTO's builds of a matrix kept on the device ask.
    pub fn on_device(stats: &'a RowStats, deterministic: bool) -> Self {
        Request {
            host: None,
            stats,
            tuning: Tuning::None,
            deterministic,
        }
    }

    /// The host CSR; an internal error when analyze did not provide it although the method
    /// reads it (see [`needs_host_csr`]).
    pub fn csr(&self) -> Result<&'a Csr<T>> {
        self.host.ok_or_else(|| {
            Error::Internal("a method read the host CSR of a matrix kept on the device only".into())
        })
    }
}

/// Whether analyze must hand `alg` (CUDA backend, `tuning`) tessera's host CSR: every format
/// built on the host (BRC, TILE, BCCOO) and AUTO's timing of candidates do; CSR_VECTOR and
/// HOLA run over the device CSR alone. A matrix created from device arrays (or, above
/// `HOST_IMPORT_MIN_SIZE`, from host arrays) keeps its CSR on the device until one of them
/// asks.
///
/// BRC with TUNING_NONE builds its format on the device when its rows are all about as long
/// (`brc::cuda::builds_on_device`), TILE when its tile grid is small beside its non-zeros
/// (`tile::device::builds_on_device`: every matrix AUTO gives TILE), BCCOO for any matrix with
/// non-zeros (`bccoo::device::builds_on_device`): no host copy either.
pub fn needs_host_csr(alg: Algorithm, tuning: Tuning, stats: &RowStats) -> bool {
    match alg {
        Algorithm::CsrVector | Algorithm::Hola => false,
        Algorithm::Auto => matches!(tuning, Tuning::Quick | Tuning::Exhaustive),
        Algorithm::Brc => {
            tuning != Tuning::None
                || !(brc::cuda::builds_on_device(stats) || brc::cuda::fills_on_device(stats))
        }
        Algorithm::Tile => tuning != Tuning::None || !tile::device::builds_on_device(stats),
        Algorithm::Bccoo => tuning != Tuning::None || !bccoo::device::builds_on_device(stats),
    }
}

/// Loads the kernels a background build of `alg` on the device runs (its build's and its
/// products'; BCCOO's products are specialised by a block shape its build chooses: only the
/// build's): AUTO's analyze has this done at once, on a worker, while the device has little
/// queued, for a load waits for everything queued on the device (`Module::load_all`).
pub fn preload_gpu(alg: Algorithm, dev: &Device) -> Result<()> {
    let spec = match alg {
        Algorithm::Brc => KernelSpec::new(&brc::params::KERNELS, &[])?,
        Algorithm::Tile => KernelSpec::new(&tile::params::KERNELS, &[])?,
        Algorithm::Bccoo => bccoo::device::build_spec()?,
        _ => return Ok(()),
    };
    dev.preload(&spec)
}

/// A method's format on the host, run by its `reference.rs`: the host backend and the oracle.
pub trait HostMethod<T: Scalar>: std::fmt::Debug + Send + Sync {
    /// y = alpha*A*x + beta*y over the method's own arrays. `a` is the matrix's CSR, with the
    /// same values. `beta == 0` never reads y. x has `cols` and y `rows` entries.
    fn spmv(&self, a: &Csr<T>, alpha: T, x: &[T], beta: T, y: &mut [T]);

    /// y = alpha*A^T*x + beta*y; the default is the generic CSR transpose.
    fn spmv_transpose(&self, a: &Csr<T>, alpha: T, x: &[T], beta: T, y: &mut [T]) {
        transpose::spmv_transpose(a, alpha, x, beta, y)
    }

    /// The CSR's values changed (same pattern): bring the method's own value arrays up to date
    /// through its value map.
    fn update_values(&mut self, a: &Csr<T>);

    /// Bytes the method keeps beyond the CSR arrays.
    fn extra_bytes(&self) -> usize;

    /// The parameters and how they were chosen, for `info.params`.
    fn describe(&self) -> String;

    /// True when the non-transposed product is bitwise reproducible run to run.
    fn deterministic(&self) -> bool;
}

/// A method ready to run on a device. The matrix's CSR arrays stay on the device beside it
/// ([`GpuCsr`]): TRANSPOSE and `update_values` work on them.
pub trait GpuMethod<T: Scalar>: std::fmt::Debug + Send + Sync {
    /// y = alpha*A*x + beta*y on `stream`: asynchronous, allocation-free, no host sync. x and y
    /// are device addresses already checked to hold `cols` and `rows` values; alpha != 0.
    #[allow(clippy::too_many_arguments)]
    fn spmv(
        &self,
        csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()>;

    /// y = alpha*A^T*x + beta*y; the default is the generic atomic transpose over CSR.
    #[allow(clippy::too_many_arguments)]
    fn spmv_transpose(
        &self,
        csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        csr.spmv_transpose(stream, alpha, x, beta, y)
    }

    /// The device CSR's values changed (same pattern): refresh the method's own value arrays
    /// from them on `stream` (the value-map scatter). Methods that read the CSR do nothing.
    fn refresh_values(&self, _csr: &GpuCsr<T>, _stream: Stream) -> Result<()> {
        Ok(())
    }

    /// Device bytes the method keeps beyond the CSR arrays (exact: its allocations).
    fn device_bytes(&self) -> usize;

    /// The parameters in use and how they were chosen, for `info.params`.
    fn describe(&self) -> String;

    /// True unless run-time (ONLINE) tuning is still searching.
    fn settled(&self) -> bool {
        true
    }

    /// True when the non-transposed product is bitwise reproducible run to run.
    fn deterministic(&self) -> bool;
}

/// A method's format built on the host, waiting to go to the device: the host half of
/// [`prepare_gpu`] with TUNING_NONE, split off by [`build_on_host`] so that AUTO can build a
/// heavy format on a worker thread while products run on a lighter one.
pub trait HostBuilt<T: Scalar>: Send {
    /// The device half: uploads the format on `stream` (allocating), loads the kernels, and
    /// returns the method ready to run once `stream`'s work is done.
    fn upload(
        self: Box<Self>,
        dev: &Arc<Device>,
        stream: Stream,
        csr: &GpuCsr<T>,
    ) -> Result<Box<dyn GpuMethod<T>>>;
}

/// The host half of `alg`'s TUNING_NONE [`prepare_gpu`] on a device of `sm` SMs, for the
/// methods whose format is worth building off the critical path (BRC and TILE: their host
/// conversions take thousands of products' time on large matrices, notes/end-to-end.md); it
/// makes no CUDA call. `None` for the others, whose set-up is one step (`prepare_gpu`).
pub fn build_on_host<T: Scalar>(
    alg: Algorithm,
    sm: u32,
    req: &Request<'_, T>,
) -> Option<Result<Box<dyn HostBuilt<T>>>> {
    fn boxed<T: Scalar, H: HostBuilt<T> + 'static>(
        r: Result<H>,
    ) -> Option<Result<Box<dyn HostBuilt<T>>>> {
        Some(r.map(|h| Box::new(h) as Box<dyn HostBuilt<T>>))
    }
    match alg {
        Algorithm::Brc => boxed(brc::cuda::BrcGpu::build_on_host(sm, req)),
        Algorithm::Tile => boxed(tile::cuda::TileGpu::build_on_host(sm, req)),
        _ => None,
    }
}

pub(crate) use crate::types::HOST_SM_COUNT;

/// The one list of methods (`list.rs`): each line names the [`Algorithm`], the method's
/// folder (whose `kernel.rs` declares its kernel file), and the types that build its host and
/// GPU forms.
/// It makes [`IMPLEMENTED`], [`KERNEL_FILES`], [`prepare_host`] and [`prepare_gpu`].
macro_rules! methods {
    ($($alg:ident => $folder:ident, $host:ident, $gpu:ident;)*) => {
        /// Methods this build can run, in the order AUTO tries them.
        pub const IMPLEMENTED: &[Algorithm] = &[$(Algorithm::$alg),*];

        /// Every kernel file: the methods' own, then the generic ones over CSR (the transpose
        /// product, y scaling and the value-map scatter). The CI compile check compiles every
        /// specialisation of each; `TESSERA_KERNELS_DIR` may replace any of them.
        pub const KERNEL_FILES: &[&KernelFile] =
            &[$(&$folder::kernel::KERNELS,)* &kernels::TRANSPOSE, &kernels::UTIL];

        /// Builds `alg`'s host format (the host backend). `alg` is a concrete method, not AUTO.
        pub fn prepare_host<T: Scalar>(
            alg: Algorithm,
            req: &Request<'_, T>,
        ) -> Result<Box<dyn HostMethod<T>>> {
            match alg {
                $(Algorithm::$alg => Ok(Box::new($folder::host::$host::new(req)?)),)*
                a => Err(not_implemented(a)),
            }
        }

        /// Builds `alg`'s format on the device and loads its kernels, choosing parameters as
        /// `req.tuning` says. `csr` is the matrix's CSR already on the device.
        pub fn prepare_gpu<T: Scalar>(
            alg: Algorithm,
            dev: &Arc<Device>,
            stream: Stream,
            csr: &GpuCsr<T>,
            req: &Request<'_, T>,
        ) -> Result<Box<dyn GpuMethod<T>>> {
            match alg {
                $(Algorithm::$alg => Ok(Box::new($folder::cuda::$gpu::prepare(dev, stream, csr, req)?)),)*
                a => Err(not_implemented(a)),
            }
        }
    };
}

// The list itself, in a file of its own: `build.rs` reads it too, to build every method's
// kernels into the library.
include!("list.rs");

/// True for methods this build can run.
pub fn implemented(alg: Algorithm) -> bool {
    IMPLEMENTED.contains(&alg)
}

fn not_implemented(alg: Algorithm) -> Error {
    Error::NotSupported(format!(
        "{} is not implemented in tessera {} yet",
        alg.c_name(),
        env!("CARGO_PKG_VERSION")
    ))
}

/// Every kernel specialisation any code path can request (each file's define values, crossed):
/// what the CI compile check compiles.
pub fn kernel_specs() -> Vec<KernelSpec> {
    kernels::all_specs(KERNEL_FILES)
}

/// What `TESSERA_KERNELS_DIR` changes, for a tool's header: `None` when the variable is not set;
/// else which kernel files are read from it, or that none is.
pub fn kernel_override_summary() -> Option<String> {
    kernels::override_summary(KERNEL_FILES)
}

/// Writes the caller's values (in CSR order) into a format's value array through its value map:
/// `dst[slot[k]] = src[k]`. Slots not named by the map (padding) are left as they are — zero.
/// This is the host twin of the generic GPU scatter kernel every method's update uses.
pub fn scatter_values<T: Scalar>(src: &[T], slot: &[u32], dst: &mut [T]) {
    assert_eq!(src.len(), slot.len(), "one slot per CSR non-zero");
    for (&v, &s) in src.iter().zip(slot) {
        dst[s as usize] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_list_holds_every_file_and_every_define_value() {
        let all = kernel_specs();
        // csr_vector COOP 6, hola THREADS x NPT x SORT 12, bccoo BW x BH 12, brc 1, tile 1,
        // transpose COOP 6, util 1.
        assert_eq!(all.len(), 6 + 12 + 12 + 1 + 1 + 6 + 1);
        for f in KERNEL_FILES {
            assert!(all.iter().any(|s| s.file_name() == f.name), "{}", f.name);
        }
        assert!(KernelSpec::new(&bccoo::params::KERNELS, &[4, 3]).is_ok());
        assert!(KernelSpec::new(&bccoo::params::KERNELS, &[3, 3]).is_err());
        let s = KernelSpec::new(&csr_vector::params::KERNELS, &[8]).unwrap();
        assert!(s.source().contains("TESSERA_INSTANTIATE(CSR_VECTOR_ENTRY)"));
    }

    #[test]
    fn built_in_kernels_cover_every_specialisation_for_every_architecture_or_none() {
        use crate::backend::cuda::builtin;
        let specs = kernel_specs();
        if let Some(why) = builtin::none_because() {
            println!("skipped: no kernels built in ({why})");
            assert_eq!(builtin::count(), 0);
            return;
        }
        for &arch in builtin::archs() {
            for s in &specs {
                let img = builtin::image(s, &s.source(), arch)
                    .unwrap_or_else(|| panic!("{} for sm_{arch} is not built in", s.label()));
                assert!(img.starts_with(b"\x7fELF"), "{} sm_{arch}", s.label());
            }
        }
        assert_eq!(builtin::count(), specs.len() * builtin::archs().len());
    }

    #[test]
    fn the_transpose_kernel_takes_every_coop_csr_vector_can_choose() {
        for c in csr_vector::params::COOP_VALUES {
            assert!(kernels::TRANSPOSE_COOP_VALUES.contains(c), "COOP {c}");
        }
    }

    /// The parameters of every `__global__` entry point of `src`: (name, count).
    fn entry_points(src: &str) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        let mut rest = src;
        while let Some(i) = rest.find("__global__") {
            rest = &rest[i + "__global__".len()..];
            let mut open = rest.find('(').expect("a parameter list");
            // Launch bounds come before the name: skip their parentheses.
            if rest[..open].trim_end().ends_with("__launch_bounds__") {
                let close = open + rest[open..].find(')').expect("launch bounds close");
                open = close + 1 + rest[close + 1..].find('(').expect("a parameter list");
            }
            // The name is the last identifier before the list.
            let head = &rest[..open];
            let name = head
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#'))
                .rfind(|w| !w.is_empty())
                .unwrap_or("?")
                .to_string();
            let (mut depth, mut commas, mut end) = (0i32, 0usize, open);
            for (k, c) in rest[open..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = open + k;
                            break;
                        }
                    }
                    ',' if depth == 1 => commas += 1,
                    _ => {}
                }
            }
            let empty = rest[open + 1..end].trim().is_empty();
            out.push((name, if empty { 0 } else { commas + 1 }));
            rest = &rest[end..];
        }
        out
    }

    /// A launch pushes at most MAX_KERNEL_ARGS arguments (KernelArgs asserts it): every entry
    /// point of every kernel file must fit, or its launch would fail at run time on a GPU only.
    #[test]
    fn every_entry_point_takes_no_more_arguments_than_a_launch_can_pass() {
        let mut seen = 0;
        for file in KERNEL_FILES {
            for (name, n) in entry_points(file.source) {
                assert!(
                    n <= crate::backend::cuda::MAX_KERNEL_ARGS,
                    "{}: {name} takes {n} arguments, a launch passes at most {}",
                    file.name,
                    crate::backend::cuda::MAX_KERNEL_ARGS
                );
                seen += 1;
            }
        }
        assert!(seen >= 10, "found only {seen} entry points");
        let probe = entry_points(
            "extern \"C\" __global__ void __launch_bounds__(512, 2) k_##S(int a, T *b, const void *c) {}",
        );
        assert_eq!(probe, vec![("k_##S".to_string(), 3)]);
    }

    #[test]
    fn scatter_through_a_value_map_leaves_padding_zero() {
        let mut dst = [0.0f64; 5];
        scatter_values(&[1.0, 2.0, 3.0], &[4, 0, 2], &mut dst);
        assert_eq!(dst, [2.0, 0.0, 3.0, 0.0, 1.0]);
    }
}
