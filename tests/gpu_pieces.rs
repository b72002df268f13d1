//! CSR_VECTOR's pieces mode (`methods::csr_vector::pieces`: long rows cut into pieces, a warp
//! per piece, the pieces of a row added by its last warp) on a real GPU: AUTO and CSR_VECTOR
//! choose it for long rows; its products match the f64 product in f32 and f64 with every
//! alpha/beta case (NaN in y for beta = 0), after update_values, with empty rows, rows of one
//! entry, rows of exactly a piece and one entry more, a row of more than 32 pieces and
//! duplicate entries; they are bitwise reproducible; concurrent products on more streams than
//! its workspace ring has slots stay apart; a captured graph replays it (the rows' counters
//! left at zero by each product); a matrix read in place gets it. Without a GPU every test
//! prints one "skipped: no CUDA device" line and returns.

mod common;

use common::gpu::{
    assert_bitwise_reproducible, captured_product_replays, checked_product, csr_vector_in_mode,
    gpu, queued_products_on_streams, shared_device, whole_device, DeviceArrays,
};
use common::products::{assert_ax, check_method, x_for};
use tessera::backend::cuda::DeviceVec;
use tessera::{Algorithm, Csr, Matrix, Operation, Tuning};

/// Long rows with the pieces mode's edge cases (pieces of 1,024 entries in f64 and 2,048 in
/// f32): every 40th row empty, row 1 over all 50,000 columns (49 pieces in f64: more than a
/// warp's lanes when its last warp adds them), rows 3-6 of exactly 1,024, 1,025, 2,048 and 2,049
/// entries, row 7 of one entry, row 8 with a repeated column, the others 400 random columns.
fn edges() -> Csr<f64> {
    let (rows, cols) = (600usize, 50_000usize);
    let mut t = Vec::new();
    let mut seed = 4242u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let exact = [(3usize, 1024usize), (4, 1025), (5, 2048), (6, 2049), (7, 1)];
    for r in 0..rows {
        if r % 40 == 0 {
            continue;
        }
        if r == 1 {
            t.extend((0..cols).map(|c| (r, c, 1.0 / (1 + c % 13) as f64)));
            continue;
        }
        if let Some(&(_, len)) = exact.iter().find(|(row, _)| *row == r) {
            t.extend((0..len).map(|k| (r, k * 7 % cols, (k % 5) as f64 - 2.0)));
            continue;
        }
        for _ in 0..400 {
            let v = (next() % 2001) as f64 / 1000.0 - 1.0;
            t.push((r, (next() % cols as u64) as usize, v));
        }
    }
    t.push((8, 5, 0.25));
    t.push((8, 5, 0.5));
    t.push((rows - 1, cols - 1, 2.0));
    Csr::from_triplets(rows, cols, &t).unwrap()
}

fn matrices() -> Vec<(String, Csr<f64>)> {
    let (name, dense) = tessera::io::load("gen:dense:600,900").unwrap();
    vec![(name, dense), ("edges".into(), edges())]
}

#[test]
fn auto_and_csr_vector_run_long_rows_in_pieces_and_match_the_f64_product() {
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
            assert!(info.params.contains("pieces"), "{name}: {}", info.params);
            // The piece table and four slots of partial sums and counters.
            assert!(info.device_bytes > (a.rows() * 4 * 4) as u64, "{name}");
            assert!(info.deterministic, "{name}");
        }
        check_method(&h, &name, &a, Algorithm::CsrVector, Tuning::None);
        // Tuning is skipped for the mode: QUICK keeps it.
        let mut m = Matrix::from_csr(&h, a.convert::<f32>());
        m.analyze(&h, Algorithm::CsrVector, Tuning::Quick).unwrap();
        assert!(m.info().params.contains("pieces"), "{name} f32 quick");
    }
}

#[test]
fn pieces_products_are_bitwise_reproducible() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    let a = edges();
    let m = csr_vector_in_mode(&h, &a, "pieces");
    assert_bitwise_reproducible(&h, &m, &a);
}

#[test]
fn concurrent_pieces_products_on_more_streams_than_slots_stay_apart() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    let a = edges();
    let m = csr_vector_in_mode(&h, &a, "pieces");
    // Six streams against a ring of four slots.
    queued_products_on_streams(&m, &a, "edges", 6, 8);
}

#[test]
fn a_captured_pieces_product_replays_with_new_x() {
    let _device = whole_device();
    let Some(mut h) = gpu() else { return };
    let a = edges();
    captured_product_replays(&mut h, &a, "pieces", |h| {
        csr_vector_in_mode(h, &a, "pieces")
    });
}

#[test]
fn a_matrix_read_in_place_runs_in_pieces() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    for (name, a) in matrices() {
        let arrays = DeviceArrays::<f64>::of(&h, &a);
        let mut m = Matrix::<f64>::borrow_device_deferred(&h, &arrays.descr())
            .unwrap()
            .unwrap();
        m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
        for p in 0..3 {
            checked_product(&h, &m, &a, &format!("{name}, product {p}"), p);
        }
        let info = m.info();
        assert_eq!(info.algorithm, Algorithm::CsrVector, "{name}");
        assert!(info.params.contains("pieces"), "{name}: {}", info.params);
    }
}

/// A matrix read in place runs the provisional HOLA while its check runs (held here until its
/// products start: `hold_checks`), then the form its statistics choose, here the pieces mode,
/// whose piece table and workspace are allocated: by a worker, never by a product
/// (`tessera_spmv` allocates nothing). Counted on the caller's thread with the fault switch
/// armed past reach.
#[test]
fn products_on_the_way_to_the_pieces_allocate_nothing() {
    use tessera::backend::cuda::check::hold_checks;
    use tessera::backend::cuda::fault::{self, Fault};
    struct Held;
    impl Drop for Held {
        fn drop(&mut self) {
            hold_checks(false);
        }
    }
    let _device = whole_device();
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let a = edges();
    let arrays = DeviceArrays::<f64>::of(&h, &a);
    let x = x_for(a.cols(), 3);
    let dx = DeviceVec::from_slice(&dev, &x).unwrap();
    let dy = DeviceVec::from_slice(&dev, &vec![0.0; a.rows()]).unwrap();
    hold_checks(true);
    let held = Held;
    let mut m = Matrix::<f64>::borrow_device_deferred(&h, &arrays.descr())
        .unwrap()
        .unwrap();
    m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
    assert!(m.is_provisional(), "{}", m.info().params);
    fault::arm(Fault::Alloc, u64::MAX);
    let product = || {
        m.spmv_device(&h, Operation::NonTranspose, 1.0, dx.addr(), 0.0, dy.addr())
            .unwrap()
    };
    product();
    drop(held);
    let start = std::time::Instant::now();
    let mut products = 1;
    loop {
        product();
        products += 1;
        if m.info().params.contains("pieces") && products > 3 {
            break;
        }
        assert!(
            start.elapsed().as_secs() < 30,
            "not in pieces after {products} products: {}",
            m.info().params
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let seen = fault::seen(Fault::Alloc);
    fault::disarm();
    assert_eq!(
        seen, 0,
        "{seen} allocations on the caller's thread in {products} products"
    );
    let y = dy.to_vec(h.cuda_stream()).unwrap();
    assert_ax("edges read in place, in pieces", &a, &x, &y);
}
