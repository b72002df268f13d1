//! [`Matrix`]: tessera's own copy of a sparse matrix, the method analyze chose for it, and the
//! product.
#![forbid(unsafe_code)]

use crate::backend::cuda::csr::GpuCsr;
use crate::backend::cuda::{self, DeviceVec};
use crate::csr::{Csr, CsrParts, RowStats};
use crate::error::{Error, Result};
use crate::handle::Handle;
use crate::methods::{self, GpuMethod, HostMethod, Request};
use crate::scalar::Scalar;
use crate::select;
use crate::types::{Algorithm, BackendKind, Operation, Tuning, ValueType};
use std::time::Instant;

/// What [`Matrix::info`] reports (the Rust form of `tessera_matrix_info`).
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixInfo {
    /// What analyze chose; `Auto` before analyze.
    pub algorithm: Algorithm,
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Stored entries.
    pub nnz: usize,
    /// Bytes kept for the matrix on the device (host backend: host memory).
    pub device_bytes: u64,
    /// Wall time of the last analyze in milliseconds.
    pub analysis_ms: f64,
    /// Whether spmv is bitwise reproducible run to run.
    pub deterministic: bool,
    /// The chosen parameters as text.
    pub params: String,
}

#[derive(Debug)]
struct Analysis {
    algorithm: Algorithm,
    analysis_ms: f64,
    /// How AUTO chose, when it timed the methods (prefixes `info.params`).
    auto_note: String,
}

/// What analyze built on the device: the method (declared first, so its kernels go first) and
/// the CSR arrays every method's TRANSPOSE and value update use.
#[derive(Debug)]
struct Gpu<T: Scalar> {
    method: Box<dyn GpuMethod<T>>,
    csr: GpuCsr<T>,
}

/// A sparse matrix owned by tessera, in value type `T` (`f32` or `f64`).
#[derive(Debug)]
pub struct Matrix<T: Scalar> {
    csr: Csr<T>,
    stats: RowStats,
    backend: BackendKind,
    device: i32,
    analysis: Option<Analysis>,
    /// The method on the host backend (after analyze).
    host: Option<Box<dyn HostMethod<T>>>,
    /// The method and the CSR on the device (CUDA backend, after analyze).
    gpu: Option<Gpu<T>>,
    /// True after update_values from device memory: the device holds newer values than `csr`.
    host_values_stale: bool,
    /// Why the last update_values failed part way on the device (the CSR and the method's own
    /// value arrays may then disagree): products refuse to run, rather than return a wrong y
    /// silently, until update_values or analyze succeeds.
    values_failed: Option<String>,
}

impl<T: Scalar> Matrix<T> {
    /// Validates and copies the caller's CSR arrays (see [`Csr::from_parts`]).
    pub fn new(handle: &Handle, parts: CsrParts<'_, T>) -> Result<Self> {
        Ok(Self::from_csr(handle, Csr::from_parts(parts)?))
    }

    /// Takes an already validated CSR.
    pub fn from_csr(handle: &Handle, csr: Csr<T>) -> Self {
        let stats = csr.stats();
        Matrix {
            csr,
            stats,
            backend: handle.backend(),
            device: handle.device(),
            analysis: None,
            host: None,
            gpu: None,
            host_values_stale: false,
            values_failed: None,
        }
    }

    fn check_handle(&self, handle: &Handle) -> Result<()> {
        if handle.backend() != self.backend || handle.device() != self.device {
            return Err(Error::InvalidValue(format!(
                "the matrix was created on the {} backend (device {}) but the handle is {} (device {}); use a handle of the same backend and device",
                self.backend, self.device, handle.backend(), handle.device()
            )));
        }
        Ok(())
    }

    /// The matrix in tessera's CSR (sorted columns, base 0). After
    /// [`Matrix::update_values_device`] its values are those of the last analyze or host update
    /// until [`Matrix::sync_host_values`] (or the next analyze) fetches the device's.
    pub fn csr(&self) -> &Csr<T> {
        &self.csr
    }

    /// Row statistics.
    pub fn stats(&self) -> &RowStats {
        &self.stats
    }

