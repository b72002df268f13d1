//! TILE on a CUDA device: the f64 product on every shared matrix, the edge cases and TILE's
//! own (sizes not divisible by 16, long tile rows split across warps, dense blocks, the
//! seven-format matrix), the kernels against the host reference over the same arrays with
//! deferral forced on and off (`TileGpu::with_params` with an explicit `TileParams`), QUICK
//! and EXHAUSTIVE tuning, update_values (host and device memory, through both parts of the
//! value map), the deterministic variant. Without a GPU every test prints one skip line.

mod common;

use common::gpu::gpu;
use common::products::{assert_product, check_method, shared_matrix_files, x_for, EDGE_CASES};
use tessera::backend::cuda::csr::GpuCsr;
use tessera::backend::cuda::DeviceVec;
use tessera::methods::tile::params::TBALANCE_UNLIMITED;
use tessera::methods::tile::{cuda::TileGpu, format, reference, TileParams};
use tessera::methods::{GpuMethod, Request};
use tessera::{Algorithm, Csr, Handle, Matrix, Operation, Scalar, Tuning};

/// A plain and a deterministic handle.
fn gpus() -> Option<[Handle; 2]> {
    let h = gpu()?;
    let mut d = gpu()?;
    d.set_deterministic(true);
    Some([h, d])
}

/// TILE's own cases (as in tests/tile_host.rs).
const TILE_CASES: &[&str] = &[
    "gen:random:17,33,5,1",
    "gen:random:19,5000,300,4",
    "gen:dense:40,300",
    "gen:elasticity:5",
    "gen:stencil27:9",
    "gen:uniform:3001,9,3",
];

/// 48x48, nine tiles: CSR, COO, ELL / HYB, Dns, DnsRow / DnsCol, two empty (the unit test's
/// matrix in src/methods/tile/reference.rs).
fn seven_formats() -> Csr<f64> {
    let mut t = Vec::new();
    let mut put = |tr: usize, tc: usize, r: usize, c: usize| {
        let (gr, gc) = (tr * 16 + r, tc * 16 + c);
        t.push((gr, gc, 1.0 + ((48 * gr + gc) % 97) as f64 / 50.0));
    };
    for r in 0..16 {
        for j in 0..1 + r % 3 {
            put(0, 0, r, (r + 3 * j) % 16);
        }
        put(0, 2, r, r);
        put(0, 2, r, (r + 5) % 16);
        if r == 0 {
            (0..14).for_each(|c| put(1, 0, 0, c));
        } else {
            put(1, 0, r, r);
        }
        for c in 0..16 {
            if (r * 16 + c) % 5 != 0 {
                put(1, 1, r, c);
            }
        }
        put(2, 0, r, 4);
        put(2, 0, r, 9);
    }
    for (r, c) in [(0, 2), (5, 7), (9, 1)] {
        put(0, 1, r, c);
    }
    for c in 0..16 {
        put(1, 2, 3, c);
        put(1, 2, 10, c);
    }
    Csr::from_triplets(48, 48, &t).unwrap()
}

#[test]
fn tile_gpu_matches_the_f64_product_on_every_shared_matrix() {
    let Some(h) = gpu() else { return };
    let Some(files) = shared_matrix_files() else {
        return;
    };
    for f in &files {
        let (name, a) = tessera::io::load(f.to_str().unwrap()).unwrap();
        check_method(&h, &name, &a, Algorithm::Tile, Tuning::None);
    }
}

#[test]
fn tile_gpu_edge_cases_and_tile_shapes_match_the_f64_product_in_both_variants() {
    let Some(hs) = gpus() else { return };
    for h in &hs {
        check_method(
            h,
            "seven formats",
            &seven_formats(),
            Algorithm::Tile,
            Tuning::None,
        );
        for spec in EDGE_CASES.iter().chain(TILE_CASES) {
            let (name, a) = tessera::io::load(spec).unwrap();
            check_method(h, &name, &a, Algorithm::Tile, Tuning::None);
            let mut m = Matrix::from_csr(h, a.clone());
            m.analyze(h, Algorithm::Tile, Tuning::None).unwrap();
            let info = m.info();
            if h.deterministic() {
                assert!(info.deterministic, "{name}: {}", info.params);
            }
            assert!(info.device_bytes > 0 || a.rows() == 0, "{name}");
        }
    }
}

