//! What tessera adds to a product beyond the kernel: the same one-row product launched four
//! ways, from the bare driver call to the C API, and the C API's call on an empty matrix. Each
//! is timed twice: host wall time per call over many back-to-back calls (then one wait), and
//! CUDA-event time per call ([`Timer::median_ms`]), which is what a solver sees when the host
//! queues products faster than the GPU runs them. On a tiny matrix the GPU finishes a kernel in
//! about 2 us, so every microsecond of host work per call shows in both.
#![deny(unsafe_op_in_unsafe_fn)]

use crate::api::types::*;
use crate::api::{
    tessera_create_csr, tessera_create_with, tessera_destroy, tessera_destroy_matrix, tessera_spmv,
};
use crate::backend::cuda::kernels::KernelSpec;
use crate::backend::cuda::{launch, synchronize, DeviceVec, KernelArgs, Stream, Timer};
use crate::error::{Error, Result};
use crate::handle::Handle;
use crate::methods::csr_vector;
use crate::types::{Algorithm, BackendKind, Operation, Tuning};
use std::ffi::c_void;
use std::time::Instant;

/// One way of making the product, with its two times in microseconds.
#[derive(Debug, Clone)]
pub struct Probe {
    /// What was called.
    pub what: &'static str,
    /// Host wall time per call: calls back to back, then one wait, divided by the calls.
    pub host_us: f64,
    /// CUDA-event time per call (median of batches), `None` for a call that queues no work.
    pub event_us: Option<f64>,
}

/// Calls of each probe for the host wall time.
const CALLS: usize = 20_000;

fn host_us(stream: Stream, h: &Handle, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    for _ in 0..100 {
        f()?;
    }
    let dev = h.cuda().expect("a CUDA handle");
    synchronize(dev, stream)?;
    let t = Instant::now();
    for _ in 0..CALLS {
        f()?;
    }
    synchronize(dev, stream)?;
    Ok(t.elapsed().as_secs_f64() * 1e6 / CALLS as f64)
}

fn status(s: tessera_status, what: &str) -> Result<()> {
    if s == TESSERA_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Error::ExecutionFailed(format!(
            "{what} returned status {s}"
        )))
    }
}

