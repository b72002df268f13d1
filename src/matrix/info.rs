//! [`Matrix::info`]: the method a matrix runs, its parameters, its footprint and what AUTO's
//! background build and trial did.
#![forbid(unsafe_code)]

use super::{BackgroundStatus, Matrix};
use crate::scalar::Scalar;
use crate::types::{Algorithm, BackendKind};

/// What [`Matrix::info`] reports (the Rust form of `tessera_matrix_info`).
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixInfo {
    /// The method products run now (`Auto` before analyze): what analyze chose, or the method
    /// AUTO's background build swapped in since.
    pub algorithm: Algorithm,
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Stored entries.
    pub nnz: usize,
    /// Bytes kept for the matrix on the device (host backend: host memory).
    pub device_bytes: u64,
    /// Wall time of the last analyze in milliseconds.
    pub analysis_ms: f64,
    /// Whether spmv is bitwise reproducible run to run.
    pub deterministic: bool,
    /// The chosen parameters as text.
    pub params: String,
    /// AUTO's background build: which method is being built to replace `algorithm`, or was.
    pub background: BackgroundStatus,
}

impl<T: Scalar> Matrix<T> {
    /// Method, parameters, footprint and analysis time.
    pub fn info(&self) -> MatrixInfo {
        let a = self.analysis.as_ref();
        let (algorithm, device_bytes, deterministic, params, background) =
            match (&self.gpu, &self.host) {
                (Some(g), _) => {
                    let r = g.forms.running();
                    (
                        r.algorithm,
                        (g.csr.device_bytes() + g.forms.total(|m| m.device_bytes())) as u64,
                        r.method.deterministic(),
                        format!(
                            "{}{}{}",
                            g.trial.note(),
                            a.map_or("", |a| a.auto_note.as_str()),
                            r.method.describe()
                        ),
                        g.forms.status(),
                    )
                }
                (None, Some(h)) => {
                    let r = h.running();
                    (
                        r.algorithm,
                        (self.csr.as_ref().map_or(0, |c| c.bytes()) + h.total(|m| m.extra_bytes()))
                            as u64,
                        r.method.deterministic(),
                        format!(
                            "{}{}",
                            a.map_or("", |a| a.auto_note.as_str()),
                            r.method.describe()
                        ),
                        h.status(),
                    )
                }
                (None, None) => (
                    Algorithm::Auto,
                    match self.backend {
                        BackendKind::Cuda => {
                            self.dcsr.as_ref().map_or(0, |g| g.device_bytes() as u64)
                        }
                        _ => self.csr.as_ref().map_or(0, |c| c.bytes() as u64),
                    },
                    true,
                    "not analyzed".to_string(),
                    BackgroundStatus::None,
                ),
            };
        let params = match &background {
            BackgroundStatus::None => params,
            BackgroundStatus::Scheduled { target, after } => format!(
                "{algorithm} runs; {target} will be built in the background after {after} products; {params}"
            ),
            BackgroundStatus::Building(t) => {
                format!("{algorithm} runs while {t} is built in the background; {params}")
            }
            BackgroundStatus::Ready(t) => {
                format!("{algorithm} runs; {t} is built and swaps in at the next product; {params}")
            }
            BackgroundStatus::Swapped { products, ms, .. } => format!(
                "built in the background ({ms:.1} ms after analyze), swapped in after {products} products; {params}"
            ),
            BackgroundStatus::Failed(t, why) => {
                format!("{algorithm} runs: building {t} in the background failed ({why}); {params}")
            }
        };
        MatrixInfo {
            algorithm,
            rows: self.stats.rows,
            cols: self.stats.cols,
            nnz: self.stats.nnz,
            device_bytes,
            analysis_ms: a.map_or(0.0, |a| a.analysis_ms),
            deterministic,
            params,
            background,
        }
    }
}
