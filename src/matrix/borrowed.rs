//! A matrix over the caller's own device arrays ([`Matrix::borrow_device`]: what
//! `tessera_create_csr_borrowed` and the cuSPARSE drop-in make): which methods it may run, and
//! what it refuses, by what its caller promised about writes to the arrays.

use super::Matrix;
use crate::error::{Error, Result};
use crate::handle::Handle;
use crate::scalar::Scalar;
use crate::select;
use crate::types::{Algorithm, Tuning};

/// What the caller of [`Matrix::borrow_device`] may do to its arrays while the matrix exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BorrowedWrites {
    /// The arrays change only through the matrix: values written in place are announced with
    /// `update_values_device` (given the values array itself, or another to copy into it) or
    /// `update_values`, which also refresh any format built from them. Every method runs, a
    /// heavy one from its own copy (AUTO's background build included); the pattern must not
    /// change. What `tessera_create_csr_borrowed` promises.
    Announced,
    /// The caller may rewrite its values (or its pattern, keeping rows and nnz) at any time
    /// without a call, as cuSPARSE's descriptors allow: only the methods that read the arrays
    /// at product time run (CSR_VECTOR; HOLA, whose split is planned from row_ptr, until the
    /// pattern changes), and `update_values` is refused. What the cuSPARSE drop-in needs.
    Unannounced,
}

impl<T: Scalar> Matrix<T> {
    /// True for a matrix over the caller's arrays ([`Matrix::borrow_device`]).
    pub fn is_borrowed(&self) -> bool {
        self.dcsr.as_ref().is_some_and(|d| d.is_borrowed())
    }

    /// True when only a method that reads the caller's arrays at product time may run: they
    /// may change without a call, or their int64 indices serve CSR_VECTOR alone.
    pub(super) fn reads_arrays_only(&self) -> bool {
        // Both hold only for borrowed arrays (only they are int64).
        self.unannounced_writes || self.dcsr.as_ref().is_some_and(|d| d.index64())
    }

    /// A matrix that may only read the caller's arrays ([`Matrix::reads_arrays_only`]) runs a
    /// method that reads them at product time, with no background build: AUTO picks between
    /// CSR_VECTOR and HOLA by [`select::over_csr`].
    pub(super) fn analyze_borrowed(
        &mut self,
        handle: &Handle,
        alg: Algorithm,
        tuning: Tuning,
    ) -> Result<()> {
        let index64 = self.dcsr.as_ref().is_some_and(|d| d.index64());
        let alg = match alg {
            Algorithm::Auto if handle.deterministic() || index64 => Algorithm::CsrVector,
            Algorithm::Auto => select::over_csr(
                &self.stats,
                handle
                    .cuda()
                    .map_or(crate::types::HOST_SM_COUNT, |d| d.sm_count()),
            ),
            a => a,
        };
        if index64 && alg != Algorithm::CsrVector {
            return Err(Error::NotSupported(format!(
                "a matrix over the caller's int64 arrays runs CSR_VECTOR (its kernel reads them in place); {alg} reads int32 indices"
            )));
        }
        if !matches!(alg, Algorithm::CsrVector | Algorithm::Hola)
            || matches!(tuning, Tuning::Quick | Tuning::Exhaustive)
        {
            return Err(Error::NotSupported(format!(
                "a matrix over the caller's arrays runs CSR_VECTOR or HOLA (their products read the arrays in place) with TUNING_NONE or ONLINE; {alg} with {tuning:?} would copy them"
            )));
        }
        self.analyze_with(handle, alg, tuning, Vec::new())
    }

    /// `update_values` of a matrix whose caller rewrites its arrays without a call: refused.
    pub(super) fn refuse_if_borrowed(&self) -> Result<()> {
        if self.unannounced_writes {
            return Err(Error::NotSupported(
                "the matrix reads the caller's own arrays: write the new values there".into(),
            ));
        }
        Ok(())
    }
}
