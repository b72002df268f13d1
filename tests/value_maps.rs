//! Property tests of every method's value map (CSR entry -> slot in the method's own value
//! array, used by `update_values`): on the host backend, for every
//! implemented method, f32 and f64, with and without the deterministic variant,
//! `update_values` with random values gives bitwise the same products (both operations) as
//! creating and analyzing the matrix afresh with those values. Random patterns include empty
//! rows, one long row, duplicate entries and columns unsorted within a row (so the caller's
//! order differs from tessera's CSR order), rectangular shapes and empty matrices.
//!
//! Bounded: 48 cases per value type, about a second in a debug build.

use proptest::prelude::*;
use tessera::{
    Algorithm, BackendKind, CsrParts, Handle, IndexBase, Indices, Matrix, Operation, Scalar, Tuning,
};

/// A caller's CSR input: rows of column indices in the caller's order, and two value sets.
#[derive(Debug, Clone)]
struct Input {
    cols: usize,
    rows: Vec<Vec<usize>>,
    before: Vec<f64>,
    after: Vec<f64>,
    one_based: bool,
}

fn row(cols: usize) -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        3 => Just(Vec::new()),
        6 => prop::collection::vec(0..cols, 1..9),
        1 => prop::collection::vec(0..cols, 30..200),
    ]
}

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => -1.0e3..1.0e3f64,
        1 => Just(0.0),
        1 => prop::num::f64::NORMAL.prop_map(|v| v.clamp(-1e30, 1e30)),
    ]
}

fn input() -> impl Strategy<Value = Input> {
    (0usize..40, 1usize..70, any::<bool>())
        .prop_flat_map(|(nrows, cols, one_based)| {
            (
                Just(cols),
                prop::collection::vec(row(cols), nrows),
                Just(one_based),
            )
        })
        .prop_flat_map(|(cols, rows, one_based)| {
            let nnz: usize = rows.iter().map(Vec::len).sum();
            (
                Just(cols),
                Just(rows),
                prop::collection::vec(value(), nnz),
                prop::collection::vec(value(), nnz),
                Just(one_based),
            )
        })
        .prop_map(|(cols, rows, before, after, one_based)| Input {
            cols,
            rows,
            before,
            after,
            one_based,
        })
}

/// The matrix created from `inp` with `values` (caller order), analyzed with `alg`.
fn create<T: Scalar>(h: &Handle, inp: &Input, values: &[f64], alg: Algorithm) -> Matrix<T> {
    let b = inp.one_based as i64;
    let mut row_ptr = vec![b];
    let mut col_ind = Vec::new();
    for r in &inp.rows {
        col_ind.extend(r.iter().map(|&c| c as i64 + b));
        row_ptr.push(col_ind.len() as i64 + b);
    }
    let vals: Vec<T> = values.iter().map(|&v| T::from_f64(v)).collect();
    let mut m = Matrix::new(
        h,
        CsrParts {
            rows: inp.rows.len() as i64,
            cols: inp.cols as i64,
            nnz: col_ind.len() as i64,
            row_ptr: Indices::I64(&row_ptr),
            col_ind: Indices::I64(&col_ind),
            values: &vals,
            base: if inp.one_based {
                IndexBase::One
            } else {
                IndexBase::Zero
            },
        },
    )
    .unwrap();
    m.analyze(h, alg, Tuning::None).unwrap();
    m
}

/// y = A*x and y = A^T*x (alpha 1.5, beta -0.5 over a fixed y0), as bits.
fn products<T: Scalar>(h: &Handle, m: &Matrix<T>) -> Vec<u64> {
    let mut out = Vec::new();
    for op in [Operation::NonTranspose, Operation::Transpose] {
        let (xl, yl) = m.vector_lengths(op);
        let x: Vec<T> = (0..xl)
            .map(|i| T::from_f64(((i * 7919) % 101) as f64 / 50.0 - 1.0))
            .collect();
        let mut y: Vec<T> = (0..yl).map(|i| T::from_f64(i as f64 * 0.25)).collect();
        m.spmv(h, op, T::from_f64(1.5), &x, T::from_f64(-0.5), &mut y)
            .unwrap();
        out.extend(y.iter().map(|v| v.to_f64().to_bits()));
    }
    out
}

fn check<T: Scalar>(inp: &Input) -> Result<(), TestCaseError> {
    for deterministic in [false, true] {
        let mut h = Handle::with_backend(BackendKind::Host, 0).unwrap();
        h.set_deterministic(deterministic);
        for &alg in tessera::select::IMPLEMENTED {
            let mut updated = create::<T>(&h, inp, &inp.before, alg);
            updated
                .update_values(&h, &T::from_f64s(&inp.after))
                .unwrap();
            let fresh = create::<T>(&h, inp, &inp.after, alg);
            prop_assert_eq!(
                products(&h, &updated),
                products(&h, &fresh),
                "{} {:?} deterministic={}: update_values differs from re-creating the matrix",
                alg,
                T::VALUE_TYPE,
                deterministic
            );
        }
    }
    Ok(())
}

/// `Vec<T>` from f64s.
trait FromF64s: Sized {
    fn from_f64s(v: &[f64]) -> Vec<Self>;
}

impl<T: Scalar> FromF64s for T {
    fn from_f64s(v: &[f64]) -> Vec<T> {
        v.iter().map(|&x| T::from_f64(x)).collect()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn update_values_equals_recreating_the_matrix_f64(inp in input()) {
        check::<f64>(&inp)?;
    }

    #[test]
    fn update_values_equals_recreating_the_matrix_f32(inp in input()) {
        check::<f32>(&inp)?;
    }
}
