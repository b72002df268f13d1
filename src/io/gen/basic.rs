//! The generators without sampled structure: `dense` (random values), `empty` and `diag`.
#![forbid(unsafe_code)]

use super::random::{RandomStream, VALUES};
use super::{mul, Args, Build, Kind, Plan};
use crate::error::Result;

/// `dense:R,C`: R*C non-zeros.
pub(super) fn plan_dense(a: &Args<'_>) -> Result<Plan> {
    let (r, c) = (a.size(0)?, a.size(1)?);
    let nnz = a.fit("non-zeros", mul(&[r, c]))?;
    Plan::exact(r, c, nnz, Kind::Dense)
}

/// Every entry present, with random values (fixed seed).
pub(super) fn dense(b: &mut Build) {
    let (rows, cols) = (b.rows, b.cols);
    let mut s = RandomStream::new("dense", 1, VALUES);
    for _ in 0..rows {
        for c in 0..cols {
            b.push(c, s.value());
        }
        b.end_row();
    }
}

/// `empty:ROWS,COLS`: no non-zeros.
pub(super) fn plan_empty(a: &Args<'_>) -> Result<Plan> {
    Plan::exact(a.size(0)?, a.size(1)?, 0, Kind::Empty)
}

/// Every row empty.
pub(super) fn empty(b: &mut Build) {
    let rows = b.rows;
    b.row_ptr.resize(rows + 1, 0);
}

/// `diag:N`: N non-zeros.
pub(super) fn plan_diag(a: &Args<'_>) -> Result<Plan> {
    let n = a.size(0)?;
    Plan::exact(n, n, n, Kind::Diag)
}

/// The diagonal a_ii = 1 + (i mod 10).
pub(super) fn diag(b: &mut Build) {
    for i in 0..b.rows {
        b.push(i, (1 + i % 10) as f64);
        b.end_row();
    }
}

/// `band:N,LOWER,UPPER`: row i holds columns i - LOWER ..= i + UPPER inside the matrix.
pub(super) fn plan_band(a: &Args<'_>) -> Result<Plan> {
    let (n, lower, upper) = (a.size(0)?, a.size(1)?, a.size(2)?);
    let nnz: u128 = (0..n)
        .map(|i| band_row(n, lower, upper, i).len() as u128)
        .sum();
    let nnz = a.fit("non-zeros", Some(nnz))?;
    Plan::exact(n, n, nnz, Kind::Band { lower, upper })
}

/// Row `i`'s columns in an `n x n` band.
fn band_row(n: usize, lower: usize, upper: usize, i: usize) -> std::ops::Range<usize> {
    i.saturating_sub(lower)..i.saturating_add(upper).saturating_add(1).min(n)
}

/// The band's entries, random values (fixed seed).
pub(super) fn band(lower: usize, upper: usize, b: &mut Build) {
    let n = b.rows;
    let mut s = RandomStream::new("band", 1, VALUES);
    for i in 0..n {
        for c in band_row(n, lower, upper, i) {
            b.push(c, s.value());
        }
        b.end_row();
    }
}
