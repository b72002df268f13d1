//! tessera: GPU sparse matrix-vector multiply with a cuSPARSE-shaped C ABI.
//!
//! The safe Rust API is [`Handle`] and [`Matrix`]; the C API in `src/api/` is a thin layer over
//! it. `ARCHITECTURE.md` at the repository root describes the design: the floors, what each
//! folder may import, how a product and an analysis flow, and how a new method plugs in.

#![warn(missing_docs)]

pub mod api;
pub mod backend;
pub mod bench;
pub mod csr;
pub mod error;
pub mod io;
pub mod methods;
pub mod scalar;
pub mod select;
pub mod types;

mod handle;
mod matrix;

pub use csr::{Csr, CsrParts, Indices, RowStats};
pub use error::{Error, Result};
pub use handle::Handle;
#[doc(hidden)]
pub use matrix::running_builds;
pub use matrix::{
    deferred_checks, AnyMatrix, BackgroundStatus, BorrowedWrites, CreatePath, Matrix, MatrixInfo,
};
pub use scalar::Scalar;
pub use types::{
    Algorithm, BackendKind, IndexBase, IndexType, Operation, Status, Tuning, ValueType,
};
