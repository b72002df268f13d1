//! A matrix over the caller's own device arrays ([`Matrix::borrow_device`], what the cuSPARSE
//! drop-in runs): which methods it may run, and what it refuses because it would copy the
//! arrays or write into them.

use super::Matrix;
use crate::error::{Error, Result};
use crate::handle::Handle;
use crate::scalar::Scalar;
use crate::select;
use crate::types::{Algorithm, Tuning};

impl<T: Scalar> Matrix<T> {
    /// True for a matrix over the caller's arrays ([`Matrix::borrow_device`]).
    pub fn is_borrowed(&self) -> bool {
        self.dcsr.as_ref().is_some_and(|d| d.is_borrowed())
    }

    /// A matrix over the caller's arrays runs a method that reads them at product time, with
    /// no background build: AUTO picks between CSR_VECTOR and HOLA by [`select::over_csr`].
    pub(super) fn analyze_borrowed(
        &mut self,
        handle: &Handle,
        alg: Algorithm,
        tuning: Tuning,
    ) -> Result<()> {
        let index64 = self.dcsr.as_ref().is_some_and(|d| d.index64());
        let alg = match alg {
            Algorithm::Auto if handle.deterministic() || index64 => Algorithm::CsrVector,
            Algorithm::Auto => select::over_csr(&self.stats),
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
        self.analyze_with(handle, alg, tuning, None)
    }

    pub(super) fn refuse_if_borrowed(&self) -> Result<()> {
        if self.is_borrowed() {
            return Err(Error::NotSupported(
                "the matrix reads the caller's own arrays: write the new values there".into(),
            ));
        }
        Ok(())
    }
}
