//! AUTO's trial on a real GPU (`src/matrix/trial.rs`): once a heavy format swaps in, the next
//! products time it against the form it replaced, exchange the two at product boundaries and
//! keep the faster. Products stay right through every exchange, on two streams, after value
//! updates, and in graphs captured before and during the trial; the trial ends after a bounded
//! number of products and `info` says what it measured and kept; AUTO tries BRC on a large
//! matrix of even rows longer than its rule's 32 (3D elasticity), built on the device, then
//! BCCOO once that trial is over.
//! Without a GPU every test prints one "skipped: no CUDA device" line and returns.

mod common;

use common::gpu::{
    capture, checked_product as product, destroy_stream, device_matrix, gpu, launch, new_stream,
    whole_device,
};
use common::products::{assert_product, x_for};
use cudarc::driver::sys;
use tessera::backend::cuda::{DeviceVec, Stream};
use tessera::{Algorithm, BackgroundStatus, Csr, Handle, Matrix, Operation, Tuning};

/// Runs checked products (alternating two streams) until the trial is over; returns how many.
fn products_until_settled(
    h: &mut Handle,
    m: &Matrix<f64>,
    a: &Csr<f64>,
    streams: [sys::CUstream; 2],
    what: &str,
) -> usize {
    let mut n = 0;
    while !m.tuning_settled() {
        assert!(
            n < 200,
            "{what}: the trial did not end: {}",
            m.info().params
        );
        h.set_stream(streams[n % 2] as usize).unwrap();
        product(
            h,
            m,
            a,
            &format!("{what}, trial product {n}"),
            40 + n as u64,
        );
        n += 1;
    }
    n
}

/// AUTO's analyze scheduled a background build of `target`.
fn assert_scheduled(info: &tessera::MatrixInfo, target: Algorithm) {
    assert!(
        matches!(info.background, BackgroundStatus::Scheduled { target: t, .. } if t == target),
        "{:?}: {}",
        info.background,
        info.params
    );
}

