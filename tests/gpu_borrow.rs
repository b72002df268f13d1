//! A matrix over the caller's own device arrays (`Matrix::borrow_device`, what the cuSPARSE
//! drop-in runs): nothing copied, every product reads the arrays in place. On a real GPU:
//! - its products equal the host's, in f64 and f32, for CSR_VECTOR and HOLA;
//! - values the caller writes into its array are what the next product uses, with no call;
//! - a pattern rewritten in place (same sizes) is right for CSR_VECTOR at once, and for HOLA
//!   after analyzing again;
//! - tessera holds none of the arrays (`device_bytes` counts no CSR bytes) and frees none;
//! - what would copy the arrays is refused with a sentence (update_values, BRC/TILE/BCCOO,
//!   QUICK), and base-one arrays are NOT_SUPPORTED;
//! - int64 arrays are read in place by CSR_VECTOR alone.
//!
//! Without a GPU every test prints one "skipped: no CUDA device" line and returns.

mod common;

use common::gpu::{gpu, shared_device, DeviceArrays as Arrays};
use common::products::{assert_ax, x_for};
use tessera::backend::cuda::import::DeviceCsr;
use tessera::backend::cuda::DeviceVec;
use tessera::{
    Algorithm, BorrowedWrites, Csr, Handle, IndexBase, Matrix, Operation, Scalar, Status, Tuning,
};

/// y = A x through `m`, checked against `a` (the f64 matrix the arrays hold now).
fn product<T: Scalar>(h: &Handle, m: &Matrix<T>, a: &Csr<f64>, what: &str) {
    let dev = h.cuda().unwrap();
    let x: Vec<T> = x_for(a.cols(), 5).into_iter().map(T::from_f64).collect();
    let dx = DeviceVec::from_slice(dev, &x).unwrap();
    let dy = DeviceVec::from_slice(dev, &vec![T::from_f64(f64::NAN); a.rows()]).unwrap();
    m.spmv_device(
        h,
        Operation::NonTranspose,
        T::ONE,
        dx.addr(),
        T::ZERO,
        dy.addr(),
    )
    .unwrap();
    let y = dy.to_vec(h.cuda_stream()).unwrap();
    assert_ax(what, a, &x, &y);
}

fn in_place<T: Scalar>(spec: &str, alg: Algorithm) {
    let Some(h) = gpu() else { return };
    let _g = shared_device();
    let (name, a) = tessera::io::load(spec).unwrap();
    let mut arrays = Arrays::<T>::of(&h, &a);
    let mut m = Matrix::<T>::borrow_device(&h, &arrays.descr(), BorrowedWrites::Unannounced)
        .unwrap()
        .unwrap();
    assert!(m.is_borrowed());
    m.analyze(&h, alg, Tuning::None).unwrap();
    assert_eq!(m.info().algorithm, alg);
    // The arrays are the caller's: tessera holds none of them.
    let held = m.info().device_bytes as usize;
    assert!(
        held < a.nnz() * std::mem::size_of::<T>(),
        "{name}: {held} bytes held for a borrowed CSR of nnz {}",
        a.nnz()
    );
    product(&h, &m, &a, &format!("{name} {alg}"));

    // New values written into the caller's array: the next product uses them.
    let mut b = a.clone();
    let v: Vec<f64> = x_for(a.nnz(), 9);
    b.set_values_from_input(&v).unwrap();
    let vt: Vec<T> = v.iter().map(|&v| T::from_f64(v)).collect();
    arrays.values.copy_from(&vt).unwrap();
    let b = b.convert::<T>().convert::<f64>();
    product(
        &h,
        &m,
        &b,
        &format!("{name} {alg} after new values in place"),
    );

    // What would copy the arrays is refused, and the matrix keeps working.
    let e = m.update_values(&h, &vt).unwrap_err();
    assert_eq!(e.status(), Status::NotSupported, "{e}");
    for heavy in [Algorithm::Brc, Algorithm::Tile, Algorithm::Bccoo] {
        let e = m.analyze(&h, heavy, Tuning::None).unwrap_err();
        assert_eq!(e.status(), Status::NotSupported, "{e}");
    }
    let e = m.analyze(&h, Algorithm::Auto, Tuning::Quick).unwrap_err();
    assert_eq!(e.status(), Status::NotSupported, "{e}");
    m.analyze(&h, alg, Tuning::None).unwrap();
    product(&h, &m, &b, &format!("{name} {alg} analyzed again"));
    drop(m);
    // The arrays outlive the matrix, untouched.
    assert_eq!(arrays.values.to_vec(h.cuda_stream()).unwrap(), vt);
}

#[test]
fn csr_vector_reads_the_callers_arrays_in_place_f64_and_f32() {
    in_place::<f64>("gen:lap3d7:24", Algorithm::CsrVector);
    in_place::<f32>("gen:uniform:20000,12,2", Algorithm::CsrVector);
}

