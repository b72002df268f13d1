//! `tessera_create_csr` with every array in device memory: validated, converted (int32/int64,
//! base 0/1) and measured (row statistics) on the device, without the copy through the host
//! and the host-side checks. The claims, on a real GPU:
//! - the matrix equals the one made from the same arrays on the host: tessera's CSR, its row
//!   statistics, and AUTO's product;
//! - columns unsorted within a row take the host path, which sorts them, and update_values
//!   still follows the caller's order;
//! - every malformed array gets the status and the sentence the host path gives.
//!
//! And host arrays on the CUDA backend's device path (`CreatePath::Device`, `Matrix::new`'s from
//! `HOST_IMPORT_MIN_SIZE` rows plus entries up): int32 base-0 arrays uploaded as they are and
//! inspected, others converted by the same kernels; the same claims, against the host path
//! (`CreatePath::Host`).
//!
//! And host arrays on the direct path (`CreatePath::Direct`, the default below
//! that size): int32 base-0 sorted arrays checked on the host without a copy and uploaded as they
//! are, no host copy kept; every other array takes the host path; the same claims, and every
//! method runs and updates its values over such a matrix.
//!
//! Without a GPU every test prints one "skipped: no CUDA device" line and returns.

mod common;

use common::gpu::{gpu, shared_device};
use common::products::{assert_ax, x_for, EDGE_CASES};
use std::ffi::{c_void, CStr};
use tessera::api::types::*;
use tessera::api::*;
use tessera::backend::cuda::DeviceVec;
use tessera::{
    AnyMatrix, CreatePath, Csr, CsrParts, Handle, IndexBase, Indices, Matrix, Operation,
};

