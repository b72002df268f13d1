//! The PETSc plugin (`plugins/petsc/`): `plugins/petsc/build.sh` builds `libtessera_petsc.so`
//! against the system PETSc (Debian's 3.18, compiled with PETSc's MPI wrapper, warnings as
//! errors) and the libtessera.so cargo built for this test run, and builds the PETSc test
//! program `plugins/petsc/tests/tessera_petsc_test.c`, which links PETSc only and gets the
//! tessera matrix types through `-dll_append`. The program compares every product and every
//! KSP solve of a tessera matrix with PETSc's own aij (same iteration counts, solutions equal to
//! 1e-10 relative) and checks the plugin's counters for the value-update and pattern-change
//! paths; these tests run it on the host backend (`TESSERA_BACKEND=host`), on one process and
//! with `mpiexec -n 2`.
//!
//! Needs PETSc (pkg-config module PETSc), its mpicc and mpiexec, and xz: `plugins/petsc/ci-deps`
//! installs them on Debian. Without them the tests fail with a clear message, unless
//! `TESSERA_SKIP_PETSC=1`: then they print one skip line and pass.

mod common;
use common::{cdylib_name, lib_dir, root, run_checked};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The plugin and the test program, built into a temporary folder.
struct Built {
    _dir: tempfile::TempDir,
    plugin: PathBuf,
    program: PathBuf,
    staging: PathBuf,
}

/// True when `cmd` starts and exits 0.
fn runs(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Builds everything, or returns None (with a skip line) when PETSc is missing and
/// `TESSERA_SKIP_PETSC=1`; panics with what to install otherwise.
fn build_or_skip() -> Option<Built> {
    let mut missing = Vec::new();
    if !runs("pkg-config", &["--exists", "PETSc"]) {
        missing.push("PETSc (pkg-config module PETSc)");
    }
    if !runs("mpiexec", &["--version"]) {
        missing.push("mpiexec");
    }
    if !runs("xz", &["--version"]) {
        missing.push("xz");
    }
    if !missing.is_empty() {
        if std::env::var("TESSERA_SKIP_PETSC").as_deref() == Ok("1") {
            println!(
                "skipped: no {} and TESSERA_SKIP_PETSC=1",
                missing.join(", no ")
            );
            return None;
        }
        panic!(
            "the PETSc plugin tests need {}: run plugins/petsc/ci-deps (Debian: installs \
             libpetsc-real-dev, openmpi-bin, pkg-config, xz-utils), or set TESSERA_SKIP_PETSC=1 \
             to skip them",
            missing.join(", ")
        );
    }
    let dir = tempfile::Builder::new()
        .prefix("tessera-petsc-")
        .tempdir()
        .expect("petsc: cannot create a temporary folder");
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("plugins/petsc/build.sh"))
        .arg("--tessera-lib")
        .arg(lib_dir())
        .arg("--out")
        .arg(dir.path());
    run_checked(cmd, "plugins/petsc/build.sh");
    let plugin = dir.path().join("libtessera_petsc.so");
    let program = dir.path().join("tessera_petsc_test");
    let staging = dir.path().join("cuda_staging");
    assert!(
        plugin.is_file() && program.is_file() && staging.is_file(),
        "build.sh did not make the plugin, tessera_petsc_test and cuda_staging"
    );
    Some(Built {
        _dir: dir,
        plugin,
        program,
        staging,
    })
}

