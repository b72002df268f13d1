//! The CUDA backend: the device's primary context, streams, device memory, pointer-kind
//! detection, events and kernel launches, over the CUDA driver API.
//!
//! CUDA is loaded, not linked (cudarc with `dynamic-loading`). cudarc panics when a library or a
//! symbol is missing, so before the first CUDA call [`probe_libraries`] checks, with the very
//! names cudarc will try, that the driver (`libcuda`) and NVRTC (`libnvrtc`) load, and answers
//! NO_DEVICE with a sentence naming what is missing. (The C API's guard would still turn a
//! panic into INTERNAL_ERROR; the probe makes the answer NO_DEVICE and readable.)
//!
//! Contexts: every device is used through its *primary* context (`cuDevicePrimaryCtxRetain`),
//! the one the CUDA runtime uses, so pointers from `cudaMalloc` and streams from
//! `cudaStreamCreate` work as they are. Each call pushes that context for its duration and pops
//! it again ([`Device::enter`]), leaving the caller's current context as it was.
//!
//! Compiled kernel modules are kept per device context in memory (shared by all handles of the
//! device, and alive while any handle or matrix of the device is) and on disk (see [`cache`]).

pub mod cache;
pub mod csr;
pub mod cusparse;
#[doc(hidden)]
pub mod fault;
pub mod kernels;
pub mod nvrtc;

use crate::error::{Error, Result};
use cudarc::driver::result::DriverError;
use cudarc::driver::sys;
use std::collections::HashMap;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// The library names cudarc tries for `name` ("cuda", "nvrtc"), in its order.
fn candidates(name: &str) -> Vec<String> {
    cudarc::get_lib_name_candidates(name)
}

/// Every driver function tessera calls (through cudarc, which looks each symbol up on first use
/// and panics when it is missing). [`probe_libraries`] checks them all up front, so an old
/// driver is a NO_DEVICE sentence rather than a panic; a unit test keeps the list complete.
pub const DRIVER_SYMBOLS: &[&str] = &[
    "cuCtxPopCurrent_v2",
    "cuCtxPushCurrent_v2",
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
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemGetInfo_v2",
    "cuMemcpyDtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyHtoDAsync_v2",
    "cuMemsetD8Async",
    "cuModuleGetFunction",
    "cuModuleLoadData",
    "cuModuleUnload",
    "cuPointerGetAttributes",
    "cuStreamGetCtx",
    "cuStreamIsCapturing",
    "cuStreamSynchronize",
    "cuStreamWaitEvent",
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

/// Checks that the CUDA driver library and NVRTC can be loaded, naming what is missing.
pub fn probe_libraries() -> Result<()> {
    if let Err(why) = try_load("cuda", DRIVER_SYMBOLS) {
        return Err(Error::NoDevice(format!(
            "the CUDA driver library libcuda could not be used ({why}); install or update the NVIDIA driver, or set TESSERA_BACKEND=host for the host backend"
        )));
    }
    nvrtc::probe()
}

/// Turns a driver error into tessera's error: out of memory is ALLOC_FAILED, a missing or
/// unusable device NO_DEVICE, a missing binary ARCH_MISMATCH, everything else EXECUTION_FAILED
/// with the driver's name for it (CONVENTIONS §8).
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

fn init() -> Result<()> {
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

/// A CUDA device opened through its primary context, with the properties tessera uses and the
/// in-memory module cache. Shared (`Arc`) by every handle, matrix and buffer of the device; the
/// primary context is released when the last of them goes.
pub struct Device {
    ordinal: i32,
    cu: sys::CUdevice,
    ctx: sys::CUcontext,
    name: String,
    sm_count: u32,
    cc: (i32, i32),
    max_grid_x: u32,
    max_block: u32,
    total_mem: usize,
    modules: Mutex<HashMap<[u8; 32], Arc<Module>>>,
}

// SAFETY: a CUcontext and CUdevice are process-wide driver handles, valid from any thread;
// every use pushes the context on the calling thread first. The module map is behind a Mutex.
unsafe impl Send for Device {}
// SAFETY: as above; Device has no interior mutability outside the Mutex.
unsafe impl Sync for Device {}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Device({} {}, sm_{}{}, {} SMs)",
            self.ordinal, self.name, self.cc.0, self.cc.1, self.sm_count
        )
    }
}

/// Makes a context current for a scope, restoring the previous one on drop.
pub(crate) struct CtxGuard(());

