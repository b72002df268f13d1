//! The CUDA backend on a real GPU: every shared matrix and the generated edge cases against the
//! f64 product (f32/f64, both operations, alpha/beta cases with NaN in y for beta = 0), tuning,
//! the C API with host and device input arrays (1-based, i64), update_values from host and
//! device memory, a non-default stream, CUDA graph capture and replay, device allocation
//! failure, pointer checks, the on-disk module cache and a background build's copies through the
//! bounce buffer. Without a GPU every test prints one
//! "skipped: no CUDA device" line and returns.

mod common;

use common::gpu::{destroy_stream, gpu, new_stream, shared_device, whole_device};

use common::products::{
    assert_ax, assert_product, check, check_typed, shared_matrix_files, x_for, EDGE_CASES,
};
use cudarc::driver::sys;
use std::ffi::{c_void, CStr};
use tessera::api::types::*;
use tessera::api::*;
use tessera::backend::cuda::{DeviceBuffer, DeviceVec};
use tessera::{Algorithm, BackendKind, Csr, Handle, Matrix, Operation, Status, Tuning};

fn last_error() -> String {
    // SAFETY: tessera_last_error returns a NUL-terminated thread-local string.
    unsafe { CStr::from_ptr(tessera_last_error()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn every_shared_matrix_matches_the_f64_product_on_the_gpu() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    let Some(files) = shared_matrix_files() else {
        return;
    };
    for f in &files {
        let (name, a) = tessera::io::load(f.to_str().unwrap()).unwrap();
        check(&h, &name, &a);
    }
}

#[test]
fn generated_edge_cases_match_the_f64_product_on_the_gpu() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    for spec in EDGE_CASES {
        let (name, a) = tessera::io::load(spec).unwrap();
        check(&h, &name, &a);
    }
}

#[test]
fn quick_and_exhaustive_tuning_choose_parameters_that_still_give_the_right_product() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    for spec in ["gen:powerlaw:14,8,2", "gen:lap3d7:24"] {
        let (name, a) = tessera::io::load(spec).unwrap();
        let tunings: &[Tuning] = if common::test_small() {
            &[Tuning::Quick]
        } else {
            &[Tuning::Quick, Tuning::Exhaustive]
        };
        for &tuning in tunings {
            check_typed::<f64>(&h, &name, &a, Algorithm::CsrVector, tuning);
            check_typed::<f32>(&h, &name, &a, Algorithm::CsrVector, tuning);
        }
        // AUTO with QUICK times every method's fixed rule and names them all.
        let mut m = Matrix::from_csr(&h, a.clone());
        m.analyze(&h, Algorithm::Auto, Tuning::Quick).unwrap();
        let p = m.info().params;
        assert!(p.starts_with("AUTO timed "), "{p}");
        let note = p.split(": chose").next().unwrap();
        assert_eq!(
            note.matches(" ms").count(),
            tessera::select::IMPLEMENTED.len(),
            "{p}"
        );
        check_typed::<f64>(&h, &name, &a, Algorithm::Auto, Tuning::Quick);
    }
}

#[test]
fn online_tuning_settles_within_forty_calls_and_every_product_along_the_way_is_right() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    let (name, a) = tessera::io::load("gen:lap3d7:40").unwrap();
    let dev = h.cuda().unwrap().clone();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::CsrVector, Tuning::Online).unwrap();
    assert!(
        m.info().params.contains("online tuning in progress"),
        "{}",
        m.info().params
    );
    let x: Vec<f64> = x_for(a.cols(), 7);
    let dx = DeviceVec::from_slice(&dev, &x).unwrap();
    let dy = DeviceVec::from_slice(&dev, &vec![f64::NAN; a.rows()]).unwrap();
    let mut calls = 0;
    while !m.tuning_settled() {
        m.spmv_device(&h, Operation::NonTranspose, 1.0, dx.addr(), 0.0, dy.addr())
            .unwrap();
        calls += 1;
        // Every few calls wait, as a solver's dot product would; check the product.
        if calls % 4 == 0 {
            let y = dy.to_vec(h.cuda_stream()).unwrap();
            assert_ax(&name, &a, &x, &y);
        }
        assert!(calls <= 120, "ONLINE did not settle: {}", m.info().params);
    }
    let info = m.info().params;
    assert!(info.contains("settled after"), "{info}");
    println!("online: {calls} calls: {info}");
}

