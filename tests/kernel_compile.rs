//! Every kernel specialisation the code can request compiles with NVRTC to CUBIN for sm_80 and
//! sm_90. Needs NVRTC only (no GPU, no driver): `scripts/nvrtc-venv` installs it from PyPI and
//! prints its folder, which `scripts/test` puts on LD_LIBRARY_PATH.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use tessera::backend::cuda::{kernels, nvrtc};
use tessera::error::Error;

const ARCHS: [i32; 2] = [80, 90];

/// True when NVRTC loads. Otherwise fails the test, or with TESSERA_SKIP_NVRTC=1 prints one
/// "skipped:" line and answers false.
fn nvrtc_available() -> bool {
    let Err(e) = nvrtc::probe() else {
        return true;
    };
    if std::env::var("TESSERA_SKIP_NVRTC").as_deref() == Ok("1") {
        println!("skipped: NVRTC cannot be loaded and TESSERA_SKIP_NVRTC=1 ({e})");
        return false;
    }
    panic!(
        "NVRTC cannot be loaded: {e}\n\
         Run `dir=$(scripts/nvrtc-venv)` and put $dir on LD_LIBRARY_PATH (scripts/test does both; \
         TESSERA_NVRTC_LIB_DIR={:?}), or set TESSERA_SKIP_NVRTC=1 to skip.",
        std::env::var("TESSERA_NVRTC_LIB_DIR").ok()
    );
}

#[test]
fn every_kernel_specialisation_compiles_to_cubin_for_sm_80_and_sm_90() {
    if !nvrtc_available() {
        return;
    }
    let jobs: Vec<(kernels::KernelSpec, i32)> = tessera::methods::kernel_specs()
        .into_iter()
        .flat_map(|s| ARCHS.map(|a| (s.clone(), a)))
        .collect();
    assert!(!jobs.is_empty(), "all_specs() is empty");
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 4)
        .min(jobs.len());
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((spec, arch)) = jobs.get(i) else {
                    break;
                };
                let what = format!("{} for sm_{arch}", spec.label());
                let failure =
                    match nvrtc::compile(&spec.source(), spec.file_name(), &spec.options(*arch)) {
                        // A warning fails the check: kernels compile clean.
                        Ok(c) if !c.log.is_empty() => format!("{what}: NVRTC warned:\n{}", c.log),
                        Ok(c) if c.cubin.starts_with(b"\x7fELF") => continue,
                        Ok(c) => format!(
                            "{what}: the image is not ELF (first bytes {:02x?})",
                            &c.cubin[..c.cubin.len().min(8)]
                        ),
                        Err(e) => format!("{what}: {e}"),
                    };
                failures.lock().unwrap().push(failure);
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} compilations failed:\n\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n\n")
    );
    let (major, minor) = nvrtc::version().expect("NVRTC version");
    println!(
        "compiled {} kernel specialisations x {:?} = {} CUBINs in {:.1} s with NVRTC {major}.{minor} ({workers} threads)",
        jobs.len() / ARCHS.len(),
        ARCHS,
        jobs.len(),
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn a_kernel_that_does_not_compile_is_compile_failed_with_the_nvrtc_log() {
    if !nvrtc_available() {
        return;
    }
    let source = "extern \"C\" __global__ void broken(float *y) { y[0] = undeclared_name; }\n";
    let options = vec!["--gpu-architecture=sm_90".to_string()];
    match nvrtc::compile_cubin(source, "broken_kernel.cu", &options) {
        Err(Error::CompileFailed(log)) => {
            assert!(log.contains("broken_kernel.cu"), "no file name in: {log}");
            assert!(log.contains("error"), "no NVRTC error in: {log}");
            assert!(log.contains("undeclared_name"), "no NVRTC log in: {log}");
        }
        Err(e) => panic!("expected CompileFailed, got {e:?}"),
        Ok(cubin) => panic!("a broken kernel compiled ({} bytes)", cubin.len()),
    }
}

#[test]
fn a_kernel_that_compiles_with_a_warning_shows_the_warning() {
    if !nvrtc_available() {
        return;
    }
    // An unused variable: NVRTC (cudafe) warns "variable ... was declared but never referenced".
    let source = "extern \"C\" __global__ void warns(float *y) { int unused_here; y[0] = 1.0f; }\n";
    let options = vec!["--gpu-architecture=sm_90".to_string()];
    let c = nvrtc::compile(source, "warning_kernel.cu", &options).expect("it compiles");
    assert!(c.cubin.starts_with(b"\x7fELF"));
    assert!(
        c.log.contains("unused_here") && c.log.contains("warning"),
        "the warning is not in the log: {:?}",
        c.log
    );
}

#[test]
fn options_target_cubin_for_the_requested_arch() {
    for spec in tessera::methods::kernel_specs() {
        for arch in ARCHS {
            let options = spec.options(arch);
            let target: Vec<&String> = options
                .iter()
                .filter(|o| o.starts_with("--gpu-architecture") || o.starts_with("-arch"))
                .collect();
            assert_eq!(
                target,
                [&format!("--gpu-architecture=sm_{arch}")],
                "{}: {options:?}",
                spec.label()
            );
        }
    }
}
