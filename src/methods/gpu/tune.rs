//! Analyze-time tuning (QUICK/EXHAUSTIVE, and AUTO's timing of the methods): candidates are
//! timed on the real matrix with scratch vectors and CUDA events, and the fastest is kept.
//!
//! One rule for every tuner: candidates are timed in order, the first being the incumbent (a
//! fixed rule, or an earlier stage's pick), and a later candidate replaces the incumbent only
//! when it is at least [`MIN_GAIN`] faster. Timing noise between two launches of one kernel is
//! about 1% on an H100 with batches of 0.2 ms; the margin keeps a tuner from trading a
//! well-understood rule for a candidate that only won the noise.

#![forbid(unsafe_code)]

use crate::backend::cuda::{synchronize, Device, DeviceBuffer, Stream, Timer};
use crate::error::Result;
use crate::scalar::Scalar;
use std::fmt::Display;
use std::sync::Arc;

/// The least relative gain for which a candidate replaces the incumbent: 2%.
pub const MIN_GAIN: f64 = 0.02;

/// True when `ms` beats `incumbent_ms` by at least [`MIN_GAIN`].
pub fn improves(ms: f64, incumbent_ms: f64) -> bool {
    ms < incumbent_ms * (1.0 - MIN_GAIN)
}

/// Tuning batches last about this long (calibrated on the first candidate)...
const BATCH_MS: f64 = 0.2;
/// ...within this many products.
const BATCH_REPS: std::ops::RangeInclusive<usize> = 2..=50;

/// The vectors every tuner times with, on the device (freed on drop): x with values in
/// [-1, 1), never all zeros, the same for every method so their times compare; y written only
/// (the timed products use beta = 0).
pub struct Scratch {
    x: DeviceBuffer,
    y: DeviceBuffer,
}

impl Scratch {
    /// x of `cols` and y of `rows` values of `T`.
    pub fn new<T: Scalar>(
        dev: &Arc<Device>,
        stream: Stream,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        let x: Vec<T> = (0..cols)
            .map(|i| T::from_f64(((i * 7919) % 2001) as f64 / 1000.0 - 1.0 + 1e-3))
            .collect();
        Ok(Scratch {
            x: DeviceBuffer::from_slice(dev, stream, &x, "tuning scratch x")?,
            y: DeviceBuffer::alloc(
                dev,
                rows.max(1) * std::mem::size_of::<T>(),
                "tuning scratch y",
            )?,
        })
    }

    /// Device addresses of x and y.
    pub fn addrs(&self) -> (u64, u64) {
        (self.x.addr(), self.y.addr())
    }
}

/// When the environment variable `TESSERA_LOG_TUNING` is set (to anything but `0`), every
/// candidate a tuner times is printed to stderr as one line: `tessera tuning: <method>
/// <candidate> <ms> ms`. Read once per process. For users who want to see why the tuner chose
/// what `info.params` says, and for choosing fixed rules from real timings.
pub fn log_tuning(method: &str, candidate: &dyn Display, ms: f64) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let on = *ON.get_or_init(|| {
        std::env::var_os("TESSERA_LOG_TUNING").is_some_and(|v| !v.is_empty() && v != "0")
    });
    if on {
        eprintln!("tessera tuning: {method} {candidate} {ms:.5} ms");
    }
}

/// One tuning session on one matrix: scratch vectors, a [`Timer`] whose batch is calibrated on
/// the first candidate timed (every candidate is then timed with the same batch), and the
/// method's name for [`log_tuning`].
pub struct Tuner {
    dev: Arc<Device>,
    stream: Stream,
    scratch: Scratch,
    timer: Timer,
    calibrated: bool,
    method: &'static str,
}

