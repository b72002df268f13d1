//! Kernels built into the library at build time (`build.rs`): every specialisation, compiled by
//! NVRTC to CUBIN for the architectures listed in [`archs`] and deflate-compressed. A device
//! loads its kernels from here when one of them runs on it; NVRTC is then needed neither at
//! `tessera_create` nor at the first analysis. A kernel file replaced through
//! `TESSERA_KERNELS_DIR` no longer matches its built-in text hash and is compiled at run time.
#![forbid(unsafe_code)]

use super::kernels::{text_hash, KernelSpec};

/// One built-in kernel image.
#[derive(Debug)]
pub struct Entry {
    /// The kernel file's name.
    pub file: &'static str,
    /// Its define values, in the file's order.
    pub values: &'static [i64],
    /// The architecture (`sm_XY` as XY).
    pub arch: i32,
    /// [`text_hash`] of the full text compiled (`common.cuh` and the file).
    pub source_hash: u64,
    /// The CUBIN, deflate-compressed.
    pub image: &'static [u8],
}

mod generated {
    use super::Entry;
    include!(concat!(env!("OUT_DIR"), "/builtin_kernels.rs"));
}

/// The architectures built in (empty when NVRTC was not found at build time).
pub fn archs() -> &'static [i32] {
    generated::ARCHS
}

/// The NVRTC version the built-in kernels were compiled with ((0, 0): none built in).
pub fn nvrtc_version() -> (i32, i32) {
    generated::NVRTC_VERSION
}

/// The number of kernels built in.
pub fn count() -> usize {
    generated::ENTRIES.len()
}

/// Why no kernels are built in, or `None` when some are.
pub fn none_because() -> Option<&'static str> {
    generated::ARCHS
        .is_empty()
        .then_some(generated::NONE_BECAUSE)
}

/// The built-in architecture that runs on a device of compute capability `cc`: its own, else
/// the newest built-in one of the same major version below it (a CUBIN runs on later minors of
/// its major). `None`: the device needs run-time compilation.
pub fn arch_for(cc: (i32, i32)) -> Option<i32> {
    let want = cc.0 * 10 + cc.1;
    archs()
        .iter()
        .copied()
        .filter(|a| a / 10 == cc.0 && *a <= want)
        .max()
}

/// The CUBIN of `spec` for `arch`, when built in and compiled from the same text as `source`
/// (the text the run-time compiler would compile now).
pub fn image(spec: &KernelSpec, source: &str, arch: i32) -> Option<Vec<u8>> {
    let e = generated::ENTRIES
        .iter()
        .find(|e| e.arch == arch && e.file == spec.file_name() && e.values == spec.values())?;
    if e.source_hash != text_hash(source) {
        return None;
    }
    miniz_oxide::inflate::decompress_to_vec(e.image).ok()
}

/// One line for `tessera --version` and tools: the architectures built in and their NVRTC, or
/// why none are.
pub fn summary() -> String {
    match none_because() {
        Some(why) => format!("kernels: none built in ({why}); compiled at run time with NVRTC"),
        None => {
            let (a, b) = nvrtc_version();
            let list: Vec<String> = archs().iter().map(|a| format!("sm_{a}")).collect();
            format!(
                "kernels: built in for {} (NVRTC {a}.{b}; each runs on later minors of its major); other GPUs compile at run time with NVRTC",
                list.join(" ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_takes_its_own_arch_or_the_newest_below_it_in_its_major() {
        if archs().is_empty() {
            assert_eq!(arch_for((9, 0)), None);
            return;
        }
        for &a in archs() {
            assert_eq!(arch_for((a / 10, a % 10)), Some(a));
        }
        assert_eq!(arch_for((1, 0)), None);
    }
}
