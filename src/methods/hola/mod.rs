//! HOLA: Hola-SpMV (Steinberger, Zayer, Seidel, ICS'17). It works on the CSR itself: the only
//! extra array is the block row-start buffer of §3.1 (one `i32` per block of NPB non-zeros),
//! built on the device at analyze. A strict non-zero split gives every block NPB non-zeros and
//! every thread NPT of them; row ends are bit masks in shared memory (§3.2); long rows and
//! empty rows take the special paths of §3.3; TRANSPOSE is Hola-SpMVT (§3.4). Rows shared
//! between blocks are combined with float atomics: the product is not bitwise reproducible.

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