#[test]
fn a_trial_keeps_the_faster_form_and_every_product_stays_right() {
    let _device = whole_device();
    let Some(mut h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let streams = [new_stream(), new_stream()];
    let (name, a) = tessera::io::load("gen:lap3d7:24").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    h.set_stream(streams[0] as usize).unwrap();
    m.analyze_then(&h, Algorithm::CsrVector, Algorithm::Brc, None)
        .unwrap();
    product(&h, &m, &a, &format!("{name} before the swap"), 1);
    m.finish_background(&h).unwrap();
    let info = m.info();
    assert_eq!(info.algorithm, Algorithm::Brc, "{}", info.params);
    assert!(
        !m.tuning_settled(),
        "a trial starts at the swap: {}",
        info.params
    );

    // A graph captured at the start of the trial runs the form running then, for good.
    let x = x_for(a.cols(), 3);
    let dx = DeviceVec::from_slice(&dev, &x).unwrap();
    let gy = DeviceVec::from_slice(&dev, &vec![f64::NAN; a.rows()]).unwrap();
    let zeros = vec![0.0; a.rows()];
    let queue = |m: &Matrix<f64>, h: &Handle| {
        m.spmv_device(h, Operation::NonTranspose, 1.0, dx.addr(), 0.0, gy.addr())
            .unwrap()
    };
    let graph = capture(streams[1], || {
        h.set_stream(streams[1] as usize).unwrap();
        queue(&m, &h)
    });
    let replay = |a: &Csr<f64>, what: &str| {
        launch(graph, streams[1]);
        let y = gy.to_vec(Stream(streams[1] as usize)).unwrap();
        assert_product(what, a, Operation::NonTranspose, 1.0, &x, 0.0, &zeros, &y);
    };
    replay(&a, &format!("{name} graph captured at the trial's start"));

    // Some products into the trial, then new values: both forms follow.
    for i in 0..4 {
        h.set_stream(streams[i % 2] as usize).unwrap();
        product(&h, &m, &a, &format!("{name} trial {i}"), 10 + i as u64);
    }
    let doubled: Vec<f64> = m
        .csr(&h)
        .unwrap()
        .values()
        .iter()
        .map(|v| 2.0 * v)
        .collect();
    m.update_values(&h, &doubled).unwrap();
    let a2 = m.csr(&h).unwrap().as_ref().clone();
    replay(&a2, &format!("{name} graph after update_values"));
    let n = products_until_settled(&mut h, &m, &a2, streams, &name);
    assert!(
        n >= 2,
        "{name}: {n} products (warm-up and samples on both sides)"
    );
    let info = m.info();
    assert!(
        info.params.contains("trial on this matrix's products: brc")
            && info.params.contains("csr_vector"),
        "{}",
        info.params
    );
    let kept = if info.params.contains("brc kept over csr_vector") {
        Algorithm::Brc
    } else {
        assert!(
            info.params.contains("csr_vector kept over brc"),
            "{}",
            info.params
        );
        Algorithm::CsrVector
    };
    assert_eq!(info.algorithm, kept, "{}", info.params);
    assert!(matches!(info.background, BackgroundStatus::Swapped { .. }));
    // After the trial: products on both streams, the graph, and a queue of products on four
    // threads.
    for i in 0..4 {
        h.set_stream(streams[i % 2] as usize).unwrap();
        product(
            &h,
            &m,
            &a2,
            &format!("{name} after the trial {i}"),
            70 + i as u64,
        );
    }
    assert_eq!(m.info().algorithm, kept, "the verdict stays");
    replay(&a2, &format!("{name} graph after the trial"));
    common::gpu::queued_products_on_streams(&m, &a2, &name, 4, 10);
    // SAFETY: destroyed once, after its last launch finished (to_vec waited).
    unsafe { sys::cuGraphExecDestroy(graph) };
    drop(m);
    h.set_stream(0).unwrap();
    streams.into_iter().for_each(destroy_stream);
}

/// A slower heavy format goes back: TILE on a matrix of a few scattered entries per row (tiles
/// of one entry) took 40 µs against CSR_VECTOR's 7 µs (H100, session 17's run A), so the
/// trial keeps CSR_VECTOR.
#[test]
fn a_slower_heavy_format_is_exchanged_back() {
    let _device = whole_device();
    let Some(mut h) = gpu() else { return };
    let streams = [new_stream(), new_stream()];
    let (name, a) = tessera::io::load("gen:random:20000,20000,0.001,1").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze_then(&h, Algorithm::CsrVector, Algorithm::Tile, None)
        .unwrap();
    m.finish_background(&h).unwrap();
    assert_eq!(m.info().algorithm, Algorithm::Tile);
    products_until_settled(&mut h, &m, &a, streams, &name);
    let info = m.info();
    assert_eq!(info.algorithm, Algorithm::CsrVector, "{}", info.params);
    assert!(
        info.params.contains("csr_vector kept over tile"),
        "{}",
        info.params
    );
    product(&h, &m, &a, &format!("{name} after the trial"), 5);
    h.set_stream(0).unwrap();
    streams.into_iter().for_each(destroy_stream);
}

/// AUTO on a device-only matrix of 3D elasticity (rows of 24 to 81 entries, over 1M
/// non-zeros): its rule keeps a method over the CSR arrays, and it tries BRC, built on the
/// device, then BCCOO; each trial decides and products stay right.
#[test]
fn auto_tries_brc_then_bccoo_on_large_even_rows_longer_than_its_rule() {
    let _device = whole_device();
    let Some(mut h) = gpu() else { return };
    let streams = [new_stream(), new_stream()];
    let (name, a) = tessera::io::load("gen:elasticity:24").unwrap();
    let stats = a.stats();
    assert_eq!(
        tessera::select::trial_candidate(&stats, 8),
        Some(Algorithm::Brc)
    );
    let mut m = device_matrix(&h, &a);
    m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
    let info = m.info();
    if !tessera::select::spare_core() {
        println!("skipped: one core, no background build to try");
        return;
    }
    assert_scheduled(&info, Algorithm::Brc);
    product(&h, &m, &a, &format!("{name} first"), 1);
    m.finish_background(&h).unwrap();
    assert!(m.info().params.contains("built on the device"));
    products_until_settled(&mut h, &m, &a, streams, &name);
    let info = m.info();
    assert!(
        info.params.contains("trial on this matrix's products: brc"),
        "{}",
        info.params
    );
    // Then BCCOO (`select::then_try`), built from a downloaded host copy, swapped in after
    // BRC's trial and timed against the form that trial kept.
    assert_eq!(
        tessera::select::then_try(&stats, 8, Algorithm::Brc),
        Some(Algorithm::Bccoo)
    );
    let second = info
        .params
        .find("trial on this matrix's products: bccoo")
        .unwrap_or_else(|| panic!("{name}: no BCCOO trial: {}", info.params));
    assert!(
        info.params
            .find("trial on this matrix's products: brc")
            .unwrap()
            < second,
        "{}",
        info.params
    );
    product(&h, &m, &a, &format!("{name} after the trials"), 5);
    h.set_stream(0).unwrap();
    streams.into_iter().for_each(destroy_stream);
}

/// AUTO on a device-only band at about half density in f64 (below TILE's f64 floor,
/// `select::tile_min_density`): its rule keeps a method over the CSR arrays and TILE is tried as
/// a candidate, built on the device; the trial decides, no second candidate follows, and
/// products stay right throughout.
#[test]
fn auto_tries_tile_on_a_half_dense_band_in_f64() {
    let _device = whole_device();
    let Some(mut h) = gpu() else { return };
    let streams = [new_stream(), new_stream()];
    let (name, a) = tessera::io::load("gen:band:2000,600,600").unwrap();
    let stats = a.stats();
    assert_eq!(
        tessera::select::trial_candidate(&stats, 8),
        Some(Algorithm::Tile),
        "{name}"
    );
    let mut m = device_matrix(&h, &a);
    m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
    if !tessera::select::spare_core() {
        println!("skipped: one core, no background build to try");
        return;
    }
    let info = m.info();
    let before = info.algorithm;
    assert_ne!(before, Algorithm::Tile, "{}", info.params);
    assert_scheduled(&info, Algorithm::Tile);
    product(&h, &m, &a, &format!("{name} first"), 1);
    m.finish_background(&h).unwrap();
    products_until_settled(&mut h, &m, &a, streams, &name);
    let info = m.info();
    assert!(
        info.params
            .contains("trial on this matrix's products: tile"),
        "{}",
        info.params
    );
    let kept = if info.params.contains("tile kept over") {
        Algorithm::Tile
    } else {
        before
    };
    assert_eq!(info.algorithm, kept, "{}", info.params);
    assert!(
        !info
            .params
            .contains("trial on this matrix's products: bccoo"),
        "{}",
        info.params
    );
    product(&h, &m, &a, &format!("{name} after the trial"), 5);
    h.set_stream(0).unwrap();
    streams.into_iter().for_each(destroy_stream);
}

/// A sample spans several consecutive products on one stream (`trial::span`: 4 for a matrix
/// this small), and closes early before a product it cannot time: a transposed one, or one
/// that only scales y. Every product stays right, and the trial ends.
#[test]
fn samples_span_products_and_close_before_the_ones_they_cannot_time() {
    let _device = whole_device();
    let Some(mut h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let stream = new_stream();
    h.set_stream(stream as usize).unwrap();
    let (name, a) = tessera::io::load("gen:lap3d7:24").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze_then(&h, Algorithm::CsrVector, Algorithm::Brc, None)
        .unwrap();
    m.finish_background(&h).unwrap();
    assert!(!m.tuning_settled(), "{}", m.info().params);
    let xt = x_for(a.rows(), 9);
    let dxt = DeviceVec::from_slice(&dev, &xt).unwrap();
    let mut n = 0;
    while !m.tuning_settled() {
        assert!(
            n < 400,
            "{name}: the trial did not end: {}",
            m.info().params
        );
        product(&h, &m, &a, &format!("{name} product {n}"), 100 + n as u64);
        if n % 11 == 10 {
            // Transposed: y = A^T x.
            let dy = DeviceVec::from_slice(&dev, &vec![f64::NAN; a.cols()]).unwrap();
            m.spmv_device(&h, Operation::Transpose, 1.0, dxt.addr(), 0.0, dy.addr())
                .unwrap();
            let y = dy.to_vec(h.cuda_stream()).unwrap();
            let zeros = vec![0.0; a.cols()];
            let what = format!("{name} transposed after product {n}");
            assert_product(&what, &a, Operation::Transpose, 1.0, &xt, 0.0, &zeros, &y);
        }
        if n % 13 == 12 {
            // Only a scale: y = 2 y0.
            let y0 = x_for(a.rows(), n as u64);
            let dy = DeviceVec::from_slice(&dev, &y0).unwrap();
            m.spmv_device(&h, Operation::NonTranspose, 0.0, dxt.addr(), 2.0, dy.addr())
                .unwrap();
            let y = dy.to_vec(h.cuda_stream()).unwrap();
            let what = format!("{name} scale after product {n}");
            assert_product(&what, &a, Operation::NonTranspose, 0.0, &xt, 2.0, &y0, &y);
        }
        n += 1;
    }
    let info = m.info();
    assert!(
        info.params.contains("samples of ") && info.params.contains("-4 products"),
        "samples of up to 4 products, some closed early: {}",
        info.params
    );
    assert!(
        info.params.contains("brc kept over csr_vector")
            || info.params.contains("csr_vector kept over brc"),
        "{}",
        info.params
    );
    // At least the warm-up and the samples' products on each side, less the ones closed early.
    assert!(n >= 2 * SAMPLES_LEAST, "{n} products");
    product(&h, &m, &a, &format!("{name} after the trial"), 5);
    drop(m);
    h.set_stream(0).unwrap();
    destroy_stream(stream);
}

/// Samples a trial reads on each side (`trial::SAMPLES`), each of at least one product.
const SAMPLES_LEAST: usize = 5;
