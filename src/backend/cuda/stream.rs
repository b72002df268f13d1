//! Streams (the caller's `cudaStream_t`), events, and the one event timer of tessera.

use super::device::Device;
use super::loading::{check, driver_error};
use crate::error::{Error, Result};
use cudarc::driver::result::DriverError;
use cudarc::driver::sys;
use std::sync::Arc;

/// A CUDA stream given by the caller (`cudaStream_t`/`CUstream`); 0 is the default stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stream(pub usize);

impl Stream {
    pub(crate) fn raw(self) -> sys::CUstream {
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

/// A stream tessera creates for its own work off the caller's streams (a format built in the
/// background): non-blocking (it never waits for the legacy default stream), given back to its
/// device on drop for the next one.
pub struct OwnedStream {
    stream: Stream,
    dev: Arc<Device>,
}

// SAFETY: a stream handle is process-wide; it is used with its context made current.
unsafe impl Send for OwnedStream {}
// SAFETY: as above; the driver calls on a stream are thread-safe.
unsafe impl Sync for OwnedStream {}

impl OwnedStream {
    /// A non-blocking stream of `dev`'s context: one a dropped `OwnedStream` gave back, else a
    /// new one.
    pub fn new(dev: &Arc<Device>) -> Result<Self> {
        let spare = dev
            .spare_streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop();
        if let Some(s) = spare {
            return Ok(OwnedStream {
                stream: Stream(s),
                dev: dev.clone(),
            });
        }
        let _g = dev.enter()?;
        let mut s = std::ptr::null_mut();
        // SAFETY: context current; s is a valid out-pointer.
        check(
            unsafe {
                sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)
            },
            "cuStreamCreate",
        )?;
        Ok(OwnedStream {
            stream: Stream(s as usize),
            dev: dev.clone(),
        })
    }

    /// The stream, to queue work on.
    pub fn stream(&self) -> Stream {
        self.stream
    }

    /// Waits for all work queued on it.
    pub fn synchronize(&self) -> Result<()> {
        synchronize(&self.dev, self.stream)
    }
}

impl Drop for OwnedStream {
    /// Gives the stream back to its device for the next build (up to
    /// [`super::device::SPARE_STREAMS`]; work still queued on it, from a build that failed half
    /// way, only runs before the next user's), else destroys it.
    fn drop(&mut self) {
        {
            let mut spare = self
                .dev
                .spare_streams
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if spare.len() < super::device::SPARE_STREAMS {
                spare.push(self.stream.0);
                return;
            }
        }
        if let Ok(_g) = self.dev.enter() {
            // SAFETY: the stream was created in this context and is destroyed once.
            let _ = unsafe { sys::cuStreamDestroy_v2(self.stream.raw()) };
        }
    }
}

/// Lets the calling thread make calls a graph capture in another thread would otherwise forbid
/// (`cuMemAlloc`, `cuStreamSynchronize`: CUDA's "potentially unsafe" calls, refused by default
/// while any thread captures in global mode). For threads tessera owns, which never capture and
/// whose work never touches a stream being captured: a caller capturing a product on its own
/// thread while a format is built in the background must not see its capture invalidated.
pub fn relax_capture_mode() -> Result<()> {
    let mut mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
    // SAFETY: mode is a valid in/out pointer; this sets the calling thread's mode only.
    check(
        unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) },
        "cuThreadExchangeStreamCaptureMode",
    )
}

/// Runs `f` with the calling thread's capture mode relaxed, then restores it: for a call that
/// must wait on the host while the caller's own stream is being captured in global mode.
pub fn with_relaxed_capture<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    let mut mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
    // SAFETY: mode is a valid in/out pointer; this sets the calling thread's mode only.
    check(
        unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) },
        "cuThreadExchangeStreamCaptureMode",
    )?;
    let r = f();
    // SAFETY: as above; the previous mode back.
    let back = check(
        unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) },
        "cuThreadExchangeStreamCaptureMode",
    );
    let r = r?;
    back.map(|_| r)
}

/// Work queued on one stream (an analysis's kernels) that later work on any stream must follow,
/// without a host wait where it can be helped: [`Ready::order`].
pub struct Ready {
    /// None: nothing was queued ([`Ready::nothing`]).
    event: Option<Event>,
    on: Stream,
    done: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Ready {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ready({:?} on {:?})", self.event, self.on)
    }
}

