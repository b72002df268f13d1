//! NVRTC: kernels are compiled at run time to CUBIN for the device's own architecture. The
//! driver JITs PTX only up to the ISA it knows (CUDA 13.0's driver: ISA 9.0), so tessera never
//! hands it PTX: it compiles `sm_XY` machine code. This module needs NVRTC alone (no driver, no GPU), so
//! the CI compile check uses it as it is.

use crate::error::{Error, Result};
use cudarc::nvrtc::{result as nr, sys as ns};
use std::ffi::CString;
use std::sync::OnceLock;

/// Checks that NVRTC loads under one of the names cudarc will try.
pub fn probe() -> Result<()> {
    let mut why = Vec::new();
    for lib in cudarc::get_lib_name_candidates("nvrtc") {
        // SAFETY: loading NVIDIA's NVRTC runs its initialisers, which have no preconditions on
        // our side; the handle is closed at once.
        match unsafe { libloading::Library::new(&lib) } {
            Ok(_) => return Ok(()),
            Err(e) => why.push(e.to_string()),
        }
    }
    Err(Error::NoDevice(format!(
        "NVRTC (libnvrtc.so.13) could not be loaded ({}); install the CUDA toolkit's NVRTC or put its lib folder on LD_LIBRARY_PATH, or set TESSERA_BACKEND=host",
        why.first().map(String::as_str).unwrap_or("not found")
    )))
}

fn nvrtc_error(e: nr::NvrtcError, what: &str) -> Error {
    Error::CompileFailed(format!("{what} failed: {:?}", e.0))
}

/// NVRTC's version as (major, minor).
pub fn version() -> Result<(i32, i32)> {
    static V: OnceLock<std::result::Result<(i32, i32), String>> = OnceLock::new();
    V.get_or_init(|| {
        probe().map_err(|e| e.to_string())?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: valid out-pointers; the library was probed.
        unsafe { ns::nvrtcVersion(&mut major, &mut minor) }
            .result()
            .map_err(|e| format!("nvrtcVersion: {:?}", e.0))?;
        Ok((major, minor))
    })
    .clone()
    .map_err(Error::NoDevice)
}

/// The architectures (e.g. 90 for sm_90) this NVRTC can generate CUBIN for.
pub fn supported_archs() -> Result<Vec<i32>> {
    probe()?;
    let mut n = 0;
    // SAFETY: valid out-pointer.
    unsafe { ns::nvrtcGetNumSupportedArchs(&mut n) }
        .result()
        .map_err(|e| nvrtc_error(e, "nvrtcGetNumSupportedArchs"))?;
    let mut archs = vec![0i32; n.max(0) as usize];
    // SAFETY: archs has room for n entries.
    unsafe { ns::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }
        .result()
        .map_err(|e| nvrtc_error(e, "nvrtcGetSupportedArchs"))?;
    Ok(archs)
}

/// The CUBIN target for a device of compute capability `cc`: its own `sm_XY` when NVRTC knows
/// it, else the newest known `sm_XZ` with Z <= Y (CUBIN runs on later minors of one major),
/// else ARCH_MISMATCH.
pub fn arch_for(cc: (i32, i32)) -> Result<i32> {
    let want = cc.0 * 10 + cc.1;
    let archs = supported_archs()?;
    if archs.contains(&want) {
        return Ok(want);
    }
    archs
        .iter()
        .copied()
        .filter(|a| a / 10 == cc.0 && *a <= want)
        .max()
        .ok_or_else(|| {
            Error::ArchMismatch(format!(
                "NVRTC {:?} cannot generate code for sm_{want} (it knows {archs:?}); use an NVRTC that supports this GPU",
                version().unwrap_or((0, 0))
            ))
        })
}

/// Compiles `source` (named `name` in messages) with `options` and returns the CUBIN image.
/// A compile error is COMPILE_FAILED carrying NVRTC's log; the log of a successful compile
/// (warnings) is dropped: [`compile`] keeps it.
pub fn compile_cubin(source: &str, name: &str, options: &[String]) -> Result<Vec<u8>> {
    compile(source, name, options).map(|c| c.cubin)
}

/// A successful compile: the CUBIN image and NVRTC's log (empty unless it warned).
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The CUBIN (ELF) image.
    pub cubin: Vec<u8>,
    /// NVRTC's log, trimmed: its warnings; empty for a clean compile.
    pub log: String,
}

/// NVRTC's log of `prog`, as text.
fn program_log(prog: ns::nvrtcProgram) -> String {
    // SAFETY: prog is a live program.
    unsafe { nr::get_program_log(prog) }
        .map(|l| {
            let bytes: Vec<u8> = l
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as u8)
                .collect();
            String::from_utf8_lossy(&bytes).trim_end().to_string()
        })
        .unwrap_or_default()
}

/// As [`compile_cubin`], keeping NVRTC's log of a successful compile (the CI compile check
/// fails on any warning in it).
pub fn compile(source: &str, name: &str, options: &[String]) -> Result<Compiled> {
    probe()?;
    if let Some(why) = super::fault::hit(super::fault::Fault::Compile) {
        return Err(Error::CompileFailed(format!(
            "NVRTC could not compile {name} with {} (NVRTC_ERROR_COMPILATION) {why}",
            options.join(" ")
        )));
    }
    let src = CString::new(source)
        .map_err(|_| Error::Internal(format!("kernel source {name} has a NUL byte")))?;
    let cname = CString::new(name)
        .map_err(|_| Error::Internal(format!("kernel name {name:?} has a NUL byte")))?;
    let prog =
        nr::create_program(&src, Some(&cname)).map_err(|e| nvrtc_error(e, "nvrtcCreateProgram"))?;
    struct Prog(ns::nvrtcProgram);
    impl Drop for Prog {
        fn drop(&mut self) {
            // SAFETY: created by create_program, destroyed once.
            let _ = unsafe { nr::destroy_program(self.0) };
        }
    }
    let prog = Prog(prog);
    // SAFETY: prog is a live program; options are plain strings.
    let compiled = unsafe { nr::compile_program(prog.0, options) };
    if let Err(e) = compiled {
        return Err(Error::CompileFailed(format!(
            "NVRTC could not compile {name} with {} ({:?}):\n{}",
            options.join(" "),
            e.0,
            program_log(prog.0)
        )));
    }
    let log = program_log(prog.0);
    let mut size = 0usize;
    // SAFETY: compiled program; valid out-pointer.
    unsafe { ns::nvrtcGetCUBINSize(prog.0, &mut size) }
        .result()
        .map_err(|e| nvrtc_error(e, "nvrtcGetCUBINSize"))?;
    if size == 0 {
        return Err(Error::CompileFailed(format!(
            "NVRTC produced no CUBIN for {name} (options {}); the target must be a real sm_XY architecture",
            options.join(" ")
        )));
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: cubin has room for size bytes.
    unsafe { ns::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast()) }
        .result()
        .map_err(|e| nvrtc_error(e, "nvrtcGetCUBIN"))?;
    Ok(Compiled { cubin, log })
}