#[test]
fn hola_reads_the_callers_arrays_in_place() {
    in_place::<f64>("gen:powerlaw:12,8,3", Algorithm::Hola);
}

/// A pattern rewritten under the same arrays and sizes: CSR_VECTOR reads it at once; AUTO
/// picks over the CSR only (no format of its own, no background build).
#[test]
fn a_pattern_rewritten_in_place_is_read_by_csr_vector() {
    let Some(h) = gpu() else { return };
    let _g = shared_device();
    let (_, a) = tessera::io::load("gen:uniform:5000,8,1").unwrap();
    let (_, b) = tessera::io::load("gen:uniform:5000,8,2").unwrap();
    assert_eq!((a.rows(), a.nnz()), (b.rows(), b.nnz()));
    let mut arrays = Arrays::<f64>::of(&h, &a);
    let mut m = Matrix::<f64>::borrow_device(&h, &arrays.descr(), BorrowedWrites::Unannounced)
        .unwrap()
        .unwrap();
    m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
    assert_eq!(m.info().algorithm, Algorithm::CsrVector);
    assert_eq!(m.info().background, tessera::BackgroundStatus::None);
    product(&h, &m, &a, "before");
    arrays.row_ptr.copy_from(b.row_ptr()).unwrap();
    arrays.col_ind.copy_from(b.col_ind()).unwrap();
    arrays.values.copy_from(b.values()).unwrap();
    product(&h, &m, &b, "after the pattern changed in place");
}

/// int64 arrays (PyTorch's default index type) are read in place by CSR_VECTOR's own int64
/// kernel; HOLA, the transposed product and a host copy, which read int32, are refused.
#[test]
fn int64_arrays_are_read_in_place_by_csr_vector() {
    let Some(h) = gpu() else { return };
    let _g = shared_device();
    let dev = h.cuda().unwrap();
    for spec in ["gen:lap3d7:20", "gen:uniform:30000,9,4"] {
        let (name, a) = tessera::io::load(spec).unwrap();
        let rp: Vec<i64> = a.row_ptr().iter().map(|&v| v as i64).collect();
        let ci: Vec<i64> = a.col_ind().iter().map(|&v| v as i64).collect();
        let drp = DeviceVec::from_slice(dev, &rp).unwrap();
        let dci = DeviceVec::from_slice(dev, &ci).unwrap();
        let mut dv = DeviceVec::from_slice(dev, a.values()).unwrap();
        let d = DeviceCsr {
            rows: a.rows(),
            cols: a.cols(),
            nnz: a.nnz(),
            row_ptr: drp.addr(),
            col_ind: dci.addr(),
            values: dv.addr(),
            is64: true,
            base: IndexBase::Zero,
        };
        let mut m = Matrix::<f64>::borrow_device(&h, &d, BorrowedWrites::Unannounced)
            .unwrap()
            .unwrap();
        let e = m.analyze(&h, Algorithm::Hola, Tuning::None).unwrap_err();
        assert_eq!(e.status(), Status::NotSupported, "{e}");
        m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
        assert_eq!(m.info().algorithm, Algorithm::CsrVector);
        product(&h, &m, &a, &format!("{name} int64"));
        let mut b = a.clone();
        b.set_values_from_input(&x_for(a.nnz(), 3)).unwrap();
        dv.copy_from(b.values()).unwrap();
        product(
            &h,
            &m,
            &b,
            &format!("{name} int64 after new values in place"),
        );
        let x = DeviceVec::from_slice(dev, &vec![1.0; a.rows()]).unwrap();
        let y = DeviceVec::from_slice(dev, &vec![0.0; a.cols()]).unwrap();
        let e = m
            .spmv_device(&h, Operation::Transpose, 1.0, x.addr(), 0.0, y.addr())
            .unwrap_err();
        assert_eq!(e.status(), Status::NotSupported, "{e}");
        let e = m.csr(&h).unwrap_err();
        assert_eq!(e.status(), Status::NotSupported, "{e}");
    }
}

#[test]
fn only_base_zero_arrays_are_borrowed() {
    let Some(h) = gpu() else { return };
    let _g = shared_device();
    let (_, a) = tessera::io::load("gen:lap3d7:6").unwrap();
    let arrays = Arrays::<f64>::of(&h, &a);
    let one = DeviceCsr {
        base: IndexBase::One,
        ..arrays.descr()
    };
    let e = Matrix::<f64>::borrow_device(&h, &one, BorrowedWrites::Unannounced).unwrap_err();
    assert_eq!(e.status(), Status::NotSupported, "{e}");
    // Malformed arrays get the import's sentence.
    let bad = DeviceCsr {
        cols: 3,
        ..arrays.descr()
    };
    let e = Matrix::<f64>::borrow_device(&h, &bad, BorrowedWrites::Unannounced).unwrap_err();
    assert_eq!(e.status(), Status::InvalidMatrix, "{e}");
}
