//! How a [`Matrix`] comes to be: from host arrays (checked on the host, or on the device from
//! [`HOST_IMPORT_MIN_SIZE`] rows plus entries up) and from device arrays (checked on the device).
#![forbid(unsafe_code)]

use super::{trace, Matrix};
use crate::backend::cuda::csr::GpuCsr;
use crate::backend::cuda::{self, Stream};
use crate::csr::{Csr, CsrParts};
use crate::error::{Error, Result};
use crate::handle::Handle;
use crate::methods;
use crate::scalar::Scalar;
use std::sync::Arc;
use std::time::Instant;

/// From this many rows plus entries up, [`Matrix::new`] on the CUDA backend validates and
/// measures the caller's int32 base-0 host arrays on the device instead of on the host: an
/// upload as they are and one inspection kernel with one read-back
/// ([`Matrix::from_host_inspected`]), against the direct path's single pass on the host (about
/// 1-1.5 ns a row or entry on the GPU machines' CPUs, session 22) before the same upload.
/// Measured on an H200 (session 27, run D: the 13 shared matrices, AUTO, f64 and f32, two
/// rounds against the direct path): the first product from host arrays took 20-160 us less
/// from 108K rows plus entries up (bayer10, as-caida, arrow, sparse-images, Groebner; Andrews,
/// bcsstk16 and cit-HepPh within the noise), but 10-25 us more at 30-34K (zenios, n1024-l1):
/// the device's fixed cost is about that of 35-50K entries on the host, hence 2^16. Other
/// arrays (int64, base 1) are converted on the device by the import kernels
/// ([`Matrix::from_device`]'s), a fixed 0.1-0.2 ms that pays only from
/// [`HOST_CONVERT_MIN_SIZE`] (H100 machine, session 6: the host passes 3-5 ns an entry and
/// about 20 ns a row for row_ptr's serial check); below that they take the host path.
pub(crate) const HOST_IMPORT_MIN_SIZE: i64 = 1 << 16;

/// From this many rows plus entries up, host arrays that tessera's CSR cannot take as they are
/// (int64, base 1) are converted on the device (see [`HOST_IMPORT_MIN_SIZE`]).
pub(crate) const HOST_CONVERT_MIN_SIZE: i64 = 1 << 18;

/// Where [`Matrix::new`] validates host arrays (see there).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreatePath {
    /// On the host: `Csr::from_parts` and the statistics.
    Host,
    /// On the device (CUDA backend): upload, the import kernels; no host copy.
    Device,
    /// On the CUDA backend, for arrays tessera's CSR can take as they are (int32, base 0, well
    /// formed, each row's columns sorted: `CsrParts::stats_as_is`, one read-only pass on the
    /// host that also measures the rows): uploaded from the caller's arrays, no host copy. Any
    /// other arrays take the host path.
    Direct,
}

/// The path of a host create of `rows` rows and `nnz` entries on the CUDA backend: the device
/// path from [`HOST_IMPORT_MIN_SIZE`] rows plus entries up for arrays tessera's CSR takes as
/// they are (`as_is`: int32, base 0), from [`HOST_CONVERT_MIN_SIZE`] for others; the direct path
/// below (measured against the host path on an H200 in session 22: the first product from host
/// arrays 0.57 -> 0.72 of cuSPARSE's, geometric mean of 13 shared matrices, both rounds, lower
/// on each of the ten it applies to; `notes/end-to-end.md`), which sends other arrays to the
/// host path. `TESSERA_HOST_IMPORT=0` the host path always, `=copy` the host path below the
/// sizes, `=direct` the direct path below [`HOST_CONVERT_MIN_SIZE`] whatever the arrays (the
/// default before session 27), `=all` the device path always (tests of small matrices).
fn host_create_path(rows: i64, nnz: i64, as_is: bool) -> CreatePath {
    let size = rows.saturating_add(nnz);
    let min = if as_is {
        HOST_IMPORT_MIN_SIZE
    } else {
        HOST_CONVERT_MIN_SIZE
    };
    match std::env::var("TESSERA_HOST_IMPORT").as_deref() {
        Ok("0") => CreatePath::Host,
        Ok("all") => CreatePath::Device,
        Ok("direct") if size < HOST_CONVERT_MIN_SIZE => CreatePath::Direct,
        _ if size >= min => CreatePath::Device,
        Ok("copy") => CreatePath::Host,
        _ => CreatePath::Direct,
    }
}

