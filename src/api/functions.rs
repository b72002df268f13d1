//! Every function of the C API. Argument checks come in one order (rocSPARSE's): handle ->
//! out-pointers/descriptors -> enums -> sizes -> quick return on empty -> arrays.
//! Out-parameters are written only on success. Parameter names follow the header (`A`).
#![allow(non_snake_case)]

use super::guard::{guard, last_error_ptr};
use super::ptr;
use super::types::*;
use crate::backend::cuda::import::DeviceCsr;
use crate::csr::{check_dim, CsrParts, Indices};
use crate::error::{Error, Result};
use crate::handle::Handle;
use crate::matrix::{AnyMatrix, BorrowedWrites, Matrix};
use crate::scalar::Scalar;
use crate::types::{
    Algorithm, BackendKind, IndexBase, IndexType, Operation, Status, Tuning, ValueType,
};
use std::ffi::{c_char, c_int, c_void, CStr};

/// Creates a handle on CUDA device 0. With the environment variable `TESSERA_BACKEND=host` it
/// creates a host-backend handle instead. Without a usable GPU it returns
/// `TESSERA_STATUS_NO_DEVICE` and `tessera_last_error()` says what is missing.
///
/// # Safety
/// `handle` must be NULL or point to writable memory for one `tessera_handle`.
#[no_mangle]
pub unsafe extern "C" fn tessera_create(handle: *mut tessera_handle) -> tessera_status {
    guard("tessera_create", || {
        ptr::out(handle, "handle")?;
        let h = Handle::new()?;
        // SAFETY: checked by ptr::out; writable by the caller's contract.
        unsafe { ptr::write(handle, ptr::new_handle(h)) };
        Ok(())
    })
}

/// Creates a handle on an explicit backend (`TESSERA_BACKEND_CUDA` or `TESSERA_BACKEND_HOST`)
/// and device. The host backend has one device, 0.
///
/// # Safety
/// `handle` must be NULL or point to writable memory for one `tessera_handle`.
#[no_mangle]
pub unsafe extern "C" fn tessera_create_with(
    handle: *mut tessera_handle,
    backend: tessera_backend,
    device_ordinal: c_int,
) -> tessera_status {
    guard("tessera_create_with", || {
        ptr::out(handle, "handle")?;
        let kind = BackendKind::try_from(backend)?;
        let h = Handle::with_backend(kind, device_ordinal)?;
        // SAFETY: checked by ptr::out; writable by the caller's contract.
        unsafe { ptr::write(handle, ptr::new_handle(h)) };
        Ok(())
    })
}

/// Destroys a handle. NULL is a no-op. Matrices created with it stay valid and may be used with
/// another handle of the same backend and device.
///
/// # Safety
/// `handle` must be NULL or a handle not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn tessera_destroy(handle: tessera_handle) -> tessera_status {
    guard("tessera_destroy", || ptr::destroy_handle(handle))
}

/// Sets the stream all work of `handle` is ordered on (`cudaStream_t` / `CUstream`; NULL is the
/// default stream). The host backend runs synchronously and only records it.
///
/// # Safety
/// `handle` must be NULL or a live handle not used by another thread during the call.
#[no_mangle]
pub unsafe extern "C" fn tessera_set_stream(
    handle: tessera_handle,
    cuda_stream: *mut c_void,
) -> tessera_status {
    guard("tessera_set_stream", || {
        // SAFETY: one thread per handle (documented contract).
        let h = unsafe { ptr::handle(handle) }?;
        h.set_stream(cuda_stream as usize)
    })
}

/// Hands back to the driver the device memory tessera keeps for reuse on `handle`'s device: up
/// to 64 MiB of buffers freed by destroyed or re-analyzed matrices, which tessera's memory pool
/// keeps mapped so that the next create or analyze allocates in microseconds instead of
/// mapping memory again. Memory that live matrices hold stays held. For callers about to
/// allocate nearly all device memory themselves, or measuring it (`cudaMemGetInfo`). A no-op
/// on the host backend and with `TESSERA_ALLOC_POOL=0`.
///
/// # Safety
/// `handle` must be NULL or a live handle not used by another thread during the call.
#[no_mangle]
pub unsafe extern "C" fn tessera_release_cached_memory(handle: tessera_handle) -> tessera_status {
    guard("tessera_release_cached_memory", || {
        // SAFETY: one thread per handle (documented contract).
        let h = unsafe { ptr::handle(handle) }?;
        h.cuda().map_or(Ok(()), |dev| dev.release_cached_memory())
    })
}

