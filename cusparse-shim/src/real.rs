//! The real cuSPARSE, opened by the shim itself and never reached through `RTLD_NEXT`:
//! PyTorch loads `libcusparse.so.12` as a dependency of its own library, outside the global
//! scope, where `dlsym(RTLD_NEXT, ...)` finds nothing. The library is `TESSERA_CUSPARSE_LIB`
//! when set, else the `libcusparse.so.12` already loaded in the process (`RTLD_NOLOAD`), else
//! the one the loader finds by that name. Its functions are resolved once, on its own handle.

use crate::abi::*;
use libloading::os::unix::{Library, Symbol, RTLD_LAZY, RTLD_LOCAL};
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

/// The soname of the real library the shim forwards to.
pub const SONAME: &str = "libcusparse.so.12";

/// `RTLD_NOLOAD` (glibc): open only a library already loaded.
const RTLD_NOLOAD: c_int = 0x4;

/// `cusparseSpMV` and `cusparseSpMV_preprocess` (same parameters).
pub type SpmvFn = unsafe extern "C" fn(
    cusparseHandle_t,
    cusparseOperation_t,
    *const c_void,
    cusparseConstSpMatDescr_t,
    cusparseConstDnVecDescr_t,
    *const c_void,
    cusparseDnVecDescr_t,
    cudaDataType,
    cusparseSpMVAlg_t,
    *mut c_void,
) -> cusparseStatus_t;

/// `cusparseConstCsrGet`.
pub type CsrGetFn = unsafe extern "C" fn(
    cusparseConstSpMatDescr_t,
    *mut i64,
    *mut i64,
    *mut i64,
    *mut *const c_void,
    *mut *const c_void,
    *mut *const c_void,
    *mut cusparseIndexType_t,
    *mut cusparseIndexType_t,
    *mut cusparseIndexBase_t,
    *mut cudaDataType,
) -> cusparseStatus_t;

/// `cusparseConstDnVecGet`.
pub type DnVecGetFn = unsafe extern "C" fn(
    cusparseConstDnVecDescr_t,
    *mut i64,
    *mut *const c_void,
    *mut cudaDataType,
) -> cusparseStatus_t;

/// `cusparseSpMatGetFormat`.
pub type GetFormatFn =
    unsafe extern "C" fn(cusparseConstSpMatDescr_t, *mut cusparseFormat_t) -> cusparseStatus_t;

/// `cusparseGetStream`.
pub type GetStreamFn =
    unsafe extern "C" fn(cusparseHandle_t, *mut cudaStream_t) -> cusparseStatus_t;

/// `cusparseGetPointerMode`.
pub type GetPointerModeFn =
    unsafe extern "C" fn(cusparseHandle_t, *mut cusparsePointerMode_t) -> cusparseStatus_t;

/// The real library's functions the shim calls.
pub struct Real {
    /// Where it was found, for the log.
    pub path: String,
    /// `cusparseSpMV`.
    pub spmv: SpmvFn,
    /// `cusparseSpMV_preprocess`.
    pub preprocess: SpmvFn,
    /// `cusparseConstCsrGet`.
    pub csr_get: CsrGetFn,
    /// `cusparseConstDnVecGet`.
    pub dnvec_get: DnVecGetFn,
    /// `cusparseSpMatGetFormat`.
    pub get_format: GetFormatFn,
    /// `cusparseGetStream`.
    pub get_stream: GetStreamFn,
    /// `cusparseGetPointerMode`.
    pub get_pointer_mode: GetPointerModeFn,
    /// Kept open for the process's lifetime.
    _lib: Library,
}

/// The real library, opened on first use; `Err` says why it could not be (then every call the
/// shim defines answers `CUSPARSE_STATUS_NOT_INITIALIZED`, and the log says why).
pub fn get() -> Result<&'static Real, &'static str> {
    static REAL: OnceLock<Result<Real, String>> = OnceLock::new();
    REAL.get_or_init(open).as_ref().map_err(String::as_str)
}

fn open() -> Result<Real, String> {
    let named = std::env::var("TESSERA_CUSPARSE_LIB").ok();
    let (lib, path) = match &named {
        Some(p) => (
            // SAFETY: opening a shared library runs its initialisers; the user named it as
            // cuSPARSE.
            unsafe { Library::open(Some(p), RTLD_LAZY | RTLD_LOCAL) }
                .map_err(|e| format!("TESSERA_CUSPARSE_LIB={p}: {e}"))?,
            p.clone(),
        ),
        None => {
            // SAFETY: as above; RTLD_NOLOAD only returns a library already loaded (initialised).
            let loaded = unsafe { Library::open(Some(SONAME), RTLD_LAZY | RTLD_NOLOAD) };
            match loaded {
                Ok(l) => (l, format!("{SONAME} (already loaded)")),
                Err(_) => (
                    // SAFETY: as above: cuSPARSE by its soname, found the way the loader would.
                    unsafe { Library::open(Some(SONAME), RTLD_LAZY | RTLD_LOCAL) }
                        .map_err(|e| format!("{SONAME}: {e}"))?,
                    SONAME.to_string(),
                ),
            }
        }
    };
    /// One function of `lib`, by name, as type `F`.
    fn sym<F: Copy>(lib: &Library, name: &str) -> Result<F, String> {
        // SAFETY: every F above is the documented C signature of the symbol of that name.
        let s: Symbol<F> = unsafe { lib.get(name.as_bytes()) }
            .map_err(|e| format!("{name} not found in the real cuSPARSE: {e}"))?;
        Ok(*s)
    }
    Ok(Real {
        spmv: sym(&lib, "cusparseSpMV")?,
        preprocess: sym(&lib, "cusparseSpMV_preprocess")?,
        csr_get: sym(&lib, "cusparseConstCsrGet")?,
        dnvec_get: sym(&lib, "cusparseConstDnVecGet")?,
        get_format: sym(&lib, "cusparseSpMatGetFormat")?,
        get_stream: sym(&lib, "cusparseGetStream")?,
        get_pointer_mode: sym(&lib, "cusparseGetPointerMode")?,
        path,
        _lib: lib,
    })
}
