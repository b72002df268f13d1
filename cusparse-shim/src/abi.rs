//! cuSPARSE's C ABI, as far as the shim uses it, written from cuSPARSE's documented
//! declarations (the generic API of cuSPARSE 12): opaque pointers for the handle and the
//! descriptors, `int` enums. `tests/header.rs` compiles the shim's exported declarations
//! against NVIDIA's own `cusparse.h` (from the `nvidia-cusparse` wheel) and checks every
//! constant here against its enumerator.
#![allow(non_camel_case_types)]

use std::ffi::{c_int, c_void};

/// `cusparseStatus_t`.
pub type cusparseStatus_t = c_int;
/// `cusparseHandle_t`: the real library's handle, passed through.
pub type cusparseHandle_t = *mut c_void;
/// `cusparseConstSpMatDescr_t` (and `cusparseSpMatDescr_t`): a real descriptor.
pub type cusparseConstSpMatDescr_t = *const c_void;
/// `cusparseConstDnVecDescr_t`.
pub type cusparseConstDnVecDescr_t = *const c_void;
/// `cusparseDnVecDescr_t`.
pub type cusparseDnVecDescr_t = *mut c_void;
/// `cusparseOperation_t`.
pub type cusparseOperation_t = c_int;
/// `cusparseSpMVAlg_t`.
pub type cusparseSpMVAlg_t = c_int;
/// `cudaDataType` (`cudaDataType_t`).
pub type cudaDataType = c_int;
/// `cusparseIndexType_t`.
pub type cusparseIndexType_t = c_int;
/// `cusparseIndexBase_t`.
pub type cusparseIndexBase_t = c_int;
/// `cusparseFormat_t`.
pub type cusparseFormat_t = c_int;
/// `cusparsePointerMode_t`.
pub type cusparsePointerMode_t = c_int;
/// `cudaStream_t`.
pub type cudaStream_t = *mut c_void;

/// `CUSPARSE_STATUS_SUCCESS`.
pub const CUSPARSE_STATUS_SUCCESS: cusparseStatus_t = 0;
/// `CUSPARSE_STATUS_NOT_INITIALIZED`.
pub const CUSPARSE_STATUS_NOT_INITIALIZED: cusparseStatus_t = 1;
/// `CUSPARSE_STATUS_INVALID_VALUE`.
pub const CUSPARSE_STATUS_INVALID_VALUE: cusparseStatus_t = 3;
/// `CUSPARSE_STATUS_EXECUTION_FAILED`.
pub const CUSPARSE_STATUS_EXECUTION_FAILED: cusparseStatus_t = 6;
/// `CUSPARSE_STATUS_INTERNAL_ERROR`.
pub const CUSPARSE_STATUS_INTERNAL_ERROR: cusparseStatus_t = 7;

/// `CUSPARSE_OPERATION_NON_TRANSPOSE`.
pub const CUSPARSE_OPERATION_NON_TRANSPOSE: cusparseOperation_t = 0;
/// `CUSPARSE_OPERATION_TRANSPOSE`.
pub const CUSPARSE_OPERATION_TRANSPOSE: cusparseOperation_t = 1;

/// `CUSPARSE_SPMV_ALG_DEFAULT`.
pub const CUSPARSE_SPMV_ALG_DEFAULT: cusparseSpMVAlg_t = 0;
/// `CUSPARSE_SPMV_CSR_ALG1`.
pub const CUSPARSE_SPMV_CSR_ALG1: cusparseSpMVAlg_t = 2;
/// `CUSPARSE_SPMV_CSR_ALG2`.
pub const CUSPARSE_SPMV_CSR_ALG2: cusparseSpMVAlg_t = 3;

/// `CUDA_R_32F`.
pub const CUDA_R_32F: cudaDataType = 0;
/// `CUDA_R_64F`.
pub const CUDA_R_64F: cudaDataType = 1;

/// `CUSPARSE_INDEX_32I`.
pub const CUSPARSE_INDEX_32I: cusparseIndexType_t = 2;
/// `CUSPARSE_INDEX_64I`.
pub const CUSPARSE_INDEX_64I: cusparseIndexType_t = 3;

/// `CUSPARSE_INDEX_BASE_ZERO`.
pub const CUSPARSE_INDEX_BASE_ZERO: cusparseIndexBase_t = 0;
/// `CUSPARSE_INDEX_BASE_ONE`.
pub const CUSPARSE_INDEX_BASE_ONE: cusparseIndexBase_t = 1;

/// `CUSPARSE_FORMAT_CSR`.
pub const CUSPARSE_FORMAT_CSR: cusparseFormat_t = 1;

/// `CUSPARSE_POINTER_MODE_HOST`.
pub const CUSPARSE_POINTER_MODE_HOST: cusparsePointerMode_t = 0;
/// `CUSPARSE_POINTER_MODE_DEVICE`.
pub const CUSPARSE_POINTER_MODE_DEVICE: cusparsePointerMode_t = 1;

/// Every constant above with its C name: `tests/header.rs` checks each against NVIDIA's
/// header.
pub const CONSTANTS: &[(&str, c_int)] = &[
    ("CUSPARSE_STATUS_SUCCESS", CUSPARSE_STATUS_SUCCESS),
    (
        "CUSPARSE_STATUS_NOT_INITIALIZED",
        CUSPARSE_STATUS_NOT_INITIALIZED,
    ),
    (
        "CUSPARSE_STATUS_INVALID_VALUE",
        CUSPARSE_STATUS_INVALID_VALUE,
    ),
    (
        "CUSPARSE_STATUS_EXECUTION_FAILED",
        CUSPARSE_STATUS_EXECUTION_FAILED,
    ),
    (
        "CUSPARSE_STATUS_INTERNAL_ERROR",
        CUSPARSE_STATUS_INTERNAL_ERROR,
    ),
    (
        "CUSPARSE_OPERATION_NON_TRANSPOSE",
        CUSPARSE_OPERATION_NON_TRANSPOSE,
    ),
    ("CUSPARSE_OPERATION_TRANSPOSE", CUSPARSE_OPERATION_TRANSPOSE),
    ("CUSPARSE_SPMV_ALG_DEFAULT", CUSPARSE_SPMV_ALG_DEFAULT),
    ("CUSPARSE_SPMV_CSR_ALG1", CUSPARSE_SPMV_CSR_ALG1),
    ("CUSPARSE_SPMV_CSR_ALG2", CUSPARSE_SPMV_CSR_ALG2),
    ("CUDA_R_32F", CUDA_R_32F),
    ("CUDA_R_64F", CUDA_R_64F),
    ("CUSPARSE_INDEX_32I", CUSPARSE_INDEX_32I),
    ("CUSPARSE_INDEX_64I", CUSPARSE_INDEX_64I),
    ("CUSPARSE_INDEX_BASE_ZERO", CUSPARSE_INDEX_BASE_ZERO),
    ("CUSPARSE_INDEX_BASE_ONE", CUSPARSE_INDEX_BASE_ONE),
    ("CUSPARSE_FORMAT_CSR", CUSPARSE_FORMAT_CSR),
    ("CUSPARSE_POINTER_MODE_HOST", CUSPARSE_POINTER_MODE_HOST),
    ("CUSPARSE_POINTER_MODE_DEVICE", CUSPARSE_POINTER_MODE_DEVICE),
];