/// A caller's index array seen from the host, in its index type.
enum IndexArray<'a> {
    I32(ptr::HostArray<'a, i32>),
    I64(ptr::HostArray<'a, i64>),
}

impl IndexArray<'_> {
    fn indices(&self) -> Indices<'_> {
        match self {
            IndexArray::I32(a) => Indices::I32(a.as_slice()),
            IndexArray::I64(a) => Indices::I64(a.as_slice()),
        }
    }
}

fn index_array<'a>(
    h: &Handle,
    p: *const c_void,
    len: usize,
    it: IndexType,
    name: &str,
) -> Result<IndexArray<'a>> {
    // SAFETY (both arms): the caller promises `len` readable indices of type `it` at `p` (host
    // or, on CUDA, device memory); host_array checks NULL, alignment and size.
    Ok(match it {
        IndexType::I32 => {
            IndexArray::I32(unsafe { ptr::host_array(h, p.cast::<i32>(), len, name) }?)
        }
        IndexType::I64 => {
            IndexArray::I64(unsafe { ptr::host_array(h, p.cast::<i64>(), len, name) }?)
        }
    })
}

/// The caller's CSR when `h` is a CUDA handle, the matrix has entries and all three arrays are
/// in device (or managed) memory, each long enough; else `None` (the host path reads them).
fn device_csr(
    h: &Handle,
    [rows, cols, nnz]: [usize; 3],
    [row_ptr, col_ind, values]: [*const c_void; 3],
    it: IndexType,
    base: IndexBase,
    vt: ValueType,
) -> Result<Option<DeviceCsr>> {
    if h.cuda().is_none() || nnz == 0 {
        return Ok(None);
    }
    let index = |p: *const c_void, len: usize, name: &str| match it {
        IndexType::I32 => ptr::device_array(h, p.cast::<i32>(), len, name),
        IndexType::I64 => ptr::device_array(h, p.cast::<i64>(), len, name),
    };
    let Some(rp) = index(row_ptr, rows + 1, "row_ptr")? else {
        return Ok(None);
    };
    let Some(ci) = index(col_ind, nnz, "col_ind")? else {
        return Ok(None);
    };
    let v = match vt {
        ValueType::F32 => ptr::device_array(h, values.cast::<f32>(), nnz, "values")?,
        ValueType::F64 => ptr::device_array(h, values.cast::<f64>(), nnz, "values")?,
    };
    Ok(v.map(|v| DeviceCsr {
        rows,
        cols,
        nnz,
        row_ptr: rp,
        col_ind: ci,
        values: v,
        is64: it == IndexType::I64,
        base,
    }))
}

#[allow(clippy::too_many_arguments)]
fn create_typed<T: Scalar>(
    h: &Handle,
    rows: i64,
    cols: i64,
    nnz: i64,
    row_ptr: Indices<'_>,
    col_ind: Indices<'_>,
    values: *const c_void,
    base: IndexBase,
) -> Result<Matrix<T>> {
    // SAFETY: the caller promises `nnz` readable values of A's type at `values`.
    let values = unsafe { ptr::host_array(h, values.cast::<T>(), nnz as usize, "values") }?;
    Matrix::new(
        h,
        CsrParts {
            rows,
            cols,
            nnz,
            row_ptr,
            col_ind,
            values: values.as_slice(),
            base,
        },
    )
}

