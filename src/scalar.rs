//! The two value types tessera computes in.
#![forbid(unsafe_code)]

use crate::types::ValueType;
use std::fmt::{Debug, Display};
use std::ops::{Add, AddAssign, Mul};

/// A matrix value type: `f32` or `f64`. Sealed: no other type can implement it.
pub trait Scalar:
    Copy
    + Default
    + PartialEq
    + PartialOrd
    + Debug
    + Display
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Mul<Output = Self>
    + AddAssign
    + sealed::Sealed
    + Plain
{
    /// The C value type that carries this Rust type.
    const VALUE_TYPE: ValueType;
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;
    /// Machine epsilon as f64.
    const EPSILON: f64;
    /// Widen to f64.
    fn to_f64(self) -> f64;
    /// Round from f64.
    fn from_f64(v: f64) -> Self;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

impl Scalar for f32 {
    const VALUE_TYPE: ValueType = ValueType::F32;
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const EPSILON: f64 = f32::EPSILON as f64;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl Scalar for f64 {
    const VALUE_TYPE: ValueType = ValueType::F64;
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const EPSILON: f64 = f64::EPSILON;
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
}

/// Plain numbers (no padding, every bit pattern valid): what the CUDA backend's staged uploads
/// read as bytes.
pub trait Plain: Copy + Send + Sync + 'static {}
impl Plain for u8 {}
impl Plain for u16 {}
impl Plain for i16 {}
impl Plain for i32 {}
impl Plain for u32 {}
impl Plain for i64 {}
impl Plain for u64 {}
impl Plain for f32 {}
impl Plain for f64 {}
impl<P: Plain, const N: usize> Plain for [P; N] {}
