//! The kernel sources, embedded in the library, and the `-D` specialisations the code can ask
//! for. `common.cuh` is prepended as text to each file (ARCHITECTURE §2). [`all_specs`] lists
//! every specialisation any code path can request; the CI compile check compiles each of them
//! for sm_80 and sm_90, and [`KernelSpec::new`] refuses a define value outside that list, so the
//! two cannot drift apart.
#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use crate::methods::bccoo::params::{BH_VALUES, BW_VALUES};
use crate::methods::csr_vector::params::COOP_VALUES;
use crate::methods::hola::params as hola;

/// Text prepended to every kernel file.
pub const COMMON: &str = include_str!("../../../kernels/common.cuh");

/// One `.cu` file and the values each of its defines may take.
#[derive(Debug)]
pub struct KernelFile {
    /// File name under `kernels/`.
    pub name: &'static str,
    /// Its text.
    pub source: &'static str,
    /// Each define and its allowed values (the first is the file's own default).
    pub defines: &'static [(&'static str, &'static [i64])],
}

/// CSR_VECTOR's SpMV (Reguly & Giles).
pub const CSR_VECTOR: KernelFile = KernelFile {
    name: "csr_vector.cu",
    source: include_str!("../../../kernels/csr_vector.cu"),
    defines: &[("COOP", COOP_VALUES)],
};

/// HOLA's row starts, prescale, SpMV and SpMVT (Steinberger et al.).
pub const HOLA: KernelFile = KernelFile {
    name: "hola.cu",
    source: include_str!("../../../kernels/hola.cu"),
    defines: &[
        ("THREADS", hola::THREADS_VALUES),
        ("NPT", hola::NPT_VALUES),
        ("SORT", hola::SORT_VALUES),
    ],
};

/// BCCOO's SpMV and BCCOO+'s combine kernel (yaSpMV): block width and height are
/// compile-time (the per-thread register arrays); the workgroup size and the rest of Table 1
/// are launch arguments (`methods::bccoo::params`).
pub const BCCOO: KernelFile = KernelFile {
    name: "bccoo.cu",
    source: include_str!("../../../kernels/bccoo.cu"),
    defines: &[("BCCOO_BW", BW_VALUES), ("BCCOO_BH", BH_VALUES)],
};

/// The atomic transpose product over CSR (every method's TRANSPOSE path).
pub const TRANSPOSE: KernelFile = KernelFile {
    name: "transpose.cu",
    source: include_str!("../../../kernels/transpose.cu"),
    defines: &[("COOP", COOP_VALUES)],
};

/// y scaling and the value-map scatter.
pub const UTIL: KernelFile = KernelFile {
    name: "util.cu",
    source: include_str!("../../../kernels/util.cu"),
    defines: &[],
};

/// BRC's SpMV, its ELL part (hybrid) and the split/empty-row kernels (Ashari et al.). No
/// defines: B1, rep, the ELL width and the block size are launch arguments.
pub const BRC: KernelFile = KernelFile {
    name: "brc.cu",
    source: include_str!("../../../kernels/brc.cu"),
    defines: &[],
};

/// TileSpMV's tile-row kernel and the pre-scale of split tile rows (Niu et al.). No defines:
/// te, th, tbalance and the deferral shape the host-built format; the rest are launch
/// arguments.
pub const TILE: KernelFile = KernelFile {
    name: "tile.cu",
    source: include_str!("../../../kernels/tile.cu"),
    defines: &[],
};

