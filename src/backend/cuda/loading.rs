//! Loading CUDA: the driver library and NVRTC are opened at run time (cudarc with
//! `dynamic-loading`), and cudarc panics when a library or a symbol is missing, so before the
//! first CUDA call [`probe_driver`] checks, with the very names cudarc will try, that the driver
//! loads and has every symbol tessera calls (NVRTC is checked by `nvrtc::probe` where a device
//! needs it), and answers NO_DEVICE with a sentence naming what is missing. Also the mapping of
//! driver errors to tessera's statuses.

use crate::error::{Error, Result};
use cudarc::driver::result::DriverError;
use cudarc::driver::sys;
use std::sync::OnceLock;

/// The library names cudarc tries for `name` ("cuda", "nvrtc"), in its order.
fn candidates(name: &str) -> Vec<String> {
    cudarc::get_lib_name_candidates(name)
}

/// Every driver function tessera calls (through cudarc, which looks each symbol up on first use
/// and panics when it is missing). [`probe_driver`] checks them all up front, so an old
/// driver is a NO_DEVICE sentence rather than a panic; a unit test keeps the list complete.
pub const DRIVER_SYMBOLS: &[&str] = &[
    "cuCtxGetCurrent",
    "cuCtxPopCurrent_v2",
    "cuCtxPushCurrent_v2",
    "cuCtxSynchronize",
    "cuDeviceGet",
    "cuDeviceGetAttribute",
    "cuDeviceGetCount",
    "cuDeviceGetName",
    "cuDevicePrimaryCtxRelease_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDeviceTotalMem_v2",
    "cuDriverGetVersion",
    "cuEventCreate",
    "cuEventDestroy_v2",
    "cuEventElapsedTime_v2",
    "cuEventQuery",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuInit",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cuMemAlloc_v2",
    "cuMemAllocAsync",
    "cuMemAllocFromPoolAsync",
    "cuMemFreeHost",
    "cuMemFreeAsync",
    "cuMemFree_v2",
    "cuMemGetInfo_v2",
    "cuMemHostAlloc",
    "cuMemHostGetDevicePointer_v2",
    "cuMemPoolCreate",
    "cuMemPoolDestroy",
    "cuMemPoolSetAttribute",
    "cuMemPoolTrimTo",
    "cuMemcpyDtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyHtoDAsync_v2",
    "cuMemsetD8Async",
    "cuModuleEnumerateFunctions",
    "cuModuleGetFunction",
    "cuModuleGetFunctionCount",
    "cuModuleLoadData",
    "cuModuleUnload",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    "cuFuncLoad",
    "cuFuncSetAttribute",
    "cuPointerGetAttributes",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuStreamGetCtx",
    "cuStreamIsCapturing",
    "cuStreamSynchronize",
    "cuStreamWaitEvent",
    "cuThreadExchangeStreamCaptureMode",
];

/// Loads the first of cudarc's candidate names for `name` that loads, and checks that it has
/// every symbol in `symbols`.
fn try_load(name: &str, symbols: &[&str]) -> std::result::Result<(), String> {
    let mut why = Vec::new();
    for lib in candidates(name) {
        // SAFETY: loading a shared library runs its initialisers; libcuda and libnvrtc are
        // NVIDIA's own libraries whose initialisers have no preconditions on our side. The
        // handle is closed again at the end; cudarc opens the same name itself later.
        match unsafe { libloading::Library::new(&lib) } {
            Ok(l) => {
                let missing: Vec<&str> = symbols
                    .iter()
                    .copied()
                    // SAFETY: only the symbol's presence is checked; nothing is called.
                    .filter(|s| unsafe { l.get::<*const ()>(s.as_bytes()) }.is_err())
                    .collect();
                return if missing.is_empty() {
                    Ok(())
                } else {
                    Err(format!(
                        "{lib} lacks {}: it is older than the CUDA 13.0 driver API tessera uses; update the NVIDIA driver",
                        missing.join(", ")
                    ))
                };
            }
            Err(e) => why.push(e.to_string()),
        }
    }
    why.dedup();
    Err(why.into_iter().next().unwrap_or_default())
}

/// Checks that the CUDA driver library can be loaded and has every symbol tessera calls. (NVRTC
/// is checked when a device needs it: see `Device::open`.)
pub fn probe_driver() -> Result<()> {
    try_load("cuda", DRIVER_SYMBOLS).map_err(|why| {
        Error::NoDevice(format!(
            "the CUDA driver library libcuda could not be used ({why}); install or update the NVIDIA driver, or set TESSERA_BACKEND=host for the host backend"
        ))
    })
}

/// Turns a driver error into tessera's error: out of memory is ALLOC_FAILED, a missing or
/// unusable device NO_DEVICE, a missing binary ARCH_MISMATCH, everything else EXECUTION_FAILED
/// with the driver's name for it (never swallowed).
pub(crate) fn driver_error(e: DriverError, what: &str) -> Error {
    use sys::CUresult as R;
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("CUresult {}", e.0 as u32));
    let text = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let detail = format!("{what} failed: {name} ({text})");
    match e.0 {
        R::CUDA_ERROR_OUT_OF_MEMORY => Error::AllocFailed(detail),
        R::CUDA_ERROR_NO_DEVICE
        | R::CUDA_ERROR_INVALID_DEVICE
        | R::CUDA_ERROR_DEVICE_UNAVAILABLE
        | R::CUDA_ERROR_STUB_LIBRARY => Error::NoDevice(detail),
        R::CUDA_ERROR_NO_BINARY_FOR_GPU
        | R::CUDA_ERROR_UNSUPPORTED_PTX_VERSION
        | R::CUDA_ERROR_INVALID_PTX => Error::ArchMismatch(detail),
        _ => Error::ExecutionFailed(detail),
    }
}

/// `Ok` for CUDA_SUCCESS, else the mapped error.
pub(crate) fn check(r: sys::CUresult, what: &str) -> Result<()> {
    r.result().map_err(|e| driver_error(e, what))
}

pub(super) fn init() -> Result<()> {
    static INIT: OnceLock<std::result::Result<(), (sys::CUresult, String)>> = OnceLock::new();
    let r = INIT.get_or_init(|| {
        // SAFETY: cuInit has no preconditions; the library was probed first.
        let r = unsafe { sys::cuInit(0) };
        match r.result() {
            Ok(()) => Ok(()),
            Err(e) => Err((r, driver_error(e, "cuInit").to_string())),
        }
    });
    match r {
        Ok(()) => Ok(()),
        Err((_, detail)) => Err(Error::NoDevice(format!(
            "{detail}; no usable CUDA device (set TESSERA_BACKEND=host for the host backend)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_driver_function_the_code_calls_is_probed_up_front() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
        if !std::path::Path::new(dir).is_dir() {
            // A test executable copied to another machine (the GPU bundle) has no sources.
            eprintln!("skipped: the source tree {dir} is not on this machine");
            return;
        }
        let mut files = vec![];
        let mut stack = vec![std::path::PathBuf::from(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    files.push(p);
                }
            }
        }
        let mut called = std::collections::BTreeSet::new();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for prefix in ["sys::cu", "cu::cu"] {
                for (i, _) in text.match_indices(prefix) {
                    let name: String = text[i + prefix.len() - 2..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if text[i + prefix.len() - 2 + name.len()..].starts_with('(') {
                        called.insert(name);
                    }
                }
            }
        }
        assert!(called.len() > 20, "the scan found only {called:?}");
        for name in &called {
            assert!(
                super::DRIVER_SYMBOLS.contains(&name.as_str()),
                "{name} is called but not in DRIVER_SYMBOLS"
            );
        }
    }
}
