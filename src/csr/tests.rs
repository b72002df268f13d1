//! Unit tests of `csr.rs`.

use super::*;

/// Large enough for the parallel passes (several chunks): 2^21 rows of one entry, then of
/// two entries in reverse order.
#[test]
fn large_matrices_report_the_first_bad_column_and_sort_rows_like_small_ones() {
    let n = 1usize << 21;
    let row_ptr: Vec<i32> = (0..=n as i32).collect();
    let mut col: Vec<i32> = (0..n as i32).map(|r| r % 7).collect();
    let values = vec![1.0f64; n];
    col[1_500_000] = 9;
    col[n - 1] = -1;
    fn parts<'a>(
        n: usize,
        row_ptr: &'a [i32],
        c: &'a [i32],
        values: &'a [f64],
    ) -> CsrParts<'a, f64> {
        CsrParts {
            rows: n as i64,
            cols: 7,
            nnz: n as i64,
            row_ptr: Indices::I32(row_ptr),
            col_ind: Indices::I32(c),
            values,
            base: IndexBase::Zero,
        }
    }
    let e = Csr::from_parts(parts(n, &row_ptr, &col, &values)).unwrap_err();
    assert!(
        e.detail()
            .starts_with("col_ind[1500000] = 9 (row 1500000) is out of range"),
        "{}",
        e.detail()
    );
    col[1_500_000] = 3;
    col[n - 1] = 2;
    let a = Csr::from_parts(parts(n, &row_ptr, &col, &values)).unwrap();
    assert_eq!(a.col_ind()[1_500_000], 3);
    assert!(a.input_map().is_none(), "one entry per row is sorted");
    // Two entries per row, the last row reversed: only it is reordered.
    let rp2: Vec<i32> = (0..=n as i32 / 2).map(|r| 2 * r).collect();
    let mut c2: Vec<i32> = (0..n as i32).map(|k| k % 2).collect();
    c2.swap(n - 2, n - 1);
    let p2 = CsrParts {
        rows: (n / 2) as i64,
        cols: 2,
        nnz: n as i64,
        row_ptr: Indices::I32(&rp2),
        col_ind: Indices::I32(&c2),
        values: &values,
        base: IndexBase::Zero,
    };
    let b = Csr::from_parts(p2).unwrap();
    assert_eq!(&b.col_ind()[n - 2..], &[0, 1]);
    let map = b.input_map().expect("a row was reordered");
    assert_eq!(
        (map[n - 2], map[n - 1], map[0]),
        (n as u32 - 1, n as u32 - 2, 0)
    );
}

fn parts<'a>(
    rows: i64,
    cols: i64,
    rp: &'a [i32],
    ci: &'a [i32],
    v: &'a [f64],
    base: IndexBase,
) -> CsrParts<'a, f64> {
    CsrParts {
        rows,
        cols,
        nnz: ci.len() as i64,
        row_ptr: Indices::I32(rp),
        col_ind: Indices::I32(ci),
        values: v,
        base,
    }
}

#[test]
fn unsorted_columns_are_sorted_and_caller_order_is_remembered_for_updates() {
    // [[0 2 1], [3 0 0]] given with row 0's columns out of order.
    let mut a = Csr::from_parts(parts(
        2,
        3,
        &[0, 2, 3],
        &[2, 1, 0],
        &[1.0, 2.0, 3.0],
        IndexBase::Zero,
    ))
    .unwrap();
    assert_eq!(a.col_ind(), &[1, 2, 0]);
    assert_eq!(a.values(), &[2.0, 1.0, 3.0]);
    a.set_values_from_input(&[10.0, 20.0, 30.0]).unwrap();
    assert_eq!(a.values(), &[20.0, 10.0, 30.0]);
}

