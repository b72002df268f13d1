//! BCCOO (yaSpMV) on a real GPU: every shared matrix and the generated edge cases through the
//! safe API (f32/f64, both operations, alpha/beta with NaN in y for beta = 0, update_values from
//! host and device memory), every kernel specialisation and Table 1 option (strategies,
//! workgroup sizes, tiles, flag words, column modes, BCCOO+ slices) against the f64 product and
//! the host reference over the same arrays, QUICK and EXHAUSTIVE tuning, bitwise
//! reproducibility, many back-to-back products (the adjacent-synchronisation workspace is left
//! clean by every call), and four threads on their own streams multiplying one matrix at once
//! (each call takes its own workspace slot). Without a GPU every test prints one "skipped: no CUDA device" line
//! and returns. Tests whose name contains `edge` are the ones run under compute-sanitizer.

mod common;

use common::gpu::{destroy_stream, gpu, new_stream};

use common::products::EDGE_CASES;
use common::products::{assert_product, check_method, check_typed, shared_matrix_files, x_for};
use tessera::backend::cuda::csr::GpuCsr;
use tessera::backend::cuda::{DeviceVec, Stream};
use tessera::methods::bccoo::cuda::BccooGpu;
use tessera::methods::bccoo::format;
use tessera::methods::bccoo::params::{ColMode, FormatParams, Params, Shape, Strategy};
use tessera::methods::bccoo::reference;
use tessera::methods::GpuMethod;
use tessera::{Algorithm, BackendKind, Csr, Handle, Matrix, Operation, Scalar, Tuning};

/// BCCOO's own edge cases beyond EDGE_CASES (the same list as tests/bccoo_host.rs).
const BCCOO_EDGE_CASES: &[&str] = &[
    "gen:onerow:64,200000,200000", // one row across ~50 workgroups; 200000 columns: delta16
    "gen:random:40,300000,60,7",   // wide: delta16 with escapes
    "gen:emptyrows:3000,20,5",     // half the rows empty: zero blocks with row stops
    "gen:elasticity:5",            // 3x3 node blocks
    "gen:stencil27:7",
    "gen:dense:70,9",
    "gen:diag:1",
];

/// Runs `p` on the GPU directly (BccooGpu::with_params) and checks y against the f64 product
/// and against the host reference over the same arrays, for (alpha, beta) = (1, 0) with NaN in
/// y and (-2, 0.5).
fn check_params<T: Scalar>(h: &Handle, name: &str, a64: &Csr<f64>, p: Params) {
    let dev = h.cuda().unwrap();
    let a = a64.convert::<T>();
    let ar = a.convert::<f64>();
    let transpose = tessera::methods::transpose::gpu_launch(&a.stats(), dev.sm_count());
    let csr = GpuCsr::upload(dev, Stream(0), &a, transpose).unwrap();
    let m = BccooGpu::with_params(dev, Stream(0), &a, p).unwrap();
    let host = format::build(&a, &p.format, p.wg as usize).unwrap();
    let info = host.wg_info(p.wg as usize);
    let x: Vec<T> = x_for(a.cols(), 3).into_iter().map(T::from_f64).collect();
    let dx = DeviceVec::from_slice(dev, &x).unwrap();
    for (alpha, beta) in [(1.0, 0.0), (-2.0, 0.5)] {
        let y0: Vec<T> = x_for(a.rows(), 5).into_iter().map(T::from_f64).collect();
        let start = if beta == 0.0 {
            vec![T::from_f64(f64::NAN); a.rows()]
        } else {
            y0.clone()
        };
        let dy = DeviceVec::from_slice(dev, &start).unwrap();
        m.spmv(
            &csr,
            Stream(0),
            T::from_f64(alpha),
            dx.addr(),
            T::from_f64(beta),
            dy.addr(),
        )
        .unwrap();
        let y = dy.to_vec(Stream(0)).unwrap();
        let what = format!("{name} {p}");
        assert_product(
            &what,
            &ar,
            Operation::NonTranspose,
            alpha,
            &x,
            beta,
            &y0,
            &y,
        );
        let mut want = start.clone();
        reference::spmv(
            &host,
            p.wg as usize,
            p.strategy,
            &info,
            T::from_f64(alpha),
            &x,
            T::from_f64(beta),
            &mut want,
        );
        let tol = 64.0 * T::EPSILON;
        let scale = ar.abs_product_f64(
            Operation::NonTranspose,
            &x.iter().map(|v| v.to_f64()).collect::<Vec<_>>(),
        );
        for i in 0..y.len() {
            let bound =
                tol * (alpha.abs() * scale[i] + (beta * y0[i].to_f64()).abs()) + f64::MIN_POSITIVE;
            assert!(
                (y[i].to_f64() - want[i].to_f64()).abs() <= bound,
                "{what}: GPU y[{i}] = {} but the host reference over the same arrays gives {}",
                y[i],
                want[i]
            );
        }
    }
}

