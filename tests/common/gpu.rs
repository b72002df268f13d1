//! What the GPU test files share: the CUDA handle (or one skip line without a GPU), the raw
//! driver calls some tests need (primary context, streams), and the concurrency check that
//! queues products of one matrix on several streams at once.

use super::products::{assert_product, x_for};
use cudarc::driver::sys;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use tessera::backend::cuda::import::DeviceCsr;
use tessera::backend::cuda::DeviceVec;
use tessera::{BackendKind, Csr, Handle, IndexBase, Matrix, Operation, Scalar, Status};

/// A handle on CUDA device 0, or None after printing one "skipped: no CUDA device" line.
pub fn gpu() -> Option<Handle> {
    match Handle::with_backend(BackendKind::Cuda, 0) {
        Ok(h) => Some(h),
        Err(e) if e.status() == Status::NoDevice => {
            println!("skipped: no CUDA device ({})", e.detail());
            None
        }
        Err(e) => panic!("opening CUDA device 0 failed: {e}"),
    }
}

/// Makes device 0's primary context current on this thread (for raw driver calls in tests).
pub fn enter_primary_context() {
    // SAFETY: plain driver calls with valid out-pointers; the library initialised the driver.
    unsafe {
        let mut dev = 0;
        assert_eq!(sys::cuDeviceGet(&mut dev, 0), sys::CUresult::CUDA_SUCCESS);
        let mut ctx = std::ptr::null_mut();
        assert_eq!(
            sys::cuDevicePrimaryCtxRetain(&mut ctx, dev),
            sys::CUresult::CUDA_SUCCESS
        );
        assert_eq!(sys::cuCtxSetCurrent(ctx), sys::CUresult::CUDA_SUCCESS);
    }
}

/// A new non-blocking stream in device 0's primary context (made current on this thread).
pub fn new_stream() -> sys::CUstream {
    enter_primary_context();
    let mut stream = std::ptr::null_mut();
    // SAFETY: primary context current; valid out-pointer.
    let r = unsafe {
        sys::cuStreamCreate(
            &mut stream,
            sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
        )
    };
    assert_eq!(r, sys::CUresult::CUDA_SUCCESS);
    stream
}

/// Destroys a stream of [`new_stream`]; the caller has waited for its work.
pub fn destroy_stream(stream: sys::CUstream) {
    // SAFETY: a live stream of ours with nothing of ours left on it.
    unsafe { sys::cuStreamDestroy_v2(stream) };
}

/// `threads` threads, each with its own handle and stream, queue `rounds` products of `m`
/// back to back without waiting (y += 1.5*A*x each time), then check y = y0 + rounds·1.5·A x.
/// Methods with a per-matrix workspace must keep concurrent products apart.
pub fn queued_products_on_streams(
    m: &Matrix<f64>,
    a: &Csr<f64>,
    name: &str,
    threads: u64,
    rounds: usize,
) {
    let dev = gpu().expect("a GPU").cuda().unwrap().clone();
    let dev = &dev;
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                let stream = new_stream();
                let mut h = Handle::with_backend(BackendKind::Cuda, 0).unwrap();
                h.set_stream(stream as usize).unwrap();
                let x = x_for(a.cols(), 7 + t);
                let y0 = x_for(a.rows(), 99 + t);
                let dx = DeviceVec::from_slice(dev, &x).unwrap();
                let dy = DeviceVec::from_slice(dev, &y0).unwrap();
                for _ in 0..rounds {
                    m.spmv_device(&h, Operation::NonTranspose, 1.5, dx.addr(), 1.0, dy.addr())
                        .unwrap();
                }
                let y = dy.to_vec(h.cuda_stream()).unwrap();
                assert_product(
                    &format!("{name}, stream {t}, {rounds} queued products"),
                    a,
                    Operation::NonTranspose,
                    1.5 * rounds as f64,
                    &x,
                    1.0,
                    &y0,
                    &y,
                );
                h.set_stream(0).unwrap();
                destroy_stream(stream);
            });
        }
    });
}

/// The tests of one GPU test file run in parallel threads of one process on one GPU. Some change
/// the device for everyone else: the memory hog takes all free device memory (a concurrent test
/// or the CLI child of the module-cache test then fails with CUDA_ERROR_OUT_OF_MEMORY), and a
/// global-mode stream capture makes other threads' allocations and synchronizations fail
/// (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) and invalidates the capture. Seen on an H100 in one
/// of four runs. Such a test takes this lock exclusively (`whole_device`); every other test of
/// the file shares it (`shared_device`).
static DEVICE: RwLock<()> = RwLock::new(());