    /// Chooses a method (AUTO) or takes the requested one, picks its parameters (by its fixed
    /// rule; by timing candidates on a GPU when `tuning` asks for it) and builds its format.
    /// Analyzing again replaces the previous analysis.
    pub fn analyze(&mut self, handle: &Handle, alg: Algorithm, tuning: Tuning) -> Result<()> {
        self.check_handle(handle)?;
        let start = Instant::now();
        let algorithm = select::choose(&self.stats, alg, handle.deterministic())?;
        self.sync_host_values(handle)?;
        // The old analysis goes first, so that its memory can be reused; if this analysis
        // fails, the matrix is left not analyzed (spmv answers NOT_ANALYZED).
        self.analysis = None;
        self.host = None;
        self.gpu = None;
        self.values_failed = None;
        let req = Request {
            csr: &self.csr,
            stats: &self.stats,
            tuning,
            deterministic: handle.deterministic(),
        };
        let mut algorithm = algorithm;
        let mut auto_note = String::new();
        if let Some(dev) = handle.cuda() {
            let stream = handle.cuda_stream();
            let transpose = methods::transpose::gpu_launch(&self.stats, dev.sm_count());
            let csr = GpuCsr::upload(dev, stream, &self.csr, transpose)?;
            let timed = alg == Algorithm::Auto
                && matches!(tuning, Tuning::Quick | Tuning::Exhaustive)
                && self.csr.nnz() > 0;
            let method = if timed {
                let (a, m, note) = select::by_timing(dev, stream, &csr, &req)?;
                algorithm = a;
                auto_note = note;
                m
            } else {
                methods::prepare_gpu(algorithm, dev, stream, &csr, &req)?
            };
            handle.synchronize()?;
            self.gpu = Some(Gpu { method, csr });
        } else {
            self.host = Some(methods::prepare_host(algorithm, &req)?);
        }
        self.analysis = Some(Analysis {
            algorithm,
            analysis_ms: start.elapsed().as_secs_f64() * 1e3,
            auto_note,
        });
        Ok(())
    }

    /// On the CUDA backend after [`Matrix::update_values_device`]: copies the device's values
    /// back into [`Matrix::csr`] (waits for the handle's stream). Otherwise a no-op.
    pub fn sync_host_values(&mut self, handle: &Handle) -> Result<()> {
        self.check_handle(handle)?;
        if let (true, Some(gpu)) = (self.host_values_stale, &self.gpu) {
            gpu.csr
                .download_values(handle.cuda_stream(), self.csr.values_mut())?;
        }
        self.host_values_stale = false;
        Ok(())
    }

    /// True when ONLINE tuning has settled (and always without ONLINE or before analyze).
    pub fn tuning_settled(&self) -> bool {
        self.gpu.as_ref().is_none_or(|g| g.method.settled())
    }

    /// True once [`Matrix::analyze`] succeeded.
    pub fn is_analyzed(&self) -> bool {
        self.analysis.is_some()
    }

    /// The analysis, or `NotAnalyzed`: spmv never analyzes implicitly (analysis allocates and
    /// may take time; spmv must stay capture-safe).
    fn analysis(&self) -> Result<&Analysis> {
        self.analysis.as_ref().ok_or_else(|| {
            Error::NotAnalyzed(
                "the matrix has not been analyzed: call tessera_analyze once before tessera_spmv"
                    .into(),
            )
        })
    }

    /// Fails with `NotAnalyzed` (see [`Matrix::spmv`]) before [`Matrix::analyze`].
    pub fn require_analyzed(&self) -> Result<()> {
        self.analysis().map(|_| ())
    }

    /// Lengths of x and y for `op`.
    pub fn vector_lengths(&self, op: Operation) -> (usize, usize) {
        match op {
            Operation::NonTranspose => (self.csr.cols(), self.csr.rows()),
            Operation::Transpose => (self.csr.rows(), self.csr.cols()),
        }
    }

