//! BRC on the host backend: the fixed rule's parameters, the format, and the reference walk.
#![forbid(unsafe_code)]

use super::format::{self, Brc, Variant};
use super::{params, reference, Params};
use crate::csr::Csr;
use crate::error::Result;
use crate::methods::HOST_SM_COUNT;
use crate::methods::{HostMethod, Request};
use crate::scalar::Scalar;
use crate::types::Tuning;

/// The variant a request asks for.
pub fn variant_for(deterministic: bool) -> Variant {
    if deterministic {
        Variant::Deterministic
    } else {
        Variant::Atomic
    }
}

/// BRC ready to run on the host.
#[derive(Debug, Clone)]
pub struct BrcHost<T> {
    format: Brc<T>,
    params: Params,
    text: String,
}

impl<T: Scalar> BrcHost<T> {
    /// The fixed rule (for the paper's 14 SMs where the SM count matters: `rep`), the format in
    /// the requested variant.
    pub fn new(req: &Request<'_, T>) -> Result<Self> {
        let rule = params::fixed_rule(req.csr()?.row_ptr(), req.stats, HOST_SM_COUNT);
        Self::with_params(req, rule.params, &rule.why)
    }

    /// Explicit parameters (tests; `why` says where they came from).
    pub fn with_params(req: &Request<'_, T>, p: Params, why: &str) -> Result<Self> {
        if !p.is_valid() {
            return Err(crate::error::Error::InvalidValue(format!(
                "invalid BRC parameters {p}"
            )));
        }
        let format = format::build(
            req.csr()?,
            p.b1 as usize,
            p.b2 as usize,
            p.ell_width as usize,
            variant_for(req.deterministic),
        )?;
        let mut text = format!("{p} {}; {why} ({HOST_SM_COUNT} SMs)", format.summary());
        if req.tuning != Tuning::None {
            text.push_str(&format!(
                "; tuning={}: the host backend keeps the fixed rule (timing needs a GPU)",
                req.tuning
            ));
        }
        Ok(BrcHost {
            format,
            params: p,
            text,
        })
    }

    /// The format.
    pub fn format(&self) -> &Brc<T> {
        &self.format
    }
}

impl<T: Scalar> HostMethod<T> for BrcHost<T> {
    fn spmv(&self, _a: &Csr<T>, alpha: T, x: &[T], beta: T, y: &mut [T]) {
        reference::spmv(
            &self.format,
            self.params.rep,
            self.params.block_size,
            alpha,
            x,
            beta,
            y,
        )
    }

    fn update_values(&mut self, a: &Csr<T>) {
        self.format.update_values(a);
    }

    fn extra_bytes(&self) -> usize {
        self.format.bytes()
    }

    fn describe(&self) -> String {
        self.text.clone()
    }

    // Reports the variant's GPU property: the host walk is sequential, but the atomic variant's
    // device kernel adds split rows' partials in whatever order the atomics land.
    fn deterministic(&self) -> bool {
        self.format.variant == Variant::Deterministic
    }
}
