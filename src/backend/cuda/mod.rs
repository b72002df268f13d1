//! The CUDA backend: the device's primary context, streams, device memory, pointer-kind
//! detection, events and kernel launches, over the CUDA driver API.
//!
//! CUDA is loaded, not linked (cudarc with `dynamic-loading`). cudarc panics when a library or a
//! symbol is missing, so before the first CUDA call [`probe_driver`] checks, with the very
//! names cudarc will try, that the driver (`libcuda`) loads, and a device that has no built-in
//! kernels ([`builtin`]) checks NVRTC (`libnvrtc`) the same way; either answers NO_DEVICE with
//! a sentence naming what is missing. (The C API's guard would still turn a panic into
//! INTERNAL_ERROR; the probes make the answer NO_DEVICE and readable.)
//!
//! Contexts: every device is used through its *primary* context (`cuDevicePrimaryCtxRetain`),
//! the one the CUDA runtime uses, so pointers from `cudaMalloc` and streams from
//! `cudaStreamCreate` work as they are. Each call pushes that context for its duration and pops
//! it again ([`Device::enter`]), leaving the caller's current context as it was.
//!
//! Kernel modules come from the library itself (CUBIN built in at build time, [`builtin`]) or
//! are compiled by NVRTC and kept on disk ([`cache`]); either way they are kept per device
//! context in memory (shared by all handles of the device, and alive while any handle or matrix
//! of the device is).
mod bounce;
pub mod builtin;
pub mod cache;
pub mod check;
pub use check::deferred_checks;
pub mod csr;
mod device;
#[doc(hidden)]
pub mod fault;
pub mod import;
pub mod kernels;
mod launching;
mod loading;
mod memory;
pub mod nvrtc;
mod pool;
pub mod scan;
mod stream;

pub use device::{Device, Function, Module};
#[cfg(test)]
pub(crate) use launching::MAX_KERNEL_ARGS;
pub(crate) use launching::{launch, launch_overlapped, launch_shared, KernelArgs};
pub(crate) use loading::check;
pub use loading::{probe_driver, DRIVER_SYMBOLS};
pub use memory::{
    allocating_as_a_caller, allocating_on, check_device_accessible, copies_waited_once,
    copy_to_device, copy_to_host, pointer_info, upload_staged, DeviceBuffer, DeviceVec, MemKind,
    PtrInfo,
};
pub(crate) use stream::is_capturing;
pub use stream::{
    check_stream, relax_capture_mode, synchronize, with_relaxed_capture, Event, OwnedStream, Ready,
    Stream, Timer,
};
