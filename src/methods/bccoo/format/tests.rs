//! Unit tests of the format: the paper's figures, hand-counted blocks, the stored layout.
#![forbid(unsafe_code)]

use super::*;
use crate::methods::bccoo::params::{ColMode, FormatParams, Shape};

/// Eq. 1's matrix A with a..p = 1..16.
pub(crate) fn paper_a() -> Csr<f64> {
    let e = [
        (0, 2, 1.0),
        (0, 6, 2.0),
        (0, 7, 3.0),
        (1, 2, 4.0),
        (1, 3, 5.0),
        (1, 6, 6.0),
        (2, 4, 7.0),
        (2, 5, 8.0),
        (2, 6, 9.0),
        (2, 7, 10.0),
        (3, 0, 11.0),
        (3, 1, 12.0),
        (3, 4, 13.0),
        (3, 5, 14.0),
        (3, 6, 15.0),
        (3, 7, 16.0),
    ];
    Csr::from_triplets(4, 8, &e).unwrap()
}

/// Eq. 2's matrix C with 1x1 blocks A'..P' = 1..16.
pub(crate) fn paper_c() -> Csr<f64> {
    let pos = [
        (0, 0),
        (0, 2),
        (0, 4),
        (0, 6),
        (0, 7),
        (1, 3),
        (1, 6),
        (2, 1),
        (2, 3),
        (2, 5),
        (3, 1),
        (3, 2),
        (3, 3),
        (3, 5),
        (3, 6),
        (3, 7),
    ];
    let e: Vec<_> = pos
        .iter()
        .enumerate()
        .map(|(k, &(r, c))| (r, c, (k + 1) as f64))
        .collect();
    Csr::from_triplets(4, 8, &e).unwrap()
}

fn fp(bh: u32, bw: u32, slices: u32, tile: u32, word_bits: u32, col: ColMode) -> FormatParams {
    FormatParams {
        shape: Shape { bw, bh },
        slices,
        tile,
        word_bits,
        col,
    }
}

// a..p
const A: f64 = 1.0;
const B: f64 = 2.0;
const C: f64 = 3.0;
const D: f64 = 4.0;
const E: f64 = 5.0;
const F: f64 = 6.0;
const G: f64 = 7.0;
const H: f64 = 8.0;
const I: f64 = 9.0;
const J: f64 = 10.0;
const K: f64 = 11.0;
const L: f64 = 12.0;
const M: f64 = 13.0;
const N: f64 = 14.0;
const O: f64 = 15.0;
const P: f64 = 16.0;

#[test]
fn paper_figures_2_and_3_bccoo_of_a_with_2x2_blocks() {
    let a = paper_a();
    let blk = block(&a, Shape { bw: 2, bh: 2 }, 1).unwrap();
    // Figure 3: Bit Flag = [1 0 1 1 0], Col_index = [1 3 0 2 3].
    assert_eq!(blk.bit_flags(), [1, 0, 1, 1, 0]);
    assert_eq!(blk.col, [1, 3, 0, 2, 3]);
    // Figure 2's row index [0 0 1 1 1] is what the stops encode: block rows end at 1, 4.
    assert_eq!(blk.ends, [1, 4]);
    // Figure 2/3: Value = ([a 0 b c 0 0 g h i j], [d e f 0 k l m n o p]).
    assert_eq!(
        blk.value_arrays(a.values()),
        vec![
            vec![A, 0.0, B, C, 0.0, 0.0, G, H, I, J],
            vec![D, E, F, 0.0, K, L, M, N, O, P]
        ]
    );
    // The stored layout reads back to the same arrays (then padding: flags 1, zeros).
    let f = layout(&a, &blk, &fp(2, 2, 1, 4, 8, ColMode::U16), 32).unwrap();
    assert_eq!(f.threads, 32);
    assert_eq!(f.logical_bit_flags()[..5], [1, 0, 1, 1, 0]);
    assert!(f.logical_bit_flags()[5..].iter().all(|&b| b == 1));
    assert_eq!(f.logical_cols()[..5], [1, 3, 0, 2, 3]);
    let v = f.logical_values();
    assert_eq!(v[0][..10], [A, 0.0, B, C, 0.0, 0.0, G, H, I, J]);
    assert_eq!(v[1][..10], [D, E, F, 0.0, K, L, M, N, O, P]);
    assert!(v.iter().all(|r| r[10..].iter().all(|&x| x == 0.0)));
}