fn params(
    bh: u32,
    bw: u32,
    tile: u32,
    wg: u32,
    strategy: Strategy,
    slices: u32,
    col: ColMode,
) -> Params {
    Params {
        format: FormatParams {
            shape: Shape { bw, bh },
            slices,
            tile,
            word_bits: tessera::methods::bccoo::params::default_word_bits(tile),
            col,
        },
        wg,
        strategy,
    }
}

#[test]
fn bccoo_edge_cases_match_the_f64_product_on_the_gpu() {
    let Some(h) = gpu() else { return };
    for spec in EDGE_CASES.iter().chain(BCCOO_EDGE_CASES) {
        let (name, a) = tessera::io::load(spec).unwrap();
        check_method(&h, &name, &a, Algorithm::Bccoo, Tuning::None);
    }
}

#[test]
fn bccoo_edge_every_block_shape_strategy_and_bccoo_plus_matches_the_reference_on_the_gpu() {
    let Some(h) = gpu() else { return };
    // Short rows with empty ones and ragged right edge; one row across many workgroups.
    let (_, short) = tessera::io::load("gen:emptyrows:1500,9,4").unwrap();
    let mut e: Vec<(usize, usize, f64)> =
        (0..30_000).map(|c| (2, c, 1.0 + (c % 7) as f64)).collect();
    e.extend(
        (0..40)
            .filter(|&r| r != 2)
            .map(|r| (r, (r * 997) % 30_001, -0.5)),
    );
    let long = Csr::from_triplets(40, 30_001, &e).unwrap();
    for (name, a) in [("emptyrows", &short), ("long row", &long)] {
        for s in Shape::all() {
            for (tile, wg, st) in [
                (8, 64, Strategy::Registers),
                (16, 256, Strategy::ResultCache(2)),
                (24, 128, Strategy::ResultCache(1)),
                (128, 512, Strategy::ResultCache(4)),
            ] {
                let p = params(s.bh, s.bw, tile, wg, st, 1, ColMode::U16);
                check_params::<f64>(&h, name, a, p);
                check_params::<f32>(&h, name, a, p);
            }
            let p = params(
                s.bh,
                s.bw,
                16,
                128,
                Strategy::ResultCache(2),
                4,
                ColMode::U16,
            );
            check_params::<f64>(&h, &format!("{name} bccoo+"), a, p);
        }
        for col in [ColMode::U32, ColMode::Delta] {
            for w in [8, 16, 32] {
                let mut p = params(2, 1, 32, 128, Strategy::Registers, 1, col);
                p.format.word_bits = w;
                check_params::<f64>(&h, name, a, p);
            }
        }
    }
}

#[test]
fn bccoo_matches_the_f64_product_on_every_shared_matrix_on_the_gpu() {
    let Some(h) = gpu() else { return };
    let Some(files) = shared_matrix_files() else {
        return;
    };
    for f in &files {
        let (name, a) = tessera::io::load(f.to_str().unwrap()).unwrap();
        check_method(&h, &name, &a, Algorithm::Bccoo, Tuning::None);
    }
}