/// The kernels with explicit parameters against the host reference over the same arrays and
/// against the f64 product; then new values (host upload + refresh through the value map).
fn gpu_vs_reference<T: Scalar>(h: &Handle, name: &str, a64: &Csr<f64>, p: TileParams) {
    let dev = h.cuda().unwrap();
    let stream = h.cuda_stream();
    let mut a = a64.convert::<T>();
    let stats = a.stats();
    let csr = GpuCsr::upload(
        dev,
        stream,
        &a,
        tessera::methods::transpose::gpu_launch(&stats, dev.sm_count()),
    )
    .unwrap();
    let req = Request {
        host: Some(&a),
        stats: &stats,
        tuning: Tuning::None,
        deterministic: false,
    };
    let m = TileGpu::with_params(dev, stream, &csr, &req, p, "test").unwrap();
    let mut f = format::build(&a, &p).unwrap();
    let x: Vec<T> = x_for(a.cols(), 3).into_iter().map(T::from_f64).collect();
    for round in 0..2 {
        if round == 1 {
            // New values: through the value map on the device into both parts.
            a.values_mut()
                .iter_mut()
                .enumerate()
                .for_each(|(k, v)| *v = T::from_f64(((k * 7) % 11) as f64 - 5.0));
            csr.upload_values(stream, a.values()).unwrap();
            m.refresh_values(&csr, stream).unwrap();
            f.update_values(&a);
        }
        let a_seen = a.convert::<f64>();
        for (alpha, beta) in [(1.0, 0.0), (-2.0, 0.5)] {
            let y0: Vec<T> = x_for(a.rows(), 5).into_iter().map(T::from_f64).collect();
            let start = if beta == 0.0 {
                vec![T::from_f64(f64::NAN); a.rows()]
            } else {
                y0.clone()
            };
            let dx = DeviceVec::from_slice(dev, &x).unwrap();
            let dy = DeviceVec::from_slice(dev, &start).unwrap();
            m.spmv(
                &csr,
                stream,
                T::from_f64(alpha),
                dx.addr(),
                T::from_f64(beta),
                dy.addr(),
            )
            .unwrap();
            let y_gpu = dy.to_vec(stream).unwrap();
            let mut y_ref = start.clone();
            reference::spmv(&f, T::from_f64(alpha), &x, T::from_f64(beta), &mut y_ref);
            let what = format!("{name} {p} round {round}");
            for (yy, who) in [(&y_gpu, "GPU"), (&y_ref, "reference")] {
                assert_product(
                    &format!("{what} ({who})"),
                    &a_seen,
                    Operation::NonTranspose,
                    alpha,
                    &x,
                    beta,
                    &y0,
                    yy,
                );
            }
        }
    }
    assert_eq!(
        m.deterministic(),
        f.split_rows.is_empty() && f.deferred.is_none(),
        "{name} {p}"
    );
}

#[test]
fn tile_gpu_kernels_match_the_reference_with_deferral_forced_on_and_off() {
    let Some(h) = gpu() else { return };
    let mut cases: Vec<(String, Csr<f64>)> = vec![("seven formats".into(), seven_formats())];
    for spec in [
        "gen:powerlaw:12,8,2",
        "gen:circuit:3000,5,2,2500,4",
        "gen:random:4,100000,700,2",
        "gen:random:100000,4,3,2",
        "gen:random:19,5000,300,4",
        "gen:emptyrows:2000,8,3",
        "gen:dense:37,53",
        "gen:elasticity:4",
    ] {
        cases.push(tessera::io::load(spec).unwrap());
    }
    for (name, a) in &cases {
        for deferred in [false, true] {
            for tbalance in [1, 8, TBALANCE_UNLIMITED] {
                let p = TileParams {
                    tbalance,
                    ..TileParams::paper(deferred)
                };
                gpu_vs_reference::<f64>(&h, name, a, p);
                gpu_vs_reference::<f32>(&h, name, a, p);
            }
        }
    }
}

#[test]
fn tile_gpu_quick_and_exhaustive_tuning_match_and_say_how_they_chose() {
    let Some(h) = gpu() else { return };
    for spec in [
        "gen:powerlaw:14,8,2",
        "gen:elasticity:8",
        "gen:random:19,5000,300,4",
    ] {
        let (name, a) = tessera::io::load(spec).unwrap();
        for tuning in [Tuning::Quick, Tuning::Exhaustive] {
            check_method(&h, &name, &a, Algorithm::Tile, tuning);
            let mut m = Matrix::from_csr(&h, a.clone());
            m.analyze(&h, Algorithm::Tile, tuning).unwrap();
            let params = m.info().params;
            assert!(params.contains("tuned:"), "{name} {tuning}: {params}");
        }
    }
}

#[test]
fn tile_gpu_deterministic_variant_gives_bitwise_equal_products_run_to_run() {
    let Some(mut h) = gpu() else { return };
    h.set_deterministic(true);
    let (_, a) = tessera::io::load("gen:random:19,5000,300,4").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Tile, Tuning::None).unwrap();
    assert!(m.info().deterministic, "{}", m.info().params);
    let dev = h.cuda().unwrap();
    let x = DeviceVec::from_slice(dev, &x_for(a.cols(), 9)).unwrap();
    let y0 = x_for(a.rows(), 2);
    let mut out = Vec::new();
    for _ in 0..2 {
        let y = DeviceVec::from_slice(dev, &y0).unwrap();
        m.spmv_device(&h, Operation::NonTranspose, 1.5, x.addr(), -0.25, y.addr())
            .unwrap();
        out.push(y.to_vec(h.cuda_stream()).unwrap());
    }
    assert!(out[0]
        .iter()
        .zip(&out[1])
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}

/// Split tile rows add with atomics into a y pre-scaled by a separate launch; nothing is shared
/// between products. Eight threads, each with its own stream, queue 20 products of one matrix
/// back to back (y += 1.5*A*x each time).
#[test]
fn tile_gpu_products_queued_on_eight_streams_add_up() {
    let Some(h) = gpu() else { return };
    let (name, a) = tessera::io::load("gen:random:19,5000,300,4").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Tile, Tuning::None).unwrap();
    assert!(
        m.info().params.contains("2 split tile rows"),
        "{}",
        m.info().params
    );
    common::gpu::queued_products_on_streams(&m, &a, &name, 8, 20);
}

/// The fixed rule halves tbalance when the work items would fill under half of the GPU and a
/// tile row is split anyway (`params::small_grid`): a 32 x 256 dense matrix has two tile rows
/// of 16 tiles, two items each at the paper's tbalance 8 and four at 4 (added with atomics);
/// the products stay right.
#[test]
fn tile_gpu_fixed_rule_halves_tbalance_on_a_small_grid() {
    let Some(h) = gpu() else { return };
    let (name, a) = tessera::io::load("gen:dense:32,256").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Tile, Tuning::None).unwrap();
    let p = m.info().params;
    assert!(
        p.contains("tbalance=4") && p.contains("8 warps, 2 split tile rows"),
        "{p}"
    );
    common::gpu::queued_products_on_streams(&m, &a, &name, 2, 5);
}