/// Creates a matrix from CSR arrays: `row_ptr` (rows+1 entries), `col_ind` and `values` (nnz
/// entries each), indices of type `it` (`int32_t`/`int64_t`) and base `base` (0 or 1, Fortran),
/// values of type `vt`. Columns may be unsorted within a row; duplicate entries add. tessera
/// validates the arrays (a malformed one is `TESSERA_STATUS_INVALID_MATRIX`, and
/// `tessera_last_error()` names the entry) and keeps its own copy: the caller's arrays may be
/// freed after the call. `col_ind` and `values` may be NULL when nnz = 0. On the CUDA backend
/// each array may be host, device or managed memory (detected with `cuPointerGetAttributes`;
/// device arrays are read after the work already queued on the handle's stream). On the host
/// backend the arrays are host memory.
///
/// # Safety
/// Each non-NULL array must be readable for its length; `A` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tessera_create_csr(
    handle: tessera_handle,
    A: *mut tessera_matrix,
    rows: i64,
    cols: i64,
    nnz: i64,
    row_ptr: *const c_void,
    col_ind: *const c_void,
    values: *const c_void,
    it: tessera_index_type,
    base: tessera_index_base,
    vt: tessera_value_type,
) -> tessera_status {
    guard("tessera_create_csr", || {
        // SAFETY: one thread per handle (documented contract).
        let h = unsafe { ptr::handle(handle) }?;
        let (it, base, vt, [nrows, ncols, nz]) = create_args(A, [rows, cols, nnz], (it, base, vt))?;
        // All three arrays in device memory: validated and converted on the device, unless
        // some row's columns need sorting (then the host path below copies and sorts them).
        if let Some(p) = device_csr(
            h,
            [nrows, ncols, nz],
            [row_ptr, col_ind, values],
            it,
            base,
            vt,
        )? {
            let m = match vt {
                ValueType::F32 => Matrix::from_device(h, &p)?.map(AnyMatrix::F32),
                ValueType::F64 => Matrix::from_device(h, &p)?.map(AnyMatrix::F64),
            };
            if let Some(m) = m {
                // SAFETY: checked by ptr::out; writable by the caller's contract.
                unsafe { ptr::write(A, ptr::new_matrix(m)) };
                return Ok(());
            }
        }
        let m = create_copied(
            h,
            [rows, cols, nnz],
            [row_ptr, col_ind, values],
            it,
            base,
            vt,
        )?;
        // SAFETY: checked by ptr::out; writable by the caller's contract.
        unsafe { ptr::write(A, ptr::new_matrix(m)) };
        Ok(())
    })
}

/// The create functions' checks after the handle's, in the API's order: the out-pointer, the
/// enums, the sizes.
fn create_args(
    A: *mut tessera_matrix,
    [rows, cols, nnz]: [i64; 3],
    (it, base, vt): (tessera_index_type, tessera_index_base, tessera_value_type),
) -> Result<(IndexType, IndexBase, ValueType, [usize; 3])> {
    ptr::out(A, "A")?;
    Ok((
        IndexType::try_from(it)?,
        IndexBase::try_from(base)?,
        ValueType::try_from(vt)?,
        [
            check_dim("rows", rows)?,
            check_dim("cols", cols)?,
            check_dim("nnz", nnz)?,
        ],
    ))
}

/// tessera_create_csr's path through host copies of the arrays (any memory the handle reads;
/// dimensions already checked).
fn create_copied(
    h: &Handle,
    [rows, cols, nnz]: [i64; 3],
    [row_ptr, col_ind, values]: [*const c_void; 3],
    it: IndexType,
    base: IndexBase,
    vt: ValueType,
) -> Result<AnyMatrix> {
    let row_ptr = index_array(h, row_ptr, rows as usize + 1, it, "row_ptr")?;
    let col_ind = index_array(h, col_ind, nnz as usize, it, "col_ind")?;
    let (row_ptr, col_ind) = (row_ptr.indices(), col_ind.indices());
    Ok(match vt {
        ValueType::F32 => AnyMatrix::F32(create_typed(
            h, rows, cols, nnz, row_ptr, col_ind, values, base,
        )?),
        ValueType::F64 => AnyMatrix::F64(create_typed(
            h, rows, cols, nnz, row_ptr, col_ind, values, base,
        )?),
    })
}