#[test]
fn bccoo_quick_and_exhaustive_tuning_choose_parameters_that_still_give_the_right_product() {
    let Some(h) = gpu() else { return };
    for (spec, exhaustive) in [
        ("gen:elasticity:8", true),
        ("gen:powerlaw:13,8,2", false),
        ("gen:lp:200,80000,300,1", false),
    ] {
        let (name, a) = tessera::io::load(spec).unwrap();
        let mut tunings = vec![Tuning::Quick, Tuning::Online];
        if exhaustive && !common::test_small() {
            tunings.push(Tuning::Exhaustive);
        }
        for t in tunings {
            check_typed::<f64>(&h, &name, &a, Algorithm::Bccoo, t);
            check_typed::<f32>(&h, &name, &a, Algorithm::Bccoo, t);
            let mut m = Matrix::from_csr(&h, a.clone());
            m.analyze(&h, Algorithm::Bccoo, t).unwrap();
            let info = m.info();
            assert!(info.params.contains("tuned"), "{}", info.params);
            println!(
                "{name} {t}: {} ({:.1} ms analysis)",
                info.params, info.analysis_ms
            );
        }
    }
}

#[test]
fn bccoo_products_are_bitwise_reproducible_and_say_so() {
    let Some(h) = gpu() else { return };
    // Long rows crossing workgroups: the carry chain of adjacent synchronisation.
    for spec in ["gen:powerlaw:15,16,3", "gen:onerow:2000,100000,100000"] {
        let (_, a) = tessera::io::load(spec).unwrap();
        let mut m = Matrix::from_csr(&h, a.clone());
        m.analyze(&h, Algorithm::Bccoo, Tuning::None).unwrap();
        assert!(m.info().deterministic);
        let x = x_for(a.cols(), 4);
        let mut runs = Vec::new();
        for _ in 0..3 {
            let mut y = vec![0.0; a.rows()];
            m.spmv(&h, Operation::NonTranspose, 1.0, &x, 0.0, &mut y)
                .unwrap();
            runs.push(y);
        }
        assert!(runs.windows(2).all(|w| w[0] == w[1]), "{spec}");
    }
}

#[test]
fn bccoo_many_back_to_back_products_leave_the_workspace_clean() {
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let (name, a) = tessera::io::load("gen:onerow:5000,50000,50000").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Bccoo, Tuning::None).unwrap();
    let x = x_for(a.cols(), 8);
    let dx = DeviceVec::from_slice(&dev, &x).unwrap();
    let dy = DeviceVec::from_slice(&dev, &vec![0.0; a.rows()]).unwrap();
    // y = A x, then 99 times y = A x + 0 * y ... with beta = 1 and alpha = 1 y grows to 100 A x.
    m.spmv_device(&h, Operation::NonTranspose, 1.0, dx.addr(), 0.0, dy.addr())
        .unwrap();
    for _ in 0..99 {
        m.spmv_device(&h, Operation::NonTranspose, 1.0, dx.addr(), 1.0, dy.addr())
            .unwrap();
    }
    let y = dy.to_vec(h.cuda_stream()).unwrap();
    let zeros = vec![0.0; a.rows()];
    let mut tolerant = a.clone();
    tolerant.values_mut().iter_mut().for_each(|v| *v *= 100.0);
    assert_product(
        &format!("{name} after 100 products"),
        &tolerant,
        Operation::NonTranspose,
        1.0,
        &x,
        0.0,
        &zeros,
        &y,
    );
}

#[test]
fn bccoo_four_threads_on_their_own_streams_multiply_one_matrix_at_the_same_time() {
    let Some(h) = gpu() else { return };
    // A row across many workgroups (the carry chain): concurrent products sharing one
    // adjacent-synchronisation workspace would mix their counters, flags and carries.
    let (name, a) = tessera::io::load("gen:onerow:20000,60000,60000").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Bccoo, Tuning::None).unwrap();
    let (m, a, name) = (&m, &a, &name);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            s.spawn(move || {
                let stream = new_stream();
                let mut h = Handle::with_backend(BackendKind::Cuda, 0).unwrap();
                h.set_stream(stream as usize).unwrap();
                for round in 0..25 {
                    let x = x_for(a.cols(), 10 * t + round);
                    let y0 = x_for(a.rows(), 99);
                    let mut y = y0.clone();
                    m.spmv(&h, Operation::NonTranspose, 1.5, &x, -0.5, &mut y)
                        .unwrap();
                    assert_product(name, a, Operation::NonTranspose, 1.5, &x, -0.5, &y0, &y);
                }
                h.set_stream(0).unwrap();
                // No work of ours is left on the stream (spmv waited for its copy).
                destroy_stream(stream);
            });
        }
    });
}