/// CSR arrays of a small random matrix in the forms the C API takes.
struct CArrays {
    a: Csr<f64>,
    rp64: Vec<i64>,
    ci64: Vec<i64>,
    vals: Vec<f64>,
}

fn c_arrays() -> CArrays {
    let (_, a) = tessera::io::load("gen:random:3000,2000,9,4").unwrap();
    CArrays {
        rp64: a.row_ptr().iter().map(|&v| v as i64 + 1).collect(),
        ci64: a.col_ind().iter().map(|&v| v as i64 + 1).collect(),
        vals: a.values().to_vec(),
        a,
    }
}

fn ok(s: tessera_status) {
    assert_eq!(s, TESSERA_STATUS_SUCCESS, "{}", last_error());
}

#[test]
fn c_api_takes_device_and_host_arrays_one_based_i64_and_updates_values_from_both() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let c = c_arrays();
    let (rows, cols, nnz) = (c.a.rows(), c.a.cols(), c.a.nnz());
    let d_rp = DeviceVec::from_slice(&dev, &c.rp64).unwrap();
    let d_ci = DeviceVec::from_slice(&dev, &c.ci64).unwrap();
    let d_va = DeviceVec::from_slice(&dev, &c.vals).unwrap();
    let x = x_for(cols, 11);
    let d_x = DeviceVec::from_slice(&dev, &x).unwrap();
    let d_y = DeviceVec::from_slice(&dev, &vec![f64::NAN; rows]).unwrap();
    let mut handle: tessera_handle = std::ptr::null_mut();
    let (mut a_dev, mut a_host): (tessera_matrix, tessera_matrix) =
        (std::ptr::null_mut(), std::ptr::null_mut());
    let (alpha, beta) = (1.0f64, 0.0f64);
    let alpha_p = (&alpha as *const f64).cast::<c_void>();
    let beta_p = (&beta as *const f64).cast::<c_void>();
    let dptr = |v: u64| v as usize as *const c_void;
    // SAFETY: every pointer below is live for the lengths passed (device vectors above, host
    // vectors in `c`), and handles/matrices are used by this thread only.
    unsafe {
        ok(tessera_create_with(&mut handle, TESSERA_BACKEND_CUDA, 0));
        ok(tessera_create_csr(
            handle,
            &mut a_dev,
            rows as i64,
            cols as i64,
            nnz as i64,
            dptr(d_rp.addr()),
            dptr(d_ci.addr()),
            dptr(d_va.addr()),
            TESSERA_INDEX_TYPE_I64,
            TESSERA_INDEX_BASE_ONE,
            TESSERA_VALUE_TYPE_F64,
        ));
        ok(tessera_create_csr(
            handle,
            &mut a_host,
            rows as i64,
            cols as i64,
            nnz as i64,
            c.rp64.as_ptr().cast(),
            c.ci64.as_ptr().cast(),
            c.vals.as_ptr().cast(),
            TESSERA_INDEX_TYPE_I64,
            TESSERA_INDEX_BASE_ONE,
            TESSERA_VALUE_TYPE_F64,
        ));
        let (xd, yd) = (dptr(d_x.addr()), d_y.addr() as usize as *mut c_void);
        // y = A x with alpha = 1, beta = 0 (SAFETY: as for the block).
        let spmv = |a: tessera_matrix, x: *const c_void, y: *mut c_void| {
            tessera_spmv(
                handle,
                TESSERA_OPERATION_NON_TRANSPOSE,
                alpha_p,
                a,
                x,
                beta_p,
                y,
            )
        };
        let mut results = Vec::new();
        for a in [a_dev, a_host] {
            ok(tessera_analyze(
                handle,
                a,
                TESSERA_ALGORITHM_AUTO,
                TESSERA_TUNING_NONE,
            ));
            ok(spmv(a, xd, yd));
            results.push(d_y.to_vec(h.cuda_stream()).unwrap());
        }
        assert_eq!(
            results[0], results[1],
            "device and host input give the same matrix"
        );
        assert_product(
            "c api",
            &c.a,
            Operation::NonTranspose,
            1.0,
            &x,
            0.0,
            &vec![0.0; rows],
            &results[0],
        );

        // Exact device footprint: row_ptr, col_ind, values (sorted input: no value map).
        let mut info: tessera_matrix_info = std::mem::zeroed();
        ok(tessera_matrix_get_info(a_dev, &mut info));
        assert_eq!(
            info.device_bytes,
            ((rows + 1) * 4 + nnz * 4 + nnz * 8) as u64
        );

        // update_values from device memory (scatter kernel), then from host memory.
        let doubled: Vec<f64> = c.vals.iter().map(|v| 2.0 * v).collect();
        let d_doubled = DeviceVec::from_slice(&dev, &doubled).unwrap();
        ok(tessera_update_values(handle, a_dev, dptr(d_doubled.addr())));
        ok(spmv(a_dev, xd, yd));
        let y2 = d_y.to_vec(h.cuda_stream()).unwrap();
        for i in 0..rows {
            assert_eq!(
                y2[i],
                2.0 * results[0][i],
                "row {i} after device update_values"
            );
        }
        // Powers of two scale every product exactly.
        let quadrupled: Vec<f64> = c.vals.iter().map(|v| 4.0 * v).collect();
        ok(tessera_update_values(
            handle,
            a_dev,
            quadrupled.as_ptr().cast(),
        ));
        ok(spmv(a_dev, xd, yd));
        let y4 = d_y.to_vec(h.cuda_stream()).unwrap();
        for i in 0..rows {
            assert_eq!(
                y4[i],
                4.0 * results[0][i],
                "row {i} after host update_values"
            );
        }
        // Re-analysis after a device update keeps the device's values.
        ok(tessera_update_values(handle, a_dev, dptr(d_doubled.addr())));
        ok(tessera_analyze(
            handle,
            a_dev,
            TESSERA_ALGORITHM_CSR_VECTOR,
            TESSERA_TUNING_NONE,
        ));
        ok(spmv(a_dev, xd, yd));
        assert_eq!(d_y.to_vec(h.cuda_stream()).unwrap(), y2);

        // A plain host pointer for x or y is INVALID_POINTER, not a GPU fault; the handle
        // still works afterwards.
        let host_x = x.clone();
        let mut host_y = vec![0.0f64; rows];
        let s = spmv(a_dev, host_x.as_ptr().cast(), yd);
        assert_eq!(s, TESSERA_STATUS_INVALID_POINTER);
        assert!(last_error().contains("host memory"), "{}", last_error());
        let s = spmv(a_dev, xd, host_y.as_mut_ptr().cast());
        assert_eq!(s, TESSERA_STATUS_INVALID_POINTER);
        // A device vector too short for op(A) is INVALID_SIZE.
        let short = DeviceVec::from_slice(&dev, &vec![0.0f64; cols - 1]).unwrap();
        let s = spmv(a_dev, dptr(short.addr()), yd);
        assert_eq!(s, TESSERA_STATUS_INVALID_SIZE, "{}", last_error());
        ok(spmv(a_dev, xd, yd));
        assert_eq!(d_y.to_vec(h.cuda_stream()).unwrap(), y2);

        ok(tessera_destroy_matrix(a_dev));
        ok(tessera_destroy_matrix(a_host));
        ok(tessera_destroy(handle));
    }
}