/// Splits a command line on whitespace (the program's options never contain spaces).
fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// The test program on `np` processes (directly for 1, else `mpiexec -n np`) with the plugin
/// loaded by `-dll_append`, then `args`; `TESSERA_BACKEND=host` unless `host` is false.
fn command(b: &Built, np: usize, args: &[String], host: bool) -> Command {
    let mut cmd = if np == 1 {
        Command::new(&b.program)
    } else {
        let mut c = Command::new("mpiexec");
        c.arg("-n").arg(np.to_string()).arg(&b.program);
        c
    };
    cmd.arg("-dll_append").arg(&b.plugin).args(args);
    // Open MPI in CI containers: root is allowed, more ranks than cores, no CMA (ptrace) copies.
    // MPICH ignores these.
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .env_remove("PETSC_OPTIONS");
    if host {
        cmd.env("TESSERA_BACKEND", "host");
    } else {
        cmd.env_remove("TESSERA_BACKEND");
    }
    cmd
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs the program on the host backend and asserts exit 0 and its "ok: N checks" line;
/// returns stdout and stderr.
fn run_ok(b: &Built, np: usize, args: &[String]) -> String {
    let what = format!("tessera_petsc_test on {np} process(es) {}", args.join(" "));
    let out = run_checked(command(b, np, args, true), &what);
    let all = text(&out);
    assert!(
        all.lines().any(|l| l.starts_with("ok: ")),
        "{what} exited 0 without its \"ok: N checks\" line:\n{all}"
    );
    println!("== {what}\n{all}");
    all
}

/// Runs the program on one process expecting a PETSc error whose text contains `expect`.
fn run_err(b: &Built, args: &[String], host: bool, expect: &str) {
    let out = command(b, 1, args, host)
        .output()
        .expect("cannot start tessera_petsc_test");
    let all = text(&out);
    assert!(
        !out.status.success(),
        "{args:?} should have failed, but exited 0:\n{all}"
    );
    assert!(
        all.contains("PETSC ERROR") && all.contains(expect),
        "{args:?} failed, but not with a PETSc error saying {expect:?}:\n{all}"
    );
    println!("== {} fails as expected: {expect}", args.join(" "));
}

/// `-mtx <bcsstk16.mtx.xz of the shared matrices>`, or None with a skip line.
fn bcsstk16() -> Option<Vec<String>> {
    let Some(dir) = tessera::io::shared_matrices_dir() else {
        println!("skipped bcsstk16: ../shared/matrices not found (set TESSERA_MATRICES)");
        return None;
    };
    let path = dir.join("bcsstk16.mtx.xz");
    assert!(path.is_file(), "{} is missing", path.display());
    Some(vec!["-mtx".into(), path.to_string_lossy().into_owned()])
}

fn no_gpu() -> bool {
    !Path::new("/dev/nvidia0").exists() && !Path::new("/dev/nvidiactl").exists()
}

/// The NEEDED entries of an ELF file (`readelf -d`).
fn needed(file: &Path) -> Vec<String> {
    let mut cmd = Command::new("readelf");
    cmd.arg("-d").arg(file);
    let out = run_checked(cmd, "readelf -d (binutils)");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next().map(str::to_string))
        .collect()
}