#[test]
fn paper_figure_4_bccoo_plus_of_a_with_two_slices() {
    let a = paper_a();
    let blk = block(&a, Shape { bw: 2, bh: 2 }, 2).unwrap();
    assert_eq!(blk.slice_width, 4);
    // Figure 4b: Bit Flag = [0 0 0 1 0], Col_index = [1 0 3 2 3] (columns of A, not B).
    assert_eq!(blk.bit_flags(), [0, 0, 0, 1, 0]);
    assert_eq!(blk.col, [1, 0, 3, 2, 3]);
    // Value = ([a 0 0 0 b c g h i j], [d e k l f 0 m n o p]).
    assert_eq!(
        blk.value_arrays(a.values()),
        vec![
            vec![A, 0.0, 0.0, 0.0, B, C, G, H, I, J],
            vec![D, E, K, L, F, 0.0, M, N, O, P]
        ]
    );
    let f = layout(&a, &blk, &fp(2, 2, 2, 8, 8, ColMode::U16), 32).unwrap();
    assert_eq!(f.out_len(), 2 * 2 * 2);
    assert_eq!(f.logical_cols()[..5], [1, 0, 3, 2, 3]);
}

#[test]
fn paper_figure_6_first_result_entries_of_c() {
    let c = paper_c();
    let blk = block(&c, Shape { bw: 1, bh: 1 }, 1).unwrap();
    // Figure 6a / Figure 7 (the 16-bit version; Figure 6a's printed array drops a 1).
    assert_eq!(
        blk.bit_flags(),
        [1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0]
    );
    assert_eq!(blk.col, [0, 2, 4, 6, 7, 3, 6, 1, 3, 5, 1, 2, 3, 5, 6, 7]);
    assert_eq!(
        blk.value_arrays(c.values()),
        vec![(1..=16).map(|v| v as f64).collect::<Vec<_>>()]
    );
    // Figure 6b: four threads of four blocks: Result Entry = [0 0 2 3].
    let f = layout(&c, &blk, &fp(1, 1, 1, 4, 8, ColMode::U16), 32).unwrap();
    assert_eq!(f.res_entry[..4], [0, 0, 2, 3]);
    // The padding threads (4..32) start after the last of the 4 block rows.
    assert!(f.res_entry[4..].iter().all(|&r| r == 4));
    // §2.4's check: with 4 threads per workgroup every tile but thread 0's has a stop, so
    // Figure 9's start flags are [0 1 1 1] and the scan is needed; a workgroup of the
    // padding threads has no stop at all.
    let info = f.wg_info(32);
    assert_eq!(info, [0]);
}

#[test]
fn every_block_shape_of_a_small_matrix_has_the_hand_counted_blocks() {
    // A = [[1 2 0 0 5], [0 3 0 0 0], [0 0 0 0 0], [4 0 0 6 7]] (row 2 empty).
    let a = Csr::from_triplets(
        4,
        5,
        &[
            (0, 0, 1.0),
            (0, 1, 2.0),
            (0, 4, 5.0),
            (1, 1, 3.0),
            (3, 0, 4.0),
            (3, 3, 6.0),
            (3, 4, 7.0),
        ],
    )
    .unwrap();
    // (bh, bw) -> (block columns, stops) by hand.
    type Case = ((u32, u32), &'static [u32], &'static [u32]);
    let cases: &[Case] = &[
        ((1, 1), &[0, 1, 4, 1, 0, 0, 3, 4], &[2, 3, 4, 7]),
        ((1, 2), &[0, 2, 0, 0, 0, 1, 2], &[1, 2, 3, 6]),
        ((1, 4), &[0, 1, 0, 0, 0, 1], &[1, 2, 3, 5]),
        ((2, 1), &[0, 1, 4, 0, 3, 4], &[2, 5]),
        ((2, 2), &[0, 2, 0, 1, 2], &[1, 4]),
        ((2, 4), &[0, 1, 0, 1], &[1, 3]),
        ((3, 1), &[0, 1, 4, 0, 3, 4], &[2, 5]),
        ((3, 2), &[0, 2, 0, 1, 2], &[1, 4]),
        ((3, 4), &[0, 1, 0, 1], &[1, 3]),
        ((4, 1), &[0, 1, 3, 4], &[3]),
        ((4, 2), &[0, 1, 2], &[2]),
        ((4, 4), &[0, 1], &[1]),
    ];
    for &((bh, bw), cols, ends) in cases {
        let blk = block(&a, Shape { bw, bh }, 1).unwrap();
        assert_eq!(blk.col, cols, "{bh}x{bw} columns");
        assert_eq!(blk.ends, ends, "{bh}x{bw} stops");
        // Every value lands once, at its own row and column inside its block.
        let arrays = blk.value_arrays(a.values());
        let total: f64 = arrays.iter().flatten().sum();
        assert_eq!(total, 28.0, "{bh}x{bw}");
        for (k, &s) in blk.slot.iter().enumerate() {
            let (b, r) = (
                s as usize / (bw * bh) as usize,
                s as usize % (bw * bh) as usize,
            );
            let row = (0..4).find(|&r| a.row_ptr()[r + 1] as usize > k).unwrap();
            let c = a.col_ind()[k] as usize;
            assert_eq!(r / bw as usize, row % bh as usize);
            assert_eq!(r % bw as usize, c % bw as usize);
            assert_eq!(blk.col[b] as usize, c / bw as usize);
        }
    }
}

