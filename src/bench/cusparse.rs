//! cuSPARSE, the baseline of `tessera bench`: the generic `cusparseSpMV` on
//! the same CSR, with `CUSPARSE_SPMV_ALG_DEFAULT` or `CUSPARSE_SPMV_CSR_ALG2`, each after
//! `cusparseSpMV_preprocess` (or, for the end-to-end measurement, without it). Not part of the
//! library's own SpMV path: it exists so that every speedup is measured against what a user
//! would otherwise call, in the same run.
//!
//! The set-up comes whole ([`CusparseSpmv::new`]) or in the phases a caller times apart: the
//! handle ([`CusparseHandle::new`], once per process), the upload of the arrays
//! ([`CusparseCsr::upload`]), and the per-matrix set-up on arrays already on the device
//! ([`CusparseSpmv::from_device`]: descriptors, buffer size, workspace, preprocessing).
//!
//! libcusparse is loaded, not linked (cudarc's `dynamic-loading`), and cudarc panics when the
//! library or a symbol is missing, so [`probe`] checks first, with the very names cudarc tries,
//! that the library loads and has every entry point used here, and answers NOT_SUPPORTED with a
//! sentence naming what is missing.
//!
//! Every call pushes the device's primary context (the one the CUDA runtime, and so cuSPARSE,
//! uses) for its duration. The dense-vector descriptors are made once, in
//! [`CusparseSpmv::from_device`] (against the caller's vectors, or scratch vectors in
//! [`CusparseSpmv::new`], for the buffer-size query and the preprocessing), and each
//! [`CusparseSpmv::spmv`] points them at the caller's x and y with `cusparseDnVecSetValues`: host
//! work only, nothing is allocated. They sit behind a mutex, and the handle behind its own, so
//! one `CusparseSpmv`, or several sharing a handle, may be used from several threads (the calls
//! are serialised).
//!
//! A matrix without rows, columns or non-zeros never reaches cuSPARSE (some of its algorithms
//! reject nnz = 0): its product is y = 0, written with one `cuMemsetD8Async` on the stream.

use crate::backend::cuda::{self, check, synchronize, Device, DeviceBuffer, Stream};
use crate::csr::Csr;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::types::ValueType;
use cudarc::cusparse::sys as cs;
use cudarc::driver::sys as cu;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// `bytes` of device memory for the cuSPARSE pipeline, allocated as a caller's `cudaMalloc`
/// would be (never from tessera's pool).
fn alloc(dev: &Arc<Device>, bytes: usize, what: &str) -> Result<DeviceBuffer> {
    cuda::allocating_as_a_caller(|| DeviceBuffer::alloc(dev, bytes, what))
}

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

/// Whether [`CusparseSpmv`] runs `cusparseSpMV_preprocess` before its products.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preprocess {
    /// Run it once after the buffer-size query (the baseline of the steady speedups).
    Yes,
    /// Skip it, as callers that never preprocess do (CuPy's `csr_matrix @ x`, for one): every
    /// `cusparseSpMV` then does whatever analysis its algorithm needs itself.
    No,
}

impl std::fmt::Display for Preprocess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            Preprocess::Yes => "with preprocess",
            Preprocess::No => "without preprocess",
        })
    }
}

/// A raw cuSPARSE handle (a host object).
struct RawHandle(cs::cusparseHandle_t);

/// A cuSPARSE handle (`cusparseCreate`) whose work is ordered on one stream
/// (`cusparseSetStream`). A solver creates one per process; [`CusparseHandle::new`] is the step
/// a caller times apart from the per-matrix set-up of [`CusparseSpmv::from_device`]. Several
/// [`CusparseSpmv`] may share one (through the `Arc`); their calls into cuSPARSE are serialised
/// by the handle's mutex. Dropping the last reference destroys it.
pub struct CusparseHandle {
    raw: Mutex<RawHandle>,
    stream: Stream,
    dev: Arc<Device>,
}

// SAFETY: a cuSPARSE handle is a host object not bound to a thread; every use pushes the
// device's context on the calling thread and goes through the Mutex, so no two threads use it
// at once.
unsafe impl Send for CusparseHandle {}
// SAFETY: as above; `&self` reaches the raw handle only under the Mutex.
unsafe impl Sync for CusparseHandle {}

impl std::fmt::Debug for CusparseHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CusparseHandle(device {}, stream {:#x})",
            self.dev.ordinal(),
            self.stream.0
        )
    }
}