impl Tuner {
    /// A session for `method` on a matrix of `rows` x `cols` values of `T`, timing on `stream`.
    pub fn new<T: Scalar>(
        dev: &Arc<Device>,
        stream: Stream,
        rows: usize,
        cols: usize,
        method: &'static str,
    ) -> Result<Self> {
        Ok(Tuner {
            dev: dev.clone(),
            stream,
            scratch: Scratch::new::<T>(dev, stream, rows, cols)?,
            timer: Timer::new(dev)?,
            calibrated: false,
            method,
        })
    }

    /// Milliseconds per product of `run(x, y)`, which queues one product (alpha = 1, beta = 0)
    /// on the tuner's stream with the scratch x and y: one warm-up product, then a batch. The
    /// first call also calibrates the batch. Logged as `label`.
    pub fn time(
        &mut self,
        label: &dyn Display,
        mut run: impl FnMut(u64, u64) -> Result<()>,
    ) -> Result<f64> {
        let (x, y) = self.scratch.addrs();
        if !self.calibrated {
            let one = self.timer.time(self.stream, || run(x, y))?;
            self.timer.calibrate(one, BATCH_MS, BATCH_REPS);
            self.calibrated = true;
        }
        let ms = self.timer.time(self.stream, || run(x, y))?;
        log_tuning(self.method, label, ms);
        Ok(ms)
    }
}

/// What [`pick_fastest`] kept: the candidate, what `build` made of it, its time, and the times
/// of the incumbent it started from and of every candidate timed (in order).
#[derive(Debug)]
pub struct Picked<C, R> {
    /// The winning candidate.
    pub cand: C,
    /// What `build` made of it.
    pub ready: R,
    /// Its milliseconds per product.
    pub ms: f64,
    /// The first incumbent's milliseconds (the fixed rule's, for the first call).
    pub first_ms: f64,
    /// Every candidate timed, with its time.
    pub timings: Vec<(C, f64)>,
    /// Candidates `build` declined (could not be built, or not allowed here).
    pub skipped: usize,
}

/// Times candidates and keeps the fastest, by the one rule of this module: the first candidate
/// (or `start`'s pick, which is not timed again) is the incumbent, and a later one replaces it
/// only when [`improves`] on it. `build` prepares a candidate on the device (`None`: skip it,
/// e.g. a format that does not fit); `run(ready, cand, x, y)` queues one product of it.
/// Everything `build` made for a losing candidate is dropped as soon as it has lost, so at
/// most two candidates are on the device at once. Returns `None` only when no candidate could
/// be built and there was no `start`. Waits for the tuner's stream at the end.
pub fn pick_fastest<C: Clone + Display, R>(
    tuner: &mut Tuner,
    start: Option<Picked<C, R>>,
    cands: impl IntoIterator<Item = C>,
    mut build: impl FnMut(&C) -> Result<Option<R>>,
    mut run: impl FnMut(&R, &C, u64, u64) -> Result<()>,
) -> Result<Option<Picked<C, R>>> {
    let mut best = start;
    let mut skipped = 0;
    for c in cands {
        let Some(ready) = build(&c)? else {
            skipped += 1;
            continue;
        };
        let ms = tuner.time(&c, |x, y| run(&ready, &c, x, y))?;
        match best.as_mut() {
            None => {
                best = Some(Picked {
                    cand: c.clone(),
                    ready,
                    ms,
                    first_ms: ms,
                    timings: vec![(c, ms)],
                    skipped: 0,
                })
            }
            Some(b) => {
                b.timings.push((c.clone(), ms));
                if improves(ms, b.ms) {
                    b.cand = c;
                    b.ready = ready;
                    b.ms = ms;
                }
            }
        }
    }
    synchronize(&tuner.dev, tuner.stream)?;
    if let Some(b) = best.as_mut() {
        b.skipped += skipped;
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_candidate_must_beat_the_incumbent_by_the_minimum_gain() {
        assert!(improves(97.0, 100.0));
        assert!(!improves(98.5, 100.0));
        assert!(!improves(100.0, 100.0));
    }
}