impl CtxGuard {
    fn push(ctx: sys::CUcontext) -> Result<CtxGuard> {
        // SAFETY: ctx is a retained primary context, alive while its Device is.
        check(unsafe { sys::cuCtxPushCurrent_v2(ctx) }, "cuCtxPushCurrent")?;
        Ok(CtxGuard(()))
    }
}

impl Drop for CtxGuard {
    fn drop(&mut self) {
        let mut old = std::ptr::null_mut();
        // SAFETY: pops the context this guard pushed on this thread.
        let _ = unsafe { sys::cuCtxPopCurrent_v2(&mut old) };
    }
}

fn attribute(cu: sys::CUdevice, a: sys::CUdevice_attribute) -> Result<i32> {
    let mut v = 0;
    // SAFETY: cu is a valid device from cuDeviceGet; v is a valid out-pointer.
    check(
        unsafe { sys::cuDeviceGetAttribute(&mut v, a, cu) },
        "cuDeviceGetAttribute",
    )?;
    Ok(v)
}

impl Device {
    /// Opens device `ordinal` (shared with other handles of the same device in this process).
    pub fn open(ordinal: i32) -> Result<Arc<Device>> {
        static OPEN: Mutex<Vec<(i32, Weak<Device>)>> = Mutex::new(Vec::new());
        probe_libraries()?;
        init()?;
        let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
        open.retain(|(_, w)| w.strong_count() > 0);
        if let Some(d) = open
            .iter()
            .find(|(o, _)| *o == ordinal)
            .and_then(|(_, w)| w.upgrade())
        {
            return Ok(d);
        }
        let d = Arc::new(Device::open_new(ordinal)?);
        open.push((ordinal, Arc::downgrade(&d)));
        Ok(d)
    }

    fn open_new(ordinal: i32) -> Result<Device> {
        let mut count = 0;
        // SAFETY: count is a valid out-pointer; the driver is initialised.
        check(
            unsafe { sys::cuDeviceGetCount(&mut count) },
            "cuDeviceGetCount",
        )?;
        if count == 0 {
            return Err(Error::NoDevice(
                "the CUDA driver loaded but reports no CUDA device; set TESSERA_BACKEND=host for the host backend".into(),
            ));
        }
        if ordinal >= count {
            return Err(Error::InvalidValue(format!(
                "device_ordinal = {ordinal}, but this machine has {count} CUDA device(s) (0..{})",
                count - 1
            )));
        }
        let mut cu = 0;
        // SAFETY: 0 <= ordinal < count; cu is a valid out-pointer.
        check(unsafe { sys::cuDeviceGet(&mut cu, ordinal) }, "cuDeviceGet")?;
        let name = cudarc::driver::result::device::get_name(cu)
            .map_err(|e| driver_error(e, "cuDeviceGetName"))?;
        use sys::CUdevice_attribute as A;
        let sm_count = attribute(cu, A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let cc = (
            attribute(cu, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attribute(cu, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        );
        let max_grid_x = attribute(cu, A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)? as u32;
        let max_block = attribute(cu, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32;
        let mut total_mem = 0usize;
        // SAFETY: valid device and out-pointer.
        check(
            unsafe { sys::cuDeviceTotalMem_v2(&mut total_mem, cu) },
            "cuDeviceTotalMem",
        )?;
        let mut ctx = std::ptr::null_mut();
        // SAFETY: valid device and out-pointer; released in Drop.
        check(
            unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, cu) },
            "cuDevicePrimaryCtxRetain",
        )?;
        Ok(Device {
            ordinal,
            cu,
            ctx,
            name,
            sm_count,
            cc,
            max_grid_x,
            max_block,
            total_mem,
            modules: Mutex::new(HashMap::new()),
        })
    }

    /// Pushes this device's context on the calling thread until the guard drops.
    pub(crate) fn enter(&self) -> Result<CtxGuard> {
        CtxGuard::push(self.ctx)
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> i32 {
        self.ordinal
    }

    /// The device name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Streaming multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }

    /// Compute capability (major, minor).
    pub fn compute_capability(&self) -> (i32, i32) {
        self.cc
    }

    /// Total device memory in bytes.
    pub fn total_memory(&self) -> usize {
        self.total_mem
    }

    /// The driver's version as (major, minor), e.g. (13, 0).
    pub fn driver_version(&self) -> (i32, i32) {
        let mut v = 0;
        // SAFETY: valid out-pointer.
        let _ = unsafe { sys::cuDriverGetVersion(&mut v) };
        (v / 1000, (v % 1000) / 10)
    }

    /// Free and total device memory in bytes.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        let _g = self.enter()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: context current; valid out-pointers.
        check(
            unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) },
            "cuMemGetInfo",
        )?;
        Ok((free, total))
    }

