//! Host twin of `kernels/bccoo.cu` (yaSpMV §3): it runs the BCCOO arrays exactly as the kernel
//! reads them — flag words and their bits, column deltas with their -1 escapes, the transposed
//! positions, the first-result entries, the per-workgroup skip/wait/publish flags, the carry
//! hand-off between workgroups in logical order (adjacent synchronisation, §3.2.4), strategy 1
//! (results written by each thread) or strategy 2 (the per-workgroup result cache with its
//! overflow to y, §3.2.2), BCCOO+'s temporary buffer and combine step (§2.3) — so the format is
//! proven on CI without a GPU. The warp-shuffle segmented scan is replayed step by step, so the
//! order of every addition is the kernel's (the kernel may fuse multiply-adds: results agree
//! to rounding, not bitwise).
#![forbid(unsafe_code)]

use super::format::{position, Bccoo, WG_PUBLISH, WG_SKIP_SCAN, WG_WAIT};
use super::params::{Strategy, WARP};
use crate::scalar::Scalar;

/// Per-thread sums: up to 4 rows of a block row.
type Sums<T> = [T; 4];

/// y = alpha*A*x + beta*y over `f`, run with workgroups of `wg` threads, `strategy`, and the
/// workgroup flags `info` (= `f.wg_info(wg)`). `beta == 0` never reads y.
#[allow(clippy::too_many_arguments)]
pub fn spmv<T: Scalar>(
    f: &Bccoo<T>,
    wg: usize,
    strategy: Strategy,
    info: &[u8],
    alpha: T,
    x: &[T],
    beta: T,
    y: &mut [T],
) {
    let y = &mut y[..f.rows];
    if f.rows == 0 {
        return;
    }
    if f.nnz == 0 {
        // No kernel on the GPU either: y = beta*y.
        scale(y, beta);
        return;
    }
    if f.params.slices == 1 {
        kernel(f, wg, strategy, info, x, y, f.rows, alpha, beta);
    } else {
        // BCCOO+ (§2.3): the slices' partial products go to a temporary buffer, then combine.
        let mut tmp = vec![T::ZERO; f.out_len()];
        let n = tmp.len();
        kernel(f, wg, strategy, info, x, &mut tmp, n, T::ONE, T::ZERO);
        combine(
            &tmp,
            f.slice_stride(),
            f.params.slices as usize,
            alpha,
            beta,
            y,
        );
    }
}

/// y = beta*y (y = 0 without reading it when beta = 0).
pub fn scale<T: Scalar>(y: &mut [T], beta: T) {
    if beta == T::ZERO {
        y.fill(T::ZERO);
    } else {
        y.iter_mut().for_each(|v| *v = beta * *v);
    }
}

/// BCCOO+'s combine kernel: y[r] = alpha * (tmp[r] + tmp[stride + r] + ...) + beta*y[r], the
/// slices added in order.
pub fn combine<T: Scalar>(tmp: &[T], stride: usize, slices: usize, alpha: T, beta: T, y: &mut [T]) {
    for (r, yr) in y.iter_mut().enumerate() {
        let mut s = tmp[r];
        for k in 1..slices {
            s += tmp[k * stride + r];
        }
        *yr = if beta == T::ZERO {
            alpha * s
        } else {
            alpha * s + beta * *yr
        };
    }
}

/// out[r] = alpha*v + beta*out[r] for r < limit (beta == 0: out[r] is not read).
#[inline]
fn write<T: Scalar>(out: &mut [T], limit: usize, r: usize, v: T, alpha: T, beta: T) {
    if r < limit {
        out[r] = if beta == T::ZERO {
            alpha * v
        } else {
            alpha * v + beta * out[r]
        };
    }
}

