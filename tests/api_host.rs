//! The C API on the host backend, driven from Rust through the exported `extern "C"` functions:
//! BLAS semantics, every accepted input form, the documented statuses, and that handles and
//! matrices survive failed calls. (The same claims are checked from C, C++ and Fortran by
//! tests/c_programs.rs.)

use std::ffi::{c_void, CStr};
use std::ptr::{null, null_mut};
use tessera::api::types::*;
use tessera::api::*;

fn last_error() -> String {
    // SAFETY: tessera_last_error never returns NULL and points to a NUL-terminated string.
    unsafe { CStr::from_ptr(tessera_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn host() -> tessera_handle {
    let mut h = null_mut();
    // SAFETY: h is a valid out-pointer.
    assert_eq!(
        unsafe { tessera_create_with(&mut h, TESSERA_BACKEND_HOST, 0) },
        0
    );
    h
}

/// A CSR in the caller's hands, with 0-based i32 indices.
struct Coo {
    rows: usize,
    cols: usize,
    row_ptr: Vec<i32>,
    col_ind: Vec<i32>,
    values: Vec<f64>,
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// A value in [-1, -0.1] U [0.1, 1].
    fn value(&mut self) -> f64 {
        let v = 0.1 + 0.9 * (self.next() % 1_000_000) as f64 / 1e6;
        if self.next() & 1 == 0 {
            v
        } else {
            -v
        }
    }
}

/// Random CSR with the given row lengths; columns unsorted and sometimes repeated.
fn random_csr(rows: usize, cols: usize, len: impl Fn(usize, &mut Rng) -> usize, seed: u64) -> Coo {
    let mut rng = Rng(seed | 1);
    let mut row_ptr = vec![0i32];
    let (mut col_ind, mut values) = (Vec::new(), Vec::new());
    for r in 0..rows {
        let n = if cols == 0 { 0 } else { len(r, &mut rng) };
        for _ in 0..n {
            col_ind.push(rng.below(cols) as i32);
            values.push(rng.value());
        }
        row_ptr.push(col_ind.len() as i32);
    }
    Coo {
        rows,
        cols,
        row_ptr,
        col_ind,
        values,
    }
}

impl Coo {
    /// The plain product in f64, straight from the caller's arrays.
    fn product(
        &self,
        transpose: bool,
        alpha: f64,
        x: &[f64],
        beta: f64,
        y0: &[f64],
    ) -> (Vec<f64>, Vec<f64>) {
        let n = if transpose { self.cols } else { self.rows };
        let mut y: Vec<f64> = (0..n)
            .map(|i| if beta == 0.0 { 0.0 } else { beta * y0[i] })
            .collect();
        let mut scale: Vec<f64> = (0..n)
            .map(|i| {
                if beta == 0.0 {
                    0.0
                } else {
                    (beta * y0[i]).abs()
                }
            })
            .collect();
        for r in 0..self.rows {
            for k in self.row_ptr[r] as usize..self.row_ptr[r + 1] as usize {
                let c = self.col_ind[k] as usize;
                let (i, j) = if transpose { (c, r) } else { (r, c) };
                y[i] += alpha * self.values[k] * x[j];
                scale[i] += (alpha * self.values[k] * x[j]).abs();
            }
        }
        (y, scale)
    }

    fn create(&self, h: tessera_handle, it: i32, base: i32, vt: i32) -> tessera_matrix {
        let b = base as i64;
        let rp64: Vec<i64> = self.row_ptr.iter().map(|&v| v as i64 + b).collect();
        let ci64: Vec<i64> = self.col_ind.iter().map(|&v| v as i64 + b).collect();
        let rp32: Vec<i32> = rp64.iter().map(|&v| v as i32).collect();
        let ci32: Vec<i32> = ci64.iter().map(|&v| v as i32).collect();
        let v32: Vec<f32> = self.values.iter().map(|&v| v as f32).collect();
        let (rp, ci): (*const c_void, *const c_void) = if it == TESSERA_INDEX_TYPE_I64 {
            (rp64.as_ptr().cast(), ci64.as_ptr().cast())
        } else {
            (rp32.as_ptr().cast(), ci32.as_ptr().cast())
        };
        let vals: *const c_void = if vt == TESSERA_VALUE_TYPE_F32 {
            v32.as_ptr().cast()
        } else {
            self.values.as_ptr().cast()
        };
        let mut a = null_mut();
        // SAFETY: every array has the length its argument promises.
        let s = unsafe {
            tessera_create_csr(
                h,
                &mut a,
                self.rows as i64,
                self.cols as i64,
                self.values.len() as i64,
                rp,
                ci,
                vals,
                it,
                base,
                vt,
            )
        };
        assert_eq!(s, 0, "create_csr: {}", last_error());
        a
    }
}

/// Runs spmv through the C API in the matrix's value type and returns y as f64.
#[allow(clippy::too_many_arguments)] // mirrors tessera_spmv, plus the value type
fn spmv(
    h: tessera_handle,
    a: tessera_matrix,
    vt: i32,
    op: i32,
    alpha: f64,
    x: &[f64],
    beta: f64,
    y0: &[f64],
) -> Vec<f64> {
    let status;
    let out: Vec<f64>;
    if vt == TESSERA_VALUE_TYPE_F32 {
        let (al, be) = (alpha as f32, beta as f32);
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let mut y32: Vec<f32> = y0.iter().map(|&v| v as f32).collect();
        // SAFETY: x and y have the lengths op(A) needs.
        status = unsafe {
            tessera_spmv(
                h,
                op,
                (&al as *const f32).cast(),
                a,
                x32.as_ptr().cast(),
                (&be as *const f32).cast(),
                y32.as_mut_ptr().cast(),
            )
        };
        out = y32.iter().map(|&v| v as f64).collect();
    } else {
        let mut y = y0.to_vec();
        // SAFETY: as above.
        status = unsafe {
            tessera_spmv(
                h,
                op,
                (&alpha as *const f64).cast(),
                a,
                x.as_ptr().cast(),
                (&beta as *const f64).cast(),
                y.as_mut_ptr().cast(),
            )
        };
        out = y;
    }
    assert_eq!(status, 0, "spmv: {}", last_error());
    out
}

fn check(got: &[f64], want: &[f64], scale: &[f64], eps: f64, max_row: usize, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let tol = 10.0 * eps * (max_row.max(1) as f64).sqrt();
    for i in 0..got.len() {
        let err = (got[i] - want[i]).abs();
        // NaN never passes: the comparison is false for NaN.
        assert!(
            err <= tol * scale[i].max(f64::MIN_POSITIVE),
            "{what}: y[{i}] = {} but the f64 product is {} (error {err:e}, tolerance {:e})",
            got[i],
            want[i],
            tol * scale[i]
        );
    }
}

/// Every input form, both operations, several alpha/beta (beta = 0 with NaN in y) against the
/// plain f64 product of the caller's own arrays.
fn check_all_forms(m: &Coo, what: &str) {
    let h = host();
    let max_row = (0..m.rows)
        .map(|r| (m.row_ptr[r + 1] - m.row_ptr[r]) as usize)
        .max()
        .unwrap_or(0);
    let mut rng = Rng(99);
    for vt in [TESSERA_VALUE_TYPE_F64, TESSERA_VALUE_TYPE_F32] {
        for (it, base) in [(TESSERA_INDEX_TYPE_I32, 0), (TESSERA_INDEX_TYPE_I64, 1)] {
            let a = m.create(h, it, base, vt);
            // SAFETY: live handle and matrix.
            assert_eq!(
                unsafe { tessera_analyze(h, a, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE) },
                0
            );
            let eps = if vt == TESSERA_VALUE_TYPE_F32 {
                f32::EPSILON as f64
            } else {
                f64::EPSILON
            };
            for op in [TESSERA_OPERATION_NON_TRANSPOSE, TESSERA_OPERATION_TRANSPOSE] {
                let t = op == TESSERA_OPERATION_TRANSPOSE;
                let (xl, yl) = if t {
                    (m.rows, m.cols)
                } else {
                    (m.cols, m.rows)
                };
                let x: Vec<f64> = (0..xl).map(|_| rng.value()).collect();
                // x, y rounded to the value type so that both sides see the same inputs.
                let round = |v: f64| {
                    if vt == TESSERA_VALUE_TYPE_F32 {
                        v as f32 as f64
                    } else {
                        v
                    }
                };
                let x: Vec<f64> = x.into_iter().map(round).collect();
                for (alpha, beta) in [(1.0, 0.0), (-0.5, 2.0), (2.0, 1.0), (0.0, -1.0), (0.0, 0.0)]
                {
                    let y0: Vec<f64> = if beta == 0.0 {
                        vec![f64::NAN; yl]
                    } else {
                        (0..yl).map(|_| round(rng.value())).collect()
                    };
                    let got = spmv(h, a, vt, op, alpha, &x, beta, &y0);
                    let (want, scale) = m.product(t, alpha, &x, beta, &y0);
                    check(
                        &got,
                        &want,
                        &scale,
                        eps,
                        max_row + 1,
                        &format!(
                            "{what} vt={vt} it={it} base={base} op={op} alpha={alpha} beta={beta}"
                        ),
                    );
                }
            }
            // SAFETY: live matrix, destroyed once.
            assert_eq!(unsafe { tessera_destroy_matrix(a) }, 0);
        }
    }
    // SAFETY: live handle, destroyed once.
    assert_eq!(unsafe { tessera_destroy(h) }, 0);
}

#[test]
fn hand_computed_4x4_product_and_transpose() {
    // A = [[1 0 2 0], [0 0 0 0], [0 3 0 4], [5 0 0 6]], x = [1 2 3 4]
    // A x = [7, 0, 22, 29]; A^T x = [1+20, 9, 2, 12+24] = [21, 9, 2, 36]
    let m = Coo {
        rows: 4,
        cols: 4,
        row_ptr: vec![0, 2, 2, 4, 6],
        col_ind: vec![2, 0, 3, 1, 0, 3],
        values: vec![2.0, 1.0, 4.0, 3.0, 5.0, 6.0],
    };
    let h = host();
    let a = m.create(h, TESSERA_INDEX_TYPE_I32, 0, TESSERA_VALUE_TYPE_F64);
    // SAFETY: live handle and matrix.
    assert_eq!(
        unsafe { tessera_analyze(h, a, TESSERA_ALGORITHM_CSR_VECTOR, TESSERA_TUNING_NONE) },
        0
    );
    let x = [1.0, 2.0, 3.0, 4.0];
    assert_eq!(
        spmv(h, a, 1, 0, 1.0, &x, 0.0, &[f64::NAN; 4]),
        [7.0, 0.0, 22.0, 29.0]
    );
    assert_eq!(
        spmv(h, a, 1, 1, 1.0, &x, 0.0, &[f64::NAN; 4]),
        [21.0, 9.0, 2.0, 36.0]
    );
    assert_eq!(
        spmv(h, a, 1, 0, 2.0, &x, -1.0, &[1.0, 1.0, 1.0, 1.0]),
        [13.0, -1.0, 43.0, 57.0]
    );
    // New values in the caller's (unsorted) order: all ones -> A x = [4, 0, 6, 5].
    let ones = [1.0f64; 6];
    // SAFETY: six values for six entries.
    assert_eq!(
        unsafe { tessera_update_values(h, a, ones.as_ptr().cast()) },
        0
    );
    assert_eq!(
        spmv(h, a, 1, 0, 1.0, &x, 0.0, &[0.0; 4]),
        [4.0, 0.0, 6.0, 5.0]
    );
    // SAFETY: live objects.
    unsafe {
        tessera_destroy_matrix(a);
        tessera_destroy(h);
    }
}

#[test]
fn duplicate_entries_add() {
    let m = Coo {
        rows: 2,
        cols: 2,
        row_ptr: vec![0, 3, 3],
        col_ind: vec![1, 1, 0],
        values: vec![1.0, 2.0, 5.0],
    };
    let h = host();
    let a = m.create(h, TESSERA_INDEX_TYPE_I32, 0, TESSERA_VALUE_TYPE_F64);
    // SAFETY: live handle and matrix.
    assert_eq!(
        unsafe { tessera_analyze(h, a, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_QUICK) },
        0
    );
    assert_eq!(
        spmv(h, a, 1, 0, 1.0, &[10.0, 100.0], 0.0, &[f64::NAN; 2]),
        [350.0, 0.0]
    );
    // SAFETY: live objects.
    unsafe {
        tessera_destroy_matrix(a);
        tessera_destroy(h);
    }
}

#[test]
fn random_matrix_with_empty_rows_matches_the_f64_product_in_every_form() {
    check_all_forms(
        &random_csr(
            300,
            250,
            |_, r| if r.below(3) == 0 { 0 } else { r.below(40) },
            1,
        ),
        "random with empty rows",
    );
}

#[test]
fn one_very_long_row_matches_the_f64_product() {
    check_all_forms(
        &random_csr(200, 5000, |r, g| if r == 77 { 4000 } else { g.below(5) }, 2),
        "one long row",
    );
}

#[test]
fn nnz_not_a_multiple_of_16_matches_the_f64_product() {
    let m = random_csr(37, 41, |_, r| 1 + r.below(9), 3);
    assert_ne!(m.values.len() % 16, 0);
    check_all_forms(&m, "odd nnz");
}

#[test]
fn rectangular_both_ways_match_the_f64_product() {
    check_all_forms(
        &random_csr(4, 100_000, |_, r| 500 + r.below(1000), 4),
        "4 x 100000",
    );
    check_all_forms(&random_csr(100_000, 4, |_, r| r.below(5), 5), "100000 x 4");
}

#[test]
fn empty_matrices_are_valid_and_return_at_once() {
    let h = host();
    for (rows, cols) in [(0usize, 0usize), (3, 0), (0, 3), (5, 5)] {
        let m = Coo {
            rows,
            cols,
            row_ptr: vec![0; rows + 1],
            col_ind: vec![],
            values: vec![],
        };
        for vt in [0, 1] {
            let a = m.create(h, TESSERA_INDEX_TYPE_I32, 0, vt);
            // SAFETY: live handle and matrix.
            assert_eq!(
                unsafe { tessera_analyze(h, a, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE) },
                0
            );
            let x = vec![1.0; cols];
            let y = spmv(h, a, vt, 0, 1.0, &x, 0.0, &vec![f64::NAN; rows]);
            assert!(y.iter().all(|&v| v == 0.0), "{rows}x{cols}: {y:?}");
            let y = spmv(h, a, vt, 1, 1.0, &vec![1.0; rows], 3.0, &vec![1.0; cols]);
            assert!(y.iter().all(|&v| v == 3.0));
            // SAFETY: live matrix.
            unsafe { tessera_destroy_matrix(a) };
        }
    }
    // NULL col_ind/values are fine when nnz = 0.
    let rp = [0i32; 3];
    let mut a = null_mut();
    // SAFETY: row_ptr has rows + 1 entries.
    let s = unsafe {
        tessera_create_csr(
            h,
            &mut a,
            2,
            2,
            0,
            rp.as_ptr().cast(),
            null(),
            null(),
            0,
            0,
            1,
        )
    };
    assert_eq!(s, 0, "{}", last_error());
    // SAFETY: live objects.
    unsafe {
        tessera_destroy_matrix(a);
        tessera_destroy(h);
    }
}

#[test]
fn malformed_csr_is_invalid_matrix_with_the_entry_named_and_the_handle_survives() {
    let h = host();
    let v = [1.0f64; 3];
    let cases: [(&[i32], &[i32], i32, &str); 4] = [
        (
            &[0, 2, 1, 3],
            &[0, 1, 2],
            0,
            "row_ptr is not non-decreasing: row_ptr[1] = 2 > row_ptr[2] = 1",
        ),
        (
            &[1, 2, 2, 3],
            &[0, 1, 2],
            0,
            "row_ptr[0] = 1 but it must equal the index base",
        ),
        (
            &[0, 1, 2, 3],
            &[0, 1, 7],
            0,
            "col_ind[2] = 7 (row 2) is out of range",
        ),
        (
            &[1, 2, 3, 4],
            &[1, 2, 0],
            1,
            "col_ind[2] = 0 (row 3) is out of range",
        ),
    ];
    for (rp, ci, base, msg) in cases {
        let mut a: tessera_matrix = 0x1234 as tessera_matrix;
        // SAFETY: arrays of the promised lengths.
        let s = unsafe {
            tessera_create_csr(
                h,
                &mut a,
                3,
                3,
                3,
                rp.as_ptr().cast(),
                ci.as_ptr().cast(),
                v.as_ptr().cast(),
                0,
                base,
                1,
            )
        };
        assert_eq!(s, TESSERA_STATUS_INVALID_MATRIX);
        assert_eq!(a as usize, 0x1234, "out-parameter written on failure");
        assert!(last_error().contains(msg), "{} lacks {msg}", last_error());
    }
    // nnz disagreeing with row_ptr[rows].
    let mut a = null_mut();
    // SAFETY: arrays of the promised lengths.
    let s = unsafe {
        tessera_create_csr(
            h,
            &mut a,
            3,
            3,
            2,
            [0i32, 1, 2, 3].as_ptr().cast(),
            [0i32, 1].as_ptr().cast(),
            v.as_ptr().cast(),
            0,
            0,
            1,
        )
    };
    assert_eq!(s, TESSERA_STATUS_INVALID_MATRIX);
    assert!(
        last_error().contains("row_ptr[3] = 3 points past the last entry"),
        "{}",
        last_error()
    );
    // The handle still works.
    check_all_forms(&random_csr(10, 10, |_, r| r.below(4), 6), "after failures");
    // SAFETY: live handle.
    unsafe { tessera_destroy(h) };
}

#[test]
fn statuses_follow_the_documented_argument_order() {
    let h = host();
    let m = random_csr(6, 6, |_, r| 1 + r.below(3), 7);
    let a = m.create(h, 0, 0, 1);
    let (one, x, mut y) = (1.0f64, [1.0f64; 6], [0.0f64; 6]);
    let (o, xp, yp) = (
        (&one as *const f64).cast::<c_void>(),
        x.as_ptr().cast::<c_void>(),
        y.as_mut_ptr().cast::<c_void>(),
    );
    // SAFETY (whole block): every pointer is NULL, valid, or a deliberately invalid handle value
    // that tessera must reject before dereferencing.
    unsafe {
        assert_eq!(
            tessera_spmv(h, 0, o, a, xp, o, yp),
            TESSERA_STATUS_NOT_ANALYZED
        );
        assert!(last_error().contains("tessera_analyze"));
        assert_eq!(
            tessera_spmv(
                null_mut(),
                9,
                null(),
                null_mut(),
                null(),
                null(),
                null_mut()
            ),
            TESSERA_STATUS_INVALID_HANDLE
        );
        assert_eq!(
            tessera_spmv(h, 9, null(), null_mut(), null(), null(), null_mut()),
            TESSERA_STATUS_INVALID_HANDLE
        );
        assert_eq!(
            tessera_spmv(h, 9, null(), a, null(), null(), null_mut()),
            TESSERA_STATUS_INVALID_VALUE
        );
        assert_eq!(
            tessera_spmv(h, 0, null(), a, xp, o, yp),
            TESSERA_STATUS_INVALID_POINTER
        );
        assert!(last_error().contains("alpha"));
        assert_eq!(tessera_analyze(h, a, 6, 0), TESSERA_STATUS_INVALID_VALUE);
        assert_eq!(tessera_analyze(h, a, 1, 4), TESSERA_STATUS_INVALID_VALUE);
        // Methods this build does not have answer NOT_SUPPORTED; the others analyze.
        for (alg, which) in [
            (TESSERA_ALGORITHM_HOLA, tessera::Algorithm::Hola),
            (TESSERA_ALGORITHM_BCCOO, tessera::Algorithm::Bccoo),
            (TESSERA_ALGORITHM_BRC, tessera::Algorithm::Brc),
            (TESSERA_ALGORITHM_TILE, tessera::Algorithm::Tile),
        ] {
            if tessera::select::implemented(which) {
                assert_eq!(tessera_analyze(h, a, alg, 0), 0, "{}", last_error());
            } else {
                assert_eq!(tessera_analyze(h, a, alg, 0), TESSERA_STATUS_NOT_SUPPORTED);
                assert!(last_error().contains("not implemented"), "{}", last_error());
            }
        }
        for tune in 0..4 {
            assert_eq!(tessera_analyze(h, a, TESSERA_ALGORITHM_AUTO, tune), 0);
        }
        assert_eq!(
            tessera_spmv(h, 0, o, a, null(), o, yp),
            TESSERA_STATUS_INVALID_POINTER
        );
        assert!(last_error().contains("x is NULL"), "{}", last_error());
        assert_eq!(
            tessera_spmv(h, 0, o, a, xp, o, null_mut()),
            TESSERA_STATUS_INVALID_POINTER
        );
        assert_eq!(
            tessera_spmv(h, 0, o, a, yp, o, yp),
            TESSERA_STATUS_INVALID_VALUE
        );
        assert!(last_error().contains("overlap"));
        let mut b = null_mut();
        let rp = [0i32; 2];
        let rpp = rp.as_ptr().cast::<c_void>();
        // (rows, cols, nnz, row_ptr, it, base, vt, out) -> status; col_ind/values are NULL.
        let mut create = |rows: i64,
                          cols: i64,
                          nnz: i64,
                          rpp: *const c_void,
                          it: i32,
                          base: i32,
                          vt: i32,
                          out: bool| {
            let a: *mut tessera_matrix = if out { &mut b } else { null_mut() };
            tessera_create_csr(h, a, rows, cols, nnz, rpp, null(), null(), it, base, vt)
        };
        for (args, want) in [
            ((-1, 1, 0, rpp, 0, 0, 1, true), TESSERA_STATUS_INVALID_SIZE),
            ((1, -1, 0, rpp, 0, 0, 1, true), TESSERA_STATUS_INVALID_SIZE),
            ((1, 1, -1, rpp, 0, 0, 1, true), TESSERA_STATUS_INVALID_SIZE),
            (
                (1 << 31, 1, 0, rpp, 0, 0, 1, true),
                TESSERA_STATUS_NOT_SUPPORTED,
            ),
            (
                (1, 1, 1i64 << 32, rpp, 0, 0, 1, true),
                TESSERA_STATUS_NOT_SUPPORTED,
            ),
            (
                (1, 1, 1, rpp, 0, 0, 1, true),
                TESSERA_STATUS_INVALID_POINTER,
            ),
            (
                (1, 1, 0, null(), 0, 0, 1, true),
                TESSERA_STATUS_INVALID_POINTER,
            ),
            ((1, 1, 0, rpp, 2, 0, 1, true), TESSERA_STATUS_INVALID_VALUE),
            ((1, 1, 0, rpp, 0, 2, 1, true), TESSERA_STATUS_INVALID_VALUE),
            ((1, 1, 0, rpp, 0, 0, 2, true), TESSERA_STATUS_INVALID_VALUE),
            (
                (1, 1, 0, rpp, 0, 0, 1, false),
                TESSERA_STATUS_INVALID_POINTER,
            ),
        ] {
            let (r, c, n, p, it, base, vt, out) = args;
            assert_eq!(
                create(r, c, n, p, it, base, vt, out),
                want,
                "{args:?}: {}",
                last_error()
            );
            if want == TESSERA_STATUS_NOT_SUPPORTED {
                assert!(last_error().contains("2^31-1"), "{}", last_error());
            }
        }
        assert!(b.is_null(), "out-parameter written on failure");
        // A foreign pointer is not a handle.
        let mut fake = [0u64; 8];
        assert_eq!(
            tessera_set_stream(fake.as_mut_ptr().cast(), null_mut()),
            TESSERA_STATUS_INVALID_HANDLE
        );
        assert_eq!(
            tessera_analyze(h, fake.as_mut_ptr().cast(), 0, 0),
            TESSERA_STATUS_INVALID_HANDLE
        );
        assert_eq!(
            tessera_update_values(h, a, null()),
            TESSERA_STATUS_INVALID_POINTER
        );
        assert_eq!(
            tessera_matrix_get_info(a, null_mut()),
            TESSERA_STATUS_INVALID_POINTER
        );
        assert_eq!(
            tessera_matrix_get_info(null_mut(), null_mut()),
            TESSERA_STATUS_INVALID_HANDLE
        );
        assert_eq!(
            tessera_create_with(&mut b.cast(), 2, 0),
            TESSERA_STATUS_INVALID_VALUE
        );
        let mut h2 = null_mut();
        assert_eq!(
            tessera_create_with(&mut h2, TESSERA_BACKEND_HOST, -1),
            TESSERA_STATUS_INVALID_VALUE
        );
        assert_eq!(
            tessera_get_version(null_mut(), null_mut(), null_mut()),
            TESSERA_STATUS_INVALID_POINTER
        );
        // Everything still works after all that.
        assert_eq!(tessera_set_stream(h, 0x10 as *mut c_void), 0);
        assert_eq!(tessera_spmv(h, 0, o, a, xp, o, yp), 0);
        // Destroyed objects are rejected, not used.
        assert_eq!(tessera_destroy_matrix(a), 0);
        assert_eq!(tessera_destroy_matrix(a), TESSERA_STATUS_INVALID_HANDLE);
        assert_eq!(
            tessera_spmv(h, 0, o, a, xp, o, yp),
            TESSERA_STATUS_INVALID_HANDLE
        );
        assert_eq!(tessera_destroy(null_mut()), 0);
        assert_eq!(tessera_destroy_matrix(null_mut()), 0);
        assert_eq!(tessera_destroy(h), 0);
        assert_eq!(tessera_destroy(h), TESSERA_STATUS_INVALID_HANDLE);
    }
}

#[test]
fn info_reports_the_chosen_method_its_parameters_and_footprint() {
    let h = host();
    let m = random_csr(1000, 1000, |_, r| 10 + r.below(20), 8);
    let a = m.create(h, 0, 0, 1);
    // SAFETY: zeroed is a valid tessera_matrix_info (plain integers and bytes).
    let mut info: tessera_matrix_info = unsafe { std::mem::zeroed() };
    // SAFETY: live matrix, valid out-pointer.
    unsafe {
        assert_eq!(tessera_matrix_get_info(a, &mut info), 0);
        assert_eq!(info.algorithm, TESSERA_ALGORITHM_AUTO);
        assert_eq!(
            tessera_analyze(h, a, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE),
            0
        );
        assert_eq!(tessera_matrix_get_info(a, &mut info), 0);
    }
    assert_eq!(info.algorithm, TESSERA_ALGORITHM_CSR_VECTOR);
    assert_eq!(
        (info.rows, info.cols, info.nnz),
        (1000, 1000, m.values.len() as i64)
    );
    assert_eq!(info.device_bytes as usize, 1001 * 4 + m.values.len() * 12);
    assert_eq!(info.deterministic, 1);
    assert!(info.analysis_ms >= 0.0);
    // SAFETY: params is NUL-terminated (at most 255 bytes of text).
    let params = unsafe { CStr::from_ptr(info.params.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    // mean row length ~19.5 -> sqrt ~4.4 -> coop 8
    assert!(
        params.starts_with("coop=8 repeat=1 block_size=128"),
        "{params}"
    );
    // SAFETY: live objects.
    unsafe {
        tessera_destroy_matrix(a);
        tessera_destroy(h);
    }
}

#[test]
fn status_names_and_sentences_exist_for_every_code_and_unknown_ones() {
    for s in [0, 1, 2, 3, 4, 6, 7, 10, 100, 101, 102, 103, 104, 105, 106] {
        // SAFETY: never NULL, static, NUL-terminated.
        let (n, t) = unsafe {
            (
                CStr::from_ptr(tessera_status_name(s)),
                CStr::from_ptr(tessera_status_string(s)),
            )
        };
        assert!(
            n.to_str().unwrap().starts_with("TESSERA_STATUS_")
                && !n.to_str().unwrap().ends_with("UNKNOWN")
        );
        assert!(t.to_str().unwrap().ends_with('.'));
    }
    // SAFETY: as above.
    let n = unsafe { CStr::from_ptr(tessera_status_name(5)) };
    assert_eq!(n.to_str().unwrap(), "TESSERA_STATUS_UNKNOWN");
    // SAFETY: as above.
    assert_eq!(
        unsafe { CStr::from_ptr(tessera_status_name(103)) }
            .to_str()
            .unwrap(),
        "TESSERA_STATUS_INVALID_MATRIX"
    );
}

#[test]
fn cuda_handle_is_created_on_a_gpu_or_is_no_device_naming_what_is_missing() {
    let mut h = 0x99 as tessera_handle;
    // SAFETY: valid out-pointer.
    let s = unsafe { tessera_create_with(&mut h, TESSERA_BACKEND_CUDA, 0) };
    if s == TESSERA_STATUS_SUCCESS {
        // A machine with a GPU: a real handle.
        // SAFETY: h was just created.
        assert_eq!(unsafe { tessera_destroy(h) }, TESSERA_STATUS_SUCCESS);
        return;
    }
    assert_eq!(s, TESSERA_STATUS_NO_DEVICE, "{}", last_error());
    assert_eq!(
        h as usize, 0x99,
        "the out-parameter is written only on success"
    );
    let e = last_error();
    assert!(
        e.contains("libcuda") || e.contains("NVRTC") || e.contains("no CUDA device"),
        "{e}"
    );
    assert!(e.contains("TESSERA_BACKEND=host"), "{e}");
}

#[test]
fn version_matches_cargo() {
    let (mut a, mut b, mut c) = (-1, -1, -1);
    // SAFETY: valid out-pointers.
    assert_eq!(unsafe { tessera_get_version(&mut a, &mut b, &mut c) }, 0);
    assert_eq!(format!("{a}.{b}.{c}"), env!("CARGO_PKG_VERSION"));
}

#[test]
fn one_matrix_multiplied_from_four_threads_each_with_its_own_handle() {
    let m = random_csr(2000, 2000, |_, r| r.below(30), 11);
    let h0 = host();
    let a = m.create(h0, 0, 0, 1);
    // SAFETY: live handle and matrix.
    assert_eq!(unsafe { tessera_analyze(h0, a, 0, 0) }, 0);
    let x: Vec<f64> = (0..2000).map(|i| (i % 13) as f64 - 6.0).collect();
    let (want, scale) = m.product(false, 1.0, &x, 0.0, &[]);
    let a_addr = a as usize; // the contract allows shared use of a matrix across threads
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let h = host();
                for _ in 0..20 {
                    let got = spmv(
                        h,
                        a_addr as tessera_matrix,
                        1,
                        0,
                        1.0,
                        &x,
                        0.0,
                        &[f64::NAN; 2000],
                    );
                    check(&got, &want, &scale, f64::EPSILON, 30, "threaded");
                }
                // SAFETY: this thread's own handle.
                unsafe { tessera_destroy(h) };
            });
        }
    });
    // SAFETY: live objects, no thread uses them any more.
    unsafe {
        tessera_destroy_matrix(a);
        tessera_destroy(h0);
    }
}

