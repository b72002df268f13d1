//! cuSPARSE, the baseline of `tessera bench`: the generic `cusparseSpMV` on
//! the same CSR, with `CUSPARSE_SPMV_ALG_DEFAULT` or `CUSPARSE_SPMV_CSR_ALG2`, each after
//! `cusparseSpMV_preprocess`. Not part of the library's own SpMV path: it exists so that every
//! speedup is measured against what a user would otherwise call, in the same run.
//!
//! libcusparse is loaded, not linked (cudarc's `dynamic-loading`), and cudarc panics when the
//! library or a symbol is missing, so [`probe`] checks first, with the very names cudarc tries,
//! that the library loads and has every entry point used here, and answers NOT_SUPPORTED with a
//! sentence naming what is missing.
//!
//! Every call pushes the device's primary context (the one the CUDA runtime, and so cuSPARSE,
//! uses) for its duration. The dense-vector descriptors are made once, in [`CusparseSpmv::new`]
//! (against scratch vectors, for the buffer-size query and the preprocessing), and each
//! [`CusparseSpmv::spmv`] points them at the caller's x and y with `cusparseDnVecSetValues`: host
//! work only, nothing is allocated. They sit behind a mutex, so one `CusparseSpmv` may be used
//! from several threads (the calls are serialised).
//!
//! A matrix without rows, columns or non-zeros never reaches cuSPARSE (some of its algorithms
//! reject nnz = 0): its product is y = 0, written with one `cuMemsetD8Async` on the stream.

use crate::backend::cuda::{check, synchronize, Device, DeviceBuffer, Stream};
use crate::csr::Csr;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::types::ValueType;
use cudarc::cusparse::sys as cs;
use cudarc::driver::sys as cu;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// Every cuSPARSE entry point this module calls: [`probe`] checks them all, so that none of
/// cudarc's lazy symbol look-ups can panic later.
const SYMBOLS: &[&str] = &[
    "cusparseCreate",
    "cusparseDestroy",
    "cusparseSetStream",
    "cusparseCreateConstCsr",
    "cusparseDestroySpMat",
    "cusparseCreateDnVec",
    "cusparseDestroyDnVec",
    "cusparseDnVecSetValues",
    "cusparseSpMV_bufferSize",
    "cusparseSpMV_preprocess",
    "cusparseSpMV",
];

/// Checks that libcusparse loads under one of the names cudarc tries (the first that loads is
/// the one cudarc will use) and that it has every entry point used here
/// (`cusparseSpMV_preprocess` needs cuSPARSE 12.4 or later).
pub fn probe() -> Result<()> {
    let mut why = Vec::new();
    for lib in cudarc::get_lib_name_candidates("cusparse") {
        // SAFETY: loading NVIDIA's cuSPARSE runs its initialisers, which have no preconditions
        // on our side; the handle is closed when `l` drops, and cudarc opens the same name
        // itself later.
        let l = match unsafe { libloading::Library::new(&lib) } {
            Ok(l) => l,
            Err(e) => {
                why.push(e.to_string());
                continue;
            }
        };
        let missing: Vec<&str> = SYMBOLS
            .iter()
            .copied()
            .filter(|s| {
                // SAFETY: only the symbol's presence is checked; the address, read as an
                // untyped pointer, is never called or dereferenced.
                unsafe { l.get::<*const c_void>(s.as_bytes()) }.is_err()
            })
            .collect();
        if !missing.is_empty() {
            return Err(Error::NotSupported(format!(
                "the cuSPARSE library {lib} lacks {} (cuSPARSE 12.4 or later is needed for the cuSPARSE baseline)",
                missing.join(", ")
            )));
        }
        return Ok(());
    }
    why.dedup();
    Err(Error::NotSupported(format!(
        "the cuSPARSE library libcusparse could not be loaded ({}); install the CUDA toolkit's cuSPARSE or put its lib folder on LD_LIBRARY_PATH to compare with cuSPARSE",
        why.first().map(String::as_str).unwrap_or("not found")
    )))
}

