//! Where products run: the host reference backend (always available) and the CUDA backend
//! (loaded at run time; see `cuda/`).

pub mod cuda;
pub mod host;
