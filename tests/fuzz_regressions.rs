//! Inputs the fuzz targets (fuzz/, scripts/fuzz) found problems with, kept as tests of the
//! normal suite once fixed. Files in tests/fuzz_regressions/ are named `<target>-<what>.bin`.

use std::path::PathBuf;
use std::process::Command;

fn files(prefix: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    v.sort();
    v
}

/// mtx_reader: each file is refused with one error line naming the file, by the reader and by
/// the CLI (exit code 2, no panic).
/// - `mtx_reader-xz-footer-overflow.bin`: an xz stream whose footer's backward size is
///   0xFFFFFFFF; lzma-rs 0.3.0 overflowed a u32 computing the index size and panicked in debug
///   builds (the CLI printed a panic instead of an error). Fixed by building lzma-rs without
///   overflow checks (it then reports the bad index size) and catching any decoder panic.
#[test]
fn matrix_market_inputs_found_by_fuzzing_are_clean_errors() {
    let found = files("mtx_reader-");
    assert!(!found.is_empty());
    for f in found {
        let bytes = std::fs::read(&f).unwrap();
        let e = tessera::io::mtx::from_bytes(&bytes, "regression.mtx")
            .expect_err(&format!("{} should be refused", f.display()));
        let msg = e.to_string();
        assert!(
            msg.contains("regression.mtx") && !msg.contains('\n'),
            "{msg}"
        );
        let o = Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(["--backend", "host", "info"])
            .arg(&f)
            .env("RUST_BACKTRACE", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", f.display());
        assert!(!err.contains("panicked"), "{}: {err}", f.display());
        assert_eq!(
            err.lines().filter(|l| l.starts_with("error: ")).count(),
            1,
            "{err}"
        );
    }
}
