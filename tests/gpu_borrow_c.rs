//! `tessera_create_csr_borrowed` on a real GPU: the caller's device arrays read in place by
//! every method, values announced with `tessera_update_values` (the array itself, another
//! device array, host values) reaching every form (AUTO's background format included), the
//! footprint holding none of the caller's arrays, and each refusal with its status. Without a
//! GPU every test prints one "skipped: no CUDA device" line and returns.

mod common;

use common::gpu::{gpu, shared_device};
use common::products::{assert_product, x_for};
use std::ffi::{c_void, CStr};
use tessera::api::types::*;
use tessera::api::*;
use tessera::backend::cuda::DeviceVec;
use tessera::{Csr, Handle, Operation};

fn last_error() -> String {
    // SAFETY: tessera_last_error returns a NUL-terminated thread-local string.
    unsafe { CStr::from_ptr(tessera_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn ok(s: tessera_status) {
    assert_eq!(s, TESSERA_STATUS_SUCCESS, "{}", last_error());
}

fn dptr(v: u64) -> *const c_void {
    v as usize as *const c_void
}

/// The caller's CSR (int32, base 0, f64) in device memory, and a C handle on the same device.
struct Caller {
    a: Csr<f64>,
    rp: DeviceVec<i32>,
    ci: DeviceVec<i32>,
    va: DeviceVec<f64>,
    handle: tessera_handle,
}

impl Caller {
    fn new(h: &Handle, spec: &str) -> Self {
        let dev = h.cuda().unwrap();
        let (_, a) = tessera::io::load(spec).unwrap();
        let mut handle: tessera_handle = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        ok(unsafe { tessera_create_with(&mut handle, TESSERA_BACKEND_CUDA, 0) });
        Caller {
            rp: DeviceVec::from_slice(dev, a.row_ptr()).unwrap(),
            ci: DeviceVec::from_slice(dev, a.col_ind()).unwrap(),
            va: DeviceVec::from_slice(dev, a.values()).unwrap(),
            a,
            handle,
        }
    }

    /// tessera_create_csr_borrowed over the arrays, with index type and base as given.
    fn borrow(&self, base: i32) -> (tessera_status, tessera_matrix) {
        let mut m: tessera_matrix = std::ptr::null_mut();
        // SAFETY: the three device arrays are live for their lengths while `self` is.
        let s = unsafe {
            tessera_create_csr_borrowed(
                self.handle,
                &mut m,
                self.a.rows() as i64,
                self.a.cols() as i64,
                self.a.nnz() as i64,
                dptr(self.rp.addr()),
                dptr(self.ci.addr()),
                dptr(self.va.addr()),
                TESSERA_INDEX_TYPE_I32,
                base,
                TESSERA_VALUE_TYPE_F64,
            )
        };
        (s, m)
    }

    /// y = A x through `m`, checked against `want` (the matrix the values describe now).
    fn product(&self, h: &Handle, m: tessera_matrix, want: &Csr<f64>, what: &str) -> Vec<f64> {
        let dev = h.cuda().unwrap();
        let x = x_for(want.cols(), 7);
        let dx = DeviceVec::from_slice(dev, &x).unwrap();
        let dy = DeviceVec::from_slice(dev, &vec![f64::NAN; want.rows()]).unwrap();
        let (alpha, beta) = (1.0f64, 0.0f64);
        // SAFETY: alpha and beta are host scalars of A's type; x and y device vectors of the
        // product's lengths; the handle's stream orders the product before the read-back.
        ok(unsafe {
            tessera_spmv(
                self.handle,
                TESSERA_OPERATION_NON_TRANSPOSE,
                (&alpha as *const f64).cast(),
                m,
                dptr(dx.addr()),
                (&beta as *const f64).cast(),
                dy.addr() as usize as *mut c_void,
            )
        });
        let y = dy.to_vec(h.cuda_stream()).unwrap();
        let zeros = vec![0.0; want.rows()];
        assert_product(
            what,
            want,
            Operation::NonTranspose,
            1.0,
            &x,
            0.0,
            &zeros,
            &y,
        );
        y
    }

    /// [`Caller::borrow`], then (on success) a named method's analyze, which waits for the
    /// create's check: the status of the first of the two that fails (the matrix destroyed).
    fn borrow_checked(&self, base: i32) -> tessera_status {
        let (s, m) = self.borrow(base);
        if s != TESSERA_STATUS_SUCCESS {
            return s;
        }
        // SAFETY: live handle and matrix.
        let s = unsafe {
            tessera_analyze(
                self.handle,
                m,
                TESSERA_ALGORITHM_CSR_VECTOR,
                TESSERA_TUNING_NONE,
            )
        };
        // SAFETY: destroyed once (a success leaves the last error as it is).
        unsafe { tessera_destroy_matrix(m) };
        s
    }

    fn info(&self, m: tessera_matrix) -> tessera_matrix_info {
        // SAFETY: a zeroed info is a valid out-parameter; m is live.
        unsafe {
            let mut info: tessera_matrix_info = std::mem::zeroed();
            ok(tessera_matrix_get_info(m, &mut info));
            info
        }
    }
}

impl Drop for Caller {
    fn drop(&mut self) {
        // SAFETY: the handle is live and used by this thread only.
        unsafe { tessera_destroy(self.handle) };
    }
}

/// A copy of `a` with each value scaled by `k`.
fn scaled(a: &Csr<f64>, k: f64) -> Csr<f64> {
    let mut b = a.clone();
    let v: Vec<f64> = a.values().iter().map(|v| k * v).collect();
    b.set_values_from_input(&v).unwrap();
    b
}

fn params(info: &tessera_matrix_info) -> String {
    // SAFETY: params is a NUL-terminated buffer filled by tessera_matrix_get_info.
    unsafe { CStr::from_ptr(info.params.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn every_method_reads_borrowed_arrays_and_takes_announced_values() {
    let Some(h) = gpu() else { return };
    let _g = shared_device();
    let mut c = Caller::new(&h, "gen:random:3000,2000,9,4");
    let arrays = (c.a.rows() + 1) * 4 + c.a.nnz() * 12;
    for alg in [
        TESSERA_ALGORITHM_AUTO,
        TESSERA_ALGORITHM_CSR_VECTOR,
        TESSERA_ALGORITHM_HOLA,
        TESSERA_ALGORITHM_BRC,
        TESSERA_ALGORITHM_TILE,
        TESSERA_ALGORITHM_BCCOO,
    ] {
        c.va.copy_from(c.a.values()).unwrap();
        let (s, m) = c.borrow(TESSERA_INDEX_BASE_ZERO);
        ok(s);
        // SAFETY: live handle and matrix, this thread only.
        ok(unsafe { tessera_analyze(c.handle, m, alg, TESSERA_TUNING_NONE) });
        let what = format!("algorithm {alg}");
        c.product(&h, m, &c.a, &what);
        let info = c.info(m);
        if matches!(alg, TESSERA_ALGORITHM_CSR_VECTOR) {
            assert!(
                (info.device_bytes as usize) < arrays / 4,
                "{what}: {} bytes held over {arrays} bytes of the caller's arrays",
                info.device_bytes
            );
        }
        // Values written into the caller's array, announced with that same pointer.
        let twice = scaled(&c.a, 2.0);
        c.va.copy_from(twice.values()).unwrap();
        // SAFETY: the matrix's own values array, nnz device values.
        ok(unsafe { tessera_update_values(c.handle, m, dptr(c.va.addr())) });
        c.product(&h, m, &twice, &format!("{what}, values written in place"));
        // Values from another device array are copied into the caller's array.
        let four = scaled(&c.a, 4.0);
        let other = DeviceVec::from_slice(h.cuda().unwrap(), four.values()).unwrap();
        // SAFETY: nnz device values.
        ok(unsafe { tessera_update_values(c.handle, m, dptr(other.addr())) });
        c.product(&h, m, &four, &format!("{what}, values from another array"));
        assert_eq!(
            c.va.to_vec(h.cuda_stream()).unwrap(),
            four.values(),
            "{what}: the caller's array holds the matrix's values"
        );
        // Host values too.
        // SAFETY: nnz host values.
        ok(unsafe { tessera_update_values(c.handle, m, c.a.values().as_ptr().cast()) });
        c.product(&h, m, &c.a, &format!("{what}, host values"));
        // SAFETY: live matrix.
        ok(unsafe { tessera_destroy_matrix(m) });
    }
}

#[test]
fn auto_builds_its_format_from_borrowed_arrays_and_refreshes_it_on_update() {
    let Some(h) = gpu() else { return };
    let _g = shared_device();
    // 1M rows of 7 entries: AUTO's BRC, its ELL part built on the device by the worker from the
    // borrowed arrays; half the rows empty: BRC built on the host from a download of them.
    for (spec, want) in [
        ("gen:lap3d7:100", TESSERA_ALGORITHM_CSR_VECTOR),
        ("gen:emptyrows:300000,16,1", TESSERA_ALGORITHM_HOLA),
    ] {
        let mut c = Caller::new(&h, spec);
        let (s, m) = c.borrow(TESSERA_INDEX_BASE_ZERO);
        ok(s);
        // SAFETY: live handle and matrix.
        ok(unsafe { tessera_analyze(c.handle, m, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE) });
        let before = c.info(m);
        // While the create's check runs AUTO answers with HOLA, gated by it (its real choice
        // follows the check); once it has reported, the light method with BRC in the
        // background.
        if !params(&before).contains("check runs") {
            assert_eq!(before.algorithm, want, "{spec}: {}", params(&before));
            assert!(params(&before).contains("brc"), "{}", params(&before));
        } else {
            assert_eq!(
                before.algorithm,
                TESSERA_ALGORITHM_HOLA,
                "{}",
                params(&before)
            );
        }
        c.product(&h, m, &c.a, &format!("{spec} before the swap"));
        // SAFETY: live handle and matrix.
        ok(unsafe { tessera_finish_background(c.handle, m) });
        let after = c.info(m);
        assert_eq!(after.algorithm, TESSERA_ALGORITHM_BRC, "{}", params(&after));
        c.product(&h, m, &c.a, &format!("{spec} after the swap"));
        let half = scaled(&c.a, 0.5);
        c.va.copy_from(half.values()).unwrap();
        // SAFETY: the matrix's own values array.
        ok(unsafe { tessera_update_values(c.handle, m, dptr(c.va.addr())) });
        c.product(
            &h,
            m,
            &half,
            &format!("{spec}, BRC after values written in place"),
        );
        // SAFETY: live matrix.
        ok(unsafe { tessera_destroy_matrix(m) });
    }
}

#[test]
fn what_cannot_be_read_in_place_is_refused_with_a_sentence() {
    let Some(h) = gpu() else { return };
    let _g = shared_device();
    let mut c = Caller::new(&h, "gen:random:500,400,6,2");
    let (s, _) = c.borrow(TESSERA_INDEX_BASE_ONE);
    assert_eq!(s, TESSERA_STATUS_NOT_SUPPORTED);
    assert!(last_error().contains("base 0"), "{}", last_error());
    // Host arrays with a CUDA handle.
    let mut m: tessera_matrix = std::ptr::null_mut();
    let host_values = c.a.values().to_vec();
    // SAFETY: device index arrays and host values, each of its length.
    let s = unsafe {
        tessera_create_csr_borrowed(
            c.handle,
            &mut m,
            c.a.rows() as i64,
            c.a.cols() as i64,
            c.a.nnz() as i64,
            dptr(c.rp.addr()),
            dptr(c.ci.addr()),
            host_values.as_ptr().cast(),
            TESSERA_INDEX_TYPE_I32,
            TESSERA_INDEX_BASE_ZERO,
            TESSERA_VALUE_TYPE_F64,
        )
    };
    assert_eq!(s, TESSERA_STATUS_INVALID_VALUE);
    assert!(last_error().contains("values"), "{}", last_error());
    assert!(m.is_null(), "A is written only on success");
    // Unsorted columns in a row.
    let mut ci = c.a.col_ind().to_vec();
    let (r0, r1) = (c.a.row_ptr()[0] as usize, c.a.row_ptr()[1] as usize);
    assert!(r1 - r0 >= 2, "row 0 has two entries to swap");
    ci.swap(r0, r0 + 1);
    c.ci.copy_from(&ci).unwrap();
    let s = c.borrow_checked(TESSERA_INDEX_BASE_ZERO);
    assert_eq!(s, TESSERA_STATUS_NOT_SUPPORTED, "{}", last_error());
    assert!(last_error().contains("sorted"), "{}", last_error());
    // A column out of range: the import's sentence.
    ci.swap(r0, r0 + 1);
    ci[r0 + 1] = c.a.cols() as i32;
    c.ci.copy_from(&ci).unwrap();
    let s = c.borrow_checked(TESSERA_INDEX_BASE_ZERO);
    assert_eq!(s, TESSERA_STATUS_INVALID_MATRIX, "{}", last_error());
    // The handle still works: the good arrays are borrowed and multiplied.
    c.ci.copy_from(c.a.col_ind()).unwrap();
    let (s, m) = c.borrow(TESSERA_INDEX_BASE_ZERO);
    ok(s);
    // SAFETY: live handle and matrix.
    ok(unsafe { tessera_analyze(c.handle, m, TESSERA_ALGORITHM_AUTO, TESSERA_TUNING_NONE) });
    c.product(&h, m, &c.a, "after the refusals");
    // SAFETY: live matrix.
    ok(unsafe { tessera_destroy_matrix(m) });
}
