//! Device memory: tessera's own buffers, pointer-kind detection for the caller's pointers,
//! and copies between host and device.

use super::device::Device;
use super::fault;
use super::loading::check;
use super::stream::{synchronize, Stream};
use crate::error::{Error, Result};
use crate::scalar::Plain;
use cudarc::driver::sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;

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
pub fn pointer_info(dev: &Device, ptr: u64) -> Result<PtrInfo> {
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
    let bytes_left = (size > 0 && ptr >= start && ptr < start + size).then(|| start + size - ptr);
    let kind = if managed {
        MemKind::Managed
    } else if mem_type == sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 {
        MemKind::Device { ordinal }
    } else if mem_type == sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32 {
        MemKind::PinnedHost {
            device_accessible: vals[5] == ptr,
        }
    } else {
        MemKind::Host
    };
    Ok(PtrInfo { kind, bytes_left })
}

/// Checks that the device can read/write `bytes` at `ptr` (argument `name`): device memory of
/// this device, managed memory, or mapped pinned host memory; a plain host pointer is
/// INVALID_POINTER (it would fault the GPU).
pub fn check_device_accessible(dev: &Device, ptr: u64, bytes: usize, name: &str) -> Result<()> {
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
/// `stream`, and waits for the copy. Inside a background build (up to 16 MiB) through the
/// device's page-locked bounce buffer (`bounce.rs`: the driver's pageable path would hold up
/// the caller's launches meanwhile).
pub fn copy_to_host<T: Copy>(dev: &Device, stream: Stream, src: u64, dst: &mut [T]) -> Result<()> {
    let bytes = std::mem::size_of_val(dst);
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: dst is bytes writable host bytes; src the caller's readable device memory.
    if let Some(r) =
        unsafe { super::bounce::to_host(dev, stream, src, dst.as_mut_ptr().cast(), bytes) }
    {
        return r;
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
/// `src` may be freed at once). Inside a background build (up to 16 MiB) through the device's
/// page-locked bounce buffer, as [`copy_to_host`].
pub fn copy_to_device<T: Copy>(dev: &Device, stream: Stream, src: &[T], dst: u64) -> Result<()> {
    let bytes = std::mem::size_of_val(src);
    if bytes == 0 {
        return Ok(());
    }
    // Copies queued to be waited for together (copies_waited_once) keep the driver's path.
    if ONE_WAIT.with(|w| w.get()) != Some(stream.0) {
        // SAFETY: src is bytes readable host bytes; dst is device memory of at least that size.
        if let Some(r) =
            unsafe { super::bounce::to_device(dev, stream, src.as_ptr().cast(), dst, bytes) }
        {
            return r;
        }
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
    if ONE_WAIT.with(|w| w.get()) == Some(stream.0) {
        // Waited for by copies_waited_once, with the others.
        return Ok(());
    }
    synchronize(dev, stream)
}

thread_local! {
    /// The stream whose copies [`copies_waited_once`] waits for at its end, if any.
    static ONE_WAIT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Runs `f`, whose host-to-device copies on `stream` ([`copy_to_device`], `DeviceBuffer::fill_from`
/// below the staged size) are queued without a wait each, then waits for `stream` once, also
/// when `f` failed: when this returns, every source `f` copied from may be freed. Three small
/// copies of a CSR waited for one by one cost two more waits for the device, 15-20 us each on
/// an H200 (session 27, run G: the first product from host arrays 10-40 us faster).
pub fn copies_waited_once<R>(
    dev: &Device,
    stream: Stream,
    f: impl FnOnce() -> Result<R>,
) -> Result<R> {
    /// Puts the thread's earlier setting back, also when `f` unwinds (a copy made after a caught
    /// panic must wait for itself again).
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ONE_WAIT.with(|w| w.set(self.0));
        }
    }
    let restore = Restore(ONE_WAIT.with(|w| w.replace(Some(stream.0))));
    let r = f();
    drop(restore);
    let waited = synchronize(dev, stream);
    let r = r?;
    waited?;
    Ok(r)
}

thread_local! {
    /// The stream this thread's allocations are ordered on ([`allocating_on`]), if any.
    static ALLOC_STREAM: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    /// This thread's allocations are a caller's ([`allocating_as_a_caller`]).
    static AS_CALLER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with this thread's device allocations made by plain `cuMemAlloc`, never from
/// tessera's pool: what the bench's cuSPARSE pipeline does, standing for a caller that
/// allocates its own arrays and workspace with `cudaMalloc`.
pub fn allocating_as_a_caller<R>(f: impl FnOnce() -> R) -> R {
    let old = AS_CALLER.with(|s| s.replace(true));
    let r = f();
    AS_CALLER.with(|s| s.set(old));
    r
}

/// The alignment of each part of [`DeviceBuffer::alloc_parts`] (as cuMemAlloc aligns).
const PART_ALIGN: usize = 256;

/// True inside [`allocating_on`]: a background build's device half, beside a caller's products.
pub(super) fn in_background_build() -> bool {
    ALLOC_STREAM.with(|s| s.get().is_some())
}

/// Whether this thread's next allocation (outside [`allocating_on`]) comes from tessera's pool.
fn pooled() -> bool {
    super::pool::enabled() && !AS_CALLER.with(|s| s.get())
}

/// Runs `f` with this thread's device allocations made stream-ordered: from tessera's pool
/// (`pool.rs`, on its own stream) when it is on, else with `cuMemAllocAsync` on `stream` from
/// the device's default pool (`cuMemAlloc` where pools are not supported): what a background
/// build's device half does. A `cuMemAlloc` of tens of MB holds the driver for 60-200 us, and
/// every other thread's launch waits for it (session 20, run I: an empty kernel's launch took up
/// to 196 us beside a 25 MiB cuMemAlloc, at most 21 us beside a cuMemAllocAsync of the same
/// size), so a build beside the caller's products stalled them by as long. Tessera's pool keeps
/// freed memory mapped; the default pool keeps none, and the first allocation of a build from it
/// took 226-363 us beside the caller's launches (H200, session 24, run E: TILE's 222 KB of
/// temporaries; the build's later 16 MB allocations 4-26 us). Each allocation is waited for on
/// this thread only (the pool's stream, or `stream`), so the memory is usable on any stream when
/// `alloc` returns, as `cuMemAlloc`'s is; it is freed with `cuMemFree` after a wait for the
/// device (`DeviceBuffer`'s drop), except a buffer dropped inside `f` (a build's temporaries),
/// which is freed in `stream`'s order (`cuMemFreeAsync`): `f`'s device work must all be on
/// `stream`.
pub fn allocating_on<R>(stream: Stream, f: impl FnOnce() -> R) -> R {
    let old = ALLOC_STREAM.with(|s| s.replace(Some(stream.0)));
    let r = f();
    ALLOC_STREAM.with(|s| s.set(old));
    r
}

/// Device memory owned by tessera. Freed on drop; keeps its device (context) alive.
pub struct DeviceBuffer {
    ptr: sys::CUdeviceptr,
    bytes: usize,
    dev: Arc<Device>,
    /// A part of a shared allocation ([`DeviceBuffer::alloc_parts`]): the allocation, freed
    /// with its last part. None: this buffer is its own allocation.
    whole: Option<Arc<DeviceBuffer>>,
    /// The caller's memory ([`DeviceBuffer::borrowed`]): never freed here.
    borrowed: bool,
    /// From a stream-ordered pool (tessera's, or the device's default one under
    /// [`allocating_on`]): its free waits for the device first (see `Drop`).
    ordered: bool,
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
        let mut ordered = false;
        if bytes > 0 {
            let _g = dev.enter()?;
            let injected = fault::hit(fault::Fault::Alloc);
            let r = match &injected {
                Some(_) => sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY,
                None => {
                    let t = std::time::Instant::now();
                    let on = ALLOC_STREAM.with(|s| s.get());
                    let pool = if pooled() {
                        dev.pool
                            .get_or_init(|| super::pool::Pool::new(dev))
                            .as_ref()
                    } else {
                        None
                    };
                    // SAFETY: context current; ptr is a valid out-pointer; `on` is the stream
                    // the caller of allocating_on named, in this context.
                    let r = match (on, pool) {
                        (_, Some(pool)) => {
                            ordered = true;
                            pool.alloc(&mut ptr, bytes)
                        }
                        (Some(s), None) => {
                            match unsafe { sys::cuMemAllocAsync(&mut ptr, bytes, Stream(s).raw()) }
                            {
                                sys::CUresult::CUDA_ERROR_NOT_SUPPORTED => unsafe {
                                    sys::cuMemAlloc_v2(&mut ptr, bytes)
                                },
                                // Usable on any stream from here on, as cuMemAlloc's memory
                                // is (a staged upload copies on a stream of its own): the
                                // wait is this thread's, and holds up no other.
                                sys::CUresult::CUDA_SUCCESS => {
                                    ordered = true;
                                    unsafe { sys::cuStreamSynchronize(Stream(s).raw()) }
                                }
                                r => r,
                            }
                        }
                        // SAFETY: as above.
                        (None, None) => unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) },
                    };
                    crate::backend::trace(2, || {
                        format!(
                            "cuMemAlloc{} {bytes} bytes for {what}: {:.1} us",
                            match (on, pool) {
                                (_, Some(_)) => "FromPool",
                                (Some(_), None) => "Async",
                                (None, None) => "",
                            },
                            t.elapsed().as_secs_f64() * 1e6
                        )
                    });
                    r
                }
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
            whole: None,
            borrowed: false,
            ordered,
        })
    }

    /// One allocation cut into parts of `sizes` bytes, each starting 256-byte aligned (as
    /// cuMemAlloc aligns): one driver call instead of N. On an H100 three cuMemAlloc of tens of
    /// MB took 0.3-0.4 ms, one of their total 0.14-0.16 ms. The allocation is freed with its
    /// last part.
    pub fn alloc_parts<const N: usize>(
        dev: &Arc<Device>,
        sizes: [usize; N],
        what: &str,
    ) -> Result<[DeviceBuffer; N]> {
        let total = Self::parts_bytes(&sizes, what)?;
        match Self::alloc(dev, total, what)?.carve(sizes) {
            Ok((parts, _)) => Ok(parts),
            Err(_) => Err(Error::Internal(format!(
                "{what}: {total} bytes carved short"
            ))),
        }
    }

    /// The bytes [`DeviceBuffer::alloc_parts`] allocates for parts of `sizes` bytes.
    pub fn parts_bytes(sizes: &[usize], what: &str) -> Result<usize> {
        sizes.iter().try_fold(0usize, |total, &b| {
            total
                .checked_add(b.div_ceil(PART_ALIGN) * PART_ALIGN)
                .ok_or_else(|| Error::AllocFailed(format!("{what}: sizes overflow")))
        })
    }

    /// This allocation cut into parts of `sizes` bytes as [`DeviceBuffer::alloc_parts`] cuts
    /// its own, with the bytes left over after them (held until the last part is freed), or
    /// the allocation back when the parts do not fit in it. For an allocation made before its
    /// parts' sizes are known (a format built on the device, allocated from an estimate while
    /// the device counts).
    pub fn carve<const N: usize>(
        self,
        sizes: [usize; N],
    ) -> std::result::Result<([DeviceBuffer; N], usize), DeviceBuffer> {
        let total = match Self::parts_bytes(&sizes, "") {
            Ok(t) if t <= self.bytes && self.whole.is_none() && !self.borrowed => t,
            _ => return Err(self),
        };
        let dev = self.dev.clone();
        let whole = Arc::new(self);
        let mut offset = 0usize;
        let parts = std::array::from_fn(|i| {
            let part = DeviceBuffer {
                ptr: if sizes[i] == 0 {
                    0
                } else {
                    whole.ptr + offset as u64
                },
                bytes: sizes[i],
                dev: dev.clone(),
                whole: Some(whole.clone()),
                borrowed: false,
                ordered: false,
            };
            offset += sizes[i].div_ceil(PART_ALIGN) * PART_ALIGN;
            part
        });
        Ok((parts, whole.bytes - total))
    }

    /// Frees a buffer that no kernel used in `stream`'s order, without a wait for the device
    /// (a stream-ordered allocation; any other is freed as its drop frees it): an allocation
    /// made ahead for work that turned out not to need it.
    pub fn free_unused(self, stream: Stream) {
        allocating_on(stream, || drop(self));
    }

    /// Allocates and fills from a host slice (waits for the copy). Large slices go through the
    /// device's staging buffers ([`upload_staged`]), not `stream`: the buffer is new, so no work
    /// queued there can touch it.
    pub fn from_slice<T: Plain>(
        dev: &Arc<Device>,
        stream: Stream,
        src: &[T],
        what: &str,
    ) -> Result<DeviceBuffer> {
        let b = DeviceBuffer::alloc(dev, std::mem::size_of_val(src), what)?;
        b.fill_from(stream, src)?;
        Ok(b)
    }

    /// Copies a host slice of at most this buffer's size into its start and waits for the copy:
    /// large slices through the device's staging buffers ([`upload_staged`]), small ones on
    /// `stream` (the buffer must be one no work queued elsewhere still touches).
    pub fn fill_from<T: Plain>(&self, stream: Stream, src: &[T]) -> Result<()> {
        let bytes = std::mem::size_of_val(src);
        if bytes > self.bytes {
            return Err(Error::Internal(format!(
                "a copy of {bytes} bytes into a device buffer of {}",
                self.bytes
            )));
        }
        if bytes >= 2 * STAGING_CHUNK {
            upload_staged(&self.dev, src, self.ptr)
        } else {
            copy_to_device(&self.dev, stream, src, self.ptr)
        }
    }

    /// Allocates `bytes` and zeroes them on `stream` (asynchronous).
    pub fn zeroed(
        dev: &Arc<Device>,
        stream: Stream,
        bytes: usize,
        what: &str,
    ) -> Result<DeviceBuffer> {
        let b = DeviceBuffer::alloc(dev, bytes, what)?;
        b.zero(stream)?;
        Ok(b)
    }

    /// Zeroes the whole buffer on `stream` (asynchronous).
    pub fn zero(&self, stream: Stream) -> Result<()> {
        if self.bytes == 0 {
            return Ok(());
        }
        let _g = self.dev.enter()?;
        // SAFETY: ptr is our allocation (or part of one) of `bytes` bytes in this context; the
        // stream is the default stream or one of this context (checked when it was set).
        check(
            unsafe { sys::cuMemsetD8Async(self.ptr, 0, self.bytes, stream.raw()) },
            "cuMemsetD8Async",
        )
    }

    /// Copies all of `src` into the start of this buffer on `stream` (asynchronous).
    pub fn copy_from(&self, src: &DeviceBuffer, stream: Stream) -> Result<()> {
        if src.bytes > self.bytes {
            return Err(Error::Internal(format!(
                "device copy of {} bytes into a buffer of {}",
                src.bytes, self.bytes
            )));
        }
        if src.bytes == 0 {
            return Ok(());
        }
        let _g = self.dev.enter()?;
        // SAFETY: both are allocations of this context; src.bytes fit in both (checked above).
        check(
            unsafe { sys::cuMemcpyDtoDAsync_v2(self.ptr, src.ptr, src.bytes, stream.raw()) },
            "cuMemcpyDtoDAsync",
        )
    }

    /// The device address (0 for an empty buffer).
    pub fn addr(&self) -> u64 {
        self.ptr
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// `bytes` of the caller's device memory at `ptr`, used in place and never freed by
    /// tessera: the caller keeps it alive while anything reads it.
    pub fn borrowed(dev: &Arc<Device>, ptr: u64, bytes: usize) -> DeviceBuffer {
        DeviceBuffer {
            ptr,
            bytes,
            dev: dev.clone(),
            whole: None,
            borrowed: true,
            ordered: false,
        }
    }

    /// True for the caller's memory ([`DeviceBuffer::borrowed`]).
    pub fn is_borrowed(&self) -> bool {
        self.borrowed
    }

    /// Bytes tessera holds for this buffer: 0 for borrowed memory.
    pub fn owned_bytes(&self) -> usize {
        if self.borrowed {
            0
        } else {
            self.bytes
        }
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // A part leaves the freeing to its allocation's last reference.
        if self.ptr != 0 && self.whole.is_none() && !self.borrowed {
            if let (true, Some(s)) = (self.ordered, ALLOC_STREAM.with(|s| s.get())) {
                // Dropped inside `allocating_on(stream)`, a background build's device half,
                // whose work is all on that stream: freed in the stream's order, without
                // waiting for the device. The device-wide wait below waits for every product
                // the caller queued meanwhile: BCCOO's background build on 3D elasticity 32³
                // took 7-10 ms where its kernels took 0.7-1.5 (session 26, run A).
                if let Ok(_g) = self.dev.enter() {
                    // SAFETY: ptr came from a stream-ordered allocation in this context and is
                    // freed once; only work on stream `s`, queued before this free, used it,
                    // and a pool hands it out again only after that work.
                    let _ = unsafe { sys::cuMemFreeAsync(self.ptr, Stream(s).raw()) };
                }
                return;
            }
            if let Ok(_g) = self.dev.enter() {
                if self.ordered {
                    // cuMemFree waits for the device before it frees cuMemAlloc's memory
                    // (work of any stream may still read it); memory from a pool goes back to
                    // the pool, whose next allocation may hand it out at once, and the driver
                    // promises no such wait: it is made here.
                    // SAFETY: the context is current.
                    let _ = unsafe { sys::cuCtxSynchronize() };
                }
                // SAFETY: ptr came from cuMemAlloc, cuMemAllocAsync or cuMemAllocFromPoolAsync
                // in this context and is freed once.
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

impl<T: Plain + Default> DeviceVec<T> {
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
        let mut v =
            crate::csr::try_vec_touched(self.len, T::default(), "a vector from the device")?;
        copy_to_host(&self.buf.dev, stream, self.buf.ptr, &mut v)?;
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
        copy_to_device(&self.buf.dev, Stream(0), src, self.buf.ptr)
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

/// Bytes of each of the two page-locked staging buffers of a device.
const STAGING_CHUNK: usize = 8 << 20;

/// Threads that copy a chunk into a staging buffer (at most; fewer on fewer cores).
const STAGING_THREADS: usize = 8;

/// Two page-locked host buffers, a stream and an event per buffer, with which uploads from
/// pageable host memory are pipelined: one buffer is filled on the host while the other one's
/// DMA runs. Owned by the [`Device`] (allocated at its first large upload, freed before its
/// context is released); raw handles, so that it holds no reference to the device.
pub(super) struct Staging {
    bufs: [*mut u8; 2],
    events: [sys::CUevent; 2],
    stream: sys::CUstream,
}

// SAFETY: page-locked memory, events and streams are process-wide driver objects; the staging
// is used only under the device's mutex, with its context current.
unsafe impl Send for Staging {}

impl Staging {
    fn new(dev: &Device) -> Result<Staging> {
        let _g = dev.enter()?;
        let mut st = Staging {
            bufs: [std::ptr::null_mut(); 2],
            events: [std::ptr::null_mut(); 2],
            stream: std::ptr::null_mut(),
        };
        // On failure part way, what was made is released by release() through the Drop of
        // the caller's Option (the Staging is returned only whole; see below).
        let made = (|| -> Result<()> {
            for i in 0..2 {
                let mut p: *mut c_void = std::ptr::null_mut();
                // SAFETY: context current; p is a valid out-pointer.
                check(
                    unsafe {
                        sys::cuMemHostAlloc(&mut p, STAGING_CHUNK, sys::CU_MEMHOSTALLOC_PORTABLE)
                    },
                    "cuMemHostAlloc (upload staging)",
                )?;
                st.bufs[i] = p.cast();
                // SAFETY: context current; a valid out-pointer.
                check(
                    unsafe {
                        sys::cuEventCreate(
                            &mut st.events[i],
                            sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32,
                        )
                    },
                    "cuEventCreate",
                )?;
            }
            // SAFETY: context current; a valid out-pointer.
            check(
                unsafe {
                    sys::cuStreamCreate(
                        &mut st.stream,
                        sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
                    )
                },
                "cuStreamCreate",
            )
        })();
        match made {
            Ok(()) => Ok(st),
            Err(e) => {
                st.release();
                Err(e)
            }
        }
    }

    /// Frees everything; the device's context must be current (or about to be released, with
    /// the context still retained).
    pub(super) fn release(&mut self) {
        // SAFETY: each handle was made in this context and is freed once (nulled here).
        unsafe {
            if !self.stream.is_null() {
                let _ = sys::cuStreamSynchronize(self.stream);
                let _ = sys::cuStreamDestroy_v2(self.stream);
            }
            for i in 0..2 {
                if !self.events[i].is_null() {
                    let _ = sys::cuEventDestroy_v2(self.events[i]);
                }
                if !self.bufs[i].is_null() {
                    let _ = sys::cuMemFreeHost(self.bufs[i].cast());
                }
            }
        }
        *self = Staging {
            bufs: [std::ptr::null_mut(); 2],
            events: [std::ptr::null_mut(); 2],
            stream: std::ptr::null_mut(),
        };
    }
}

/// Copies `src` (pageable host memory) to device address `dst` (at least that many bytes of
/// device memory) and waits for it. Small copies go straight to the driver; larger ones through
/// the device's staging buffers, each chunk copied into page-locked memory by up to
/// [`STAGING_THREADS`] threads (this one and helpers started once per upload, which meet at two
/// barriers per chunk) while the previous chunk's DMA runs. The driver stages a pageable copy
/// through its own buffers on the calling thread: about 5-8 GB/s on the H100 machine
/// (`TESSERA_TRACE=1`), several threads calling it at once no faster. Measured on an H200
/// (session 27, `bench-results/h200-2026-11-27-s27/scripts/upload.cu`): `cudaMemcpy` 14-17 GB/s
/// at 16-48 MB and 7.6 at 128 MB; the helpers started for each 8 MB chunk 11.5 / 19.4 / 17.5
/// GB/s at 16 / 48 / 128 MB, started once 17.8 / 26.2 / 36.7.
pub fn upload_staged<T: Plain>(dev: &Arc<Device>, src: &[T], dst: u64) -> Result<()> {
    let bytes = std::mem::size_of_val(src);
    if bytes < 2 * STAGING_CHUNK {
        return copy_to_device(dev, Stream::default(), src, dst);
    }
    // SAFETY: T is Plain (no padding, initialized): its bytes are readable as u8.
    let src: &[u8] = unsafe { std::slice::from_raw_parts(src.as_ptr().cast(), bytes) };
    let mut slot = dev.staging.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_none() {
        *slot = Some(Staging::new(dev)?);
    }
    let st = slot.as_mut().expect("just made");
    // No more threads than the process may run at once (its CPU affinity: an MPI rank bound to
    // one core copies on that core alone).
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, STAGING_THREADS);
    let _g = dev.enter()?;
    let chunks = bytes.div_ceil(STAGING_CHUNK);
    let bufs = [st.bufs[0] as usize, st.bufs[1] as usize];
    // Thread t's share of chunk k: bytes [a, b) of it, disjoint from every other thread's.
    let copy_share = |k: usize, t: usize| {
        let len = STAGING_CHUNK.min(bytes - k * STAGING_CHUNK);
        let part = len.div_ceil(threads);
        let a = (t * part).min(len);
        let b = (a + part).min(len);
        if a < b {
            // SAFETY: src holds `bytes` readable bytes and k * STAGING_CHUNK + b <= bytes;
            // bufs[k % 2] is our page-locked allocation of STAGING_CHUNK >= b bytes, which no
            // copy reads any more (the main thread waited for its event before the chunk's
            // start barrier) and no other thread writes in [a, b) (the shares are disjoint);
            // the caller's memory and ours do not overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    src.as_ptr().add(k * STAGING_CHUNK + a),
                    (bufs[k % 2] as *mut u8).add(a),
                    b - a,
                )
            }
        }
    };
    let start = std::sync::Barrier::new(threads);
    let done = std::sync::Barrier::new(threads);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let queued = std::thread::scope(|scope| -> Result<()> {
        for t in 1..threads {
            let (start, done, stop, copy_share) = (&start, &done, &stop, &copy_share);
            scope.spawn(move || {
                for k in 0..chunks {
                    start.wait();
                    if stop.load(std::sync::atomic::Ordering::Acquire) {
                        return;
                    }
                    copy_share(k, t);
                    done.wait();
                }
            });
        }
        // Tells the helpers waiting at chunk k's start barrier to leave (after a failure).
        let release = |k: usize| {
            if k < chunks {
                stop.store(true, std::sync::atomic::Ordering::Release);
                start.wait();
            }
        };
        for k in 0..chunks {
            let i = k % 2;
            // SAFETY: the event is ours (never recorded: returns at once).
            if let Err(e) = check(
                unsafe { sys::cuEventSynchronize(st.events[i]) },
                "cuEventSynchronize",
            ) {
                release(k);
                return Err(e);
            }
            start.wait();
            copy_share(k, 0);
            done.wait();
            let len = STAGING_CHUNK.min(bytes - k * STAGING_CHUNK);
            // SAFETY: dst + offset is inside the caller's device allocation (it holds
            // `bytes`); the source is page-locked and stays untouched until the event below
            // completes.
            let issued = check(
                unsafe {
                    sys::cuMemcpyHtoDAsync_v2(
                        dst + (k * STAGING_CHUNK) as u64,
                        st.bufs[i].cast(),
                        len,
                        st.stream,
                    )
                },
                "cuMemcpyHtoDAsync (staged)",
            )
            .and_then(|()| {
                check(
                    // SAFETY: our event and stream.
                    unsafe { sys::cuEventRecord(st.events[i], st.stream) },
                    "cuEventRecord",
                )
            });
            if let Err(e) = issued {
                release(k + 1);
                return Err(e);
            }
        }
        Ok(())
    });
    queued?;
    // SAFETY: our stream.
    check(
        unsafe { sys::cuStreamSynchronize(st.stream) },
        "cuStreamSynchronize",
    )
}
