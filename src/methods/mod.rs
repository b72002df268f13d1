//! The SpMV methods, one folder each (ARCHITECTURE §3), plus what they share: the two traits a
//! method implements (its host reference over its own arrays, and its GPU form), the one place
//! that maps a [`Algorithm`] to a method, the value map scatter used by `update_values`, and the
//! generic transpose over CSR.
//!
//! Adding a method: a folder with `params.rs`, `format.rs`, `reference.rs`, `cuda.rs`; a
//! [`HostMethod`] and a [`GpuMethod`] implementation; one arm in [`prepare_host`] and one in
//! [`prepare_gpu`]; and its name in `select::implemented`.
// `deny`, not `forbid`: each method's `cuda.rs` opts back in (CONVENTIONS §6); format.rs,
// reference.rs and params.rs forbid it themselves.
#![deny(unsafe_code)]

pub mod bccoo;
pub mod brc;
pub mod csr_vector;
pub mod hola;
pub mod tile;
pub mod transpose;

use crate::backend::cuda::csr::GpuCsr;
use crate::backend::cuda::{Device, DeviceBuffer, Event, Stream};
use crate::csr::{Csr, RowStats};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::types::{Algorithm, Tuning};
use std::sync::Arc;

/// What analyze hands a method: the matrix and how to choose parameters.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a, T> {
    /// tessera's CSR of the matrix (sorted columns, base 0).
    pub csr: &'a Csr<T>,
    /// Its row statistics.
    pub stats: &'a RowStats,
    /// NONE: the method's fixed rule; QUICK/EXHAUSTIVE: time candidates (GPU only); ONLINE:
    /// tune during the first products (methods without ONLINE tuning treat it as QUICK).
    pub tuning: Tuning,
    /// The handle asks for a bitwise reproducible product (`TESSERA_DETERMINISTIC=1`): a method
    /// with a deterministic variant uses it.
    pub deterministic: bool,
}

/// A method's format on the host, run by its `reference.rs`: the host backend and the oracle.
pub trait HostMethod<T: Scalar>: std::fmt::Debug + Send + Sync {
    /// y = alpha*A*x + beta*y over the method's own arrays. `a` is the matrix's CSR, with the
    /// same values. `beta == 0` never reads y. x has `cols` and y `rows` entries.
    fn spmv(&self, a: &Csr<T>, alpha: T, x: &[T], beta: T, y: &mut [T]);

    /// y = alpha*A^T*x + beta*y; the default is the generic CSR transpose.
    fn spmv_transpose(&self, a: &Csr<T>, alpha: T, x: &[T], beta: T, y: &mut [T]) {
        transpose::spmv_transpose(a, alpha, x, beta, y)
    }

    /// The CSR's values changed (same pattern): bring the method's own value arrays up to date
    /// through its value map.
    fn update_values(&mut self, a: &Csr<T>);

    /// Bytes the method keeps beyond the CSR arrays.
    fn extra_bytes(&self) -> usize;

    /// The parameters and how they were chosen, for `info.params`.
    fn describe(&self) -> String;

    /// True when the non-transposed product is bitwise reproducible run to run.
    fn deterministic(&self) -> bool;
}