/// Creates a matrix over the caller's CSR arrays in device (or managed) memory, read in place:
/// nothing is copied, as cuSPARSE's `cusparseCreateCsr` descriptors do, so the first product
/// comes sooner than after `tessera_create_csr` (no allocation, no copy). The arguments are
/// those of `tessera_create_csr`, with these terms (each refused with a status and a
/// `tessera_last_error()` sentence, never read past):
/// - a CUDA handle, and all three arrays in device or managed memory (host arrays:
///   `TESSERA_STATUS_INVALID_VALUE`), each long enough (`TESSERA_STATUS_INVALID_SIZE`);
/// - index base 0, and the columns of each row sorted (`TESSERA_STATUS_NOT_SUPPORTED`: use
///   `tessera_create_csr`, which rebases and sorts a copy); validated on the device as
///   `tessera_create_csr` does (`TESSERA_STATUS_INVALID_MATRIX`);
/// - the arrays stay allocated, and the pattern unchanged, until `tessera_destroy_matrix`;
/// - new values go through `tessera_update_values`: write them into your `values` array (in
///   stream order before the call) and pass that same pointer, or pass other values, which
///   tessera copies into your array; either way the formats tessera built from the old ones
///   are refreshed. Values written in place without the call may or may not be seen.
///
/// Every method runs. CSR_VECTOR and HOLA read the arrays at product time; BRC, TILE, BCCOO and
/// AUTO's background build download them once and keep their own format (counted in
/// `device_bytes`, which holds none of your arrays). With int64 indices the matrix runs
/// CSR_VECTOR's non-transposed product (AUTO picks it). A matrix without entries is copied
/// (there is nothing to read in place).
///
/// # Safety
/// The arrays must stay valid device memory of the stated lengths until the matrix is
/// destroyed; `A` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tessera_create_csr_borrowed(
    handle: tessera_handle,
    A: *mut tessera_matrix,
    rows: i64,
    cols: i64,
    nnz: i64,
    row_ptr: *const c_void,
    col_ind: *const c_void,
    values: *const c_void,
    it: tessera_index_type,
    base: tessera_index_base,
    vt: tessera_value_type,
) -> tessera_status {
    guard("tessera_create_csr_borrowed", || {
        // SAFETY: one thread per handle (documented contract).
        let h = unsafe { ptr::handle(handle) }?;
        let (it, base, vt, dims) = create_args(A, [rows, cols, nnz], (it, base, vt))?;
        if h.cuda().is_none() {
            return Err(Error::InvalidValue(
                "tessera_create_csr_borrowed reads device arrays: it needs a CUDA handle (tessera_create_csr copies host arrays)".into(),
            ));
        }
        let arrays = [row_ptr, col_ind, values];
        if dims[2] == 0 {
            let m = create_copied(h, [rows, cols, nnz], arrays, it, base, vt)?;
            // SAFETY: checked by ptr::out; writable by the caller's contract.
            unsafe { ptr::write(A, ptr::new_matrix(m)) };
            return Ok(());
        }
        let Some(p) = device_csr(h, dims, arrays, it, base, vt)? else {
            let host = ["row_ptr", "col_ind", "values"]
                .into_iter()
                .zip(arrays)
                .filter_map(|(n, a)| (!ptr::is_device_memory(h, a).unwrap_or(false)).then_some(n))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(Error::InvalidValue(format!(
                "tessera_create_csr_borrowed reads the arrays in place, but {host} is not device or managed memory (tessera_create_csr copies host arrays)"
            )));
        };
        // Checked on the device; waited for now only with TESSERA_CHECK=sync (otherwise a
        // malformed matrix's error comes from the first call that reads the check's outcome).
        let m = match (vt, crate::matrix::deferred_checks()) {
            (ValueType::F32, true) => Matrix::borrow_device_deferred(h, &p)?.map(AnyMatrix::F32),
            (ValueType::F64, true) => Matrix::borrow_device_deferred(h, &p)?.map(AnyMatrix::F64),
            (ValueType::F32, false) => {
                Matrix::borrow_device(h, &p, BorrowedWrites::Announced)?.map(AnyMatrix::F32)
            }
            (ValueType::F64, false) => {
                Matrix::borrow_device(h, &p, BorrowedWrites::Announced)?.map(AnyMatrix::F64)
            }
        };
        let Some(m) = m else {
            return Err(crate::matrix::unsorted());
        };
        // SAFETY: checked by ptr::out; writable by the caller's contract.
        unsafe { ptr::write(A, ptr::new_matrix(m)) };
        Ok(())
    })
}

