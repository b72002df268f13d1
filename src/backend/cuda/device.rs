//! The device (its primary context and properties), compiled modules and their entry points.

use super::loading::{check, driver_error, init, probe_driver};
use super::{builtin, cache, fault, kernels, nvrtc};
use crate::error::{Error, Result};
use cudarc::driver::result::DriverError;
use cudarc::driver::sys;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// A kernel specialisation by its file name and define values.
type SpecName = (&'static str, Vec<i64>);

/// A CUDA device opened through its primary context, with the properties tessera uses and the
/// in-memory module cache. Shared (`Arc`) by every handle, matrix and buffer of the device; the
/// primary context is released when the last of them goes.
pub struct Device {
    pub(super) ordinal: i32,
    cu: sys::CUdevice,
    pub(super) ctx: sys::CUcontext,
    name: String,
    sm_count: u32,
    /// The L2 cache's size in bytes (50 MB on an H100).
    l2_bytes: usize,
    /// [`Device::streams_past_l2`] forced (tests).
    stream_loads: Forced,
    /// [`Device::overlaps_launches`] forced (tests).
    overlap: Forced,
    cc: (i32, i32),
    max_grid_x: u32,
    max_block: u32,
    /// Dynamic shared memory one block may opt in to, and shared memory per SM (bytes).
    shared_optin: u32,
    shared_per_sm: u32,
    total_mem: usize,
    modules: Mutex<HashMap<[u8; 32], Arc<Module>>>,
    /// The modules of the embedded kernel files by file name and define values: found without
    /// putting the text together and hashing it (about 0.1 ms a lookup, several per analysis),
    /// which is valid only while no file is replaced through `TESSERA_KERNELS_DIR`.
    embedded: Mutex<HashMap<SpecName, Arc<Module>>>,
    /// Page-locked buffers for uploads from pageable memory (`memory::upload_staged`), made at
    /// the first large upload.
    pub(super) staging: Mutex<Option<super::memory::Staging>>,
    /// The page-locked buffer of copies up to 16 MiB (`bounce.rs`), made at the first.
    pub(super) bounce: Mutex<Option<super::bounce::Bounce>>,
    /// [`SCRATCH_BYTES`] of device memory for work that waits before it returns: an
    /// inspection's status words ([`Device::scratch`]).
    scratch: Mutex<Scratch>,
    /// Ordering-only events given back by dropped [`super::Event`]s, for the next
    /// `Event::for_ordering` (each `cuEventCreate` is a driver call on analyze's path: HOLA's
    /// carry ring takes four). Raw handles, destroyed with the device.
    pub(super) spare_events: Mutex<Vec<usize>>,
    /// Non-blocking streams given back by dropped [`super::OwnedStream`]s, for the next
    /// background build (a `cuStreamCreate` and `cuStreamDestroy` per build held the caller's
    /// launches up for tens to hundreds of microseconds; session 27). Raw handles, at most
    /// [`SPARE_STREAMS`], destroyed with the device.
    pub(super) spare_streams: Mutex<Vec<usize>>,
    /// tessera's memory pool (unless `TESSERA_ALLOC_POOL=0`), made at the first allocation;
    /// None inside where the device has no pools.
    pub(super) pool: std::sync::OnceLock<Option<super::pool::Pool>>,
}

/// The device's scratch memory: its address (0 until first used) and whether it is known to
/// be zero (a kernel that uses it leaves it zero; a use that failed half-way says it is not).
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// Device address of [`SCRATCH_BYTES`] bytes.
    pub(crate) addr: u64,
    /// False when first allocated and after a use that may have left it non-zero: the next
    /// user clears it first.
    pub(crate) zero: bool,
    /// The inspection kernel (`util_inspect_i32`, `util_inspect_i64`) and how many of its
    /// blocks fit on an SM, looked up at the first inspection (each lookup is a driver call on
    /// a borrowed create's path).
    pub(crate) inspect: [Option<(Function, usize)>; 3],
    /// The deferred checks' slots, made at the first ([`super::check`]).
    pub(crate) checks: Option<super::check::CheckSlab>,
}