#[test]
fn products_on_a_non_default_stream_and_a_replayed_cuda_graph_are_right() {
    let _device = whole_device();
    let Some(mut h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let stream = new_stream();
    h.set_stream(stream as usize).unwrap();
    let (name, a) = tessera::io::load("gen:powerlaw:12,8,5").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
    let x = x_for(a.cols(), 2);
    let mut dx = DeviceVec::from_slice(&dev, &x).unwrap();
    let dy = DeviceVec::from_slice(&dev, &vec![f64::NAN; a.rows()]).unwrap();
    let zeros = vec![0.0; a.rows()];
    m.spmv_device(&h, Operation::NonTranspose, 1.0, dx.addr(), 0.0, dy.addr())
        .unwrap();
    let y = dy.to_vec(h.cuda_stream()).unwrap();
    assert_product(&name, &a, Operation::NonTranspose, 1.0, &x, 0.0, &zeros, &y);

    // Capture y = A*x (and y += A^T-free scaling) into a graph, in global capture mode.
    // SAFETY: the stream is ours and idle; graph handles are checked and destroyed below.
    let graph_exec = unsafe {
        assert_eq!(
            sys::cuStreamBeginCapture_v2(
                stream,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL
            ),
            sys::CUresult::CUDA_SUCCESS
        );
        m.spmv_device(&h, Operation::NonTranspose, 1.0, dx.addr(), 0.0, dy.addr())
            .unwrap();
        let mut graph = std::ptr::null_mut();
        assert_eq!(
            sys::cuStreamEndCapture(stream, &mut graph),
            sys::CUresult::CUDA_SUCCESS
        );
        let mut exec = std::ptr::null_mut();
        assert_eq!(
            sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0),
            sys::CUresult::CUDA_SUCCESS
        );
        sys::cuGraphDestroy(graph);
        exec
    };
    for round in 0..3 {
        let x2: Vec<f64> = x_for(a.cols(), 100 + round);
        dx.copy_from(&x2).unwrap();
        // SAFETY: a live graph exec and stream.
        assert_eq!(
            unsafe { sys::cuGraphLaunch(graph_exec, stream) },
            sys::CUresult::CUDA_SUCCESS
        );
        let y = dy.to_vec(h.cuda_stream()).unwrap();
        assert_product(
            &name,
            &a,
            Operation::NonTranspose,
            1.0,
            &x2,
            0.0,
            &zeros,
            &y,
        );
    }
    // SAFETY: destroyed once, after its last launch finished (to_vec waited for the stream).
    unsafe {
        sys::cuGraphExecDestroy(graph_exec);
    }
    h.set_stream(0).unwrap();
    // No work of ours is left on the stream.
    destroy_stream(stream);
}

