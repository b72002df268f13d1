//! Link arguments of the shim:
//! - its soname is its own, `libtessera_cusparse.so`: CuPy's loader looks for an already-loaded
//!   `libcusparse.so.12` by soname, and a shim answering to that name would be taken for the
//!   real library;
//! - it exports only the cuSPARSE functions it defines (`exports.map`); `--exclude-libs ALL`
//!   keeps the `tessera_*` C API of the tessera library linked into it (an rlib, an archive to
//!   the linker) to itself: rustc's own version script would export it.
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rerun-if-changed=exports.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtessera_cusparse.so");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/exports.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--exclude-libs,ALL");
}
