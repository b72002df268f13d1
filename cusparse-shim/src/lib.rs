//! `libtessera_cusparse.so`: cuSPARSE's `cusparseSpMV` answered by tessera, for programs that
//! call cuSPARSE (CuPy's `csr_matrix @ x`, PyTorch's sparse CSR `mv`, C programs) and are not
//! rewritten. Use it with `LD_PRELOAD=libtessera_cusparse.so`, or link it before `-lcusparse`.
//!
//! The shim defines two functions, `cusparseSpMV` and `cusparseSpMV_preprocess`. Every other
//! cuSPARSE call goes to the real library as it would without the shim, so the application
//! always holds real handles and descriptors, and a call the shim does not take is the real
//! library's call with the same arguments. For a `cusparseSpMV` it reads the handle and the
//! descriptors through the real library's own getters ([`decide`] says which calls it takes:
//! CSR, f32 or f64 throughout, int32 or int64 indices, base zero, non-transpose, host alpha
//! and beta);
//! takes the matrix when its rows suit tessera's CSR kernel ([`decide::rows_fit`]); and keeps
//! the analysis under the matrix's arrays and sizes ([`decide::Key`]), so that a new descriptor
//! over the same arrays (CuPy makes one per product) finds it. tessera reads the caller's
//! arrays in place at every product: values written into them between products are seen, as
//! cuSPARSE sees them. `cusparseSpMV_preprocess` analyzes again (after the real one): a pattern
//! rewritten in place under the same arrays and sizes is picked up there.
//!
//! Environment: `TESSERA_CUSPARSE=off` forwards everything; `TESSERA_CUSPARSE_LOG=1` prints
//! one line per matrix (what was taken and how, or why it was forwarded);
//! `TESSERA_CUSPARSE_LIB` names the real library (default: `libcusparse.so.12`, the one
//! already loaded, else the loader's); `TESSERA_CUSPARSE_CACHE` bounds the matrices kept
//! (1024); `TESSERA_CUSPARSE_TAKE=all` takes every matrix whatever its rows (a measuring aid:
//! CSR_VECTOR is far slower than cuSPARSE on long rows).
//!
//! Nothing here panics across the C boundary: a panic in the shim's own path answers
//! `CUSPARSE_STATUS_INTERNAL_ERROR`.

pub mod abi;
pub mod cache;
pub mod decide;
pub mod engine;
pub mod real;

use abi::*;
use decide::{CsrDescr, Key};
use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};

/// False when `TESSERA_CUSPARSE` is `off` (or `0`, `false`, `no`): every call forwarded.
fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        !matches!(
            std::env::var("TESSERA_CUSPARSE")
                .unwrap_or_default()
                .to_ascii_lowercase()
                .as_str(),
            "off" | "0" | "false" | "no"
        )
    })
}

/// True with `TESSERA_CUSPARSE_LOG=1`.
fn logging() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("TESSERA_CUSPARSE_LOG").is_ok_and(|v| v.trim() == "1"))
}

/// Prints `line` (logging on) unless `what` was already logged: one line per matrix, not per
/// product.
fn log_once(what: (u64, &str), line: impl FnOnce() -> String) {
    if !logging() {
        return;
    }
    static SEEN: OnceLock<Mutex<HashSet<(u64, String)>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if seen.len() > 4096 {
        seen.clear();
    }
    if seen.insert((what.0, what.1.to_string())) {
        eprintln!("tessera_cusparse: {}", line());
    }
}

/// Logs `line` for the matrix of `key` (analysis time only, so once per analysis).
fn log_line(line: String) {
    if logging() {
        eprintln!("tessera_cusparse: {line}");
    }
}

/// The arguments of `cusparseSpMV` (and `cusparseSpMV_preprocess`).
#[derive(Clone, Copy)]
struct Args {
    handle: cusparseHandle_t,
    op: cusparseOperation_t,
    alpha: *const c_void,
    mat: cusparseConstSpMatDescr_t,
    x: cusparseConstDnVecDescr_t,
    beta: *const c_void,
    y: cusparseDnVecDescr_t,
    compute: cudaDataType,
    alg: cusparseSpMVAlg_t,
    buffer: *mut c_void,
}

impl Args {
    /// The call to the real library (`cusparseSpMV` or `cusparseSpMV_preprocess`).
    ///
    /// # Safety
    /// The arguments are the application's, passed on unchanged.
    unsafe fn forward(&self, f: real::SpmvFn) -> cusparseStatus_t {
        // SAFETY: the caller's own arguments to the function of the same signature.
        unsafe {
            f(
                self.handle,
                self.op,
                self.alpha,
                self.mat,
                self.x,
                self.beta,
                self.y,
                self.compute,
                self.alg,
                self.buffer,
            )
        }
    }
}

