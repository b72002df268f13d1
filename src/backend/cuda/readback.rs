//! Small copies from the device through a page-locked buffer of the device's
//! ([`copy_to_host`](super::copy_to_host)'s path for at most [`READBACK_BYTES`]; off with
//! `TESSERA_PINNED_READBACK=0`).
//!
//! Why. A copy into pageable memory is staged by the driver on the calling thread, which waits
//! for the stream inside the driver; a background build's read-backs (a count, a flag word, a
//! table of starts) made that way beside a caller queuing products stalled the caller's kernel
//! launches for as long as the wait (session 35: 350-600 µs while BCCOO's build read its facts
//! back, products of 10 µs queued ahead). Into page-locked memory the copy is queued like a
//! kernel and the wait is an ordinary stream synchronize, which holds nothing up.

use super::device::Device;
use super::loading::check;
use super::stream::{is_capturing, Stream};
use crate::error::Result;
use cudarc::driver::sys;
use std::ffi::c_void;

/// Bytes of a device's read-back buffer: the largest copy that takes this path.
pub(super) const READBACK_BYTES: usize = 64 << 10;

/// A page-locked host buffer of [`READBACK_BYTES`], owned by the [`Device`] (made at its first
/// small read-back, freed before its context is released; used under the device's mutex).
pub(super) struct Readback {
    buf: *mut u8,
}

// SAFETY: page-locked memory is a process-wide allocation; the buffer is used only under the
// device's mutex.
unsafe impl Send for Readback {}

impl Readback {
    fn new(dev: &Device) -> Result<Readback> {
        let _g = dev.enter()?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: context current; p is a valid out-pointer.
        check(
            unsafe { sys::cuMemHostAlloc(&mut p, READBACK_BYTES, sys::CU_MEMHOSTALLOC_PORTABLE) },
            "cuMemHostAlloc (read-back buffer)",
        )?;
        Ok(Readback { buf: p.cast() })
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

/// False when `TESSERA_PINNED_READBACK` is `0` (or `off`, `false`, `no`); read once.
fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| !crate::backend::switched_off("TESSERA_PINNED_READBACK"))
}

/// Copies `bytes` bytes at device address `src` to `dst` after the work queued on `stream`,
/// through the device's read-back buffer, and waits: `None` where this path does not apply
/// (more than [`READBACK_BYTES`], switched off, the stream being captured, or the buffer could
/// not be made), for the caller's own copy.
///
/// # Safety
/// `dst` must be valid for `bytes` bytes of writes, and `src` readable device memory of at
/// least `bytes` bytes.
pub(super) unsafe fn copy(
    dev: &Device,
    stream: Stream,
    src: u64,
    dst: *mut u8,
    bytes: usize,
) -> Option<Result<()>> {
    if bytes > READBACK_BYTES || !enabled() || is_capturing(dev, stream).unwrap_or(true) {
        return None;
    }
    let mut slot = dev.readback.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_none() {
        *slot = Some(Readback::new(dev).ok()?);
    }
    let buf = slot.as_ref()?.buf;
    let done = (|| {
        let _g = dev.enter()?;
        // SAFETY: buf holds READBACK_BYTES >= bytes page-locked bytes that no one else uses
        // while the mutex is held; src is the caller's readable device memory.
        check(
            unsafe { sys::cuMemcpyDtoHAsync_v2(buf.cast(), src, bytes, stream.raw()) },
            "cuMemcpyDtoHAsync",
        )?;
        super::synchronize(dev, stream)?;
        // SAFETY: the copy has completed (the stream was waited for); dst is valid for bytes
        // bytes of writes (the caller's contract) and does not overlap our buffer.
        unsafe { std::ptr::copy_nonoverlapping(buf, dst, bytes) };
        Ok(())
    })();
    Some(done)
}