/// Eight threads, each with its own stream, queue 25 products of one matrix back to back
/// without waiting (y += 1.5*A*x each time): twice as many concurrent products as the
/// workspace ring has slots, so calls must wait for a slot's previous user on the device.
/// A shared slot would mix adjacent-synchronisation counters (wrong sums or a hang).
#[test]
fn bccoo_eight_streams_queueing_products_of_one_matrix_never_share_a_workspace_slot() {
    let Some(h) = gpu() else { return };
    let (name, a) = tessera::io::load("gen:onerow:20000,60000,60000").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Bccoo, Tuning::None).unwrap();
    common::gpu::queued_products_on_streams(&m, &a, &name, 8, 25);
}

/// Matrices for the device build: the edge cases, BCCOO's own, duplicates (a second entry at an
/// occupied position opens a new block at the same column, in one row and across the rows of a
/// block row), one of over 1M entries (the facts sample block rows at a stride above 1), and a
/// matrix whose last block row is shorter than every block height.
fn device_build_cases() -> Vec<(String, Csr<f64>)> {
    let mut out = Vec::new();
    for spec in EDGE_CASES
        .iter()
        .chain(BCCOO_EDGE_CASES)
        .chain(&["gen:elasticity:12", "gen:random:1001,70000,9,3"])
    {
        let (name, a) = tessera::io::load(spec).unwrap();
        out.push((name, a));
    }
    let mut t: Vec<(usize, usize, f64)> =
        (0..40).map(|i| (i, (3 * i) % 37, 1.0 + i as f64)).collect();
    t.extend([
        (5, 7, 2.0),
        (5, 7, -1.0),
        (5, 7, 0.5),
        (6, 7, 3.0),
        (6, 8, 1.0),
        (6, 8, 4.0),
    ]);
    out.push(("duplicates".into(), Csr::from_triplets(41, 37, &t).unwrap()));
    // Rows longer than the count's 32-entry windows, of different lengths within a block row,
    // sharing some block columns: a repeated column first met in a later window (row 2, entry
    // 70; row 5 at the second window's first entry, 32), and block rows without one.
    let mut t = Vec::new();
    for r in 0..13usize {
        let len = 40 + (r * 17) % 70;
        for e in 0..len {
            t.push((
                r,
                (e * (1 + r % 3) + r / 4) % 400,
                1.0 + (r * 1000 + e) as f64,
            ));
        }
    }
    t.push((2, 210, 7.0)); // row 2's column 3 * 70
    t.push((5, 97, -3.0)); // row 5's column 3 * 32 + 1
    out.push((
        "long rows, late duplicates".into(),
        Csr::from_triplets(13, 400, &t).unwrap(),
    ));
    out
}

/// The device's sampled facts count what the host's do, on every device-build matrix and on a
/// matrix of over 1M entries (sampled block rows at a stride of 2).
#[test]
fn bccoo_device_facts_count_the_host_samples() {
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap();
    let mut cases = device_build_cases();
    let (name, big) = tessera::io::load("gen:elasticity:20").unwrap();
    assert!(
        format::sample_stride(big.nnz()) > 1,
        "{name}: {}",
        big.nnz()
    );
    cases.push((name, big));
    for (name, a) in cases {
        if a.nnz() == 0 {
            continue;
        }
        let transpose = tessera::methods::transpose::gpu_launch(&a.stats(), dev.sm_count());
        let csr = GpuCsr::upload(dev, h.cuda_stream(), &a, transpose).unwrap();
        let d =
            tessera::methods::bccoo::device::sampled_counts(dev, h.cuda_stream(), &csr).unwrap();
        let host = format::sampled_counts(&a);
        assert_eq!(d, host, "{name}");
        let f = tessera::methods::bccoo::device::facts(dev, h.cuda_stream(), &csr).unwrap();
        assert_eq!(
            format!("{:?}", f),
            format!("{:?}", format::facts(&a)),
            "{name}"
        );
    }
}