#[test]
fn an_empty_block_row_gets_one_zero_block_with_a_row_stop() {
    let a = Csr::from_triplets(3, 3, &[(0, 1, 1.0), (2, 2, 2.0)]).unwrap();
    let blk = block(&a, Shape { bw: 1, bh: 1 }, 1).unwrap();
    assert_eq!(blk.col, [1, 0, 2]);
    assert_eq!(blk.bit_flags(), [0, 0, 0]);
    assert_eq!(blk.value_arrays(a.values()), vec![vec![1.0, 0.0, 2.0]]);
    let e = Csr::<f64>::from_triplets(5, 0, &[]).unwrap();
    let blk = block(&e, Shape { bw: 2, bh: 2 }, 1).unwrap();
    assert_eq!(blk.blocks(), 3);
    assert_eq!(blk.ends, [0, 1, 2]);
}

#[test]
fn duplicate_entries_get_their_own_blocks_and_slots() {
    let a = Csr::from_triplets(2, 2, &[(0, 1, 1.0), (0, 1, 2.0), (1, 1, 3.0)]).unwrap();
    let blk = block(&a, Shape { bw: 2, bh: 2 }, 1).unwrap();
    assert_eq!(blk.col, [0, 0]);
    let mut slots = blk.slot.clone();
    slots.sort();
    slots.dedup();
    assert_eq!(slots.len(), 3, "one slot per entry");
    // Block 0 takes the first (0, 1) and (1, 1); the second (0, 1) opens block 1.
    let v = blk.value_arrays(a.values());
    assert_eq!(v, vec![vec![0.0, 1.0, 0.0, 2.0], vec![0.0, 3.0, 0.0, 0.0]]);
}

#[test]
fn delta_compression_escapes_big_and_minus_one_differences() {
    // One row, block columns 0, 5, 4, 70000, 70001, 3 -> with tile 8 the deltas are
    // [-1 (first), 5, -1 (true -1), -1 (> 32767), 1, -1 (< -32767)].
    let cols = [0usize, 5, 4, 70000, 70001, 3];
    let e: Vec<_> = cols
        .iter()
        .enumerate()
        .map(|(r, &c)| (r, c, 1.0 + r as f64))
        .collect();
    let a = Csr::from_triplets(6, 70002, &e).unwrap();
    let f = build(&a, &fp(1, 1, 1, 8, 8, ColMode::Delta), 32).unwrap();
    let ColArrays::Delta { delta, full } = &f.col else {
        panic!("delta mode")
    };
    let logical: Vec<i16> = (0..6).map(|b| delta[position(b, 8)]).collect();
    assert_eq!(logical, [-1, 5, -1, -1, 1, -1]);
    assert_eq!(f.escapes, 3);
    assert_eq!(full[position(3, 8)], 70000);
    assert_eq!(
        f.logical_cols()[..6],
        cols.map(|c| c as u32),
        "decoded like the kernel"
    );
    // Second thread's tile starts with an escape again.
    assert_eq!(delta[position(8, 8)], -1);
}

#[test]
fn words_and_positions_are_transposed_per_warp() {
    // 40 threads of 8 blocks -> 64 threads after padding to 32: thread 33 is lane 1 of
    // warp 1.
    assert_eq!(position(33 * 8 + 3, 8), 32 * 8 + 3 * 32 + 1);
    assert_eq!(word_index(33, 1, 2), 32 * 2 + 32 + 1);
    let n = 40 * 8;
    let e: Vec<_> = (0..n).map(|r| (r, r % 7, 1.0)).collect();
    let a = Csr::from_triplets(n, 7, &e).unwrap();
    for w in [8, 16, 32] {
        let f = build(&a, &fp(1, 1, 1, 8, w, ColMode::U16), 32).unwrap();
        assert_eq!(f.threads, 64);
        assert_eq!(
            f.bits.len(),
            64 * (8usize.div_ceil(w as usize)) * w as usize / 8
        );
        assert!((0..n).all(|b| f.is_stop(b)));
        assert!((n..f.padded_blocks()).all(|b| !f.is_stop(b)));
        assert_eq!(f.res_entry[33], 33 * 8);
    }
}

