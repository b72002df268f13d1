//! The default `TRANSPOSE` path for every method: y = alpha*A^T*x + beta*y straight from CSR.
//! On the GPU this is one thread per row scattering `alpha*a_ij*x_i` into `y_j` with atomics
//! (the Hola-SpMVT idea: rows are read in CSR order, the scattered additions are spread over
//! the columns); this host twin visits rows in order, so it is the same arithmetic with one
//! fixed summation order.
#![forbid(unsafe_code)]

use crate::backend::cuda::csr::TransposeLaunch;
use crate::csr::{Csr, RowStats};
use crate::methods::csr_vector;
use crate::scalar::Scalar;

/// How the GPU transpose kernel walks the rows of a matrix with these statistics on a device of
/// `sm_count` SMs: like CSR_VECTOR's fixed rule (threads per row from the mean row length,
/// enough blocks to fill the device), since it reads the rows the same way.
pub fn gpu_launch(stats: &RowStats, sm_count: u32) -> TransposeLaunch {
    let p = csr_vector::params::fixed_rule(stats, sm_count);
    TransposeLaunch {
        coop: p.coop,
        repeat: p.repeat,
        block_size: p.block_size,
    }
}

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
