//! [`Handle`]: a backend, a device and a stream — the context every operation runs in.
#![forbid(unsafe_code)]

use crate::backend::cuda::{self, Device};
use crate::error::{Error, Result};
use crate::types::BackendKind;
use std::sync::{Arc, Mutex};

/// How many validated device vectors a handle remembers (see [`Handle::check_device_vector`]).
const VALIDATED_VECTORS: usize = 8;

/// Environment variable that selects the backend of [`Handle::new`] (`cuda` or `host`).
pub const BACKEND_ENV: &str = "TESSERA_BACKEND";
/// Environment variable that, when `1`, makes handles deterministic (see
/// [`Handle::set_deterministic`]).
pub const DETERMINISTIC_ENV: &str = "TESSERA_DETERMINISTIC";

/// A tessera context: where products run and on which stream.
///
/// A handle is used by one thread at a time. Matrices remember the backend and device they were
/// created on and refuse handles of another.
#[derive(Debug)]
pub struct Handle {
    backend: BackendKind,
    device: i32,
    cuda: Option<Arc<Device>>,
    stream: usize,
    /// Device vectors (address, bytes) already found device-accessible, newest last.
    validated: Mutex<Vec<(u64, usize)>>,
    deterministic: bool,
}

impl Handle {
    /// CUDA device 0, unless `TESSERA_BACKEND=host` selects the host backend. Without a usable
    /// GPU this fails with [`Error::NoDevice`] saying what is missing.
    pub fn new() -> Result<Handle> {
        match std::env::var(BACKEND_ENV) {
            Err(_) => Handle::with_backend(BackendKind::Cuda, 0),
            Ok(v) if v.is_empty() => Handle::with_backend(BackendKind::Cuda, 0),
            Ok(v) => match v.parse::<BackendKind>() {
                Ok(kind) => Handle::with_backend(kind, 0),
                Err(_) => Err(Error::InvalidValue(format!(
                    "{BACKEND_ENV}={v:?} is not a backend (use cuda or host)"
                ))),
            },
        }
    }

    /// An explicit backend and device. The host backend has one device, 0.
    pub fn with_backend(backend: BackendKind, device: i32) -> Result<Handle> {
        if device < 0 {
            return Err(Error::InvalidValue(format!(
                "device_ordinal = {device} is negative"
            )));
        }
        if backend == BackendKind::Host && device != 0 {
            return Err(Error::InvalidValue(format!(
                "device_ordinal = {device}, but the host backend has only device 0"
            )));
        }
        let cuda = match backend {
            BackendKind::Cuda => {
                let dev = Device::open(device)?;
                // The deferred checks' slab and kernels, made once per device (a failure to
                // load them is the handle's: no product would run).
                if crate::backend::cuda::deferred_checks() {
                    crate::backend::cuda::import::prepare_deferred_checks(&dev)?;
                }
                // The threads AUTO's background builds run on, started here (a few tens of
                // microseconds beside the device's opening) rather than in a product call;
                // unused, they leave after a few seconds.
                crate::backend::workers::top_up();
                Some(dev)
            }
            BackendKind::Host => None,
        };
        let deterministic = std::env::var(DETERMINISTIC_ENV).is_ok_and(|v| v.trim() == "1");
        Ok(Handle {
            backend,
            device,
            cuda,
            stream: 0,
            validated: Mutex::new(Vec::new()),
            deterministic,
        })
    }

    /// The backend products run on.
    pub fn backend(&self) -> BackendKind {
        self.backend
    }

    /// The device ordinal (0 on the host backend).
    pub fn device(&self) -> i32 {
        self.device
    }

    /// The CUDA device of a CUDA handle.
    pub fn cuda(&self) -> Option<&Arc<Device>> {
        self.cuda.as_ref()
    }

    /// The stream as the CUDA backend takes it.
    pub fn cuda_stream(&self) -> cuda::Stream {
        cuda::Stream(self.stream)
    }

    /// Sets the CUDA stream work is ordered on (`0` is the default stream; a `cudaStream_t` /
    /// `CUstream` of the device's primary context otherwise, checked). The host backend runs
    /// synchronously and only records it.
    pub fn set_stream(&mut self, stream: usize) -> Result<()> {
        if let Some(dev) = &self.cuda {
            cuda::check_stream(dev, stream)?;
        }
        self.stream = stream;
        Ok(())
    }

    /// Checks that `bytes` at device address `ptr` (argument `name`) are device-accessible (see
    /// [`cuda::check_device_accessible`]). The handle remembers the last few vectors it has
    /// validated, so a solver that multiplies into the same x and y again and again pays the
    /// driver query once, not on every product (on a small matrix the queries cost as much as
    /// the product itself). No-op on the host backend.
    pub fn check_device_vector(&self, ptr: u64, bytes: usize, name: &str) -> Result<()> {
        let Some(dev) = &self.cuda else {
            return Ok(());
        };
        let mut seen = self.validated.lock().unwrap_or_else(|p| p.into_inner());
        if bytes == 0 || seen.iter().any(|&(p, b)| p == ptr && b >= bytes) {
            return Ok(());
        }
        cuda::check_device_accessible(dev, ptr, bytes, name)?;
        if seen.len() == VALIDATED_VECTORS {
            seen.remove(0);
        }
        seen.push((ptr, bytes));
        Ok(())
    }

    /// Waits for all work of this handle's stream (no-op on the host backend).
    pub fn synchronize(&self) -> Result<()> {
        match &self.cuda {
            Some(dev) => cuda::synchronize(dev, self.cuda_stream()),
            None => Ok(()),
        }
    }

    /// The stream set with [`Handle::set_stream`].
    pub fn stream(&self) -> usize {
        self.stream
    }

    /// Restricts AUTO to methods whose products are bitwise reproducible run to run.
    pub fn set_deterministic(&mut self, on: bool) {
        self.deterministic = on;
    }

    /// Whether AUTO is restricted to deterministic methods.
    pub fn deterministic(&self) -> bool {
        self.deterministic
    }

    /// The SM count AUTO's rule scales with: the device's (CUDA backend), or the 14 the host
    /// backend's fixed rules assume.
    pub fn sm_count(&self) -> u32 {
        self.cuda()
            .map_or(crate::types::HOST_SM_COUNT, |d| d.sm_count())
    }
}