/// Bytes of [`Device::scratch`].
pub(crate) const SCRATCH_BYTES: usize = 256;

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

/// Makes a context current for a scope, restoring the previous one on drop. When the context
/// is current already (a caller of the CUDA runtime on the primary context, the common case)
/// nothing is pushed or popped: one driver call per entry instead of two.
pub(crate) struct CtxGuard {
    pushed: bool,
}

impl CtxGuard {
    fn push(ctx: sys::CUcontext) -> Result<CtxGuard> {
        // SAFETY: ctx is a retained primary context, alive while its Device is.
        check(unsafe { sys::cuCtxPushCurrent_v2(ctx) }, "cuCtxPushCurrent")?;
        Ok(CtxGuard { pushed: true })
    }

    fn enter(ctx: sys::CUcontext) -> Result<CtxGuard> {
        let mut current = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; querying the calling thread's current context.
        let r = unsafe { sys::cuCtxGetCurrent(&mut current) };
        if r == sys::CUresult::CUDA_SUCCESS && current == ctx {
            return Ok(CtxGuard { pushed: false });
        }
        CtxGuard::push(ctx)
    }
}

impl Drop for CtxGuard {
    fn drop(&mut self) {
        if self.pushed {
            let mut old = std::ptr::null_mut();
            // SAFETY: pops the context this guard pushed on this thread.
            let _ = unsafe { sys::cuCtxPopCurrent_v2(&mut old) };
        }
    }
}

/// A device's answer that a test may force: `None` (by the device's own rule), or yes or no.
#[derive(Default)]
struct Forced(std::sync::atomic::AtomicU8);

impl Forced {
    fn get(&self) -> Option<bool> {
        match self.0.load(std::sync::atomic::Ordering::Relaxed) {
            1 => Some(true),
            2 => Some(false),
            _ => None,
        }
    }