/// Turns a cuSPARSE status into tessera's error: out of memory or resources is ALLOC_FAILED, an
/// unsupported request NOT_SUPPORTED, everything else EXECUTION_FAILED, each with the status's
/// name (taken from the enum, so no call into the library is needed).
fn cusparse_error(s: cs::cusparseStatus_t, what: &str) -> Error {
    use cs::cusparseStatus_t as S;
    let detail = format!("{what} failed: {s:?}");
    match s {
        S::CUSPARSE_STATUS_ALLOC_FAILED | S::CUSPARSE_STATUS_INSUFFICIENT_RESOURCES => {
            Error::AllocFailed(detail)
        }
        S::CUSPARSE_STATUS_NOT_SUPPORTED | S::CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED => {
            Error::NotSupported(detail)
        }
        _ => Error::ExecutionFailed(detail),
    }
}

/// `Ok` for CUSPARSE_STATUS_SUCCESS, else the mapped error.
fn ok(s: cs::cusparseStatus_t, what: &str) -> Result<()> {
    if s == cs::cusparseStatus_t::CUSPARSE_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(cusparse_error(s, what))
    }
}

/// The cuSPARSE SpMV algorithm of the baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CusparseAlg {
    /// `CUSPARSE_SPMV_ALG_DEFAULT` (CSR: ALG1).
    Default,
    /// `CUSPARSE_SPMV_CSR_ALG2`.
    CsrAlg2,
}

/// Both algorithms, in the order the benchmark runs them.
pub const CUSPARSE_ALGS: [CusparseAlg; 2] = [CusparseAlg::Default, CusparseAlg::CsrAlg2];

impl CusparseAlg {
    fn raw(self) -> cs::cusparseSpMVAlg_t {
        match self {
            CusparseAlg::Default => cs::cusparseSpMVAlg_t::CUSPARSE_SPMV_ALG_DEFAULT,
            CusparseAlg::CsrAlg2 => cs::cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG2,
        }
    }
}

impl std::fmt::Display for CusparseAlg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            CusparseAlg::Default => "ALG_DEFAULT",
            CusparseAlg::CsrAlg2 => "CSR_ALG2",
        })
    }
}

fn data_type<T: Scalar>() -> cs::cudaDataType {
    match T::VALUE_TYPE {
        ValueType::F32 => cs::cudaDataType::CUDA_R_32F,
        ValueType::F64 => cs::cudaDataType::CUDA_R_64F,
    }
}

/// The cuSPARSE objects of one prepared product.
struct Objects {
    handle: cs::cusparseHandle_t,
    mat: cs::cusparseConstSpMatDescr_t,
    x: cs::cusparseDnVecDescr_t,
    y: cs::cusparseDnVecDescr_t,
}

impl Objects {
    /// Destroys whichever objects exist. The caller has the device's context pushed.
    fn destroy(&mut self) {
        // SAFETY: each non-null handle was created by this module, is destroyed once (it is
        // nulled here) and no work of this object is queued that has not been synchronised by
        // the caller's stream order (cuSPARSE destroys descriptors on the host only; the handle
        // waits for its own work).
        unsafe {
            if !self.x.is_null() {
                let _ = cs::cusparseDestroyDnVec(self.x);
                self.x = std::ptr::null_mut();
            }
            if !self.y.is_null() {
                let _ = cs::cusparseDestroyDnVec(self.y);
                self.y = std::ptr::null_mut();
            }
            if !self.mat.is_null() {
                let _ = cs::cusparseDestroySpMat(self.mat);
                self.mat = std::ptr::null();
            }
            if !self.handle.is_null() {
                let _ = cs::cusparseDestroy(self.handle);
                self.handle = std::ptr::null_mut();
            }
        }
    }
}

/// cuSPARSE's y = A x on one CSR matrix, prepared for one algorithm and one stream: the cuSPARSE
/// handle, the matrix's CSR arrays on the device, the sparse and dense descriptors, and the
/// workspace (kept, as the preprocessing requires). Dropping it destroys all of them.
pub struct CusparseSpmv<T> {
    /// None for an empty matrix (no rows, columns or non-zeros): cuSPARSE is not used.
    objects: Option<Mutex<Objects>>,
    alg: CusparseAlg,
    /// False when cuSPARSE answered NOT_SUPPORTED to `cusparseSpMV_preprocess` for `alg`.
    preprocessed: bool,
    stream: Stream,
    rows: usize,
    cols: usize,
    nnz: usize,
    row_ptr: DeviceBuffer,
    col_ind: DeviceBuffer,
    values: DeviceBuffer,
    workspace: DeviceBuffer,
    dev: Arc<Device>,
    _t: PhantomData<T>,
}

