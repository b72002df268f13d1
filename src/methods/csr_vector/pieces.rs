//! CSR_VECTOR's pieces mode: every row cut into pieces of at most [`piece`] entries, a warp per
//! piece (kernels/csr_vector.cu, `csr_vector_pieces`), for rows of a few hundred entries.
//!
//! Why. Rows of 129-1,024 entries are too long for CSR_VECTOR's row groups (at most a warp per
//! row, reading its row trip after trip with two entries per lane in flight) and too short for
//! HOLA's non-zero split to pay for its row bookkeeping: HOLA ran random rows of 400-500
//! entries at 1.6 TB/s on an H200. A warp per piece of 1,024 (f64) or 2,048 (f32) entries,
//! each lane keeping 32 bytes of values in flight, ran them 1.1-1.7x faster than HOLA ([`suits`]
//! has the numbers). A row longer than a piece is cut into pieces of about equal length.
//!
//! The cost: the pieces of a row longer than one piece each write a partial sum, and the row's
//! last warp adds them (one atomic per piece on a per-row counter); the layout (the pieces per
//! row, scanned, and each piece's row and first entry) is built on the device at analyze, with
//! no read-back.
#![forbid(unsafe_code)]

use crate::csr::RowStats;

/// Mean entries per row above which the mode is used (see [`suits`]): where AUTO's rule gave
/// HOLA's non-zero split before (`select::needs_split`'s wide rows).
pub(crate) const MIN_MEAN: f64 = 128.0;
/// Mean entries per row up to which the mode is used: above it HOLA's blocks of 512 for long
/// rows (`hola::params`, `LONG_ROWS_MEAN`) were as fast or faster (session 29, run A).
pub(crate) const MAX_MEAN: f64 = 1024.0;

/// Most entries of one piece for `val_bytes`-byte values: 1,024 in f64, 2,048 in f32 (a lane's
/// share is then 32 or 64 entries, eight trips of its 32 bytes of values). Measured in session
/// 29's run A (H200, µs per product, pieces of 512 / 1,024 / 2,048): random rows of 500 11.7 /
/// 10.4 / 10.1 (f64), 8.5 / 7.3 / 7.3 (f32); rows of 150-400 within 4% of each other; LP rows of
/// 1,000 over 1.6M columns 24.1 / 25.5 / 24.9 (f64). `TESSERA_PIECE=n` sets it.
pub fn piece(val_bytes: usize) -> usize {
    static OVER: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let over = *OVER.get_or_init(|| {
        std::env::var("TESSERA_PIECE")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| (32..=1 << 24).contains(&n))
    });
    over.unwrap_or(if val_bytes >= 8 { 1024 } else { 2048 })
}

/// True when a matrix with these statistics runs CSR_VECTOR in the pieces mode: a mean above
/// [`MIN_MEAN`] and at most [`MAX_MEAN`] entries per row. AUTO's rule (`select::over_csr`)
/// then gives it to CSR_VECTOR instead of HOLA. Measured in session 29's run A (H200, µs per
/// product, HOLA -> pieces, f64 / f32): random rows of 150 12.3 -> 11.3 / 10.4 -> 9.0, of 250
/// 18.4 -> 16.8 / 14.7 -> 13.2, of 400 57.0 -> 39.8 / 38.9 -> 28.8, of 500 15.0 -> 10.4 / 12.4
/// -> 7.3; rows of 1,000 over 1.6M columns 24.0 -> 25.5 / 22.3 -> 15.8. Above the range HOLA
/// was as fast or faster: dense 2000² 18.7 -> 21.8 / 14.0 -> 13.2, dense 300 x 2500 6.9 ->
/// 11.0 / 8.9 -> 8.2 (too few pieces to fill the GPU), dense 1000 x 8000 29.9 -> 31.2 / 21.9
/// -> 22.7. `TESSERA_PIECES=0` switches the mode off; `TESSERA_PIECES=m` (a number) uses it
/// from a mean of `m` up (no upper end: measurements). Read once per process.
pub fn suits(stats: &RowStats) -> bool {
    static RANGE: std::sync::OnceLock<Option<(f64, f64)>> = std::sync::OnceLock::new();
    let range = *RANGE.get_or_init(|| {
        if crate::backend::switched_off("TESSERA_PIECES") {
            return None;
        }
        let set = std::env::var("TESSERA_PIECES").ok();
        Some(
            set.and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|m| m.is_finite() && *m > 0.0)
                .map_or((MIN_MEAN, MAX_MEAN), |m| (m, f64::INFINITY)),
        )
    });
    range.is_some_and(|(lo, hi)| stats.nnz > 0 && stats.mean > lo && stats.mean <= hi)
}