/// The probes, on the Rust handle `h` and the C API handle `c` (both CUDA, same device, both on
/// the default stream).
fn call_overhead(h: &Handle, c: tessera_handle) -> Result<Vec<Probe>> {
    let dev = h
        .cuda()
        .ok_or_else(|| Error::InvalidValue("the overhead probe needs a CUDA handle".into()))?;
    let stream = h.cuda_stream();
    let mut out = Vec::new();
    let x = DeviceVec::from_slice(dev, &[1.0f64])?;
    let y = DeviceVec::from_slice(dev, &[0.0f64])?;
    // The matrix 1 x 1 = [2], with CSR_VECTOR's fixed rule: one launch of csr_vector_spmv.
    let a = crate::csr::Csr::from_triplets(1, 1, &[(0, 0, 2.0f64)])?;
    let mut m = crate::matrix::Matrix::from_csr(h, a);
    m.analyze(h, Algorithm::CsrVector, Tuning::None)?;
    // 1. The kernel alone: cuLaunchKernel through tessera's launch (context push and pop,
    // configuration check), with the arguments the method passes.
    let spec = KernelSpec::new(&csr_vector::kernel::KERNELS, &[1])?;
    let f = dev.module(&spec)?.function("csr_vector_spmv_f64")?;
    let rp = DeviceVec::from_slice(dev, &[0i32, 1])?;
    let ci = DeviceVec::from_slice(dev, &[0i32])?;
    let va = DeviceVec::from_slice(dev, &[2.0f64])?;
    // 0. The bare driver call: cuLaunchKernel with the context made current once, outside the
    // loop, and the argument slots built once.
    {
        let _ctx = dev.enter()?;
        let (mut rows, mut rep) = (1i32, 1i32);
        let (mut a_rp, mut a_ci, mut a_va) = (rp.addr(), ci.addr(), va.addr());
        let (mut a_x, mut a_y) = (x.addr(), y.addr());
        let (mut alpha, mut beta) = (1.0f64, 0.0f64);
        let mut params: [*mut c_void; 9] = [
            (&mut rows as *mut i32).cast(),
            (&mut a_rp as *mut u64).cast(),
            (&mut a_ci as *mut u64).cast(),
            (&mut a_va as *mut u64).cast(),
            (&mut a_x as *mut u64).cast(),
            (&mut a_y as *mut u64).cast(),
            (&mut alpha as *mut f64).cast(),
            (&mut beta as *mut f64).cast(),
            (&mut rep as *mut i32).cast(),
        ];
        let raw = f.raw();
        let mut call = || {
            // SAFETY: csr_vector_spmv_f64's nine parameters, each slot alive for the call (the
            // locals above); the context is current (`_ctx`); one block of 128 threads.
            let r = unsafe {
                cudarc::driver::sys::cuLaunchKernel(
                    raw,
                    1,
                    1,
                    1,
                    128,
                    1,
                    1,
                    0,
                    stream.raw(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            };
            if r == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
                Ok(())
            } else {
                Err(Error::ExecutionFailed(format!("cuLaunchKernel: {r:?}")))
            }
        };
        out.push(Probe {
            what: "bare cuLaunchKernel (context current, arguments built once)",
            host_us: host_us(stream, h, &mut call)?,
            event_us: Some(Timer::new(dev)?.median_ms(stream, 3, 7, &mut call)? * 1e3),
        });
    }
    let bare = || {
        let args = KernelArgs::new()
            .push(1i32)
            .push(rp.addr())
            .push(ci.addr())
            .push(va.addr())
            .push(x.addr())
            .push(y.addr())
            .push(1.0f64)
            .push(0.0f64)
            .push(1i32);
        // SAFETY: csr_vector_spmv_f64(int rows, const int* row_ptr, const int* col_ind,
        // const double* values, const double* x, double* y, double alpha, double beta,
        // int repeat): a 1 x 1 CSR on the device, x and y of one value each.
        unsafe { launch(dev, &f, 1, 128, stream, args) }
    };
    out.push(Probe {
        what: "kernel launch (tessera's launch: context push/pop, checks, cuLaunchKernel)",
        host_us: host_us(stream, h, bare)?,
        event_us: Some(Timer::new(dev)?.median_ms(stream, 3, 7, bare)? * 1e3),
    });
    // 2. The Rust API: Matrix::spmv_device.
    let rust = || m.spmv_device(h, Operation::NonTranspose, 1.0, x.addr(), 0.0, y.addr());
    out.push(Probe {
        what: "Matrix::spmv_device, 1 x 1 (Rust API)",
        host_us: host_us(stream, h, rust)?,
        event_us: Some(Timer::new(dev)?.median_ms(stream, 3, 7, rust)? * 1e3),
    });
    // 3. and 4. The C API, 1 x 1 and 0 x 0.
    for n in [1i64, 0] {
        let rp: Vec<i32> = (0..=n as i32).collect();
        let ci: Vec<i32> = (0..n as i32).collect();
        let va: Vec<f64> = vec![2.0; n as usize];
        let mut cm: tessera_matrix = std::ptr::null_mut();
        // SAFETY: c is a live C handle; the arrays hold n + 1, n and n entries; cm is a valid
        // out-pointer.
        status(
            unsafe {
                tessera_create_csr(
                    c,
                    &mut cm,
                    n,
                    n,
                    n,
                    rp.as_ptr().cast(),
                    ci.as_ptr().cast(),
                    va.as_ptr().cast(),
                    TESSERA_INDEX_TYPE_I32,
                    TESSERA_INDEX_BASE_ZERO,
                    TESSERA_VALUE_TYPE_F64,
                )
            },
            "tessera_create_csr",
        )?;
        // SAFETY: live handle and matrix.
        status(
            unsafe {
                crate::api::tessera_analyze(
                    c,
                    cm,
                    TESSERA_ALGORITHM_CSR_VECTOR,
                    TESSERA_TUNING_NONE,
                )
            },
            "tessera_analyze",
        )?;
        let (alpha, beta) = (1.0f64, 0.0f64);
        let call = || {
            // SAFETY: live handle and matrix; host scalars; x and y hold one device value
            // each (none are read for the 0 x 0 matrix).
            status(
                unsafe {
                    tessera_spmv(
                        c,
                        TESSERA_OPERATION_NON_TRANSPOSE,
                        (&alpha as *const f64).cast::<c_void>(),
                        cm,
                        x.addr() as *const c_void,
                        (&beta as *const f64).cast::<c_void>(),
                        y.addr() as *mut c_void,
                    )
                },
                "tessera_spmv",
            )
        };
        let probe = if n == 1 {
            Probe {
                what: "tessera_spmv, 1 x 1 (C API)",
                host_us: host_us(stream, h, call)?,
                event_us: Some(Timer::new(dev)?.median_ms(stream, 3, 7, call)? * 1e3),
            }
        } else {
            Probe {
                what: "tessera_spmv, 0 x 0 (C API: checks only, nothing queued)",
                host_us: host_us(stream, h, call)?,
                event_us: None,
            }
        };
        out.push(probe);
        // SAFETY: a live matrix of ours, destroyed once.
        status(
            unsafe { tessera_destroy_matrix(cm) },
            "tessera_destroy_matrix",
        )?;
    }
    Ok(out)
}

/// The probes on CUDA device `device`: a Rust handle and a C API handle of it, both on the
/// default stream (the C handle is destroyed again).
pub fn run(device: i32) -> Result<Vec<Probe>> {
    let h = Handle::with_backend(BackendKind::Cuda, device)?;
    let mut c: tessera_handle = std::ptr::null_mut();
    // SAFETY: c is a valid out-pointer.
    status(
        unsafe { tessera_create_with(&mut c, TESSERA_BACKEND_CUDA, device) },
        "tessera_create_with",
    )?;
    let probes = call_overhead(&h, c);
    // SAFETY: the live handle created above, destroyed once.
    status(unsafe { tessera_destroy(c) }, "tessera_destroy")?;
    probes
}
