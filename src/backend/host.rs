//! The host backend: runs each method's `reference.rs` over that method's own arrays (through
//! `methods::HostMethod`). It is the oracle the GPU is tested against and the path CI exercises.
#![forbid(unsafe_code)]

use crate::methods::csr_vector;

/// The host backend has no SMs; the fixed rules that scale with the SM count use the paper's
/// device (Reguly & Giles: 14 SMs), so host parameters read like the paper's.
pub const HOST_SM_COUNT: u32 = csr_vector::params::PAPER_SM_COUNT;