/// AUTO's background build through the C API: analyze answers with CSR_VECTOR on a matrix
/// whose heuristic format is BRC, `tessera_finish_background` swaps BRC in, info says so;
/// NULL arguments and an unanalyzed matrix get their statuses.
#[test]
fn finish_background_swaps_in_the_format_auto_builds() {
    let h = host();
    // Rows of exactly 16 distinct columns: even short rows, over 1M non-zeros.
    let (rows, k) = (70_000usize, 16usize);
    let row_ptr: Vec<i32> = (0..=rows).map(|r| (r * k) as i32).collect();
    let col_ind: Vec<i32> = (0..rows * k)
        .map(|e| (((e / k) * 7919 + (e % k) * 4099) % rows) as i32)
        .collect();
    let mut col_ind = col_ind;
    col_ind.chunks_mut(k).for_each(|c| c.sort_unstable());
    let values: Vec<f64> = (0..rows * k).map(|e| 1.0 + (e % 5) as f64).collect();
    let coo = Coo {
        rows,
        cols: rows,
        row_ptr,
        col_ind,
        values,
    };
    let a = coo.create(h, TESSERA_INDEX_TYPE_I32, 0, TESSERA_VALUE_TYPE_F64);
    // SAFETY: live handle and matrix; info is a valid out-pointer.
    unsafe {
        assert_eq!(
            tessera_finish_background(h, a),
            TESSERA_STATUS_NOT_ANALYZED,
            "{}",
            last_error()
        );
        assert_eq!(
            tessera_analyze(h, a, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE),
            0
        );
        assert_eq!(
            tessera_finish_background(null_mut(), a),
            TESSERA_STATUS_INVALID_HANDLE
        );
        assert_eq!(
            tessera_finish_background(h, null_mut()),
            TESSERA_STATUS_INVALID_HANDLE
        );
        assert_eq!(tessera_finish_background(h, a), 0, "{}", last_error());
        let mut info = std::mem::zeroed::<tessera_matrix_info>();
        assert_eq!(tessera_matrix_get_info(a, &mut info), 0);
        assert_eq!(info.algorithm, TESSERA_ALGORITHM_BRC);
        let params = CStr::from_ptr(info.params.as_ptr()).to_string_lossy();
        assert!(params.contains("built in the background"), "{params}");
        assert_eq!(tessera_destroy_matrix(a), 0);
        assert_eq!(tessera_destroy(h), 0);
    }
}