/// An upper bound on the pieces of a matrix of `rows` rows and `nnz` entries (each row has at
/// most `len / piece + 1` of them): the size of the piece table and of each workspace slot,
/// which the device fills without telling the host the exact count.
pub fn bound(rows: usize, nnz: usize, piece: usize) -> usize {
    rows + nnz.div_ceil(piece.max(1))
}

/// The piece size and the bound on the pieces ([`bound`]) of a matrix of `rows` rows and `nnz`
/// entries of `val_bytes`-byte values, or None when the table would pass int32 indices (rows
/// near 2^31): CSR_VECTOR then keeps its row groups.
pub fn layout(rows: usize, nnz: usize, val_bytes: usize) -> Option<(usize, usize)> {
    let piece = piece(val_bytes);
    let bound = bound(rows, nnz, piece);
    (bound <= i32::MAX as usize).then_some((piece, bound))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces of a row of `len` entries, as `csr_vector_piece_count` counts them: at least one
    /// (an empty row is one empty piece, which writes its y).
    fn pieces_of(len: usize, piece: usize) -> usize {
        len.div_ceil(piece.max(1)).max(1)
    }

    /// The entries `[lo, hi)` of piece `j` of a row starting at `start` with `len` entries cut
    /// into `n` pieces, as `csr_vector_piece_table` computes them.
    fn piece_range(start: usize, len: usize, j: usize, n: usize) -> (usize, usize) {
        (start + len * j / n, start + len * (j + 1) / n)
    }

    #[test]
    fn the_pieces_of_a_row_cover_it_once_and_are_at_most_a_piece_long() {
        for piece in [32usize, 1000, 1024, 2048] {
            for len in [
                0usize, 1, 31, 32, 1023, 1024, 1025, 2047, 2048, 2049, 10_000, 123_457,
            ] {
                let n = pieces_of(len, piece);
                let mut at = 7;
                for j in 0..n {
                    let (lo, hi) = piece_range(7, len, j, n);
                    assert_eq!(lo, at, "len {len} piece {piece} j {j}");
                    assert!(hi - lo <= piece, "len {len} piece {piece}: {}", hi - lo);
                    at = hi;
                }
                assert_eq!(at, 7 + len, "len {len} piece {piece}");
            }
        }
    }

    #[test]
    fn the_bound_holds_for_any_row_lengths() {
        let mut seed = 99u64;
        for piece in [32usize, 1024, 2048] {
            for _ in 0..200 {
                let rows = (seed % 50) as usize + 1;
                let mut nnz = 0;
                let mut total = 0;
                for _ in 0..rows {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let len = ((seed >> 33) % (3 * piece as u64 + 3)) as usize;
                    nnz += len;
                    total += pieces_of(len, piece);
                }
                assert!(total <= bound(rows, nnz, piece), "{total} > bound");
            }
        }
    }

    #[test]
    fn the_rule_takes_long_rows_only() {
        let mut s = RowStats {
            rows: 2000,
            cols: 2000,
            nnz: 4_000_000,
            mean: 2000.0,
            std_dev: 0.0,
            min: 2000,
            max: 2000,
            empty_rows: 0,
            col_spread: 2000.0,
        };
        assert!(!suits(&s));
        s.mean = 400.0;
        assert!(suits(&s));
        s.mean = 100.0;
        s.nnz = 200_000;
        assert!(!suits(&s));
        s.nnz = 0;
        s.mean = 0.0;
        assert!(!suits(&s));
    }
}