    /// The module for `spec`, compiled for this device: from memory, else from the disk cache,
    /// else compiled with NVRTC (and written to the disk cache).
    pub(crate) fn module(&self, spec: &kernels::KernelSpec) -> Result<Arc<Module>> {
        let arch = nvrtc::arch_for(self.cc)?;
        let source = spec.source();
        let options = spec.options(arch);
        let key = cache::key(&source, &options, arch, nvrtc::version()?);
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        // A compilation or load fault armed for a test reaches NVRTC and the driver every time.
        let bypass = fault::bypass_module_cache();
        if let Some(m) = modules.get(&key).filter(|_| !bypass) {
            return Ok(m.clone());
        }
        let _g = self.enter()?;
        let dir = cache::dir();
        let cached = dir
            .as_deref()
            .filter(|_| !bypass)
            .and_then(|d| cache::read(d, &key));
        let module = match cached {
            // A cached image the driver refuses is not trusted: compile it afresh.
            Some(image) => match Module::load(self.ctx, &image) {
                Ok(m) => m,
                Err(_) => self.compile_and_load(spec, &source, &options, dir.as_deref(), &key)?,
            },
            None => self.compile_and_load(spec, &source, &options, dir.as_deref(), &key)?,
        };
        let module = Arc::new(module);
        modules.insert(key, module.clone());
        Ok(module)
    }

    fn compile_and_load(
        &self,
        spec: &kernels::KernelSpec,
        source: &str,
        options: &[String],
        dir: Option<&std::path::Path>,
        key: &[u8; 32],
    ) -> Result<Module> {
        let cubin = nvrtc::compile_cubin(source, spec.file_name(), options)?;
        let module = Module::load(self.ctx, &cubin)?;
        if let Some(dir) = dir {
            cache::write(dir, key, &cubin);
        }
        Ok(module)
    }

    /// Checks a launch configuration against this device's limits (CONVENTIONS §7).
    fn check_launch(&self, what: &str, grid: usize, block: u32) -> Result<()> {
        if grid == 0 || grid > self.max_grid_x as usize {
            return Err(Error::NotSupported(format!(
                "{what}: a grid of {grid} blocks is outside this device's 1..={} (choose a larger repeat)",
                self.max_grid_x
            )));
        }
        if block == 0 || block > self.max_block || block % 32 != 0 {
            return Err(Error::InvalidValue(format!(
                "{what}: block size {block} is not a multiple of 32 in 32..={}",
                self.max_block
            )));
        }
        Ok(())
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // Modules unload with the context current (Module::drop pushes it), then the context's
        // reference is released.
        self.modules
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        // SAFETY: balances the retain in open_new; nothing of this device is used after this.
        let _ = unsafe { sys::cuDevicePrimaryCtxRelease_v2(self.cu) };
    }
}

/// A loaded CUBIN module.
pub struct Module {
    module: sys::CUmodule,
    ctx: sys::CUcontext,
}

// SAFETY: module handles are process-wide; used with their context pushed.
unsafe impl Send for Module {}
// SAFETY: as above; no interior mutability.
unsafe impl Sync for Module {}

impl Module {
    fn load(ctx: sys::CUcontext, image: &[u8]) -> Result<Module> {
        let _g = CtxGuard::push(ctx)?;
        let mut module = std::ptr::null_mut();
        if let Some(why) = fault::hit(fault::Fault::Load) {
            let e = driver_error(
                DriverError(sys::CUresult::CUDA_ERROR_INVALID_IMAGE),
                "cuModuleLoadData",
            );
            return Err(e.map_detail(|d| format!("{d} {why}")));
        }
        // SAFETY: image is a complete CUBIN (ELF) image in host memory; the driver copies it.
        check(
            unsafe { sys::cuModuleLoadData(&mut module, image.as_ptr().cast()) },
            "cuModuleLoadData",
        )?;
        Ok(Module { module, ctx })
    }

    /// The entry point `name`.
    pub(crate) fn function(self: &Arc<Self>, name: &str) -> Result<Function> {
        let cname = std::ffi::CString::new(name)
            .map_err(|_| Error::Internal(format!("kernel name {name:?} has a NUL")))?;
        let mut f = std::ptr::null_mut();
        // SAFETY: the module is loaded; cname is NUL-terminated; f is a valid out-pointer.
        check(
            unsafe { sys::cuModuleGetFunction(&mut f, self.module, cname.as_ptr()) },
            &format!("cuModuleGetFunction({name})"),
        )?;
        Ok(Function {
            f,
            name: name.to_string(),
            _module: self.clone(),
        })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        if let Ok(_g) = CtxGuard::push(self.ctx) {
            // SAFETY: the module was loaded in this context and no Function of it is alive
            // (each holds an Arc of the module).
            let _ = unsafe { sys::cuModuleUnload(self.module) };
        }
    }
}

