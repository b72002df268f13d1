//! Measuring tessera against its peers: the cuSPARSE baseline and the device's copy bandwidth.
//! No `tessera_*` call and no product path uses this module; it serves `tessera bench`, the GPU
//! tests and anyone comparing tessera with what they would otherwise call.
//!
//! Timing everywhere goes through [`crate::backend::cuda::Timer`], the one event timer that the
//! tuners use too.

pub mod bandwidth;
pub mod cusparse;

pub use bandwidth::copy_bandwidth_gbs;
