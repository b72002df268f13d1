//! TileSpMV on the host, over the format's own arrays, read the way `kernels/tile.cu` reads
//! them: per work item a warp of 32 simulated lanes, lane l accumulating for row l % 16 of the
//! tile row (half h = l / 16 taking every other column, entry or dense row), each format's
//! routine of §III.C with the kernel's index arithmetic, then the two halves added and the
//! tile row written (or, for a split tile row, added to a y pre-scaled by beta). The deferred
//! matrix is then added by HOLA's host reference with beta = 1.
#![forbid(unsafe_code)]

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
