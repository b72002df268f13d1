//! Helpers shared by the tests: native programs against the real library (`c_programs.rs`,
//! `install.rs`), products checked against the f64 product (`products`), GPU handles and
//! streams (`gpu`), the background-build tests' helpers (`background`).
#![allow(dead_code)] // each test crate uses its own subset

pub mod background;
pub mod gpu;
pub mod products;

use std::path::PathBuf;
use std::process::{Command, Output};

/// `TESSERA_TEST_SMALL=1` (the compute-sanitizer runs of `gpu-run sanitize-all`): the GPU tests
/// skip or shrink their largest matrices and slowest searches (EXHAUSTIVE tuning, the
/// all-memory test, the large shared matrices) so that the whole suite fits under the four
/// sanitizers in minutes. Each skip prints one line.
pub fn test_small() -> bool {
    std::env::var("TESSERA_TEST_SMALL").is_ok_and(|v| v.trim() == "1")
}

/// `TESSERA_UNDER_SANITIZER=1` (set by `gpu-run sanitize-all`): the process runs under
/// compute-sanitizer, whose tools allocate device memory of their own while the tests run
/// (initcheck: 32 MiB during a soak on an H100), so the tests' device-memory level checks are
/// not meaningful there and are skipped with one line; everything else is checked.
pub fn under_sanitizer() -> bool {
    std::env::var("TESSERA_UNDER_SANITIZER").is_ok_and(|v| v.trim() == "1")
}

/// Repository root (where Cargo.toml is).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The target triple of this build, for `cc::Build` (there is no `TARGET` env outside build.rs).
pub fn target_triple() -> String {
    let arch = std::env::consts::ARCH;
    match std::env::consts::OS {
        "linux" if cfg!(target_env = "musl") => format!("{arch}-unknown-linux-musl"),
        "linux" => format!("{arch}-unknown-linux-gnu"),
        "macos" => format!("{arch}-apple-darwin"),
        "freebsd" => format!("{arch}-unknown-freebsd"),
        os => panic!("no target triple known for OS {os:?}; add one in tests/common/mod.rs"),
    }
}

/// File name of the tessera cdylib on this OS.
pub fn cdylib_name() -> String {
    format!(
        "{}tessera{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// The folder holding the libtessera cdylib and staticlib that cargo built for this test run.
/// The test executable is `target/<profile>/deps/NAME-HASH`; `cargo test` leaves the library's
/// outputs (rlib, cdylib, staticlib) in that same `deps/` folder, and `cargo build` also copies
/// them up to `target/<profile>/`. The `deps/` copy is preferred: it is the one this run built.
pub fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe
        .parent()
        .expect("the test executable has no parent folder");
    for dir in [Some(deps), deps.parent()].into_iter().flatten() {
        if dir.join(cdylib_name()).is_file() && dir.join("libtessera.a").is_file() {
            return dir.to_path_buf();
        }
    }
    panic!(
        "the tessera cdylib {} and libtessera.a are neither in {} nor in its parent folder; \
         Cargo.toml must keep crate-types cdylib and staticlib (`cargo build --lib` builds them)",
        cdylib_name(),
        deps.display()
    );
}

/// Runs a command, panicking with its output when it cannot start or fails.
pub fn run_checked(mut cmd: Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: could not start {cmd:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\ncommand: {cmd:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// The Fortran compiler (`$FC`, else `gfortran`). Without one the calling test fails with a
/// clear message, unless `TESSERA_SKIP_FORTRAN=1`: then it prints one skip line and gets None.
pub fn fortran_compiler_or_skip(what: &str) -> Option<std::ffi::OsString> {
    let fc = std::env::var_os("FC")
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "gfortran".into());
    let ok = Command::new(&fc)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if ok {
        return Some(fc);
    }
    if std::env::var("TESSERA_SKIP_FORTRAN").as_deref() == Ok("1") {
        println!("skipped: no Fortran compiler (gfortran or $FC) and TESSERA_SKIP_FORTRAN=1");
        return None;
    }
    panic!(
        "{what} needs gfortran (or $FC): install it (apt-get install gfortran), or set \
         TESSERA_SKIP_FORTRAN=1 to skip it"
    );
}

/// A `cc::Build` for this machine without any build-script environment, with the strict
/// warnings the project promises (`-Wall -Wextra -Wpedantic -Werror`) and C99, or C++17 when
/// `cpp`.
pub fn strict_cc(out_dir: &std::path::Path, cpp: bool) -> cc::Build {
    let triple = target_triple();
    let mut b = cc::Build::new();
    b.target(&triple)
        .host(&triple)
        .opt_level(0)
        .debug(false)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .out_dir(out_dir)
        .cpp(cpp)
        .std(if cpp { "c++17" } else { "c99" })
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .flag("-Wpedantic");
    b
}