/// The device build writes the arrays format.rs builds on the host (bit flags, columns in each
/// mode, values, first-result entries, value map, workgroup flags, escapes), for every block
/// shape, tiles of 8, 16 and 32 with each flag word, every workgroup size and both value types;
/// then its product, and new values through its value map.
#[test]
fn bccoo_device_build_writes_the_host_builds_arrays() {
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap();
    let stream = h.cuda_stream();
    let mut built = 0;
    for (name, a64) in device_build_cases() {
        if a64.nnz() == 0 {
            continue;
        }
        let block_cols = |bw: u32| a64.cols().div_ceil(bw as usize);
        let mut sets = Vec::new();
        for (i, shape) in Shape::all().into_iter().enumerate() {
            // Each shape with a tile, word size and workgroup size that rotate through the
            // options, in every column mode the matrix allows.
            let tile = [8u32, 16, 32][i % 3];
            let word_bits = [8u32, 16, 32][(i / 3) % 3];
            let wg = [64u32, 128, 256, 512][i % 4];
            for col in [ColMode::U16, ColMode::U32, ColMode::Delta] {
                if col == ColMode::U16 && block_cols(shape.bw) >= 65535 {
                    continue;
                }
                if col != ColMode::Delta && i % 2 == 1 {
                    continue;
                }
                sets.push(Params {
                    format: FormatParams {
                        shape,
                        slices: 1,
                        tile,
                        word_bits,
                        col,
                    },
                    wg,
                    strategy: Strategy::ResultCache(2),
                });
            }
        }
        for (k, p) in sets.into_iter().enumerate() {
            // The format allocated after the count, from the facts' estimate of its blocks
            // while the device counts, and from an estimate too small (allocated again).
            let guess = match k % 3 {
                0 => None,
                1 => Some(format::facts(&a64).blocks_of(p.format.shape)),
                _ => Some(1.0),
            };
            if k % 2 == 0 {
                device_build_vs_host::<f64>(dev, stream, &name, &a64, p, guess);
            } else {
                device_build_vs_host::<f32>(dev, stream, &name, &a64, p, guess);
            }
            built += 1;
        }
    }
    assert!(built > 200, "only {built} device builds");
}

fn device_build_vs_host<T: Scalar>(
    dev: &std::sync::Arc<tessera::backend::cuda::Device>,
    stream: Stream,
    name: &str,
    a64: &Csr<f64>,
    p: Params,
    guess: Option<f64>,
) {
    let a = a64.convert::<T>();
    let transpose = tessera::methods::transpose::gpu_launch(&a.stats(), dev.sm_count());
    let csr = GpuCsr::upload(dev, stream, &a, transpose).unwrap();
    let what = format!("{name} {p} {} guess {guess:?}", std::any::type_name::<T>());
    let m = BccooGpu::built_on_device(dev, stream, &csr, p, guess, "test").unwrap();
    let f = format::build(&a, &p.format, p.wg as usize).unwrap();
    let (d, info) = m.download(dev, stream).unwrap();
    assert_eq!(d.blocks, f.blocks, "{what}: blocks");
    assert_eq!(d.threads, f.threads, "{what}: threads");
    assert_eq!(d.bits, f.bits, "{what}: bit flags");
    assert_eq!(d.col, f.col, "{what}: columns");
    assert_eq!(d.escapes, f.escapes, "{what}: escapes");
    assert_eq!(d.res_entry, f.res_entry, "{what}: first-result entries");
    assert_eq!(d.value_slot, f.value_slot, "{what}: value map");
    assert!(d.values == f.values, "{what}: values");
    assert_eq!(info, f.wg_info(p.wg as usize), "{what}: workgroup flags");
    assert_eq!(d, f, "{what}");
    let text = m.describe();
    assert!(
        text.contains("built on the device")
            && text.contains(&tessera::methods::bccoo::describe_format(&f, p.wg as usize)),
        "{what}: {text}"
    );
    // Its product, then new values through its value map on the device.
    let x: Vec<T> = x_for(a.cols(), 3).into_iter().map(T::from_f64).collect();
    let dx = DeviceVec::from_slice(dev, &x).unwrap();
    let mut a = a;
    for round in 0..2 {
        if round == 1 {
            a.values_mut()
                .iter_mut()
                .enumerate()
                .for_each(|(k, v)| *v = T::from_f64(((k * 7) % 11) as f64 - 5.0));
            csr.upload_values(stream, a.values()).unwrap();
            m.refresh_values(&csr, stream).unwrap();
        }
        let y0: Vec<T> = x_for(a.rows(), 5).into_iter().map(T::from_f64).collect();
        let dy = DeviceVec::from_slice(dev, &y0).unwrap();
        m.spmv(
            &csr,
            stream,
            T::from_f64(-2.0),
            dx.addr(),
            T::from_f64(0.5),
            dy.addr(),
        )
        .unwrap();
        let y = dy.to_vec(stream).unwrap();
        assert_product(
            &format!("{what} round {round}"),
            &a.convert::<f64>(),
            Operation::NonTranspose,
            -2.0,
            &x,
            0.5,
            &y0,
            &y,
        );
    }
}