impl CusparseHandle {
    /// Checks the library ([`probe`]: loads it, which a fresh process pays here), then
    /// `cusparseCreate` and `cusparseSetStream(stream)`.
    ///
    /// `stream` must be the default stream or a stream of `dev`'s primary context (as
    /// [`crate::backend::cuda::check_stream`] checks), alive as long as this handle.
    pub fn new(dev: &Arc<Device>, stream: Stream) -> Result<Arc<Self>> {
        probe()?;
        let _g = dev.enter()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the context is current; the out-pointer is valid. Destroyed in Drop.
        ok(unsafe { cs::cusparseCreate(&mut raw) }, "cusparseCreate")?;
        // Owned from here on: Drop destroys it if the next step fails.
        let h = CusparseHandle {
            raw: Mutex::new(RawHandle(raw)),
            stream,
            dev: dev.clone(),
        };
        // SAFETY: live handle; the stream is the caller's, of this context (contract above).
        ok(
            unsafe { cs::cusparseSetStream(raw, stream.0 as cs::cudaStream_t) },
            "cusparseSetStream",
        )?;
        Ok(Arc::new(h))
    }

    /// The stream the handle's work is ordered on.
    pub fn stream(&self) -> Stream {
        self.stream
    }
}

impl Drop for CusparseHandle {
    fn drop(&mut self) {
        let raw = self.raw.get_mut().unwrap_or_else(|p| p.into_inner());
        if !raw.0.is_null() {
            if let Ok(_g) = self.dev.enter() {
                // SAFETY: created by `new`, destroyed once (nulled here); every CusparseSpmv
                // that used it holds an Arc to it, so none is left (their descriptors are
                // destroyed in their own Drop first).
                let _ = unsafe { cs::cusparseDestroy(raw.0) };
                raw.0 = std::ptr::null_mut();
            }
        }
    }
}

/// A CSR matrix in device memory as cuSPARSE reads it (`i32` indices, base 0): what a caller
/// whose matrix already lives on the GPU hands to [`CusparseSpmv::from_device`].
pub struct CusparseCsr<T> {
    rows: usize,
    cols: usize,
    nnz: usize,
    row_ptr: DeviceBuffer,
    col_ind: DeviceBuffer,
    values: DeviceBuffer,
    _t: PhantomData<T>,
}

impl<T: Scalar> std::fmt::Debug for CusparseCsr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CusparseCsr({} x {}, nnz {}, {})",
            self.rows,
            self.cols,
            self.nnz,
            T::VALUE_TYPE
        )
    }
}

impl<T: Scalar> CusparseCsr<T> {
    /// Uploads `csr` (tessera's validated CSR: `i32` indices, base 0): one `cuMemAlloc` and one
    /// host-to-device copy ordered on `stream` per array, each waited for. A matrix without
    /// rows, columns or non-zeros uploads nothing (it never reaches cuSPARSE).
    pub fn upload(dev: &Arc<Device>, stream: Stream, csr: &Csr<T>) -> Result<Self> {
        let (rows, cols, nnz) = (csr.rows(), csr.cols(), csr.nnz());
        let empty = rows == 0 || cols == 0 || nnz == 0;
        let upload = |src: &[i32], what: &str| -> Result<DeviceBuffer> {
            if empty {
                DeviceBuffer::alloc(dev, 0, what)
            } else {
                DeviceBuffer::from_slice(dev, stream, src, what)
            }
        };
        // A caller's own allocations (cudaMalloc), whatever tessera's own are.
        let (row_ptr, col_ind, values) = cuda::allocating_as_a_caller(|| -> Result<_> {
            let row_ptr = upload(csr.row_ptr(), "the cuSPARSE row_ptr")?;
            let col_ind = upload(csr.col_ind(), "the cuSPARSE col_ind")?;
            let values = if empty {
                DeviceBuffer::alloc(dev, 0, "the cuSPARSE values")?
            } else {
                DeviceBuffer::from_slice(dev, stream, csr.values(), "the cuSPARSE values")?
            };
            Ok((row_ptr, col_ind, values))
        })?;
        Ok(CusparseCsr {
            rows,
            cols,
            nnz,
            row_ptr,
            col_ind,
            values,
            _t: PhantomData,
        })
    }

    /// True for a matrix without rows, columns or non-zeros.
    pub fn is_empty(&self) -> bool {
        self.rows == 0 || self.cols == 0 || self.nnz == 0
    }

    /// Device bytes of the three arrays.
    pub fn device_bytes(&self) -> usize {
        self.row_ptr.bytes() + self.col_ind.bytes() + self.values.bytes()
    }
}