    /// y = alpha*op(A)*x + beta*y (BLAS semantics: `beta == 0` never reads y, so NaN in y does
    /// not leak; `alpha == 0` never reads A or x). Fails with `NotAnalyzed` before
    /// [`Matrix::analyze`], with `InvalidSize` when x or y has the wrong length.
    pub fn spmv(
        &self,
        handle: &Handle,
        op: Operation,
        alpha: T,
        x: &[T],
        beta: T,
        y: &mut [T],
    ) -> Result<()> {
        self.check_handle(handle)?;
        self.analysis()?;
        let (xl, yl) = self.vector_lengths(op);
        if x.len() != xl || y.len() != yl {
            return Err(Error::InvalidSize(format!(
                "for {op} of a {} x {} matrix x needs {xl} entries and y {yl}, got {} and {}",
                self.csr.rows(),
                self.csr.cols(),
                x.len(),
                y.len()
            )));
        }
        if let Some(dev) = handle.cuda() {
            // Staged through device memory (allocates and waits): for tools and tests; C
            // callers and solvers use spmv_device.
            let dx = DeviceVec::from_slice(dev, x)?;
            let dy = DeviceVec::from_slice(dev, y)?;
            self.spmv_device(handle, op, alpha, dx.addr(), beta, dy.addr())?;
            y.copy_from_slice(&dy.to_vec(handle.cuda_stream())?);
            return Ok(());
        }
        if alpha == T::ZERO {
            if beta == T::ZERO {
                y.fill(T::ZERO);
            } else {
                y.iter_mut().for_each(|v| *v = beta * *v);
            }
            return Ok(());
        }
        let method = self.host.as_ref().ok_or_else(|| {
            Error::Internal("a host matrix was analyzed but has no host method".into())
        })?;
        match op {
            Operation::NonTranspose => method.spmv(&self.csr, alpha, x, beta, y),
            Operation::Transpose => method.spmv_transpose(&self.csr, alpha, x, beta, y),
        }
        Ok(())
    }

    /// y = alpha*op(A)*x + beta*y on the CUDA backend with x and y in device-accessible memory
    /// (device, managed or mapped pinned), given as device addresses: asynchronous on the
    /// handle's stream, no allocation, no host synchronisation (capturable in a CUDA graph).
    /// x must hold as many values as op(A) has columns and y as many as it has rows; a plain
    /// host address is `InvalidPointer`, a too-short allocation `InvalidSize`.
    pub fn spmv_device(
        &self,
        handle: &Handle,
        op: Operation,
        alpha: T,
        x: u64,
        beta: T,
        y: u64,
    ) -> Result<()> {
        self.check_handle(handle)?;
        self.analysis()?;
        if handle.cuda().is_none() {
            return Err(Error::InvalidValue(
                "spmv_device needs a CUDA handle; the host backend takes host slices (Matrix::spmv)".into(),
            ));
        }
        let gpu = self.gpu.as_ref().ok_or_else(|| {
            Error::Internal("a CUDA matrix was analyzed but has no device arrays".into())
        })?;
        if let Some(why) = &self.values_failed {
            return Err(Error::ExecutionFailed(format!(
                "the matrix's last update_values failed part way ({why}), so its values on the device may disagree with each other; call update_values (or analyze) again"
            )));
        }
        let (xl, yl) = self.vector_lengths(op);
        if yl == 0 {
            return Ok(());
        }
        let sz = std::mem::size_of::<T>();
        handle.check_device_vector(y, yl * sz, "y")?;
        let stream = handle.cuda_stream();
        if alpha == T::ZERO {
            return if beta == T::ONE {
                Ok(())
            } else {
                gpu.csr.scale(stream, yl, y, beta)
            };
        }
        handle.check_device_vector(x, xl * sz, "x")?;
        match op {
            Operation::NonTranspose => gpu.method.spmv(&gpu.csr, stream, alpha, x, beta, y),
            Operation::Transpose => gpu
                .method
                .spmv_transpose(&gpu.csr, stream, alpha, x, beta, y),
        }
    }

    /// New values for the same pattern, in the caller's original entry order; no re-analysis.
    /// On the CUDA backend the device copy is updated too (and this waits for the upload).
    pub fn update_values(&mut self, handle: &Handle, values: &[T]) -> Result<()> {
        self.check_handle(handle)?;
        self.csr.set_values_from_input(values)?;
        self.host_values_stale = false;
        if let Some(method) = &mut self.host {
            method.update_values(&self.csr);
        }
        if let Some(gpu) = &self.gpu {
            let stream = handle.cuda_stream();
            let done = gpu
                .csr
                .upload_values(stream, self.csr.values())
                .and_then(|_| gpu.method.refresh_values(&gpu.csr, stream));
            self.values_failed = done.as_ref().err().map(|e| e.detail().to_string());
            done?;
        }
        Ok(())
    }