/// The main kernel over every workgroup, in logical order.
#[allow(clippy::too_many_arguments)]
fn kernel<T: Scalar>(
    f: &Bccoo<T>,
    wg: usize,
    strategy: Strategy,
    info: &[u8],
    x: &[T],
    out: &mut [T],
    limit: usize,
    alpha: T,
    beta: T,
) {
    let p = &f.params;
    let (bw, bh) = (p.shape.bw as usize, p.shape.bh as usize);
    let tile = p.tile as usize;
    let wbits = p.word_bits as usize;
    let padded = f.padded_blocks();
    assert!(
        wg % WARP == 0 && f.threads % wg == 0,
        "workgroups of {wg} threads over {} threads",
        f.threads
    );
    let nwg = f.threads / wg;
    assert_eq!(info.len(), nwg, "one info byte per workgroup");
    let cap = match strategy {
        Strategy::Registers => 0,
        Strategy::ResultCache(m) => m as usize * wg,
    };
    // Grp_sum and its flags (§3.2.4).
    let mut grp: Vec<Sums<T>> = vec![[T::ZERO; 4]; nwg];
    let mut flag = vec![false; nwg];
    let mut cache = vec![T::ZERO; cap];
    let mut cached = vec![false; cap];
    let mut last: Vec<Sums<T>> = vec![[T::ZERO; 4]; wg];
    let mut first: Vec<Sums<T>> = vec![[T::ZERO; 4]; wg];
    let mut has = vec![false; wg];

    for w in 0..nwg {
        let row0 = f.res_entry[w * wg] as usize;
        cached.fill(false);
        // The result of block row k (all bh of its rows): strategy 1 writes it, strategy 2
        // puts it in the cache when it fits.
        let emit = |out: &mut [T], cache: &mut [T], cached: &mut [bool], k: usize, v: &Sums<T>| {
            for (i, &vi) in v.iter().enumerate().take(bh) {
                let e = (k - row0) * bh + i;
                if e < cap {
                    cache[e] = vi;
                    cached[e] = true;
                } else {
                    write(out, limit, k * bh + i, vi, alpha, beta);
                }
            }
        };

        // Step 1 (§3.2.2): each thread's sequential segmented sum over its tile.
        for tid in 0..wg {
            let t = w * wg + tid;
            let mut acc: Sums<T> = [T::ZERO; 4];
            let mut row = f.res_entry[t] as usize;
            let mut word = 0u32;
            let mut prev = 0u32;
            has[tid] = false;
            for j in 0..tile {
                if j % wbits == 0 {
                    word = f.word(t, j / wbits);
                }
                let stop = (word >> (j % wbits)) & 1 == 0;
                let pos = position(t * tile + j, tile);
                let c = f.col.decode(pos, prev);
                prev = c;
                let cc = c as usize * bw;
                let mut xv = [T::ZERO; 4];
                for (k, xk) in xv.iter_mut().enumerate().take(bw) {
                    if cc + k < f.cols {
                        *xk = x[cc + k];
                    }
                }
                for (i, a) in acc.iter_mut().enumerate().take(bh) {
                    let base = (i * padded + pos) * bw;
                    for (k, &xk) in xv.iter().enumerate().take(bw) {
                        *a += f.values[base + k] * xk;
                    }
                }
                if stop {
                    if !has[tid] {
                        first[tid] = acc;
                        has[tid] = true;
                    } else {
                        emit(out, &mut cache, &mut cached, row, &acc);
                    }
                    row += 1;
                    acc = [T::ZERO; 4];
                }
            }
            last[tid] = acc;
        }

        // Step 2: the parallel segmented scan of last_partial_sums (skipped when every tile
        // has a row stop, §2.4). `open[t]`: no row stop in tiles 0..=t of this workgroup.
        let (sums, open) = if info[w] & WG_SKIP_SCAN != 0 {
            debug_assert!(has.iter().all(|&h| h), "skip flag on a tile without a stop");
            (last.clone(), vec![false; wg])
        } else {
            segmented_scan(&last, &has, bh)
        };

        // Step 3 (§3.2.4): the carry from the previous workgroup; publish ours.
        let open_all = open[wg - 1];
        let mut cin: Sums<T> = [T::ZERO; 4];
        if info[w] & WG_PUBLISH != 0 && !open_all {
            grp[w] = sums[wg - 1];
            flag[w] = true;
        }
        if info[w] & WG_WAIT != 0 {
            assert!(
                w > 0 && flag[w - 1],
                "workgroup {w} waits for a carry nobody publishes"
            );
            cin = grp[w - 1];
            flag[w - 1] = false;
        }
        if info[w] & WG_PUBLISH != 0 && open_all {
            for i in 0..bh {
                grp[w][i] = cin[i] + sums[wg - 1][i];
            }
            flag[w] = true;
        }

        // Step 4 (§3.2.3): each thread's first row stop gets the sums before it.
        for tid in 0..wg {
            if !has[tid] {
                continue;
            }
            let mut v: Sums<T> = [T::ZERO; 4];
            for i in 0..bh {
                let pre = if tid == 0 {
                    cin[i]
                } else if open[tid - 1] {
                    cin[i] + sums[tid - 1][i]
                } else {
                    sums[tid - 1][i]
                };
                v[i] = pre + first[tid][i];
            }
            emit(
                out,
                &mut cache,
                &mut cached,
                f.res_entry[w * wg + tid] as usize,
                &v,
            );
        }

        // Step 5 (strategy 2): the result cache goes to y.
        if cap > 0 {
            let done = (f.res_entry[(w + 1) * wg] as usize - row0) * bh;
            let n = done.min(cap);
            for e in 0..n {
                debug_assert!(
                    cached[e],
                    "result cache entry {e} of workgroup {w} never written"
                );
                write(out, limit, row0 * bh + e, cache[e], alpha, beta);
            }
        }
    }
    assert!(
        flag.iter().all(|&b| !b),
        "a carry flag stays set after the product (the next call would read it)"
    );
}

