//! Host twin of the BRC kernels (`kernels/brc.cu`): the same launches in the same order over
//! the same arrays, in the matrix's value type.
//!
//! 1. Hybrid: the ELL kernel, one thread per row: y = alpha*sum_j ell[j*rows + i]*x[..] +
//!    beta*y (beta = 0 does not read y). Pure BRC, atomic variant: y = beta*y (0 for beta = 0)
//!    for `scale_rows` (split and empty rows).
//! 2. The BRC kernel, walked as the grid runs it (Figure 3 with the grid stride fixed): thread
//!    `tid` of `grid*block_size` takes block rows `tid + i*grid*block_size`, i < rep; block
//!    row t is row `t % B1` of block `t / B1`; its sum runs j = 0..T in order. A dummy row does
//!    nothing; an owned row writes y = alpha*sum + beta*y; a split row adds alpha*sum (atomic
//!    variant: the GPU's atomics land in some order — here the walk's) or stores sum in the
//!    partial buffer (deterministic variant).
//! 3. Deterministic variant: the reduction, one thread per `fix_rows` entry: s = the row's
//!    partials in order; y += alpha*s (hybrid) or y = alpha*s + beta*y.
//!
//! Walking the grid (rather than the block rows in order) checks that the launch covers every
//! block row exactly once for any `rep` and block size.
#![forbid(unsafe_code)]

use super::format::{Brc, Variant, DUMMY, SPLIT};
use crate::scalar::Scalar;

