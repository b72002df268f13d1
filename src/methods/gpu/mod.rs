//! The GPU machinery the methods share, written once: the workspace slot ring that keeps
//! concurrent products of one matrix apart ([`SlotRing`]), and analyze-time tuning
//! ([`tune`]: scratch vectors, the calibrated timer, the one [`MIN_GAIN`], [`pick_fastest`]).
//! The event timer itself is the backend's ([`crate::backend::cuda::Timer`]).

pub mod slots;
pub mod tune;

pub use slots::SlotRing;
pub use tune::{log_tuning, pick_fastest, Picked, Scratch, Tuner, MIN_GAIN};
