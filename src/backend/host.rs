//! The host backend: runs each method's `reference.rs` over that method's own arrays. It is the
//! oracle the GPU is tested against and the path CI exercises.
#![forbid(unsafe_code)]

use crate::csr::Csr;
use crate::methods::{csr_vector, transpose};
use crate::scalar::Scalar;
use crate::types::Operation;

/// The host backend has no SMs; the fixed rules that scale with the SM count use the paper's
/// device (Reguly & Giles: 14 SMs), so host parameters read like the paper's.
pub const HOST_SM_COUNT: u32 = csr_vector::params::PAPER_SM_COUNT;

/// A method ready to run on the host.
#[derive(Debug, Clone, PartialEq)]
pub enum Prepared {
    /// CSR_VECTOR with its parameters.
    CsrVector(csr_vector::Params),
}

/// y = alpha*op(A)*x + beta*y on the host. Slices have exactly the lengths op(A) needs.
pub fn spmv<T: Scalar>(
    a: &Csr<T>,
    prep: &Prepared,
    op: Operation,
    alpha: T,
    x: &[T],
    beta: T,
    y: &mut [T],
) {
    match (op, prep) {
        (Operation::NonTranspose, Prepared::CsrVector(p)) => {
            csr_vector::reference::spmv(a, p, alpha, x, beta, y)
        }
        (Operation::Transpose, _) => transpose::spmv_transpose(a, alpha, x, beta, y),
    }
}
