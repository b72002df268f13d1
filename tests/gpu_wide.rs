//! CSR_VECTOR's wide mode (`methods::csr_vector::wide`: rows of more than 1,024 entries, a block
//! per row, 128-bit loads of columns and values) on a real GPU: AUTO and CSR_VECTOR choose it;
//! its products match the f64 product in f32 and f64 with every alpha/beta case (NaN in y for
//! beta = 0) and after update_values, over rows whose starts fall on every offset of a 16-byte
//! chunk, rows of one to three entries (all head), empty rows and a repeated column; they are
//! bitwise reproducible; a captured graph replays it; a matrix read in place gets it, and one
//! whose column array does not start on 16 bytes gets the pieces mode instead, with the same
//! products. Without a GPU every test prints one "skipped: no CUDA device" line and returns.

mod common;

use common::gpu::{
    assert_bitwise_reproducible, captured_product_replays, checked_product, csr_vector_in_mode,
    gpu, shared_device, whole_device, DeviceArrays,
};
use common::products::check_method;
use tessera::backend::cuda::import::DeviceCsr;
use tessera::backend::cuda::DeviceVec;
use tessera::{Algorithm, Csr, IndexBase, Matrix, Tuning};

/// 700 rows (above the mode's 4 per SM on up to 175 SMs) of 1,300-1,700 columns out of 4,000
/// (under half dense: no TILE to try), so that rows start on every offset of a chunk; rows
/// 10-12 of one, two and three entries, every 50th row empty, row 20 with a repeated column,
/// the last row of 2,800. The mean stays above 1,024 and the longest row within twice it.
fn edges() -> Csr<f64> {
    let (rows, cols) = (700usize, 4000usize);
    let mut t = Vec::new();
    let mut seed = 777u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for r in 0..rows {
        if r % 50 == 49 {
            continue;
        }
        let len = match r {
            10..=12 => r - 9,
            _ if r == rows - 1 => 2800,
            _ => 1300 + (next() % 401) as usize,
        };
        // Distinct columns: a random stride through the columns.
        let start = (next() % cols as u64) as usize;
        for k in 0..len {
            let v = (next() % 2001) as f64 / 1000.0 - 1.0;
            t.push((r, (start + k * 7) % cols, v));
        }
    }
    t.push((20, 5, 0.25));
    t.push((20, 5, 0.5));
    Csr::from_triplets(rows, cols, &t).unwrap()
}

fn matrices() -> Vec<(String, Csr<f64>)> {
    let (name, dense) = tessera::io::load("gen:dense:600,1100").unwrap();
    vec![(name, dense), ("edges".into(), edges())]
}

#[test]
fn auto_and_csr_vector_run_long_even_rows_wide_and_match_the_f64_product_on_edge_rows() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    for (name, a) in matrices() {
        let s = a.stats();
        assert!(
            s.mean > 1024.0 && (s.max as f64) <= 2.0 * s.mean,
            "{name}: {s:?}"
        );
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
            assert!(info.params.contains("wide"), "{name}: {}", info.params);
            assert!(info.deterministic, "{name}");
        }
        check_method(&h, &name, &a, Algorithm::CsrVector, Tuning::None);
        // Tuning is skipped for the mode: QUICK keeps it.
        let mut m = Matrix::from_csr(&h, a.convert::<f32>());
        m.analyze(&h, Algorithm::CsrVector, Tuning::Quick).unwrap();
        assert!(m.info().params.contains("wide"), "{name} f32 quick");
    }
}

#[test]
fn wide_products_are_bitwise_reproducible() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    let a = edges();
    let m = csr_vector_in_mode(&h, &a, "wide");
    assert_bitwise_reproducible(&h, &m, &a);
}

#[test]
fn a_captured_wide_product_replays_with_new_x() {
    let _device = whole_device();
    let Some(mut h) = gpu() else { return };
    let a = edges();
    captured_product_replays(&mut h, &a, "wide", |h| csr_vector_in_mode(h, &a, "wide"));
}

#[test]
fn a_matrix_read_in_place_runs_wide_once_checked() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    for (name, a) in matrices() {
        let arrays = DeviceArrays::<f64>::of(&h, &a);
        let mut m = Matrix::<f64>::borrow_device_deferred(&h, &arrays.descr())
            .unwrap()
            .unwrap();
        m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
        // The provisional HOLA until the check reports, then the mode.
        let start = std::time::Instant::now();
        let mut p = 0;
        while !m.info().params.contains("wide") {
            checked_product(&h, &m, &a, &format!("{name}, product {p}"), p);
            p += 1;
            assert!(
                start.elapsed().as_secs() < 30,
                "{name}: not wide after {p} products: {}",
                m.info().params
            );
        }
        for q in 0..3 {
            checked_product(&h, &m, &a, &format!("{name}, wide product {q}"), 100 + q);
        }
        assert_eq!(m.info().algorithm, Algorithm::CsrVector, "{name}");
    }
}

/// A caller's column array that starts 4 bytes past a 16-byte boundary: the wide kernel's
/// chunks would straddle it, so the pieces mode runs, and the products are right.
#[test]
fn arrays_off_16_bytes_take_the_pieces_mode() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap();
    let a = edges();
    let shifted: Vec<i32> = std::iter::once(0)
        .chain(a.col_ind().iter().copied())
        .collect();
    let rp = DeviceVec::from_slice(dev, a.row_ptr()).unwrap();
    let ci = DeviceVec::from_slice(dev, &shifted).unwrap();
    let va = DeviceVec::from_slice(dev, a.values()).unwrap();
    assert_eq!(ci.addr() % 16, 0, "a fresh allocation starts on 16 bytes");
    let descr = DeviceCsr {
        rows: a.rows(),
        cols: a.cols(),
        nnz: a.nnz(),
        row_ptr: rp.addr(),
        col_ind: ci.addr() + 4,
        values: va.addr(),
        is64: false,
        base: IndexBase::Zero,
    };
    let mut m = Matrix::<f64>::borrow_device(&h, &descr, tessera::BorrowedWrites::Announced)
        .unwrap()
        .unwrap();
    m.analyze(&h, Algorithm::CsrVector, Tuning::None).unwrap();
    let info = m.info();
    assert!(info.params.contains("pieces"), "{}", info.params);
    for p in 0..3 {
        checked_product(&h, &m, &a, &format!("off 16 bytes, product {p}"), p);
    }
}
