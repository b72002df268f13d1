//! Products checked against the plain f64 CSR product: shared by the host-backend tests and
//! the GPU tests, so both backends meet the same claims.

use tessera::{Algorithm, Csr, Handle, Matrix, Operation, Scalar, Tuning};

/// Deterministic x (or y) values in ±[0.1, 1.0]: never zero, both signs.
pub fn x_for(n: usize, seed: u64) -> Vec<f64> {
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

/// Asserts that `y` = alpha*op(A)*x + beta*y0 entry by entry, with a tolerance of
/// 10·eps·sqrt(longest row or column) relative to sum |a_ij x_j| (+ |beta y0_i|). NaN never
/// passes. `a` holds the values the method saw (already rounded to T).
#[allow(clippy::too_many_arguments)]
pub fn assert_product<T: Scalar>(
    what: &str,
    a: &Csr<f64>,
    op: Operation,
    alpha: f64,
    x: &[T],
    beta: f64,
    y0: &[T],
    y: &[T],
) {
    let longest = {
        let mut c = vec![0usize; a.cols()];
        a.col_ind().iter().for_each(|&j| c[j as usize] += 1);
        let rows = (0..a.rows()).map(|i| (a.row_ptr()[i + 1] - a.row_ptr()[i]) as usize);
        c.into_iter().chain(rows).max().unwrap_or(0)
    };
    let tol = 10.0 * T::EPSILON * (longest.max(1) as f64).sqrt();
    let xr: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
    let scale = a.abs_product_f64(op, &xr);
    let mut want: Vec<f64> = y0.iter().map(|v| v.to_f64()).collect();
    a.spmv_f64(op, alpha, &xr, beta, &mut want);
    assert_eq!(y.len(), want.len(), "{what}: y length");
    for i in 0..y.len() {
        let bound =
            tol * (alpha.abs() * scale[i] + (beta * y0[i].to_f64()).abs()) + f64::MIN_POSITIVE;
        let err = (y[i].to_f64() - want[i]).abs();
        assert!(
            err <= bound,
            "{what} {:?} {op} alpha={alpha} beta={beta}: y[{i}] = {} but the f64 product is {} (error {err:e} > {bound:e})",
            T::VALUE_TYPE,
            y[i],
            want[i]
        );
    }
}

/// [`assert_product`] of y = A x (alpha 1, beta 0).
pub fn assert_ax<T: Scalar>(what: &str, a: &Csr<f64>, x: &[T], y: &[T]) {
    let zeros = vec![T::ZERO; a.rows()];
    assert_product(what, a, Operation::NonTranspose, 1.0, x, 0.0, &zeros, y);
}

/// Analyzes `a64` in T with `alg`/`tuning` on `h` and checks both operations with
/// (alpha, beta) = (1, 0) (y full of NaN: beta = 0 must not read it), (-2, 0.5) and (0, 2).
pub fn check_typed<T: Scalar>(
    h: &Handle,
    name: &str,
    a64: &Csr<f64>,
    alg: Algorithm,
    tuning: Tuning,
) {
    let mut m = Matrix::from_csr(h, a64.convert::<T>());
    m.analyze(h, alg, tuning).unwrap();
    // The oracle multiplies the same rounded values the method sees.
    let a = m.csr(h).unwrap().convert::<f64>();
    for op in [Operation::NonTranspose, Operation::Transpose] {
        let (xl, yl) = m.vector_lengths(op);
        let x: Vec<T> = x_for(xl, 3).into_iter().map(T::from_f64).collect();
        for (alpha, beta) in [(1.0, 0.0), (-2.0, 0.5), (0.0, 2.0)] {
            let y0: Vec<T> = x_for(yl, 5).into_iter().map(T::from_f64).collect();
            let mut y = if beta == 0.0 {
                vec![T::from_f64(f64::NAN); yl]
            } else {
                y0.clone()
            };
            m.spmv(h, op, T::from_f64(alpha), &x, T::from_f64(beta), &mut y)
                .unwrap();
            assert_product(name, &a, op, alpha, &x, beta, &y0, &y);
        }
    }
}

/// Both value types, AUTO, no tuning.
pub fn check(h: &Handle, name: &str, a: &Csr<f64>) {
    check_typed::<f64>(h, name, a, Algorithm::Auto, Tuning::None);
    check_typed::<f32>(h, name, a, Algorithm::Auto, Tuning::None);
}

/// The shared matrices (../shared/matrices), or None with a printed skip line.
pub fn shared_matrix_files() -> Option<Vec<std::path::PathBuf>> {
    let Some(dir) = tessera::io::shared_matrices_dir() else {
        println!("skipped: ../shared/matrices not found (set TESSERA_MATRICES)");
        return None;
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
    if super::test_small() {
        // Compressed files up to 256 KiB: the small half of the set.
        let all = files.len();
        files.retain(|p| std::fs::metadata(p).is_ok_and(|m| m.len() <= 256 << 10));
        println!(
            "TESSERA_TEST_SMALL=1: {} of {all} shared matrices (the largest skipped)",
            files.len()
        );
    }
    Some(files)
}

/// Generated edge cases every backend must get right.
pub const EDGE_CASES: &[&str] = &[
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
];

/// Checks one method on one matrix the way every method's tests do: f32 and f64, both
/// operations, the alpha/beta cases of [`check_typed`], then `update_values` with new values in
/// the caller's entry order (from the host; on a CUDA handle also from device memory, through
/// the value map on the device) and the product again, without re-analysis.
pub fn check_method(h: &Handle, name: &str, a: &Csr<f64>, alg: Algorithm, tuning: Tuning) {
    check_typed::<f64>(h, name, a, alg, tuning);
    check_typed::<f32>(h, name, a, alg, tuning);
    check_update_values::<f64>(h, name, a, alg);
}

/// `update_values` (host array; then device array on a CUDA handle) followed by the product,
/// against the f64 product of the new values.
pub fn check_update_values<T: Scalar>(h: &Handle, name: &str, a64: &Csr<f64>, alg: Algorithm) {
    let mut m = Matrix::from_csr(h, a64.convert::<T>());
    m.analyze(h, alg, Tuning::None).unwrap();
    let (xl, yl) = m.vector_lengths(Operation::NonTranspose);
    let x: Vec<T> = x_for(xl, 11).into_iter().map(T::from_f64).collect();
    // New values in tessera's CSR order are also the caller's order here (from_csr).
    let fresh: Vec<T> = x_for(a64.nnz(), 17).into_iter().map(T::from_f64).collect();
    let mut expect = a64.clone();
    expect
        .values_mut()
        .iter_mut()
        .zip(&fresh)
        .for_each(|(d, s)| *d = s.to_f64());
    let y0 = vec![T::ZERO; yl];
    let run = |m: &Matrix<T>, what: &str| {
        let mut y = vec![T::from_f64(f64::NAN); yl];
        m.spmv(h, Operation::NonTranspose, T::ONE, &x, T::ZERO, &mut y)
            .unwrap();
        assert_product(
            what,
            &expect,
            Operation::NonTranspose,
            1.0,
            &x,
            0.0,
            &y0,
            &y,
        );
    };
    m.update_values(h, &fresh).unwrap();
    run(&m, &format!("{name} after update_values from the host"));
    if let Some(dev) = h.cuda() {
        // Back to the old values, then the fresh ones again from device memory.
        m.update_values(h, a64.convert::<T>().values()).unwrap();
        let d = tessera::backend::cuda::DeviceVec::from_slice(dev, &fresh).unwrap();
        m.update_values_device(h, d.addr()).unwrap();
        run(
            &m,
            &format!("{name} after update_values from device memory"),
        );
    }
}