/// The kernel's segmented scan over a workgroup's `last_partial_sums` with start flags `has`:
/// a Hillis–Steele scan inside each warp (the shuffle steps d = 1, 2, 4, 8, 16), the warp
/// totals scanned the same way by warp 0, then each warp combined with the totals before it.
/// Returns the inclusive sums and, per thread, "no start at or before it".
fn segmented_scan<T: Scalar>(
    last: &[Sums<T>],
    has: &[bool],
    bh: usize,
) -> (Vec<Sums<T>>, Vec<bool>) {
    let wg = last.len();
    let mut v = last.to_vec();
    let mut f = has.to_vec();
    let warps = wg / WARP;
    let lane_scan = |v: &mut [Sums<T>], f: &mut [bool]| {
        let mut d = 1;
        while d < WARP {
            let (ov, of) = (v.to_vec(), f.to_vec());
            for lane in d..WARP {
                if !of[lane] {
                    for i in 0..bh {
                        v[lane][i] = ov[lane - d][i] + ov[lane][i];
                    }
                }
                f[lane] = of[lane] || of[lane - d];
            }
            d <<= 1;
        }
    };
    for w in 0..warps {
        let r = w * WARP..(w + 1) * WARP;
        lane_scan(&mut v[r.clone()], &mut f[r]);
    }
    // Warp totals, scanned by warp 0 (lanes past the last warp hold zero / no start).
    let mut tv: Vec<Sums<T>> = vec![[T::ZERO; 4]; WARP];
    let mut tf = vec![false; WARP];
    for w in 0..warps {
        tv[w] = v[w * WARP + WARP - 1];
        tf[w] = f[w * WARP + WARP - 1];
    }
    lane_scan(&mut tv, &mut tf);
    for w in 1..warps {
        for t in w * WARP..(w + 1) * WARP {
            if !f[t] {
                for i in 0..bh {
                    v[t][i] = tv[w - 1][i] + v[t][i];
                }
            }
            f[t] = f[t] || tf[w - 1];
        }
    }
    let open = f.iter().map(|&b| !b).collect();
    (v, open)
}

#[cfg(test)]
mod tests {
    use super::super::format::{build, facts, layout};
    use super::super::params::{fixed_rule, ColMode, FormatParams, Shape};
    use super::*;
    use crate::csr::Csr;
    use crate::types::Operation;

    fn fp(bh: u32, bw: u32, slices: u32, tile: u32, word_bits: u32, col: ColMode) -> FormatParams {
        FormatParams {
            shape: Shape { bw, bh },
            slices,
            tile,
            word_bits,
            col,
        }
    }

