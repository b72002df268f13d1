//! BRC on a real GPU: every shared matrix and the generated edge cases against the f64 product
//! (f32/f64, both operations, alpha/beta cases with NaN in y for beta = 0, update_values from
//! host and device memory), BRC's own paths (coarsening, one dense row, ELL-only hybrid, empty
//! rows) in the atomic and the deterministic variant, the kernels against the host reference
//! for explicit shapes (the paper's B1 = 3 example, B1 = 64, rep = 3, the hybrid), QUICK and
//! EXHAUSTIVE tuning, and the deterministic variant's bitwise reproducibility. Without a GPU
//! every test prints one "skipped: no CUDA device" line and returns.

mod common;

use common::gpu::gpu;

use common::products::{assert_product, check_method, shared_matrix_files, x_for, EDGE_CASES};
use tessera::backend::cuda::csr::GpuCsr;
use tessera::backend::cuda::DeviceVec;
use tessera::methods::brc::format::{self, Variant};
use tessera::methods::brc::{cuda::BrcGpu, reference, Params};
use tessera::methods::{GpuMethod, Request};
use tessera::{Algorithm, Csr, Handle, Matrix, Operation, Scalar, Tuning};

/// A plain and a deterministic handle.
fn gpus() -> Option<[Handle; 2]> {
    let h = gpu()?;
    let mut d = gpu()?;
    d.set_deterministic(true);
    Some([h, d])
}

/// BRC's own cases (the same as tests/brc_host.rs): sigma > mu, one dense row, rows all of one
/// length (ELL-only hybrid), a low-deviation stencil (hybrid), half the rows empty, a small
/// dense block (pure BRC). (`rep` > 1 is covered with explicit shapes below: the fixed rule
/// coarsens only when the grid holds several waves of 132 SMs' warps.)
const BRC_CASES: &[&str] = &[
    "gen:powerlaw:14,8,2",
    "gen:circuit:20000,5,20,3000,4",
    "gen:onerow:6000,6000,6000",
    "gen:uniform:6000,9,3",
    "gen:lap3d7:20",
    "gen:emptyrows:5000,6,4",
    "gen:dense:40,300",
];

#[test]
fn brc_gpu_matches_the_f64_product_on_every_shared_matrix() {
    let Some(h) = gpu() else { return };
    let Some(files) = shared_matrix_files() else {
        return;
    };
    for f in &files {
        let (name, a) = tessera::io::load(f.to_str().unwrap()).unwrap();
        check_method(&h, &name, &a, Algorithm::Brc, Tuning::None);
    }
}

#[test]
fn brc_gpu_edge_cases_and_brc_paths_match_the_f64_product_in_both_variants() {
    let Some(hs) = gpus() else { return };
    for h in &hs {
        for spec in EDGE_CASES.iter().chain(BRC_CASES) {
            let (name, a) = tessera::io::load(spec).unwrap();
            check_method(h, &name, &a, Algorithm::Brc, Tuning::None);
            let mut m = Matrix::from_csr(h, a.clone());
            m.analyze(h, Algorithm::Brc, Tuning::None).unwrap();
            let info = m.info();
            assert_eq!(info.deterministic, h.deterministic(), "{name}");
            assert!(info.params.contains("padding="), "{}", info.params);
            assert!(info.device_bytes > 0 || a.rows() == 0, "{name}");
        }
    }
}

/// The paper's example (Eq. 1) with A..J = 1..10.
fn paper_matrix() -> Csr<f64> {
    let t: Vec<(usize, usize, f64)> = [
        (0, 1),
        (0, 3),
        (1, 2),
        (1, 4),
        (2, 0),
        (2, 1),
        (2, 2),
        (2, 4),
        (2, 5),
        (3, 3),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(r, c))| (r, c, i as f64 + 1.0))
    .collect();
    Csr::from_triplets(4, 6, &t).unwrap()
}

/// The kernels with explicit parameters against the host reference over the same arrays and
/// against the f64 product.
/// `a` uploaded as a device CSR on `h`'s device and stream.
fn upload<T: Scalar>(h: &Handle, a: &Csr<T>) -> GpuCsr<T> {
    let dev = h.cuda().unwrap();
    let launch = tessera::methods::transpose::gpu_launch(&a.stats(), dev.sm_count());
    GpuCsr::upload(dev, h.cuda_stream(), a, launch).unwrap()
}

