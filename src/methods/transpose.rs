//! The default `TRANSPOSE` path for every method: y = alpha*A^T*x + beta*y straight from CSR.
//! On the GPU this is one thread per row scattering `alpha*a_ij*x_i` into `y_j` with atomics
//! (the Hola-SpMVT idea, ARCHITECTURE §2); this host twin visits rows in order, so it is the
//! same arithmetic with one fixed summation order.
#![forbid(unsafe_code)]

use crate::csr::Csr;
use crate::scalar::Scalar;

/// Host reference of the CSR transpose product. `x` has `rows` entries, `y` has `cols`.
/// `beta == 0` never reads `y`.
pub fn spmv_transpose<T: Scalar>(a: &Csr<T>, alpha: T, x: &[T], beta: T, y: &mut [T]) {
    let y = &mut y[..a.cols()];
    if beta == T::ZERO {
        y.fill(T::ZERO);
    } else if beta != T::ONE {
        y.iter_mut().for_each(|v| *v = beta * *v);
    }
    let (rp, ci, va) = (a.row_ptr(), a.col_ind(), a.values());
    for (r, &xr) in x[..a.rows()].iter().enumerate() {
        let ax = alpha * xr;
        for k in rp[r] as usize..rp[r + 1] as usize {
            y[ci[k] as usize] += va[k] * ax;
        }
    }
}
