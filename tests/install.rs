//! `scripts/install PREFIX` puts the library, the header, the Fortran module and `tessera.pc`
//! under PREFIX, and a program builds against that prefix with nothing but pkg-config.
//!
//! The script runs with `--no-build --lib-dir DIR`, DIR being the folder of the libtessera that
//! cargo built for this test run (next to this test executable), so no release build is needed.
//! Needs `pkg-config` (the test fails with a clear message without it); the Fortran case needs
//! gfortran (or `$FC`) unless `TESSERA_SKIP_FORTRAN=1`.

mod common;
use common::{cdylib_name, fortran_compiler_or_skip, lib_dir, root, run_checked, strict_cc};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh prefix with tessera installed by `scripts/install --no-build --lib-dir ...`.
struct Installed {
    _dir: tempfile::TempDir,
    prefix: PathBuf,
}

fn install() -> Installed {
    let dir = tempfile::Builder::new()
        .prefix("tessera-install-")
        .tempdir()
        .expect("install: cannot create a temporary folder");
    let prefix = dir.path().join("prefix");
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("scripts/install"))
        .arg("--no-build")
        .arg("--lib-dir")
        .arg(lib_dir())
        .arg(&prefix);
    run_checked(cmd, "scripts/install");
    Installed { _dir: dir, prefix }
}

/// `pkg-config ARGS tessera` against the installed prefix only, split into arguments.
fn pkg_config(prefix: &Path, args: &[&str]) -> Vec<String> {
    let mut cmd = Command::new("pkg-config");
    cmd.args(args)
        .arg("tessera")
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .env_remove("PKG_CONFIG_LIBDIR")
        .env_remove("PKG_CONFIG_SYSROOT_DIR");
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) => {
            panic!("install: cannot run pkg-config ({e}); install it (apt-get install pkg-config)")
        }
    };
    assert!(
        out.status.success(),
        "pkg-config {args:?} tessera failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// The C compiler from the `cc` crate, with strict C99 flags.
fn c_compiler(out_dir: &Path) -> Command {
    strict_cc(out_dir, false).get_compiler().to_command()
}

/// Runs an installed-prefix program; asserts exit 0 and its "ok:" line.
fn run_program(exe: &Path, ld_library_path: Option<&Path>) -> String {
    let mut cmd = Command::new(exe);
    cmd.env_remove("LD_LIBRARY_PATH");
    if let Some(p) = ld_library_path {
        cmd.env("LD_LIBRARY_PATH", p);
    }
    let out = run_checked(cmd, &format!("running {}", exe.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        stdout.lines().any(|l| l.starts_with("ok: ")),
        "{} exited 0 without its \"ok:\" line:\n{stdout}",
        exe.display()
    );
    stdout
}

/// Whether `text` still holds a template field like `@PREFIX@`.
fn has_template_field(text: &str) -> bool {
    text.split('@')
        .skip(1)
        .zip(text.split('@').skip(2))
        .any(|(field, _)| {
            !field.is_empty() && field.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        })
}

#[test]
fn install_puts_library_header_fortran_module_and_pkg_config_file_under_the_prefix() {
    let inst = install();
    let p = &inst.prefix;
    for f in [
        format!("lib/{}", cdylib_name()),
        "lib/libtessera.a".to_string(),
        "lib/pkgconfig/tessera.pc".to_string(),
        "include/tessera.h".to_string(),
        "include/tessera.f90".to_string(),
    ] {
        assert!(
            p.join(&f).is_file(),
            "{f} was not installed under {}",
            p.display()
        );
    }
    // The cuSPARSE drop-in, when this build made it (the workspace build does).
    if lib_dir().join("libtessera_cusparse.so").is_file() {
        assert!(p.join("lib/libtessera_cusparse.so").is_file());
    }
    // The installed header and module are the repository's.
    for f in ["include/tessera.h", "include/tessera.f90"] {
        assert_eq!(
            std::fs::read(p.join(f)).unwrap(),
            std::fs::read(root().join(f)).unwrap(),
            "installed {f} differs from the repository's"
        );
    }
    let pc = std::fs::read_to_string(p.join("lib/pkgconfig/tessera.pc")).unwrap();
    assert!(
        !has_template_field(&pc),
        "tessera.pc has unfilled @FIELDS@:\n{pc}"
    );
    assert!(
        pc.lines().any(|l| l == format!("prefix={}", p.display())),
        "tessera.pc does not set prefix={}:\n{pc}",
        p.display()
    );
    assert_eq!(
        pkg_config(p, &["--modversion"]),
        vec![env!("CARGO_PKG_VERSION").to_string()],
        "tessera.pc's Version is not Cargo.toml's"
    );
    let libs = pkg_config(p, &["--libs"]);
    assert!(
        libs.contains(&"-ltessera".to_string()),
        "pkg-config --libs: {libs:?}"
    );
}

#[test]
fn c_program_builds_against_the_installed_prefix_with_pkg_config() {
    let inst = install();
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("pkgconfig");
    let mut cmd = c_compiler(dir.path());
    cmd.arg(root().join("c-tests/pkgconfig.c"))
        .args(pkg_config(&inst.prefix, &["--cflags", "--libs"]))
        .arg("-o")
        .arg(&exe);
    run_checked(cmd, "compiling c-tests/pkgconfig.c with pkg-config's flags");
    run_program(&exe, Some(&inst.prefix.join("lib")));
}

#[test]
fn c_program_links_the_installed_static_library_with_the_pkg_config_private_libs() {
    let inst = install();
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("pkgconfig_static");
    let archive = inst.prefix.join("lib/libtessera.a");
    // `pkg-config --static --libs` with -ltessera replaced by the archive itself, so the linker
    // cannot fall back to the shared library next to it.
    let libs: Vec<OsString> = pkg_config(&inst.prefix, &["--static", "--libs"])
        .into_iter()
        .map(|a| {
            if a == "-ltessera" {
                archive.clone().into_os_string()
            } else {
                a.into()
            }
        })
        .collect();
    assert!(
        libs.contains(&archive.clone().into_os_string()),
        "pkg-config --static --libs has no -ltessera: {libs:?}"
    );
    let mut cmd = c_compiler(dir.path());
    cmd.arg(root().join("c-tests/pkgconfig.c"))
        .args(pkg_config(&inst.prefix, &["--cflags"]))
        .arg("-o")
        .arg(&exe)
        .args(libs);
    run_checked(
        cmd,
        "linking c-tests/pkgconfig.c with libtessera.a and Libs.private",
    );
    // No LD_LIBRARY_PATH: the program must not need libtessera.so.
    run_program(&exe, None);
}

#[test]
fn fortran_program_builds_against_the_installed_module_with_pkg_config() {
    let Some(fc) = fortran_compiler_or_skip("the installed-module test") else {
        return;
    };
    let inst = install();
    assert!(
        inst.prefix.join("include/tessera.mod").is_file(),
        "scripts/install did not install include/tessera.mod although {fc:?} exists"
    );
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("api_fortran");
    let mut cmd = Command::new(&fc);
    cmd.current_dir(dir.path())
        .arg(root().join("c-tests/api_fortran.f90"))
        .args(pkg_config(&inst.prefix, &["--cflags", "--libs"]))
        .arg("-o")
        .arg(&exe);
    run_checked(
        cmd,
        "compiling c-tests/api_fortran.f90 against the installed tessera.mod",
    );
    run_program(&exe, Some(&inst.prefix.join("lib")));
}