/// A kernel entry point; keeps its module loaded.
#[derive(Clone)]
pub struct Function {
    f: sys::CUfunction,
    name: String,
    _module: Arc<Module>,
}

// SAFETY: CUfunction handles are process-wide and immutable.
unsafe impl Send for Function {}
// SAFETY: as above.
unsafe impl Sync for Function {}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Function({})", self.name)
    }
}

/// A CUDA stream given by the caller (`cudaStream_t`/`CUstream`); 0 is the default stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stream(pub usize);

impl Stream {
    fn raw(self) -> sys::CUstream {
        self.0 as sys::CUstream
    }

    /// True when `self` and `other` name one stream whose own order puts work queued through
    /// one after work queued earlier through the other: equal handles, except
    /// `CU_STREAM_PER_THREAD` (0x2), which names a different stream on every thread. (A stream
    /// destroyed while its work still runs and a new one created at the same address would
    /// pass too: destroying a stream that still runs a product of a matrix and then using the
    /// matrix on a new stream is outside the concurrency contract, README.)
    pub fn same_queue(self, other: Stream) -> bool {
        self.0 == other.0 && self.0 != 2
    }
}

/// Special stream handles that are not objects: the legacy and per-thread default streams.
const CU_STREAM_LEGACY: usize = 0x1;
const CU_STREAM_PER_THREAD: usize = 0x2;

/// Checks that `stream` is the default stream or a stream of `dev`'s primary context.
pub fn check_stream(dev: &Device, stream: usize) -> Result<()> {
    if matches!(stream, 0 | CU_STREAM_LEGACY | CU_STREAM_PER_THREAD) {
        return Ok(());
    }
    let _g = dev.enter()?;
    let mut ctx = std::ptr::null_mut();
    // SAFETY: stream is the caller's cudaStream_t (contract: a live stream); ctx out-pointer.
    let r = unsafe { sys::cuStreamGetCtx(stream as sys::CUstream, &mut ctx) };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(Error::InvalidValue(format!(
            "cuda_stream {stream:#x} is not a usable CUDA stream ({})",
            driver_error(DriverError(r), "cuStreamGetCtx")
        )));
    }
    if ctx != dev.ctx {
        return Err(Error::InvalidValue(format!(
            "cuda_stream {stream:#x} belongs to another CUDA context than device {}'s primary context; create it with cudaStreamCreate (or in the primary context)",
            dev.ordinal
        )));
    }
    Ok(())
}

/// Waits for all work queued on `stream`.
pub fn synchronize(dev: &Device, stream: Stream) -> Result<()> {
    let _g = dev.enter()?;
    // SAFETY: stream is the default stream or a checked stream of this context.
    check(
        unsafe { sys::cuStreamSynchronize(stream.raw()) },
        "cuStreamSynchronize",
    )
}

/// True while `stream` is being captured into a CUDA graph.
pub(crate) fn is_capturing(dev: &Device, stream: Stream) -> Result<bool> {
    let _g = dev.enter()?;
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: stream checked; status is a valid out-pointer.
    check(
        unsafe { sys::cuStreamIsCapturing(stream.raw(), &mut status) },
        "cuStreamIsCapturing",
    )?;
    Ok(status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
}

/// Where a caller's pointer lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemKind {
    /// Ordinary (pageable) host memory, unknown to CUDA.
    Host,
    /// Page-locked host memory (cudaMallocHost / cudaHostRegister), readable by the host.
    PinnedHost {
        /// The device may use the same address (UVA mapping).
        device_accessible: bool,
    },
    /// Device memory of device `ordinal`.
    Device {
        /// The owning device.
        ordinal: i32,
    },
    /// Managed (unified) memory.
    Managed,
}

/// What the driver knows of a pointer.
#[derive(Debug, Clone, Copy)]
pub struct PtrInfo {
    /// The kind of memory.
    pub kind: MemKind,
    /// Bytes from the pointer to the end of its allocation, when the driver knows the range.
    pub bytes_left: Option<u64>,
}

