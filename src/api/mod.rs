//! The C API: the only `extern "C"` code. Every function body runs inside [`guard::guard`];
//! pointers from C become references only through the helpers in [`ptr`].
#![deny(unsafe_op_in_unsafe_fn)]

mod functions;
mod guard;
mod ptr;
pub mod types;

pub use functions::*;