/// BCCOO named with TUNING_NONE on a matrix kept on the device builds its fixed rule on the
/// device (no host copy) with the parameters the host's facts give; AUTO's second trial on a
/// large matrix of even rows longer than 32 builds it on the device too. Products and
/// update_values.
#[test]
fn bccoo_device_build_serves_named_bccoo_and_auto() {
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap();
    let (name, a) = tessera::io::load("gen:elasticity:10").unwrap();
    let mut m = common::gpu::device_matrix(&h, &a);
    m.analyze(&h, Algorithm::Bccoo, Tuning::None).unwrap();
    let info = m.info();
    assert_eq!(info.algorithm, Algorithm::Bccoo);
    assert!(
        info.params.contains("built on the device"),
        "{}",
        info.params
    );
    let fixed = tessera::methods::bccoo::params::fixed_rule(&format::facts(&a), dev.sm_count());
    assert!(
        info.params.starts_with(&fixed.to_string()),
        "{} / {fixed}",
        info.params
    );
    assert!(!m.has_host_copy(), "{name}: nothing was downloaded");
    common::gpu::checked_product(&h, &m, &a, "named BCCOO built on the device", 1);
    let doubled: Vec<f64> = a.values().iter().map(|v| 2.0 * v).collect();
    m.update_values(&h, &doubled).unwrap();
    let mut b = a.clone();
    b.set_values_from_input(&doubled).unwrap();
    common::gpu::checked_product(&h, &m, &b, "named BCCOO after update_values", 2);

    // AUTO: BRC tried first on elasticity's rows of 81, then BCCOO, both built on the device.
    let (name, big) = tessera::io::load("gen:elasticity:24").unwrap();
    let stats = big.stats();
    assert_eq!(
        tessera::select::then_try(&stats, 8, Algorithm::Brc),
        Some(Algorithm::Bccoo),
        "{name}"
    );
    assert!(!tessera::methods::needs_host_csr(
        Algorithm::Bccoo,
        Tuning::None,
        &stats
    ));
    let mut auto = common::gpu::device_matrix(&h, &big);
    auto.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
    common::gpu::checked_product(&h, &auto, &big, "AUTO before the builds", 3);
    auto.finish_background(&h).unwrap();
    for seed in 4..40 {
        // The trials run on the products.
        common::gpu::checked_product(&h, &auto, &big, "AUTO during the trials", seed);
    }
    assert!(!auto.has_host_copy(), "{name}: AUTO downloaded the CSR");
    let info = auto.info();
    if info.algorithm == Algorithm::Bccoo {
        assert!(
            info.params.contains("built on the device"),
            "{}",
            info.params
        );
    }
}
