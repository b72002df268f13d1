//! The device-to-device copy bandwidth: the peak every "% of peak" in `tessera bench` is
//! measured against.
#![forbid(unsafe_code)]

use crate::backend::cuda::{Device, DeviceBuffer, Stream, Timer};
use crate::error::Result;
use std::sync::Arc;

/// The copy bandwidth in GB/s (bytes read + bytes written per second): `bytes` copied with
/// `cuMemcpyDtoDAsync`, timed by [`Timer::median_ms`] (warm-up, batches of about 1 ms, the
/// median of 7).
pub fn copy_bandwidth_gbs(dev: &Arc<Device>, stream: Stream, bytes: usize) -> Result<f64> {
    let a = DeviceBuffer::alloc(dev, bytes, "the bandwidth probe")?;
    let b = DeviceBuffer::alloc(dev, bytes, "the bandwidth probe")?;
    let ms = Timer::new(dev)?.median_ms(stream, 1, 7, || b.copy_from(&a, stream))?;
    Ok(2.0 * bytes as f64 / (ms * 1e-3) / 1e9)
}