/// y = alpha*A*x + beta*y as the BRC kernels compute it, with `rep` block rows per thread and
/// `block_size` threads per CTA. `beta == 0` never reads `y`.
#[allow(clippy::too_many_arguments)]
pub fn spmv<T: Scalar>(
    f: &Brc<T>,
    rep: u32,
    block_size: u32,
    alpha: T,
    x: &[T],
    beta: T,
    y: &mut [T],
) {
    assert!(
        rep >= 1 && block_size >= 1,
        "rep {rep}, block size {block_size}"
    );
    assert_eq!(x.len(), f.cols, "x length");
    assert_eq!(y.len(), f.rows, "y length");
    let (vals, col) = (&f.values, &f.col);
    // 1. ELL part or the scaling of split and empty rows.
    if f.ell_width > 0 {
        let rows = f.rows;
        for (i, yi) in y.iter_mut().enumerate() {
            let mut s = T::ZERO;
            for j in 0..f.ell_width {
                let e = j * rows + i;
                s += vals[e] * x[col[e] as usize];
            }
            *yi = if beta == T::ZERO {
                alpha * s
            } else {
                alpha * s + beta * *yi
            };
        }
    } else if f.variant == Variant::Atomic {
        for &r in &f.scale_rows {
            let r = r as usize;
            y[r] = if beta == T::ZERO {
                T::ZERO
            } else {
                beta * y[r]
            };
        }
    }
    // 2. The BRC kernel.
    let mut partial = vec![T::ZERO; f.partial_len()];
    let n = f.block_rows();
    let ell = f.ell_slots();
    let b1 = f.b1;
    let threads = n.div_ceil(rep as usize).div_ceil(block_size as usize) * block_size as usize;
    for tid in 0..threads {
        for i in 0..rep as usize {
            let t = tid + i * threads;
            if t >= n {
                break;
            }
            let d = f.dest[t];
            if d == DUMMY {
                continue;
            }
            let (cb, r) = (t / b1, t % b1);
            let (off, w) = (
                ell + f.block_offset[cb] as usize,
                f.nnz_per_block[cb] as usize,
            );
            let mut sum = T::ZERO;
            for j in 0..w {
                let e = off + j * b1 + r;
                sum += vals[e] * x[col[e] as usize];
            }
            let low = (d & !SPLIT) as usize;
            if d & SPLIT == 0 {
                y[low] = if beta == T::ZERO {
                    alpha * sum
                } else {
                    alpha * sum + beta * y[low]
                };
            } else if f.variant == Variant::Deterministic {
                partial[low] = sum;
            } else {
                y[low] += alpha * sum;
            }
        }
    }
    // 3. The deterministic variant's reduction.
    if f.variant == Variant::Deterministic {
        for (i, &r) in f.fix_rows.iter().enumerate() {
            let r = r as usize;
            let mut s = T::ZERO;
            for &p in &partial[f.fix_ptr[i] as usize..f.fix_ptr[i + 1] as usize] {
                s += p;
            }
            y[r] = if f.accumulates() {
                y[r] + alpha * s
            } else if beta == T::ZERO {
                alpha * s
            } else {
                alpha * s + beta * y[r]
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::format::build;
    use super::*;
    use crate::csr::Csr;
    use crate::types::Operation;

    const VARIANTS: [Variant; 2] = [Variant::Atomic, Variant::Deterministic];

    #[test]
    fn hand_computed_paper_example_for_every_shape() {
        // Eq. 1 with A..J = 1..10, x = [1, 10, 100, 1000, 10^4, 10^5]:
        // y0 = 10*A + 1000*B = 2010, y1 = 100*C + 10^4*D = 40300,
        // y2 = E + 10F + 100G + 10^4 H + 10^5 I = 5 + 60 + 700 + 80000 + 900000 = 980765,
        // y3 = 1000 J = 10000.
        let a = Csr::from_triplets(
            4,
            6,
            &[
                (0, 1, 1.0),
                (0, 3, 2.0),
                (1, 2, 3.0),
                (1, 4, 4.0),
                (2, 0, 5.0),
                (2, 1, 6.0),
                (2, 2, 7.0),
                (2, 4, 8.0),
                (2, 5, 9.0),
                (3, 3, 10.0),
            ],
        )
        .unwrap();
        let x = [1.0, 10.0, 100.0, 1e3, 1e4, 1e5];
        for v in VARIANTS {
            for (b1, b2, k) in [
                (3, 4, 0),
                (3, 100, 0),
                (2, 1, 0),
                (1, 2, 0),
                (32, 2, 1),
                (2, 3, 2),
            ] {
                let f = build(&a, b1, b2, k, v).unwrap();
                for (rep, bs) in [(1, 32), (2, 1), (3, 2), (8, 64)] {
                    let mut y = [f64::NAN; 4];
                    spmv(&f, rep, bs, 1.0, &x, 0.0, &mut y);
                    assert_eq!(
                        y,
                        [2010.0, 40300.0, 980765.0, 10000.0],
                        "{b1} {b2} {k} {v:?}"
                    );
                    let mut y = [1.0, 2.0, 3.0, 4.0];
                    spmv(&f, rep, bs, 2.0, &x, -1.0, &mut y);
                    assert_eq!(y, [4019.0, 80598.0, 1961527.0, 19996.0]);
                }
            }
        }
    }

    #[test]
    fn empty_rows_become_beta_y_and_zero_for_beta_zero_without_reading_y() {
        let a = Csr::from_triplets(4, 3, &[(1, 0, 2.0), (1, 2, 3.0)]).unwrap();
        for v in VARIANTS {
            for b2 in [1, 8] {
                let f = build(&a, 32, b2, 0, v).unwrap();
                let mut y = [f64::NAN; 4];
                spmv(&f, 1, 128, 1.0, &[1.0, 5.0, 7.0], 0.0, &mut y);
                assert_eq!(y, [0.0, 23.0, 0.0, 0.0]);
                let mut y = [1.0, 1.0, 2.0, -3.0];
                spmv(&f, 1, 128, 1.0, &[1.0, 5.0, 7.0], 3.0, &mut y);
                assert_eq!(y, [3.0, 26.0, 6.0, -9.0]);
            }
        }
    }

    /// Random matrices with empty rows, a few very long rows and an nnz that is no multiple of
    /// anything, in f64 and f32, against the plain f64 product.
    fn random_matrix(rows: usize, cols: usize, seed: u64) -> Csr<f64> {
        let mut s = seed | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut t = Vec::new();
        for r in 0..rows {
            let len = match next() % 10 {
                0 => 0,
                1 => (next() % cols as u64) as usize,
                _ => (next() % 12) as usize,
            }
            .min(cols);
            for _ in 0..len {
                let c = (next() % cols as u64) as usize;
                t.push((r, c, (next() % 2000) as f64 / 1000.0 - 1.0));
            }
        }
        // Distinct (row, col) pairs.
        t.sort_by_key(|e| (e.0, e.1));
        t.dedup_by_key(|e| (e.0, e.1));
        Csr::from_triplets(rows, cols, &t).unwrap()
    }

    fn check(a: &Csr<f64>, b1: usize, b2: usize, k: usize, rep: u32, v: Variant) {
        let x: Vec<f64> = (0..a.cols())
            .map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0 + 1e-3)
            .collect();
        let y0: Vec<f64> = (0..a.rows()).map(|i| (i % 7) as f64 - 3.0).collect();
        let mut want = y0.clone();
        a.spmv_f64(Operation::NonTranspose, 1.5, &x, -0.5, &mut want);
        let scale = a.abs_product_f64(Operation::NonTranspose, &x);
        let longest = (0..a.rows())
            .map(|r| (a.row_ptr()[r + 1] - a.row_ptr()[r]) as f64)
            .fold(1.0, f64::max);
        let f = build(a, b1, b2, k, v).unwrap();
        let mut y = y0.clone();
        spmv(&f, rep, 128, 1.5, &x, -0.5, &mut y);
        for i in 0..a.rows() {
            let tol = 10.0 * f64::EPSILON * longest.sqrt() * (1.5 * scale[i] + 0.5 * y0[i].abs())
                + 1e-300;
            assert!(
                (y[i] - want[i]).abs() <= tol,
                "f64 row {i}: {} vs {}",
                y[i],
                want[i]
            );
        }
        let a32 = a.convert::<f32>();
        let f = build(&a32, b1, b2, k, v).unwrap();
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let mut y32: Vec<f32> = y0.iter().map(|&v| v as f32).collect();
        spmv(&f, rep, 128, 1.5, &x32, -0.5, &mut y32);
        let a32_64 = a32.convert::<f64>();
        let x64: Vec<f64> = x32.iter().map(|&v| v as f64).collect();
        let mut want = y0.clone();
        a32_64.spmv_f64(Operation::NonTranspose, 1.5, &x64, -0.5, &mut want);
        for i in 0..a.rows() {
            let tol = 10.0
                * f32::EPSILON as f64
                * longest.sqrt()
                * (1.5 * scale[i] + 0.5 * y0[i].abs() + 1.0);
            assert!(
                (y32[i] as f64 - want[i]).abs() <= tol,
                "f32 row {i}: {} vs {}",
                y32[i],
                want[i]
            );
        }
    }

    #[test]
    fn random_matrices_match_the_plain_product_in_every_shape_and_variant() {
        for (rows, cols, seed) in [(300, 500, 7), (1000, 40, 11), (77, 3000, 5)] {
            let a = random_matrix(rows, cols, seed);
            for v in VARIANTS {
                for (b1, b2, k, rep) in [
                    (32, 1, 0, 1),
                    (32, 7, 0, 2),
                    (32, 64, 0, 4),
                    (32, 10_000, 0, 1),
                    (64, 16, 0, 3),
                    (5, 3, 0, 2),
                    (32, 8, 3, 2),
                    (32, 4, 1, 1),
                ] {
                    check(&a, b1, b2, k, rep, v);
                }
            }
        }
    }

    #[test]
    fn rectangular_extremes_match_the_plain_product() {
        for spec in [
            "gen:random:4,100000,700,2",
            "gen:random:100000,4,3,2",
            "gen:onerow:500,3000,3000",
            "gen:emptyrows:2000,8,3",
        ] {
            let (_, a) = crate::io::load(spec).unwrap();
            let stats = a.stats();
            let rule = super::super::params::fixed_rule(a.row_ptr(), &stats, 14).params;
            for v in VARIANTS {
                check(
                    &a,
                    32,
                    rule.b2 as usize,
                    rule.ell_width as usize,
                    rule.rep,
                    v,
                );
                check(&a, 32, 16, 0, 2, v);
            }
        }
    }

    #[test]
    fn the_deterministic_variant_does_not_depend_on_the_launch_shape_and_agrees_with_atomic() {
        let (_, a) = crate::io::load("gen:powerlaw:12,8,5").unwrap();
        let x: Vec<f64> = (0..a.cols())
            .map(|i| ((i * 31) % 17) as f64 / 7.0 - 1.1)
            .collect();
        let f = build(&a, 32, 6, 0, Variant::Deterministic).unwrap();
        assert!(f.split_rows > 0 && f.partial_len() > f.split_rows);
        let mut y1 = vec![0.0; a.rows()];
        let mut y2 = vec![0.0; a.rows()];
        spmv(&f, 2, 128, 1.0, &x, 0.0, &mut y1);
        spmv(&f, 4, 256, 1.0, &x, 0.0, &mut y2);
        assert!(y1.iter().zip(&y2).all(|(a, b)| a.to_bits() == b.to_bits()));
        let g = build(&a, 32, 6, 0, Variant::Atomic).unwrap();
        let mut y3 = vec![0.0; a.rows()];
        spmv(&g, 1, 128, 1.0, &x, 0.0, &mut y3);
        let scale = a.abs_product_f64(Operation::NonTranspose, &x);
        for i in 0..a.rows() {
            assert!((y1[i] - y3[i]).abs() <= 1e-13 * (1.0 + scale[i]), "row {i}");
        }
    }
}
