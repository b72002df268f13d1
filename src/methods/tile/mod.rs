//! TILE: TileSpMV (Niu, Lu, Ji, Song, Jin, Liu; IPDPS'21). The matrix is cut into 16x16 tiles
//! (§III.A), each stored in one of seven formats — CSR, COO, ELL, HYB, Dns, DnsRow, DnsCol —
//! chosen per tile from its sparsity (§III.D, Figure 5); the two-level structure is `tilePtr`,
//! `tileColIdx`, `tileNnz` plus per-tile payloads (§III.B). One warp runs at most `tbalance`
//! tiles of one tile row; longer tile rows are split across warps, which combine with float
//! atomics (§III.D). TileSpMV_DeferredCOO moves the COO tiles and HYB's COO parts into a
//! separate CSR matrix computed by tessera's HOLA in the same product (the paper used CSR5).

// A method's cuda.rs is one of the places `unsafe` may live (kernel launches): ARCHITECTURE.md.
#[allow(unsafe_code)]
pub mod cuda;
// The device build's launches: CUDA code, as cuda.rs.
#[allow(unsafe_code)]
pub mod device;
pub mod format;
pub mod host;
/// The kernel file and the values each of its defines may take.
pub mod kernel;
pub mod params;
pub mod reference;

use crate::backend::cuda::kernels::KernelFile;

pub use params::TileParams;
