//! BRC: the blocked row-column format of Ashari, Sedaghati, Eisenlohr & Sadayappan (ICS'14).
//! Rows sorted by length are grouped in blocks of B1 = 32 rows (one warp), each block B1 x T
//! with T <= B2 entries per row, column-major; rows longer than B2 continue in later blocks
//! (§3.1-3.2, Algorithm 1). One thread per block row; a row owned by one block row is written
//! directly, a split row through atomics (or, deterministic variant, a partial-sum buffer and
//! a per-row reduction). B2 by Eq. 3, thread coarsening when sigma > mu (§3.3), the ELL+BRC
//! hybrid of §5/§8, and the bounded 24-point search for QUICK/EXHAUSTIVE tuning.

// A method's cuda.rs is one of the places `unsafe` may live (kernel launches): ARCHITECTURE.md.
#[allow(unsafe_code)]
pub mod cuda;
pub mod format;
pub mod host;
/// The kernel file and the values each of its defines may take.
pub mod kernel;
pub mod params;
pub mod reference;

use crate::backend::cuda::kernels::KernelFile;

pub use params::Params;
