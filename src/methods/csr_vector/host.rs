//! CSR_VECTOR on the host backend: the fixed rule's parameters and the reference walk.
#![forbid(unsafe_code)]

use super::{params, reference, Params};
use crate::csr::Csr;
use crate::methods::HOST_SM_COUNT;
use crate::methods::{HostMethod, Request};
use crate::scalar::Scalar;
use crate::types::Tuning;

/// CSR_VECTOR ready to run on the host (its format is the CSR itself).
#[derive(Debug, Clone)]
pub struct CsrVectorHost {
    params: Params,
    text: String,
}

impl CsrVectorHost {
    /// The fixed rule for the paper's device (the host has no SMs to count).
    pub fn new<T: Scalar>(req: &Request<'_, T>) -> crate::error::Result<Self> {
        let p = params::fixed_rule(req.stats, HOST_SM_COUNT);
        let mut text = format!(
            "{p} grid={} (Reguly-Giles fixed rule, 5.4; {} blocks min for {} SMs)",
            p.grid_size(req.stats.rows),
            params::min_blocks(HOST_SM_COUNT),
            HOST_SM_COUNT
        );
        if req.tuning != Tuning::None {
            text.push_str(&format!(
                "; tuning={}: the host backend keeps the fixed rule (timing needs a GPU)",
                req.tuning
            ));
        }
        Ok(CsrVectorHost { params: p, text })
    }
}

impl<T: Scalar> HostMethod<T> for CsrVectorHost {
    fn spmv(&self, a: &Csr<T>, alpha: T, x: &[T], beta: T, y: &mut [T]) {
        reference::spmv(a, &self.params, alpha, x, beta, y)
    }

    // The value map is the identity: the CSR values are the method's values.
    fn update_values(&mut self, _a: &Csr<T>) {}

    fn extra_bytes(&self) -> usize {
        0
    }

    fn describe(&self) -> String {
        self.text.clone()
    }

    fn deterministic(&self) -> bool {
        true
    }
}
