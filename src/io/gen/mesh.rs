//! The grid generators, all with fixed values: `lap3d7`, `stencil27`, `elasticity` (3D) and
//! `grid2d`.
#![forbid(unsafe_code)]

use super::{mul, Args, Build, Kind, Plan};
use crate::error::Result;

/// N and the node count N^3 of a 3D grid generator, checked.
fn plan_nodes(a: &Args<'_>) -> Result<(usize, usize)> {
    let n = a.size(0)?;
    let nodes = a.fit("rows", mul(&[n, n, n]))?;
    Ok((n, nodes))
}

/// `lap3d7:N`: N^3 rows, 7N^3 - 6N^2 non-zeros.
pub(super) fn plan_lap3d7(a: &Args<'_>) -> Result<Plan> {
    let (n, nodes) = plan_nodes(a)?;
    let nnz = (7 * n as u128 * n as u128 * n as u128).saturating_sub(6 * n as u128 * n as u128);
    let nnz = a.fit("non-zeros", Some(nnz))?;
    Plan::exact(nodes, nodes, nnz, Kind::Lap3d7 { n })
}

/// The 7-point Laplacian: 6 on the diagonal, -1 for each face neighbour, x fastest.
pub(super) fn lap3d7(n: usize, b: &mut Build) {
    let (s1, s2) = (n, n * n);
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                let i = x + s1 * y + s2 * z;
                if z > 0 {
                    b.push(i - s2, -1.0);
                }
                if y > 0 {
                    b.push(i - s1, -1.0);
                }
                if x > 0 {
                    b.push(i - 1, -1.0);
                }
                b.push(i, 6.0);
                if x + 1 < n {
                    b.push(i + 1, -1.0);
                }
                if y + 1 < n {
                    b.push(i + s1, -1.0);
                }
                if z + 1 < n {
                    b.push(i + s2, -1.0);
                }
                b.end_row();
            }
        }
    }
}

/// `stencil27:N`: N^3 rows, (3N-2)^3 non-zeros.
pub(super) fn plan_stencil27(a: &Args<'_>) -> Result<Plan> {
    let (n, nodes) = plan_nodes(a)?;
    let m = (3 * n).saturating_sub(2);
    let nnz = a.fit("non-zeros", mul(&[m, m, m]))?;
    Plan::exact(nodes, nodes, nnz, Kind::Stencil27 { n })
}

/// The 27-point stencil: 26 on the diagonal, -1 for every other node within one step.
pub(super) fn stencil27(n: usize, b: &mut Build) {
    for_each_node(n, |i, nb| {
        for &(j, _) in nb {
            b.push(j, if j == i { 26.0 } else { -1.0 });
        }
        b.end_row();
    });
}

/// `elasticity:N`: 3N^3 rows, 9(3N-2)^3 non-zeros (the node count N^3 is checked first).
pub(super) fn plan_elasticity(a: &Args<'_>) -> Result<Plan> {
    let (n, _nodes) = plan_nodes(a)?;
    let m = (3 * n).saturating_sub(2);
    let rows = a.fit("rows", mul(&[3, n, n, n]))?;
    let nnz = a.fit("non-zeros", mul(&[9, m, m, m]))?;
    Plan::exact(rows, rows, nnz, Kind::Elasticity { n })
}

/// The elasticity-like matrix: for nodes i != j sharing an element, with d = pos(j) - pos(i),
/// block K_ab(d) = -(1 + [a == b] + d_a d_b / 4) / |d|^2, which equals K_ba(-d), so the matrix
/// is symmetric. The diagonal block has 0.1 off its diagonal and, on it, 1 + the sum of the
/// magnitudes of the row's other entries: strictly diagonally dominant.
pub(super) fn elasticity(n: usize, b: &mut Build) {
    for_each_node(n, |i, nb| {
        for a in 0..3 {
            let start = b.col.len();
            let mut diag_at = 0;
            let mut off_sum = 0.0;
            for &(j, d) in nb {
                for bb in 0..3 {
                    let v = if j == i {
                        if a == bb {
                            diag_at = b.col.len();
                            0.0
                        } else {
                            0.1
                        }
                    } else {
                        let d2 = d.iter().map(|&x| i32::from(x) * i32::from(x)).sum::<i32>();
                        let same = if a == bb { 1.0 } else { 0.0 };
                        let dd = f64::from(i32::from(d[a]) * i32::from(d[bb]));
                        -(1.0 + same + 0.25 * dd) / f64::from(d2)
                    };
                    off_sum += v.abs();
                    b.push(3 * j + bb, v);
                }
            }
            debug_assert!(b.col.len() > start);
            b.val[diag_at] = 1.0 + off_sum;
            b.end_row();
        }
    });
}

/// Calls `f(node, neighbours)` for every node of an n^3 grid in order; `neighbours` lists the
/// (node, offset) pairs within one step in every coordinate (the node itself included), in
/// increasing node order.
fn for_each_node(n: usize, mut f: impl FnMut(usize, &[(usize, [i8; 3])])) {
    let mut nb: Vec<(usize, [i8; 3])> = Vec::with_capacity(27);
    let (s1, s2) = (n, n * n);
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                nb.clear();
                for dz in -1i8..=1 {
                    for dy in -1i8..=1 {
                        for dx in -1i8..=1 {
                            let (xx, yy, zz) = (
                                x as isize + dx as isize,
                                y as isize + dy as isize,
                                z as isize + dz as isize,
                            );
                            let inside = |v: isize| v >= 0 && (v as usize) < n;
                            if inside(xx) && inside(yy) && inside(zz) {
                                let j = xx as usize + s1 * yy as usize + s2 * zz as usize;
                                nb.push((j, [dx, dy, dz]));
                            }
                        }
                    }
                }
                f(x + s1 * y + s2 * z, &nb);
            }
        }
    }
}

/// `grid2d:N`: N^2 rows, 4N^2 - 3N non-zeros.
pub(super) fn plan_grid2d(a: &Args<'_>) -> Result<Plan> {
    let n = a.size(0)?;
    let rows = a.fit("rows", mul(&[n, n]))?;
    let nnz = (4 * n as u128 * n as u128).saturating_sub(3 * n as u128);
    let nnz = a.fit("non-zeros", Some(nnz))?;
    Plan::exact(rows, rows, nnz, Kind::Grid2d { n })
}

/// The 5-point stencil without the west neighbour (south, self, east, north): 4 on the
/// diagonal, -1 off it; the pattern is not symmetric.
pub(super) fn grid2d(n: usize, b: &mut Build) {
    for y in 0..n {
        for x in 0..n {
            let i = x + n * y;
            if y > 0 {
                b.push(i - n, -1.0);
            }
            b.push(i, 4.0);
            if x + 1 < n {
                b.push(i + 1, -1.0);
            }
            if y + 1 < n {
                b.push(i + n, -1.0);
            }
            b.end_row();
        }
    }
}