#[test]
fn device_allocation_failure_is_alloc_failed_and_the_handle_keeps_working() {
    let _device = whole_device();
    let Some(h) = gpu() else { return };
    if common::test_small() {
        println!("skipped: TESSERA_TEST_SMALL=1 (takes all device memory; tests/gpu_faults.rs injects ALLOC_FAILED instead)");
        return;
    }
    let dev = h.cuda().unwrap().clone();
    let (_, a) = tessera::io::load("gen:random:1000000,16,1").unwrap(); // ~200 MB on the device
                                                                        // Take all free device memory: one large block, then 16 MB pieces until none is left.
    let (free, _) = dev.memory_info().unwrap();
    let mut hog = Vec::new();
    let mut want = free.saturating_sub(256 << 20);
    while hog.is_empty() && want > (256 << 20) {
        if let Ok(b) = DeviceBuffer::alloc(&dev, want, "the test's memory hog") {
            hog.push(b);
        }
        want -= 256 << 20;
    }
    while let Ok(b) = DeviceBuffer::alloc(&dev, 16 << 20, "the test's memory hog") {
        hog.push(b);
    }
    if hog.is_empty() {
        println!("skipped: could not reserve device memory for the test");
        return;
    }
    let mut m = Matrix::from_csr(&h, a.clone());
    let e = m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap_err();
    assert_eq!(e.status(), Status::AllocFailed, "{e}");
    assert!(
        e.detail().contains("CUDA_ERROR_OUT_OF_MEMORY"),
        "{}",
        e.detail()
    );
    drop(hog);
    m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
    check_typed::<f32>(&h, "after ALLOC_FAILED", &a, Algorithm::Auto, Tuning::None);
}