    /// New values from device-accessible memory at device address `values` (nnz values, the
    /// caller's original entry order), on the CUDA backend: the value-map scatter kernel runs
    /// on the handle's stream, asynchronously. Before analyze the values are copied to the
    /// host copy instead (waiting for the stream).
    pub fn update_values_device(&mut self, handle: &Handle, values: u64) -> Result<()> {
        self.check_handle(handle)?;
        let Some(dev) = handle.cuda() else {
            return Err(Error::InvalidValue(
                "update_values_device needs a CUDA handle; the host backend takes a host slice"
                    .into(),
            ));
        };
        let nnz = self.csr.nnz();
        cuda::check_device_accessible(dev, values, nnz * std::mem::size_of::<T>(), "values")?;
        match &self.gpu {
            Some(gpu) => {
                let stream = handle.cuda_stream();
                // A failed scatter queued nothing: the matrix keeps its previous values.
                gpu.csr.scatter_from_device(stream, values)?;
                self.host_values_stale = true;
                let done = gpu.method.refresh_values(&gpu.csr, stream);
                self.values_failed = done.as_ref().err().map(|e| e.detail().to_string());
                done?;
            }
            None => {
                let mut v = crate::csr::try_vec_filled(nnz, T::ZERO, "values")?;
                cuda::copy_to_host(dev, handle.cuda_stream(), values, &mut v)?;
                self.csr.set_values_from_input(&v)?;
            }
        }
        Ok(())
    }

    /// Method, parameters, footprint and analysis time.
    pub fn info(&self) -> MatrixInfo {
        let a = self.analysis.as_ref();
        MatrixInfo {
            algorithm: a.map_or(Algorithm::Auto, |a| a.algorithm),
            rows: self.csr.rows(),
            cols: self.csr.cols(),
            nnz: self.csr.nnz(),
            device_bytes: match (&self.gpu, &self.host) {
                (Some(g), _) => (g.csr.device_bytes() + g.method.device_bytes()) as u64,
                (None, Some(h)) => (self.csr.bytes() + h.extra_bytes()) as u64,
                (None, None) if self.backend == BackendKind::Cuda => 0,
                (None, None) => self.csr.bytes() as u64,
            },
            analysis_ms: a.map_or(0.0, |a| a.analysis_ms),
            deterministic: match (&self.gpu, &self.host) {
                (Some(g), _) => g.method.deterministic(),
                (None, Some(h)) => h.deterministic(),
                (None, None) => true,
            },
            params: match (&self.gpu, &self.host) {
                (Some(g), _) => format!(
                    "{}{}",
                    a.map_or("", |a| a.auto_note.as_str()),
                    g.method.describe()
                ),
                (None, Some(h)) => h.describe(),
                (None, None) => "not analyzed".to_string(),
            },
        }
    }
}

/// A matrix of either value type: what a C `tessera_matrix` points to.
#[derive(Debug)]
pub enum AnyMatrix {
    /// f32 values.
    F32(Matrix<f32>),
    /// f64 values.
    F64(Matrix<f64>),
}

impl AnyMatrix {
    /// The value type.
    pub fn value_type(&self) -> ValueType {
        match self {
            AnyMatrix::F32(_) => ValueType::F32,
            AnyMatrix::F64(_) => ValueType::F64,
        }
    }

    /// See [`Matrix::analyze`].
    pub fn analyze(&mut self, handle: &Handle, alg: Algorithm, tuning: Tuning) -> Result<()> {
        match self {
            AnyMatrix::F32(m) => m.analyze(handle, alg, tuning),
            AnyMatrix::F64(m) => m.analyze(handle, alg, tuning),
        }
    }

    /// See [`Matrix::info`].
    pub fn info(&self) -> MatrixInfo {
        match self {
            AnyMatrix::F32(m) => m.info(),
            AnyMatrix::F64(m) => m.info(),
        }
    }

    /// See [`Matrix::is_analyzed`].
    pub fn is_analyzed(&self) -> bool {
        match self {
            AnyMatrix::F32(m) => m.is_analyzed(),
            AnyMatrix::F64(m) => m.is_analyzed(),
        }
    }

    /// See [`Matrix::vector_lengths`].
    pub fn vector_lengths(&self, op: Operation) -> (usize, usize) {
        match self {
            AnyMatrix::F32(m) => m.vector_lengths(op),
            AnyMatrix::F64(m) => m.vector_lengths(op),
        }
    }
}