fn gpu_vs_reference<T: Scalar>(h: &Handle, name: &str, a64: &Csr<f64>, p: Params) {
    let dev = h.cuda().unwrap();
    let stream = h.cuda_stream();
    let a = a64.convert::<T>();
    let stats = a.stats();
    let csr = upload(h, &a);
    let req = Request {
        host: Some(&a),
        stats: &stats,
        tuning: Tuning::None,
        deterministic: h.deterministic(),
    };
    let m = BrcGpu::with_params(dev, stream, &csr, &req, p, "test").unwrap();
    let variant = if h.deterministic() {
        Variant::Deterministic
    } else {
        Variant::Atomic
    };
    let f = format::build(
        &a,
        p.b1 as usize,
        p.b2 as usize,
        p.ell_width as usize,
        variant,
    )
    .unwrap();
    let what = format!("{name} {p} deterministic={}", h.deterministic());
    products_match(h, &m, &csr, &a, (&f, p), &what);
    assert_eq!(m.deterministic(), h.deterministic());
}

/// `m`'s product on the device (y starting as NaN for beta = 0) and the host reference over the
/// format `f` built with `p`, both against the f64 product, for two (alpha, beta).
fn products_match<T: Scalar>(
    h: &Handle,
    m: &BrcGpu<T>,
    csr: &GpuCsr<T>,
    a: &Csr<T>,
    (f, p): (&format::Brc<T>, Params),
    what: &str,
) {
    let (dev, stream) = (h.cuda().unwrap(), h.cuda_stream());
    let x: Vec<T> = x_for(a.cols(), 3).into_iter().map(T::from_f64).collect();
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
            csr,
            stream,
            T::from_f64(alpha),
            dx.addr(),
            T::from_f64(beta),
            dy.addr(),
        )
        .unwrap();
        let y_gpu = dy.to_vec(stream).unwrap();
        let mut y_ref = start.clone();
        reference::spmv(
            f,
            p.rep,
            p.block_size,
            T::from_f64(alpha),
            &x,
            T::from_f64(beta),
            &mut y_ref,
        );
        assert_product(
            &format!("{what} (GPU)"),
            &a_seen,
            Operation::NonTranspose,
            alpha,
            &x,
            beta,
            &y0,
            &y_gpu,
        );
        assert_product(
            &format!("{what} (reference)"),
            &a_seen,
            Operation::NonTranspose,
            alpha,
            &x,
            beta,
            &y0,
            &y_ref,
        );
    }
}

#[test]
fn brc_gpu_kernels_match_the_host_reference_for_explicit_edge_shapes() {
    let Some(hs) = gpus() else { return };
    let p = |b1, b2, rep, ell_width| Params {
        b1,
        b2,
        rep,
        ell_width,
        block_size: 128,
    };
    let (_, pl) = tessera::io::load("gen:powerlaw:13,8,5").unwrap();
    let (_, st) = tessera::io::load("gen:lap3d7:18").unwrap();
    let cases: Vec<(&str, Csr<f64>, Params)> = vec![
        ("paper Figure 2-b", paper_matrix(), p(3, 4, 1, 0)),
        ("paper Figure 2-a", paper_matrix(), p(3, 100, 1, 0)),
        ("paper, hybrid", paper_matrix(), p(3, 2, 2, 1)),
        ("power-law B2=1", pl.clone(), p(32, 1, 1, 0)),
        ("power-law rep=3", pl.clone(), p(32, 16, 3, 0)),
        ("power-law B1=64", pl.clone(), p(64, 24, 2, 0)),
        ("power-law B1=5", pl.clone(), p(5, 7, 1, 0)),
        ("power-law hybrid", pl, p(32, 8, 2, 2)),
        ("stencil ELL only", st.clone(), p(32, 8, 1, 7)),
        ("stencil hybrid k=5", st, p(32, 2, 1, 5)),
    ];
    for h in &hs {
        for (name, a, params) in &cases {
            gpu_vs_reference::<f64>(h, name, a, *params);
            gpu_vs_reference::<f32>(h, name, a, *params);
        }
    }
}

#[test]
fn brc_gpu_quick_and_exhaustive_tuning_choose_parameters_that_still_give_the_right_product() {
    let Some(hs) = gpus() else { return };
    for h in &hs {
        for spec in [
            "gen:powerlaw:14,8,2",
            "gen:lap3d7:24",
            "gen:uniform:6000,9,3",
        ] {
            let (name, a) = tessera::io::load(spec).unwrap();
            check_method(h, &name, &a, Algorithm::Brc, Tuning::Quick);
            let mut m = Matrix::from_csr(h, a.clone());
            m.analyze(h, Algorithm::Brc, Tuning::Quick).unwrap();
            let params = m.info().params;
            assert!(
                params.contains("timed on the device") || params.contains("empty"),
                "{params}"
            );
        }
        if !common::test_small() {
            let (name, a) = tessera::io::load("gen:circuit:20000,5,20,3000,4").unwrap();
            check_method(h, &name, &a, Algorithm::Brc, Tuning::Exhaustive);
        }
    }
}

