//! AUTO: which method runs a matrix. AUTO chooses CSR_VECTOR in this version; BCCOO runs when
//! asked for by name; the other methods are accepted by the API and answer NOT_SUPPORTED until
//! their issue lands.
#![forbid(unsafe_code)]

use crate::csr::RowStats;
use crate::error::{Error, Result};
use crate::types::Algorithm;

/// True for methods this build can run.
pub fn implemented(alg: Algorithm) -> bool {
    matches!(alg, Algorithm::CsrVector | Algorithm::Bccoo)
}

/// Resolves the requested algorithm for a matrix with these statistics. `deterministic`
/// restricts AUTO to methods whose result is bitwise reproducible run to run.
pub fn choose(_stats: &RowStats, requested: Algorithm, _deterministic: bool) -> Result<Algorithm> {
    match requested {
        // CSR_VECTOR is deterministic (no atomics in the non-transposed product), so it serves
        // both AUTO and deterministic AUTO.
        Algorithm::Auto => Ok(Algorithm::CsrVector),
        a if implemented(a) => Ok(a),
        a => Err(Error::NotSupported(format!(
            "{} is not implemented in tessera {} yet; use TESSERA_ALGORITHM_AUTO or TESSERA_ALGORITHM_CSR_VECTOR",
            a.c_name(),
            env!("CARGO_PKG_VERSION")
        ))),
    }
}