#[test]
fn wg_info_marks_skips_waits_and_publishes() {
    // One long row of 100 blocks then 100 rows of one block, tile 8, workgroups of 32
    // threads (256 blocks).
    let mut e: Vec<_> = (0..100).map(|c| (0usize, c, 1.0)).collect();
    e.extend((1..=300).map(|r| (r, 0usize, 1.0)));
    let a = Csr::from_triplets(301, 100, &e).unwrap();
    let f = build(&a, &fp(1, 1, 1, 8, 8, ColMode::U16), 32).unwrap();
    assert_eq!(f.blocks, 400);
    let info = f.wg_info(32);
    assert_eq!(info.len(), 2);
    // Workgroup 0 holds the long row (threads 0..12 have no stop) and ends at a stop.
    assert_eq!(info[0], 0);
    // Workgroup 1: blocks 256..400 all stops, then padding tiles without stops.
    assert_eq!(info[1], 0);
    // A row crossing the workgroup boundary: 300 blocks in row 0.
    let e: Vec<_> = (0..300).map(|c| (0usize, c, 1.0)).collect();
    let a = Csr::from_triplets(1, 300, &e).unwrap();
    let f = build(&a, &fp(1, 1, 1, 8, 8, ColMode::U16), 32).unwrap();
    assert_eq!(f.wg_info(32), [WG_PUBLISH, WG_WAIT]);
    // Only stops: every workgroup skips the scan.
    let e: Vec<_> = (0..512).map(|r| (r, 0usize, 1.0)).collect();
    let a = Csr::from_triplets(512, 1, &e).unwrap();
    let f = build(&a, &fp(1, 1, 1, 8, 8, ColMode::U16), 32).unwrap();
    assert_eq!(f.wg_info(32), [WG_SKIP_SCAN, WG_SKIP_SCAN]);
}

#[test]
fn value_map_points_at_every_value_and_padding_stays_zero() {
    let (_, a) = crate::io::load("gen:random:300,700,9,5").unwrap();
    for (bh, bw) in [(1, 1), (3, 2), (4, 4)] {
        let f = build(&a, &fp(bh, bw, 1, 16, 16, ColMode::U16), 64).unwrap();
        let mut seen = vec![false; f.values.len()];
        for (k, &s) in f.value_slot.iter().enumerate() {
            assert!(!seen[s as usize]);
            seen[s as usize] = true;
            assert_eq!(f.values[s as usize], a.values()[k]);
        }
        assert!(f.values.iter().zip(&seen).all(|(&v, &s)| s || v == 0.0));
    }
}

#[test]
fn the_estimated_escape_rate_is_that_of_consecutive_1x1_blocks() {
    // far_jumps: deltas between consecutive 1x1 blocks beyond a short (the layout escapes
    // these, except where a tile starts, which escapes anyway).
    for spec in [
        "gen:random:2000,300000,20,3",
        "gen:lap3d7:40",
        "gen:uniform:50000,8,2",
    ] {
        let (_, a) = crate::io::load(spec).unwrap();
        let est = facts(&a).far_jumps;
        let blk = block(&a, Shape { bw: 1, bh: 1 }, 1).unwrap();
        let far = blk
            .col
            .windows(2)
            .filter(|w| {
                let d = w[1] as i64 - w[0] as i64;
                d == -1 || !(-32767..=32767).contains(&d)
            })
            .count();
        let real = far as f64 / (blk.blocks() - 1) as f64;
        assert!(
            (est - real).abs() < 0.01,
            "{spec}: estimated {est}, real {real}"
        );
    }
}

#[test]
fn estimated_block_counts_are_exact_without_sampling() {
    let (_, a) = crate::io::load("gen:random:200,300,6,3").unwrap();
    let f = facts(&a);
    for s in Shape::all() {
        let blk = block(&a, s, 1).unwrap();
        assert_eq!(f.blocks_of(s), blk.blocks() as f64, "{s}");
    }
}