#[test]
fn brc_gpu_deterministic_variant_gives_bitwise_equal_products_run_to_run() {
    let Some([plain, h]) = gpus() else { return };
    // Split rows (hubs longer than B2) everywhere: the atomic variant would add in any order.
    let spec = if common::test_small() {
        "gen:powerlaw:15,8,3"
    } else {
        "gen:powerlaw:18,8,3"
    };
    let (_, a) = tessera::io::load(spec).unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Brc, Tuning::None).unwrap();
    let info = m.info();
    assert!(info.deterministic, "{}", info.params);
    assert!(!info.params.contains("split_rows=0,"), "{}", info.params);
    let x = x_for(a.cols(), 9);
    let y0 = x_for(a.rows(), 2);
    let mut first: Option<Vec<f64>> = None;
    for _ in 0..5 {
        let mut y = y0.clone();
        m.spmv(&h, Operation::NonTranspose, 1.5, &x, -0.25, &mut y)
            .unwrap();
        match &first {
            None => first = Some(y),
            Some(f) => assert!(
                f.iter().zip(&y).all(|(a, b)| a.to_bits() == b.to_bits()),
                "two runs of the deterministic variant differ"
            ),
        }
    }
    // The plain handle's analysis says it is not deterministic.
    let mut m = Matrix::from_csr(&plain, a);
    m.analyze(&plain, Algorithm::Brc, Tuning::None).unwrap();
    assert!(!m.info().deterministic);
}

/// The deterministic variant keeps one partial-sum buffer per matrix. Eight threads, each with
/// its own stream, queue 20 products of one matrix back to back (y += 1.5*A*x each time): the
/// products must wait for each other on the device instead of sharing the buffer.
#[test]
fn brc_gpu_deterministic_products_queued_on_eight_streams_do_not_share_partials() {
    let Some(mut h) = gpu() else { return };
    h.set_deterministic(true);
    // Power-law rows: many rows split across blocks, so the partial buffer is in use.
    let (name, a) = tessera::io::load("gen:powerlaw:15,16,3").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Brc, Tuning::None).unwrap();
    assert!(m.info().deterministic, "{}", m.info().params);
    common::gpu::queued_products_on_streams(&m, &a, &name, 8, 20);
}

/// BRC with TUNING_NONE on a matrix kept on the device, whose rows are all about as long,
/// builds its pure ELL form on the device: the same columns (padding included), values and
/// value map as format.rs builds on the host for that width, bitwise the same products, values
/// updated through the map; and AUTO's worker builds it on the device (no host copy).
#[test]
fn brc_gpu_builds_an_ell_part_on_the_device_equal_to_the_host_format() {
    let Some([h, _]) = gpus() else { return };
    let dev = h.cuda().unwrap();
    let stream = h.cuda_stream();
    for spec in [
        "gen:lap3d7:21",
        "gen:stencil27:9",
        "gen:uniform:3001,12,5",
        "gen:grid2d:77",
        "gen:random:700,900,6,3",
        // Rows of 81 and 90: wider than 64, the shared memory of a group up to 96.
        "gen:elasticity:10",
        "gen:uniform:2000,90,3",
        // Over 1M non-zeros: AUTO's rule picks BRC.
        "gen:lap3d7:60",
    ] {
        let (_, a) = tessera::io::load(spec).unwrap();
        let stats = a.stats();
        assert!(
            tessera::methods::brc::cuda::builds_on_device(&stats),
            "{spec}"
        );
        let csr = upload(&h, &a);
        let on_device = Request {
            host: None,
            stats: &stats,
            tuning: Tuning::None,
            deterministic: false,
        };
        let m = BrcGpu::prepare(dev, stream, &csr, &on_device).unwrap();
        assert!(
            m.describe().contains("built on the device"),
            "{}",
            m.describe()
        );
        let f = format::build(&a, 32, 1, stats.max, Variant::Atomic).unwrap();
        assert_eq!(f.num_blocks(), 0, "{spec}: a pure ELL part");
        let (col, val, slot) = m.download(stream).unwrap();
        assert_eq!(col, f.col, "{spec}: columns (padding included)");
        assert_eq!(val, f.values, "{spec}: values");
        assert_eq!(slot, f.value_slot, "{spec}: value map");
        // The product matches the f64 one; AUTO on a device-only matrix runs BRC at once.
        check_method(&h, spec, &a, Algorithm::Brc, Tuning::None);
        let mut auto = common::gpu::device_matrix(&h, &a);
        auto.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
        if tessera::select::heuristic(&stats, 8, false, dev.sm_count()) == Algorithm::Brc {
            // Built by the worker, on the device, while CSR_VECTOR runs (after its products;
            // here at finish_background).
            let info = auto.info();
            assert_eq!(
                info.algorithm,
                Algorithm::CsrVector,
                "{spec}: {}",
                info.params
            );
            assert_ne!(info.background, tessera::BackgroundStatus::None);
            auto.finish_background(&h).unwrap();
            let info = auto.info();
            assert_eq!(info.algorithm, Algorithm::Brc, "{spec}: {}", info.params);
            assert!(
                info.params.contains("built on the device"),
                "{}",
                info.params
            );
            assert!(!auto.has_host_copy(), "{spec}: nothing was downloaded");
        }
        // New values through the value map, from the host and from the device.
        let doubled: Vec<f64> = a.values().iter().map(|v| 2.0 * v).collect();
        auto.update_values(&h, &doubled).unwrap();
        let mut b = a.clone();
        b.set_values_from_input(&doubled).unwrap();
        let x = x_for(a.cols(), 9);
        let mut y = vec![f64::NAN; a.rows()];
        auto.spmv(&h, Operation::NonTranspose, 1.0, &x, 0.0, &mut y)
            .unwrap();
        assert_product(
            &format!("{spec} AUTO after update_values"),
            &b,
            Operation::NonTranspose,
            1.0,
            &x,
            0.0,
            &vec![0.0; a.rows()],
            &y,
        );
    }
}

