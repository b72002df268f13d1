//! Unit tests of format.rs: the per-tile selection and its sizes.

use super::*;

fn shape(rows: &[usize], vr: usize, vc: usize) -> TileShape {
    let mut s = TileShape {
        row_count: [0; TILE],
        col_count: [0; TILE],
        nnz: rows.iter().sum(),
        valid_rows: vr,
        valid_cols: vc,
        duplicates: false,
    };
    s.row_count[..rows.len()].copy_from_slice(rows);
    s
}

#[test]
fn hyb_width_takes_the_fewest_bytes() {
    let mut rc = [1usize; TILE];
    rc[0] = 9;
    // f64: w = 1 costs 16*8 + 8 + 8*9 = 208; w = 9 costs 16*9*8.5 = 1224; w = 0: 24*9 = 216.
    assert_eq!(hyb_width(&rc, 8), 1);
    assert_eq!(hyb_width(&[0; TILE], 8), 0);
}

/// An 8-row edge tile with 15 or 16 entries a row (a random matrix of 3000 rows at 97%):
/// Dns from half its 128 valid cells, where a whole tile needs 128; a 4-row edge tile
/// (64 cells) keeps the 128, so it is never Dns.
#[test]
fn edge_tiles_are_dns_from_half_their_valid_cells() {
    assert_eq!(dns_min_nnz(16, 16), DNS_MIN_NNZ);
    assert_eq!(dns_min_nnz(8, 16), 64);
    assert_eq!(dns_min_nnz(16, 9), 72);
    assert_eq!(dns_min_nnz(4, 16), DNS_MIN_NNZ);
    assert_eq!(dns_min_nnz(1, 1), DNS_MIN_NNZ);
    let p = TileParams::paper(false);
    let with_cols = |rows: &[usize], vr: usize, vc: usize| {
        let mut s = shape(rows, vr, vc);
        for (r, &n) in rows.iter().enumerate() {
            for c in 0..n {
                s.col_count[(c + r) % vc] += 1;
            }
        }
        s
    };
    let edge = with_cols(&[16, 15, 16, 15, 16, 15, 16, 15], 8, 16);
    assert_eq!(select(&edge, &p), TileFormat::Dns);
    let half = with_cols(&[8; 8], 8, 16);
    assert_eq!(select(&half, &p), TileFormat::Dns);
    let below = with_cols(&[8, 8, 8, 8, 8, 8, 8, 7], 8, 16);
    assert_eq!(select(&below, &p), TileFormat::Ell);
    let whole = with_cols(&[7; 16], 16, 16);
    assert_eq!(select(&whole, &p), TileFormat::Ell);
    let small = with_cols(&[15, 16, 15, 16], 4, 16);
    assert_eq!(select(&small, &p), TileFormat::Ell);
}

#[test]
fn variation_is_std_dev_over_mean_of_the_valid_rows() {
    let s = shape(&[2, 2, 2, 2], 4, 16);
    assert_eq!(s.variation(), 0.0);
    let s = shape(&[1, 3], 2, 16);
    assert!((s.variation() - 0.5).abs() < 1e-12);
}
