//! The SpMV methods, one folder each (ARCHITECTURE §3), plus what they share: the value map
//! scatter used by `update_values` and the generic transpose over CSR.
// `deny`, not `forbid`: each method's `cuda.rs` opts back in (CONVENTIONS §6); format.rs,
// reference.rs and params.rs forbid it themselves.
#![deny(unsafe_code)]

pub mod csr_vector;
pub mod transpose;

use crate::scalar::Scalar;

/// Writes the caller's values (in CSR order) into a format's value array through its value map:
/// `dst[slot[k]] = src[k]`. Slots not named by the map (padding) are left as they are — zero.
/// This is the host twin of the generic GPU scatter kernel every method's update uses.
pub fn scatter_values<T: Scalar>(src: &[T], slot: &[u32], dst: &mut [T]) {
    assert_eq!(src.len(), slot.len(), "one slot per CSR non-zero");
    for (&v, &s) in src.iter().zip(slot) {
        dst[s as usize] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_through_a_value_map_leaves_padding_zero() {
        let mut dst = [0.0f64; 5];
        scatter_values(&[1.0, 2.0, 3.0], &[4, 0, 2], &mut dst);
        assert_eq!(dst, [2.0, 0.0, 3.0, 0.0, 1.0]);
    }
}
