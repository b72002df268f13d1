//! tessera's own stream-ordered memory pool, where every device buffer of tessera's comes from
//! (`TESSERA_ALLOC_POOL=0`: `cuMemAlloc` instead).
//!
//! A `cuMemAlloc` maps fresh device memory every time: three for a matrix's CSR arrays took
//! 30-37 us (median) on an H200 one after another in a bare process, and 88-195 us each inside
//! the bench's process (session 15's trace), while an allocation from a pool whose release
//! threshold keeps freed memory mapped took 2.0-2.5 us with its stream's wait
//! (`notes/experiments/alloc_reuse.cpp`, session 22). The pool is the device's own (not its
//! default pool, which the caller's `cudaMallocAsync` uses and may tune), keeps at most
//! [`POOL_KEEP`] bytes of freed memory mapped, and allocates on a stream of its own that
//! nothing else uses, waited for at once: the memory is then usable on any stream, as
//! `cuMemAlloc`'s is, and is freed by `cuMemFree` after a wait for the device (as `cuMemFree`
//! waits for it before freeing `cuMemAlloc`'s memory). Measured end to end on an H200
//! (session 22, run B, 13 matrices, f64, two rounds): the first product from host arrays
//! 0.72 -> 0.84 of cuSPARSE's (geometric mean), from device arrays copied 0.37 -> 0.56; at
//! N = 10 0.83 -> 0.97 and 0.73 -> 0.94.
//!
//! The cost: up to [`POOL_KEEP`] bytes of freed memory stay mapped for the next allocations
//! (`Device::release_cached_memory` hands them back; the pool is destroyed with the device).

use super::device::Device;
use super::loading::check;
use crate::error::Result;
use cudarc::driver::sys;

/// Freed memory the pool keeps mapped for the next allocations (its release threshold).
pub(super) const POOL_KEEP: u64 = 64 << 20;

/// The pool and the stream its allocations are ordered on (raw driver handles of the device's
/// context, released with the device).
pub(super) struct Pool {
    pool: sys::CUmemoryPool,
    stream: sys::CUstream,
}

// SAFETY: a memory pool and a stream are process-wide driver objects, usable from any thread
// with their context current (every use below enters it); the pool is never mutated after it
// is made, and the stream is used only by `alloc`, whose calls the driver orders.
unsafe impl Send for Pool {}
// SAFETY: as above.
unsafe impl Sync for Pool {}

/// False when `TESSERA_ALLOC_POOL=0` (read once per process).
pub(super) fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("TESSERA_ALLOC_POOL").map_or(true, |v| v != "0"))
}

impl Pool {
    /// A pool of device memory on `dev` (whose context the caller has made current), or None
    /// where the driver or the device has no memory pools.
    pub(super) fn new(dev: &Device) -> Option<Pool> {
        // SAFETY: an all-zero CUmemPoolProps is a valid value (no handle types, no maximum).
        let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.handleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
        props.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = dev.ordinal;
        let mut p = Pool {
            pool: std::ptr::null_mut(),
            stream: std::ptr::null_mut(),
        };
        // SAFETY: props is initialised above; p.pool is a valid out-pointer.
        check(
            unsafe { sys::cuMemPoolCreate(&mut p.pool, &props) },
            "cuMemPoolCreate",
        )
        .ok()?;
        let mut keep = POOL_KEEP;
        let made = (|| -> Result<()> {
            // SAFETY: our pool; the attribute takes a cuuint64_t, which `keep` is.
            check(
                unsafe {
                    sys::cuMemPoolSetAttribute(
                        p.pool,
                        sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                        (&mut keep as *mut u64).cast(),
                    )
                },
                "cuMemPoolSetAttribute",
            )?;
            // SAFETY: context current; a valid out-pointer.
            check(
                unsafe {
                    sys::cuStreamCreate(
                        &mut p.stream,
                        sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
                    )
                },
                "cuStreamCreate",
            )
        })();
        match made {
            Ok(()) => Some(p),
            Err(_) => {
                p.release();
                None
            }
        }
    }

    /// Allocates `bytes` into `ptr` and waits for the pool's stream (the caller has made the
    /// device's context current): what `cuMemAlloc` would return.
    pub(super) fn alloc(&self, ptr: &mut sys::CUdeviceptr, bytes: usize) -> sys::CUresult {
        // SAFETY: our pool and stream, in the current context; ptr is a valid out-pointer.
        match unsafe { sys::cuMemAllocFromPoolAsync(ptr, bytes, self.pool, self.stream) } {
            // SAFETY: our stream.
            sys::CUresult::CUDA_SUCCESS => unsafe { sys::cuStreamSynchronize(self.stream) },
            r => r,
        }
    }

    /// Hands the pool's unused memory back to the driver (`cuMemPoolTrimTo` 0; the caller has
    /// made the device's context current).
    pub(super) fn trim(&self) -> sys::CUresult {
        // SAFETY: our pool, in the current context.
        unsafe { sys::cuMemPoolTrimTo(self.pool, 0) }
    }

    /// Destroys the stream and the pool (the device's context current; every allocation from
    /// the pool freed, as the buffers that hold them keep the device alive).
    pub(super) fn release(&mut self) {
        // SAFETY: each handle was made in this context and is destroyed once (nulled here).
        unsafe {
            if !self.stream.is_null() {
                let _ = sys::cuStreamDestroy_v2(self.stream);
            }
            if !self.pool.is_null() {
                let _ = sys::cuMemPoolDestroy(self.pool);
            }
        }
        self.stream = std::ptr::null_mut();
        self.pool = std::ptr::null_mut();
    }
}