    fn set(&self, on: Option<bool>) {
        let v = match on {
            None => 0,
            Some(true) => 1,
            Some(false) => 2,
        };
        self.0.store(v, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The share of the L2 a matrix's arrays may take and still be read with plain loads
/// ([`Device::streams_past_l2`]).
const L2_SHARE: f64 = 0.8;

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
        probe_driver()?;
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
        // NVRTC is needed only where no built-in kernel runs on this device.
        if d.builtin_arch().is_none() {
            nvrtc::probe()?;
        }
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
        let l2_bytes = attribute(cu, A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?.max(0) as usize;
        let cc = (
            attribute(cu, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attribute(cu, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        );
        let max_grid_x = attribute(cu, A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)? as u32;
        let max_block = attribute(cu, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32;
        let shared_optin =
            attribute(cu, A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?.max(0) as u32;
        let shared_per_sm = attribute(
            cu,
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        )?
        .max(0) as u32;
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
            l2_bytes,
            stream_loads: Forced::default(),
            overlap: Forced::default(),
            cc,
            max_grid_x,
            max_block,
            shared_optin,
            shared_per_sm,
            total_mem,
            modules: Mutex::new(HashMap::new()),
            embedded: Mutex::new(HashMap::new()),
            staging: Mutex::new(None),
            bounce: Mutex::new(None),
            scratch: Mutex::new(Scratch::default()),
            spare_events: Mutex::new(Vec::new()),
            spare_streams: Mutex::new(Vec::new()),
            pool: std::sync::OnceLock::new(),
        })
    }

    /// Hands back to the driver the device memory tessera's pool keeps for its next
    /// allocations (at most [`super::pool::POOL_KEEP`] bytes of freed buffers): what a caller
    /// measuring free memory, or about to allocate nearly all of it, may do first. Memory that
    /// tessera's objects hold stays held.
    pub fn release_cached_memory(&self) -> Result<()> {
        let Some(Some(pool)) = self.pool.get() else {
            return Ok(());
        };
        let _g = self.enter()?;
        check(pool.trim(), "cuMemPoolTrimTo")
    }

    /// The device's scratch memory ([`SCRATCH_BYTES`] bytes at the address the guard holds),
    /// allocated at its first use and freed with the device: for work that waits for the
    /// device before it returns, without an allocation and a free of its own. [`Scratch::zero`]
    /// says whether it is known to be zero (the user clears it on its own stream otherwise).
    /// Other threads wait for the guard.
    pub(crate) fn scratch(&self) -> Result<std::sync::MutexGuard<'_, Scratch>> {
        let mut g = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        if g.addr == 0 {
            let _c = self.enter()?;
            let mut p: sys::CUdeviceptr = 0;
            // SAFETY: the context is current; p is a valid out-pointer.
            check(
                unsafe { sys::cuMemAlloc_v2(&mut p, SCRATCH_BYTES) },
                "cuMemAlloc (device scratch)",
            )?;
            g.addr = p;
            g.zero = false;
        }
        Ok(g)
    }

    /// Makes this device's context current on the calling thread until the guard drops (a
    /// push and a pop, unless it is current already).
    pub(crate) fn enter(&self) -> Result<CtxGuard> {
        CtxGuard::enter(self.ctx)
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

    /// The most dynamic shared memory one block may use once its kernel opts in
    /// ([`Function::with_shared`]): 227 KiB on the H100.
    pub fn max_shared_per_block(&self) -> u32 {
        self.shared_optin
    }

    /// Shared memory per SM, all blocks on it together: 228 KiB on the H100.
    pub fn shared_per_sm(&self) -> u32 {
        self.shared_per_sm
    }

    /// Whether a product that reads `bytes` of matrix arrays should read them with the
    /// streaming hint (`__ldcs`, evict-first; BRC's kernels' `stream` argument): when they do
    /// not fit in [`L2_SHARE`] of the L2. Evict-first keeps x in L2 while a large matrix
    /// streams past it, but it also keeps a matrix that would fit from staying there between
    /// products. Measured on the H100 (session 17's run D, AUTO's BRC per product, `__ldcs`
    /// against `__ldg`): 3D Laplacian 64³ in f64 (22 MB of arrays) 10.3 against 6.3 µs,
    /// 27-point stencil 48³ in f32 (23 MB) 12.6 against 6.5, uniform rows 2·10^5 x 16 in f64
    /// (38 MB) 30.0 against 29.4; but power-law 2^18 in f64 (50 MB) 35.6 against 36.9 and the
    /// 3D Laplacian 100³ (83 MB) 33.1 against 37.2.
    pub fn streams_past_l2(&self, bytes: usize) -> bool {
        self.stream_loads
            .get()
            .unwrap_or(bytes as f64 > L2_SHARE * self.l2_bytes as f64)
    }

    /// Forces [`Device::streams_past_l2`]'s answer for every matrix on this device (`None`: by
    /// size again), for tests that run both ways of reading the matrix arrays.
    #[doc(hidden)]
    pub fn force_stream_loads(&self, on: Option<bool>) {
        self.stream_loads.set(on);
    }

    /// Whether the second kernel of a product's pair starts while the first still runs
    /// ([`super::launching::launch_overlapped`]: programmatic dependent launch): on compute
    /// capability 9.0 and later, unless `TESSERA_OVERLAP=0` (for measurements) or a test
    /// forced it ([`Device::force_overlap`]).
    pub fn overlaps_launches(&self) -> bool {
        static OFF: OnceLock<bool> = OnceLock::new();
        self.cc.0 >= 9
            && self.overlap.get().unwrap_or_else(|| {
                !*OFF.get_or_init(|| std::env::var_os("TESSERA_OVERLAP").is_some_and(|v| v == "0"))
            })
    }

    /// Forces [`Device::overlaps_launches`]'s answer on this device (`None`: by the device and
    /// the environment again), for tests that run products both ways.
    #[doc(hidden)]
    pub fn force_overlap(&self, on: Option<bool>) {
        self.overlap.set(on);
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

    /// The architecture of the built-in kernels this device loads, or `None` when it compiles
    /// at run time: no kernel built in runs on it, or `TESSERA_BUILTIN_KERNELS=0` is set (for
    /// compute-sanitizer runs that want source lines: the run-time compiler adds line info).
    pub fn builtin_arch(&self) -> Option<i32> {
        static OFF: OnceLock<bool> = OnceLock::new();
        let off = *OFF
            .get_or_init(|| std::env::var_os("TESSERA_BUILTIN_KERNELS").is_some_and(|v| v == "0"));
        builtin::arch_for(self.cc).filter(|_| !off)
    }

    /// The module for `spec` on this device: from memory, else built into the library (when a
    /// built-in architecture runs here and the kernel text is the embedded one), else from the
    /// disk cache, else compiled with NVRTC (and written to the disk cache).
    pub(crate) fn module(&self, spec: &kernels::KernelSpec) -> Result<Arc<Module>> {
        // A compilation or load fault armed for a test reaches NVRTC and the driver every time.
        let bypass = fault::bypass_module_cache();
        let embedded = !bypass && std::env::var_os("TESSERA_KERNELS_DIR").is_none();
        let short = (spec.file_name(), spec.values().to_vec());
        if embedded {
            let known = self.embedded.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(m) = known.get(&short) {
                return Ok(m.clone());
            }
        }
        let module = self.module_by_text(spec, bypass)?;
        if embedded {
            let mut known = self.embedded.lock().unwrap_or_else(|p| p.into_inner());
            known.insert(short, module.clone());
        }
        Ok(module)
    }

    /// Loads the module for `spec` and every entry point in it now, unless loaded already:
    /// while the device has little queued, rather than when a background build first needs it
    /// ([`Module::load_all`]).
    pub(crate) fn preload(&self, spec: &kernels::KernelSpec) -> Result<()> {
        let t = std::time::Instant::now();
        let m = self.module(spec)?;
        if !m.all_loaded.swap(true, std::sync::atomic::Ordering::AcqRel) {
            if let Err(e) = m.load_all() {
                // A later preload tries again.
                m.all_loaded
                    .store(false, std::sync::atomic::Ordering::Release);
                return Err(e);
            }
            crate::backend::trace(2, || {
                format!(
                    "{} {:?} preloaded in {:.1} us",
                    spec.file_name(),
                    spec.values(),
                    t.elapsed().as_secs_f64() * 1e6
                )
            });
        }
        Ok(())
    }

    /// [`Device::module`] by the full text and options: memory, built in, disk cache, NVRTC.
    fn module_by_text(&self, spec: &kernels::KernelSpec, bypass: bool) -> Result<Arc<Module>> {
        let source = spec.source();
        if let Some(arch) = self.builtin_arch().filter(|_| !bypass) {
            // The options carry the define values: one key per specialisation.
            let key = cache::key(&source, &spec.options(arch), arch, builtin::nvrtc_version());
            let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(m) = modules.get(&key) {
                return Ok(m.clone());
            }
            if let Some(image) = builtin::image(spec, &source, arch) {
                let _g = self.enter()?;
                let module = Arc::new(Module::load(self.ctx, &image)?);
                modules.insert(key, module.clone());
                return Ok(module);
            }
        }
        let arch = nvrtc::arch_for(self.cc)?;
        let options = spec.options(arch);
        let key = cache::key(&source, &options, arch, nvrtc::version()?);
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
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

    /// Checks a launch configuration against this device's limits (before every launch).
    pub(super) fn check_launch(&self, what: &str, grid: usize, block: u32) -> Result<()> {
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
        self.embedded
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.modules
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        let scratch = {
            let g = self.scratch.get_mut().unwrap_or_else(|p| p.into_inner());
            // The cached inspection kernels' module unloads here, while the context lives.
            g.inspect = [None, None, None];
            if let Some(mut slab) = g.checks.take() {
                if let Ok(_c) = CtxGuard::enter(self.ctx) {
                    slab.release();
                }
            }
            g.addr
        };
        let spare = std::mem::take(
            self.spare_events
                .get_mut()
                .unwrap_or_else(|p| p.into_inner()),
        );
        if !spare.is_empty() {
            if let Ok(_g) = self.enter() {
                for ev in spare {
                    // SAFETY: events created in this context, given back by their owners,
                    // destroyed once.
                    let _ = unsafe { sys::cuEventDestroy_v2(ev as sys::CUevent) };
                }
            }
        }
        let streams = std::mem::take(
            self.spare_streams
                .get_mut()
                .unwrap_or_else(|p| p.into_inner()),
        );
        if !streams.is_empty() {
            if let Ok(_g) = self.enter() {
                for s in streams {
                    // SAFETY: streams created in this context, given back by their owners after
                    // their work, destroyed once.
                    let _ = unsafe { sys::cuStreamDestroy_v2(s as sys::CUstream) };
                }
            }
        }
        if scratch != 0 {
            if let Ok(_g) = self.enter() {
                // SAFETY: our allocation in this context; nothing uses it after the device.
                let _ = unsafe { sys::cuMemFree_v2(scratch) };
            }
        }
        if let Some(mut st) = self
            .staging
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            if let Ok(_g) = self.enter() {
                st.release();
            }
        }
        if let Some(mut rb) = self
            .bounce
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            if let Ok(_g) = self.enter() {
                rb.release();
            }
        }
        if let Some(Some(mut pool)) = self.pool.take() {
            if let Ok(_g) = self.enter() {
                pool.release();
            }
        }
        // SAFETY: balances the retain in open_new; nothing of this device is used after this.
        let _ = unsafe { sys::cuDevicePrimaryCtxRelease_v2(self.cu) };
    }
}

/// Streams a device keeps for later background builds ([`Device::spare_streams`]): builds run
/// one or two at a time.
pub(super) const SPARE_STREAMS: usize = 4;

/// A loaded CUBIN module.
pub struct Module {
    module: sys::CUmodule,
    ctx: sys::CUcontext,
    /// Entry points looked up so far: a method's analyze asks for the same ones again, and a
    /// driver lookup costs about a microsecond on the first product's path.
    functions: Mutex<HashMap<String, FunctionHandle>>,
    /// Every entry point loaded ([`Module::load_all`], once).
    all_loaded: std::sync::atomic::AtomicBool,
}

/// A `CUfunction` kept in a [`Module`]'s table.
#[derive(Clone, Copy)]
struct FunctionHandle(sys::CUfunction);
// SAFETY: function handles are process-wide, valid while their module is loaded (the table is
// the module's).
unsafe impl Send for FunctionHandle {}

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
        Ok(Module {
            module,
            ctx,
            functions: Mutex::new(HashMap::new()),
            all_loaded: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Loads every entry point of the module now. Under the driver's lazy loading (CUDA's
    /// default) an entry point is loaded at its first lookup or launch, and a load, like
    /// `cuModuleLoadData` itself, waits for the work queued on the device: a format built in the
    /// background beside a caller queuing ahead of the GPU waited for all of it (33 ms for
    /// 2,000 queued products; 6-40 ms for BCCOO's first build of a process on 3D elasticity,
    /// session 26). AUTO's analyze has them loaded early instead ([`Device::preload`]).
    pub(crate) fn load_all(&self) -> Result<()> {
        let _g = CtxGuard::enter(self.ctx)?;
        let mut n = 0u32;
        // SAFETY: the module is loaded; n is a valid out-pointer.
        check(
            unsafe { sys::cuModuleGetFunctionCount(&mut n, self.module) },
            "cuModuleGetFunctionCount",
        )?;
        let mut fs = vec![std::ptr::null_mut(); n as usize];
        // SAFETY: fs holds n handles' room.
        check(
            unsafe { sys::cuModuleEnumerateFunctions(fs.as_mut_ptr(), n, self.module) },
            "cuModuleEnumerateFunctions",
        )?;
        for f in fs {
            // SAFETY: a handle of this loaded module, just enumerated.
            check(unsafe { sys::cuFuncLoad(f) }, "cuFuncLoad")?;
        }
        Ok(())
    }

    /// The entry point `name` (looked up in the driver once per module).
    pub(crate) fn function(self: &Arc<Self>, name: &str) -> Result<Function> {
        let mut table = self.functions.lock().unwrap_or_else(|p| p.into_inner());
        let f = match table.get(name) {
            Some(h) => h.0,
            None => {
                let cname = std::ffi::CString::new(name)
                    .map_err(|_| Error::Internal(format!("kernel name {name:?} has a NUL")))?;
                let mut f = std::ptr::null_mut();
                // SAFETY: the module is loaded; cname is NUL-terminated; f is a valid
                // out-pointer.
                check(
                    unsafe { sys::cuModuleGetFunction(&mut f, self.module, cname.as_ptr()) },
                    &format!("cuModuleGetFunction({name})"),
                )?;
                table.insert(name.to_string(), FunctionHandle(f));
                f
            }
        };
        drop(table);
        Ok(Function {
            f,
            name: name.to_string(),
            shared_limit: DEFAULT_SHARED_LIMIT,
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
    pub(super) f: sys::CUfunction,
    pub(super) name: String,
    /// The most dynamic shared memory a launch of it may ask for ([`Function::with_shared`]).
    pub(super) shared_limit: u32,
    _module: Arc<Module>,
}

/// The most dynamic shared memory a launch may ask for without opting in per function
/// (`cuFuncSetAttribute`): 48 KiB on every architecture tessera runs on.
pub(super) const DEFAULT_SHARED_LIMIT: u32 = 48 * 1024;

// SAFETY: CUfunction handles are process-wide and immutable.
unsafe impl Send for Function {}
// SAFETY: as above.
unsafe impl Sync for Function {}

impl Function {
    /// The same entry point, allowed `bytes` of dynamic shared memory per block (above 48 KiB
    /// a kernel must opt in: `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`, at most the
    /// device's [`Device::max_shared_per_block`]).
    pub(crate) fn with_shared(mut self, dev: &Device, bytes: u32) -> Result<Self> {
        if bytes > self.shared_limit {
            let _c = dev.enter()?;
            // SAFETY: a function loaded in dev's context, current here; a plain attribute.
            check(
                unsafe {
                    sys::cuFuncSetAttribute(
                        self.f,
                        sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        bytes as i32,
                    )
                },
                "cuFuncSetAttribute(max dynamic shared memory)",
            )?;
            self.shared_limit = bytes;
        }
        Ok(self)
    }

    /// How many blocks of `block` threads (and no dynamic shared memory) fit on one SM at
    /// once, by the kernel's registers and shared memory (at least 1; 1 where the driver
    /// cannot say).
    pub(crate) fn resident_blocks(&self, dev: &Device, block: u32) -> usize {
        let Ok(_c) = dev.enter() else { return 1 };
        let mut n = 0i32;
        // SAFETY: a function loaded in dev's context, current here; n is a valid out-pointer.
        let r = unsafe {
            sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, self.f, block as i32, 0)
        };
        if r == sys::CUresult::CUDA_SUCCESS {
            n.max(1) as usize
        } else {
            1
        }
    }

    /// The driver's handle, for measuring a launch with nothing of tessera around it
    /// (`bench::overhead`).
    pub(crate) fn raw(&self) -> sys::CUfunction {
        self.f
    }
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Function({})", self.name)
    }
}
