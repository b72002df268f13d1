//! CSR_VECTOR works on tessera's own CSR arrays: there is nothing to convert. The value map is
//! the identity, so `update_values` writes straight into the CSR values.
#![forbid(unsafe_code)]

use crate::csr::Csr;
use crate::scalar::Scalar;

/// Where each CSR non-zero lives in this method's value array: the same place.
pub fn value_slot<T: Scalar>(a: &Csr<T>) -> Vec<u32> {
    (0..a.nnz() as u32).collect()
}

/// Bytes the method keeps beyond the CSR arrays (none).
pub fn extra_bytes<T: Scalar>(_a: &Csr<T>) -> usize {
    0
}
