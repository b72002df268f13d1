//! Unit tests of the generators' private parts: spec parsing and the sampling helpers.

use super::random::{distribute, sample_sorted, RandomStream};
use super::rmat::{gallop, merge_sorted, Relabel};
use super::{catalogue, generate, plan};

/// The benchmark suite's sizes (the default specs), checked without generating anything.
#[test]
fn default_specs_have_the_suite_sizes() {
    let dims = |spec: &str| {
        let p = plan(spec).unwrap();
        (p.rows, p.cols, p.nnz)
    };
    assert_eq!(dims("gen:lap3d7"), (4_096_000, 4_096_000, Some(28_518_400)));
    assert_eq!(
        dims("gen:stencil27"),
        (1_000_000, 1_000_000, Some(26_463_592))
    );
    assert_eq!(dims("gen:elasticity"), (331_776, 331_776, Some(25_769_592)));
    assert_eq!(dims("gen:dense"), (2000, 2000, Some(4_000_000)));
    assert_eq!(dims("gen:powerlaw"), (1 << 20, 1 << 20, Some(16 << 20)));
    assert_eq!(
        dims("gen:uniform"),
        (1_000_000, 1_000_000, Some(16_000_000))
    );
    assert_eq!(dims("gen:lp"), (4284, 1_092_610, Some(11_138_400)));
    assert_eq!(dims("gen:circuit"), (1_000_000, 1_000_000, Some(5_399_980)));
    assert_eq!(dims("gen:grid2d"), (525_625, 525_625, Some(2_100_325)));
    assert_eq!(
        dims("gen:emptyrows"),
        (1_000_000, 1_000_000, Some(16_000_000))
    );
    // A band of 1 + 2 entries around the diagonal, clipped: 2 + 3 + 7 * 4 + 3.
    assert_eq!(dims("gen:band:10,2,1"), (10, 10, Some(36)));
    let a = generate("gen:band:10,2,1").unwrap();
    let row = |i: usize| &a.col_ind()[a.row_ptr()[i] as usize..a.row_ptr()[i + 1] as usize];
    assert_eq!(row(0), &[0, 1]);
    assert_eq!(row(5), &[3, 4, 5, 6]);
    assert_eq!(row(9), &[7, 8, 9]);
    for g in catalogue() {
        let spelled = plan(g.default_spec).unwrap();
        let bare = plan(&format!("gen:{}", g.name)).unwrap();
        assert_eq!(spelled, bare, "{}", g.name);
        assert_eq!(g.args.split(',').count(), g.default_spec.split(',').count());
    }
}

#[test]
fn distribute_is_exact_proportional_and_capped() {
    assert_eq!(distribute(10, &[1.0, 1.0, 2.0], 100), vec![3, 2, 5]);
    assert_eq!(distribute(12, &[1.0, 100.0, 1.0], 5), vec![4, 5, 3]);
    assert_eq!(distribute(15, &[1.0, 100.0, 1.0], 5), vec![5, 5, 5]);
    assert_eq!(distribute(0, &[1.0, 2.0], 5), vec![0, 0]);
}

#[test]
fn gallop_and_merge_agree_with_the_obvious_versions() {
    let a: Vec<u64> = (0..200).map(|i| i * 3).collect();
    for from in [0, 5, 100, 199, 200] {
        for x in [0, 1, 3, 4, 299, 300, 597, 598, 1000] {
            let want = from + a[from..].partition_point(|&y| y < x);
            assert_eq!(gallop(&a, from, x), want, "from {from} x {x}");
        }
    }
    let b: Vec<u64> = vec![1, 2, 4, 700, 701];
    let mut want: Vec<u64> = a.iter().chain(&b).copied().collect();
    want.sort_unstable();
    assert_eq!(merge_sorted(&a, &b), want);
    assert_eq!(merge_sorted(&[], &b), b);
    assert_eq!(merge_sorted(&b, &[]), b);
}

#[test]
fn relabelling_is_a_bijection() {
    for scale in [0, 1, 2, 5, 11] {
        let r = Relabel::new(&mut RandomStream::new("t", 1, 0), scale);
        let mut seen = vec![false; 1 << scale];
        for x in 0..1u64 << scale {
            let y = r.apply(x) as usize;
            assert!(!seen[y], "scale {scale}: {y} twice");
            seen[y] = true;
        }
    }
}

#[test]
fn sampled_columns_are_distinct_sorted_and_in_range() {
    let mut s = RandomStream::new("t", 3, 0);
    let (mut out, mut buf) = (Vec::new(), Vec::new());
    for (k, n) in [
        (0, 5),
        (5, 5),
        (3, 100),
        (40, 100),
        (99, 100),
        (1000, 1 << 30),
    ] {
        out.clear();
        sample_sorted(&mut s, k, n, &mut out, &mut buf);
        assert_eq!(out.len(), k);
        assert!(out.windows(2).all(|w| w[0] < w[1]));
        assert!(out.iter().all(|&c| (c as usize) < n));
    }
}
