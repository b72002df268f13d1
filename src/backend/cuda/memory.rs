//! Device memory: tessera's own buffers, pointer-kind detection for the caller's pointers,
//! and copies between host and device.

use super::device::Device;
use super::fault;
use super::loading::check;
use super::stream::{synchronize, Stream};
use crate::error::{Error, Result};
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
/// `stream`, and waits for the copy.
pub fn copy_to_host<T: Copy>(dev: &Device, stream: Stream, src: u64, dst: &mut [T]) -> Result<()> {
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
pub fn copy_to_device<T: Copy>(dev: &Device, stream: Stream, src: &[T], dst: u64) -> Result<()> {
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
        copy_to_device(dev, stream, src, b.ptr)?;
        Ok(b)
    }

    /// Allocates and fills from a (pageable) host slice with `threads` concurrent copies, each a
    /// slice on a stream of its own, and waits for them. The driver stages a pageable copy
    /// through its pinned buffers one memcpy at a time, about 10 GB/s on one thread; slices on
    /// several threads overlap that staging. Ordered after nothing queued on the caller's
    /// streams: the buffer is new.
    pub fn upload_parallel<T: Copy + Sync>(
        dev: &Arc<Device>,
        src: &[T],
        threads: usize,
        what: &str,
    ) -> Result<DeviceBuffer> {
        let b = DeviceBuffer::alloc(dev, std::mem::size_of_val(src), what)?;
        let chunk = src.len().div_ceil(threads.max(1)).max(1);
        let elem = std::mem::size_of::<T>() as u64;
        std::thread::scope(|scope| {
            let jobs: Vec<_> = src
                .chunks(chunk)
                .enumerate()
                .map(|(i, part)| {
                    let dst = b.ptr + (i * chunk) as u64 * elem;
                    scope.spawn(move || -> Result<()> {
                        let own = super::OwnedStream::new(dev)?;
                        copy_to_device(dev, own.stream(), part, dst)
                    })
                })
                .collect();
            jobs.into_iter().try_for_each(|j| {
                j.join()
                    .unwrap_or_else(|_| Err(Error::Internal("an upload thread panicked".into())))
            })
        })?;
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

impl<T: Copy + Default + Send + Sync> DeviceVec<T> {
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