/// The cuSPARSE objects of one prepared product: the descriptors, and the handle they were
/// made with.
struct Objects {
    handle: Arc<CusparseHandle>,
    mat: cs::cusparseConstSpMatDescr_t,
    x: cs::cusparseDnVecDescr_t,
    y: cs::cusparseDnVecDescr_t,
}

impl Objects {
    /// Destroys whichever descriptors exist (the handle goes with its last `Arc`). The caller
    /// has the device's context pushed.
    fn destroy(&mut self) {
        // SAFETY: each non-null descriptor was created by this module, is destroyed once (it is
        // nulled here); cuSPARSE destroys descriptors on the host only.
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
        }
    }
}

/// cuSPARSE's y = A x on one CSR matrix, prepared for one algorithm and one stream: the cuSPARSE
/// handle (shared or its own), the matrix's CSR arrays on the device, the sparse and dense
/// descriptors, and the workspace (kept, as the preprocessing requires). Dropping it destroys
/// all of them.
pub struct CusparseSpmv<T> {
    /// None for an empty matrix (no rows, columns or non-zeros): cuSPARSE is not used.
    objects: Option<Mutex<Objects>>,
    alg: CusparseAlg,
    /// What the caller asked for.
    preprocess: Preprocess,
    /// False when skipped, and when cuSPARSE answered NOT_SUPPORTED to
    /// `cusparseSpMV_preprocess` for `alg`.
    preprocessed: bool,
    stream: Stream,
    csr: CusparseCsr<T>,
    workspace: DeviceBuffer,
    dev: Arc<Device>,
}

// SAFETY: cuSPARSE handles and descriptors are host objects not bound to a thread; every use
// pushes the device's context on the calling thread, and they are only reached through the
// Mutexes (this object's, then the handle's), so no two threads use them at once. The rest is
// Send + Sync already.
unsafe impl<T: Send> Send for CusparseSpmv<T> {}
// SAFETY: as above; `&self` methods touch the cuSPARSE objects only under the Mutexes.
unsafe impl<T: Sync> Sync for CusparseSpmv<T> {}

impl<T: Scalar> std::fmt::Debug for CusparseSpmv<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match (self.objects.is_some(), self.preprocess, self.preprocessed) {
            (false, _, _) | (true, Preprocess::Yes, true) => "",
            (true, Preprocess::No, _) => " (without preprocessing)",
            (true, Preprocess::Yes, false) => " (without preprocessing: not supported)",
        };
        write!(
            f,
            "CusparseSpmv({} x {}, nnz {}, {} {}{how}, {} device bytes)",
            self.csr.rows,
            self.csr.cols,
            self.csr.nnz,
            T::VALUE_TYPE,
            self.alg,
            self.device_bytes()
        )
    }
}

impl<T: Scalar> CusparseSpmv<T> {
    /// [`CusparseSpmv::new_with`] with [`Preprocess::Yes`]: the baseline of `tessera bench`.
    pub fn new(dev: &Arc<Device>, stream: Stream, csr: &Csr<T>, alg: CusparseAlg) -> Result<Self> {
        Self::new_with(dev, stream, csr, alg, Preprocess::Yes)
    }

    /// Uploads `csr` (tessera's validated CSR: `i32` indices, base 0) and prepares y = A x with
    /// `alg` on `stream`, all in one: a handle of its own ([`CusparseHandle::new`]), the upload
    /// ([`CusparseCsr::upload`]), then [`CusparseSpmv::from_device`] on scratch vectors. Waits
    /// for the stream at the end.
    ///
    /// `stream` must be the default stream or a stream of `dev`'s primary context (as
    /// [`crate::backend::cuda::check_stream`] checks), alive as long as this object.
    pub fn new_with(
        dev: &Arc<Device>,
        stream: Stream,
        csr: &Csr<T>,
        alg: CusparseAlg,
        preprocess: Preprocess,
    ) -> Result<Self> {
        probe()?;
        let arrays = CusparseCsr::upload(dev, stream, csr)?;
        if arrays.is_empty() {
            return Self::without_cusparse(dev, stream, arrays, alg, preprocess);
        }
        let handle = CusparseHandle::new(dev, stream)?;
        // Scratch x and y, for the descriptors during the size query and the preprocessing
        // (freed on return; spmv points the descriptors at the caller's vectors).
        let size = std::mem::size_of::<T>();
        let sx = alloc(dev, arrays.cols * size, "the cuSPARSE scratch x")?;
        let sy = alloc(dev, arrays.rows * size, "the cuSPARSE scratch y")?;
        let me = Self::from_device(&handle, arrays, alg, preprocess, sx.addr(), sy.addr())?;
        // The scratch vectors may be in use by the preprocessing until the stream is done.
        synchronize(dev, stream)?;
        drop((sx, sy));
        Ok(me)
    }