#[test]
fn one_based_i64_input_gives_the_same_matrix_as_zero_based_i32() {
    let rp = [1i64, 3, 3, 4];
    let ci = [1i64, 3, 2];
    let v = [1.0, 2.0, 3.0];
    let a = Csr::from_parts(CsrParts {
        rows: 3,
        cols: 3,
        nnz: 3,
        row_ptr: Indices::I64(&rp),
        col_ind: Indices::I64(&ci),
        values: &v,
        base: IndexBase::One,
    })
    .unwrap();
    let b = Csr::from_parts(parts(3, 3, &[0, 2, 2, 3], &[0, 2, 1], &v, IndexBase::Zero)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn malformed_csr_is_rejected_with_a_sentence_naming_the_entry() {
    let v = [1.0; 3];
    let e =
        Csr::from_parts(parts(3, 3, &[0, 2, 1, 3], &[0, 1, 2], &v, IndexBase::Zero)).unwrap_err();
    assert_eq!(
        e.detail(),
        "row_ptr is not non-decreasing: row_ptr[1] = 2 > row_ptr[2] = 1"
    );
    let e =
        Csr::from_parts(parts(3, 3, &[1, 2, 2, 3], &[0, 1, 2], &v, IndexBase::Zero)).unwrap_err();
    assert!(e.detail().starts_with("row_ptr[0] = 1"), "{}", e.detail());
    let e = Csr::from_parts(parts(2, 3, &[0, 1, 2], &[0, 1, 2], &v, IndexBase::Zero)).unwrap_err();
    assert!(
        e.detail().contains("row_ptr[rows] = row_ptr[2] = 2"),
        "{}",
        e.detail()
    );
    let e =
        Csr::from_parts(parts(3, 3, &[0, 1, 2, 3], &[0, 3, 2], &v, IndexBase::Zero)).unwrap_err();
    assert!(
        e.detail()
            .starts_with("col_ind[1] = 3 (row 1) is out of range"),
        "{}",
        e.detail()
    );
    let e =
        Csr::from_parts(parts(3, 3, &[1, 2, 3, 4], &[1, 0, 2], &v, IndexBase::One)).unwrap_err();
    assert!(
        e.detail().starts_with("col_ind[1] = 0 (row 2)"),
        "{}",
        e.detail()
    );
    assert!(e.status() == crate::types::Status::InvalidMatrix);
    let e = Csr::from_parts(parts(-1, 3, &[0], &[], &[], IndexBase::Zero)).unwrap_err();
    assert_eq!(e.status(), crate::types::Status::InvalidSize);
    let e = Csr::<f64>::from_triplets(1 << 31, 1, &[]).unwrap_err();
    assert_eq!(e.status(), crate::types::Status::NotSupported);
}

/// Found by fuzzing the C API (CI, c_api target): a base-1 int64 column of `i64::MIN` overflowed
/// the rebase `c - base` (a panic where overflow is checked, the fuzz and test builds). Every
/// extreme column is now a plain out-of-range error at either base.
#[test]
fn extreme_int64_columns_are_out_of_range_errors_not_overflows() {
    let v = [1.0; 2];
    for (base, rp) in [
        (IndexBase::One, [1i64, 2, 3]),
        (IndexBase::Zero, [0i64, 1, 2]),
    ] {
        for bad in [i64::MIN, i64::MIN + 1, i64::MAX, -1, 1 << 40] {
            let ci = [base.offset(), bad];
            let e = Csr::from_parts(CsrParts {
                rows: 2,
                cols: 3,
                nnz: 2,
                row_ptr: Indices::I64(&rp),
                col_ind: Indices::I64(&ci),
                values: &v,
                base,
            })
            .unwrap_err();
            assert_eq!(e.status(), crate::types::Status::InvalidMatrix);
            assert!(
                e.detail().starts_with(&format!("col_ind[1] = {bad} (row ")),
                "{}",
                e.detail()
            );
        }
    }
}

/// The direct create's one read-only pass (`CsrParts::stats_as_is`): on arrays tessera's
/// CSR takes as they are, the copying path's statistics to the bit (generated matrices of
/// every shape the tests use: empty rows, one dense row, wide, tall, none at all, power-law,
/// stencils, dense); on every other array (int64, base 1, unsorted, each malformed one)
/// `None`, so that the copying path converts, sorts or words the error.
#[test]
fn stats_as_is_equal_the_copying_paths_and_refuse_what_it_must_change() {
    for spec in [
        "gen:emptyrows:2000,8,3",
        "gen:onerow:500,3000,3000",
        "gen:random:4,100000,700,2",
        "gen:random:100000,4,3,2",
        "gen:empty:7,9",
        "gen:empty:0,0",
        "gen:circuit:3000,5,2,2500,4",
        "gen:powerlaw:11,8,2",
        "gen:elasticity:4",
        "gen:dense:37,53",
        "gen:lap3d7:9",
    ] {
        let (_, a) = crate::io::load(spec).unwrap();
        let p = parts(
            a.rows() as i64,
            a.cols() as i64,
            a.row_ptr(),
            a.col_ind(),
            a.values(),
            IndexBase::Zero,
        );
        let copied = Csr::from_parts(p).unwrap().stats();
        let as_is = p.stats_as_is().expect(spec);
        assert_eq!(as_is, copied, "{spec}");
        // To the bit (PartialEq on f64 would let -0.0 and 0.0 pass).
        for (x, y) in [
            (as_is.mean, copied.mean),
            (as_is.std_dev, copied.std_dev),
            (as_is.col_spread, copied.col_spread),
        ] {
            assert_eq!(x.to_bits(), y.to_bits(), "{spec}");
        }
        if a.nnz() > 0 {
            let rp1: Vec<i32> = a.row_ptr().iter().map(|&v| v + 1).collect();
            let ci1: Vec<i32> = a.col_ind().iter().map(|&v| v + 1).collect();
            let (r, c) = (a.rows() as i64, a.cols() as i64);
            let one = parts(r, c, &rp1, &ci1, a.values(), IndexBase::One);
            assert_eq!(one.stats_as_is(), None, "{spec}: base 1");
            let rp64: Vec<i64> = a.row_ptr().iter().map(|&v| v as i64).collect();
            let ci64: Vec<i64> = a.col_ind().iter().map(|&v| v as i64).collect();
            let wide = CsrParts {
                row_ptr: Indices::I64(&rp64),
                col_ind: Indices::I64(&ci64),
                ..p
            };
            assert_eq!(wide.stats_as_is(), None, "{spec}: int64");
        }
    }
    let v = [1.0; 3];
    let z = IndexBase::Zero;
    // Sound and sorted; duplicates are sorted too.
    assert!(parts(2, 3, &[0, 2, 3], &[1, 1, 2], &v, z)
        .stats_as_is()
        .is_some());
    // Each of these the copying path refuses or sorts.
    for (what, p) in [
        ("unsorted row", parts(2, 3, &[0, 2, 3], &[2, 1, 0], &v, z)),
        (
            "row_ptr decreasing",
            parts(3, 3, &[0, 2, 1, 3], &[0, 1, 2], &v, z),
        ),
        (
            "row_ptr[0] not 0",
            parts(3, 3, &[1, 2, 2, 3], &[0, 1, 2], &v, z),
        ),
        (
            "row_ptr past nnz",
            parts(3, 3, &[0, 4, 2, 3], &[0, 1, 2], &v, z),
        ),
        ("last not nnz", parts(2, 3, &[0, 1, 2], &[0, 1, 2], &v, z)),
        (
            "column = cols",
            parts(3, 3, &[0, 1, 2, 3], &[0, 3, 2], &v, z),
        ),
        (
            "negative column",
            parts(3, 3, &[0, 1, 2, 3], &[0, -1, 2], &v, z),
        ),
        ("negative rows", parts(-1, 3, &[0], &[], &[], z)),
        (
            "row_ptr too short",
            parts(3, 3, &[0, 1, 3], &[0, 1, 2], &v, z),
        ),
        (
            "values too short",
            parts(3, 3, &[0, 1, 2, 3], &[0, 1, 2], &v[..2], z),
        ),
    ] {
        assert_eq!(p.stats_as_is(), None, "{what}");
        let sorted_or_refused = match Csr::from_parts(p) {
            Ok(c) => c.input_map().is_some(),
            Err(_) => true,
        };
        assert!(
            sorted_or_refused,
            "{what}: the copying path takes it as it is"
        );
    }
}

#[test]
fn statistics_of_a_hand_computed_matrix() {
    // rows of length 2, 0, 4: mean 2, variance (0 + 4 + 4)/3
    let a = Csr::from_triplets(
        3,
        10,
        &[
            (0, 1, 1.0),
            (0, 4, 1.0),
            (2, 0, 1.0),
            (2, 3, 1.0),
            (2, 5, 1.0),
            (2, 9, 1.0),
        ],
    )
    .unwrap();
    let s = a.stats();
    assert_eq!(
        (s.rows, s.cols, s.nnz, s.min, s.max, s.empty_rows),
        (3, 10, 6, 0, 4, 1)
    );
    assert!((s.mean - 2.0).abs() < 1e-15);
    assert!((s.std_dev - (8.0f64 / 3.0).sqrt()).abs() < 1e-12);
    assert!((s.col_spread - (4.0 + 10.0) / 2.0).abs() < 1e-12);
}

#[test]
fn plain_product_and_transpose_of_a_hand_computed_matrix() {
    // A = [[1 2], [0 3], [4 0]], x = [1, 2] -> A x = [5, 6, 4]; A^T [1,1,1] = [5, 5]
    let a =
        Csr::from_triplets(3, 2, &[(0, 0, 1.0), (0, 1, 2.0), (1, 1, 3.0), (2, 0, 4.0)]).unwrap();
    let mut y = [f64::NAN; 3];
    a.spmv_f64(Operation::NonTranspose, 1.0, &[1.0, 2.0], 0.0, &mut y);
    assert_eq!(y, [5.0, 6.0, 4.0]);
    let mut y = [1.0, 1.0];
    a.spmv_f64(Operation::Transpose, 2.0, &[1.0, 1.0, 1.0], -1.0, &mut y);
    assert_eq!(y, [9.0, 9.0]);
}

/// The fast path of `from_parts` (int32 arrays checked by vectorized passes) gives what the
/// checked path gives, on thousands of small random arrays, sound or not: the same CSR (its
/// value map too), or the same status and sentence.
#[test]
fn the_fast_path_matches_the_checked_path_on_random_arrays() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rand = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n.max(1)
    };
    let mut fast_taken = 0;
    for case in 0..20_000 {
        let rows = rand(6) as usize;
        let cols = rand(6) as i64;
        let base = rand(2) as i64;
        let mut lens: Vec<i64> = (0..rows).map(|_| rand(4) as i64).collect();
        let mut row_ptr = vec![base];
        for l in &lens {
            row_ptr.push(row_ptr.last().unwrap() + l);
        }
        let nnz = *row_ptr.last().unwrap() - base;
        // Sorted rows mostly; a shuffled or out-of-range column now and then.
        let mut col: Vec<i64> = Vec::new();
        for l in lens.iter_mut() {
            let mut r: Vec<i64> = (0..*l)
                .map(|_| rand(cols.max(1) as u64) as i64 + base)
                .collect();
            if rand(4) != 0 {
                r.sort();
            }
            col.extend(r);
        }
        match rand(12) {
            0 if !col.is_empty() => {
                let k = rand(col.len() as u64) as usize;
                col[k] = [-1, cols + base, base - 1][rand(3) as usize];
            }
            1 if rows > 0 => {
                let k = 1 + rand(rows as u64) as usize;
                row_ptr[k] += [-1i64, 1][rand(2) as usize];
            }
            2 => row_ptr[0] += 1,
            _ => {}
        }
        let rp: Vec<i32> = row_ptr.iter().map(|&v| v as i32).collect();
        let ci: Vec<i32> = col.iter().map(|&v| v as i32).collect();
        let v: Vec<f64> = (0..ci.len()).map(|k| k as f64 + 0.5).collect();
        let p = CsrParts {
            rows: rows as i64,
            cols,
            nnz,
            row_ptr: Indices::I32(&rp),
            col_ind: Indices::I32(&ci),
            values: &v,
            base: if base == 1 {
                IndexBase::One
            } else {
                IndexBase::Zero
            },
        };
        let what = format!("case {case}: {p:?}");
        let fast = Csr::from_sound_i32(&p).unwrap();
        let checked = Csr::from_parts_checked(p);
        match (&fast, &checked) {
            (Some(f), Ok(c)) => {
                assert_eq!(f, c, "{what}");
                fast_taken += 1;
            }
            (None, Ok(c)) => assert!(c.input_map().is_some(), "{what}: sound and sorted"),
            (None, Err(_)) => {}
            (Some(_), Err(e)) => panic!("{what}: the fast path took what the checks refuse: {e}"),
        }
        let whole = Csr::from_parts(p).map_err(|e| (e.status(), e.detail().to_string()));
        let checked = checked.map_err(|e| (e.status(), e.detail().to_string()));
        assert_eq!(whole, checked, "{what}");
    }
    assert!(
        fast_taken > 5_000,
        "the fast path took only {fast_taken} cases"
    );
}