// SAFETY: cuSPARSE handles and descriptors are host objects not bound to a thread; every use
// pushes the device's context on the calling thread, and they are only reached through the
// Mutex, so no two threads use them at once. The rest is Send + Sync already.
unsafe impl<T: Send> Send for CusparseSpmv<T> {}
// SAFETY: as above; `&self` methods touch the cuSPARSE objects only under the Mutex.
unsafe impl<T: Sync> Sync for CusparseSpmv<T> {}

impl<T: Scalar> std::fmt::Debug for CusparseSpmv<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CusparseSpmv({} x {}, nnz {}, {} {}{}, {} device bytes)",
            self.rows,
            self.cols,
            self.nnz,
            T::VALUE_TYPE,
            self.alg,
            if self.preprocessed || self.objects.is_none() {
                ""
            } else {
                " (without preprocessing: not supported)"
            },
            self.device_bytes()
        )
    }
}

impl<T: Scalar> CusparseSpmv<T> {
    /// Uploads `csr` (tessera's validated CSR: `i32` indices, base 0) and prepares y = A x with
    /// `alg` on `stream`: handle, `cusparseSetStream`, descriptors, the buffer-size query, the
    /// workspace and `cusparseSpMV_preprocess`. Waits for the stream at the end.
    ///
    /// `stream` must be the default stream or a stream of `dev`'s primary context (as
    /// [`crate::backend::cuda::check_stream`] checks), alive as long as this object.
    pub fn new(dev: &Arc<Device>, stream: Stream, csr: &Csr<T>, alg: CusparseAlg) -> Result<Self> {
        probe()?;
        let (rows, cols, nnz) = (csr.rows(), csr.cols(), csr.nnz());
        let empty = rows == 0 || cols == 0 || nnz == 0;
        let upload = |src: &[i32], what: &str| -> Result<DeviceBuffer> {
            if empty {
                DeviceBuffer::alloc(dev, 0, what)
            } else {
                DeviceBuffer::from_slice(dev, stream, src, what)
            }
        };
        let row_ptr = upload(csr.row_ptr(), "the cuSPARSE row_ptr")?;
        let col_ind = upload(csr.col_ind(), "the cuSPARSE col_ind")?;
        let values = if empty {
            DeviceBuffer::alloc(dev, 0, "the cuSPARSE values")?
        } else {
            DeviceBuffer::from_slice(dev, stream, csr.values(), "the cuSPARSE values")?
        };
        let mut me = CusparseSpmv {
            objects: None,
            alg,
            preprocessed: false,
            stream,
            rows,
            cols,
            nnz,
            row_ptr,
            col_ind,
            values,
            workspace: DeviceBuffer::alloc(dev, 0, "the cuSPARSE workspace")?,
            dev: dev.clone(),
            _t: PhantomData,
        };
        if empty {
            return Ok(me);
        }
        // Stored first, so that Drop destroys whatever was created if a later step fails.
        let objects = me.objects.insert(Mutex::new(Objects {
            handle: std::ptr::null_mut(),
            mat: std::ptr::null(),
            x: std::ptr::null_mut(),
            y: std::ptr::null_mut(),
        }));
        let o = objects.get_mut().unwrap_or_else(|p| p.into_inner());
        let vt = data_type::<T>();
        let size = std::mem::size_of::<T>();
        // Scratch x and y, for the descriptors during the size query and the preprocessing
        // (freed on return; spmv points the descriptors at the caller's vectors).
        let sx = DeviceBuffer::alloc(dev, cols * size, "the cuSPARSE scratch x")?;
        let sy = DeviceBuffer::alloc(dev, rows * size, "the cuSPARSE scratch y")?;
        {
            let _g = dev.enter()?;
            // SAFETY: the context is current; the out-pointer is valid. Destroyed in Drop.
            ok(
                unsafe { cs::cusparseCreate(&mut o.handle) },
                "cusparseCreate",
            )?;
            // SAFETY: live handle; the stream is the caller's, of this context (contract above).
            ok(
                unsafe { cs::cusparseSetStream(o.handle, stream.0 as cs::cudaStream_t) },
                "cusparseSetStream",
            )?;
            // SAFETY: the three arrays are this object's device buffers of rows + 1, nnz and
            // nnz elements (i32, i32, T), base 0, alive as long as the descriptor (both are
            // fields of `me`, the descriptor destroyed first). Valid out-pointer.
            ok(
                unsafe {
                    cs::cusparseCreateConstCsr(
                        &mut o.mat,
                        rows as i64,
                        cols as i64,
                        nnz as i64,
                        me.row_ptr.addr() as *const c_void,
                        me.col_ind.addr() as *const c_void,
                        me.values.addr() as *const c_void,
                        cs::cusparseIndexType_t::CUSPARSE_INDEX_32I,
                        cs::cusparseIndexType_t::CUSPARSE_INDEX_32I,
                        cs::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                        vt,
                    )
                },
                "cusparseCreateConstCsr",
            )?;
            // SAFETY: sx holds cols values of T on this device; valid out-pointer. The pointer
            // is replaced before every product.
            ok(
                unsafe {
                    cs::cusparseCreateDnVec(&mut o.x, cols as i64, sx.addr() as *mut c_void, vt)
                },
                "cusparseCreateDnVec(x)",
            )?;
            // SAFETY: as above, with sy of rows values.
            ok(
                unsafe {
                    cs::cusparseCreateDnVec(&mut o.y, rows as i64, sy.addr() as *mut c_void, vt)
                },
                "cusparseCreateDnVec(y)",
            )?;
            let (alpha, beta) = (T::ONE, T::ZERO);
            let mut bytes = 0usize;
            // SAFETY: live handle and descriptors; alpha and beta are host values of the
            // compute type (the default host pointer mode); bytes is a valid out-pointer.
            ok(
                unsafe {
                    cs::cusparseSpMV_bufferSize(
                        o.handle,
                        cs::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                        (&alpha as *const T).cast(),
                        o.mat,
                        o.x as cs::cusparseConstDnVecDescr_t,
                        (&beta as *const T).cast(),
                        o.y,
                        vt,
                        alg.raw(),
                        &mut bytes,
                    )
                },
                &format!("cusparseSpMV_bufferSize({alg})"),
            )?;
            me.workspace = DeviceBuffer::alloc(dev, bytes, "the cuSPARSE workspace")?;
            // SAFETY: as above; the workspace holds the `bytes` asked for (NULL when 0) and is
            // kept, unchanged, for every later cusparseSpMV with this matrix, as the
            // preprocessing requires.
            let r = unsafe {
                cs::cusparseSpMV_preprocess(
                    o.handle,
                    cs::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                    (&alpha as *const T).cast(),
                    o.mat,
                    o.x as cs::cusparseConstDnVecDescr_t,
                    (&beta as *const T).cast(),
                    o.y,
                    vt,
                    alg.raw(),
                    me.workspace.addr() as *mut c_void,
                )
            };
            // The preprocessing is an optional speed-up: an algorithm that does not support it
            // is run without it (and says so in Debug).
            if r != cs::cusparseStatus_t::CUSPARSE_STATUS_NOT_SUPPORTED {
                ok(r, &format!("cusparseSpMV_preprocess({alg})"))?;
                me.preprocessed = true;
            }
        }
        // The scratch vectors may be in use by the preprocessing until the stream is done.
        synchronize(dev, stream)?;
        drop((sx, sy));
        Ok(me)
    }