/// What the shim made of a call.
enum Outcome {
    /// tessera queued the product.
    Done,
    /// The real library takes it.
    Forward,
}

/// `Ok(())` for `CUSPARSE_STATUS_SUCCESS`, else why `what` failed.
fn ok(s: cusparseStatus_t, what: &str) -> Result<(), String> {
    if s == CUSPARSE_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} answered status {s}"))
    }
}

/// The matrix descriptor's format and, for CSR, its contents.
///
/// # Safety
/// `mat` is the application's descriptor, valid or not: only the real getters read it.
unsafe fn read_matrix(
    real: &real::Real,
    mat: cusparseConstSpMatDescr_t,
) -> Result<(cusparseFormat_t, CsrDescr), String> {
    let mut format = 0;
    // SAFETY: the getter checks its descriptor; format is a valid out-pointer.
    ok(
        unsafe { (real.get_format)(mat, &mut format) },
        "cusparseSpMatGetFormat",
    )?;
    let mut csr = CsrDescr::default();
    if format == CUSPARSE_FORMAT_CSR {
        let (mut rp, mut ci, mut v) = (std::ptr::null(), std::ptr::null(), std::ptr::null());
        // SAFETY: a CSR descriptor; every out-pointer is valid.
        ok(
            unsafe {
                (real.csr_get)(
                    mat,
                    &mut csr.rows,
                    &mut csr.cols,
                    &mut csr.nnz,
                    &mut rp,
                    &mut ci,
                    &mut v,
                    &mut csr.row_type,
                    &mut csr.col_type,
                    &mut csr.base,
                    &mut csr.value_type,
                )
            },
            "cusparseConstCsrGet",
        )?;
        (csr.row_ptr, csr.col_ind, csr.values) = (rp as u64, ci as u64, v as u64);
    }
    Ok((format, csr))
}

/// x and y (size, type, address), the handle's stream and pointer mode.
struct Rest {
    x: (i64, cudaDataType, u64),
    y: (i64, cudaDataType, u64),
    stream: usize,
    pointer_mode: cusparsePointerMode_t,
}

/// The vectors and the handle's state.
///
/// # Safety
/// The application's handle and descriptors, valid or not: only the real getters read them.
unsafe fn read_rest(real: &real::Real, a: &Args) -> Result<Rest, String> {
    let vec = |d: cusparseConstDnVecDescr_t, what: &str| -> Result<(i64, i32, u64), String> {
        let (mut n, mut t, mut p) = (0i64, 0, std::ptr::null());
        // SAFETY: the getter checks its descriptor; the out-pointers are valid.
        ok(unsafe { (real.dnvec_get)(d, &mut n, &mut p, &mut t) }, what)?;
        if p.is_null() {
            return Err(format!("{what}: a NULL vector (cuSPARSE reports it)"));
        }
        Ok((n, t, p as u64))
    };
    let x = vec(a.x, "cusparseConstDnVecGet(x)")?;
    let y = vec(a.y, "cusparseConstDnVecGet(y)")?;
    let mut stream = std::ptr::null_mut();
    // SAFETY: the handle is checked by the getter; stream is a valid out-pointer.
    ok(
        unsafe { (real.get_stream)(a.handle, &mut stream) },
        "cusparseGetStream",
    )?;
    let mut pointer_mode = 0;
    // SAFETY: as above.
    ok(
        unsafe { (real.get_pointer_mode)(a.handle, &mut pointer_mode) },
        "cusparseGetPointerMode",
    )?;
    Ok(Rest {
        x,
        y,
        stream: stream as usize,
        pointer_mode,
    })
}

/// The CUDA device current on this thread (cuSPARSE works on it), if any.
fn current_device() -> Option<i32> {
    use cudarc::driver::sys;
    // Without a loadable driver the driver calls below would panic (cudarc loads it lazily).
    static DRIVER: OnceLock<bool> = OnceLock::new();
    if !*DRIVER.get_or_init(|| tessera::backend::cuda::probe_driver().is_ok()) {
        return None;
    }
    let mut d = 0;
    // SAFETY: a valid out-pointer; fails without a current context.
    let r = unsafe { sys::cuCtxGetDevice(&mut d) };
    (r == sys::CUresult::CUDA_SUCCESS).then_some(d)
}

