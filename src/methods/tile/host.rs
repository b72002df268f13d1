//! TileSpMV on the host backend: the fixed rule's parameters (or explicit ones), the format,
//! and the reference walk.
#![forbid(unsafe_code)]

use super::format::{self, Tiled};
use super::{params, reference, TileParams};
use crate::csr::Csr;
use crate::error::Result;
use crate::methods::{HostMethod, Request};
use crate::scalar::Scalar;
use crate::types::Tuning;

/// TileSpMV ready to run on the host.
#[derive(Debug, Clone)]
pub struct TileHost<T> {
    format: Tiled<T>,
    text: String,
}

impl<T: Scalar> TileHost<T> {
    /// The fixed rule (§III.D; deferral by the 1.8M rule; the deterministic variant when the
    /// request asks for it).
    pub fn new(req: &Request<'_, T>) -> Result<Self> {
        let (p, why) = params::fixed_rule(req.csr()?.nnz(), req.deterministic);
        let mut h = Self::with_params(req, p, &why)?;
        if req.tuning != Tuning::None {
            h.text.push_str(&format!(
                "; tuning={}: the host backend keeps the fixed rule (timing needs a GPU)",
                req.tuning
            ));
        }
        Ok(h)
    }

    /// Explicit parameters (tests force deferral on or off this way); `why` goes into
    /// describe().
    pub fn with_params(req: &Request<'_, T>, p: TileParams, why: &str) -> Result<Self> {
        let format = format::build(req.csr()?, &p)?;
        let text = format!("{p} ({why}); {}", format.summary());
        Ok(TileHost { format, text })
    }

    /// The format.
    pub fn format(&self) -> &Tiled<T> {
        &self.format
    }
}

impl<T: Scalar> HostMethod<T> for TileHost<T> {
    fn spmv(&self, _a: &Csr<T>, alpha: T, x: &[T], beta: T, y: &mut [T]) {
        reference::spmv(&self.format, alpha, x, beta, y)
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

    // The GPU's property: split tile rows add with float atomics, and the deferred part runs
    // HOLA (atomics); neither happens in the deterministic variant.
    fn deterministic(&self) -> bool {
        self.format.split_rows.is_empty() && self.format.deferred.is_none()
    }
}
