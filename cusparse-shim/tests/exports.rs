//! What `libtessera_cusparse.so` exports (the cuSPARSE functions it defines, nothing of
//! tessera's own C API) and its soname (its own, never `libcusparse.so.12`).

use std::path::PathBuf;
use std::process::Command;

/// The shim this test run built: beside the test binary in target/<profile>/deps/ (where
/// `cargo test` leaves the library's outputs), else in target/<profile>/ (`cargo build`).
fn shim() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|d| d.join("libtessera_cusparse.so"))
        .find(|l| l.exists())
        .unwrap_or_else(|| panic!("libtessera_cusparse.so is not built in {}", deps.display()))
}

fn tool(name: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(name).args(args).arg(shim()).output().ok()?;
    assert!(out.status.success(), "{name} failed");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn the_shim_exports_exactly_the_cusparse_functions_it_defines() {
    let Some(nm) = tool("nm", &["-D", "--defined-only"]) else {
        println!("skipped: nm (binutils) is not installed");
        return;
    };
    let mut names: Vec<&str> = nm
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["cusparseSpMV", "cusparseSpMV_preprocess"]);
}

#[test]
fn its_soname_is_its_own() {
    let Some(d) = tool("readelf", &["-d"]) else {
        println!("skipped: readelf (binutils) is not installed");
        return;
    };
    assert!(
        d.contains("Library soname: [libtessera_cusparse.so]"),
        "{d}"
    );
    // It never needs cuSPARSE at load time: it opens the real one itself.
    assert!(!d.contains("libcusparse"), "{d}");
}
