//! CSR_VECTOR's wide mode: rows of more than a thousand entries, even in length, a block of 128
//! threads per row reading 16 bytes of columns and of values at a time (kernels/csr_vector.cu,
//! `csr_vector_wide`).
//!
//! Why. Such rows went to HOLA (its non-zero split), or to the pieces mode up to a mean of
//! 1,024, and both issue a 32-bit load per entry: on the dense 2000² matrix HOLA and a warp per
//! row ran at 2.2-2.6 TB/s, no faster than cuSPARSE, while TILE, reading half the bytes, ran
//! about twice as fast. Until TILE's format is built (AUTO's background build), and wherever
//! rows are long but too sparse for TILE, the method over the CSR arrays is what runs. A
//! prototype (session 38, run F, H200, µs per product, f32 / f64) against a warp per row with
//! 32-bit loads (HOLA's and cuSPARSE's times in run B on the same machine kind):
//! - dense 2000 x 2000: 11.9 / 16.6 against 12.3 / 26.2 (HOLA 14.3 / 18.7, cuSPARSE 14.4 / 20.6);
//! - dense 4000 x 1000: 11.1 / 15.0 against 11.9 / 20.9 (HOLA 21.5 / 26.1, cuSPARSE 14.4 / 20.9);
//! - dense 1000 x 4000: 11.1 / 14.4 against 14.6 / 41.5.
//!
//! A block per row needs enough rows to fill the device ([`MIN_ROWS_PER_SM`]), and rows of
//! about one length (a row of [`MAX_OVER_MEAN`] times the mean holds its block that much
//! longer), and x of at most [`MAX_COLS`] columns. The arrays' bases must be 16-byte aligned (tessera's own allocations are; a
//! caller's arrays read in place may not be): otherwise the pieces mode runs instead.
#![forbid(unsafe_code)]

use crate::csr::RowStats;

/// Mean entries per row above which the mode is used (the pieces mode's upper end: 1,024).
pub(crate) const MIN_MEAN: f64 = super::pieces::MAX_MEAN;
/// Mean entries per row up to which the mode is used: 128 entries a thread (rows longer on
/// average than measured, 4,000, by a factor of 4: beyond it a block holds its SM long).
pub(crate) const MAX_MEAN: f64 = 16_384.0;
/// Blocks (rows) per SM from which the mode is used: the measured shapes had 7.6-30 (1,000 to
/// 4,000 rows on 132 SMs); below 4 a block per row leaves SMs idle.
pub(crate) const MIN_ROWS_PER_SM: usize = 4;
/// The longest row may be at most this many times the mean.
pub(crate) const MAX_OVER_MEAN: f64 = 2.0;
/// Columns up to which the mode is used (x up to 4 MiB in f64). Rows of 2,000 gathering x
/// from 4M columns ran slower in it than in HOLA in f64 (48.2 against 42.2 µs; f32 34.9 against
/// 35.1; session 38, run G): the measured gains are on x of a few thousand columns.
pub(crate) const MAX_COLS: usize = 1 << 19;
/// Threads per block of `csr_vector_wide_<T>` (its CSR_WIDE_THREADS).
pub(crate) const THREADS: u32 = 128;

/// True when a matrix with these statistics runs CSR_VECTOR in the wide mode on a device of
/// `sm` SMs (its arrays aligned: see the module's header). `TESSERA_WIDE=0` switches the mode
/// off; `TESSERA_WIDE=m` (a number) uses it from a mean of `m` up (measurements: the pieces
/// mode, below 1,024, comes first unless `TESSERA_PIECES=0`). Read once per process. AUTO's
/// rule (`select::over_csr`) then gives such matrices CSR_VECTOR instead of HOLA.
pub fn suits(stats: &RowStats, sm: u32) -> bool {
    static FROM: std::sync::OnceLock<Option<f64>> = std::sync::OnceLock::new();
    let from = *FROM.get_or_init(|| {
        if crate::backend::switched_off("TESSERA_WIDE") {
            return None;
        }
        Some(
            std::env::var("TESSERA_WIDE")
                .ok()
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|m| m.is_finite() && *m > 0.0)
                .unwrap_or(MIN_MEAN),
        )
    });
    let Some(from) = from else {
        return false;
    };
    stats.nnz > 0
        && stats.mean > from
        && stats.mean <= MAX_MEAN
        && stats.max as f64 <= MAX_OVER_MEAN * stats.mean
        && stats.rows >= MIN_ROWS_PER_SM * sm.max(1) as usize
        && stats.rows <= i32::MAX as usize
        && stats.cols <= MAX_COLS
}

/// True when `col_ind` and `values` (device addresses) both start on 16 bytes, as the wide
/// kernel's 128-bit loads need.
pub fn aligned(col_ind: u64, values: u64) -> bool {
    col_ind % 16 == 0 && values % 16 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(rows: usize, mean: f64, max: usize) -> RowStats {
        RowStats {
            rows,
            cols: 4000,
            nnz: (rows as f64 * mean) as usize,
            mean,
            std_dev: 0.0,
            min: 0,
            max,
            empty_rows: 0,
            col_spread: 4000.0,
        }
    }

    #[test]
    fn long_even_rows_on_enough_of_them_take_the_wide_mode() {
        // Dense 2000², 4000 x 1000, 1000 x 4000 (the measured shapes) on 132 SMs.
        assert!(suits(&stats(2000, 2000.0, 2000), 132));
        assert!(suits(&stats(4000, 1025.0, 1025), 132));
        assert!(suits(&stats(1000, 4000.0, 4000), 132));
        // Rows of 1,024 on average are the pieces mode's; fewer rows than 4 per SM, a row
        // more than twice the mean, or rows past 16,384 on average are not the wide mode's.
        assert!(!suits(&stats(2000, 1024.0, 1024), 132));
        assert!(!suits(&stats(500, 4000.0, 4000), 132));
        assert!(!suits(&stats(2000, 2000.0, 4001), 132));
        assert!(!suits(&stats(2000, 20_000.0, 20_000), 132));
        let mut lp = stats(2000, 2000.0, 2000);
        lp.cols = 4_000_000;
        assert!(!suits(&lp, 132), "x gathered from 4M columns");
        assert!(!suits(&stats(0, 0.0, 0), 132));
    }

    #[test]
    fn the_wide_kernel_needs_both_arrays_on_16_bytes() {
        assert!(aligned(0x7f00_0000_0000, 0x7f00_0010_0000));
        assert!(!aligned(0x7f00_0000_0004, 0x7f00_0010_0000));
        assert!(!aligned(0x7f00_0000_0000, 0x7f00_0010_0008));
    }
}