/// Chooses the method (`TESSERA_ALGORITHM_AUTO`) or takes the one requested, picks its
/// parameters (`tune`: fixed rule, or timing candidates on the GPU) and builds its format on the
/// device. Must be called once before `tessera_spmv`; calling it again replaces the analysis.
/// A method this build does not implement is `TESSERA_STATUS_NOT_SUPPORTED`.
///
/// AUTO with `TESSERA_TUNING_NONE`, when it predicts a method with a format of its own (BRC,
/// TILE), returns as soon as a method over the CSR arrays is ready and builds that format on a
/// worker thread (on the GPU, starting after some products: README, "AUTO's background build");
/// a later `tessera_spmv` swaps it in once it is built (never waiting for it).
/// `tessera_matrix_get_info` says which method runs and which is being built;
/// `tessera_finish_background` waits for it; `TESSERA_BACKGROUND_BUILD=0` builds it here.
///
/// # Safety
/// `handle` and `A` must be NULL or live objects not used by another thread during the call.
#[no_mangle]
pub unsafe extern "C" fn tessera_analyze(
    handle: tessera_handle,
    A: tessera_matrix,
    alg: tessera_algorithm,
    tune: tessera_tuning,
) -> tessera_status {
    guard("tessera_analyze", || {
        // SAFETY: one thread per handle; A not used concurrently (documented contract).
        let h = unsafe { ptr::handle(handle) }?;
        // SAFETY: as above.
        let m = unsafe { ptr::matrix_mut(A) }?;
        let alg = Algorithm::try_from(alg)?;
        let tune = Tuning::try_from(tune)?;
        m.analyze(h, alg, tune)
    })
}

/// Reads a scalar, runs one typed product; x and y ranges must not overlap.
///
/// # Safety
/// As `tessera_spmv`.
#[allow(clippy::too_many_arguments)]
unsafe fn spmv_typed<T: Scalar>(
    h: &Handle,
    m: &Matrix<T>,
    op: Operation,
    alpha: *const c_void,
    x: *const c_void,
    beta: *const c_void,
    y: *mut c_void,
) -> Result<()> {
    // SAFETY: alpha/beta point to host scalars of A's value type (documented contract).
    let alpha = unsafe { ptr::scalar(alpha.cast::<T>(), "alpha") }?;
    // SAFETY: as above.
    let beta = unsafe { ptr::scalar(beta.cast::<T>(), "beta") }?;
    // Reported before the empty-matrix quick return, whatever the sizes.
    m.require_analyzed()?;
    let (xl, yl) = m.vector_lengths(op);
    if yl == 0 {
        return Ok(());
    }
    let sz = std::mem::size_of::<T>();
    let (xa, ya) = (x as usize, y as usize);
    // Saturating: a caller's address near the top of the address space must not overflow.
    let overlap = xa < ya.saturating_add(yl * sz) && ya < xa.saturating_add(xl * sz);
    if xl > 0 && !x.is_null() && !y.is_null() && overlap {
        return Err(Error::InvalidValue(
            "x and y overlap; tessera_spmv needs separate input and output vectors".into(),
        ));
    }
    if h.cuda().is_some() {
        for (p, name) in [(xa, "x"), (ya, "y")] {
            if p % std::mem::align_of::<T>() != 0 {
                return Err(Error::InvalidPointer(format!(
                    "{name} = {p:#x} is not aligned to {} bytes",
                    std::mem::align_of::<T>()
                )));
            }
        }
        // Device pointers: spmv_device checks that the GPU can reach them and that their
        // allocations are long enough.
        return m.spmv_device(h, op, alpha, xa as u64, beta, ya as u64);
    }
    // SAFETY: x holds xl readable values, y yl writable ones (contract); ptr::slice* check
    // NULL/alignment/size, and the ranges were just checked to be disjoint.
    let xs = unsafe { ptr::slice(x.cast::<T>(), xl, "x") }?;
    // SAFETY: as above.
    let ys = unsafe { ptr::slice_mut(y.cast::<T>(), yl, "y") }?;
    m.spmv(h, op, alpha, xs, beta, ys)
}

