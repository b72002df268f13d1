//! Forwarding, without a GPU: the shim loads a stand-in for the real cuSPARSE
//! (`fake_cusparse.c`, named by `TESSERA_CUSPARSE_LIB`) and every call it cannot take reaches
//! it with the application's arguments unchanged, its status returned as is. On a machine
//! without a CUDA driver (CI) even a plain CSR product is forwarded; on the GPU machine the
//! stand-in's arrays are not device memory, and tessera's check of them forwards it too.

use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::Mutex;
use tessera_cusparse::abi::*;
use tessera_cusparse::cusparseSpMV;
use tessera_cusparse::cusparseSpMV_preprocess;

#[repr(C)]
struct FakeMat {
    format: i32,
    bad: i32,
    rows: i64,
    cols: i64,
    nnz: i64,
    row_ptr: *const c_void,
    col_ind: *const c_void,
    values: *const c_void,
    row_type: i32,
    col_type: i32,
    base: i32,
    value_type: i32,
}

#[repr(C)]
struct FakeVec {
    size: i64,
    values: *const c_void,
    value_type: i32,
}

#[repr(C)]
struct FakeHandle {
    stream: *mut c_void,
    pointer_mode: i32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct FakeRecord {
    spmv_calls: i32,
    preprocess_calls: i32,
    op: i32,
    alg: i32,
    compute: i32,
    handle: *const c_void,
    alpha: *const c_void,
    mat: *const c_void,
    x: *const c_void,
    beta: *const c_void,
    y: *const c_void,
    buffer: *const c_void,
    answer: i32,
}

/// The stand-in, built once per test binary.
fn fake_lib() -> PathBuf {
    static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap();
    if let Some(p) = &*built {
        return p.clone();
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fake-cusparse");
    std::fs::create_dir_all(&dir).unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fake_cusparse.c");
    let out = dir.join("libfake_cusparse.so");
    let triple = std::env::consts::ARCH.to_string() + "-unknown-linux-gnu";
    let compiler = cc::Build::new()
        .target(&triple)
        .host(&triple)
        .opt_level(0)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .get_compiler();
    let status = compiler
        .to_command()
        .args([
            "-shared", "-fPIC", "-std=c99", "-Wall", "-Wextra", "-Werror", "-o",
        ])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("a C compiler runs");
    assert!(status.success(), "building {}", src.display());
    *built = Some(out.clone());
    out
}

/// The stand-in's record (the library is already open: the shim opened it by path).
fn record() -> &'static mut FakeRecord {
    let lib = fake_lib();
    // SAFETY: the stand-in, already loaded by the shim; fake_record returns a pointer to its
    // static record, which lives as long as the process.
    unsafe {
        let l = libloading::Library::new(&lib).unwrap();
        let f: libloading::Symbol<unsafe extern "C" fn() -> *mut FakeRecord> =
            l.get(b"fake_record").unwrap();
        let r = &mut *f();
        std::mem::forget(l);
        r
    }
}

/// Every test of this binary talks to the same stand-in and record: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn setup() -> std::sync::MutexGuard<'static, ()> {
    let g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Read once by the shim, at its first call; every test sets the same value.
    std::env::set_var("TESSERA_CUSPARSE_LIB", fake_lib());
    g
}

fn csr() -> FakeMat {
    FakeMat {
        format: CUSPARSE_FORMAT_CSR,
        bad: 0,
        rows: 4,
        cols: 3,
        nnz: 6,
        row_ptr: 0x1000 as *const c_void,
        col_ind: 0x2000 as *const c_void,
        values: 0x3000 as *const c_void,
        row_type: CUSPARSE_INDEX_32I,
        col_type: CUSPARSE_INDEX_32I,
        base: CUSPARSE_INDEX_BASE_ZERO,
        value_type: CUDA_R_64F,
    }
}

/// Calls the shim's cusparseSpMV (or preprocess) with `mat` and vectors of the right sizes,
/// and checks that the stand-in saw exactly the arguments given and its status came back.
fn forwarded(mat: &FakeMat, preprocess: bool) {
    let r = record();
    let before = *r;
    r.answer = 42;
    let handle = FakeHandle {
        stream: 0x77 as *mut c_void,
        pointer_mode: CUSPARSE_POINTER_MODE_HOST,
    };
    let x = FakeVec {
        size: mat.cols,
        values: 0x5000 as *const c_void,
        value_type: mat.value_type,
    };
    let y = FakeVec {
        size: mat.rows,
        values: 0x6000 as *const c_void,
        value_type: mat.value_type,
    };
    let (alpha, beta) = (1.5f64, 0.0f64);
    let buffer = 0x9000 as *mut c_void;
    let f = if preprocess {
        cusparseSpMV_preprocess
    } else {
        cusparseSpMV
    };
    let hp = &handle as *const FakeHandle as cusparseHandle_t;
    let ap = &alpha as *const f64 as *const c_void;
    let bp = &beta as *const f64 as *const c_void;
    let mp = mat as *const FakeMat as cusparseConstSpMatDescr_t;
    let xp = &x as *const FakeVec as cusparseConstDnVecDescr_t;
    let yp = &y as *const FakeVec as cusparseDnVecDescr_t;
    // SAFETY: the stand-in reads these structs as its descriptors; the shim only reads them
    // through the stand-in's getters.
    let status = unsafe { f(hp, 0, ap, mp, xp, bp, yp, mat.value_type, 0, buffer) };
    assert_eq!(status, 42, "the real library's status, as it answered");
    let r = *record();
    if preprocess {
        assert_eq!(r.preprocess_calls, before.preprocess_calls + 1);
    } else {
        assert_eq!(r.spmv_calls, before.spmv_calls + 1);
    }
    assert_eq!(
        (r.handle, r.alpha, r.mat, r.x, r.beta, r.y, r.buffer),
        (
            hp as *const c_void,
            ap,
            mp,
            xp,
            bp,
            yp as *const c_void,
            buffer as *const c_void
        )
    );
    assert_eq!((r.op, r.alg, r.compute), (0, 0, mat.value_type));
}