/// tessera's memory pool keeps a destroyed matrix's memory (below 64 MiB) for the next create,
/// and `release_cached_memory` (`tessera_release_cached_memory`) hands it back to the driver;
/// with `TESSERA_ALLOC_POOL=0` nothing is kept. Free memory is process-wide: the test takes
/// the whole device.
#[test]
fn a_destroyed_matrix_leaves_its_memory_in_the_pool_until_it_is_released() {
    let _device = whole_device();
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let pooled = std::env::var("TESSERA_ALLOC_POOL").map_or(true, |v| v != "0");
    let free = || {
        tessera::backend::cuda::synchronize(&dev, tessera::backend::cuda::Stream(0)).unwrap();
        dev.memory_info().unwrap().0 as i64
    };
    // 4M entries: about 48 MB of CSR arrays in f64.
    let (_, a) = tessera::io::load("gen:random:100000,100000,40,1").unwrap();
    dev.release_cached_memory().unwrap();
    let free0 = free();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::CsrVector, Tuning::None).unwrap();
    let held = m.info().device_bytes as i64;
    assert!(held >= 48_000_000, "the matrix holds {held} bytes");
    let free_held = free();
    drop(m);
    let free1 = free();
    dev.release_cached_memory().unwrap();
    let free2 = free();
    let mib = |b: i64| b as f64 / (1 << 20) as f64;
    let line = format!(
        "free: {:.1} MiB before, {:.1} with the matrix, {:.1} after its destroy, {:.1} after the release",
        mib(free0),
        mib(free_held),
        mib(free1),
        mib(free2)
    );
    println!("{line}");
    const SLACK: i64 = 8 << 20;
    if pooled {
        assert!(
            free1 + held - SLACK <= free2,
            "the pool kept the matrix's memory: {line}"
        );
    } else {
        assert!(
            free1 + SLACK >= free0,
            "cuMemFree gave the memory back: {line}"
        );
    }
    assert!(
        free2 + SLACK >= free0,
        "every byte back after the release: {line}"
    );
    // The next create still works, from the driver again.
    check_typed::<f64>(
        &h,
        "after the release",
        &a,
        Algorithm::CsrVector,
        Tuning::None,
    );
}

#[test]
fn with_determinism_requested_auto_picks_a_bitwise_reproducible_method_and_says_so() {
    let _device = shared_device();
    let Some(mut h) = gpu() else { return };
    h.set_deterministic(true);
    // A power-law matrix: without the request AUTO would take HOLA (float atomics).
    let (_, a) = tessera::io::load("gen:powerlaw:14,16,3").unwrap();
    for tuning in [Tuning::None, Tuning::Quick] {
        let mut m = Matrix::from_csr(&h, a.clone());
        m.analyze(&h, Algorithm::Auto, tuning).unwrap();
        assert!(m.info().deterministic, "{tuning}: {}", m.info().params);
        let x = x_for(a.cols(), 4);
        let mut runs = Vec::new();
        for _ in 0..3 {
            let mut y = vec![0.0; a.rows()];
            m.spmv(&h, Operation::NonTranspose, 1.0, &x, 0.0, &mut y)
                .unwrap();
            runs.push(y);
        }
        assert!(runs.windows(2).all(|w| w[0] == w[1]));
    }
    // Without the request, AUTO with QUICK times every method and names them.
    h.set_deterministic(false);
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Auto, Tuning::Quick).unwrap();
    let p = m.info().params;
    assert!(p.starts_with("AUTO timed "), "{p}");
    for alg in tessera::select::IMPLEMENTED {
        assert!(p.contains(&format!("{alg} ")), "{alg} not timed: {p}");
    }
}