/// y = alpha*op(A)*x + beta*y. `alpha` and `beta` are host scalars of A's value type; x and y are
/// device pointers (host pointers on the host backend) of length cols and rows (rows and cols
/// for `TESSERA_OPERATION_TRANSPOSE`). Asynchronous on the handle's stream; allocates nothing.
/// `beta == 0` never reads y (NaN in y does not leak); `alpha == 0` never reads A or x. Before
/// `tessera_analyze` it returns `TESSERA_STATUS_NOT_ANALYZED`.
///
/// # Safety
/// Pointers must be valid for their lengths; x and y must not overlap.
#[no_mangle]
pub unsafe extern "C" fn tessera_spmv(
    handle: tessera_handle,
    op: tessera_operation,
    alpha: *const c_void,
    A: tessera_matrix,
    x: *const c_void,
    beta: *const c_void,
    y: *mut c_void,
) -> tessera_status {
    guard("tessera_spmv", || {
        // SAFETY: one thread per handle (documented contract).
        let h = unsafe { ptr::handle(handle) }?;
        // SAFETY: A is not modified concurrently (documented contract).
        let m = unsafe { ptr::matrix(A) }?;
        let op = Operation::try_from(op)?;
        // SAFETY: forwarded contract.
        match m {
            AnyMatrix::F32(m) => unsafe { spmv_typed(h, m, op, alpha, x, beta, y) },
            AnyMatrix::F64(m) => unsafe { spmv_typed(h, m, op, alpha, x, beta, y) },
        }
    })
}

/// Replaces the values of A (same sparsity pattern), given in the same order as the `values`
/// array passed to `tessera_create_csr`; no re-analysis. On the CUDA backend `values` may be
/// host memory (copied before the call returns; it may be freed at once) or device/managed
/// memory (scattered by a kernel on the handle's stream: keep it unchanged until that stream
/// has passed this point).
///
/// # Safety
/// `values` must hold nnz readable values of A's type; A not used by another thread meanwhile.
#[no_mangle]
pub unsafe extern "C" fn tessera_update_values(
    handle: tessera_handle,
    A: tessera_matrix,
    values: *const c_void,
) -> tessera_status {
    guard("tessera_update_values", || {
        // SAFETY: one thread per handle (documented contract).
        let h = unsafe { ptr::handle(handle) }?;
        // SAFETY: A not used concurrently (documented contract).
        let m = unsafe { ptr::matrix_mut(A) }?;
        if ptr::is_device_memory(h, values)? {
            if (values as usize) % 4 != 0 {
                return Err(Error::InvalidPointer(format!(
                    "values = {values:p} is misaligned"
                )));
            }
            return match m {
                AnyMatrix::F32(m) => m.update_values_device(h, values as u64),
                AnyMatrix::F64(m) => m.update_values_device(h, values as u64),
            };
        }
        // SAFETY (both arms): `values` holds nnz host values of A's type (contract).
        match m {
            AnyMatrix::F32(m) => {
                let v = unsafe { ptr::slice(values.cast::<f32>(), m.stats().nnz, "values") }?;
                m.update_values(h, v)
            }
            AnyMatrix::F64(m) => {
                let v = unsafe { ptr::slice(values.cast::<f64>(), m.stats().nnz, "values") }?;
                m.update_values(h, v)
            }
        }
    })
}

/// Waits for the format AUTO is building in the background for `A` (see `tessera_analyze`) and
/// swaps it in, so that the next `tessera_spmv` runs it; a no-op when nothing is being built
/// (also when the build failed: the method `A` runs keeps running, and
/// `tessera_matrix_get_info` says why). For callers about to time the steady state, or who
/// would rather pay for the build now. If the matrix's values changed since the build began,
/// the new form's refresh is queued on `handle`'s stream (not waited for).
///
/// # Safety
/// `handle` and `A` must be NULL or live objects; products of `A` on other threads may run
/// meanwhile (the swap waits for those in flight).
#[no_mangle]
pub unsafe extern "C" fn tessera_finish_background(
    handle: tessera_handle,
    A: tessera_matrix,
) -> tessera_status {
    guard("tessera_finish_background", || {
        // SAFETY: a live handle (documented contract).
        let h = unsafe { ptr::handle(handle) }?;
        // SAFETY: a live matrix; only shared access is taken (products may run meanwhile).
        let m = unsafe { ptr::matrix(A) }?;
        match m {
            AnyMatrix::F32(m) => m.finish_background(h),
            AnyMatrix::F64(m) => m.finish_background(h),
        }
    })
}

