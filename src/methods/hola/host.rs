//! HOLA on the host backend: the row-start buffer and the reference walk (warps of 32).
#![forbid(unsafe_code)]

use super::{format, params, reference, Params};
use crate::csr::Csr;
use crate::methods::{HostMethod, Request};
use crate::scalar::Scalar;
use crate::types::Tuning;

/// HOLA ready to run on the host.
#[derive(Debug, Clone)]
pub struct HolaHost {
    params: Params,
    starts: Vec<i32>,
    text: String,
}

impl HolaHost {
    /// The fixed rule's layout and its row starts (Alg. 2 on the host).
    pub fn new<T: Scalar>(req: &Request<'_, T>) -> crate::error::Result<Self> {
        let p = params::fixed_rule(req.stats);
        let starts = format::row_starts(req.csr()?.row_ptr(), p.npb());
        let mut text = format!("{p} blocks={} (fixed rule, 3.1)", starts.len() - 1);
        if req.tuning != Tuning::None {
            text.push_str(&format!(
                "; tuning={}: the host backend keeps the fixed rule (timing needs a GPU)",
                req.tuning
            ));
        }
        Ok(HolaHost {
            params: p,
            starts,
            text,
        })
    }
}

impl<T: Scalar> HostMethod<T> for HolaHost {
    fn spmv(&self, a: &Csr<T>, alpha: T, x: &[T], beta: T, y: &mut [T]) {
        let lay = reference::Layout::gpu(&self.params);
        // Two blocks per SM: the GPU's resident count is not known here.
        let own = params::own_mode(self.starts.len() - 1, crate::methods::HOST_SM_COUNT, 2);
        reference::spmv(a, &self.starts, lay, own, alpha, x, beta, y)
    }

    fn spmv_transpose(&self, a: &Csr<T>, alpha: T, x: &[T], beta: T, y: &mut [T]) {
        let lay = reference::Layout::gpu(&self.params);
        reference::spmv_transpose(a, &self.starts, lay, alpha, x, beta, y)
    }

    // The value map is the identity: the CSR values are HOLA's values.
    fn update_values(&mut self, _a: &Csr<T>) {}

    fn extra_bytes(&self) -> usize {
        self.starts.len() * std::mem::size_of::<i32>()
    }

    fn describe(&self) -> String {
        self.text.clone()
    }

    // The method combines shared rows with float atomics on the GPU; the info describes the
    // method, the same on both backends.
    fn deterministic(&self) -> bool {
        false
    }
}
