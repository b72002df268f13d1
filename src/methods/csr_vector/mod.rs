//! CSR_VECTOR: the parametrised CSR kernel of Reguly & Giles (InPar 2012), Figure 3: `coop`
//! threads share a row, each thread group handles `repeat` rows, `block_size` threads per block.
//! The format is the CSR itself (no conversion); `value_slot` is the identity. On the GPU, long
//! rows over many columns run in a sliced mode (`sliced.rs`): x staged in shared memory one
//! vertical slice at a time, over the same arrays and a table of where each row crosses each
//! slice; and rows of 129-1,024 entries on average in a pieces mode (`pieces.rs`): each row
//! cut into pieces of at most 1,024 (f64) or 2,048 (f32) entries, a warp per piece; and rows
//! of more than 1,024 in a wide mode (`wide.rs`): a block per row, 128-bit loads.

// A method's cuda.rs is one of the places `unsafe` may live (kernel launches): ARCHITECTURE.md.
#[allow(unsafe_code)]
pub mod cuda;
pub mod format;
pub mod host;
/// The kernel file and the values each of its defines may take.
pub mod kernel;
pub mod params;
pub mod pieces;
pub mod reference;
pub mod sliced;
pub mod wide;

use crate::backend::cuda::kernels::KernelFile;

pub use params::Params;