/// True when `stream` is being captured into a graph (or the driver cannot say): the first
/// product of a matrix waits for its analysis, which a capture forbids.
fn capturing(stream: usize) -> bool {
    use cudarc::driver::sys;
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: stream is the application's cusparse stream (a CUstream); status is valid.
    let r = unsafe { sys::cuStreamIsCapturing(stream as sys::CUstream, &mut status) };
    r != sys::CUresult::CUDA_SUCCESS
        || status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
}

/// A call tessera can take, read in full.
struct Read {
    key: Key,
    rest: Rest,
    /// What was decided for the matrix before, if anything.
    entry: Option<std::sync::Arc<engine::Entry>>,
}

/// Reads the call in [`decide`]'s three stages, stopping at the first reason to forward it
/// (logged once per matrix). With `product`, a matrix already known as forwarded stops after
/// the matrix stage: a forwarded product costs two getter calls and a cache look-up.
///
/// # Safety
/// The application's arguments, read through the real getters.
unsafe fn read(real: &real::Real, a: &Args, product: bool) -> Option<Read> {
    if let Err(why) = decide::decide_args(a.op, a.alg, a.compute) {
        log_once((0, &why), || format!("forwarded: {why}"));
        return None;
    }
    // SAFETY: as above.
    let (format, csr) = match unsafe { read_matrix(real, a.mat) } {
        Ok(m) => m,
        Err(why) => {
            log_once((a.mat as u64, "read"), || format!("forwarded: {why}"));
            return None;
        }
    };
    let dims = || format!("{} x {}, nnz {}", csr.rows, csr.cols, csr.nnz);
    let key = match decide::decide_matrix(format, &csr, a.compute) {
        Ok(k) => k,
        Err(why) => {
            log_once((csr.values, &why), || match format {
                CUSPARSE_FORMAT_CSR => format!("forwarded {}: {why}", dims()),
                _ => format!("forwarded: {why}"),
            });
            return None;
        }
    };
    let entry = engine::cached(&key);
    if product && matches!(entry.as_deref(), Some(engine::Entry::Refused(_))) {
        return None;
    }
    // SAFETY: as above.
    let rest = match unsafe { read_rest(real, a) } {
        Ok(r) => r,
        Err(why) => {
            log_once((csr.values, "rest"), || {
                format!("forwarded {}: {why}", dims())
            });
            return None;
        }
    };
    let xy = |v: (i64, cudaDataType, u64)| (v.0, v.1);
    if let Err(why) = decide::decide_vectors(&csr, xy(rest.x), xy(rest.y), rest.pointer_mode) {
        log_once((csr.values, &why), || {
            format!("forwarded {}: {why}", dims())
        });
        return None;
    }
    Some(Read { key, rest, entry })
}

/// The shim's `cusparseSpMV`.
///
/// # Safety
/// As [`read`]; alpha and beta are host pointers to the value type when the call is taken
/// (host pointer mode, checked).
unsafe fn spmv(real: &real::Real, a: &Args) -> Outcome {
    // SAFETY: as above.
    let Some(Read { key, rest, entry }) = (unsafe { read(real, a, true) }) else {
        return Outcome::Forward;
    };
    // A matrix taken on another device than the current one: its addresses were freed there
    // and reused here (unified addressing shares them across devices). Analyze it again.
    let entry = entry.filter(|e| match &**e {
        engine::Entry::Taken(_, d) => current_device() == Some(*d),
        engine::Entry::Refused(_) => true,
    });
    let entry = match entry {
        Some(e) => e,
        None => {
            // A new matrix is analyzed on the current device: cuSPARSE works on it (and
            // without a driver there is none).
            let Some(device) = current_device() else {
                log_once((0, "device"), || {
                    "forwarded: no current CUDA context".into()
                });
                return Outcome::Forward;
            };
            if capturing(rest.stream) {
                log_once((key.arrays[2], "capture"), || {
                    "forwarded: the first product of a matrix inside a graph capture (tessera analyzes it outside one)".into()
                });
                return Outcome::Forward;
            }
            let e = engine::analyze(key, device, a.handle as usize, rest.stream);
            log_line(engine::describe(&key, &e));
            e
        }
    };
    let engine::Entry::Taken(m, device) = &*entry else {
        return Outcome::Forward;
    };
    if a.alpha.is_null() || a.beta.is_null() {
        return Outcome::Forward;
    }
    // SAFETY: host pointer mode (decide checked it): alpha and beta point to one value of the
    // matrix's type on the host.
    let (alpha, beta) = unsafe {
        match key.value_type {
            tessera::ValueType::F32 => (
                *(a.alpha as *const f32) as f64,
                *(a.beta as *const f32) as f64,
            ),
            tessera::ValueType::F64 => (*(a.alpha as *const f64), *(a.beta as *const f64)),
        }
    };
    let p = engine::Product {
        handle: a.handle as usize,
        stream: rest.stream,
        alpha,
        beta,
        x: rest.x.2,
        y: rest.y.2,
    };
    match engine::run(*device, m, &p) {
        Ok(()) => Outcome::Done,
        Err(e) => {
            // tessera checks before it queues anything: the real library runs the call.
            log_once((key.arrays[2], "run"), || {
                format!("forwarded a product tessera refused: {e}")
            });
            Outcome::Forward
        }
    }
}

