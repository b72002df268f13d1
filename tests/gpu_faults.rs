//! Fault injection on a real GPU (issue 10, item 3): for every C API function that touches the
//! device, the Nth device allocation, NVRTC compilation, module load or kernel launch is made to
//! fail, for N = 1, 2, 3, ... until the call completes without reaching the Nth event. For each
//! N: the right status comes back, `tessera_last_error()` names the function and says the fault
//! was injected, the matrix is left in a state that never gives a wrong y silently (not
//! analyzed, or refusing products until update_values succeeds), a retry without the fault
//! works, the handle and the matrices created before keep giving the right products, and device
//! memory (cuMemGetInfo) is back at its starting level once the step's matrix is destroyed.
//!
//! cuMemGetInfo is process-wide, so every test of this file takes one lock (and gpu-run runs
//! the file with --test-threads=1 anyway). `TESSERA_TEST_SMALL=1` (the sanitizer runs) sweeps
//! long ranges of N with a growing stride and skips the slowest compile/load sweeps.
//! Without a GPU every test prints one "skipped: no CUDA device" line and returns.

mod common;

use common::gpu::gpu;
use common::products::{assert_product, x_for};
use std::ffi::{c_void, CStr};
use std::sync::Mutex;
use tessera::api::types::*;
use tessera::api::*;
use tessera::backend::cuda::fault::{self, Fault};
use tessera::backend::cuda::{Device, DeviceVec, Stream};
use tessera::{Algorithm, Csr, Operation, Scalar, ValueType};

/// Device memory is process-wide: one test at a time in this file.
static SERIAL: Mutex<()> = Mutex::new(());

/// Device memory a step may leave behind, in bytes. The driver gives memory out in 2 MiB pages
/// and keeps a few pools of its own (module code, event and stream bookkeeping) that may round
/// differently from one step to the next; 8 MiB is four such pages. A real leak of a matrix
/// is at least its CSR (the matrices here hold about 0.3 MB each, a whole analysis several
/// times that), and a leak in a sweep repeats once per step, so every sweep also checks the
/// total after its last step against the same bound: 100 leaked steps would exceed it.
const MEMORY_TOLERANCE: i64 = 8 << 20;

const KINDS: [Fault; 4] = [Fault::Alloc, Fault::Compile, Fault::Load, Fault::Launch];

fn small() -> bool {
    common::test_small()
}

/// The next N of a sweep: every N, or (small mode) every N up to 8 and then a stride of N/3.
fn next_n(n: u64) -> u64 {
    if small() && n >= 8 {
        n + n / 3
    } else {
        n + 1
    }
}

fn expected_status(kind: Fault) -> tessera_status {
    match kind {
        Fault::Alloc => TESSERA_STATUS_ALLOC_FAILED,
        Fault::Compile => TESSERA_STATUS_COMPILE_FAILED,
        Fault::Load | Fault::Launch => TESSERA_STATUS_EXECUTION_FAILED,
    }
}