/// On arrays large enough for parallel column scans, a column falling inside a row is found
/// wherever the chunks of 1 to 8 threads would end, and rows sorted across those ends are kept
/// as they are.
#[test]
fn the_fast_paths_parallel_scan_sees_descents_at_every_chunk_end() {
    let n = 1usize << 21;
    // Rows of 64 entries, columns 0..63 in order.
    let rows = n / 64;
    let row_ptr: Vec<i32> = (0..=rows as i32).map(|r| r * 64).collect();
    let sorted: Vec<i32> = (0..n as i32).map(|k| k % 64).collect();
    let values = vec![1.0f64; n];
    fn parts<'a>(row_ptr: &'a [i32], c: &'a [i32], values: &'a [f64]) -> CsrParts<'a, f64> {
        CsrParts {
            rows: row_ptr.len() as i64 - 1,
            cols: 64,
            nnz: c.len() as i64,
            row_ptr: Indices::I32(row_ptr),
            col_ind: Indices::I32(c),
            values,
            base: IndexBase::Zero,
        }
    }
    assert!(Csr::from_sound_i32(&parts(&row_ptr, &sorted, &values))
        .unwrap()
        .is_some());
    for t in 1..=8usize {
        // The first index of chunk 2 with t threads, moved off a row start so the descent
        // falls inside a row.
        let end = n.div_ceil(t);
        let k = if end % 64 == 0 { end + 1 } else { end };
        if k >= n {
            continue;
        }
        let mut c = sorted.clone();
        c.swap(k - 1, k);
        assert!(c[k - 1] > c[k], "t = {t}: a descent at {k}");
        assert!(
            Csr::from_sound_i32(&parts(&row_ptr, &c, &values))
                .unwrap()
                .is_none(),
            "t = {t}: the descent at {k} was missed"
        );
        let a = Csr::from_parts(parts(&row_ptr, &c, &values)).unwrap();
        assert!(a.input_map().is_some(), "t = {t}: the row was sorted");
    }
}