    /// y = A x (alpha 1, beta 0) with `x` and `y` device addresses of `cols` and `rows` values
    /// of `T` on this device (the caller's to check). Asynchronous on the stream given to
    /// [`CusparseSpmv::new`]; allocates nothing.
    pub fn spmv(&self, x: u64, y: u64) -> Result<()> {
        let Some(objects) = &self.objects else {
            return self.zero_y(y);
        };
        let o = objects.lock().unwrap_or_else(|p| p.into_inner());
        let _g = self.dev.enter()?;
        // SAFETY: live descriptors; x and y are device vectors of cols and rows values of T
        // (the caller's contract). Host-side updates only.
        unsafe {
            ok(
                cs::cusparseDnVecSetValues(o.x, x as *mut c_void),
                "cusparseDnVecSetValues(x)",
            )?;
            ok(
                cs::cusparseDnVecSetValues(o.y, y as *mut c_void),
                "cusparseDnVecSetValues(y)",
            )?;
        }
        let (alpha, beta) = (T::ONE, T::ZERO);
        // SAFETY: live handle, descriptors (pointing at x and y, see above) and workspace of
        // the size cuSPARSE asked for, preprocessed for this algorithm; alpha and beta are host
        // values of the compute type, read before the call returns.
        ok(
            unsafe {
                cs::cusparseSpMV(
                    o.handle,
                    cs::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                    (&alpha as *const T).cast(),
                    o.mat,
                    o.x as cs::cusparseConstDnVecDescr_t,
                    (&beta as *const T).cast(),
                    o.y,
                    data_type::<T>(),
                    self.alg.raw(),
                    self.workspace.addr() as *mut c_void,
                )
            },
            // A static name: nothing is formatted on the timed path.
            match self.alg {
                CusparseAlg::Default => "cusparseSpMV(ALG_DEFAULT)",
                CusparseAlg::CsrAlg2 => "cusparseSpMV(CSR_ALG2)",
            },
        )
    }

