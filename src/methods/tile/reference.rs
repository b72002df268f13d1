//! TileSpMV on the host, over the format's own arrays, read the way `kernels/tile.cu` reads
//! them: per work item a warp of 32 simulated lanes, lane l accumulating for row l % 16 of the
//! tile row (half h = l / 16 taking every other column, entry or dense row), each format's
//! routine of §III.C with the kernel's index arithmetic, then the two halves added and the
//! tile row written (or, for a split tile row, added to a y pre-scaled by beta). The deferred
//! matrix is then added by HOLA's host reference with beta = 1.
#![forbid(unsafe_code)]
// Index loops here mirror the kernel's index arithmetic on purpose.
#![allow(clippy::needless_range_loop)]

use super::format::{nibble, TileFormat, Tiled, SPLIT_ROW, TILE};
use crate::methods::HostMethod;
use crate::scalar::Scalar;

const WARP: usize = 32;

/// The tile part alone: y = alpha*A_tiles*x + beta*y (beta == 0 never reads y).
pub fn spmv_tiles<T: Scalar>(f: &Tiled<T>, alpha: T, x: &[T], beta: T, y: &mut [T]) {
    // Split tile rows: y = beta*y first (tile_prescale).
    for &tr in &f.split_rows {
        let r0 = tr as usize * TILE;
        for yv in y.iter_mut().take((r0 + TILE).min(f.rows)).skip(r0) {
            *yv = if beta != T::ZERO { beta * *yv } else { T::ZERO };
        }
    }
    for i in 0..f.item_row.len() {
        run_item(f, i, alpha, x, beta, y);
    }
}

/// The whole product: the tiles with beta, then the deferred matrix (HOLA) with beta = 1.
pub fn spmv<T: Scalar>(f: &Tiled<T>, alpha: T, x: &[T], beta: T, y: &mut [T]) {
    spmv_tiles(f, alpha, x, beta, y);
    if let Some(d) = &f.deferred {
        d.hola.spmv(&d.csr, alpha, x, T::ONE, y);
    }
}

/// Lane `src`'s x value of a 16-entry segment held by lanes l % 16 (the kernel's shuffle).
fn shfl<T: Scalar>(xv: &[T; TILE], c: usize) -> T {
    xv[c & 15]
}

fn run_item<T: Scalar>(f: &Tiled<T>, item: usize, alpha: T, x: &[T], beta: T, y: &mut [T]) {
    let code = f.item_row[item];
    let split = code & SPLIT_ROW != 0;
    let tr = (code & !SPLIT_ROW) as usize;
    let mut s = [T::ZERO; WARP];
    for t in f.item_start[item] as usize..f.item_start[item + 1] as usize {
        let col0 = f.tile_col[t] as usize * TILE;
        let mut xv = [T::ZERO; TILE];
        for (c, v) in xv.iter_mut().enumerate() {
            if col0 + c < f.cols {
                *v = x[col0 + c];
            }
        }
        let vb = f.val_ptr[t] as usize;
        let vlen = f.val_ptr[t + 1] as usize - vb;
        let ib = f.idx_ptr[t] as usize;
        let val = &f.values[vb..vb + vlen];
        let idx = &f.idx[ib..f.idx_ptr[t + 1] as usize];
        let w = f.width[t] as usize;
        match TileFormat::from_u8(f.format[t]) {
            TileFormat::Csr => {
                // Alg. 2: lanes 2r and 2r+1 take row r's entries alternately (x from shared
                // memory), then a shuffle by 1 adds the pair.
                let nnz = (f.tile_nnz[t + 1] - f.tile_nnz[t]) as usize;
                let mut part = [T::ZERO; WARP];
                for (lane, p) in part.iter_mut().enumerate() {
                    let (ri, vi) = (lane / 2, lane % 2);
                    let st = idx[ri] as usize;
                    let en = if ri < TILE - 1 {
                        idx[ri + 1] as usize
                    } else {
                        nnz
                    };
                    let mut j = st + vi;
                    while j < en {
                        *p += val[j] * xv[nibble(&idx[TILE..], j)];
                        j += 2;
                    }
                }
                for lane in 0..TILE {
                    s[lane] += part[2 * lane] + part[2 * lane + 1];
                }
            }
            TileFormat::Coo => coo(idx, val, &xv, &mut s),
            TileFormat::Ell | TileFormat::Hyb => {
                // Alg. 4: slot s = lane + 32i is row s % 16 = lane % 16.
                for s0 in (0..TILE * w).step_by(WARP) {
                    for (lane, acc) in s.iter_mut().enumerate() {
                        let sl = s0 + lane;
                        if sl < TILE * w {
                            *acc += val[sl] * shfl(&xv, nibble(idx, sl));
                        }
                    }
                }
                if vlen > TILE * w {
                    coo(&idx[8 * w..], &val[TILE * w..], &xv, &mut s);
                }
            }
            TileFormat::Dns => {
                for (lane, acc) in s.iter_mut().enumerate() {
                    let (r, h) = (lane % TILE, lane / TILE);
                    for c in (h..TILE).step_by(2) {
                        *acc += val[c * TILE + r] * shfl(&xv, c);
                    }
                }
            }
            TileFormat::DnsRow => {
                // Half h takes dense rows h, h+2, ...: lane c multiplies column c with its own
                // x, a butterfly over the 16 lanes sums the row, the row's lane keeps it.
                for i in 0..w {
                    let mut a = [T::ZERO; TILE];
                    for (c, v) in a.iter_mut().enumerate() {
                        *v = val[i * TILE + c] * xv[c];
                    }
                    for off in [8, 4, 2, 1] {
                        let b = a;
                        for c in 0..TILE {
                            a[c] = b[c] + b[c ^ off];
                        }
                    }
                    let rid = idx[i] as usize;
                    s[(i % 2) * TILE + rid] += a[rid];
                }
            }
            TileFormat::DnsCol => {
                for i in 0..w {
                    let c = idx[i] as usize;
                    for r in 0..TILE {
                        s[(i % 2) * TILE + r] += val[i * TILE + r] * shfl(&xv, c);
                    }
                }
            }
        }
    }
    let r0 = tr * TILE;
    for r in 0..TILE.min(f.rows.saturating_sub(r0)) {
        let sum = s[r] + s[r + TILE];
        let yv = &mut y[r0 + r];
        *yv = if split {
            *yv + alpha * sum
        } else if beta != T::ZERO {
            alpha * sum + beta * *yv
        } else {
            alpha * sum
        };
    }
}

