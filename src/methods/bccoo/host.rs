//! BCCOO on the host backend: the fixed rule's parameters, the format, and the reference walk.
#![forbid(unsafe_code)]

use super::format::{self, Bccoo};
use super::{describe_format, params, reference, Params};
use crate::csr::Csr;
use crate::error::Result;
use crate::methods::HOST_SM_COUNT;
use crate::methods::{scatter_values, HostMethod, Request};
use crate::scalar::Scalar;
use crate::types::Tuning;

/// BCCOO ready to run on the host.
#[derive(Debug, Clone)]
pub struct BccooHost<T> {
    params: Params,
    format: Bccoo<T>,
    info: Vec<u8>,
    text: String,
}

impl<T: Scalar> BccooHost<T> {
    /// Builds the format with the fixed rule's parameters for the paper-sized device the host
    /// backend stands for (timing needs a GPU).
    pub fn new(req: &Request<'_, T>) -> Result<Self> {
        let p = params::fixed_rule(&format::facts(req.csr()?), HOST_SM_COUNT);
        let format = format::build(req.csr()?, &p.format, p.wg as usize)?;
        let info = format.wg_info(p.wg as usize);
        let mut text = format!(
            "{p} (fixed rule for {HOST_SM_COUNT} SMs); {}",
            describe_format(&format, p.wg as usize)
        );
        if req.tuning != Tuning::None {
            text.push_str(&format!(
                "; tuning={}: the host backend keeps the fixed rule (timing needs a GPU)",
                req.tuning
            ));
        }
        Ok(BccooHost {
            params: p,
            format,
            info,
            text,
        })
    }

    /// The format in use.
    pub fn format(&self) -> &Bccoo<T> {
        &self.format
    }
}

impl<T: Scalar> HostMethod<T> for BccooHost<T> {
    fn spmv(&self, _a: &Csr<T>, alpha: T, x: &[T], beta: T, y: &mut [T]) {
        reference::spmv(
            &self.format,
            self.params.wg as usize,
            self.params.strategy,
            &self.info,
            alpha,
            x,
            beta,
            y,
        )
    }

    fn update_values(&mut self, a: &Csr<T>) {
        scatter_values(a.values(), &self.format.value_slot, &mut self.format.values);
    }

    fn extra_bytes(&self) -> usize {
        self.format.bytes() + self.info.len()
    }

    fn describe(&self) -> String {
        self.text.clone()
    }

    // A fixed order for every addition, no atomics.
    fn deterministic(&self) -> bool {
        true
    }
}