/// Asks the driver what `ptr` is (`cuPointerGetAttributes`). Memory CUDA does not know is Host.
pub fn pointer_info(dev: &Device, ptr: usize) -> Result<PtrInfo> {
    let _g = dev.enter()?;
    use sys::CUpointer_attribute as P;
    let mut attrs = [
        P::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        P::CU_POINTER_ATTRIBUTE_IS_MANAGED,
        P::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        P::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        P::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        P::CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
    ];
    // Each attribute is written as at most 8 bytes into a zeroed slot; unknown pointers leave
    // them zero (the documented behaviour of cuPointerGetAttributes).
    let mut vals = [0u64; 6];
    let mut data: Vec<*mut c_void> = vals.iter_mut().map(|v| (v as *mut u64).cast()).collect();
    // SAFETY: attrs and data have the same length; each data slot is 8 writable bytes.
    check(
        unsafe {
            sys::cuPointerGetAttributes(
                attrs.len() as u32,
                attrs.as_mut_ptr(),
                data.as_mut_ptr(),
                ptr as sys::CUdeviceptr,
            )
        },
        "cuPointerGetAttributes",
    )?;
    let mem_type = vals[0] as u32;
    let managed = vals[1] as u32 != 0;
    let ordinal = vals[2] as u32 as i32;
    let (start, size) = (vals[3], vals[4]);
    let bytes_left = (size > 0 && (ptr as u64) >= start && (ptr as u64) < start + size)
        .then(|| start + size - ptr as u64);
    let kind = if managed {
        MemKind::Managed
    } else if mem_type == sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 {
        MemKind::Device { ordinal }
    } else if mem_type == sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32 {
        MemKind::PinnedHost {
            device_accessible: vals[5] == ptr as u64,
        }
    } else {
        MemKind::Host
    };
    Ok(PtrInfo { kind, bytes_left })
}

/// Checks that the device can read/write `bytes` at `ptr` (argument `name`): device memory of
/// this device, managed memory, or mapped pinned host memory; a plain host pointer is
/// INVALID_POINTER (it would fault the GPU).
pub fn check_device_accessible(dev: &Device, ptr: usize, bytes: usize, name: &str) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    if ptr == 0 {
        return Err(Error::InvalidPointer(format!("{name} is NULL")));
    }
    let info = pointer_info(dev, ptr)?;
    match info.kind {
        MemKind::Host | MemKind::PinnedHost { device_accessible: false } => {
            return Err(Error::InvalidPointer(format!(
                "{name} = {ptr:#x} is host memory the GPU cannot access; on the CUDA backend x and y must be device (cudaMalloc), managed or mapped pinned memory"
            )))
        }
        MemKind::Device { ordinal } if ordinal != dev.ordinal => {
            return Err(Error::InvalidPointer(format!(
                "{name} = {ptr:#x} is memory of CUDA device {ordinal}, but the handle uses device {}",
                dev.ordinal
            )))
        }
        _ => {}
    }
    if let Some(left) = info.bytes_left {
        if left < bytes as u64 {
            return Err(Error::InvalidSize(format!(
                "{name} needs {bytes} bytes but its allocation has only {left} bytes from {ptr:#x} on"
            )));
        }
    }
    Ok(())
}

/// Copies `dst.len()` elements from device-readable memory at `src` to the host, ordered on
/// `stream`, and waits for the copy.
pub fn copy_to_host<T: Copy>(
    dev: &Device,
    stream: Stream,
    src: usize,
    dst: &mut [T],
) -> Result<()> {
    let bytes = std::mem::size_of_val(dst);
    if bytes == 0 {
        return Ok(());
    }
    let _g = dev.enter()?;
    // SAFETY: dst is bytes writable host bytes; src is readable device memory of at least that
    // size (checked by the caller with check_device_accessible or owned by tessera).
    check(
        unsafe {
            sys::cuMemcpyDtoHAsync_v2(
                dst.as_mut_ptr().cast(),
                src as sys::CUdeviceptr,
                bytes,
                stream.raw(),
            )
        },
        "cuMemcpyDtoHAsync",
    )?;
    synchronize(dev, stream)
}

/// Copies `src` from the host to device memory at `dst`, ordered on `stream`, and waits (so
/// `src` may be freed at once).
pub fn copy_to_device<T: Copy>(dev: &Device, stream: Stream, src: &[T], dst: usize) -> Result<()> {
    let bytes = std::mem::size_of_val(src);
    if bytes == 0 {
        return Ok(());
    }
    let _g = dev.enter()?;
    // SAFETY: src is bytes readable host bytes; dst is device memory of at least that size
    // (tessera's own buffer, sized by the caller).
    check(
        unsafe {
            sys::cuMemcpyHtoDAsync_v2(
                dst as sys::CUdeviceptr,
                src.as_ptr().cast(),
                bytes,
                stream.raw(),
            )
        },
        "cuMemcpyHtoDAsync",
    )?;
    synchronize(dev, stream)
}