    const STRATEGIES: [Strategy; 3] = [
        Strategy::Registers,
        Strategy::ResultCache(1),
        Strategy::ResultCache(4),
    ];

    /// Runs the reference over `a` in T for `p` and every strategy / workgroup size and
    /// compares with the plain f64 product (alpha = 1.5, beta = 0 with NaN in y, then
    /// alpha = -1, beta = 0.5).
    fn check<T: Scalar>(what: &str, a64: &Csr<f64>, p: FormatParams, wgs: &[usize]) {
        let a = a64.convert::<T>();
        let ar = a.convert::<f64>();
        let x64: Vec<f64> = (0..a.cols())
            .map(|i| ((i * 7919) % 2001) as f64 / 1000.0 - 1.0 + 1e-3)
            .collect();
        let x: Vec<T> = x64.iter().map(|&v| T::from_f64(v)).collect();
        let xr: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
        let scale = ar.abs_product_f64(Operation::NonTranspose, &xr);
        let longest = (0..a.rows())
            .map(|r| (a.row_ptr()[r + 1] - a.row_ptr()[r]) as f64)
            .fold(1.0, f64::max);
        let tol = 10.0 * T::EPSILON * longest.sqrt();
        let pad = *wgs.iter().max().unwrap();
        let f = build(&a, &p, pad).unwrap();
        for &wg in wgs {
            let info = f.wg_info(wg);
            for s in STRATEGIES {
                for (alpha, beta) in [(1.5, 0.0), (-1.0, 0.5)] {
                    let y0: Vec<f64> = (0..a.rows()).map(|i| (i % 5) as f64 - 2.0).collect();
                    let mut want = y0.clone();
                    ar.spmv_f64(Operation::NonTranspose, alpha, &xr, beta, &mut want);
                    let mut y: Vec<T> = if beta == 0.0 {
                        vec![T::from_f64(f64::NAN); a.rows()]
                    } else {
                        y0.iter().map(|&v| T::from_f64(v)).collect()
                    };
                    spmv(
                        &f,
                        wg,
                        s,
                        &info,
                        T::from_f64(alpha),
                        &x,
                        T::from_f64(beta),
                        &mut y,
                    );
                    for r in 0..a.rows() {
                        let bound = tol * (alpha.abs() * scale[r] + (beta * y0[r]).abs())
                            + f64::MIN_POSITIVE;
                        let err = (y[r].to_f64() - want[r]).abs();
                        assert!(
                            err <= bound,
                            "{what} {p:?} wg={wg} {s} alpha={alpha} beta={beta}: y[{r}] = {} want {} (err {err:e} > {bound:e})",
                            y[r],
                            want[r]
                        );
                    }
                }
            }
        }
    }

    fn all_shapes(what: &str, a: &Csr<f64>, slices: u32, tile: u32, col: ColMode) {
        for s in Shape::all() {
            for w in [8, 16, 32] {
                let p = fp(s.bh, s.bw, slices, tile, w, col);
                check::<f64>(what, a, p, &[32, 64]);
            }
        }
    }

    #[test]
    fn paper_matrix_a_by_hand_for_every_block_shape_and_bccoo_plus() {
        // A (Eq. 1) with a..p = 1..16 and x = [1, 10, 100, ..., 10^7]:
        //   y0 = a*100 + b*10^6 + c*10^7          = 1*100 + 2e6 + 3e7
        //   y1 = d*100 + e*1000 + f*10^6          = 400 + 5000 + 6e6
        //   y2 = g*1e4 + h*1e5 + i*1e6 + j*1e7     = 7e4 + 8e5 + 9e6 + 1e8
        //   y3 = k + l*10 + m*1e4 + n*1e5 + o*1e6 + p*1e7
        let a = super::super::format::tests::paper_a();
        let x: Vec<f64> = (0..8).map(|i| 10f64.powi(i)).collect();
        let want = [
            100.0 + 2e6 + 3e7,
            400.0 + 5000.0 + 6e6,
            7e4 + 8e5 + 9e6 + 1e8,
            11.0 + 120.0 + 13e4 + 14e5 + 15e6 + 16e7,
        ];
        for s in Shape::all() {
            for slices in [1, 2] {
                for tile in [1, 2, 4, 8] {
                    let p = fp(s.bh, s.bw, slices, tile, 8, ColMode::U16);
                    let f = build(&a, &p, 32).unwrap();
                    for st in STRATEGIES {
                        let mut y = [f64::NAN; 4];
                        spmv(&f, 32, st, &f.wg_info(32), 1.0, &x, 0.0, &mut y);
                        assert_eq!(y, want, "{p:?} {st}");
                    }
                }
            }
        }
    }