/// Every kernel file.
pub const FILES: &[&KernelFile] = &[&CSR_VECTOR, &HOLA, &BCCOO, &BRC, &TILE, &TRANSPOSE, &UTIL];

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
        format!(
            "#line 1 \"common.cuh\"\n{}\n#line 1 \"{}\"\n{}",
            overridden("common.cuh", COMMON),
            self.file.name,
            overridden(self.file.name, self.file.source)
        )
    }

    /// NVRTC options for CUBIN on `sm_{arch}`.
    pub fn options(&self, arch: i32) -> Vec<String> {
        let mut o = vec![
            format!("--gpu-architecture=sm_{arch}"),
            "--std=c++17".to_string(),
            // Line info costs nothing at run time and lets compute-sanitizer name source lines.
            "--generate-line-info".to_string(),
        ];
        for ((name, _), v) in self.file.defines.iter().zip(&self.values) {
            o.push(format!("-D{name}={v}"));
        }
        o
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
pub fn override_summary() -> Option<String> {
    std::env::var_os("TESSERA_KERNELS_DIR").map(|d| override_summary_for(std::path::Path::new(&d)))
}

fn override_summary_for(dir: &std::path::Path) -> String {
    let names: Vec<&str> = std::iter::once("common.cuh")
        .chain(FILES.iter().map(|f| f.name))
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

/// Every specialisation any code path can request: the cartesian product of each file's
/// allowed define values.
pub fn all_specs() -> Vec<KernelSpec> {
    let mut out = Vec::new();
    for file in FILES {
        let mut combos: Vec<Vec<i64>> = vec![vec![]];
        for (_, allowed) in file.defines {
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    allowed.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push(*v);
                        c
                    })
                })
                .collect();
        }
        for values in combos {
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
        let none = override_summary_for(d.path());
        assert!(none.starts_with("kernels: embedded"), "{none}");
        assert!(none.contains("holds none of the kernel files"), "{none}");
        std::fs::write(d.path().join("tile.cu"), "// a variant").unwrap();
        std::fs::write(d.path().join("unrelated.txt"), "").unwrap();
        let one = override_summary_for(d.path());
        assert!(
            one.starts_with("kernels: tile.cu from TESSERA_KERNELS_DIR="),
            "{one}"
        );
        assert!(!one.contains("unrelated"), "{one}");
    }

    #[test]
    fn specs_cover_every_define_value_and_refuse_others() {
        let all = all_specs();
        assert_eq!(all.len(), 6 + 12 + 12 + 1 + 1 + 6 + 1);
        assert!(KernelSpec::new(&BCCOO, &[4, 3]).is_ok());
        assert!(KernelSpec::new(&BCCOO, &[3, 3]).is_err());
        assert!(KernelSpec::new(&CSR_VECTOR, &[64]).is_err());
        assert!(KernelSpec::new(&CSR_VECTOR, &[]).is_err());
        let s = KernelSpec::new(&CSR_VECTOR, &[8]).unwrap();
        assert!(s.options(90).contains(&"-DCOOP=8".to_string()));
        assert!(s.source().starts_with("#line 1 \"common.cuh\""));
        assert!(s.source().contains("TESSERA_INSTANTIATE(CSR_VECTOR_ENTRY)"));
    }

    /// The parameters of every `__global__` entry point of `src`: (name, count).
    fn entry_points(src: &str) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        let mut rest = src;
        while let Some(i) = rest.find("__global__") {
            rest = &rest[i + "__global__".len()..];
            let mut open = rest.find('(').expect("a parameter list");
            // Launch bounds come before the name: skip their parentheses.
            if rest[..open].trim_end().ends_with("__launch_bounds__") {
                let close = open + rest[open..].find(')').expect("launch bounds close");
                open = close + 1 + rest[close + 1..].find('(').expect("a parameter list");
            }
            // The name is the last identifier before the list.
            let head = &rest[..open];
            let name = head
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#'))
                .rfind(|w| !w.is_empty())
                .unwrap_or("?")
                .to_string();
            let (mut depth, mut commas, mut end) = (0i32, 0usize, open);
            for (k, c) in rest[open..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = open + k;
                            break;
                        }
                    }
                    ',' if depth == 1 => commas += 1,
                    _ => {}
                }
            }
            let empty = rest[open + 1..end].trim().is_empty();
            out.push((name, if empty { 0 } else { commas + 1 }));
            rest = &rest[end..];
        }
        out
    }

    /// A launch pushes at most MAX_KERNEL_ARGS arguments (KernelArgs asserts it): every entry
    /// point of every kernel file must fit, or its launch would fail at run time on a GPU only.
    #[test]
    fn every_entry_point_takes_no_more_arguments_than_a_launch_can_pass() {
        let mut seen = 0;
        for file in FILES {
            for (name, n) in entry_points(file.source) {
                assert!(
                    n <= super::super::launching::MAX_KERNEL_ARGS,
                    "{}: {name} takes {n} arguments, a launch passes at most {}",
                    file.name,
                    super::super::launching::MAX_KERNEL_ARGS
                );
                seen += 1;
            }
        }
        assert!(seen >= 10, "found only {seen} entry points");
        let probe = entry_points(
            "extern \"C\" __global__ void __launch_bounds__(512, 2) k_##S(int a, T *b, const void *c) {}",
        );
        assert_eq!(probe, vec![("k_##S".to_string(), 3)]);
    }
}