/// Where an import's time went, for `TESSERA_TRACE`.
fn import_detail(imp: Option<&cuda::import::Imported>) -> String {
    imp.map_or_else(String::new, |i| {
        let [alloc, rest] = i.ms;
        format!(" (allocations {alloc:.2} ms, then kernels, copy and read-backs {rest:.2} ms)")
    })
}

impl<T: Scalar> Matrix<T> {
    /// Validates and copies the caller's CSR arrays (see [`Csr::from_parts`]: the errors and
    /// their sentences are the same on every path).
    ///
    /// On the CUDA backend, from [`HOST_IMPORT_MIN_SIZE`] rows plus entries up for int32 base-0
    /// arrays ([`HOST_CONVERT_MIN_SIZE`] for others), the arrays go to the device and are
    /// validated and measured there (int32 base 0: uploaded as they are into tessera's CSR and
    /// inspected; others: converted by the kernels of [`Matrix::from_device`]), and the matrix
    /// is kept there: the host copy is downloaded only when something reads it (a format built
    /// on the host, [`Matrix::csr`]). Unsorted rows, or too little device memory, take the host
    /// path. Below that size, arrays tessera's CSR can take as they are (int32, base 0, well
    /// formed, sorted) are checked in one read-only pass on the host and uploaded from the
    /// caller's memory ([`CreatePath::Direct`]); any others take the host path:
    /// [`Csr::from_parts`] converts, sorts or refuses them. `TESSERA_HOST_IMPORT=0` always
    /// takes the host path, `=copy` below the sizes, `=direct` the direct path below
    /// [`HOST_CONVERT_MIN_SIZE`], `=all` the device path at every size.
    pub fn new(handle: &Handle, parts: CsrParts<'_, T>) -> Result<Self> {
        let as_is = parts.int32_base0().is_some();
        Self::new_via(
            handle,
            parts,
            host_create_path(parts.rows, parts.nnz, as_is),
        )
    }

    /// [`Matrix::new`] on the path given (tests compare them): `Device` and `Direct` on a CUDA
    /// handle still fall back to the host path where `new` would.
    #[doc(hidden)]
    pub fn new_via(handle: &Handle, parts: CsrParts<'_, T>, path: CreatePath) -> Result<Self> {
        let made = match (path, handle.cuda()) {
            (CreatePath::Device, Some(dev)) => Self::from_host_via_device(handle, dev, &parts)?,
            (CreatePath::Direct, Some(dev)) => Self::from_host_as_is(handle, dev, &parts)?,
            _ => None,
        };
        if let Some(m) = made {
            return Ok(m);
        }
        let t0 = Instant::now();
        let csr = Csr::from_parts(parts)?;
        let t1 = Instant::now();
        let m = Self::from_csr(handle, csr);
        trace(|| {
            format!(
                "create {} x {}, nnz {} from host arrays on the host: checks and copy {:.2} ms, statistics {:.2} ms",
                m.stats.rows,
                m.stats.cols,
                m.stats.nnz,
                (t1 - t0).as_secs_f64() * 1e3,
                t1.elapsed().as_secs_f64() * 1e3
            )
        });
        Ok(m)
    }