    #[test]
    fn paper_figure_5_bccoo_plus_slices_are_the_products_of_the_vertical_slices() {
        // Figure 5: A*y = A[:, 0..4] * y[0..4] + A[:, 4..8] * y[4..8]; the temporary buffer
        // holds the two slice products, slice by slice.
        let a = super::super::format::tests::paper_a();
        let x: Vec<f64> = (0..8).map(|i| 10f64.powi(i)).collect();
        let f = build(&a, &fp(2, 2, 2, 8, 8, ColMode::U16), 32).unwrap();
        let mut tmp = vec![f64::NAN; f.out_len()];
        let n = tmp.len();
        kernel(
            &f,
            32,
            Strategy::Registers,
            &f.wg_info(32),
            &x,
            &mut tmp,
            n,
            1.0,
            0.0,
        );
        // Slice 0 (columns 0..4): [a*100, d*100 + e*1000, 0, k + l*10].
        assert_eq!(tmp[..4], [100.0, 5400.0, 0.0, 131.0]);
        // Slice 1 (columns 4..8): [b*1e6 + c*1e7, f*1e6, g*1e4 + h*1e5 + i*1e6 + j*1e7, ...].
        assert_eq!(
            tmp[4..],
            [
                2e6 + 3e7,
                6e6,
                7e4 + 8e5 + 9e6 + 1e8,
                13e4 + 14e5 + 15e6 + 16e7
            ]
        );
    }

    #[test]
    fn paper_matrix_c_figures_9_and_10_four_threads_of_four_blocks() {
        // Eq. 2 with 1x1 blocks A'..P' = 1..16 and x = 1: row sums 15, 13, 27, 81.
        let c = super::super::format::tests::paper_c();
        let f = build(&c, &fp(1, 1, 1, 4, 8, ColMode::U16), 32).unwrap();
        for st in STRATEGIES {
            let mut y = [f64::NAN; 4];
            spmv(&f, 32, st, &f.wg_info(32), 1.0, &[1.0; 8], 0.0, &mut y);
            assert_eq!(y, [15.0, 13.0, 27.0, 81.0], "{st}");
        }
    }

    #[test]
    fn tiny_matrices_for_each_shape_with_empty_rows_and_ragged_edges() {
        // 5 x 7: rows 1 and 4 empty, last block column partial for bw = 2 and 4.
        let a = Csr::from_triplets(
            5,
            7,
            &[
                (0, 0, 1.0),
                (0, 6, 2.0),
                (2, 3, 3.0),
                (2, 4, -4.0),
                (3, 0, 5.0),
                (3, 5, 6.0),
                (3, 6, 7.0),
            ],
        )
        .unwrap();
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        // y = [1 + 14, 0, 12 - 20, 5 + 36 + 49, 0]
        let want = [15.0, 0.0, -8.0, 90.0, 0.0];
        for s in Shape::all() {
            for slices in [1, 2, 4] {
                let p = fp(s.bh, s.bw, slices, 8, 8, ColMode::U16);
                let Ok(f) = build(&a, &p, 32) else {
                    assert!(7 / (s.bw * slices) == 0, "{p:?}");
                    continue;
                };
                for st in STRATEGIES {
                    let mut y = [f64::NAN; 5];
                    spmv(&f, 32, st, &f.wg_info(32), 1.0, &x, 0.0, &mut y);
                    assert_eq!(y, want, "{p:?} {st}");
                    let mut y = [1.0, 2.0, 3.0, 4.0, 5.0];
                    spmv(&f, 32, st, &f.wg_info(32), 2.0, &x, -1.0, &mut y);
                    assert_eq!(y, [29.0, -2.0, -19.0, 176.0, -5.0], "{p:?} {st}");
                }
            }
        }
    }