#[test]
fn formats_tessera_does_not_take_reach_the_real_library_unchanged() {
    let _g = setup();
    for format in [2, 3, 5, 6, 7] {
        forwarded(&FakeMat { format, ..csr() }, false);
    }
}

#[test]
fn types_indices_and_bases_tessera_does_not_take_are_forwarded() {
    let _g = setup();
    forwarded(
        &FakeMat {
            row_type: CUSPARSE_INDEX_32I,
            col_type: CUSPARSE_INDEX_64I,
            ..csr()
        },
        false,
    );
    forwarded(
        &FakeMat {
            base: CUSPARSE_INDEX_BASE_ONE,
            ..csr()
        },
        false,
    );
    forwarded(
        &FakeMat {
            value_type: 4, // CUDA_C_32F
            ..csr()
        },
        false,
    );
}

#[test]
fn a_descriptor_the_getters_reject_is_the_real_librarys_to_report() {
    let _g = setup();
    forwarded(&FakeMat { bad: 1, ..csr() }, false);
}

#[test]
fn a_csr_product_without_a_usable_device_is_forwarded() {
    // No CUDA driver (CI), or arrays that are not device memory (the GPU machine).
    let _g = setup();
    forwarded(&csr(), false);
    forwarded(
        &FakeMat {
            value_type: CUDA_R_32F,
            ..csr()
        },
        false,
    );
}

#[test]
fn preprocess_is_the_real_librarys_and_its_status_comes_back() {
    let _g = setup();
    forwarded(&csr(), true);
    forwarded(&FakeMat { format: 3, ..csr() }, true);
}

/// Runs this test binary's test `name` alone in a child process with `env`; its output.
fn child(name: &str, env: &[(&str, &str)]) -> std::process::Output {
    let mut c = std::process::Command::new(std::env::current_exe().unwrap());
    c.args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env("TESSERA_CUSPARSE_CHILD", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// In a child: the real library cannot be opened.
#[test]
fn child_no_real_library() {
    if std::env::var_os("TESSERA_CUSPARSE_CHILD").is_none() {
        return;
    }
    let m = csr();
    // SAFETY: the shim fails before reading any argument.
    let status = unsafe {
        cusparseSpMV(
            std::ptr::null_mut(),
            0,
            std::ptr::null(),
            &m as *const FakeMat as cusparseConstSpMatDescr_t,
            std::ptr::null(),
            std::ptr::null(),
            std::ptr::null_mut(),
            CUDA_R_64F,
            0,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(status, CUSPARSE_STATUS_NOT_INITIALIZED);
}

/// In a child: a forwarded call with the log on.
#[test]
fn child_logged_forward() {
    if std::env::var_os("TESSERA_CUSPARSE_CHILD").is_none() {
        return;
    }
    let _g = setup();
    forwarded(&FakeMat { format: 3, ..csr() }, false);
    forwarded(&FakeMat { format: 3, ..csr() }, false);
    // A CSR matrix forwarded for its base: one more line, with its sizes.
    forwarded(&FakeMat { base: 1, ..csr() }, false);
    forwarded(&FakeMat { base: 1, ..csr() }, false);
}

#[test]
fn without_the_real_library_every_call_is_not_initialized_and_the_log_says_why() {
    let out = child(
        "child_no_real_library",
        &[
            ("TESSERA_CUSPARSE_LIB", "/nonexistent/libcusparse.so.12"),
            ("TESSERA_CUSPARSE_LOG", "1"),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(
            "tessera_cusparse: cannot open the real cuSPARSE: TESSERA_CUSPARSE_LIB=/nonexistent"
        ),
        "{err}"
    );
}

#[test]
fn the_log_says_once_per_matrix_why_a_call_was_forwarded() {
    let out = child("child_logged_forward", &[("TESSERA_CUSPARSE_LOG", "1")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("tessera_cusparse:"))
        .collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].contains("forwarded: format 3 (tessera takes CSR)"),
        "{err}"
    );
    assert!(
        lines[1].contains("forwarded 4 x 3, nnz 6: index base one"),
        "{err}"
    );
}