/// `cusparseSpMV`: taken by tessera when it can ([`decide`]), else the real library's.
///
/// # Safety
/// cuSPARSE's contract for `cusparseSpMV`.
#[no_mangle]
pub unsafe extern "C" fn cusparseSpMV(
    handle: cusparseHandle_t,
    op_a: cusparseOperation_t,
    alpha: *const c_void,
    mat_a: cusparseConstSpMatDescr_t,
    vec_x: cusparseConstDnVecDescr_t,
    beta: *const c_void,
    vec_y: cusparseDnVecDescr_t,
    compute_type: cudaDataType,
    alg: cusparseSpMVAlg_t,
    external_buffer: *mut c_void,
) -> cusparseStatus_t {
    let real = match real::get() {
        Ok(r) => r,
        Err(why) => {
            log_once((0, "real"), || {
                format!("cannot open the real cuSPARSE: {why}")
            });
            return CUSPARSE_STATUS_NOT_INITIALIZED;
        }
    };
    let a = Args {
        handle,
        op: op_a,
        alpha,
        mat: mat_a,
        x: vec_x,
        beta,
        y: vec_y,
        compute: compute_type,
        alg,
        buffer: external_buffer,
    };
    if !enabled() {
        // SAFETY: the application's arguments, unchanged.
        return unsafe { a.forward(real.spmv) };
    }
    // SAFETY: the application's arguments; a panic is caught here, never unwinding into C.
    match std::panic::catch_unwind(|| unsafe { spmv(real, &a) }) {
        Ok(Outcome::Done) => CUSPARSE_STATUS_SUCCESS,
        // SAFETY: as above.
        Ok(Outcome::Forward) => unsafe { a.forward(real.spmv) },
        Err(_) => CUSPARSE_STATUS_INTERNAL_ERROR,
    }
}

/// `cusparseSpMV_preprocess`: the real library's, then tessera analyzes the matrix again when
/// it takes it (a pattern rewritten in place is seen from here on).
///
/// # Safety
/// cuSPARSE's contract for `cusparseSpMV_preprocess`.
#[no_mangle]
pub unsafe extern "C" fn cusparseSpMV_preprocess(
    handle: cusparseHandle_t,
    op_a: cusparseOperation_t,
    alpha: *const c_void,
    mat_a: cusparseConstSpMatDescr_t,
    vec_x: cusparseConstDnVecDescr_t,
    beta: *const c_void,
    vec_y: cusparseDnVecDescr_t,
    compute_type: cudaDataType,
    alg: cusparseSpMVAlg_t,
    external_buffer: *mut c_void,
) -> cusparseStatus_t {
    let real = match real::get() {
        Ok(r) => r,
        Err(_) => return CUSPARSE_STATUS_NOT_INITIALIZED,
    };
    let a = Args {
        handle,
        op: op_a,
        alpha,
        mat: mat_a,
        x: vec_x,
        beta,
        y: vec_y,
        compute: compute_type,
        alg,
        buffer: external_buffer,
    };
    // SAFETY: the application's arguments, unchanged.
    let status = unsafe { a.forward(real.preprocess) };
    if status != CUSPARSE_STATUS_SUCCESS || !enabled() {
        return status;
    }
    // SAFETY: as in cusparseSpMV; a panic is caught (the real preprocess has succeeded).
    let _ = std::panic::catch_unwind(|| unsafe {
        if let Some(r) = read(real, &a, false) {
            engine::forget(&r.key);
            // Without a device (no driver) or inside a capture, the next product analyzes.
            if let Some(device) = current_device().filter(|_| !capturing(r.rest.stream)) {
                let e = engine::analyze(r.key, device, a.handle as usize, r.rest.stream);
                log_line(engine::describe(&r.key, &e));
            }
        }
    });
    status
}