/// COO (and HYB's COO part): half h takes entries h, h+2, ...; every lane of the half reads
/// the entry and the lane of its row adds it (the kernel's deterministic form of Alg. 3).
fn coo<T: Scalar>(idx: &[u8], val: &[T], xv: &[T; TILE], s: &mut [T; WARP]) {
    for (j, (&b, &v)) in idx.iter().zip(val).enumerate() {
        let (r, c) = ((b >> 4) as usize, (b & 15) as usize);
        s[(j % 2) * TILE + r] += v * shfl(xv, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csr::Csr;
    use crate::methods::tile::format::{build, build_on, TileFormat};
    use crate::methods::tile::params::{TileParams, TBALANCE_UNLIMITED};
    use crate::types::Operation;

    /// A 48x48 matrix of nine tiles (a 32x32 matrix has only four, too few for seven formats):
    /// (0,0) CSR, (0,1) COO, (0,2) ELL, (1,0) HYB, (1,1) Dns, (1,2) DnsRow, (2,0) DnsCol,
    /// (2,1) and (2,2) empty. Value of (r, c) = 1000 + 48r + c.
    fn seven_formats() -> Csr<f64> {
        let mut t = Vec::new();
        let mut put = |tr: usize, tc: usize, r: usize, c: usize| {
            let (gr, gc) = (tr * 16 + r, tc * 16 + c);
            t.push((gr, gc, 1000.0 + (48 * gr + gc) as f64));
        };
        for r in 0..16 {
            // CSR: row lengths 1, 2, 3, 1, 2, 3, ... (variation 0.42).
            for j in 0..1 + r % 3 {
                put(0, 0, r, (r + 3 * j) % 16);
            }
            // ELL: two per row, every column twice (variation 0).
            put(0, 2, r, r);
            put(0, 2, r, (r + 5) % 16);
            // HYB: row 0 has 14, the others 1 (variation 1.74).
            if r == 0 {
                (0..14).for_each(|c| put(1, 0, 0, c));
            } else {
                put(1, 0, r, r);
            }
            // Dns: 204 of 256.
            for c in 0..16 {
                if (r * 16 + c) % 5 != 0 {
                    put(1, 1, r, c);
                }
            }
            // DnsCol: columns 4 and 9 full.
            put(2, 0, r, 4);
            put(2, 0, r, 9);
        }
        // COO: three entries.
        for (r, c) in [(0, 2), (5, 7), (9, 1)] {
            put(0, 1, r, c);
        }
        // DnsRow: rows 3 and 10 full.
        for c in 0..16 {
            put(1, 2, 3, c);
            put(1, 2, 10, c);
        }
        Csr::from_triplets(48, 48, &t).unwrap()
    }

    /// Every entry stored in tile t, decoded from the arrays: (row, col, value) in the tile.
    fn decode(f: &Tiled<f64>, t: usize) -> Vec<(usize, usize, f64)> {
        let vb = f.val_ptr[t] as usize;
        let val = &f.values[vb..f.val_ptr[t + 1] as usize];
        let idx = &f.idx[f.idx_ptr[t] as usize..f.idx_ptr[t + 1] as usize];
        let w = f.width[t] as usize;
        let mut out = Vec::new();
        let coo = |idx: &[u8], val: &[f64], out: &mut Vec<_>| {
            for (&b, &v) in idx.iter().zip(val) {
                out.push(((b >> 4) as usize, (b & 15) as usize, v));
            }
        };
        match TileFormat::from_u8(f.format[t]) {
            TileFormat::Csr => {
                let nnz = (f.tile_nnz[t + 1] - f.tile_nnz[t]) as usize;
                for r in 0..TILE {
                    let e = if r < 15 { idx[r + 1] as usize } else { nnz };
                    for j in idx[r] as usize..e {
                        out.push((r, nibble(&idx[TILE..], j), val[j]));
                    }
                }
            }
            TileFormat::Coo => coo(idx, val, &mut out),
            TileFormat::Ell | TileFormat::Hyb => {
                for s in 0..TILE * w {
                    if val[s] != 0.0 {
                        out.push((s % TILE, nibble(idx, s), val[s]));
                    }
                }
                coo(&idx[8 * w..], &val[TILE * w..], &mut out);
            }
            TileFormat::Dns => {
                for (s, &v) in val.iter().enumerate() {
                    if v != 0.0 {
                        out.push((s % TILE, s / TILE, v));
                    }
                }
            }
            TileFormat::DnsRow => {
                for i in 0..w {
                    for c in 0..TILE {
                        out.push((idx[i] as usize, c, val[i * TILE + c]));
                    }
                }
            }
            TileFormat::DnsCol => {
                for i in 0..w {
                    for r in 0..TILE {
                        out.push((r, idx[i] as usize, val[i * TILE + r]));
                    }
                }
            }
        }
        out.sort_by_key(|a| (a.0, a.1));
        out
    }

    /// The matrix's entries in tile (tr, tc), local coordinates, sorted.
    fn entries(a: &Csr<f64>, tr: usize, tc: usize) -> Vec<(usize, usize, f64)> {
        let mut out = Vec::new();
        for r in tr * TILE..((tr + 1) * TILE).min(a.rows()) {
            for k in a.row_ptr()[r] as usize..a.row_ptr()[r + 1] as usize {
                let c = a.col_ind()[k] as usize;
                if c / TILE == tc {
                    out.push((r - tr * TILE, c % TILE, a.values()[k]));
                }
            }
        }
        out
    }

    #[test]
    fn the_crafted_matrix_selects_each_of_the_seven_formats_tile_by_tile() {
        let a = seven_formats();
        let f = build(&a, &TileParams::paper(false)).unwrap();
        assert_eq!(f.tile_ptr, vec![0, 3, 6, 7]);
        assert_eq!(f.tile_col, vec![0, 1, 2, 0, 1, 2, 0]);
        let want = [
            TileFormat::Csr,
            TileFormat::Coo,
            TileFormat::Ell,
            TileFormat::Hyb,
            TileFormat::Dns,
            TileFormat::DnsRow,
            TileFormat::DnsCol,
        ];
        for (t, w) in want.iter().enumerate() {
            assert_eq!(TileFormat::from_u8(f.format[t]), *w, "tile {t}");
            let (tr, tc) = (
                if t < 3 {
                    0
                } else if t < 6 {
                    1
                } else {
                    2
                },
                f.tile_col[t],
            );
            assert_eq!(
                decode(&f, t),
                entries(&a, tr, tc as usize),
                "tile {t} ({w:?})"
            );
        }
        // The bytes the paper describes, tile by tile.
        let idx = |t: usize| &f.idx[f.idx_ptr[t] as usize..f.idx_ptr[t + 1] as usize];
        // CSR: 16 u8 row offsets then 31 nibbles in 16 bytes.
        assert_eq!(
            &idx(0)[..16],
            &[0, 1, 3, 6, 7, 9, 12, 13, 15, 18, 19, 21, 24, 25, 27, 30]
        );
        assert_eq!(idx(0).len(), 16 + 16);
        assert_eq!(f.tile_nnz[1] - f.tile_nnz[0], 31);
        // COO: row << 4 | col.
        assert_eq!(idx(1), &[0x02, 0x57, 0x91]);
        // ELL: width 2, slot j*16 + r; row r's entries r and r+5 (sorted).
        assert_eq!(f.width[2], 2);
        assert_eq!(nibble(idx(2), 0), 0);
        assert_eq!(nibble(idx(2), 16), 5);
        assert_eq!(nibble(idx(2), 11), 0); // row 11: columns 0 (= 16 mod 16) and 11
        assert_eq!(nibble(idx(2), 16 + 11), 11);
        // HYB: ELL width 1 by least bytes, the 13 other entries of row 0 in the COO part.
        assert_eq!(f.width[3], 1);
        assert_eq!(idx(3).len(), 8 + 13);
        assert_eq!(&idx(3)[8..10], &[0x01, 0x02]);
        // Dns: values only, 256 column-major.
        assert_eq!(idx(4).len(), 0);
        assert_eq!(f.val_ptr[5] - f.val_ptr[4], 256);
        assert_eq!(
            f.values[f.val_ptr[4] as usize + 16],
            1000.0 + (48 * 16 + 17) as f64
        );
        // DnsRow: rows 3 and 10; DnsCol: columns 4 and 9.
        assert_eq!((f.width[5], idx(5)), (2, &[3u8, 10][..]));
        assert_eq!((f.width[6], idx(6)), (2, &[4u8, 9][..]));
        // Figure 7's census.
        assert_eq!(f.census.tiles, [1; 7]);
        assert_eq!(f.census.nnz, [31, 3, 32, 29, 204, 32, 32]);
        assert!(f
            .census
            .summary()
            .starts_with("7 tiles, tiles/nnz%: csr 14/9 coo 14/1"));
        check(&a, &TileParams::paper(false));
    }

    #[test]
    fn deferral_moves_coo_tiles_and_hyb_coo_parts_to_the_deferred_matrix() {
        let a = seven_formats();
        let f = build(&a, &TileParams::paper(true)).unwrap();
        // The COO tile is gone; HYB keeps its ELL part.
        assert_eq!(f.tile_col, vec![0, 2, 0, 1, 2, 0]);
        assert_eq!(f.format[2], TileFormat::Hyb as u8);
        assert_eq!(f.val_ptr[3] - f.val_ptr[2], 16);
        let d = f.deferred.as_ref().unwrap();
        assert_eq!(d.csr.nnz(), 3 + 13);
        assert_eq!(f.census.deferred_nnz, 16);
        // Row 0: the COO tile's (0, 18) and HYB's row 16 (global) columns 1..13.
        assert_eq!(d.csr.row_ptr()[1], 1);
        assert_eq!(d.csr.col_ind()[0], 18);
        check(&a, &TileParams::paper(true));
    }

    fn tol_check<T: Scalar>(what: &str, a64: &Csr<f64>, f: &Tiled<T>) {
        let x: Vec<f64> = (0..a64.cols())
            .map(|i| ((i * 37) % 23) as f64 / 11.0 - 1.0)
            .collect();
        let xt: Vec<T> = x.iter().map(|&v| T::from_f64(v)).collect();
        let y0: Vec<f64> = (0..a64.rows()).map(|i| (i % 7) as f64 - 3.0).collect();
        let abs = a64.abs_product_f64(Operation::NonTranspose, &x);
        for (alpha, beta) in [(1.0, 0.0), (1.5, -0.5), (-2.0, 1.0)] {
            let mut want = y0.clone();
            a64.spmv_f64(Operation::NonTranspose, alpha, &x, beta, &mut want);
            let mut y: Vec<T> = if beta == 0.0 {
                vec![T::from_f64(f64::NAN); a64.rows()]
            } else {
                y0.iter().map(|&v| T::from_f64(v)).collect()
            };
            spmv(f, T::from_f64(alpha), &xt, T::from_f64(beta), &mut y);
            for r in 0..a64.rows() {
                let len = (a64.row_ptr()[r + 1] - a64.row_ptr()[r]) as f64;
                let tol = 10.0
                    * T::EPSILON
                    * (len.sqrt() + 2.0)
                    * (alpha.abs() * abs[r] + beta.abs() * y0[r].abs() + 1.0);
                let got = y[r].to_f64();
                assert!(
                    (got - want[r]).abs() <= tol,
                    "{what} alpha={alpha} beta={beta} row {r}: {got} vs {}",
                    want[r]
                );
            }
        }
    }

    /// Reference over the format vs the f64 CSR product, f64 and f32, then after new values.
    fn check(a: &Csr<f64>, p: &TileParams) {
        let what = format!("{}x{} nnz {} {p}", a.rows(), a.cols(), a.nnz());
        tol_check(&what, a, &build(a, p).unwrap());
        let a32 = a.convert::<f32>();
        tol_check(
            &format!("{what} f32"),
            &a32.convert::<f64>(),
            &build(&a32, p).unwrap(),
        );
        // update_values: new values through the value map (both parts).
        let mut f = build(a, p).unwrap();
        let mut b = a.clone();
        b.values_mut()
            .iter_mut()
            .enumerate()
            .for_each(|(k, v)| *v = ((k * 13) % 17) as f64 - 8.0);
        f.update_values(&b);
        tol_check(&format!("{what} updated"), &b, &f);
    }

    fn load(spec: &str) -> Csr<f64> {
        crate::io::load(spec).unwrap().1
    }

    #[test]
    fn reference_matches_the_csr_product_on_sizes_not_divisible_by_16() {
        for spec in [
            "gen:random:17,33,5,1",
            "gen:random:1,1,1,1",
            "gen:random:15,250,40,2",
            "gen:dense:37,53",
            "gen:random:100000,4,3,2",
            "gen:random:4,100000,700,2",
            "gen:emptyrows:2001,8,3",
            "gen:elasticity:3",
            "gen:stencil27:7",
            "gen:powerlaw:10,8,2",
            "gen:empty:7,9",
        ] {
            let a = load(spec);
            for deferred in [false, true] {
                check(&a, &TileParams::paper(deferred));
            }
        }
    }

    /// Every array of two builds, by name.
    fn same_format(a: &Tiled<f64>, b: &Tiled<f64>, what: &str) {
        assert_eq!(a.tile_ptr, b.tile_ptr, "{what}: tile_ptr");
        assert_eq!(a.tile_col, b.tile_col, "{what}: tile_col");
        assert_eq!(a.tile_nnz, b.tile_nnz, "{what}: tile_nnz");
        assert_eq!(a.format, b.format, "{what}: format");
        assert_eq!(a.width, b.width, "{what}: width");
        assert_eq!(a.val_ptr, b.val_ptr, "{what}: val_ptr");
        assert_eq!(a.idx_ptr, b.idx_ptr, "{what}: idx_ptr");
        assert_eq!(a.idx, b.idx, "{what}: idx");
        assert_eq!(a.values, b.values, "{what}: values");
        assert_eq!(a.item_row, b.item_row, "{what}: item_row");
        assert_eq!(a.item_start, b.item_start, "{what}: item_start");
        assert_eq!(a.split_rows, b.split_rows, "{what}: split_rows");
        assert_eq!(a.value_slot, b.value_slot, "{what}: value_slot");
        assert_eq!(a.census, b.census, "{what}: census");
        assert_eq!(a.params, b.params, "{what}: params");
        let d = |f: &Tiled<f64>| {
            f.deferred.as_ref().map(|d| {
                (
                    d.csr.row_ptr().to_vec(),
                    d.csr.col_ind().to_vec(),
                    d.csr.values().to_vec(),
                )
            })
        };
        assert_eq!(d(a), d(b), "{what}: deferred CSR");
    }

    #[test]
    fn any_number_of_build_threads_gives_the_same_format() {
        let mut t: Vec<(usize, usize, f64)> = (0..200).map(|r| (r, (r * 7) % 50, 1.0)).collect();
        t.extend((0..200).step_by(3).map(|r| (r, (r * 7) % 50, -2.0)));
        let dup = Csr::from_triplets(200, 50, &t).unwrap();
        let mut cases: Vec<(String, Csr<f64>)> = [
            "gen:emptyrows:2001,8,3",
            "gen:powerlaw:10,8,2",
            "gen:stencil27:7",
            "gen:elasticity:3",
            "gen:dense:37,53",
            "gen:random:100000,4,3,2",
            "gen:empty:70,9",
        ]
        .iter()
        .map(|s| (s.to_string(), load(s)))
        .collect();
        cases.push(("duplicates".into(), dup));
        for (spec, a) in &cases {
            for p in [
                TileParams::paper(false),
                TileParams::paper(true),
                TileParams {
                    tbalance: 2,
                    ..TileParams::paper(true)
                },
            ] {
                let one = build_on(a, &p, 1).unwrap();
                for threads in [2, 3, 7, 64] {
                    let many = build_on(a, &p, threads).unwrap();
                    same_format(&one, &many, &format!("{spec}, {p}, {threads} threads"));
                }
            }
            // The work items alone, made again for another tbalance, as a build with it.
            let mut f = build_on(a, &TileParams::paper(true), 3).unwrap();
            let p = TileParams {
                tbalance: 3,
                ..TileParams::paper(true)
            };
            f.set_tbalance(p.tbalance);
            same_format(
                &f,
                &build_on(a, &p, 1).unwrap(),
                &format!("{spec}, set_tbalance"),
            );
        }
    }

    #[test]
    fn long_tile_rows_are_split_across_warps_and_still_add_up() {
        // 19 x 5000: two tile rows of about 300 tiles each, split into warps of at most 8 tiles.
        let a = load("gen:random:19,5000,300,4");
        let f = build(&a, &TileParams::paper(false)).unwrap();
        assert_eq!(f.split_rows, vec![0, 1]);
        assert!(f.item_row.iter().all(|&r| r & SPLIT_ROW != 0));
        assert!(f
            .item_start
            .windows(2)
            .all(|w| w[1] - w[0] <= 8 && w[1] > w[0]));
        check(&a, &TileParams::paper(false));
        check(&a, &TileParams::paper(true));
        let whole = TileParams {
            tbalance: TBALANCE_UNLIMITED,
            ..TileParams::paper(false)
        };
        assert!(build(&a, &whole).unwrap().split_rows.is_empty());
        check(&a, &whole);
        check(
            &a,
            &TileParams {
                tbalance: 1,
                ..TileParams::paper(false)
            },
        );
    }

    #[test]
    fn thresholds_move_the_selection_and_the_product_stays_right() {
        let a = load("gen:powerlaw:11,8,2");
        for (te, th) in [(0.0, 0.0), (0.1, 0.5), (0.4, 2.0), (5.0, 5.0)] {
            check(
                &a,
                &TileParams {
                    te,
                    th,
                    ..TileParams::paper(false)
                },
            );
        }
    }

    #[test]
    fn duplicate_entries_make_coo_tiles_and_add() {
        let mut t: Vec<(usize, usize, f64)> = (0..16)
            .flat_map(|r| (0..16).map(move |c| (r, c, 1.0 + (r * c) as f64)))
            .collect();
        t.push((3, 3, 5.0));
        t.push((20, 1, 2.0));
        t.push((20, 1, -7.0));
        let a = Csr::from_triplets(21, 18, &t).unwrap();
        let f = build(&a, &TileParams::paper(false)).unwrap();
        assert_eq!(f.format[0], TileFormat::Coo as u8);
        check(&a, &TileParams::paper(false));
        check(&a, &TileParams::paper(true));
    }

    #[test]
    fn edge_tiles_pick_dense_rows_and_columns_by_their_valid_size() {
        // 20 x 21: the bottom-right tile is 4 x 5: a full row there has 5 entries (rows 16,
        // 17 and 19: 15 entries, so not COO); the bottom-left tile is 4 x 16 with two full
        // columns of 4 (8 entries, but every row alike: not COO either).
        let mut t = Vec::new();
        for r in [16, 17, 19] {
            for c in 16..21 {
                t.push((r, c, c as f64 - r as f64));
            }
        }
        for r in 16..20 {
            t.push((r, 2, r as f64));
            t.push((r, 7, 1.0));
        }
        let a = Csr::from_triplets(20, 21, &t).unwrap();
        let f = build(&a, &TileParams::paper(false)).unwrap();
        assert_eq!(f.tile_col, vec![0, 1]);
        assert_eq!(f.format[0], TileFormat::DnsCol as u8);
        assert_eq!(f.format[1], TileFormat::DnsRow as u8);
        check(&a, &TileParams::paper(false));
    }
}