#[test]
fn seqaijtessera_matches_seqaij_in_cg_gmres_value_updates_pattern_changes_and_factorizations() {
    let Some(b) = build_or_skip() else { return };

    // The program knows PETSc only; the plugin brings tessera.
    let program_needs = needed(&b.program);
    assert!(
        !program_needs.iter().any(|n| n.contains("tessera")),
        "the test program must not link tessera, but needs {program_needs:?}"
    );
    let plugin_needs = needed(&b.plugin);
    assert!(
        plugin_needs.contains(&cdylib_name()),
        "the plugin must link {}, but needs {plugin_needs:?}",
        cdylib_name()
    );
    let mut nm = Command::new("nm");
    nm.arg("-D").arg("--defined-only").arg(&b.plugin);
    let symbols = String::from_utf8_lossy(&run_checked(nm, "nm -D").stdout).into_owned();
    assert!(
        symbols.contains(" PetscDLLibraryRegister_tessera_petsc"),
        "the plugin does not export PetscDLLibraryRegister_tessera_petsc:\n{symbols}"
    );

    // CG on a 2D Laplacian; value updates, MatScale, a pattern change; duplicate and convert.
    let out = run_ok(
        &b,
        1,
        &words(
            "-mat_type seqaijtessera -expect_type seqaijtessera -problem laplace2d -n 64 \
             -ksp_type cg -pc_type jacobi -check_updates -check_convert",
        ),
    );
    assert!(out.contains("solve: cg/jacobi"), "{out}");
    // CG on bcsstk16, preconditioned by SeqAIJ's ICC(0) of the tessera matrix.
    if let Some(mtx) = bcsstk16() {
        let mut args = words(
            "-mat_type seqaijtessera -expect_type seqaijtessera -problem mtx \
             -ksp_type cg -pc_type icc -ksp_rtol 1e-10 -check_updates",
        );
        args.extend(mtx);
        let out = run_ok(&b, 1, &args);
        assert!(out.contains("solve: cg/icc"), "{out}");
    }
    // GMRES on a non-symmetric convection-diffusion matrix; type by the root name aijtessera.
    let out = run_ok(
        &b,
        1,
        &words(
            "-mat_type aijtessera -expect_type seqaijtessera -problem convdiff2d -n 64 \
             -ksp_type gmres -pc_type none -check_updates",
        ),
    );
    assert!(out.contains("solve: gmres/none"), "{out}");
    // ILU-preconditioned GMRES (SeqAIJ's ILU(0) of the tessera matrix).
    let out = run_ok(
        &b,
        1,
        &words(
            "-mat_type seqaijtessera -expect_type seqaijtessera -problem convdiff2d -n 64 \
             -ksp_type gmres -pc_type ilu",
        ),
    );
    assert!(out.contains("solve: gmres/ilu"), "{out}");
    // LU: a direct solve through SeqAIJ's factorization, one iteration.
    let out = run_ok(
        &b,
        1,
        &words(
            "-mat_type seqaijtessera -expect_type seqaijtessera -problem convdiff2d -n 32 \
             -ksp_type gmres -pc_type lu",
        ),
    );
    assert!(
        out.contains("solve: gmres/lu iterations aij 1 tessera 1"),
        "{out}"
    );
    // Algebraic multigrid: PETSc's own products (PtAP) of tessera matrices.
    let out = run_ok(
        &b,
        1,
        &words(
            "-mat_type seqaijtessera -expect_type seqaijtessera -problem laplace2d -n 32 \
             -ksp_type cg -pc_type gamg",
        ),
    );
    assert!(out.contains("solve: cg/gamg"), "{out}");
}

#[test]
fn mpiaijtessera_on_two_processes_matches_mpiaij_with_value_updates_and_pattern_changes() {
    let Some(b) = build_or_skip() else { return };
    // CG on a 2D Laplacian; updates, MatScale, pattern changes (one adds an off-process column,
    // so PETSc rebuilds the off-diagonal block); duplicate and convert.
    let out = run_ok(
        &b,
        2,
        &words(
            "-mat_type mpiaijtessera -expect_type mpiaijtessera -problem laplace2d -n 64 \
             -ksp_type cg -pc_type jacobi -check_updates -check_convert",
        ),
    );
    assert!(
        out.contains("solve after a new off-process column"),
        "{out}"
    );
    // CG on bcsstk16, block Jacobi with SeqAIJ's Cholesky of each tessera diagonal block.
    if let Some(mtx) = bcsstk16() {
        let mut args = words(
            "-mat_type mpiaijtessera -expect_type mpiaijtessera -problem mtx -ksp_type cg \
             -pc_type bjacobi -sub_pc_type cholesky -ksp_rtol 1e-10 -check_updates",
        );
        args.extend(mtx);
        run_ok(&b, 2, &args);
    }
    // GMRES with block Jacobi / ILU(0) on the tessera diagonal blocks; root name aijtessera.
    let out = run_ok(
        &b,
        2,
        &words(
            "-mat_type aijtessera -expect_type mpiaijtessera -problem convdiff2d -n 64 \
             -ksp_type gmres -pc_type bjacobi -sub_pc_type ilu -check_updates",
        ),
    );
    assert!(out.contains("solve: gmres/bjacobi"), "{out}");
}