pub fn shared_device() -> RwLockReadGuard<'static, ()> {
    DEVICE.read().unwrap_or_else(|e| e.into_inner())
}

pub fn whole_device() -> RwLockWriteGuard<'static, ()> {
    DEVICE.write().unwrap_or_else(|e| e.into_inner())
}

/// Begins a global-mode capture on `stream`, runs `f`, ends it and returns the instantiated
/// graph.
pub fn capture(stream: sys::CUstream, f: impl FnOnce()) -> sys::CUgraphExec {
    // SAFETY: a live stream of ours, idle; the graph is checked, instantiated and destroyed.
    unsafe {
        assert_eq!(
            sys::cuStreamBeginCapture_v2(
                stream,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL
            ),
            sys::CUresult::CUDA_SUCCESS
        );
        // The capture ends even when `f` fails, so that a failure stays this test's own (a
        // stream left capturing in global mode fails every other test's allocations).
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        let mut graph = std::ptr::null_mut();
        let end = sys::cuStreamEndCapture(stream, &mut graph);
        if let Err(p) = r {
            std::panic::resume_unwind(p);
        }
        assert_eq!(
            end,
            sys::CUresult::CUDA_SUCCESS,
            "the capture was invalidated"
        );
        let mut exec = std::ptr::null_mut();
        assert_eq!(
            sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0),
            sys::CUresult::CUDA_SUCCESS
        );
        sys::cuGraphDestroy(graph);
        exec
    }
}

/// Launches an instantiated graph on `stream`.
pub fn launch(exec: sys::CUgraphExec, stream: sys::CUstream) {
    // SAFETY: a live graph exec and stream.
    assert_eq!(
        unsafe { sys::cuGraphLaunch(exec, stream) },
        sys::CUresult::CUDA_SUCCESS
    );
}

/// Replays `exec`, a captured `y = 2 A x + 0.5 y` on `stream` over `dx` and `dy`, three times
/// with a new x each time, checks each y against the f64 product from the y before it (`y0`
/// first), then destroys the graph.
#[allow(clippy::too_many_arguments)]
pub fn replay_checked(
    h: &Handle,
    exec: sys::CUgraphExec,
    stream: sys::CUstream,
    dx: &mut DeviceVec<f64>,
    dy: &DeviceVec<f64>,
    a: &Csr<f64>,
    y0: Vec<f64>,
    what: &str,
) {
    let mut want_y = y0;
    for round in 0..3 {
        let x = x_for(a.cols(), 100 + round);
        dx.copy_from(&x).unwrap();
        launch(exec, stream);
        let y = dy.to_vec(h.cuda_stream()).unwrap();
        assert_product(
            &format!("{what}: graph replay {round}"),
            a,
            Operation::NonTranspose,
            2.0,
            &x,
            0.5,
            &want_y,
            &y,
        );
        want_y = y;
    }
    // SAFETY: destroyed once, after its last launch finished (to_vec waited).
    unsafe {
        sys::cuGraphExecDestroy(exec);
    }
}

/// CSR_VECTOR analyzed on `a` (TUNING_NONE), asserted to run its `mode` (a word of
/// `info.params`: "sliced", "pieces", "wide").
pub fn csr_vector_in_mode(h: &Handle, a: &Csr<f64>, mode: &str) -> Matrix<f64> {
    let mut m = Matrix::from_csr(h, a.clone());
    m.analyze(h, tessera::Algorithm::CsrVector, tessera::Tuning::None)
        .unwrap();
    assert!(
        m.info().params.contains(mode),
        "{mode}: {}",
        m.info().params
    );
    m
}

/// Six products of `m` (y = A x, y full of NaN before each) are bitwise equal to the first.
pub fn assert_bitwise_reproducible(h: &Handle, m: &Matrix<f64>, a: &Csr<f64>) {
    let x = x_for(a.cols(), 4);
    let mut first = vec![0.0; a.rows()];
    m.spmv(h, Operation::NonTranspose, 1.0, &x, 0.0, &mut first)
        .unwrap();
    for round in 0..5 {
        let mut y = vec![f64::NAN; a.rows()];
        m.spmv(h, Operation::NonTranspose, 1.0, &x, 0.0, &mut y)
            .unwrap();
        let same = y
            .iter()
            .zip(&first)
            .all(|(p, q)| p.to_bits() == q.to_bits());
        assert!(same, "round {round} differs bitwise");
    }
}