impl Ready {
    /// Marks what is queued on `stream` now.
    pub fn record(dev: &Arc<Device>, stream: Stream) -> Result<Ready> {
        let event = Event::for_ordering(dev)?;
        event.record(stream)?;
        Ok(Ready {
            event: Some(event),
            on: stream,
            done: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Marks nothing: an analysis that queued no device work (no driver call).
    pub fn nothing() -> Ready {
        Ready {
            event: None,
            on: Stream::default(),
            done: std::sync::atomic::AtomicBool::new(true),
        }
    }

    /// Orders what is queued next on `stream` after the marked work: nothing once it is known
    /// to be done or on its own stream; a device-side wait (`cuStreamWaitEvent`) otherwise,
    /// except on a stream being captured, where the host waits for it (relaxed: a capture
    /// cannot depend on work recorded outside it).
    pub fn order(&self, stream: Stream) -> Result<()> {
        use std::sync::atomic::Ordering;
        let Some(event) = &self.event else {
            return Ok(());
        };
        if self.done.load(Ordering::Acquire) || stream.same_queue(self.on) {
            return Ok(());
        }
        if is_capturing(&event.dev, stream)? {
            with_relaxed_capture(|| event.synchronize())?;
            self.done.store(true, Ordering::Release);
        } else if !self.is_done()? {
            return event.wait_on(stream);
        }
        Ok(())
    }

    /// True once the marked work has finished (never blocks; not on a stream being captured in
    /// global mode, where an event query is refused).
    pub fn is_done(&self) -> Result<bool> {
        use std::sync::atomic::Ordering;
        let Some(event) = &self.event else {
            return Ok(true);
        };
        if self.done.load(Ordering::Acquire) {
            return Ok(true);
        }
        let done = event.is_done()?;
        if done {
            self.done.store(true, Ordering::Release);
        }
        Ok(done)
    }

    /// Waits on the host for the marked work.
    pub fn synchronize(&self) -> Result<()> {
        match &self.event {
            Some(event) => event.synchronize(),
            None => Ok(()),
        }
    }
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

/// A CUDA event with timing, for CUDA-event timing on a stream.
pub struct Event {
    ev: sys::CUevent,
    dev: Arc<Device>,
    /// An ordering-only event: given back to the device's spare events when dropped.
    spare: bool,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Event({:p})", self.ev)
    }
}

/// The most spare ordering events a device keeps.
const SPARE_EVENTS: usize = 256;

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
        let reused = dev
            .spare_events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop();
        let mut e = match reused {
            Some(ev) => Event {
                ev: ev as sys::CUevent,
                dev: dev.clone(),
                spare: false,
            },
            None => Self::with_flags(dev, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)?,
        };
        e.spare = true;
        Ok(e)
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
            spare: false,
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
        if self.spare {
            // Recorded work it may still mark is harmless to its next owner, who records it
            // before waiting on it.
            let mut spare = self
                .dev
                .spare_events
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if spare.len() < SPARE_EVENTS {
                spare.push(self.ev as usize);
                return;
            }
        }
        if let Ok(_g) = self.dev.enter() {
            // SAFETY: the event was created in this context and is destroyed once.
            let _ = unsafe { sys::cuEventDestroy_v2(self.ev) };
        }
    }
}

/// Milliseconds per call of work queued on a stream (a product, a copy), measured with two
/// CUDA events around a batch of back-to-back calls. The one timer of tessera: the tuners and
/// AUTO's timing (short batches, [`Timer::time`]), `tessera bench` and the bandwidth probe
/// (median of long batches, [`Timer::median_ms`]).
pub struct Timer {
    start: Event,
    end: Event,
    reps: usize,
}

impl Timer {
    /// A timer whose batch is one call until [`Timer::calibrate`].
    pub fn new(dev: &Arc<Device>) -> Result<Self> {
        Ok(Timer {
            start: Event::new(dev)?,
            end: Event::new(dev)?,
            reps: 1,
        })
    }

    /// Sets the batch so that calls of `one_ms` each fill about `batch_ms`, within `reps`.
    pub fn calibrate(&mut self, one_ms: f64, batch_ms: f64, reps: std::ops::RangeInclusive<usize>) {
        let want = (batch_ms / one_ms.max(1e-4)).ceil() as usize;
        self.reps = want.clamp(*reps.start(), *reps.end());
    }

    /// One warm-up call of `f` (which queues one call's work on `stream`), then one batch
    /// between the events: milliseconds per call. Waits for the stream.
    pub fn time(&self, stream: Stream, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
        f()?;
        self.batch(stream, self.reps, &mut f)
    }

    /// The benchmark measure: `warmups` calls, a one-call batch to calibrate batches of about
    /// 1 ms (at most 20,000 calls), then the median per-call time of `batches` batches (at
    /// least 7). Waits for the stream.
    pub fn median_ms(
        &mut self,
        stream: Stream,
        warmups: usize,
        batches: usize,
        mut f: impl FnMut() -> Result<()>,
    ) -> Result<f64> {
        for _ in 0..warmups {
            f()?;
        }
        let one = self.batch(stream, 1, &mut f)?;
        self.calibrate(one, 1.0, 1..=20_000);
        let mut times = Vec::with_capacity(batches.max(7));
        for _ in 0..batches.max(7) {
            times.push(self.batch(stream, self.reps, &mut f)?);
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }

    /// `reps` calls between the two events: milliseconds per call.
    fn batch(
        &self,
        stream: Stream,
        reps: usize,
        f: &mut impl FnMut() -> Result<()>,
    ) -> Result<f64> {
        self.start.record(stream)?;
        for _ in 0..reps {
            f()?;
        }
        self.end.record(stream)?;
        self.end.synchronize()?;
        Ok(self.end.elapsed_ms(&self.start)? / reps as f64)
    }
}
