//! [`Matrix`]: tessera's own copy of a sparse matrix, the method analyze chose for it, and the
//! product.
#![forbid(unsafe_code)]

use crate::backend::host::{self, Prepared};
use crate::csr::{Csr, CsrParts, RowStats};
use crate::error::{Error, Result};
use crate::handle::Handle;
use crate::methods::csr_vector;
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

#[derive(Debug, Clone)]
struct Analysis {
    algorithm: Algorithm,
    prepared: Prepared,
    params: String,
    analysis_ms: f64,
    extra_bytes: usize,
    deterministic: bool,
}

/// A sparse matrix owned by tessera, in value type `T` (`f32` or `f64`).
#[derive(Debug, Clone)]
pub struct Matrix<T> {
    csr: Csr<T>,
    stats: RowStats,
    backend: BackendKind,
    device: i32,
    analysis: Option<Analysis>,
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

    /// The matrix in tessera's CSR (sorted columns, base 0).
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
        let (prepared, mut params, extra_bytes) = match algorithm {
            Algorithm::CsrVector => {
                let p = csr_vector::params::fixed_rule(&self.stats, host::HOST_SM_COUNT);
                (
                    Prepared::CsrVector(p),
                    format!(
                        "{p} grid={} (Reguly-Giles fixed rule, 5.4; {} blocks min for {} SMs)",
                        p.grid_size(self.stats.rows),
                        csr_vector::params::min_blocks(host::HOST_SM_COUNT),
                        host::HOST_SM_COUNT
                    ),
                    csr_vector::format::extra_bytes(&self.csr),
                )
            }
            other => {
                return Err(Error::Internal(format!(
                    "selector returned {other}, which has no host path"
                )))
            }
        };
        if tuning != Tuning::None {
            params.push_str(&format!(
                "; tuning={tuning}: the host backend keeps the fixed rule (timing needs a GPU)"
            ));
        }
        self.analysis = Some(Analysis {
            algorithm,
            prepared,
            params,
            analysis_ms: start.elapsed().as_secs_f64() * 1e3,
            extra_bytes,
            deterministic: true,
        });
        Ok(())
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
        let analysis = self.analysis()?;
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
        if alpha == T::ZERO {
            if beta == T::ZERO {
                y.fill(T::ZERO);
            } else {
                y.iter_mut().for_each(|v| *v = beta * *v);
            }
            return Ok(());
        }
        host::spmv(&self.csr, &analysis.prepared, op, alpha, x, beta, y);
        Ok(())
    }

    /// New values for the same pattern, in the caller's original entry order; no re-analysis.
    pub fn update_values(&mut self, handle: &Handle, values: &[T]) -> Result<()> {
        self.check_handle(handle)?;
        // CSR_VECTOR's value map is the identity: the CSR values are the method's values.
        self.csr.set_values_from_input(values)
    }

    /// Method, parameters, footprint and analysis time.
    pub fn info(&self) -> MatrixInfo {
        let a = self.analysis.as_ref();
        MatrixInfo {
            algorithm: a.map_or(Algorithm::Auto, |a| a.algorithm),
            rows: self.csr.rows(),
            cols: self.csr.cols(),
            nnz: self.csr.nnz(),
            device_bytes: (self.csr.bytes() + a.map_or(0, |a| a.extra_bytes)) as u64,
            analysis_ms: a.map_or(0.0, |a| a.analysis_ms),
            deterministic: a.is_none_or(|a| a.deterministic),
            params: a.map_or_else(|| "not analyzed".to_string(), |a| a.params.clone()),
        }
    }
}

/// A matrix of either value type: what a C `tessera_matrix` points to.
#[derive(Debug, Clone)]
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