/// A method ready to run on a device. The matrix's CSR arrays stay on the device beside it
/// ([`GpuCsr`]): TRANSPOSE and `update_values` work on them.
pub trait GpuMethod<T: Scalar>: std::fmt::Debug + Send + Sync {
    /// y = alpha*A*x + beta*y on `stream`: asynchronous, allocation-free, no host sync. x and y
    /// are device addresses already checked to hold `cols` and `rows` values; alpha != 0.
    #[allow(clippy::too_many_arguments)]
    fn spmv(
        &self,
        csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()>;

    /// y = alpha*A^T*x + beta*y; the default is the generic atomic transpose over CSR.
    #[allow(clippy::too_many_arguments)]
    fn spmv_transpose(
        &self,
        csr: &GpuCsr<T>,
        stream: Stream,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        csr.spmv_transpose(stream, alpha, x, beta, y)
    }

    /// The device CSR's values changed (same pattern): refresh the method's own value arrays
    /// from them on `stream` (the value-map scatter). Methods that read the CSR do nothing.
    fn refresh_values(&self, _csr: &GpuCsr<T>, _stream: Stream) -> Result<()> {
        Ok(())
    }

    /// Device bytes the method keeps beyond the CSR arrays (exact: its allocations).
    fn device_bytes(&self) -> usize;

    /// The parameters in use and how they were chosen, for `info.params`.
    fn describe(&self) -> String;

    /// True unless run-time (ONLINE) tuning is still searching.
    fn settled(&self) -> bool {
        true
    }

    /// True when the non-transposed product is bitwise reproducible run to run.
    fn deterministic(&self) -> bool;
}

fn not_implemented(alg: Algorithm) -> Error {
    Error::NotSupported(format!(
        "{} is not implemented in tessera {} yet",
        alg.c_name(),
        env!("CARGO_PKG_VERSION")
    ))
}

/// Builds `alg`'s host format (the host backend). `alg` is a concrete method, not AUTO.
pub fn prepare_host<T: Scalar>(
    alg: Algorithm,
    req: &Request<'_, T>,
) -> Result<Box<dyn HostMethod<T>>> {
    match alg {
        Algorithm::CsrVector => Ok(Box::new(csr_vector::host::CsrVectorHost::new(req))),
        Algorithm::Hola => Ok(Box::new(hola::host::HolaHost::new(req))),
        Algorithm::Brc => Ok(Box::new(brc::host::BrcHost::new(req)?)),
        Algorithm::Bccoo => Ok(Box::new(bccoo::host::BccooHost::new(req)?)),
        Algorithm::Tile => Ok(Box::new(tile::host::TileHost::new(req)?)),
        a => Err(not_implemented(a)),
    }
}

/// Builds `alg`'s format on the device and loads its kernels, choosing parameters as
/// `req.tuning` says. `csr` is the matrix's CSR already on the device.
pub fn prepare_gpu<T: Scalar>(
    alg: Algorithm,
    dev: &Arc<Device>,
    stream: Stream,
    csr: &GpuCsr<T>,
    req: &Request<'_, T>,
) -> Result<Box<dyn GpuMethod<T>>> {
    match alg {
        Algorithm::CsrVector => Ok(Box::new(csr_vector::cuda::CsrVectorGpu::prepare(
            dev, stream, csr, req.stats, req.tuning,
        )?)),
        Algorithm::Hola => Ok(Box::new(hola::cuda::HolaGpu::prepare(
            dev, stream, csr, req,
        )?)),
        Algorithm::Brc => Ok(Box::new(brc::cuda::BrcGpu::prepare(dev, stream, csr, req)?)),
        Algorithm::Bccoo => Ok(Box::new(bccoo::cuda::BccooGpu::prepare(
            dev, stream, req.csr, csr, req.tuning,
        )?)),
        Algorithm::Tile => Ok(Box::new(tile::cuda::TileGpu::prepare(
            dev, stream, csr, req,
        )?)),
        a => Err(not_implemented(a)),
    }
}

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

/// The timing every tuner uses: CUDA events around one warm-up call and a batch of
/// back-to-back calls on one stream (BENCHMARKING.md's method, with shorter batches).
pub struct Timer {
    start: Event,
    end: Event,
    reps: u32,
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

    /// Sets the batch to about 0.2 ms for calls of `one_ms` each: between 2 and 50 calls.
    pub fn calibrate(&mut self, one_ms: f64) {
        self.reps = ((0.2 / one_ms.max(1e-4)).ceil() as u32).clamp(2, 50);
    }

    /// Milliseconds per call of `f` (which launches one product on `stream`): one warm-up
    /// call, then the batch between the events. Waits for the stream.
    pub fn time(&self, stream: Stream, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
        f()?;
        self.start.record(stream)?;
        for _ in 0..self.reps {
            f()?;
        }
        self.end.record(stream)?;
        self.end.synchronize()?;
        Ok(self.end.elapsed_ms(&self.start)? / self.reps as f64)
    }
}

/// When the environment variable `TESSERA_LOG_TUNING` is set (to anything but `0`), every
/// candidate a tuner times is printed to stderr as one line: `tessera tuning: <method>
/// <candidate> <ms> ms`. Read once per process. For users who want to see why the tuner chose
/// what `info.params` says, and for choosing fixed rules from real timings.
pub fn log_tuning(method: &str, candidate: &dyn std::fmt::Display, ms: f64) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let on = *ON.get_or_init(|| {
        std::env::var_os("TESSERA_LOG_TUNING").is_some_and(|v| !v.is_empty() && v != "0")
    });
    if on {
        eprintln!("tessera tuning: {method} {candidate} {ms:.5} ms");
    }
}

/// Times `m` on the matrix with scratch vectors `x` (cols) and `y` (rows) with a calibrated
/// [`Timer`]: milliseconds per product.
pub fn time_gpu<T: Scalar>(
    m: &dyn GpuMethod<T>,
    csr: &GpuCsr<T>,
    dev: &Arc<Device>,
    stream: Stream,
    x: u64,
    y: u64,
) -> Result<f64> {
    let mut t = Timer::new(dev)?;
    let mut run = || m.spmv(csr, stream, T::ONE, x, T::ZERO, y);
    let one = t.time(stream, &mut run)?;
    t.calibrate(one);
    t.time(stream, run)
}

/// Writes the caller's values (in CSR order) into a format's value array through its value map:
/// `dst[slot[k]] = src[k]`. Slots not named by the map (padding) are left as they are — zero.
/// This is the host twin of the generic GPU scatter kernel every method's update uses.
pub fn scatter_values<T: Scalar>(src: &[T], slot: &[u32], dst: &mut [T]) {
    assert_eq!(src.len(), slot.len(), "one slot per CSR non-zero");
    for (&v, &s) in src.iter().zip(slot) {
        dst[s as usize] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_through_a_value_map_leaves_padding_zero() {
        let mut dst = [0.0f64; 5];
        scatter_values(&[1.0, 2.0, 3.0], &[4, 0, 2], &mut dst);
        assert_eq!(dst, [2.0, 0.0, 3.0, 0.0, 1.0]);
    }
}
