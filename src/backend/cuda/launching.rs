//! Kernel launches: arguments by value without allocating, and the launch itself, checked
//! against the device's limits first.

use super::device::{Device, Function};
use super::fault;
use super::loading::driver_error;
use super::stream::Stream;
use crate::error::{Error, Result};
use cudarc::driver::result::DriverError;
use cudarc::driver::sys;
use std::ffi::c_void;

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

/// Launches `f` with `grid` blocks of `block` threads on `stream` (the
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
    args: KernelArgs,
) -> Result<()> {
    // SAFETY: the caller's contract, passed on unchanged.
    unsafe { launch_with(dev, f, grid, block, shared_bytes, stream, args, false) }
}

/// [`launch`] for the second kernel of a product's pair: when `after_first` (the product's own
/// first kernel was launched just before it on `stream`) it overlaps that kernel (programmatic
/// dependent launch, compute capability 9.0 and later, unless [`Device::overlaps_launches`]
/// says no): its blocks may start while the first still runs, and wait for the first's
/// completion and writes where they execute `tessera_wait_primary()` (kernels/common.cuh).
/// This hides the first kernel's run and the gap between the launches (a `hola_prescale` or
/// `brc_scale_rows` before its product: about 3-5 us on the H100). Without `after_first`, a
/// plain launch.
///
/// # Safety
/// As [`launch`]; and when `after_first`, the kernel launched just before on `stream` must be
/// tessera's own first kernel of the same product (never a caller's work: this kernel may read
/// x, or write y, while it runs), and this kernel must execute `tessera_wait_primary()` before
/// it touches anything that kernel writes.
pub(crate) unsafe fn launch_overlapped(
    dev: &Device,
    f: &Function,
    grid: usize,
    block: u32,
    stream: Stream,
    args: KernelArgs,
    after_first: bool,
) -> Result<()> {
    let overlap = after_first && dev.overlaps_launches();
    // SAFETY: the caller's contract, passed on unchanged.
    unsafe { launch_with(dev, f, grid, block, 0, stream, args, overlap) }
}

/// The launch itself: `cuLaunchKernel`, or `cuLaunchKernelEx` allowing programmatic stream
/// serialization when `overlap`.
///
/// # Safety
/// As [`launch_shared`], and [`launch_overlapped`]'s contract when `overlap`.
#[allow(clippy::too_many_arguments)]
unsafe fn launch_with(
    dev: &Device,
    f: &Function,
    grid: usize,
    block: u32,
    shared_bytes: u32,
    stream: Stream,
    mut args: KernelArgs,
    overlap: bool,
) -> Result<()> {
    dev.check_launch(&f.name, grid, block)?;
    if shared_bytes > f.shared_limit {
        return Err(Error::Internal(format!(
            "{}: {shared_bytes} bytes of dynamic shared memory exceed the {} it may use",
            f.name, f.shared_limit
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
    if overlap {
        let mut attr = sys::CUlaunchAttribute {
            id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            // SAFETY: an all-zero union is a valid value of every member; the one member the
            // attribute reads is set next.
            value: unsafe { std::mem::zeroed() },
        };
        attr.value.programmaticStreamSerializationAllowed = 1;
        let config = sys::CUlaunchConfig {
            gridDimX: grid as u32,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: block,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: shared_bytes,
            hStream: stream.raw(),
            attrs: &mut attr,
            numAttrs: 1,
        };
        // SAFETY: as the plain launch below; `config` and the attribute it points at live
        // until the call returns; the overlap contract is the caller's (launch_overlapped).
        let r = unsafe {
            sys::cuLaunchKernelEx(&config, f.f, params.as_mut_ptr(), std::ptr::null_mut())
        };
        return r
            .result()
            .map_err(|e| driver_error(e, &format!("cuLaunchKernelEx({})", f.name)));
    }
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