/// tessera_create_csr_borrowed reads device arrays in place: on the host backend it refuses
/// with INVALID_VALUE and a sentence, writes nothing to A, and the handle keeps working.
#[test]
fn borrowing_needs_a_cuda_handle_and_leaves_the_host_handle_working() {
    let h = host();
    let m = random_csr(30, 20, |_, r| 1 + r.below(4), 9);
    let mut a: tessera_matrix = null_mut();
    // SAFETY: host arrays of their lengths; `a` is a valid out-pointer.
    let s = unsafe {
        tessera_create_csr_borrowed(
            h,
            &mut a,
            m.rows as i64,
            m.cols as i64,
            m.values.len() as i64,
            m.row_ptr.as_ptr().cast(),
            m.col_ind.as_ptr().cast(),
            m.values.as_ptr().cast(),
            TESSERA_INDEX_TYPE_I32,
            TESSERA_INDEX_BASE_ZERO,
            TESSERA_VALUE_TYPE_F64,
        )
    };
    assert_eq!(s, TESSERA_STATUS_INVALID_VALUE);
    assert!(last_error().contains("CUDA handle"), "{}", last_error());
    assert!(a.is_null());
    // SAFETY: NULL out-pointer: refused before anything is read.
    let s = unsafe {
        tessera_create_csr_borrowed(
            h,
            null_mut(),
            1,
            1,
            0,
            null(),
            null(),
            null(),
            TESSERA_INDEX_TYPE_I32,
            TESSERA_INDEX_BASE_ZERO,
            TESSERA_VALUE_TYPE_F64,
        )
    };
    assert_eq!(s, TESSERA_STATUS_INVALID_POINTER, "{}", last_error());
    let a = m.create(h, TESSERA_INDEX_TYPE_I32, 0, TESSERA_VALUE_TYPE_F64);
    // SAFETY: live handle and matrix.
    unsafe {
        assert_eq!(tessera_destroy_matrix(a), 0);
        assert_eq!(tessera_destroy(h), 0);
    }
}
