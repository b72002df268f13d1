//! Measuring tessera against its peers: the cuSPARSE baseline, the device's copy bandwidth, and
//! what tessera adds to a product beyond its kernel (`overhead`).
//! No `tessera_*` call and no product path uses this module; it serves `tessera bench`, the GPU
//! tests and anyone comparing tessera with what they would otherwise call.
//!
//! Timing everywhere goes through [`crate::backend::cuda::Timer`], the one event timer that the
//! tuners use too.

pub mod bandwidth;
pub mod cusparse;
pub mod overhead;

pub use bandwidth::copy_bandwidth_gbs;