#[test]
fn options_choose_the_method_bad_values_are_petsc_errors_and_ascii_info_shows_the_analysis() {
    let Some(b) = build_or_skip() else { return };
    let small = |extra: &str| {
        words(&format!(
            "-mat_type seqaijtessera -problem laplace2d -n 8 -ksp_type cg {extra}"
        ))
    };

    // -mat_view ::ascii_info: method, parameters, bytes and counters, on one process ...
    let out = run_ok(
        &b,
        1,
        &small(
            "-mat_tessera_algorithm CSR_VECTOR -mat_tessera_tuning quick \
             -mat_tessera_backend host -mat_view ::ascii_info",
        ),
    );
    for want in [
        "type: seqaijtessera",
        "tessera: backend host (device 0), algorithm csr_vector (requested csr_vector, tuning quick)",
        "tessera: params coop=",
        "tessera: device bytes ",
        "tessera: analyses 1, value updates 0, products 0",
    ] {
        assert!(out.contains(want), "ascii_info lacks {want:?}:\n{out}");
    }
    // ... and per block on two.
    let out = run_ok(
        &b,
        2,
        &words(
            "-mat_type aijtessera -expect_type mpiaijtessera -problem laplace2d -n 8 \
             -ksp_type cg -pc_type jacobi -mat_view ::ascii_info",
        ),
    );
    for want in [
        "type: mpiaijtessera",
        "[0] diagonal block:",
        "[0] off-diagonal block:",
        "[1] diagonal block:",
        "[1] off-diagonal block:",
        "tessera: device bytes ",
    ] {
        assert!(out.contains(want), "MPI ascii_info lacks {want:?}:\n{out}");
    }

    // Bad values are PETSc errors that list the valid ones.
    for (option, value, valid) in [
        (
            "algorithm",
            "fastest",
            "auto, csr_vector, hola, bccoo, brc, tile",
        ),
        ("tuning", "some", "none, quick, exhaustive, online"),
        ("backend", "gpu", "cuda, host"),
    ] {
        run_err(
            &b,
            &small(&format!("-mat_tessera_{option} {value}")),
            true,
            &format!("-mat_tessera_{option} {value}: unknown value; use one of {valid}"),
        );
    }

    // Without the option and without TESSERA_BACKEND: CUDA when it works, else the host backend
    // with an info message.
    let cmd = command(&b, 1, &small("-info :mat"), false);
    let out = text(&run_checked(cmd, "run without TESSERA_BACKEND"));
    assert!(out.lines().any(|l| l.starts_with("ok: ")), "{out}");
    for line in out.lines().filter(|l| l.contains("tessera: handle on the")) {
        println!("without TESSERA_BACKEND: {line}");
    }
    if no_gpu() {
        assert!(
            out.contains("tessera: no CUDA device (") && out.contains("); using the host backend"),
            "no fall-back message without a GPU:\n{out}"
        );
        // An explicit CUDA backend does not fall back: it is an error saying why.
        run_err(
            &b,
            &small("-mat_tessera_backend cuda"),
            false,
            "tessera_create_with(backend=cuda, device=0) failed: TESSERA_STATUS_NO_DEVICE",
        );
    }

    // The plugin's CUDA staging buffers, and (when tessera opens a CUDA handle) a product
    // through them as the plugin runs it for host vectors; skips itself without a CUDA driver.
    let out = text(&run_checked(
        Command::new(&b.staging),
        "cuda_staging (the plugin's CUDA staging path)",
    ));
    println!("== cuda_staging\n{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("ok: ") || l.starts_with("skipped: ")),
        "{out}"
    );
}

/// With a CUDA PETSc (PETSC_DIR) and a GPU: aijtessera with CUDA vectors against aijcusparse,
/// every product on the CUDA-vector path, on one and two processes
/// (`plugins/petsc/tests/gpu.sh`, which prints one skip line without them: CI's Debian PETSc has
/// no CUDA).
#[test]
fn cuda_vectors_on_a_cuda_petsc_match_aijcusparse_or_skip() {
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("plugins/petsc/tests/gpu.sh"))
        .arg("--tessera-lib")
        .arg(lib_dir());
    let out = text(&run_checked(cmd, "plugins/petsc/tests/gpu.sh"));
    println!("{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("ok: ") || l.starts_with("skipped: ")),
        "{out}"
    );
}
