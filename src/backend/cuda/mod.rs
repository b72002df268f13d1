//! The CUDA backend. CUDA is loaded, not linked: before any CUDA call we check that the driver
//! (`libcuda`) and NVRTC (`libnvrtc`) can be loaded, and answer NO_DEVICE naming what is missing.
//! The kernels themselves arrive with the CUDA-backend issue; until then a machine with a working
//! driver still gets NO_DEVICE, with a sentence saying so.

use crate::error::{Error, Result};

/// Library names tried for the driver API, in order.
pub const DRIVER_LIBS: &[&str] = &["libcuda.so.1", "libcuda.so"];
/// Library names tried for NVRTC, in order (CUDA 13 first).
pub const NVRTC_LIBS: &[&str] = &["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];

fn try_load(names: &[&str]) -> std::result::Result<(), String> {
    let mut why = Vec::new();
    for name in names {
        // SAFETY: loading a shared library runs its initialisers; libcuda and libnvrtc are
        // NVIDIA's own libraries whose initialisers have no preconditions on our side. The
        // library is dropped (closed) again at once; nothing from it is called here.
        match unsafe { libloading::Library::new(*name) } {
            Ok(_) => return Ok(()),
            Err(e) => why.push(format!("{name}: {e}")),
        }
    }
    Err(why.join("; "))
}

/// Checks whether the CUDA backend can be used on `device_ordinal`.
pub fn probe(device_ordinal: i32) -> Result<()> {
    if let Err(why) = try_load(DRIVER_LIBS) {
        return Err(Error::NoDevice(format!(
            "the CUDA driver library could not be loaded ({why}); install the NVIDIA driver, or set TESSERA_BACKEND=host for the host backend"
        )));
    }
    if let Err(why) = try_load(NVRTC_LIBS) {
        return Err(Error::NoDevice(format!(
            "the CUDA driver is present but NVRTC could not be loaded ({why}); install the CUDA toolkit's NVRTC, or set TESSERA_BACKEND=host"
        )));
    }
    Err(Error::NoDevice(format!(
        "CUDA driver and NVRTC were found, but tessera {} has no CUDA kernels yet (device {device_ordinal} not opened); set TESSERA_BACKEND=host for the host backend",
        env!("CARGO_PKG_VERSION")
    )))
}
