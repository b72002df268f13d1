//! Reading matrices: Matrix Market files (`.mtx`, `.mtx.xz`) and the deterministic generators
//! (`gen:NAME:ARGS`).
//!
//! - [`mtx`]: the Matrix Market reader and writer (real, integer, pattern; general, symmetric,
//!   skew-symmetric; coordinate and array; xz-compressed or not).
//! - [`gen`]: the benchmark suite's generators and small ones for tests; [`gen::catalogue`] lists
//!   them for `--help`.
//! - [`load`]: one entry point for the CLI, benches and tests: a spec is either `gen:...` or a
//!   file.
//! - [`shared_matrices_dir`]: where the project's real test matrices are.
//!
//! Dependencies, and why: `lzma-rs` decompresses `.xz` in pure Rust (no C toolchain or system
//! liblzma, builds the same everywhere); `rand_chacha` gives the generators a seeded stream whose
//! output is fixed by the ChaCha algorithm, identical on every machine. The Matrix Market parser
//! is hand-written: see [`mtx`] for the crates evaluated and why none fit.
#![forbid(unsafe_code)]

pub mod gen;
pub mod mtx;

use crate::csr::Csr;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Loads a matrix from a spec: `gen:NAME:ARGS` runs a generator ([`gen::generate`]); anything
/// else is a Matrix Market file path ([`mtx::read`]).
///
/// A bare name that is not an existing file (no `/`, e.g. `Andrews`) is also looked up as
/// `NAME.mtx.xz` or `NAME.mtx` in [`shared_matrices_dir`]. Returns a short display name with the
/// matrix: the spec itself for a generator, the file name without `.mtx`/`.mtx.xz` for a file.
pub fn load(spec: &str) -> Result<(String, Csr<f64>)> {
    if spec.trim_start().starts_with("gen:") {
        return Ok((spec.trim().to_string(), gen::generate(spec)?));
    }
    let mut path = PathBuf::from(spec);
    if !path.exists() && !spec.contains(['/', '\\']) {
        if let Some(dir) = shared_matrices_dir() {
            for ext in ["mtx.xz", "mtx"] {
                let candidate = dir.join(format!("{spec}.{ext}"));
                if candidate.is_file() {
                    path = candidate;
                    break;
                }
            }
        }
    }
    if !path.exists() {
        return Err(Error::InvalidValue(format!(
            "'{spec}' is neither a generator spec (gen:NAME:ARGS) nor an existing file{}",
            match shared_matrices_dir() {
                Some(d) => format!(" (nor a matrix name in {})", d.display()),
                None => String::new(),
            }
        )));
    }
    let a = mtx::read(&path)?;
    Ok((display_name(&path), a))
}

/// The file name without its directory and without `.xz`, then `.mtx`.
fn display_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let name = name.strip_suffix(".xz").unwrap_or(&name);
    let name = name.strip_suffix(".mtx").unwrap_or(name);
    name.to_string()
}

/// The folder of the project's real matrices: `$TESSERA_MATRICES` if set (and not empty), else
/// the first existing of `<crate root>/../shared/matrices` and `./shared/matrices`; `None` when
/// neither exists.
pub fn shared_matrices_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TESSERA_MATRICES").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    [
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/matrices"),
        PathBuf::from("shared/matrices"),
    ]
    .into_iter()
    .find(|d| d.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_drop_the_folder_and_the_matrix_market_suffixes() {
        assert_eq!(display_name(Path::new("/a/b/Andrews.mtx.xz")), "Andrews");
        assert_eq!(display_name(Path::new("x.mtx")), "x");
        assert_eq!(display_name(Path::new("dir/y.txt")), "y.txt");
    }
}