    /// The per-matrix set-up of a caller whose matrix is already on the device, which is what
    /// `tessera bench` times: the sparse descriptor on `arrays`, dense descriptors on the
    /// caller's `x` and `y` (device addresses of `cols` and `rows` values of `T`),
    /// `cusparseSpMV_bufferSize`, the workspace's allocation and, with [`Preprocess::Yes`],
    /// `cusparseSpMV_preprocess`. Queues work on the handle's stream and does not wait: `x` and
    /// `y` must stay allocated until the stream has passed this point. Later products may use
    /// other vectors ([`CusparseSpmv::spmv`] repoints the descriptors).
    pub fn from_device(
        handle: &Arc<CusparseHandle>,
        arrays: CusparseCsr<T>,
        alg: CusparseAlg,
        preprocess: Preprocess,
        x: u64,
        y: u64,
    ) -> Result<Self> {
        let (dev, stream) = (&handle.dev, handle.stream);
        if arrays.is_empty() {
            return Self::without_cusparse(dev, stream, arrays, alg, preprocess);
        }
        let (rows, cols, nnz) = (arrays.rows, arrays.cols, arrays.nnz);
        let mut me = Self::without_cusparse(dev, stream, arrays, alg, preprocess)?;
        // Stored first, so that Drop destroys whatever was created if a later step fails.
        let objects = me.objects.insert(Mutex::new(Objects {
            handle: handle.clone(),
            mat: std::ptr::null(),
            x: std::ptr::null_mut(),
            y: std::ptr::null_mut(),
        }));
        let o = objects.get_mut().unwrap_or_else(|p| p.into_inner());
        let raw = handle.raw.lock().unwrap_or_else(|p| p.into_inner());
        let vt = data_type::<T>();
        let _g = dev.enter()?;
        // SAFETY: the three arrays are this object's device buffers of rows + 1, nnz and nnz
        // elements (i32, i32, T), base 0, alive as long as the descriptor (both are fields of
        // `me`, the descriptor destroyed first, in Drop). Valid out-pointer.
        ok(
            unsafe {
                cs::cusparseCreateConstCsr(
                    &mut o.mat,
                    rows as i64,
                    cols as i64,
                    nnz as i64,
                    me.csr.row_ptr.addr() as *const c_void,
                    me.csr.col_ind.addr() as *const c_void,
                    me.csr.values.addr() as *const c_void,
                    cs::cusparseIndexType_t::CUSPARSE_INDEX_32I,
                    cs::cusparseIndexType_t::CUSPARSE_INDEX_32I,
                    cs::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                    vt,
                )
            },
            "cusparseCreateConstCsr",
        )?;
        // SAFETY: x holds cols values of T on this device (the caller's contract); valid
        // out-pointer. spmv repoints it before every product.
        ok(
            unsafe { cs::cusparseCreateDnVec(&mut o.x, cols as i64, x as *mut c_void, vt) },
            "cusparseCreateDnVec(x)",
        )?;
        // SAFETY: as above, with y of rows values.
        ok(
            unsafe { cs::cusparseCreateDnVec(&mut o.y, rows as i64, y as *mut c_void, vt) },
            "cusparseCreateDnVec(y)",
        )?;
        let (alpha, beta) = (T::ONE, T::ZERO);
        let mut bytes = 0usize;
        // SAFETY: live handle (held under its mutex) and descriptors; alpha and beta are host
        // values of the compute type (the default host pointer mode); bytes is a valid
        // out-pointer.
        ok(
            unsafe {
                cs::cusparseSpMV_bufferSize(
                    raw.0,
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
        me.workspace = alloc(dev, bytes, "the cuSPARSE workspace")?;
        if preprocess == Preprocess::Yes {
            // SAFETY: as above; the workspace holds the `bytes` asked for (NULL when 0) and is
            // kept, unchanged, for every later cusparseSpMV with this matrix, as the
            // preprocessing requires.
            let r = unsafe {
                cs::cusparseSpMV_preprocess(
                    raw.0,
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
        drop(raw);
        Ok(me)
    }

    /// An object without cuSPARSE objects (yet): what an empty matrix stays.
    fn without_cusparse(
        dev: &Arc<Device>,
        stream: Stream,
        csr: CusparseCsr<T>,
        alg: CusparseAlg,
        preprocess: Preprocess,
    ) -> Result<Self> {
        Ok(CusparseSpmv {
            objects: None,
            alg,
            preprocess,
            preprocessed: false,
            stream,
            csr,
            workspace: DeviceBuffer::alloc(dev, 0, "the cuSPARSE workspace")?,
            dev: dev.clone(),
        })
    }

    /// y = A x (alpha 1, beta 0) with `x` and `y` device addresses of `cols` and `rows` values
    /// of `T` on this device (the caller's to check). Asynchronous on the stream of the handle
    /// (or the one given to [`CusparseSpmv::new`]); allocates nothing.
    pub fn spmv(&self, x: u64, y: u64) -> Result<()> {
        let Some(objects) = &self.objects else {
            return self.zero_y(y);
        };
        let o = objects.lock().unwrap_or_else(|p| p.into_inner());
        let raw = o.handle.raw.lock().unwrap_or_else(|p| p.into_inner());
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
        // SAFETY: live handle (under its mutex), descriptors (pointing at x and y, see above)
        // and workspace of the size cuSPARSE asked for, preprocessed for this algorithm or not
        // preprocessed at all; alpha and beta are host values of the compute type, read before
        // the call returns.
        ok(
            unsafe {
                cs::cusparseSpMV(
                    raw.0,
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
        let bytes = self.csr.rows * std::mem::size_of::<T>();
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
        self.csr.device_bytes() + self.workspace.bytes()
    }

    /// The algorithm this product was prepared for.
    pub fn alg(&self) -> CusparseAlg {
        self.alg
    }

    /// Whether the preprocessing was asked for.
    pub fn preprocess(&self) -> Preprocess {
        self.preprocess
    }

    /// True when `cusparseSpMV_preprocess` ran; false for an empty matrix (cuSPARSE unused),
    /// with [`Preprocess::No`], and when cuSPARSE answered NOT_SUPPORTED to it for this
    /// algorithm.
    pub fn preprocessed(&self) -> bool {
        self.preprocessed
    }
}

impl<T> Drop for CusparseSpmv<T> {
    fn drop(&mut self) {
        // The descriptors go first, with the context current; then the fields drop in order:
        // the handle's Arc (the handle itself when this was its last user), the CSR arrays and
        // the workspace (each pushes the context), then the device reference.
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
        let op = CusparseSpmv::new(dev, Stream(0), a, alg).unwrap();
        check_op(dev, a, &op);
    }

    /// Three products of `op` (prepared for `a`) into a NaN-poisoned y, against the reference.
    fn check_op<T: Scalar>(dev: &Arc<Device>, a: &Csr<T>, op: &CusparseSpmv<T>) {
        let (stream, alg) = (Stream(0), op.alg());
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
    fn products_without_preprocessing_and_on_a_shared_handle_match_or_skip() {
        let a = Csr::<f64>::from_triplets(1000, 700, &sample(1000, 700)).unwrap();
        let empty = Csr::<f64>::from_triplets(6, 4, &[]).unwrap();
        let Some(dev) = gpu() else { return };
        let stream = Stream(0);
        let handle = CusparseHandle::new(&dev, stream).unwrap();
        assert_eq!(handle.stream(), stream);
        // The descriptors are made on these; the products run on check_op's own vectors.
        let dx = DeviceVec::from_slice(&dev, &vec![1.0f64; a.cols()]).unwrap();
        let dy = DeviceVec::from_slice(&dev, &vec![0.0f64; a.rows()]).unwrap();
        for alg in CUSPARSE_ALGS {
            let op = CusparseSpmv::new_with(&dev, stream, &a, alg, Preprocess::No).unwrap();
            assert!(!op.preprocessed() && op.preprocess() == Preprocess::No);
            assert!(
                format!("{op:?}").contains("(without preprocessing)"),
                "{op:?}"
            );
            check_op(&dev, &a, &op);
            for pre in [Preprocess::Yes, Preprocess::No] {
                let arrays = CusparseCsr::upload(&dev, stream, &a).unwrap();
                assert!(!arrays.is_empty());
                let op = CusparseSpmv::from_device(&handle, arrays, alg, pre, dx.addr(), dy.addr())
                    .unwrap();
                assert_eq!(op.preprocess(), pre);
                check_op(&dev, &a, &op);
            }
            let arrays = CusparseCsr::upload(&dev, stream, &empty).unwrap();
            assert!(arrays.is_empty() && arrays.device_bytes() == 0);
            let op = CusparseSpmv::from_device(
                &handle,
                arrays,
                alg,
                Preprocess::Yes,
                dx.addr(),
                dy.addr(),
            )
            .unwrap();
            check_op(&dev, &empty, &op);
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