fn last_error() -> String {
    // SAFETY: tessera_last_error returns a NUL-terminated thread-local string.
    unsafe { CStr::from_ptr(tessera_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// A CUDA `tessera_handle` (the C API on device 0).
fn c_handle() -> tessera_handle {
    let mut h = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(
        unsafe { tessera_create_with(&mut h, TESSERA_BACKEND_CUDA, 0) },
        0
    );
    h
}

/// The caller's arrays: row_ptr and col_ind as i32 or i64 with `base`, f64 values.
struct Arrays {
    rows: usize,
    cols: usize,
    row_ptr: Vec<i64>,
    col_ind: Vec<i64>,
    values: Vec<f64>,
}

impl Arrays {
    fn of(a: &Csr<f64>, base: i64) -> Self {
        Arrays {
            rows: a.rows(),
            cols: a.cols(),
            row_ptr: a.row_ptr().iter().map(|&v| v as i64 + base).collect(),
            col_ind: a.col_ind().iter().map(|&v| v as i64 + base).collect(),
            values: a.values().to_vec(),
        }
    }

    /// The arrays of `a` (int32-sized, base 0) with each row's entries reversed: unsorted
    /// columns, the same matrix.
    fn reversed_rows(a: &Csr<f64>) -> Self {
        let mut x = Arrays::of(a, 0);
        for r in 0..a.rows() {
            let (s, e) = (x.row_ptr[r] as usize, x.row_ptr[r + 1] as usize);
            x.col_ind[s..e].reverse();
            x.values[s..e].reverse();
        }
        x
    }

    /// Creates the matrix through the C API from host or device copies of the arrays; the
    /// status, the matrix (on success) and the last error.
    fn create(
        &self,
        h: tessera_handle,
        dev: bool,
        i64s: bool,
        base: i32,
    ) -> (i32, tessera_matrix, String) {
        let dv = gpu().unwrap().cuda().unwrap().clone();
        let rp32: Vec<i32> = self.row_ptr.iter().map(|&v| v as i32).collect();
        let ci32: Vec<i32> = self.col_ind.iter().map(|&v| v as i32).collect();
        // Device copies live until the end of this call (tessera copies them).
        let (d64r, d64c, d32r, d32c, dval);
        let (rp, ci, vals): (*const c_void, *const c_void, *const c_void) = if dev {
            dval = DeviceVec::from_slice(&dv, &self.values).unwrap();
            let v = dval.addr() as *const c_void;
            if i64s {
                d64r = DeviceVec::from_slice(&dv, &self.row_ptr).unwrap();
                d64c = DeviceVec::from_slice(&dv, &self.col_ind).unwrap();
                (d64r.addr() as _, d64c.addr() as _, v)
            } else {
                d32r = DeviceVec::from_slice(&dv, &rp32).unwrap();
                d32c = DeviceVec::from_slice(&dv, &ci32).unwrap();
                (d32r.addr() as _, d32c.addr() as _, v)
            }
        } else if i64s {
            (
                self.row_ptr.as_ptr().cast(),
                self.col_ind.as_ptr().cast(),
                self.values.as_ptr().cast(),
            )
        } else {
            (
                rp32.as_ptr().cast(),
                ci32.as_ptr().cast(),
                self.values.as_ptr().cast(),
            )
        };
        let mut a = std::ptr::null_mut();
        // SAFETY: every array holds what its length argument promises (host or device).
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
                if i64s {
                    TESSERA_INDEX_TYPE_I64
                } else {
                    TESSERA_INDEX_TYPE_I32
                },
                base,
                TESSERA_VALUE_TYPE_F64,
            )
        };
        (s, a, if s == 0 { String::new() } else { last_error() })
    }
}

/// What `tessera_create_csr_borrowed` makes of device copies of `x` (int32 or int64 indices,
/// base 0): the status, the matrix (on success) and the last error. The copies live in `keep`
/// until the caller has destroyed the matrix.
fn create_borrowed(
    h: tessera_handle,
    x: &Arrays,
    i64s: bool,
    keep: &mut Vec<DeviceVec<u8>>,
) -> (i32, tessera_matrix, String) {
    create_borrowed_at(h, x, i64s, 0, keep)
}

/// [`create_borrowed`] with col_ind starting `pad` indices into its allocation (an address that
/// is not 16-byte aligned for int32 with pad 1: the inspection's one-by-one loads).
fn create_borrowed_at(
    h: tessera_handle,
    x: &Arrays,
    i64s: bool,
    pad: usize,
    keep: &mut Vec<DeviceVec<u8>>,
) -> (i32, tessera_matrix, String) {
    let dv = gpu().unwrap().cuda().unwrap().clone();
    let bytes = |v: Vec<u8>| {
        // At least one byte: an empty array still needs an address.
        let v = if v.is_empty() { vec![0] } else { v };
        DeviceVec::from_slice(&dv, &v).unwrap()
    };
    let ints = |v: &[i64]| -> Vec<u8> {
        if i64s {
            v.iter().flat_map(|&i| i.to_ne_bytes()).collect()
        } else {
            v.iter().flat_map(|&i| (i as i32).to_ne_bytes()).collect()
        }
    };
    let rp = bytes(ints(&x.row_ptr));
    let padded: Vec<i64> = std::iter::repeat_n(0, pad)
        .chain(x.col_ind.iter().copied())
        .collect();
    let ci = bytes(ints(&padded));
    let ci_addr = ci.addr() + (pad * if i64s { 8 } else { 4 }) as u64;
    let vals = bytes(x.values.iter().flat_map(|v| v.to_ne_bytes()).collect());
    let mut a = std::ptr::null_mut();
    // SAFETY: each device array holds what its length argument promises.
    let s = unsafe {
        tessera_create_csr_borrowed(
            h,
            &mut a,
            x.rows as i64,
            x.cols as i64,
            x.values.len() as i64,
            rp.addr() as *const c_void,
            ci_addr as *const c_void,
            vals.addr() as *const c_void,
            if i64s {
                TESSERA_INDEX_TYPE_I64
            } else {
                TESSERA_INDEX_TYPE_I32
            },
            TESSERA_INDEX_BASE_ZERO,
            TESSERA_VALUE_TYPE_F64,
        )
    };
    keep.extend([rp, ci, vals]);
    if s != 0 {
        return (s, a, last_error());
    }
    // The create queues its check and does not wait for it (unless TESSERA_CHECK=sync): the
    // first call that waits for it reports a malformed matrix; a named method's analyze does.
    // SAFETY: a live handle and matrix.
    let s = unsafe { tessera_analyze(h, a, TESSERA_ALGORITHM_CSR_VECTOR, TESSERA_TUNING_NONE) };
    if s != 0 {
        let e = last_error();
        // SAFETY: destroyed once.
        unsafe { tessera_destroy_matrix(a) };
        return (s, std::ptr::null_mut(), e);
    }
    (s, a, String::new())
}

/// Row statistics of the device path equal the host path's (the means and spreads, computed as
/// sums in another order, to 1e-9).
fn assert_same_stats(what: &str, sd: &tessera::RowStats, sh: &tessera::RowStats) {
    assert_eq!(
        (sd.rows, sd.cols, sd.nnz, sd.min, sd.max, sd.empty_rows),
        (sh.rows, sh.cols, sh.nnz, sh.min, sh.max, sh.empty_rows),
        "{what}: row statistics"
    );
    for (d, h, f) in [
        (sd.mean, sh.mean, "mean"),
        (sd.std_dev, sh.std_dev, "std_dev"),
        (sd.col_spread, sh.col_spread, "col_spread"),
    ] {
        assert!(
            (d - h).abs() <= 1e-9 * h.abs().max(1.0),
            "{what}: {f} {d} vs {h}"
        );
    }
}

/// Ways to break valid arrays, each an INVALID_MATRIX with a sentence naming the entry.
type Break = Box<dyn Fn(&mut Arrays)>;
fn breaks() -> Vec<(&'static str, Break)> {
    vec![
        (
            "row_ptr[0] off the base",
            Box::new(|x: &mut Arrays| x.row_ptr[0] += 1),
        ),
        (
            "row_ptr decreasing",
            Box::new(|x: &mut Arrays| x.row_ptr[10] = x.row_ptr[12] + 1),
        ),
        (
            "row_ptr past the end",
            Box::new(|x: &mut Arrays| {
                let n = x.values.len() as i64;
                x.row_ptr[20] = n + 7;
                for r in 21..x.row_ptr.len() {
                    x.row_ptr[r] = n + 7;
                }
            }),
        ),
        (
            "row_ptr[rows] short",
            Box::new(|x: &mut Arrays| {
                let r = x.rows;
                x.row_ptr[r] -= 1;
            }),
        ),
        (
            "column too large",
            Box::new(|x: &mut Arrays| {
                let c = x.cols as i64;
                x.col_ind[17] = c + 5;
            }),
        ),
        (
            "column negative",
            Box::new(|x: &mut Arrays| x.col_ind[3] = -4),
        ),
        (
            // i64::MIN less base 1 overflows (found by fuzzing the host path); as int32 the
            // two read 0 and -1, so the int32 case is out of range too.
            "columns at the int64 extremes",
            Box::new(|x: &mut Arrays| {
                x.col_ind[3] = i64::MIN;
                x.col_ind[4] = i64::MAX;
            }),
        ),
    ]
}

/// The Rust matrix behind a C handle (for its CSR and statistics).
fn inner<'a>(a: tessera_matrix) -> &'a mut tessera::Matrix<f64> {
    // SAFETY: a live matrix made by tessera_create_csr, used by one caller at a time;
    // tessera_matrix points to an AnyMatrix.
    match unsafe { &mut *(a as *mut AnyMatrix) } {
        AnyMatrix::F64(m) => m,
        AnyMatrix::F32(_) => panic!("f64 expected"),
    }
}

/// AUTO's product y = A x on the device, checked against the f64 product of `a`.
fn product(h: tessera_handle, rh: &Handle, a_c: tessera_matrix, a: &Csr<f64>, what: &str) {
    let dev = rh.cuda().unwrap();
    let x = x_for(a.cols(), 3);
    let dx = DeviceVec::from_slice(dev, &x).unwrap();
    let dy = DeviceVec::from_slice(dev, &vec![f64::NAN; a.rows()]).unwrap();
    let (one, zero) = (1.0f64, 0.0f64);
    // SAFETY: live handle and matrix; x and y device vectors of the right lengths.
    unsafe {
        assert_eq!(
            tessera_spmv(
                h,
                TESSERA_OPERATION_NON_TRANSPOSE,
                (&one as *const f64).cast(),
                a_c,
                dx.addr() as *const c_void,
                (&zero as *const f64).cast(),
                dy.addr() as *mut c_void,
            ),
            0,
            "{what}: {}",
            last_error()
        );
    }
    // The C handle's stream is the default stream; so is the Rust handle's.
    let y = dy.to_vec(rh.cuda_stream()).unwrap();
    assert_ax(what, a, &x, &y);
}

#[test]
fn device_arrays_make_the_same_matrix_as_host_arrays() {
    let _d = shared_device();
    let Some(rh) = gpu() else { return };
    let h = c_handle();
    let specs: Vec<&str> = EDGE_CASES
        .iter()
        .copied()
        .chain([
            "gen:uniform:200000,16,1",
            "gen:powerlaw:14,8,3",
            "gen:dense:300,200",
        ])
        .collect();
    for spec in specs {
        let (name, a) = tessera::io::load(spec).unwrap();
        for (i64s, base) in [(false, 0), (true, 1), (false, 1), (true, 0)] {
            let arr = Arrays::of(&a, base as i64);
            let what = format!("{name} (int{}, base {base})", if i64s { 64 } else { 32 });
            let (s, from_dev, e) = arr.create(h, true, i64s, base);
            assert_eq!(s, 0, "{what}: {e}");
            let (s, from_host, e) = arr.create(h, false, i64s, base);
            assert_eq!(s, 0, "{what}: {e}");
            let (md, mh) = (inner(from_dev), inner(from_host));
            // (No entries: the C API takes the host path, with nothing to read on the device.)
            assert!(
                a.nnz() == 0 || !md.has_host_copy(),
                "{what}: device arrays stay on the device"
            );
            assert_eq!(md.csr(&rh), mh.csr(&rh), "{what}: tessera's CSR");
            assert_same_stats(&what, md.stats(), mh.stats());
            // SAFETY: live handle and matrices.
            unsafe {
                assert_eq!(
                    tessera_analyze(h, from_dev, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE),
                    0,
                    "{what}: {}",
                    last_error()
                );
            }
            product(h, &rh, from_dev, &a, &what);
            // SAFETY: destroyed once.
            unsafe {
                tessera_destroy_matrix(from_dev);
                tessera_destroy_matrix(from_host);
            }
        }
    }
    // SAFETY: destroyed once.
    unsafe { tessera_destroy(h) };
}

#[test]
fn unsorted_device_columns_are_sorted_on_the_host_path() {
    let _d = shared_device();
    let Some(rh) = gpu() else { return };
    let h = c_handle();
    let (name, a) = tessera::io::load("gen:random:3000,2000,9,4").unwrap();
    let arr = Arrays::reversed_rows(&a);
    let (s, m, e) = arr.create(h, true, false, 0);
    assert_eq!(s, 0, "{e}");
    assert_eq!(inner(m).csr(&rh).unwrap().row_ptr(), a.row_ptr());
    assert_eq!(inner(m).csr(&rh).unwrap().col_ind(), a.col_ind());
    // SAFETY: live handle and matrix; new values in the caller's (reversed) order.
    unsafe {
        assert_eq!(
            tessera_analyze(h, m, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE),
            0
        );
        product(h, &rh, m, &a, &format!("{name} unsorted"));
        let scaled: Vec<f64> = arr.values.iter().map(|v| 2.0 * v).collect();
        assert_eq!(
            tessera_update_values(h, m, scaled.as_ptr().cast()),
            0,
            "{}",
            last_error()
        );
        let mut a2 = a.clone();
        let doubled: Vec<f64> = a.values().iter().map(|v| 2.0 * v).collect();
        a2.set_values_from_input(&doubled).unwrap();
        product(h, &rh, m, &a2, &format!("{name} unsorted, updated"));
        tessera_destroy_matrix(m);
        tessera_destroy(h);
    }
}

#[test]
fn malformed_device_arrays_get_the_host_paths_status_and_sentence() {
    let _d = shared_device();
    let Some(_rh) = gpu() else { return };
    let h = c_handle();
    let (_, a) = tessera::io::load("gen:random:50,40,5,7").unwrap();
    let breaks = breaks();
    for (what, f) in &breaks {
        for (i64s, base) in [(false, 0), (true, 1)] {
            let mut arr = Arrays::of(&a, base as i64);
            f(&mut arr);
            let (sd, _, ed) = arr.create(h, true, i64s, base);
            let (sh, _, eh) = arr.create(h, false, i64s, base);
            assert_ne!(sh, 0, "{what}: the host path accepted it");
            assert_eq!(
                (sd, &ed),
                (sh, &eh),
                "{what} (int{}, base {base}): device vs host",
                if i64s { 64 } else { 32 }
            );
            assert_eq!(sd, TESSERA_STATUS_INVALID_MATRIX, "{what}: {ed}");
        }
    }
    // SAFETY: destroyed once.
    unsafe { tessera_destroy(h) };
}

/// `Matrix::new_via` on host arrays, path `via`: the matrix or the error's kind and sentence.
fn new_via(
    rh: &Handle,
    x: &Arrays,
    i64s: bool,
    base: i64,
    via: CreatePath,
) -> Result<Matrix<f64>, String> {
    let rp32: Vec<i32> = x.row_ptr.iter().map(|&v| v as i32).collect();
    let ci32: Vec<i32> = x.col_ind.iter().map(|&v| v as i32).collect();
    let (row_ptr, col_ind) = if i64s {
        (Indices::I64(&x.row_ptr), Indices::I64(&x.col_ind))
    } else {
        (Indices::I32(&rp32), Indices::I32(&ci32))
    };
    let parts = CsrParts {
        rows: x.rows as i64,
        cols: x.cols as i64,
        nnz: x.values.len() as i64,
        row_ptr,
        col_ind,
        values: &x.values,
        base: if base == 1 {
            IndexBase::One
        } else {
            IndexBase::Zero
        },
    };
    Matrix::new_via(rh, parts, via).map_err(|e| format!("{:?}: {}", e.status(), e.detail()))
}

/// What every create path from host arrays claims against the host path (`CreatePath::Host`):
/// on `specs`, with each (int64, base) of `cases`, tessera's CSR, its row statistics and AUTO's
/// product are the host path's, and the matrix holds a host copy exactly when
/// `host_copy(int64, base, nnz)` (else its device copy is made at create); unsorted rows take
/// the host path, which sorts them; every malformed array gets the host path's status and
/// sentence.
fn assert_matches_the_host_path(
    rh: &Handle,
    via: CreatePath,
    specs: &[&str],
    cases: &[(bool, i64)],
    host_copy: impl Fn(bool, i64, usize) -> bool,
) {
    for &spec in specs {
        let (name, a) = tessera::io::load(spec).unwrap();
        for &(i64s, base) in cases {
            let arr = Arrays::of(&a, base);
            let what = format!(
                "{name} (int{}, base {base}, {via:?})",
                if i64s { 64 } else { 32 }
            );
            let mut md = new_via(rh, &arr, i64s, base, via).unwrap();
            let mut mh = new_via(rh, &arr, i64s, base, CreatePath::Host).unwrap();
            let copy = host_copy(i64s, base, a.nnz());
            assert_eq!(md.has_host_copy(), copy, "{what}: a host copy at create");
            if !copy && a.nnz() > 0 {
                assert!(
                    md.info().device_bytes > 0,
                    "{what}: the device copy is made at create"
                );
            }
            assert_eq!(md.csr(rh), mh.csr(rh), "{what}: tessera's CSR");
            assert_same_stats(&what, md.stats(), mh.stats());
            md.analyze(rh, tessera::Algorithm::Auto, tessera::Tuning::None)
                .unwrap();
            let x = x_for(a.cols(), 7);
            let mut y = vec![f64::NAN; a.rows()];
            md.spmv(rh, Operation::NonTranspose, 1.0, &x, 0.0, &mut y)
                .unwrap();
            assert_ax(&what, &a, &x, &y);
        }
    }
    // Unsorted rows: the host path sorts them (and keeps the caller's order for updates).
    let (_, a) = tessera::io::load("gen:random:3000,2000,9,4").unwrap();
    let arr = Arrays::reversed_rows(&a);
    let mut md = new_via(rh, &arr, false, 0, via).unwrap();
    let mut mh = new_via(rh, &arr, false, 0, CreatePath::Host).unwrap();
    assert!(
        md.has_host_copy(),
        "unsorted rows take the host path ({via:?})"
    );
    assert_eq!(md.csr(rh), mh.csr(rh), "unsorted rows ({via:?})");
    // Malformed arrays: the host path's status and sentence.
    let (_, a) = tessera::io::load("gen:random:50,40,5,7").unwrap();
    for (what, f) in &breaks() {
        for (i64s, base) in [(false, 0), (true, 1)] {
            let mut arr = Arrays::of(&a, base);
            f(&mut arr);
            let ed = new_via(rh, &arr, i64s, base, via).unwrap_err();
            let eh = new_via(rh, &arr, i64s, base, CreatePath::Host).unwrap_err();
            assert_eq!(
                ed,
                eh,
                "{what} (int{}, base {base}, {via:?})",
                if i64s { 64 } else { 32 }
            );
        }
    }
}

#[test]
fn host_arrays_checked_on_the_device_make_the_host_paths_matrix_and_errors() {
    let _d = shared_device();
    let Some(rh) = gpu() else { return };
    let specs: Vec<&str> = EDGE_CASES
        .iter()
        .copied()
        .chain(["gen:uniform:300000,16,1", "gen:powerlaw:14,8,3"])
        .collect();
    let cases = [(false, 0), (true, 1), (false, 1)];
    assert_matches_the_host_path(&rh, CreatePath::Device, &specs, &cases, |_, _, _| false);
}

/// A matrix of 108K entries, below the size from which int64 or base-1 arrays are converted on
/// the device (`HOST_CONVERT_MIN_SIZE`): the direct path taken explicitly on a larger matrix.
const LARGER_DIRECT: &str = "gen:random:12000,8000,9,4";

#[test]
fn host_arrays_taken_as_they_are_make_the_host_paths_matrix_and_errors() {
    let _d = shared_device();
    let Some(rh) = gpu() else { return };
    let specs: Vec<&str> = EDGE_CASES
        .iter()
        .copied()
        .chain(["gen:powerlaw:14,8,3", LARGER_DIRECT])
        .collect();
    // Only int32 base-0 arrays with entries are taken as they are.
    let cases = [(false, 0), (true, 0), (false, 1)];
    assert_matches_the_host_path(
        &rh,
        CreatePath::Direct,
        &specs,
        &cases,
        |i64s, base, nnz| i64s || base != 0 || nnz == 0,
    );
    // The larger matrix (compared above with the others): unsorted rows and malformed arrays
    // (early, or in the last entry) refused as the host path refuses them.
    let (name, a) = tessera::io::load(LARGER_DIRECT).unwrap();
    assert!(
        a.nnz() >= 1 << 16 && a.rows() + a.nnz() < 1 << 18,
        "{name}: its size"
    );
    let arr = Arrays::reversed_rows(&a);
    let mut md = new_via(&rh, &arr, false, 0, CreatePath::Direct).unwrap();
    let mut mh = new_via(&rh, &arr, false, 0, CreatePath::Host).unwrap();
    assert!(
        md.has_host_copy(),
        "{name}: unsorted rows take the host path"
    );
    assert_eq!(md.csr(&rh), mh.csr(&rh), "{name}: unsorted rows");
    let mut last: Vec<(&str, Break)> = breaks();
    last.push((
        "the last column too large",
        Box::new(|x: &mut Arrays| {
            let c = x.cols as i64;
            *x.col_ind.last_mut().unwrap() = c;
        }),
    ));
    for (what, f) in &last {
        let mut arr = Arrays::of(&a, 0);
        f(&mut arr);
        let ed = new_via(&rh, &arr, false, 0, CreatePath::Direct).unwrap_err();
        let eh = new_via(&rh, &arr, false, 0, CreatePath::Host).unwrap_err();
        assert_eq!(ed, eh, "{name}, {what}");
    }
    // Every method over a matrix made on the direct path (the formats built on the host
    // download the CSR first), then new values in the caller's order and the product again.
    let (_, a) = tessera::io::load("gen:circuit:3000,5,2,2500,4").unwrap();
    let arr = Arrays::of(&a, 0);
    let x = x_for(a.cols(), 3);
    let fresh = x_for(a.nnz(), 19);
    let mut b = a.clone();
    b.values_mut().copy_from_slice(&fresh);
    for &alg in tessera::methods::IMPLEMENTED {
        let what = format!("{alg} over the direct path");
        let mut m = new_via(&rh, &arr, false, 0, CreatePath::Direct).unwrap();
        assert!(!m.has_host_copy(), "{what}: no host copy at create");
        m.analyze(&rh, alg, tessera::Tuning::None).unwrap();
        let mut y = vec![f64::NAN; a.rows()];
        m.spmv(&rh, Operation::NonTranspose, 1.0, &x, 0.0, &mut y)
            .unwrap();
        assert_ax(&what, &a, &x, &y);
        m.update_values(&rh, &fresh).unwrap();
        m.spmv(&rh, Operation::NonTranspose, 1.0, &x, 0.0, &mut y)
            .unwrap();
        assert_ax(&format!("{what}, new values"), &b, &x, &y);
    }
}

/// The borrowed create's inspection (one kernel over chunks of rows, `util_inspect`): the row
/// statistics equal the host path's, on the edge cases and on a matrix with more chunks than
/// the kernel has blocks (each block takes several), with col_ind 16-byte aligned (four columns
/// per load) or not (one by one); every malformed array, early or late in the arrays (the last
/// entry, the last rows, a later tile), gets the host path's status and
/// sentence; unsorted columns in the last row are found (NOT_SUPPORTED); and a failed
/// inspection leaves the next one right (the kernel's status words are reused).
#[test]
fn the_borrowed_inspection_measures_and_refuses_as_the_host_path_does() {
    let _d = shared_device();
    let Some(rh) = gpu() else { return };
    let h = c_handle();
    let mut specs: Vec<&str> = EDGE_CASES.to_vec();
    specs.extend(["gen:powerlaw:14,8,3", "gen:emptyrows:30000,9,2"]);
    if std::env::var("TESSERA_TEST_SMALL").is_err() {
        // 1.33M rows: 1,300 chunks of 1,024 rows, more than 8 blocks per SM on any GPU
        // up to 160 SMs.
        specs.push("gen:lap3d7:110");
    }
    for spec in specs {
        let (name, a) = tessera::io::load(spec).unwrap();
        if a.nnz() == 0 {
            continue; // copied, not borrowed
        }
        for (i64s, pad) in [(false, 0), (true, 0), (false, 1), (false, 3)] {
            let mut keep = Vec::new();
            let (s, m, e) = create_borrowed_at(h, &Arrays::of(&a, 0), i64s, pad, &mut keep);
            let what = format!(
                "{name} (int{}, col_ind {pad} indices into its allocation)",
                if i64s { 64 } else { 32 }
            );
            assert_eq!(s, 0, "{what}: {e}");
            assert_same_stats(&what, inner(m).stats(), &a.stats());
            // SAFETY: destroyed once, before its arrays.
            unsafe { tessera_destroy_matrix(m) };
        }
    }
    // Malformed arrays, in the first rows (breaks()) and at the far end of a matrix of several
    // chunks.
    let (_, a) = tessera::io::load("gen:random:5000,4000,5,7").unwrap();
    let mut all = breaks();
    let late: Vec<(&'static str, Break)> = vec![
        (
            "row_ptr decreasing in the last rows",
            Box::new(|x: &mut Arrays| {
                let r = x.rows;
                x.row_ptr[r - 2] = x.row_ptr[r - 1] + 1;
            }),
        ),
        (
            "the last entry's column too large",
            Box::new(|x: &mut Arrays| {
                let (n, c) = (x.col_ind.len(), x.cols as i64);
                x.col_ind[n - 1] = c;
            }),
        ),
        (
            "a column negative in a later chunk",
            Box::new(|x: &mut Arrays| {
                let k = x.row_ptr[3000] as usize + 1;
                x.col_ind[k] = -1;
            }),
        ),
    ];
    all.extend(late);
    for (what, f) in &all {
        for (i64s, pad) in [(false, 0), (true, 0), (false, 1)] {
            let mut arr = Arrays::of(&a, 0);
            f(&mut arr);
            let mut keep = Vec::new();
            let (sb, _, eb) = create_borrowed_at(h, &arr, i64s, pad, &mut keep);
            let (sh, _, eh) = arr.create(h, false, i64s, 0);
            assert_ne!(sh, 0, "{what}: the host path accepted it");
            // The same sentence after the function's name.
            let tail = |e: &str| e.split_once(": ").map(|(_, t)| t.to_string());
            assert_eq!((sb, tail(&eb)), (sh, tail(&eh)), "{what}: borrowed vs host");
            // The next inspection, of valid arrays, is not disturbed by the failed one.
            let (s, m, e) = create_borrowed(h, &Arrays::of(&a, 0), i64s, &mut keep);
            assert_eq!(s, 0, "{what}, then valid arrays: {e}");
            assert_same_stats(what, inner(m).stats(), &a.stats());
            // SAFETY: destroyed once, before its arrays.
            unsafe { tessera_destroy_matrix(m) };
        }
    }
    // Columns unsorted in the last row only.
    let mut arr = Arrays::of(&a, 0);
    let (s0, e0) = (arr.row_ptr[a.rows() - 1] as usize, arr.col_ind.len());
    assert!(e0 - s0 >= 2, "the last row has two entries to swap");
    arr.col_ind[s0..e0].reverse();
    let mut keep = Vec::new();
    let (s, _, e) = create_borrowed(h, &arr, false, &mut keep);
    assert_eq!(s, TESSERA_STATUS_NOT_SUPPORTED, "{e}");
    let _ = rh;
    // SAFETY: destroyed once.
    unsafe { tessera_destroy(h) };
}