    #[test]
    fn random_matrices_with_empty_rows_match_the_plain_product() {
        let (_, a) = crate::io::load("gen:emptyrows:700,8,3").unwrap();
        all_shapes("emptyrows", &a, 1, 16, ColMode::U16);
        check::<f32>(
            "emptyrows f32",
            &a,
            fp(2, 2, 1, 24, 8, ColMode::U16),
            &[64, 128],
        );
        let (_, a) = crate::io::load("gen:random:333,517,7,11").unwrap();
        all_shapes("random", &a, 1, 8, ColMode::U16);
        all_shapes("random bccoo+", &a, 4, 8, ColMode::U16);
        check::<f32>(
            "random f32",
            &a,
            fp(3, 4, 2, 40, 8, ColMode::U16),
            &[32, 64],
        );
    }

    #[test]
    fn a_row_spanning_many_workgroups_carries_across_them() {
        // One row of 20,000 entries among short rows: with tile 8 and 32 threads a workgroup
        // holds 256 blocks, so the long row crosses ~78 workgroups (wait/publish chain, no
        // stop in most of them).
        let mut e: Vec<(usize, usize, f64)> = (0..20_000)
            .map(|c| (3, c, 1.0 + (c % 13) as f64 / 8.0))
            .collect();
        for r in 0..50 {
            if r != 3 {
                e.push((r, (r * 37) % 20_000, -1.0 - r as f64));
                e.push((r, (r * 91 + 5) % 20_000, 0.5));
            }
        }
        let a = Csr::from_triplets(50, 20_000, &e).unwrap();
        for (bh, bw) in [(1, 1), (2, 4), (4, 2)] {
            check::<f64>("long row", &a, fp(bh, bw, 1, 8, 8, ColMode::U16), &[32, 64]);
            check::<f32>("long row f32", &a, fp(bh, bw, 1, 8, 8, ColMode::U16), &[32]);
        }
    }

    #[test]
    fn wide_matrices_use_delta_compression_and_escapes_correctly() {
        // 4 x 100000 (rectangular, wide): block columns >= 65535 for bw = 1.
        let (_, a) = crate::io::load("gen:random:4,100000,700,2").unwrap();
        for col in [ColMode::Delta, ColMode::U32] {
            for (bh, bw) in [(1, 1), (2, 1), (4, 1)] {
                let p = fp(bh, bw, 1, 16, 16, col);
                check::<f64>("wide", &a, p, &[32]);
                check::<f32>("wide f32", &a, p, &[64]);
            }
            check::<f64>("wide bccoo+", &a, fp(2, 1, 8, 32, 32, col), &[32]);
        }
        let f = build(&a, &fp(1, 1, 1, 16, 16, ColMode::Delta), 32).unwrap();
        assert!(f.escapes > 0, "random columns 0..100000 give escapes");
        // Columns far apart in every tile: almost every delta escapes.
        let e: Vec<_> = (0..300).map(|r| (r, (r * 40_009) % 200_000, 1.0)).collect();
        let a = Csr::from_triplets(300, 200_000, &e).unwrap();
        let f = build(&a, &fp(1, 1, 1, 8, 8, ColMode::Delta), 32).unwrap();
        assert!(f.escapes > 200);
        check::<f64>("escapes", &a, fp(1, 1, 1, 8, 8, ColMode::Delta), &[32]);
    }

    #[test]
    fn tall_and_one_long_row_matrices_match_the_plain_product() {
        let (_, a) = crate::io::load("gen:random:100000,4,3,2").unwrap();
        for (bh, bw) in [(1, 1), (3, 2), (4, 4)] {
            check::<f64>("tall", &a, fp(bh, bw, 1, 16, 16, ColMode::U16), &[256]);
        }
        check::<f32>("tall f32", &a, fp(4, 1, 1, 32, 32, ColMode::U16), &[128]);
        let (_, a) = crate::io::load("gen:onerow:500,3000,3000").unwrap();
        for (bh, bw) in [(1, 1), (2, 2), (3, 4)] {
            check::<f64>("onerow", &a, fp(bh, bw, 1, 8, 8, ColMode::U16), &[32, 128]);
        }
    }