fn last_error() -> String {
    // SAFETY: tessera_last_error returns a NUL-terminated thread-local string.
    unsafe { CStr::from_ptr(tessera_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn ok(s: tessera_status, what: &str) {
    assert_eq!(s, TESSERA_STATUS_SUCCESS, "{what}: {}", last_error());
}

/// The failure of `function` under an injected `kind` fault: its status and a last_error that
/// names the function and the injection.
fn assert_injected(s: tessera_status, kind: Fault, function: &str, what: &str) {
    let e = last_error();
    assert_eq!(
        s,
        expected_status(kind),
        "{what}: {kind:?} fault gave status {s}: {e}"
    );
    assert!(
        e.starts_with(function) && e.contains("[injected fault: "),
        "{what}: last_error does not explain the injected {kind:?} fault: {e}"
    );
}

fn vt<T: Scalar>() -> tessera_value_type {
    match T::VALUE_TYPE {
        ValueType::F32 => TESSERA_VALUE_TYPE_F32,
        ValueType::F64 => TESSERA_VALUE_TYPE_F64,
    }
}

/// A matrix through the C API from host arrays of `a` (values converted to T).
fn create<T: Scalar>(h: tessera_handle, a: &Csr<f64>) -> tessera_matrix {
    let v: Vec<T> = a.values().iter().map(|&x| T::from_f64(x)).collect();
    let mut m = std::ptr::null_mut();
    // SAFETY: the arrays hold rows + 1 and nnz entries; m is a valid out-pointer.
    let s = unsafe {
        tessera_create_csr(
            h,
            &mut m,
            a.rows() as i64,
            a.cols() as i64,
            a.nnz() as i64,
            a.row_ptr().as_ptr().cast(),
            a.col_ind().as_ptr().cast(),
            v.as_ptr().cast(),
            TESSERA_INDEX_TYPE_I32,
            TESSERA_INDEX_BASE_ZERO,
            vt::<T>(),
        )
    };
    ok(s, "tessera_create_csr");
    m
}

fn destroy(m: tessera_matrix) {
    // SAFETY: a live matrix of ours, used by nobody else.
    ok(
        unsafe { tessera_destroy_matrix(m) },
        "tessera_destroy_matrix",
    );
}

fn analyze(h: tessera_handle, m: tessera_matrix, alg: Algorithm, tune: tessera_tuning) -> i32 {
    // SAFETY: live handle and matrix of this thread.
    unsafe { tessera_analyze(h, m, alg as tessera_algorithm, tune) }
}

/// Device vectors x (values of seed) and y (NaN) for `op` of `a`.
struct Vectors<T> {
    x: Vec<T>,
    dx: DeviceVec<T>,
    dy: DeviceVec<T>,
}

fn vectors<T: Scalar>(dev: &std::sync::Arc<Device>, a: &Csr<f64>, op: Operation) -> Vectors<T> {
    let (xl, yl) = match op {
        Operation::NonTranspose => (a.cols(), a.rows()),
        Operation::Transpose => (a.rows(), a.cols()),
    };
    let x: Vec<T> = x_for(xl, 3).into_iter().map(T::from_f64).collect();
    Vectors {
        dx: DeviceVec::from_slice(dev, &x).unwrap(),
        dy: DeviceVec::from_slice(dev, &vec![T::from_f64(f64::NAN); yl]).unwrap(),
        x,
    }
}

/// y = op(A) x through the C API into `v.dy` (NaN first: beta = 0 must not read it).
fn spmv<T: Scalar>(h: tessera_handle, m: tessera_matrix, op: Operation, v: &mut Vectors<T>) -> i32 {
    let n = v.dy.len();
    v.dy.copy_from(&vec![T::from_f64(f64::NAN); n]).unwrap();
    let (one, zero) = (T::ONE, T::ZERO);
    // SAFETY: live handle and matrix; x and y are device vectors of op(A)'s lengths.
    unsafe {
        tessera_spmv(
            h,
            op as tessera_operation,
            (&one as *const T).cast(),
            m,
            v.dx.addr() as *const c_void,
            (&zero as *const T).cast(),
            v.dy.addr() as *mut c_void,
        )
    }
}

/// Checks op(A) x of matrix `m` (values of `a`, rounded to T) against the f64 product.
fn assert_right<T: Scalar>(
    dev: &std::sync::Arc<Device>,
    h: tessera_handle,
    m: tessera_matrix,
    a: &Csr<f64>,
    what: &str,
) {
    let a_t = a.convert::<T>().convert::<f64>();
    for op in [Operation::NonTranspose, Operation::Transpose] {
        let mut v = vectors::<T>(dev, a, op);
        ok(spmv(h, m, op, &mut v), what);
        let y = v.dy.to_vec(Stream(0)).unwrap();
        let y0 = vec![T::ZERO; y.len()];
        assert_product(what, &a_t, op, 1.0, &v.x, 0.0, &y0, &y);
    }
}

/// What every sweep step ends with: the handle's other matrices still right, and device memory
/// back at `base`.
struct World {
    dev: std::sync::Arc<Device>,
    h: tessera_handle,
    /// Matrices analyzed before any fault, one per method (f64) and one f32: must keep working.
    others: Vec<(tessera_matrix, bool, String)>,
    a: Csr<f64>,
    base: usize,
    log: Vec<String>,
}

impl World {
    fn free(&self) -> usize {
        tessera::backend::cuda::synchronize(&self.dev, Stream(0)).unwrap();
        // What tessera's pool keeps for its next allocations is not held by any object.
        self.dev.release_cached_memory().unwrap();
        self.dev.memory_info().unwrap().0
    }

    fn after_step(&self, what: &str) {
        for (m, f32, name) in &self.others {
            let w = format!("{what}: previously created {name}");
            if *f32 {
                assert_right::<f32>(&self.dev, self.h, *m, &self.a, &w);
            } else {
                assert_right::<f64>(&self.dev, self.h, *m, &self.a, &w);
            }
        }
        let free = self.free();
        let grown = self.base as i64 - free as i64;
        assert!(
            grown <= MEMORY_TOLERANCE || common::under_sanitizer(),
            "{what}: device memory did not return to its starting level: {grown} bytes more in use than at the start ({} free then, {free} now)",
            self.base
        );
    }
}

impl Drop for World {
    fn drop(&mut self) {
        fault::disarm();
        for (m, _, _) in self.others.drain(..) {
            // SAFETY: live matrices of ours.
            unsafe { tessera_destroy_matrix(m) };
        }
        // SAFETY: a live handle of ours.
        unsafe { tessera_destroy(self.h) };
    }
}

/// The matrix every sweep uses: small (fast steps), rows of varied length, three of them
/// spanning several blocks (HOLA shares rows between blocks and runs in carry mode; BRC splits
/// rows).
fn matrix() -> Csr<f64> {
    tessera::io::load("gen:circuit:5000,5,3,5000,9").unwrap().1
}

/// A handle, the shared matrix, one analyzed matrix per method (f64) plus one f32, and the
/// memory baseline, taken after `warm` ran once without faults (so modules are loaded and the
/// driver's pools have grown to what the steps need).
fn world(warm: impl FnOnce(&World)) -> Option<World> {
    let rust_handle = gpu()?;
    let dev = rust_handle.cuda().unwrap().clone();
    fault::disarm();
    let mut h = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(
        unsafe { tessera_create_with(&mut h, TESSERA_BACKEND_CUDA, 0) },
        "tessera_create_with",
    );
    let a = matrix();
    let mut others = Vec::new();
    for &alg in tessera::select::IMPLEMENTED {
        let m = create::<f64>(h, &a);
        ok(analyze(h, m, alg, TESSERA_TUNING_NONE), "analyze");
        others.push((m, false, format!("{alg} f64 matrix")));
    }
    let m = create::<f32>(h, &a);
    ok(
        analyze(h, m, Algorithm::Auto, TESSERA_TUNING_NONE),
        "analyze",
    );
    others.push((m, true, "AUTO f32 matrix".to_string()));
    let mut w = World {
        dev,
        h,
        others,
        a,
        base: 0,
        log: Vec::new(),
    };
    warm(&w);
    w.after_step("warm-up");
    w.base = w.free();
    Some(w)
}

/// Sweeps N for `kind` over `step(N)`, which arms the fault itself (after its own setup), runs
/// the call and returns whether the fault fired. Stops at the first N that did not fire.
fn sweep(w: &mut World, what: &str, kind: Fault, mut step: impl FnMut(&World, u64) -> bool) {
    let mut n = 1;
    let mut failed = 0;
    loop {
        assert!(n < 5000, "{what}: {kind:?} still reached after {n} events");
        let fired = step(w, n);
        fault::disarm();
        w.after_step(&format!("{what}, {kind:?} fault #{n}"));
        if !fired {
            break;
        }
        failed += 1;
        n = next_n(n);
    }
    let line = format!("{what}: {kind:?} faults injected at {failed} event numbers, then the call completed with {} {kind:?} events", n - 1);
    println!("{line}");
    w.log.push(line);
}

/// analyze under each fault: fails with the fault's status (or absorbs it, e.g. a tuner that
/// skips a candidate it cannot allocate, and is then right), leaves the matrix not analyzed,
/// and a retry without faults gives the right product.
fn analyze_sweeps<T: Scalar>(w: &mut World, alg: Algorithm, tune: tessera_tuning, kinds: &[Fault]) {
    for &kind in kinds {
        let what = format!("tessera_analyze {alg} tuning {tune} {:?}", T::VALUE_TYPE);
        sweep(w, &what, kind, |w, n| {
            let m = create::<T>(w.h, &w.a);
            fault::arm(kind, n);
            let s = analyze(w.h, m, alg, tune);
            let fired = fault::fired(kind);
            fault::disarm();
            let step = format!("{what}, {kind:?} fault #{n}");
            if fired && s != TESSERA_STATUS_SUCCESS {
                assert_injected(s, kind, "tessera_analyze", &step);
                let mut v = vectors::<T>(&w.dev, &w.a, Operation::NonTranspose);
                let s2 = spmv(w.h, m, Operation::NonTranspose, &mut v);
                assert_eq!(
                    s2,
                    TESSERA_STATUS_NOT_ANALYZED,
                    "{step}: the failed analysis must leave the matrix not analyzed: {}",
                    last_error()
                );
                ok(analyze(w.h, m, alg, tune), &format!("{step}: retry"));
            } else {
                ok(s, &step);
            }
            assert_right::<T>(&w.dev, w.h, m, &w.a, &step);
            destroy(m);
            fired
        });
    }
}

#[test]
fn every_fault_in_analyze_is_reported_and_leaves_nothing_behind() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(mut w) = world(|w| {
        for &alg in tessera::select::IMPLEMENTED {
            let m = create::<f32>(w.h, &w.a);
            ok(analyze(w.h, m, alg, TESSERA_TUNING_NONE), "warm-up");
            assert_right::<f32>(&w.dev, w.h, m, &w.a, "warm-up");
            destroy(m);
        }
        for (alg, tune) in [
            (Algorithm::Auto, TESSERA_TUNING_QUICK),
            (Algorithm::CsrVector, TESSERA_TUNING_ONLINE),
        ] {
            let m = create::<f64>(w.h, &w.a);
            ok(analyze(w.h, m, alg, tune), "warm-up");
            assert_right::<f64>(&w.dev, w.h, m, &w.a, "warm-up");
            destroy(m);
        }
    }) else {
        return;
    };
    for &alg in tessera::select::IMPLEMENTED {
        let kinds: &[Fault] = if small() && alg != Algorithm::CsrVector {
            &[Fault::Alloc, Fault::Launch]
        } else {
            &KINDS
        };
        analyze_sweeps::<f64>(&mut w, alg, TESSERA_TUNING_NONE, kinds);
        analyze_sweeps::<f32>(
            &mut w,
            alg,
            TESSERA_TUNING_NONE,
            &[Fault::Alloc, Fault::Launch],
        );
    }
    // AUTO with QUICK prepares and times every method; ONLINE loads every CSR_VECTOR module.
    let slow: &[Fault] = if small() {
        &[Fault::Alloc, Fault::Launch]
    } else {
        &KINDS
    };
    analyze_sweeps::<f64>(&mut w, Algorithm::Auto, TESSERA_TUNING_QUICK, slow);
    analyze_sweeps::<f64>(&mut w, Algorithm::CsrVector, TESSERA_TUNING_ONLINE, &KINDS);
    // A whole sweep's worth of steps left no more than one step's tolerance behind.
    let grown = w.base as i64 - w.free() as i64;
    println!(
        "analyze sweeps done: {} sweeps, device memory {grown:+} bytes in use vs the start",
        w.log.len()
    );
}

#[test]
fn every_fault_in_spmv_update_values_and_create_is_reported_and_the_matrix_recovers() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let a = matrix();
    // Values in the caller's order for update_values, and their device copy.
    let fresh: Vec<f64> = x_for(a.nnz(), 17);
    let mut a_fresh = a.clone();
    a_fresh.values_mut().copy_from_slice(&fresh);
    let Some(mut w) = world(|w| {
        for &alg in tessera::select::IMPLEMENTED {
            let m = create::<f64>(w.h, &w.a);
            ok(analyze(w.h, m, alg, TESSERA_TUNING_NONE), "warm-up");
            // SAFETY: fresh holds nnz f64 values.
            ok(
                unsafe { tessera_update_values(w.h, m, fresh.as_ptr().cast()) },
                "warm-up",
            );
            assert_right::<f64>(&w.dev, w.h, m, &a_fresh, "warm-up");
            destroy(m);
        }
        let m = create::<f64>(w.h, &w.a);
        ok(
            analyze(w.h, m, Algorithm::CsrVector, TESSERA_TUNING_ONLINE),
            "warm-up",
        );
        for _ in 0..50 {
            assert_right::<f64>(&w.dev, w.h, m, &w.a, "warm-up");
        }
        destroy(m);
    }) else {
        return;
    };
    let d_fresh = DeviceVec::from_slice(&w.dev, &fresh).unwrap();
    w.base = w.free();

    // Creating a handle touches no allocation, module or launch. Creating a matrix from host
    // arrays may (the direct upload of int32 base-0 sorted arrays allocates the device CSR and
    // loads its kernels), but a fault there sends it to the host copy, which touches none: the
    // create succeeds at every N (`create` asserts it) and each sweep ends with nothing fired.
    for kind in KINDS {
        sweep(&mut w, "tessera_create_with", kind, |_, n| {
            let mut h2 = std::ptr::null_mut();
            fault::arm(kind, n);
            // SAFETY: valid out-pointer.
            let s = unsafe { tessera_create_with(&mut h2, TESSERA_BACKEND_CUDA, 0) };
            let fired = fault::fired(kind);
            fault::disarm();
            if fired && s != TESSERA_STATUS_SUCCESS {
                assert_injected(s, kind, "tessera_create_with", "tessera_create_with");
            } else {
                ok(s, "tessera_create_with");
                // SAFETY: the handle just created.
                ok(unsafe { tessera_destroy(h2) }, "tessera_destroy");
            }
            fired
        });
        sweep(&mut w, "tessera_create_csr", kind, |w, n| {
            fault::arm(kind, n);
            let m = create::<f64>(w.h, &w.a);
            let fired = fault::fired(kind);
            fault::disarm();
            destroy(m);
            fired
        });
    }

    for &alg in tessera::select::IMPLEMENTED {
        // spmv and its transpose: every launch of the product in turn.
        let m = create::<f64>(w.h, &w.a);
        ok(analyze(w.h, m, alg, TESSERA_TUNING_NONE), "analyze");
        for op in [Operation::NonTranspose, Operation::Transpose] {
            let what = format!("tessera_spmv {op} {alg}");
            for kind in KINDS {
                sweep(&mut w, &what, kind, |w, n| {
                    let mut v = vectors::<f64>(&w.dev, &w.a, op);
                    fault::arm(kind, n);
                    let s = spmv(w.h, m, op, &mut v);
                    let fired = fault::fired(kind);
                    fault::disarm();
                    if fired {
                        // y is unspecified after a failed product; the next one is right.
                        assert_injected(s, kind, "tessera_spmv", &what);
                    } else {
                        ok(s, &what);
                    }
                    assert_right::<f64>(&w.dev, w.h, m, &w.a, &format!("{what} after fault #{n}"));
                    fired
                });
            }
        }
        destroy(m);

        // update_values from host and from device memory.
        for from_device in [false, true] {
            let what = format!(
                "tessera_update_values {alg} from {}",
                if from_device {
                    "device memory"
                } else {
                    "the host"
                }
            );
            for kind in [Fault::Alloc, Fault::Launch] {
                sweep(&mut w, &what, kind, |w, n| {
                    let m = create::<f64>(w.h, &w.a);
                    ok(analyze(w.h, m, alg, TESSERA_TUNING_NONE), "analyze");
                    let src: *const c_void = if from_device {
                        d_fresh.addr() as *const c_void
                    } else {
                        fresh.as_ptr().cast()
                    };
                    fault::arm(kind, n);
                    // SAFETY: src holds nnz f64 values (host or device).
                    let s = unsafe { tessera_update_values(w.h, m, src) };
                    let fired = fault::fired(kind);
                    fault::disarm();
                    if fired && s != TESSERA_STATUS_SUCCESS {
                        assert_injected(s, kind, "tessera_update_values", &what);
                        // Either the old values are intact (nothing was queued), or products
                        // refuse to run until an update succeeds: never a silent mix.
                        let mut v = vectors::<f64>(&w.dev, &w.a, Operation::NonTranspose);
                        let s2 = spmv(w.h, m, Operation::NonTranspose, &mut v);
                        if s2 == TESSERA_STATUS_SUCCESS {
                            assert_right::<f64>(
                                &w.dev,
                                w.h,
                                m,
                                &w.a,
                                &format!("{what}: old values after fault #{n}"),
                            );
                        } else {
                            let e = last_error();
                            assert_eq!(s2, TESSERA_STATUS_EXECUTION_FAILED, "{what}: {e}");
                            assert!(e.contains("update_values failed part way"), "{what}: {e}");
                        }
                        // SAFETY: as above.
                        ok(
                            unsafe { tessera_update_values(w.h, m, src) },
                            &format!("{what}: retry"),
                        );
                    } else {
                        ok(s, &what);
                    }
                    assert_right::<f64>(
                        &w.dev,
                        w.h,
                        m,
                        &a_fresh,
                        &format!("{what} after fault #{n}"),
                    );
                    destroy(m);
                    fired
                });
            }
        }
    }

    // ONLINE tuning: a failed launch in the middle of the search (a timed trial or not) is
    // reported, and the search goes on to settle with every later product right.
    let what = "tessera_spmv CSR_VECTOR ONLINE, 40 products";
    sweep(&mut w, what, Fault::Launch, |w, n| {
        let m = create::<f64>(w.h, &w.a);
        ok(
            analyze(w.h, m, Algorithm::CsrVector, TESSERA_TUNING_ONLINE),
            "analyze",
        );
        let mut v = vectors::<f64>(&w.dev, &w.a, Operation::NonTranspose);
        fault::arm(Fault::Launch, n);
        let mut failed_at = None;
        for call in 0..40 {
            let s = spmv(w.h, m, Operation::NonTranspose, &mut v);
            if s != TESSERA_STATUS_SUCCESS {
                assert_injected(s, Fault::Launch, "tessera_spmv", what);
                failed_at = Some(call);
                break;
            }
        }
        let fired = fault::fired(Fault::Launch);
        fault::disarm();
        assert_eq!(fired, failed_at.is_some(), "{what}: fault #{n}");
        for call in 0..60 {
            let s = format!("{what}: call {call} after fault #{n}");
            assert_right::<f64>(&w.dev, w.h, m, &w.a, &s);
        }
        let mut info = std::mem::MaybeUninit::<tessera_matrix_info>::uninit();
        // SAFETY: live matrix; valid out-pointer.
        ok(
            unsafe { tessera_matrix_get_info(m, info.as_mut_ptr()) },
            "info",
        );
        // SAFETY: written on success.
        let info = unsafe { info.assume_init() };
        // SAFETY: params is NUL-terminated.
        let params = unsafe { CStr::from_ptr(info.params.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        assert!(params.contains("settled"), "{what}: fault #{n}: {params}");
        destroy(m);
        fired
    });
    println!(
        "spmv/update_values/create sweeps done: {} sweeps",
        w.log.len()
    );
}

#[test]
fn the_environment_switch_fails_the_nth_event_of_the_process() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    if gpu().is_none() {
        return;
    }
    // The variable is read once per process: run the CLI (a separate process) with it.
    let bin = std::env::var("TESSERA_BIN").unwrap_or(env!("CARGO_BIN_EXE_tessera").into());
    for (spec, needle) in [
        ("alloc:3", "device allocation #3 of the process"),
        ("launch:2", "kernel launch #2 of the process"),
        ("compile:1", "NVRTC compilation #1 of the process"),
        ("load:1", "module load #1 of the process"),
    ] {
        let out = std::process::Command::new(&bin)
            .args(["--backend", "cuda", "verify", "gen:lap3d7:8"])
            .env("TESSERA_FAULT_INJECT", spec)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "{spec}: the CLI succeeded: {text}");
        assert!(text.contains(needle), "{spec}: {text}");
        assert!(!text.contains("panicked"), "{spec}: {text}");
    }
}