    /// The product of an empty matrix: y = 0 (nothing for no rows).
    fn zero_y(&self, y: u64) -> Result<()> {
        let bytes = self.rows * std::mem::size_of::<T>();
        if bytes == 0 {
            return Ok(());
        }
        let _g = self.dev.enter()?;
        // SAFETY: y is device memory of rows values of T (the caller's contract); the stream
        // is the default stream or one of this context.
        check(
            unsafe {
                cu::cuMemsetD8Async(
                    y as cu::CUdeviceptr,
                    0,
                    bytes,
                    self.stream.0 as cu::CUstream,
                )
            },
            "cuMemsetD8Async",
        )
    }

    /// Device bytes held: the CSR arrays and the workspace.
    pub fn device_bytes(&self) -> usize {
        self.row_ptr.bytes() + self.col_ind.bytes() + self.values.bytes() + self.workspace.bytes()
    }

    /// The algorithm this product was prepared for.
    pub fn alg(&self) -> CusparseAlg {
        self.alg
    }

    /// True when `cusparseSpMV_preprocess` ran; false for an empty matrix (cuSPARSE unused) and
    /// when cuSPARSE answered NOT_SUPPORTED to it for this algorithm.
    pub fn preprocessed(&self) -> bool {
        self.preprocessed
    }
}