/// Device memory owned by tessera. Freed on drop; keeps its device (context) alive.
pub struct DeviceBuffer {
    ptr: sys::CUdeviceptr,
    bytes: usize,
    dev: Arc<Device>,
}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceBuffer({:#x}, {} bytes)", self.ptr, self.bytes)
    }
}

impl DeviceBuffer {
    /// Allocates `bytes` (none for 0). Out of memory is ALLOC_FAILED, with the free memory.
    pub fn alloc(dev: &Arc<Device>, bytes: usize, what: &str) -> Result<DeviceBuffer> {
        let mut ptr = 0;
        if bytes > 0 {
            let _g = dev.enter()?;
            let injected = fault::hit(fault::Fault::Alloc);
            let r = match &injected {
                Some(_) => sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY,
                // SAFETY: context current; ptr is a valid out-pointer.
                None => unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) },
            };
            if r == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                let (free, total) = dev.memory_info().unwrap_or((0, 0));
                return Err(Error::AllocFailed(format!(
                    "device allocation of {bytes} bytes for {what} failed: CUDA_ERROR_OUT_OF_MEMORY ({free} of {total} bytes free on device {}){}",
                    dev.ordinal,
                    injected.map(|s| format!(" {s}")).unwrap_or_default()
                )));
            }
            check(r, &format!("cuMemAlloc({bytes} bytes for {what})"))?;
        }
        Ok(DeviceBuffer {
            ptr,
            bytes,
            dev: dev.clone(),
        })
    }

    /// Allocates and fills from a host slice.
    pub fn from_slice<T: Copy>(
        dev: &Arc<Device>,
        stream: Stream,
        src: &[T],
        what: &str,
    ) -> Result<DeviceBuffer> {
        let b = DeviceBuffer::alloc(dev, std::mem::size_of_val(src), what)?;
        copy_to_device(dev, stream, src, b.ptr as usize)?;
        Ok(b)
    }

    /// Allocates `bytes` and zeroes them on `stream` (asynchronous).
    pub fn zeroed(
        dev: &Arc<Device>,
        stream: Stream,
        bytes: usize,
        what: &str,
    ) -> Result<DeviceBuffer> {
        let b = DeviceBuffer::alloc(dev, bytes, what)?;
        if bytes > 0 {
            let _g = dev.enter()?;
            // SAFETY: ptr is our allocation of `bytes` bytes in this context; the stream is
            // the default stream or one of this context (checked when it was set).
            check(
                unsafe { sys::cuMemsetD8Async(b.ptr, 0, bytes, stream.raw()) },
                "cuMemsetD8Async",
            )?;
        }
        Ok(b)
    }

    /// The device address (0 for an empty buffer).
    pub fn addr(&self) -> u64 {
        self.ptr
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.ptr != 0 {
            if let Ok(_g) = self.dev.enter() {
                // SAFETY: ptr came from cuMemAlloc in this context and is freed once.
                let _ = unsafe { sys::cuMemFree_v2(self.ptr) };
            }
        }
    }
}

/// A typed vector in device memory: how Rust callers (tests, the CLI) hand x and y to
/// [`crate::Matrix::spmv_device`].
pub struct DeviceVec<T> {
    buf: DeviceBuffer,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Copy + Default> DeviceVec<T> {
    /// A copy of `src` on the device.
    pub fn from_slice(dev: &Arc<Device>, src: &[T]) -> Result<Self> {
        Ok(DeviceVec {
            buf: DeviceBuffer::from_slice(dev, Stream(0), src, "a vector")?,
            len: src.len(),
            _t: PhantomData,
        })
    }

    /// The vector's values, copied to the host after all work on `stream`.
    pub fn to_vec(&self, stream: Stream) -> Result<Vec<T>> {
        let mut v = vec![T::default(); self.len];
        copy_to_host(&self.buf.dev, stream, self.buf.ptr as usize, &mut v)?;
        Ok(v)
    }

    /// Overwrites the vector from the host (same length).
    pub fn copy_from(&mut self, src: &[T]) -> Result<()> {
        if src.len() != self.len {
            return Err(Error::InvalidSize(format!(
                "copy of {} values into a device vector of {}",
                src.len(),
                self.len
            )));
        }
        copy_to_device(&self.buf.dev, Stream(0), src, self.buf.ptr as usize)
    }

    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for a vector of no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address.
    pub fn addr(&self) -> u64 {
        self.buf.ptr
    }
}

/// A CUDA event with timing, for CUDA-event timing on a stream.
pub struct Event {
    ev: sys::CUevent,
    dev: Arc<Device>,
}

// SAFETY: event handles are process-wide; used with the context pushed.
unsafe impl Send for Event {}
// SAFETY: as above; all methods take &self and are thread-safe driver calls.
unsafe impl Sync for Event {}

impl Event {
    /// A timing event.
    pub fn new(dev: &Arc<Device>) -> Result<Event> {
        Self::with_flags(dev, sys::CUevent_flags::CU_EVENT_DEFAULT as u32)
    }

