//! HOLA on a real GPU against the f64 product (f32/f64, both operations, alpha/beta cases with
//! NaN in y for beta = 0, update_values from host and device memory): the shared matrices, the
//! generated edge cases and HOLA's own ones (many consecutive empty rows, more rows than a
//! block holds, rows longer than a block, rows ending exactly on thread and block boundaries,
//! fewer non-zeros than one block); every tuning candidate; the device's row-start buffer
//! against Alg. 2 on the host. Without a GPU every test prints one "skipped: no CUDA device"
//! line and returns.

mod common;

use common::gpu::gpu;

use common::products::{check_method, check_typed, shared_matrix_files, EDGE_CASES};
use tessera::backend::cuda::csr::GpuCsr;
use tessera::methods::hola;
use tessera::{Algorithm, Csr, Matrix, Tuning};

/// Rows of every length 1..=9, 16, 32, 64, 2048, 2049, 4096 separated by runs of 0..5 empty
/// rows: row ends land on every thread offset and on block boundaries of every NPB.
fn boundaries() -> Csr<f64> {
    let mut t = Vec::new();
    let mut r = 0;
    for len in (1..=9).chain([16, 32, 64, 7, 2048, 3, 2049, 4096, 1, 8, 8, 8]) {
        for c in 0..len {
            t.push((r, (c * 3 + r) % 5000, 1.0 + (c % 13) as f64));
        }
        r += 1 + (len % 6);
    }
    Csr::from_triplets(r + 3, 5000, &t).unwrap()
}

/// Many more rows than non-zeros: blocks take the COO path.
fn hypersparse() -> Csr<f64> {
    let t: Vec<_> = (0..20000)
        .map(|i| (i * 41, (i * 7) % 3000, 1.0 + (i % 11) as f64))
        .collect();
    Csr::from_triplets(20000 * 41 + 100, 3000, &t).unwrap()
}

fn edge_matrices() -> Vec<(String, Csr<f64>)> {
    let mut v: Vec<(String, Csr<f64>)> = EDGE_CASES
        .iter()
        .chain(&[
            "gen:emptyrows:50000,6,7",
            "gen:onerow:20,20000,20000",
            "gen:circuit:20000,5,3,15000,9",
            "gen:random:30,40,5,3", // fewer non-zeros than one block
        ])
        .map(|s| tessera::io::load(s).unwrap())
        .collect();
    v.push(("boundaries".into(), boundaries()));
    v.push(("hypersparse".into(), hypersparse()));
    v
}

#[test]
fn hola_edge_cases_match_the_f64_product_on_the_gpu() {
    let _device = common::gpu::shared_device();
    let Some(h) = gpu() else { return };
    for (name, a) in edge_matrices() {
        check_method(&h, &name, &a, Algorithm::Hola, Tuning::None);
    }
}

#[test]
fn hola_matches_the_f64_product_on_every_shared_matrix_on_the_gpu() {
    let _device = common::gpu::shared_device();
    let Some(h) = gpu() else { return };
    let Some(files) = shared_matrix_files() else {
        return;
    };
    for f in &files {
        let (name, a) = tessera::io::load(f.to_str().unwrap()).unwrap();
        check_method(&h, &name, &a, Algorithm::Hola, Tuning::None);
    }
}

#[test]
fn hola_every_compiled_configuration_gives_the_right_product() {
    let _device = common::gpu::shared_device();
    let Some(h) = gpu() else { return };
    for (name, a) in edge_matrices().into_iter().skip(5) {
        // EXHAUSTIVE times all 12 configurations; the product with the winner is checked, and
        // each configuration is checked by the row-start test and by QUICK on other matrices.
        let t = if common::test_small() {
            Tuning::Quick
        } else {
            Tuning::Exhaustive
        };
        check_typed::<f64>(&h, &name, &a, Algorithm::Hola, t);
        check_typed::<f32>(&h, &name, &a, Algorithm::Hola, Tuning::Quick);
    }
    let (_, a) = tessera::io::load("gen:powerlaw:14,8,3").unwrap();
    let mut m = Matrix::from_csr(&h, a);
    m.analyze(&h, Algorithm::Hola, Tuning::Quick).unwrap();
    let p = m.info().params;
    assert!(p.contains("tuned: 5 candidates timed"), "{p}");
    assert!(!m.info().deterministic);
}

