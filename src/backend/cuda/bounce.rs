//! A background build's copies between pageable host memory and the device, through a
//! page-locked buffer of the device's ([`copy_to_host`](super::copy_to_host) and
//! [`copy_to_device`](super::copy_to_device) inside `allocating_on`, up to [`BOUNCE_MAX`]
//! bytes, in chunks of [`BOUNCE_BYTES`]; off with `TESSERA_PINNED_COPIES=0`).
//!
//! Why. A copy from or into pageable memory is staged by the driver on the calling thread,
//! which waits for the stream inside the driver; a background build's copies made that way
//! beside a caller queuing products stalled the caller's kernel launches for as long (H200,
//! session 35: 450-600 µs while BCCOO's build read its facts back, 240-360 µs while BRC's fill
//! read 1 MB of row offsets and uploaded its plan arrays, products queued ahead). Through
//! page-locked memory each chunk is queued like a kernel and waited for with an ordinary stream
//! synchronize, which holds nothing up. The buffer is taken only when free: a copy that finds it
//! in use (another thread's) takes the driver's path.

use super::device::Device;
use super::loading::check;
use super::stream::{is_capturing, Stream};
use crate::error::Result;
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::MutexGuard;

/// Bytes of a device's bounce buffer: one chunk of a copy.
pub(super) const BOUNCE_BYTES: usize = 1 << 20;

/// The largest copy that takes this path (larger uploads have their own staging,
/// `upload_staged`; larger downloads, whole CSR arrays, keep the driver's path).
pub(super) const BOUNCE_MAX: usize = 16 << 20;

/// A page-locked host buffer of [`BOUNCE_BYTES`], owned by the [`Device`] (made at its first
/// copy that takes this path, freed before its context is released; used under its mutex).
pub(super) struct Bounce {
    buf: *mut u8,
}

// SAFETY: page-locked memory is a process-wide allocation; the buffer is used only under the
// device's mutex.
unsafe impl Send for Bounce {}

impl Bounce {
    fn new(dev: &Device) -> Result<Bounce> {
        let _g = dev.enter()?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: context current; p is a valid out-pointer.
        check(
            unsafe { sys::cuMemHostAlloc(&mut p, BOUNCE_BYTES, sys::CU_MEMHOSTALLOC_PORTABLE) },
            "cuMemHostAlloc (bounce buffer)",
        )?;
        Ok(Bounce { buf: p.cast() })
    }

    /// Frees the buffer (the device's context current, or about to be released).
    pub(super) fn release(&mut self) {
        if !self.buf.is_null() {
            // SAFETY: our cuMemHostAlloc allocation, freed once (nulled here).
            let _ = unsafe { sys::cuMemFreeHost(self.buf.cast()) };
        }
        self.buf = std::ptr::null_mut();
    }
}

/// False when `TESSERA_PINNED_COPIES` is `0` (or `off`, `false`, `no`); read once.
fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| !crate::backend::switched_off("TESSERA_PINNED_COPIES"))
}

/// The device's buffer, locked, where a copy of `bytes` on `stream` takes this path: inside a
/// background build's device half (`allocating_on`: a caller's own copies, on its critical
/// path, keep the driver's pipelined path, faster for a few MB), switched on, at most
/// [`BOUNCE_MAX`], the stream not being captured, the buffer free (or made now).
fn take(
    dev: &Device,
    stream: Stream,
    bytes: usize,
) -> Option<(MutexGuard<'_, Option<Bounce>>, *mut u8)> {
    if !super::memory::in_background_build()
        || bytes > BOUNCE_MAX
        || !enabled()
        || is_capturing(dev, stream).unwrap_or(true)
    {
        return None;
    }
    let mut slot = dev.bounce.try_lock().ok()?;
    if slot.is_none() {
        *slot = Some(Bounce::new(dev).ok()?);
    }
    let buf = slot.as_ref()?.buf;
    Some((slot, buf))
}

/// Copies `bytes` bytes at device address `src` to `dst` after the work queued on `stream`,
/// and waits: `None` where this path does not apply ([`take`]), for the caller's own copy.
///
/// # Safety
/// `dst` must be valid for `bytes` bytes of writes, and `src` readable device memory of at
/// least `bytes` bytes.
pub(super) unsafe fn to_host(
    dev: &Device,
    stream: Stream,
    src: u64,
    dst: *mut u8,
    bytes: usize,
) -> Option<Result<()>> {
    let (_slot, buf) = take(dev, stream, bytes)?;
    Some(in_chunks(dev, bytes, |off, n| {
        // SAFETY: buf holds BOUNCE_BYTES >= n page-locked bytes that no one else uses while the
        // mutex is held; src + off .. + n lies in the caller's readable device memory.
        check(
            unsafe { sys::cuMemcpyDtoHAsync_v2(buf.cast(), src + off as u64, n, stream.raw()) },
            "cuMemcpyDtoHAsync",
        )?;
        super::synchronize(dev, stream)?;
        // SAFETY: the chunk has arrived (the stream was waited for); dst + off .. + n is within
        // the caller's writable bytes and does not overlap our buffer.
        unsafe { std::ptr::copy_nonoverlapping(buf, dst.add(off), n) };
        Ok(())
    }))
}

/// Copies `bytes` bytes at `src` to device address `dst`, ordered on `stream`, and waits: `None`
/// where this path does not apply ([`take`]), for the caller's own copy.
///
/// # Safety
/// `src` must be valid for `bytes` bytes of reads, and `dst` writable device memory of at least
/// `bytes` bytes.
pub(super) unsafe fn to_device(
    dev: &Device,
    stream: Stream,
    src: *const u8,
    dst: u64,
    bytes: usize,
) -> Option<Result<()>> {
    let (_slot, buf) = take(dev, stream, bytes)?;
    Some(in_chunks(dev, bytes, |off, n| {
        // SAFETY: src + off .. + n is within the caller's readable bytes; buf holds
        // BOUNCE_BYTES >= n bytes, free (the previous chunk's copy was waited for).
        unsafe { std::ptr::copy_nonoverlapping(src.add(off), buf, n) };
        // SAFETY: dst + off .. + n lies in the caller's writable device memory; buf stays
        // untouched until the wait below.
        check(
            unsafe { sys::cuMemcpyHtoDAsync_v2(dst + off as u64, buf.cast(), n, stream.raw()) },
            "cuMemcpyHtoDAsync",
        )?;
        super::synchronize(dev, stream)
    }))
}

/// Runs `chunk(offset, bytes)` over `bytes` in pieces of at most [`BOUNCE_BYTES`], in order, with
/// the device's context current; stops at the first failure.
fn in_chunks(
    dev: &Device,
    bytes: usize,
    mut chunk: impl FnMut(usize, usize) -> Result<()>,
) -> Result<()> {
    let _g = dev.enter()?;
    for off in (0..bytes).step_by(BOUNCE_BYTES) {
        chunk(off, BOUNCE_BYTES.min(bytes - off))?;
    }
    Ok(())
}