impl<T> Drop for CusparseSpmv<T> {
    fn drop(&mut self) {
        // The cuSPARSE objects go first, with the context current; the buffers free themselves
        // afterwards (each pushes the context), then the device reference is released.
        if let Some(objects) = self.objects.as_mut() {
            let o = objects.get_mut().unwrap_or_else(|p| p.into_inner());
            if let Ok(_g) = self.dev.enter() {
                o.destroy();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::DeviceVec;
    use crate::types::Operation;

    #[test]
    fn probe_answers_without_panicking() {
        match probe() {
            Ok(()) => {}
            Err(Error::NotSupported(s)) => {
                assert!(s.contains("cuSPARSE") && s.contains("libcusparse"), "{s}");
            }
            Err(e) => panic!("probe failed with an unexpected error: {e:?}"),
        }
    }

    #[test]
    fn statuses_map_to_tessera_errors() {
        use cs::cusparseStatus_t as S;
        assert!(ok(S::CUSPARSE_STATUS_SUCCESS, "x").is_ok());
        let e = cusparse_error(S::CUSPARSE_STATUS_ALLOC_FAILED, "cusparseSpMV");
        assert_eq!(
            e,
            Error::AllocFailed("cusparseSpMV failed: CUSPARSE_STATUS_ALLOC_FAILED".into())
        );
        assert!(matches!(
            cusparse_error(S::CUSPARSE_STATUS_INSUFFICIENT_RESOURCES, "a"),
            Error::AllocFailed(_)
        ));
        assert!(matches!(
            cusparse_error(S::CUSPARSE_STATUS_NOT_SUPPORTED, "a"),
            Error::NotSupported(_)
        ));
        let e = cusparse_error(
            S::CUSPARSE_STATUS_INVALID_VALUE,
            "cusparseSpMV(ALG_DEFAULT)",
        );
        assert_eq!(
            e.to_string(),
            "cusparseSpMV(ALG_DEFAULT) failed: CUSPARSE_STATUS_INVALID_VALUE"
        );
        assert!(matches!(e, Error::ExecutionFailed(_)));
    }

    #[test]
    fn algorithms_display_their_cusparse_names() {
        assert_eq!(CusparseAlg::Default.to_string(), "ALG_DEFAULT");
        assert_eq!(CusparseAlg::CsrAlg2.to_string(), "CSR_ALG2");
        assert_eq!(format!("{:>9}", CusparseAlg::CsrAlg2), " CSR_ALG2");
    }

    /// The device and cuSPARSE, or None (with a "skipped" line) on a machine without them.
    fn gpu() -> Option<Arc<Device>> {
        let r = Device::open(0).and_then(|d| probe().map(|_| d));
        match r {
            Ok(d) => Some(d),
            Err(e) => {
                println!("skipped: no CUDA device or cuSPARSE ({e})");
                None
            }
        }
    }

    fn check_product<T: Scalar>(dev: &Arc<Device>, a: &Csr<T>, alg: CusparseAlg) {
        let stream = Stream(0);
        let op = CusparseSpmv::new(dev, stream, a, alg).unwrap();
        println!("{op:?}");
        let x: Vec<T> = (0..a.cols())
            .map(|i| T::from_f64(((i * 37) % 11) as f64 / 4.0 - 1.1))
            .collect();
        let dx = DeviceVec::from_slice(dev, &x).unwrap();
        let dy = DeviceVec::from_slice(dev, &vec![T::from_f64(f64::NAN); a.rows()]).unwrap();
        for _ in 0..3 {
            op.spmv(dx.addr(), dy.addr()).unwrap();
        }
        let got = dy.to_vec(stream).unwrap();
        let a64 = a.convert::<f64>();
        let x64: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
        let mut want = vec![0.0; a.rows()];
        a64.spmv_f64(Operation::NonTranspose, 1.0, &x64, 0.0, &mut want);
        let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let err = (g.to_f64() - w).abs() / scale;
            assert!(
                err <= 1e3 * T::EPSILON,
                "{alg} {}: y[{i}] = {g}, want {w}",
                T::VALUE_TYPE
            );
        }
        let arrays = (a.rows() + 1 + a.nnz()) * 4 + a.nnz() * std::mem::size_of::<T>();
        if a.nnz() > 0 {
            assert!(op.device_bytes() >= arrays);
        }
    }

    fn sample(rows: usize, cols: usize) -> Vec<(usize, usize, f64)> {
        let mut e = Vec::new();
        for r in 0..rows {
            // Rows of 0..=40 entries, some empty, one long.
            let len = if r == 7 { cols.min(500) } else { (r * 13) % 41 };
            for k in 0..len {
                e.push((
                    r,
                    (r * 31 + k * 17) % cols,
                    1.0 + ((r + k) % 9) as f64 / 8.0,
                ));
            }
        }
        e
    }

    #[test]
    fn cusparse_products_match_the_reference_or_skip() {
        let a = Csr::<f64>::from_triplets(1000, 700, &sample(1000, 700)).unwrap();
        let Some(dev) = gpu() else { return };
        for alg in CUSPARSE_ALGS {
            check_product(&dev, &a, alg);
            check_product(&dev, &a.convert::<f32>(), alg);
        }
    }

    #[test]
    fn empty_matrices_give_zero_or_nothing_or_skip() {
        let empty: Vec<Csr<f64>> = [(0, 0), (0, 5), (5, 0), (6, 4)]
            .into_iter()
            .map(|(rows, cols)| Csr::from_triplets(rows, cols, &[]).unwrap())
            .collect();
        let Some(dev) = gpu() else { return };
        for a in &empty {
            for alg in CUSPARSE_ALGS {
                check_product(&dev, a, alg);
                let op = CusparseSpmv::new(&dev, Stream(0), a, alg).unwrap();
                assert_eq!(op.device_bytes(), 0);
                assert!(!op.preprocessed());
            }
        }
    }
}