    /// The device path of [`Matrix::new`]; `Ok(None)` sends the caller to the host path (sizes
    /// it reports, unsorted rows, device memory short).
    fn from_host_via_device(
        handle: &Handle,
        dev: &Arc<cuda::Device>,
        p: &CsrParts<'_, T>,
    ) -> Result<Option<Self>> {
        use crate::csr::{check_dim, Indices};
        let (Ok(rows), Ok(cols), Ok(nnz)) = (
            check_dim("rows", p.rows),
            check_dim("cols", p.cols),
            check_dim("nnz", p.nnz),
        ) else {
            return Ok(None);
        };
        if p.row_ptr.len() != rows + 1 || p.col_ind.len() != nnz || p.values.len() != nnz {
            return Ok(None);
        }
        if let Some((rp, ci)) = p.int32_base0().filter(|_| nnz > 0) {
            return Self::from_host_inspected(handle, dev, (rows, cols), (rp, ci, p.values));
        }
        let t0 = Instant::now();
        let is64 = matches!(p.row_ptr, Indices::I64(_));
        if is64 != matches!(p.col_ind, Indices::I64(_)) {
            return Err(Error::Internal(
                "row_ptr and col_ind of different widths".into(),
            ));
        }
        let device = (|| -> Result<Option<cuda::import::Imported>> {
            // New buffers: the staged uploads need no ordering with the handle's stream.
            let upload = |ix: Indices<'_>, what: &str| match ix {
                Indices::I32(s) => cuda::DeviceBuffer::from_slice(dev, Stream(0), s, what),
                Indices::I64(s) => cuda::DeviceBuffer::from_slice(dev, Stream(0), s, what),
            };
            let (rp, ci) = (upload(p.row_ptr, "row_ptr")?, upload(p.col_ind, "col_ind")?);
            let va = cuda::DeviceBuffer::from_slice(dev, Stream(0), p.values, "values")?;
            let uploaded = t0.elapsed();
            let raw = cuda::import::DeviceCsr {
                rows,
                cols,
                nnz,
                row_ptr: rp.addr(),
                col_ind: ci.addr(),
                values: va.addr(),
                is64,
                base: p.base,
            };
            let imp =
                cuda::import::import(dev, handle.cuda_stream(), &raw, std::mem::size_of::<T>());
            trace(|| {
                format!(
                    "create {rows} x {cols}, nnz {nnz} from host arrays on the device: upload {:.2} ms, import {:.2} ms{}; no host copy",
                    uploaded.as_secs_f64() * 1e3,
                    (t0.elapsed() - uploaded).as_secs_f64() * 1e3,
                    import_detail(imp.as_ref().ok().and_then(Option::as_ref))
                )
            });
            imp
        })();
        match device {
            Ok(Some(imp)) => Self::from_import(handle, dev, imp).map(Some),
            Ok(None) | Err(Error::AllocFailed(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The direct path of [`Matrix::new`] ([`CreatePath::Direct`]): arrays tessera's CSR takes
    /// as they are, checked and measured in one read-only pass on the host, then uploaded from
    /// the caller's memory (each copy waited for, as analyze's upload of a host copy is); the
    /// matrix keeps no host copy until something reads it. `Ok(None)` sends the caller to the
    /// host path: other arrays (which it converts, sorts or refuses with its own sentence), no
    /// entries, device memory short, a kernel of the CSR that does not compile or load, a copy
    /// that fails.
    fn from_host_as_is(
        handle: &Handle,
        dev: &Arc<cuda::Device>,
        p: &CsrParts<'_, T>,
    ) -> Result<Option<Self>> {
        use crate::csr::Indices;
        let t0 = Instant::now();
        let (Indices::I32(row_ptr), Indices::I32(col_ind)) = (p.row_ptr, p.col_ind) else {
            return Ok(None);
        };
        let Some(stats) = p.stats_as_is().filter(|s| s.nnz > 0) else {
            return Ok(None);
        };
        let checked = t0.elapsed();
        let transpose = methods::transpose::gpu_launch(&stats, dev.sm_count());
        let gpu = match GpuCsr::upload_arrays(
            dev,
            handle.cuda_stream(),
            (stats.rows, stats.cols),
            (row_ptr, col_ind, p.values),
            transpose,
        ) {
            Ok(gpu) => gpu,
            // The host path makes no device object until analyze: a create from host arrays
            // succeeds whatever the device's state, as it did before this path existed, and
            // analyze reports the failure (a kernel that does not compile or load, memory).
            Err(Error::AllocFailed(_) | Error::CompileFailed(_) | Error::ExecutionFailed(_)) => {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        trace(|| {
            format!(
                "create {} x {}, nnz {} from host arrays as they are: checks and statistics {:.2} ms, upload {:.2} ms; no host copy",
                stats.rows,
                stats.cols,
                stats.nnz,
                checked.as_secs_f64() * 1e3,
                (t0.elapsed() - checked).as_secs_f64() * 1e3
            )
        });
        let gpu = Some(Arc::new(gpu));
        Ok(Some(Self::with_copies(handle, None, gpu, stats)))
    }

    /// The device path for int32 base-0 arrays with entries: uploaded as they are into
    /// tessera's CSR (one allocation), then validated and measured there by one inspection
    /// kernel and one read-back (`import::inspect`, the check of the arrays a matrix reads in
    /// place), nothing converted and no temporary. `Ok(None)` sends the create to the host path:
    /// unsorted rows (which it sorts), or a device that cannot take the arrays now (memory, a
    /// kernel that does not load, a failed copy: analyze then reports it, as on the direct path).
    fn from_host_inspected(
        handle: &Handle,
        dev: &Arc<cuda::Device>,
        (rows, cols): (usize, usize),
        (row_ptr, col_ind, values): (&[i32], &[i32], &[T]),
    ) -> Result<Option<Self>> {
        let t0 = Instant::now();
        let stream = handle.cuda_stream();
        let made = (|| -> Result<Option<Self>> {
            let arrays = GpuCsr::upload_raw(dev, stream, (row_ptr, col_ind, values))?;
            let uploaded = t0.elapsed();
            let raw = cuda::import::DeviceCsr {
                rows,
                cols,
                nnz: values.len(),
                row_ptr: arrays[0].addr(),
                col_ind: arrays[1].addr(),
                values: arrays[2].addr(),
                is64: false,
                base: crate::types::IndexBase::Zero,
            };
            let Some(stats) = cuda::import::inspect(dev, stream, &raw)? else {
                return Ok(None);
            };
            let transpose = methods::transpose::gpu_launch(&stats, dev.sm_count());
            let gpu = GpuCsr::from_inspected(dev, (rows, cols), arrays, transpose)?;
            trace(|| {
                format!(
                    "create {rows} x {cols}, nnz {} from host arrays on the device as they are: upload {:.2} ms, inspection {:.2} ms; no host copy",
                    values.len(),
                    uploaded.as_secs_f64() * 1e3,
                    (t0.elapsed() - uploaded).as_secs_f64() * 1e3
                )
            });
            Ok(Some(Self::with_copies(
                handle,
                None,
                Some(Arc::new(gpu)),
                stats,
            )))
        })();
        match made {
            Err(Error::AllocFailed(_) | Error::CompileFailed(_) | Error::ExecutionFailed(_)) => {
                Ok(None)
            }
            other => other,
        }
    }

    /// A matrix whose arrays the import kernels accepted (`imp`), kept on the device only: its
    /// host copy is made when something reads it (`Matrix::host_csr`).
    fn from_import(
        handle: &Handle,
        dev: &Arc<cuda::Device>,
        imp: cuda::import::Imported,
    ) -> Result<Self> {
        let stats = imp.stats;
        let transpose = methods::transpose::gpu_launch(&stats, dev.sm_count());
        let gpu = GpuCsr::from_imported(dev, imp, transpose)?;
        Ok(Self::with_copies(handle, None, Some(Arc::new(gpu)), stats))
    }

    /// A matrix over the caller's CSR arrays in device memory (CUDA backend), read in place
    /// by the methods over the CSR: nothing is copied. The arrays are validated and measured
    /// (row statistics) on the device first, and must stay alive while the matrix exists; the
    /// methods that build a format of their own (BRC, TILE, BCCOO, AUTO's background build)
    /// download the arrays once and keep their own copy. `writes` says what the caller may do
    /// to the arrays meanwhile, and so which methods may run ([`BorrowedWrites`]). Base 0 (base
    /// one is NOT_SUPPORTED), sorted columns (`Ok(None)` for unsorted ones); int64 arrays serve
    /// CSR_VECTOR's non-transposed product only. Value updates write into the caller's array.
    pub fn borrow_device(
        handle: &Handle,
        p: &cuda::import::DeviceCsr,
        writes: super::BorrowedWrites,
    ) -> Result<Option<Self>> {
        let Some(dev) = handle.cuda() else {
            return Err(Error::InvalidValue(
                "device arrays need a CUDA handle".into(),
            ));
        };
        if p.base != crate::types::IndexBase::Zero {
            return Err(Error::NotSupported(
                "a matrix over the caller's arrays needs index base 0 (tessera_create_csr copies and rebases one-based arrays)".into(),
            ));
        }
        let stream = handle.cuda_stream();
        let t0 = Instant::now();
        let Some(stats) = cuda::import::inspect(dev, stream, p)? else {
            return Ok(None);
        };
        trace(|| {
            format!(
                "borrow {} x {}, nnz {}: inspected in {:.3} ms",
                p.rows,
                p.cols,
                p.nnz,
                t0.elapsed().as_secs_f64() * 1e3
            )
        });
        let transpose = methods::transpose::gpu_launch(&stats, dev.sm_count());
        let gpu = GpuCsr::borrowed(
            dev,
            (p.rows, p.cols, p.nnz),
            [p.row_ptr, p.col_ind, p.values],
            p.is64,
            transpose,
        )?;
        let mut m = Self::with_copies(handle, None, Some(Arc::new(gpu)), stats);
        m.unannounced_writes = writes == super::BorrowedWrites::Unannounced;
        Ok(Some(m))
    }

    /// A matrix from CSR arrays in device memory (CUDA backend): validated, converted to
    /// tessera's int32 base-0 CSR and measured (row statistics) on the device, and kept there:
    /// the host copy is downloaded only when something reads it. `Ok(None)` when
    /// some row's columns are not sorted: the caller then takes the host path
    /// ([`Matrix::new`] on host copies of the arrays), which sorts them.
    pub fn from_device(handle: &Handle, p: &cuda::import::DeviceCsr) -> Result<Option<Self>> {
        let Some(dev) = handle.cuda() else {
            return Err(Error::InvalidValue(
                "device arrays need a CUDA handle".into(),
            ));
        };
        let stream = handle.cuda_stream();
        let t0 = Instant::now();
        let Some(imp) = cuda::import::import(dev, stream, p, std::mem::size_of::<T>())? else {
            return Ok(None);
        };
        let detail = import_detail(Some(&imp));
        let m = Self::from_import(handle, dev, imp)?;
        trace(|| {
            format!(
                "create {} x {}, nnz {} from device arrays: import {:.2} ms{detail}; no host copy",
                p.rows,
                p.cols,
                p.nnz,
                t0.elapsed().as_secs_f64() * 1e3
            )
        });
        Ok(Some(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_arrays_go_to_the_device_from_their_paths_size() {
        // (Run where TESSERA_HOST_IMPORT is unset; no other unit test sets it.)
        if std::env::var_os("TESSERA_HOST_IMPORT").is_some() {
            return;
        }
        let at = |size: i64, as_is| host_create_path(size / 2, size - size / 2, as_is);
        // int32 base 0: the host's pass below 2^16, the device's inspection from there.
        assert_eq!(at(HOST_IMPORT_MIN_SIZE - 1, true), CreatePath::Direct);
        assert_eq!(at(HOST_IMPORT_MIN_SIZE, true), CreatePath::Device);
        // Others (the direct path sends them to the host path) converted on the device only
        // from 2^18, where the import kernels' fixed cost pays.
        assert_eq!(at(HOST_IMPORT_MIN_SIZE, false), CreatePath::Direct);
        assert_eq!(at(HOST_CONVERT_MIN_SIZE - 1, false), CreatePath::Direct);
        assert_eq!(at(HOST_CONVERT_MIN_SIZE, false), CreatePath::Device);
    }

    // The direct path's range for int32 base-0 arrays ends before the converting import's.
    const _: () = assert!(HOST_IMPORT_MIN_SIZE < HOST_CONVERT_MIN_SIZE);
}