    /// An event only for ordering streams (`wait_on`, `is_done`): created without timing
    /// (`CU_EVENT_DISABLE_TIMING`), which the driver documents as the cheapest to record and
    /// wait on. Recorded once per product by the methods with per-matrix workspaces.
    pub fn for_ordering(dev: &Arc<Device>) -> Result<Event> {
        Self::with_flags(dev, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)
    }

    fn with_flags(dev: &Arc<Device>, flags: u32) -> Result<Event> {
        let _g = dev.enter()?;
        let mut ev = std::ptr::null_mut();
        // SAFETY: context current; ev is a valid out-pointer.
        check(
            unsafe { sys::cuEventCreate(&mut ev, flags) },
            "cuEventCreate",
        )?;
        Ok(Event {
            ev,
            dev: dev.clone(),
        })
    }

    /// Records the event on `stream`.
    pub fn record(&self, stream: Stream) -> Result<()> {
        let _g = self.dev.enter()?;
        // SAFETY: live event and stream of this context.
        check(
            unsafe { sys::cuEventRecord(self.ev, stream.raw()) },
            "cuEventRecord",
        )
    }

    /// True once the work before the last record has finished (never blocks).
    pub fn is_done(&self) -> Result<bool> {
        let _g = self.dev.enter()?;
        // SAFETY: live event.
        let r = unsafe { sys::cuEventQuery(self.ev) };
        if r == sys::CUresult::CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        check(r, "cuEventQuery").map(|_| true)
    }

    /// Makes `stream` wait (on the device, without blocking the host) for the work before the
    /// event's last record.
    pub fn wait_on(&self, stream: Stream) -> Result<()> {
        let _g = self.dev.enter()?;
        // SAFETY: live event and stream of this context.
        check(
            unsafe { sys::cuStreamWaitEvent(stream.raw(), self.ev, 0) },
            "cuStreamWaitEvent",
        )
    }

    /// Waits for the event.
    pub fn synchronize(&self) -> Result<()> {
        let _g = self.dev.enter()?;
        // SAFETY: live event.
        check(
            unsafe { sys::cuEventSynchronize(self.ev) },
            "cuEventSynchronize",
        )
    }

    /// Milliseconds from `start` to `self` (both recorded and finished).
    pub fn elapsed_ms(&self, start: &Event) -> Result<f64> {
        let _g = self.dev.enter()?;
        let mut ms = 0f32;
        // SAFETY: both events are live and recorded; ms is a valid out-pointer.
        check(
            unsafe { sys::cuEventElapsedTime_v2(&mut ms, start.ev, self.ev) },
            "cuEventElapsedTime",
        )?;
        Ok(ms as f64)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if let Ok(_g) = self.dev.enter() {
            // SAFETY: the event was created in this context and is destroyed once.
            let _ = unsafe { sys::cuEventDestroy_v2(self.ev) };
        }
    }
}

/// The most arguments a tessera kernel takes.
pub(crate) const MAX_KERNEL_ARGS: usize = 24;

/// A kernel's arguments by value, in the order of the `.cu` signature, without allocating (the
/// launch is on spmv's path): each argument — `int`, `long long`, a pointer, `float` or
/// `double`, all at most 8 bytes — sits in its own 8-byte slot, whose address the launch passes.
pub(crate) struct KernelArgs {
    slots: [u64; MAX_KERNEL_ARGS],
    n: usize,
}

impl KernelArgs {
    /// No arguments yet.
    pub(crate) fn new() -> Self {
        KernelArgs {
            slots: [0; MAX_KERNEL_ARGS],
            n: 0,
        }
    }