    #[test]
    fn block_structured_generators_match_for_the_fixed_rule() {
        for spec in [
            "gen:elasticity:4",
            "gen:lap3d7:9",
            "gen:powerlaw:11,8,2",
            "gen:dense:37,53",
        ] {
            let (_, a) = crate::io::load(spec).unwrap();
            let p = fixed_rule(&facts(&a), 14);
            check::<f64>(spec, &a, p.format, &[p.wg as usize]);
            check::<f32>(spec, &a, p.format, &[p.wg as usize]);
        }
    }

    #[test]
    fn empty_and_all_zero_matrices_scale_y() {
        let a = Csr::<f64>::from_triplets(3, 0, &[]).unwrap();
        let f = build(&a, &fp(2, 2, 1, 8, 8, ColMode::U16), 32).unwrap();
        let mut y = [f64::NAN; 3];
        spmv(
            &f,
            32,
            Strategy::Registers,
            &f.wg_info(32),
            1.0,
            &[],
            0.0,
            &mut y,
        );
        assert_eq!(y, [0.0; 3]);
        let mut y = [1.0, 2.0, 3.0];
        spmv(
            &f,
            32,
            Strategy::Registers,
            &f.wg_info(32),
            1.0,
            &[],
            3.0,
            &mut y,
        );
        assert_eq!(y, [3.0, 6.0, 9.0]);
        let a = Csr::<f64>::from_triplets(0, 5, &[]).unwrap();
        let f = build(&a, &fp(2, 2, 1, 8, 8, ColMode::U16), 32).unwrap();
        assert_eq!(f.threads, 0);
        spmv(
            &f,
            32,
            Strategy::Registers,
            &[],
            1.0,
            &[0.0; 5],
            0.0,
            &mut [],
        );
    }

    #[test]
    fn update_values_through_the_value_map_matches_a_fresh_build() {
        let (_, a) = crate::io::load("gen:random:300,200,12,9").unwrap();
        let p = fp(3, 2, 1, 16, 16, ColMode::U16);
        let blk = super::super::format::block(&a, p.shape, 1).unwrap();
        let mut f = layout(&a, &blk, &p, 64).unwrap();
        let mut b = a.clone();
        for (k, v) in b.values_mut().iter_mut().enumerate() {
            *v = (k % 17) as f64 - 8.0;
        }
        crate::methods::scatter_values(b.values(), &f.value_slot.clone(), &mut f.values);
        assert_eq!(f, build(&b, &p, 64).unwrap());
    }

    #[test]
    fn skipping_the_scan_gives_the_same_bits_as_scanning() {
        // A matrix where every tile has a stop: the scan with all start flags set is the
        // identity, so clearing the skip flags must not change a bit of y.
        let (_, a) = crate::io::load("gen:lap3d7:6").unwrap();
        let f = build(&a, &fp(1, 1, 1, 8, 8, ColMode::U16), 64).unwrap();
        let info = f.wg_info(64);
        assert!(info.iter().any(|&i| i & WG_SKIP_SCAN != 0));
        let no_skip: Vec<u8> = info.iter().map(|&i| i & !WG_SKIP_SCAN).collect();
        let x: Vec<f64> = (0..a.cols()).map(|i| 1.0 / (1.0 + i as f64)).collect();
        let (mut y1, mut y2) = (vec![0.0; a.rows()], vec![0.0; a.rows()]);
        spmv(
            &f,
            64,
            Strategy::ResultCache(2),
            &info,
            1.0,
            &x,
            0.0,
            &mut y1,
        );
        spmv(
            &f,
            64,
            Strategy::ResultCache(2),
            &no_skip,
            1.0,
            &x,
            0.0,
            &mut y2,
        );
        assert_eq!(y1, y2);
    }
}
