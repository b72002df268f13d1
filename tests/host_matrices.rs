//! The host backend through the safe Rust API (`Handle`, `Matrix<T>`) on every real matrix of
//! ../shared/matrices and on generated edge cases, in f32 and f64, both operations, against the
//! plain f64 CSR product.

mod common;

use common::products::{check, shared_matrix_files, x_for, EDGE_CASES};
use tessera::{Algorithm, BackendKind, Handle, Matrix, Operation, Tuning};

fn host() -> Handle {
    Handle::with_backend(BackendKind::Host, 0).unwrap()
}

#[test]
fn every_shared_matrix_matches_the_f64_product_on_the_host_backend() {
    let Some(files) = shared_matrix_files() else {
        return;
    };
    for f in &files {
        let (name, a) = tessera::io::load(f.to_str().unwrap()).unwrap();
        check(&host(), &name, &a);
    }
}

#[test]
fn generated_edge_cases_match_the_f64_product_on_the_host_backend() {
    for spec in EDGE_CASES {
        let (name, a) = tessera::io::load(spec).unwrap();
        check(&host(), &name, &a);
    }
}

#[test]
fn one_based_i64_input_gives_the_same_products_as_zero_based_i32() {
    let (_, a) = tessera::io::load("gen:random:300,200,12,9").unwrap();
    let h = Handle::with_backend(BackendKind::Host, 0).unwrap();
    let rp: Vec<i64> = a.row_ptr().iter().map(|&v| v as i64 + 1).collect();
    let ci: Vec<i64> = a.col_ind().iter().map(|&v| v as i64 + 1).collect();
    let mut m1 = Matrix::new(
        &h,
        tessera::CsrParts {
            rows: 300,
            cols: 200,
            nnz: a.nnz() as i64,
            row_ptr: tessera::Indices::I64(&rp),
            col_ind: tessera::Indices::I64(&ci),
            values: a.values(),
            base: tessera::IndexBase::One,
        },
    )
    .unwrap();
    let mut m0 = Matrix::from_csr(&h, a.clone());
    m0.analyze(&h, Algorithm::CsrVector, Tuning::None).unwrap();
    m1.analyze(&h, Algorithm::CsrVector, Tuning::None).unwrap();
    let x = x_for(200, 1);
    let (mut y0, mut y1) = (vec![0.0; 300], vec![0.0; 300]);
    m0.spmv(&h, Operation::NonTranspose, 1.0, &x, 0.0, &mut y0)
        .unwrap();
    m1.spmv(&h, Operation::NonTranspose, 1.0, &x, 0.0, &mut y1)
        .unwrap();
    assert_eq!(y0, y1, "bitwise equal: same arrays, same method");
}

#[test]
fn safe_api_reports_wrong_lengths_and_foreign_handles_instead_of_panicking() {
    let h = Handle::with_backend(BackendKind::Host, 0).unwrap();
    let (_, a) = tessera::io::load("gen:diag:10").unwrap();
    let mut m = Matrix::from_csr(&h, a);
    let mut y = vec![0.0; 10];
    let e = m
        .spmv(&h, Operation::NonTranspose, 1.0, &[1.0; 10], 0.0, &mut y)
        .unwrap_err();
    assert_eq!(e.status(), tessera::Status::NotAnalyzed);
    m.analyze(&h, Algorithm::Auto, Tuning::Online).unwrap();
    let e = m
        .spmv(&h, Operation::NonTranspose, 1.0, &[1.0; 9], 0.0, &mut y)
        .unwrap_err();
    assert_eq!(e.status(), tessera::Status::InvalidSize);
    assert!(e.detail().contains("x needs 10 entries"), "{}", e.detail());
    let e = m.update_values(&h, &[1.0; 3]).unwrap_err();
    assert_eq!(e.status(), tessera::Status::InvalidSize);
    m.update_values(&h, &[2.0; 10]).unwrap();
    m.spmv(&h, Operation::NonTranspose, 1.0, &[1.5; 10], 0.0, &mut y)
        .unwrap();
    assert!(y.iter().all(|&v| v == 3.0));
    assert!(m.info().params.contains("tuning=online"));
}
