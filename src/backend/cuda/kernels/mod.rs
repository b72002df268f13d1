//! Kernel files and their `-D` specialisations. Each method declares its own `.cu` file as a
//! [`KernelFile`] (in its `params.rs`, with the values each define may take); this module
//! declares the generic files over CSR ([`TRANSPOSE`], [`UTIL`]). `common.cuh` is prepended as
//! text to each file (NVRTC has no include path here). [`all_specs`] lists every
//! specialisation of a list of files; the CI compile check compiles each of them for sm_80 and
//! sm_90, and [`KernelSpec::new`] refuses a define value outside its file's list, so the two
//! cannot drift apart.
#![forbid(unsafe_code)]

use crate::error::{Error, Result};

mod file;
mod generic;

pub use file::{full_source, nvrtc_options, text_hash, KernelFile};
pub use generic::{COMMON, TRANSPOSE, TRANSPOSE_COOP_VALUES, UTIL};

/// One specialisation: a file and a value for each of its defines.
#[derive(Debug, Clone)]
pub struct KernelSpec {
    file: &'static KernelFile,
    values: Vec<i64>,
}

impl KernelSpec {
    /// `file` with `values` for its defines, in the order of `file.defines`.
    pub fn new(file: &'static KernelFile, values: &[i64]) -> Result<KernelSpec> {
        if values.len() != file.defines.len() {
            return Err(Error::Internal(format!(
                "{} takes {} defines, {} given",
                file.name,
                file.defines.len(),
                values.len()
            )));
        }
        for ((name, allowed), v) in file.defines.iter().zip(values) {
            if !allowed.contains(v) {
                return Err(Error::Internal(format!(
                    "{}: -D{name}={v} is not among the compiled-and-checked values {allowed:?}",
                    file.name
                )));
            }
        }
        Ok(KernelSpec {
            file,
            values: values.to_vec(),
        })
    }

    /// The file name, for messages.
    pub fn file_name(&self) -> &'static str {
        self.file.name
    }

    /// The full text NVRTC compiles: `common.cuh`, then the file (with `#line` so that errors
    /// name the right file and line).
    pub fn source(&self) -> String {
        full_source(
            &overridden("common.cuh", COMMON),
            self.file.name,
            &overridden(self.file.name, self.file.source),
        )
    }

    /// NVRTC options for CUBIN on `sm_{arch}`.
    pub fn options(&self, arch: i32) -> Vec<String> {
        let names = self.file.defines.iter().map(|(n, _)| *n);
        nvrtc_options(arch, true, names.zip(self.values.iter().copied()))
    }

    /// The define values, in the order of the file's defines.
    pub fn values(&self) -> &[i64] {
        &self.values
    }

    /// A short label, e.g. `csr_vector.cu -DCOOP=4`.
    pub fn label(&self) -> String {
        let mut s = self.file.name.to_string();
        for ((name, _), v) in self.file.defines.iter().zip(&self.values) {
            s.push_str(&format!(" -D{name}={v}"));
        }
        s
    }
}

/// The text of kernel file `name`: the embedded copy, or `$TESSERA_KERNELS_DIR/<name>` when
/// that variable is set and the file exists there. This is for kernel experiments on a GPU
/// machine without a Rust toolchain (variants of a .cu file timed by `tessera bench`); the
/// module cache key covers the text, so variants and the embedded kernels never mix.
fn overridden(name: &str, embedded: &'static str) -> std::borrow::Cow<'static, str> {
    std::env::var_os("TESSERA_KERNELS_DIR")
        .map(|d| std::path::PathBuf::from(d).join(name))
        .and_then(|p| std::fs::read_to_string(p).ok())
        .map_or(
            std::borrow::Cow::Borrowed(embedded),
            std::borrow::Cow::Owned,
        )
}

/// What `TESSERA_KERNELS_DIR` changes, for a tool's header: `None` when the variable is not set;
/// else which kernel files are read from it, or that none is (the embedded kernels run). A
/// directory holding none of the files (a wrong path) is otherwise silent.
pub fn override_summary(files: &[&KernelFile]) -> Option<String> {
    std::env::var_os("TESSERA_KERNELS_DIR")
        .map(|d| override_summary_for(files, std::path::Path::new(&d)))
}

fn override_summary_for(files: &[&KernelFile], dir: &std::path::Path) -> String {
    let names: Vec<&str> = std::iter::once("common.cuh")
        .chain(files.iter().map(|f| f.name))
        .filter(|n| dir.join(n).is_file())
        .collect();
    if names.is_empty() {
        format!(
            "kernels: embedded (TESSERA_KERNELS_DIR={} holds none of the kernel files)",
            dir.display()
        )
    } else {
        format!(
            "kernels: {} from TESSERA_KERNELS_DIR={}, the others embedded",
            names.join(" "),
            dir.display()
        )
    }
}

/// Every specialisation of `files`: the cartesian product of each file's allowed define values.
pub fn all_specs(files: &[&'static KernelFile]) -> Vec<KernelSpec> {
    let mut out = Vec::new();
    for &file in files {
        for values in file.value_combinations() {
            out.push(KernelSpec { file, values });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_override_summary_names_the_files_a_kernels_dir_replaces_or_says_none() {
        let d = tempfile::tempdir().unwrap();
        let files: &[&KernelFile] = &[&TRANSPOSE, &UTIL];
        let none = override_summary_for(files, d.path());
        assert!(none.starts_with("kernels: embedded"), "{none}");
        assert!(none.contains("holds none of the kernel files"), "{none}");
        std::fs::write(d.path().join("util.cu"), "// a variant").unwrap();
        std::fs::write(d.path().join("unrelated.txt"), "").unwrap();
        let one = override_summary_for(files, d.path());
        assert!(
            one.starts_with("kernels: util.cu from TESSERA_KERNELS_DIR="),
            "{one}"
        );
        assert!(!one.contains("unrelated"), "{one}");
    }

    #[test]
    fn specs_cover_every_define_value_and_refuse_others() {
        let all = all_specs(&[&TRANSPOSE, &UTIL]);
        assert_eq!(all.len(), 6 + 1);
        assert!(KernelSpec::new(&TRANSPOSE, &[4]).is_ok());
        assert!(KernelSpec::new(&TRANSPOSE, &[3]).is_err());
        assert!(KernelSpec::new(&TRANSPOSE, &[64]).is_err());
        assert!(KernelSpec::new(&TRANSPOSE, &[]).is_err());
        assert!(KernelSpec::new(&UTIL, &[1]).is_err());
        let s = KernelSpec::new(&TRANSPOSE, &[8]).unwrap();
        assert!(s.options(90).contains(&"-DCOOP=8".to_string()));
        assert!(s.source().starts_with("#line 1 \"common.cuh\""));
        assert!(s.source().contains("#line 1 \"transpose.cu\""));
    }
}