#[test]
fn hola_row_start_buffer_built_on_the_device_equals_algorithm_2() {
    let _device = common::gpu::shared_device();
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let stream = h.cuda_stream();
    for (name, a) in edge_matrices() {
        let a = a.convert::<f64>();
        let g = GpuCsr::upload(
            &dev,
            stream,
            &a,
            tessera::methods::transpose::gpu_launch(&a.stats(), 132),
        )
        .unwrap();
        if a.nnz() == 0 {
            continue;
        }
        for threads in hola::params::THREADS_VALUES {
            for npt in hola::params::NPT_VALUES {
                let p = hola::Params {
                    threads: *threads as u32,
                    npt: *npt as u32,
                    sort: false,
                };
                let got = hola::cuda::row_starts_on_device(&dev, stream, &g, p).unwrap();
                let want = hola::format::row_starts(a.row_ptr(), p.npb());
                assert_eq!(got, want, "{name} {p}");
            }
        }
    }
}

#[test]
fn hola_large_matrices_with_long_and_many_rows_match_on_the_gpu() {
    let _device = common::gpu::shared_device();
    let Some(h) = gpu() else { return };
    if common::test_small() {
        println!("skipped: TESSERA_TEST_SMALL=1 (large matrices)");
        return;
    }
    for spec in [
        "gen:lap3d7:48",
        "gen:circuit:200000,5,4,100000,1",
        "gen:powerlaw:17,16,1",
    ] {
        let (name, a) = tessera::io::load(spec).unwrap();
        check_typed::<f64>(&h, &name, &a, Algorithm::Hola, Tuning::None);
    }
}

/// Captures y = alpha*A*x + beta*y into a CUDA graph on a non-default stream and replays it
/// with new x in HOLA's three modes: no row longer than a block plus one (the core kernel
/// alone), long rows on a small grid (the one-launch carry kernel: its counters must be back at
/// zero after every launch), long rows on a large grid (prescale + atomics).
#[test]
fn hola_products_replayed_from_a_cuda_graph_are_right_in_every_mode() {
    let _device = common::gpu::whole_device();
    use tessera::backend::cuda::DeviceVec;
    use tessera::Operation;
    let Some(mut h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let stream = common::gpu::new_stream();
    h.set_stream(stream as usize).unwrap();
    for (spec, mode) in [
        ("gen:powerlaw:12,8,5", " own"),
        ("gen:circuit:20000,5,3,15000,9", " carry"),
        ("gen:circuit:200000,5,4,50000,3", " prescale"),
    ] {
        let (name, a) = tessera::io::load(spec).unwrap();
        let mut m = Matrix::from_csr(&h, a.clone());
        m.analyze(&h, Algorithm::Hola, Tuning::None).unwrap();
        let params = m.info().params;
        let y0 = common::products::x_for(a.rows(), 9);
        let mut dx = DeviceVec::from_slice(&dev, &common::products::x_for(a.cols(), 1)).unwrap();
        let dy = DeviceVec::from_slice(&dev, &y0).unwrap();
        let exec = common::gpu::capture(stream, || {
            m.spmv_device(&h, Operation::NonTranspose, 2.0, dx.addr(), 0.5, dy.addr())
                .unwrap()
        });
        common::gpu::replay_checked(
            &h,
            exec,
            stream,
            &mut dx,
            &dy,
            &a,
            y0,
            &format!("{name} ({params})"),
        );
        assert!(params.contains(mode), "{spec}: {params}, expected{mode}");
    }
    h.set_stream(0).unwrap();
    // No work of ours is left on the stream.
    common::gpu::destroy_stream(stream);
}

/// BRC's products read the matrix arrays with the streaming hint on matrices larger than the
/// L2 and with plain loads on smaller ones (`Device::streams_past_l2`); both ways, forced on
/// every matrix here, give the right product (HOLA, which always streams, beside it).
#[test]
fn brc_is_right_with_the_matrix_arrays_read_either_way() {
    let _device = common::gpu::shared_device();
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let mut matrices = edge_matrices();
    matrices.push(tessera::io::load("gen:lap3d7:40").unwrap());
    for on in [true, false] {
        dev.force_stream_loads(Some(on));
        assert_eq!(dev.streams_past_l2(0), on);
        for (name, a) in &matrices {
            for alg in [Algorithm::Hola, Algorithm::Brc] {
                check_method(
                    &h,
                    &format!("{name}, streaming loads {on}"),
                    a,
                    alg,
                    Tuning::None,
                );
            }
        }
    }
    dev.force_stream_loads(None);
    assert!(!dev.streams_past_l2(1 << 20) && dev.streams_past_l2(usize::MAX / 2));
}