    /// Appends `v` (at most 8 bytes; a kernel takes at most [`MAX_KERNEL_ARGS`]).
    pub(crate) fn push<V: Copy>(mut self, v: V) -> Self {
        assert!(
            std::mem::size_of::<V>() <= 8 && std::mem::align_of::<V>() <= 8,
            "a kernel argument is at most 8 bytes"
        );
        assert!(self.n < MAX_KERNEL_ARGS, "too many kernel arguments");
        // SAFETY: the slot is 8 zeroed, 8-aligned, writable bytes, and V fits in them.
        unsafe { self.slots.as_mut_ptr().add(self.n).cast::<V>().write(v) };
        self.n += 1;
        self
    }
}

/// Launches `f` with `grid` blocks of `block` threads on `stream` (CONVENTIONS §7: the
/// configuration is checked against the device's limits first).
///
/// # Safety
/// `args` must match the kernel's parameter list in number, order and type, and every device
/// address among them must be valid for what the kernel reads and writes.
pub(crate) unsafe fn launch(
    dev: &Device,
    f: &Function,
    grid: usize,
    block: u32,
    stream: Stream,
    args: KernelArgs,
) -> Result<()> {
    // SAFETY: the caller's contract, passed on unchanged.
    unsafe { launch_shared(dev, f, grid, block, 0, stream, args) }
}

/// The most dynamic shared memory a launch may ask for without opting in per function
/// (`cuFuncSetAttribute`): 48 KiB on every architecture tessera runs on.
pub(crate) const MAX_DYNAMIC_SHARED: u32 = 48 * 1024;

/// [`launch`] with `shared_bytes` of dynamic shared memory (`extern __shared__`) per block.
///
/// # Safety
/// As [`launch`]; the kernel must not use more dynamic shared memory than `shared_bytes`.
pub(crate) unsafe fn launch_shared(
    dev: &Device,
    f: &Function,
    grid: usize,
    block: u32,
    shared_bytes: u32,
    stream: Stream,
    mut args: KernelArgs,
) -> Result<()> {
    dev.check_launch(&f.name, grid, block)?;
    if shared_bytes > MAX_DYNAMIC_SHARED {
        return Err(Error::Internal(format!(
            "{}: {shared_bytes} bytes of dynamic shared memory exceed {MAX_DYNAMIC_SHARED}",
            f.name
        )));
    }
    let mut params = [std::ptr::null_mut::<c_void>(); MAX_KERNEL_ARGS];
    for (i, p) in params.iter_mut().enumerate().take(args.n) {
        *p = args.slots[i..].as_mut_ptr().cast();
    }
    if let Some(why) = fault::hit(fault::Fault::Launch) {
        let e = driver_error(
            DriverError(sys::CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES),
            &format!("cuLaunchKernel({})", f.name),
        );
        return Err(e.map_detail(|d| format!("{d} {why}")));
    }
    let _g = dev.enter()?;
    // SAFETY: f is a live function of a loaded module; each params entry points at a slot of
    // `args`, alive until the call returns (the driver copies the values); the argument
    // contract and the shared-memory size are the caller's.
    let r = unsafe {
        sys::cuLaunchKernel(
            f.f,
            grid as u32,
            1,
            1,
            block,
            1,
            1,
            shared_bytes,
            stream.raw(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    // The name is formatted only on failure: no allocation on the launch path.
    r.result()
        .map_err(|e| driver_error(e, &format!("cuLaunchKernel({})", f.name)))
}

/// The device-to-device copy bandwidth in GB/s (bytes read + bytes written per second): the
/// peak every % of peak in `tessera bench` is measured against (BENCHMARKING.md). Copies
/// `bytes` with cuMemcpyDtoDAsync, timed with events, median of 7 batches after a warm-up.
pub fn copy_bandwidth_gbs(dev: &Arc<Device>, stream: Stream, bytes: usize) -> Result<f64> {
    let a = DeviceBuffer::alloc(dev, bytes, "the bandwidth probe")?;
    let b = DeviceBuffer::alloc(dev, bytes, "the bandwidth probe")?;
    let (start, end) = (Event::new(dev)?, Event::new(dev)?);
    let copy = || -> Result<()> {
        let _g = dev.enter()?;
        // SAFETY: both buffers hold `bytes` bytes of this context.
        check(
            unsafe { sys::cuMemcpyDtoDAsync_v2(b.ptr, a.ptr, bytes, stream.raw()) },
            "cuMemcpyDtoDAsync",
        )
    };
    copy()?;
    let reps = 5;
    let mut times = Vec::new();
    for _ in 0..7 {
        start.record(stream)?;
        for _ in 0..reps {
            copy()?;
        }
        end.record(stream)?;
        end.synchronize()?;
        times.push(end.elapsed_ms(&start)? / reps as f64);
    }
    times.sort_by(f64::total_cmp);
    let ms = times[times.len() / 2];
    Ok(2.0 * bytes as f64 / (ms * 1e-3) / 1e9)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_driver_function_the_code_calls_is_probed_up_front() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
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