/// On a new stream of `h`: the matrix `make` analyzes (its `info().params` must contain
/// `mode`), `y = 2 A x + 0.5 y` captured into a graph, replayed with new x and checked
/// ([`replay_checked`]); the handle goes back to the default stream.
pub fn captured_product_replays(
    h: &mut Handle,
    a: &Csr<f64>,
    mode: &str,
    make: impl FnOnce(&Handle) -> Matrix<f64>,
) {
    let dev = h.cuda().unwrap().clone();
    let stream = new_stream();
    h.set_stream(stream as usize).unwrap();
    let m = make(h);
    assert!(m.info().params.contains(mode), "{}", m.info().params);
    let y0 = x_for(a.rows(), 9);
    let mut dx = DeviceVec::from_slice(&dev, &x_for(a.cols(), 1)).unwrap();
    let dy = DeviceVec::from_slice(&dev, &y0).unwrap();
    let exec = capture(stream, || {
        m.spmv_device(h, Operation::NonTranspose, 2.0, dx.addr(), 0.5, dy.addr())
            .unwrap()
    });
    replay_checked(h, exec, stream, &mut dx, &dy, a, y0, mode);
    drop(m);
    h.set_stream(0).unwrap();
    destroy_stream(stream);
}

/// A caller's CSR arrays in device memory (int32 indices, base 0, values of type `T`), for the
/// creates that read device arrays in place.
pub struct DeviceArrays<T> {
    pub row_ptr: DeviceVec<i32>,
    pub col_ind: DeviceVec<i32>,
    pub values: DeviceVec<T>,
    pub rows: usize,
    pub cols: usize,
}

impl<T: Scalar> DeviceArrays<T> {
    /// Device copies of these arrays (the values converted to `T`).
    pub fn new(h: &Handle, rows: usize, cols: usize, rp: &[i32], ci: &[i32], va: &[f64]) -> Self {
        let dev = h.cuda().unwrap();
        let v: Vec<T> = va.iter().map(|&v| T::from_f64(v)).collect();
        DeviceArrays {
            row_ptr: DeviceVec::from_slice(dev, rp).unwrap(),
            col_ind: DeviceVec::from_slice(dev, ci).unwrap(),
            values: DeviceVec::from_slice(dev, &v).unwrap(),
            rows,
            cols,
        }
    }

    /// Device copies of `a`'s arrays.
    pub fn of(h: &Handle, a: &Csr<f64>) -> Self {
        Self::new(h, a.rows(), a.cols(), a.row_ptr(), a.col_ind(), a.values())
    }

    /// Their description for `Matrix::borrow_device*`.
    pub fn descr(&self) -> DeviceCsr {
        DeviceCsr {
            rows: self.rows,
            cols: self.cols,
            nnz: self.values.len(),
            row_ptr: self.row_ptr.addr(),
            col_ind: self.col_ind.addr(),
            values: self.values.addr(),
            is64: false,
            base: IndexBase::Zero,
        }
    }
}

/// y = 1.5 A x - 0.5 y0 on the handle's stream, checked against the f64 product of `a`.
pub fn checked_product<T: Scalar>(h: &Handle, m: &Matrix<T>, a: &Csr<f64>, what: &str, seed: u64) {
    let dev = h.cuda().unwrap();
    let x: Vec<T> = x_for(a.cols(), seed).into_iter().map(T::from_f64).collect();
    let y0: Vec<T> = x_for(a.rows(), seed + 1)
        .into_iter()
        .map(T::from_f64)
        .collect();
    let dx = DeviceVec::from_slice(dev, &x).unwrap();
    let dy = DeviceVec::from_slice(dev, &y0).unwrap();
    m.spmv_device(
        h,
        Operation::NonTranspose,
        T::from_f64(1.5),
        dx.addr(),
        T::from_f64(-0.5),
        dy.addr(),
    )
    .unwrap();
    let y = dy.to_vec(h.cuda_stream()).unwrap();
    assert_product(what, a, Operation::NonTranspose, 1.5, &x, -0.5, &y0, &y);
}

/// A matrix made on the device from `a`'s arrays (`CreatePath::Device`: no host copy kept).
pub fn device_matrix(h: &Handle, a: &Csr<f64>) -> Matrix<f64> {
    Matrix::new_via(
        h,
        tessera::CsrParts {
            rows: a.rows() as i64,
            cols: a.cols() as i64,
            nnz: a.nnz() as i64,
            row_ptr: tessera::Indices::I32(a.row_ptr()),
            col_ind: tessera::Indices::I32(a.col_ind()),
            values: a.values(),
            base: IndexBase::Zero,
        },
        tessera::CreatePath::Device,
    )
    .unwrap()
}
