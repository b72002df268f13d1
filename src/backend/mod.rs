//! The floor every method stands on: the CUDA backend (`cuda/`: loading, the device and its
//! modules, streams, events and timing, memory, launches, the kernel files, the CSR on the
//! device). It imports nothing from the methods. The host backend needs no machinery of its own:
//! it runs each method's `reference.rs` over that method's arrays (`crate::matrix`).

pub mod cuda;