/// Fills `info` with the method that runs now (what analyze chose, or the format AUTO's
/// background build swapped in since), its parameters as text (prefixed, while a background
/// build is pending or after it, with what is being built and when it swapped in), the bytes
/// kept for the matrix (every form held) and the last analysis time.
///
/// # Safety
/// `info` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tessera_matrix_get_info(
    A: tessera_matrix,
    info: *mut tessera_matrix_info,
) -> tessera_status {
    guard("tessera_matrix_get_info", || {
        // SAFETY: A not modified concurrently (documented contract).
        let m = unsafe { ptr::matrix(A) }?;
        ptr::out(info, "info")?;
        let i = m.info();
        let mut params = [0 as c_char; 256];
        // Truncate on a UTF-8 boundary, leaving room for the NUL.
        let mut n = i.params.len().min(255);
        while !i.params.is_char_boundary(n) {
            n -= 1;
        }
        for (d, s) in params.iter_mut().zip(&i.params.as_bytes()[..n]) {
            *d = *s as c_char;
        }
        let c = tessera_matrix_info {
            algorithm: i.algorithm as tessera_algorithm,
            rows: i.rows as i64,
            cols: i.cols as i64,
            nnz: i.nnz as i64,
            device_bytes: i.device_bytes,
            analysis_ms: i.analysis_ms,
            deterministic: i.deterministic as i32,
            params,
        };
        // SAFETY: checked by ptr::out; writable by the caller's contract.
        unsafe { ptr::write(info, c) };
        Ok(())
    })
}

/// Destroys a matrix and frees everything it holds. NULL is a no-op.
///
/// # Safety
/// `A` must be NULL or a matrix not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn tessera_destroy_matrix(A: tessera_matrix) -> tessera_status {
    guard("tessera_destroy_matrix", || ptr::destroy_matrix(A))
}

fn status_cstr(s: tessera_status) -> (&'static CStr, &'static CStr) {
    match Status::try_from(s) {
        Ok(s) => (s.c_name_cstr(), s.sentence_cstr()),
        Err(_) => (c"TESSERA_STATUS_UNKNOWN", c"Unknown status code."),
    }
}

/// The constant's name of a status, e.g. `"TESSERA_STATUS_INVALID_VALUE"`; never NULL
/// (`"TESSERA_STATUS_UNKNOWN"` for codes tessera does not define). Static storage.
#[no_mangle]
pub extern "C" fn tessera_status_name(s: tessera_status) -> *const c_char {
    status_cstr(s).0.as_ptr()
}

/// One sentence describing a status; never NULL. Static storage.
#[no_mangle]
pub extern "C" fn tessera_status_string(s: tessera_status) -> *const c_char {
    status_cstr(s).1.as_ptr()
}

/// The detail of the last failed call on the calling thread: a sentence naming the function,
/// the argument, and the offending index and value. Empty if no call has failed on this
/// thread. Never NULL; valid until the next failing call on the same thread.
#[no_mangle]
pub extern "C" fn tessera_last_error() -> *const c_char {
    last_error_ptr()
}

/// The library's version (also `TESSERA_VERSION_MAJOR/MINOR/PATCH` in the header, which give the
/// version compiled against).
///
/// # Safety
/// Each pointer must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tessera_get_version(
    major: *mut c_int,
    minor: *mut c_int,
    patch: *mut c_int,
) -> tessera_status {
    guard("tessera_get_version", || {
        ptr::out(major, "major")?;
        ptr::out(minor, "minor")?;
        ptr::out(patch, "patch")?;
        let v = |s: &str| s.parse::<c_int>().unwrap_or(0);
        // SAFETY: all three checked by ptr::out; writable by the caller's contract.
        unsafe {
            ptr::write(major, v(env!("CARGO_PKG_VERSION_MAJOR")));
            ptr::write(minor, v(env!("CARGO_PKG_VERSION_MINOR")));
            ptr::write(patch, v(env!("CARGO_PKG_VERSION_PATCH")));
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_match_the_rust_enum_and_unknown_codes_get_text() {
        for &s in Status::ALL {
            let (n, t) = status_cstr(s as i32);
            assert_eq!(n.to_str().unwrap(), s.c_name());
            assert!(t.to_str().unwrap().ends_with('.'));
        }
        assert_eq!(status_cstr(5).0, c"TESSERA_STATUS_UNKNOWN");
        assert_eq!(status_cstr(-1).1, c"Unknown status code.");
    }
}