/// BRC's device fill (session 33; analyze's default since session 34): the
/// plan from the row offsets alone (on the host, or on the device from the counts of each row
/// length: session 36), then `brc_ell_fill` and `brc_fill`, give the same columns (padding
/// included), values and value map as format.rs's host build with the fixed rule's shape (pure
/// BRC, hybrid, ELL only), the same summary, and the f64 product (which reads the destinations
/// and the rows to scale), in both variants and both types.
#[test]
fn brc_gpu_fills_a_plan_on_the_device_equal_to_the_host_format() {
    let Some(handles) = gpus() else { return };
    for spec in [
        "gen:powerlaw:14,8,2",
        "gen:powerlaw:17,16,3",
        "gen:circuit:20000,5,20,3000,4",
        "gen:emptyrows:5000,6,4",
        "gen:onerow:6000,6000,6000",
        "gen:random:3000,2000,0.01,5",
        // The fixed rule's hybrid (ELL k = 7, then blocks) and ELL only (k = 9).
        "gen:lap3d7:20",
        "gen:uniform:6000,9,3",
        // Rows of about 100: wider than brc_ell_build's 96.
        "gen:random:5000,4000,100,3",
    ] {
        let (_, a64) = tessera::io::load(spec).unwrap();
        for h in &handles {
            device_fill_matches::<f64>(h, spec, &a64);
            device_fill_matches::<f32>(h, spec, &a64);
        }
    }
}

fn device_fill_matches<T: Scalar>(h: &Handle, spec: &str, a64: &Csr<f64>) {
    let dev = h.cuda().unwrap();
    let stream = h.cuda_stream();
    let a = a64.convert::<T>();
    let stats = a.stats();
    let csr = upload(h, &a);
    let req = Request {
        host: None,
        stats: &stats,
        tuning: Tuning::None,
        deterministic: h.deterministic(),
    };
    let m = BrcGpu::prepare_fill_on_device(dev, stream, &csr, &req).unwrap();
    let what = format!(
        "{spec} {:?} deterministic={}",
        T::VALUE_TYPE,
        h.deterministic()
    );
    assert!(
        m.describe().contains("filled on the device"),
        "{what}: {}",
        m.describe()
    );
    // The plan too is made on the device (its rows placed by brc_plan_place and
    // brc_plan_queue) for the atomic variant where the longest row is shorter than the row
    // count: most of these matrices; the others are planned on the host.
    let on_device = !h.deterministic() && stats.max < stats.rows;
    assert_eq!(
        m.describe().contains("planned and filled on the device"),
        on_device,
        "{what}: {}",
        m.describe()
    );
    let p = m.params();
    assert_eq!(p.b1, 32, "{what}");
    let variant = if h.deterministic() {
        Variant::Deterministic
    } else {
        Variant::Atomic
    };
    let f = format::build(&a, 32, p.b2 as usize, p.ell_width as usize, variant).unwrap();
    assert!(
        m.describe().contains(&f.summary()),
        "{what}: {} against {}",
        m.describe(),
        f.summary()
    );
    let (col, val, slot) = m.download(stream).unwrap();
    let first_diff = |a: &[i32], b: &[i32]| a.iter().zip(b).position(|(x, y)| x != y);
    assert!(
        col == f.col,
        "{what}: columns (padding included), first at {:?} of {} / {}",
        first_diff(&col, &f.col),
        col.len(),
        f.col.len()
    );
    assert!(val == f.values, "{what}: values");
    let slots_i32 = |v: &[u32]| v.iter().map(|&s| s as i32).collect::<Vec<_>>();
    assert!(
        slot == f.value_slot,
        "{what}: value map, first at {:?}",
        first_diff(&slots_i32(&slot), &slots_i32(&f.value_slot))
    );
    products_match(h, &m, &csr, &a, (&f, p), &what);
}