#[test]
fn a_corrupt_module_cache_entry_is_ignored_and_rebuilt() {
    let _device = shared_device();
    if gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = || {
        // TESSERA_BIN: the CLI's path in a GPU bundle (the build path does not exist there).
        let bin = std::env::var("TESSERA_BIN").unwrap_or(env!("CARGO_BIN_EXE_tessera").into());
        let out = std::process::Command::new(bin)
            .args(["--backend", "cuda", "verify", "gen:lap3d7:12"])
            .env("TESSERA_CACHE_DIR", dir.path())
            // The disk cache serves the run-time compiler: built-in kernels stay out of it.
            .env("TESSERA_BUILTIN_KERNELS", "0")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run();
    let entries: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cubin"))
        .collect();
    assert!(!entries.is_empty(), "the first run wrote no cache entries");
    for p in &entries {
        let mut data = std::fs::read(p).unwrap();
        let n = data.len();
        data[n / 2] ^= 0xff;
        data.truncate(n - 7);
        std::fs::write(p, &data).unwrap();
    }
    run();
    for p in &entries {
        let data = std::fs::read(p).unwrap();
        let key: [u8; 32] = data[16..48].try_into().unwrap();
        assert!(
            tessera::backend::cuda::cache::read(dir.path(), &key).is_some(),
            "{} was not rewritten intact",
            p.display()
        );
    }
}

#[test]
fn with_kernels_built_in_every_method_runs_without_compiling_anything() {
    let _device = shared_device();
    let Some(h) = gpu() else {
        return;
    };
    let Some(arch) = h.cuda().expect("a CUDA handle").builtin_arch() else {
        println!(
            "skipped: no built-in kernels run on this GPU ({})",
            tessera::backend::cuda::builtin::summary()
        );
        return;
    };
    // A fresh process with an empty disk cache: every method, both value types, both
    // operations. Had anything been compiled, NVRTC's image would be in the cache now.
    let dir = tempfile::tempdir().unwrap();
    let bin = std::env::var("TESSERA_BIN").unwrap_or(env!("CARGO_BIN_EXE_tessera").into());
    let out = std::process::Command::new(bin)
        .args([
            "--backend",
            "cuda",
            "verify",
            "--precision",
            "both",
            "gen:powerlaw:12,8,3",
        ])
        .env("TESSERA_CACHE_DIR", dir.path())
        .env_remove("TESSERA_BUILTIN_KERNELS")
        .env_remove("TESSERA_KERNELS_DIR")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    let compiled: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(
        compiled.is_empty(),
        "sm_{arch} is built in, yet {} kernels were compiled: {compiled:?}\n{text}",
        compiled.len()
    );
}

#[test]
fn a_matrix_outlives_its_handle_and_four_threads_multiply_it_through_their_own_handles() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    let (name, a) = tessera::io::load("gen:random:20000,15000,12,6").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Auto, Tuning::Online).unwrap();
    drop(h); // the matrix keeps the device context and its kernels alive
    let m = &m;
    let a = &a;
    let name = &name;
    std::thread::scope(|s| {
        for t in 0..4u64 {
            s.spawn(move || {
                let h = Handle::with_backend(BackendKind::Cuda, 0).unwrap();
                for round in 0..25 {
                    let op = if (t + round) % 2 == 0 {
                        Operation::NonTranspose
                    } else {
                        Operation::Transpose
                    };
                    let (xl, yl) = m.vector_lengths(op);
                    let x = x_for(xl, 10 * t + round);
                    let y0 = x_for(yl, 99);
                    let mut y = y0.clone();
                    m.spmv(&h, op, 1.5, &x, -0.5, &mut y).unwrap();
                    assert_product(name, a, op, 1.5, &x, -0.5, &y0, &y);
                }
            });
        }
    });
}

#[test]
fn a_background_builds_copies_of_several_mib_arrive_whole_both_ways() {
    // Inside allocating_on (a background build's device half) copies to and from pageable
    // memory go through the device's 1 MiB page-locked bounce buffer in chunks; outside it,
    // through the driver. 5 MiB and three values: five whole chunks and a partial one; and one
    // small copy.
    use tessera::backend::cuda::{allocating_on, copy_to_host, OwnedStream};
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let own = OwnedStream::new(&dev).unwrap();
    for n in [(5 << 20) / 4 + 3, 77] {
        let src: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        for background in [false, true] {
            let run = || -> Result<Vec<u32>, tessera::Error> {
                let b = DeviceBuffer::from_slice(&dev, own.stream(), &src, "a test's array")?;
                let mut back = vec![0u32; n];
                copy_to_host(&dev, own.stream(), b.addr(), &mut back)?;
                Ok(back)
            };
            let back = if background {
                allocating_on(own.stream(), run)
            } else {
                run()
            }
            .unwrap();
            let first_wrong = back.iter().zip(&src).position(|(a, b)| a != b);
            assert_eq!(
                first_wrong, None,
                "{n} values, in a background build: {background}"
            );
        }
    }
}
