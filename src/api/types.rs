//! The C-visible types and constants. Every enum of the C API is a named integer type plus one
//! named constant per value; values are append-only and never renumbered. Rust never reads one of
//! these integers as a Rust enum without `TryFrom` (an unknown value is INVALID_VALUE).
#![allow(non_camel_case_types)]

use std::os::raw::c_char;

/// Status returned by every function except the string getters; 0 is success. Numbers follow
/// cuSPARSE's `cusparseStatus_t` where the meaning is the same.
pub type tessera_status = i32;
/// The call succeeded.
pub const TESSERA_STATUS_SUCCESS: tessera_status = 0;
/// The library or handle was not initialised.
pub const TESSERA_STATUS_NOT_INITIALIZED: tessera_status = 1;
/// A host or device allocation failed; the handle is still usable.
pub const TESSERA_STATUS_ALLOC_FAILED: tessera_status = 2;
/// An argument has a value outside its allowed set (for example an unknown enum value).
pub const TESSERA_STATUS_INVALID_VALUE: tessera_status = 3;
/// The device's architecture cannot run the requested operation.
pub const TESSERA_STATUS_ARCH_MISMATCH: tessera_status = 4;
/// A kernel or driver call failed; the detail names the driver error.
pub const TESSERA_STATUS_EXECUTION_FAILED: tessera_status = 6;
/// An internal error (a bug in tessera); the detail says where.
pub const TESSERA_STATUS_INTERNAL_ERROR: tessera_status = 7;
/// A valid request this build does not support.
pub const TESSERA_STATUS_NOT_SUPPORTED: tessera_status = 10;
/// The handle or matrix is NULL, destroyed, or was never created by tessera.
pub const TESSERA_STATUS_INVALID_HANDLE: tessera_status = 100;
/// A required pointer is NULL or points to memory of the wrong kind.
pub const TESSERA_STATUS_INVALID_POINTER: tessera_status = 101;
/// A size is negative, overflows, or is inconsistent with another.
pub const TESSERA_STATUS_INVALID_SIZE: tessera_status = 102;
/// The CSR arrays are malformed; the detail names the offending entry.
pub const TESSERA_STATUS_INVALID_MATRIX: tessera_status = 103;
/// `tessera_spmv` was called on a matrix that was never analyzed.
pub const TESSERA_STATUS_NOT_ANALYZED: tessera_status = 104;
/// No usable CUDA device, driver or NVRTC; the detail says what is missing.
pub const TESSERA_STATUS_NO_DEVICE: tessera_status = 105;
/// Run-time kernel compilation failed; the detail holds the compiler log.
pub const TESSERA_STATUS_COMPILE_FAILED: tessera_status = 106;

/// Where a handle executes.
pub type tessera_backend = i32;
/// An NVIDIA GPU through the CUDA driver (x and y are device pointers).
pub const TESSERA_BACKEND_CUDA: tessera_backend = 0;
/// The host reference backend (x and y are host pointers).
pub const TESSERA_BACKEND_HOST: tessera_backend = 1;

/// Floating-point type of the matrix values, x, y, alpha and beta.
pub type tessera_value_type = i32;
/// `float`.
pub const TESSERA_VALUE_TYPE_F32: tessera_value_type = 0;
/// `double`.
pub const TESSERA_VALUE_TYPE_F64: tessera_value_type = 1;

/// Integer type of the caller's `row_ptr` and `col_ind` arrays.
pub type tessera_index_type = i32;
/// `int32_t` indices.
pub const TESSERA_INDEX_TYPE_I32: tessera_index_type = 0;
/// `int64_t` indices.
pub const TESSERA_INDEX_TYPE_I64: tessera_index_type = 1;

/// Base of the caller's indices.
pub type tessera_index_base = i32;
/// C-style indices starting at 0.
pub const TESSERA_INDEX_BASE_ZERO: tessera_index_base = 0;
/// Fortran-style indices starting at 1.
pub const TESSERA_INDEX_BASE_ONE: tessera_index_base = 1;

/// Which product `tessera_spmv` computes.
pub type tessera_operation = i32;
/// y = alpha*A*x + beta*y.
pub const TESSERA_OPERATION_NON_TRANSPOSE: tessera_operation = 0;
/// y = alpha*A^T*x + beta*y.
pub const TESSERA_OPERATION_TRANSPOSE: tessera_operation = 1;

/// The SpMV method.
pub type tessera_algorithm = i32;
/// Let tessera choose from the matrix's row statistics (and timing, when tuning asks for it).
pub const TESSERA_ALGORITHM_AUTO: tessera_algorithm = 0;
/// Reguly & Giles 2012: parametrised CSR-vector.
pub const TESSERA_ALGORITHM_CSR_VECTOR: tessera_algorithm = 1;
/// Steinberger, Zayer & Seidel 2017: Hola-SpMV.
pub const TESSERA_ALGORITHM_HOLA: tessera_algorithm = 2;
/// Yan, Li, Zhang & Zhou 2014: yaSpMV's BCCOO and BCCOO+.
pub const TESSERA_ALGORITHM_BCCOO: tessera_algorithm = 3;
/// Ashari et al. 2014: blocked row-column format.
pub const TESSERA_ALGORITHM_BRC: tessera_algorithm = 4;
/// Niu et al. 2021: TileSpMV.
pub const TESSERA_ALGORITHM_TILE: tessera_algorithm = 5;

/// How much `tessera_analyze` may measure to pick parameters.
pub type tessera_tuning = i32;
/// Heuristic only: each method's fixed rule.
pub const TESSERA_TUNING_NONE: tessera_tuning = 0;
/// Time a few candidates on the real matrix during analyze.
pub const TESSERA_TUNING_QUICK: tessera_tuning = 1;
/// Search each method's parameter space during analyze.
pub const TESSERA_TUNING_EXHAUSTIVE: tessera_tuning = 2;
/// Reguly & Giles: tune during the first spmv calls with the same matrix.
pub const TESSERA_TUNING_ONLINE: tessera_tuning = 3;

/// Opaque library context: a backend, a device and a stream. Not thread-safe: use one per thread.
pub struct tessera_handle_s {
    _private: (),
}
/// Handle created by `tessera_create` or `tessera_create_with`.
pub type tessera_handle = *mut tessera_handle_s;

/// Opaque sparse matrix owned by tessera (its own copy of the caller's CSR and any built format).
pub struct tessera_matrix_s {
    _private: (),
}
/// Matrix created by `tessera_create_csr`.
pub type tessera_matrix = *mut tessera_matrix_s;

/// What `tessera_matrix_get_info` reports; a plain struct owned by the caller.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct tessera_matrix_info {
    /// What analyze chose (`TESSERA_ALGORITHM_AUTO` before analyze).
    pub algorithm: tessera_algorithm,
    /// Number of rows.
    pub rows: i64,
    /// Number of columns.
    pub cols: i64,
    /// Number of stored entries (duplicates counted).
    pub nnz: i64,
    /// Bytes kept for the matrix on the device (host backend: in host memory).
    pub device_bytes: u64,
    /// Wall time of the last analyze, in milliseconds (0 before analyze).
    pub analysis_ms: f64,
    /// 1 if the non-transposed spmv is bitwise reproducible run to run, else 0 (the generic
    /// TRANSPOSE path uses atomics on the GPU and is not).
    pub deterministic: i32,
    /// The chosen parameters as text, NUL-terminated.
    pub params: [c_char; 256],
}
