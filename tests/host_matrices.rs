//! The host backend through the safe Rust API (`Handle`, `Matrix<T>`) on every real matrix of
//! ../shared/matrices and on generated edge cases, in f32 and f64, both operations, against the
//! plain f64 CSR product.

use tessera::{Algorithm, BackendKind, Csr, Handle, Matrix, Operation, Scalar, Tuning};

fn x_for(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            0.1 + 0.9 * ((s >> 11) % 1_000_000) as f64 / 1e6 * if s & 1 == 0 { 1.0 } else { -1.0 }
        })
        .collect()
}

/// Checks alpha*op(A)*x + beta*y entry by entry against the f64 product, with a tolerance of
/// 10·eps·sqrt(longest row or column) relative to sum |a_ij x_j| (+ |beta y_i|). NaN never passes.
fn check_typed<T: Scalar>(h: &Handle, name: &str, a64: &Csr<f64>) {
    let mut m = Matrix::from_csr(h, a64.convert::<T>());
    m.analyze(h, Algorithm::Auto, Tuning::None).unwrap();
    // The oracle multiplies the same rounded values the method sees.
    let a = m.csr().convert::<f64>();
    let longest_col = {
        let mut c = vec![0usize; a.cols()];
        a.col_ind().iter().for_each(|&j| c[j as usize] += 1);
        c.into_iter().max().unwrap_or(0)
    };
    let tol = 10.0 * T::EPSILON * (m.stats().max.max(longest_col).max(1) as f64).sqrt();
    for op in [Operation::NonTranspose, Operation::Transpose] {
        let (xl, yl) = m.vector_lengths(op);
        let x: Vec<T> = x_for(xl, 3).into_iter().map(T::from_f64).collect();
        let xr: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
        let scale = a.abs_product_f64(op, &xr);
        for (alpha, beta) in [(1.0, 0.0), (-2.0, 0.5)] {
            let y0: Vec<T> = x_for(yl, 5).into_iter().map(T::from_f64).collect();
            let mut y = if beta == 0.0 {
                vec![T::from_f64(f64::NAN); yl]
            } else {
                y0.clone()
            };
            m.spmv(h, op, T::from_f64(alpha), &x, T::from_f64(beta), &mut y)
                .unwrap();
            let mut want: Vec<f64> = y0.iter().map(|v| v.to_f64()).collect();
            a.spmv_f64(op, alpha, &xr, beta, &mut want);
            for i in 0..yl {
                let bound = tol * (alpha.abs() * scale[i] + (beta * y0[i].to_f64()).abs())
                    + f64::MIN_POSITIVE;
                let err = (y[i].to_f64() - want[i]).abs();
                assert!(
                    err <= bound,
                    "{name} {:?} {op} alpha={alpha} beta={beta}: y[{i}] = {} but the f64 product is {} (error {err:e} > {bound:e})",
                    T::VALUE_TYPE,
                    y[i],
                    want[i]
                );
            }
        }
    }
}

fn check(name: &str, a: &Csr<f64>) {
    let h = Handle::with_backend(BackendKind::Host, 0).unwrap();
    check_typed::<f64>(&h, name, a);
    check_typed::<f32>(&h, name, a);
}

#[test]
fn every_shared_matrix_matches_the_f64_product_on_the_host_backend() {
    let Some(dir) = tessera::io::shared_matrices_dir() else {
        println!("skipped: ../shared/matrices not found (set TESSERA_MATRICES)");
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.to_string_lossy().ends_with(".mtx.xz") || p.to_string_lossy().ends_with(".mtx")
        })
        .collect();
    files.sort();
    assert!(
        files.len() >= 13,
        "expected the 13 shared matrices in {}, found {}",
        dir.display(),
        files.len()
    );
    for f in &files {
        let (name, a) = tessera::io::load(f.to_str().unwrap()).unwrap();
        check(&name, &a);
    }
}

#[test]
fn generated_edge_cases_match_the_f64_product_on_the_host_backend() {
    for spec in [
        "gen:emptyrows:2000,8,3",    // half the rows empty
        "gen:onerow:500,3000,3000",  // one dense row
        "gen:random:4,100000,700,2", // rectangular, wide
        "gen:random:100000,4,3,2",   // rectangular, tall
        "gen:empty:7,9",             // no entries
        "gen:circuit:3000,5,2,2500,4",
        "gen:powerlaw:11,8,2",
        "gen:elasticity:4",
        "gen:dense:37,53",
        "gen:lap3d7:9",
    ] {
        let (name, a) = tessera::io::load(spec).unwrap();
        check(&name, &a);
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
