//! CSR_VECTOR's sliced mode (`methods::csr_vector::sliced`: x staged in shared memory one
//! vertical slice at a time) on a real GPU: AUTO and CSR_VECTOR choose it for long rows over many
//! columns; its products match the f64 product in f32 and f64 with every alpha/beta case (NaN in
//! y for beta = 0), after update_values, with empty rows, rows in one slice only, a row across
//! every slice and duplicate entries; they are bitwise reproducible; concurrent products on
//! more streams than its workspace ring has slots stay apart; a captured graph replays it; x
//! need not be 16-byte aligned; a matrix read in place gets it after its check. Without a GPU
//! every test prints one "skipped: no CUDA device" line and returns.

mod common;

use common::gpu::{
    assert_bitwise_reproducible, captured_product_replays, checked_product, csr_vector_in_mode,
    gpu, queued_products_on_streams, shared_device, whole_device, DeviceArrays,
};
use common::products::{assert_product, check_method, x_for};
use tessera::backend::cuda::DeviceVec;
use tessera::{Algorithm, Csr, Matrix, Operation, Tuning};

/// The LP generator's shape at a test's size: 2,000 rows of 1,000 random columns out of 400,000
/// (33 slices of 12,288 columns in f64, 30 entries per row and slice).
const LP: &str = "gen:lp:2000,400000,1000,1";

/// Long rows over 100,000 columns with the sliced mode's edge cases: every 50th row empty,
/// every 7th row only in the first 3,000 columns (one slice), row 1 across every slice, row 3
/// with a duplicate entry, the last column used (a slice narrower than the others).
fn edges() -> Csr<f64> {
    let (rows, cols) = (1600usize, 100_000usize);
    let mut t = Vec::new();
    let mut seed = 12345u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for r in 0..rows {
        if r % 50 == 0 {
            continue;
        }
        if r == 1 {
            // Every 20th column: 5,000 entries in every slice, within 8x the mean (a longer
            // row sends the matrix to HOLA: `sliced::has_long_rows`).
            t.extend(
                (0..cols)
                    .step_by(20)
                    .map(|c| (r, c, 1.0 / (1 + c % 13) as f64)),
            );
            continue;
        }
        let span = if r % 7 == 0 { 3000 } else { cols };
        for _ in 0..700 {
            let v = (next() % 2001) as f64 / 1000.0 - 1.0;
            t.push((r, (next() % span as u64) as usize, v));
        }
    }
    t.push((3, 5, 0.25));
    t.push((3, 5, 0.5));
    t.push((rows - 1, cols - 1, 2.0));
    Csr::from_triplets(rows, cols, &t).unwrap()
}

fn matrices() -> Vec<(String, Csr<f64>)> {
    let (name, lp) = tessera::io::load(LP).unwrap();
    vec![(name, lp), ("edges".into(), edges())]
}

#[test]
fn auto_and_csr_vector_run_long_rows_sliced_and_match_the_f64_product() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    for (name, a) in matrices() {
        for alg in [Algorithm::Auto, Algorithm::CsrVector] {
            let mut m = Matrix::from_csr(&h, a.clone());
            m.analyze(&h, alg, Tuning::None).unwrap();
            let info = m.info();
            assert_eq!(
                info.algorithm,
                Algorithm::CsrVector,
                "{name}: {}",
                info.params
            );
            assert!(info.params.contains("sliced"), "{name}: {}", info.params);
            // The slice bounds, the items and four slots of partial sums.
            assert!(info.device_bytes > (a.rows() * 4) as u64, "{name}");
            assert!(info.deterministic, "{name}");
        }
        check_method(&h, &name, &a, Algorithm::CsrVector, Tuning::None);
        // f32 too (check_method ran both): the f32 shape has twice the columns per slice.
        let mut m = Matrix::from_csr(&h, a.convert::<f32>());
        m.analyze(&h, Algorithm::CsrVector, Tuning::None).unwrap();
        assert!(m.info().params.contains("sliced"), "{name} f32");
    }
}

#[test]
fn sliced_products_are_bitwise_reproducible() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    let a = edges();
    let m = csr_vector_in_mode(&h, &a, "sliced");
    assert_bitwise_reproducible(&h, &m, &a);
}

#[test]
fn concurrent_sliced_products_on_more_streams_than_slots_stay_apart() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    let (name, a) = tessera::io::load(LP).unwrap();
    let m = csr_vector_in_mode(&h, &a, "sliced");
    // Six streams against a ring of four slots.
    queued_products_on_streams(&m, &a, &name, 6, 8);
}

#[test]
fn a_captured_sliced_product_replays_with_new_x() {
    let _device = whole_device();
    let Some(mut h) = gpu() else { return };
    let a = edges();
    captured_product_replays(&mut h, &a, "sliced", |h| {
        csr_vector_in_mode(h, &a, "sliced")
    });
}

#[test]
fn a_matrix_read_in_place_runs_sliced_after_its_check() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    let (name, a) = tessera::io::load(LP).unwrap();
    let arrays = DeviceArrays::<f64>::of(&h, &a);
    let mut m = Matrix::<f64>::borrow_device_deferred(&h, &arrays.descr())
        .unwrap()
        .unwrap();
    m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
    let start = std::time::Instant::now();
    let mut products = 0;
    loop {
        checked_product(&h, &m, &a, &format!("{name}, product {products}"), products);
        products += 1;
        let info = m.info();
        if info.algorithm == Algorithm::CsrVector && info.params.contains("sliced") {
            break;
        }
        assert!(
            start.elapsed().as_secs() < 30,
            "{name}: not sliced after {products} products: {:?} {}",
            info.algorithm,
            info.params
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    checked_product(&h, &m, &a, &format!("{name}, sliced"), 1000);
}

/// x at an address that is not 16-byte aligned (one value past an allocation's start): the
/// slices are staged one value per load instead of 16 bytes at a time, with the same result.
#[test]
fn a_sliced_product_reads_x_at_an_address_not_16_byte_aligned() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let a = edges();
    for shift in [0usize, 1] {
        let mut m = Matrix::from_csr(&h, a.convert::<f32>());
        m.analyze(&h, Algorithm::CsrVector, Tuning::None).unwrap();
        assert!(m.info().params.contains("sliced"));
        let x: Vec<f32> = x_for(a.cols() + 1, 21)
            .into_iter()
            .map(|v| v as f32)
            .collect();
        let dx = DeviceVec::from_slice(&dev, &x).unwrap();
        let dy = DeviceVec::from_slice(&dev, &vec![f32::NAN; a.rows()]).unwrap();
        let at = dx.addr() + (shift * std::mem::size_of::<f32>()) as u64;
        m.spmv_device(&h, Operation::NonTranspose, 1.0, at, 0.0, dy.addr())
            .unwrap();
        let y = dy.to_vec(h.cuda_stream()).unwrap();
        let used = &x[shift..shift + a.cols()];
        let zeros = vec![0f32; a.rows()];
        let a32 = a.convert::<f32>().convert::<f64>();
        assert_product(
            &format!("x shifted by {shift}"),
            &a32,
            Operation::NonTranspose,
            1.0,
            used,
            0.0,
            &zeros,
            &y,
        );
    }
}
