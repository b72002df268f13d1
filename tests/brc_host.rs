//! BRC on the host backend, end to end through the safe Rust API: every shared matrix and the
//! generated edge cases, plus BRC's own (sigma > mu: the coarsening path; one dense row; rows
//! all of one length: the ELL-only hybrid; empty rows), in f32 and f64, both operations, the
//! alpha/beta cases and update_values, in the atomic and the deterministic variant.

mod common;

use common::products::{check_method, shared_matrix_files, x_for, EDGE_CASES};
use tessera::{Algorithm, BackendKind, Handle, Matrix, Operation, Tuning};

fn host() -> Handle {
    Handle::with_backend(BackendKind::Host, 0).unwrap()
}

fn deterministic_host() -> Handle {
    let mut h = host();
    h.set_deterministic(true);
    h
}

/// BRC's own cases: (spec, what the fixed rule must have chosen, as text in info.params).
const BRC_CASES: &[(&str, &str)] = &[
    // sigma > mu: hub rows; 2^14 rows on the host's 14 SMs gives a grid with more than a wave.
    ("gen:powerlaw:14,8,2", "hybrid=off"),
    ("gen:circuit:20000,5,20,3000,4", "hybrid=off"),
    // One dense row in a sea of short ones (arrow-like).
    ("gen:onerow:6000,6000,6000", "hybrid=off"),
    // Every row the same length, >= 4096 rows: the HYB width is that length, ELL takes it all.
    ("gen:uniform:6000,9,3", "hybrid=ELL(k=9)+BRC"),
    // Low deviation with a tail: ELL for the common part, BRC for the rest.
    ("gen:lap3d7:20", "hybrid=ELL(k=7)+BRC"),
    // Half the rows empty.
    ("gen:emptyrows:5000,6,4", "blocks="),
    // Under 4096 rows: HYB width 0, pure BRC even with equal rows.
    ("gen:dense:40,300", "hybrid=off"),
];

#[test]
fn brc_matches_the_f64_product_on_every_shared_matrix_on_the_host_backend() {
    let Some(files) = shared_matrix_files() else {
        return;
    };
    let h = host();
    for f in &files {
        let (name, a) = tessera::io::load(f.to_str().unwrap()).unwrap();
        check_method(&h, &name, &a, Algorithm::Brc, Tuning::None);
    }
}

#[test]
fn brc_matches_the_f64_product_on_the_edge_cases_on_the_host_backend() {
    for h in [host(), deterministic_host()] {
        for spec in EDGE_CASES {
            let (name, a) = tessera::io::load(spec).unwrap();
            check_method(&h, &name, &a, Algorithm::Brc, Tuning::None);
        }
    }
}

#[test]
fn brc_fixed_rule_paths_coarsening_dense_row_ell_only_and_empty_rows_match_the_f64_product() {
    for h in [host(), deterministic_host()] {
        for (spec, chosen) in BRC_CASES {
            let (name, a) = tessera::io::load(spec).unwrap();
            check_method(&h, &name, &a, Algorithm::Brc, Tuning::None);
            let mut m = Matrix::from_csr(&h, a.clone());
            m.analyze(&h, Algorithm::Brc, Tuning::None).unwrap();
            let info = m.info();
            assert!(info.params.contains(chosen), "{name}: {}", info.params);
            assert!(info.params.contains("padding="), "{}", info.params);
            assert_eq!(info.deterministic, h.deterministic(), "{name}");
        }
    }
}

#[test]
fn brc_coarsens_on_a_large_power_law_matrix_with_the_paper_sm_count() {
    // 2^17 rows, sigma > mu: the fixed rule takes rep > 1 on the host's 14 SMs (> 2 waves).
    let (name, a) = tessera::io::load("gen:powerlaw:17,8,7").unwrap();
    let s = a.stats();
    assert!(
        s.std_dev > s.mean,
        "{name}: sigma {} mu {}",
        s.std_dev,
        s.mean
    );
    let h = host();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Brc, Tuning::None).unwrap();
    let params = m.info().params;
    assert!(!params.contains("rep=1 "), "{params}");
    let x = x_for(a.cols(), 1);
    let mut y = vec![f64::NAN; a.rows()];
    m.spmv(&h, Operation::NonTranspose, 1.0, &x, 0.0, &mut y)
        .unwrap();
    let mut want = vec![0.0; a.rows()];
    a.spmv_f64(Operation::NonTranspose, 1.0, &x, 0.0, &mut want);
    let scale = a.abs_product_f64(Operation::NonTranspose, &x);
    for i in 0..a.rows() {
        assert!(
            (y[i] - want[i]).abs() <= 1e-12 * (1.0 + scale[i]),
            "row {i}"
        );
    }
}

#[test]
fn brc_tuning_requests_keep_the_fixed_rule_on_the_host_and_say_so() {
    let (name, a) = tessera::io::load("gen:powerlaw:10,6,1").unwrap();
    let h = host();
    for tuning in [Tuning::Quick, Tuning::Exhaustive, Tuning::Online] {
        check_method(&h, &name, &a, Algorithm::Brc, tuning);
        let mut m = Matrix::from_csr(&h, a.clone());
        m.analyze(&h, Algorithm::Brc, tuning).unwrap();
        assert!(m
            .info()
            .params
            .contains("host backend keeps the fixed rule"));
    }
}

#[test]
fn brc_deterministic_variant_gives_bitwise_equal_products_run_to_run() {
    let (_, a) = tessera::io::load("gen:powerlaw:12,8,3").unwrap();
    let h = deterministic_host();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Brc, Tuning::None).unwrap();
    assert!(m.info().deterministic);
    let x = x_for(a.cols(), 9);
    let mut y1 = x_for(a.rows(), 2);
    let mut y2 = y1.clone();
    m.spmv(&h, Operation::NonTranspose, 1.5, &x, -0.25, &mut y1)
        .unwrap();
    m.spmv(&h, Operation::NonTranspose, 1.5, &x, -0.25, &mut y2)
        .unwrap();
    assert!(y1.iter().zip(&y2).all(|(a, b)| a.to_bits() == b.to_bits()));
}

/// BRC's device fill (`kernels/brc.cu`'s `brc_ell_fill` and `brc_fill`, session 33) emulated
/// lane by lane on the host from `format::plan`: one warp per 32 rows of the ELL part and one
/// per block, lane r walking its row (ELL) or its block row's piece; at each slot j the ballot
/// of the lanes with an entry, a padding lane taking the column of the highest such lane below
/// it (the nearest row above), else of the lowest one, else column 0. It must give format.rs's
/// columns, values and value map exactly, for the fixed rule's shape (ELL part or not) and
/// others; the fixed rule must give B1 = 32, which the device fill requires. (The CUDA code
/// itself runs only in tests/gpu_brc.rs, on a GPU.)
/// Shapes for the plan and fill tests: split rows, empty rows, one long row, a dense block,
/// even stencil rows (the hybrid), ragged random rows.
const PLAN_MATRICES: [&str; 9] = [
    "gen:powerlaw:12,8,2",
    "gen:circuit:5000,5,20,800,4",
    "gen:emptyrows:3000,6,4",
    "gen:onerow:2000,2000,2000",
    "gen:random:1500,1000,0.01,5",
    "gen:dense:40,300",
    "gen:lap3d7:9",
    "gen:uniform:4100,9,3",
    "gen:random:303,300,0.1,2",
];

#[test]
fn the_device_fill_emulated_lane_by_lane_equals_the_host_fill() {
    use tessera::methods::brc::{format, params};
    for spec in PLAN_MATRICES {
        let (_, a) = tessera::io::load(spec).unwrap();
        let rule = params::fixed_rule(a.row_ptr(), &a.stats(), 132).params;
        assert_eq!(rule.b1, 32, "{spec}");
        let shapes = [
            (rule.b2 as usize, rule.ell_width as usize),
            (7, 0),
            (64, 3),
            (1, a.stats().max.div_ceil(2)),
        ];
        for (i, (b2, k)) in shapes.into_iter().enumerate() {
            // Both variants for the fixed rule's shape, the atomic one for the others.
            for variant in [format::Variant::Atomic, format::Variant::Deterministic]
                .into_iter()
                .take(if i == 0 { 2 } else { 1 })
            {
                let plan = format::plan(a.row_ptr(), a.cols(), 32, b2, k, variant).unwrap();
                let f = format::fill(plan.clone(), &a).unwrap();
                assert_eq!(f, format::build(&a, 32, b2, k, variant).unwrap(), "{spec}");
                let (col, val, slot) = emulate_device_fill(&plan, &a);
                let what = format!("{spec} B2 = {b2} k = {k} {variant:?}");
                assert!(
                    col == f.col,
                    "{what}: columns, first at {:?}",
                    first_diff(&col, &f.col)
                );
                assert!(
                    val == f.values,
                    "{what}: values, first at {:?}",
                    first_diff(&val, &f.values)
                );
                assert!(
                    slot == f.value_slot,
                    "{what}: value map, first at {:?}",
                    first_diff(&slot, &f.value_slot)
                );
            }
        }
    }
}

#[test]
fn the_plan_is_algorithm_1s_queue_on_any_number_of_threads() {
    use tessera::methods::brc::format::{self, Variant, DUMMY};
    // Algorithm 1 as the paper writes it: the rows sorted by remaining length (descending,
    // stable), a FIFO queue from which each piece takes up to B2 entries and re-queues the rest.
    fn queue(rp: &[i32], b2: usize, k: usize) -> Vec<(u32, u32, u32)> {
        let rows = rp.len() - 1;
        let rem = |r: usize| ((rp[r + 1] - rp[r]) as usize).saturating_sub(k);
        let mut order: Vec<usize> = (0..rows).filter(|&r| rem(r) > 0).collect();
        order.sort_by_key(|&r| std::cmp::Reverse(rem(r)));
        let mut q: std::collections::VecDeque<(usize, usize)> =
            order.iter().map(|&r| (r, rp[r] as usize + k)).collect();
        let mut out = Vec::new();
        while let Some((r, start)) = q.pop_front() {
            let end = rp[r + 1] as usize;
            out.push((r as u32, start as u32, (end - start).min(b2) as u32));
            if end - start > b2 {
                q.push_back((r, start + b2));
            }
        }
        out
    }
    // Above format.rs's PARALLEL_ROWS (2^17), so `plan` itself runs on threads where there are
    // cores; a band of wide rows.
    for spec in ["gen:powerlaw:17,8,1", "gen:band:700,3,40"]
        .into_iter()
        .chain(PLAN_MATRICES)
    {
        let (_, a) = tessera::io::load(spec).unwrap();
        let rp = a.row_ptr();
        for (b2, k) in [(64, 0), (7, 0), (3, 2), (1, 5), (100, 1)] {
            let want = queue(rp, b2, k.min(a.stats().max));
            for variant in [Variant::Atomic, Variant::Deterministic] {
                let one = format::plan_on(rp, a.cols(), 32, b2, k, variant, 1).unwrap();
                let what = format!("{spec} B2 = {b2} k = {k} {variant:?}");
                let got: Vec<(u32, u32, u32)> = (0..want.len())
                    .map(|q| (one.row_perm[q], one.piece_start[q], one.piece_len[q]))
                    .collect();
                assert!(got == want, "{what}: the queue differs from Algorithm 1's");
                assert!(
                    one.row_perm[want.len()..].iter().all(|&r| r == DUMMY),
                    "{what}: the last block's filler rows"
                );
                assert_eq!(
                    format::plan(rp, a.cols(), 32, b2, k, variant).unwrap(),
                    one,
                    "{what}: plan"
                );
                for threads in [2, 3, 5, 8] {
                    let many = format::plan_on(rp, a.cols(), 32, b2, k, variant, threads).unwrap();
                    assert_eq!(many, one, "{what}: {threads} threads");
                }
            }
        }
    }
}

#[test]
fn the_layout_from_the_length_histogram_is_the_plan_and_the_device_plan_emulated_places_its_rows() {
    use tessera::methods::brc::format::{self, Variant};
    use tessera::methods::brc::params;
    for spec in ["gen:powerlaw:17,8,1", "gen:band:700,3,40", "gen:dense:5,3"]
        .into_iter()
        .chain(PLAN_MATRICES)
    {
        let (_, a) = tessera::io::load(spec).unwrap();
        let rp = a.row_ptr();
        let stats = a.stats();
        // The histogram brc_plan_lengths counts, sized by the longest row (+ spare words).
        let mut hist = vec![0u32; stats.max + 3];
        for w in rp.windows(2) {
            hist[(w[1] - w[0]) as usize] += 1;
        }
        // The fixed rule reads the same from the histogram as from the row offsets.
        for sm in [1, 132] {
            assert_eq!(
                params::fixed_rule_of(params::lengths_in(&hist), &stats, sm),
                params::fixed_rule(rp, &stats, sm),
                "{spec}: the fixed rule from the histogram"
            );
        }
        let rule = params::fixed_rule(rp, &stats, 132).params;
        let shapes = [
            (32, rule.b2 as usize, rule.ell_width as usize),
            (32, 64, 0),
            (32, 7, 0),
            (32, 3, 2),
            (32, 1, 5),
            (3, 100, 1),
            (32, 5, stats.max + 4),
        ];
        for (b1, b2, k) in shapes {
            let what = format!("{spec} B1 = {b1} B2 = {b2} k = {k}");
            let plan = format::plan(rp, a.cols(), b1, b2, k, Variant::Atomic).unwrap();
            let l = format::layout(params::lengths_in(&hist), a.cols(), b1, b2, k).unwrap();
            assert_eq!(
                (l.rows, l.cols, l.nnz, l.ell_width, l.slots),
                (plan.rows, plan.cols, plan.nnz, plan.ell_width, plan.slots),
                "{what}: shape"
            );
            assert!(
                l.nnz_per_block == plan.nnz_per_block,
                "{what}: block widths"
            );
            assert!(l.block_offset == plan.block_offset, "{what}: block offsets");
            assert_eq!(l.block_rows(), plan.block_rows(), "{what}: block rows");
            assert_eq!(
                (l.split_rows, l.empty_rows, l.n_scale),
                (plan.split_rows, plan.empty_rows, plan.scale_rows.len()),
                "{what}: row lists"
            );
            assert_eq!(l.summary(), plan.summary(), "{what}: summary");
            // The device's kernels, emulated with tiles of 64 rows (several per matrix).
            let (dest, start, len, scale) = emulate_device_plan(rp, &l, 64);
            assert!(
                dest == plan.dest,
                "{what}: destinations, first at {:?}",
                first_diff(&dest, &plan.dest)
            );
            assert!(start == plan.piece_start, "{what}: piece starts");
            assert!(len == plan.piece_len, "{what}: piece lengths");
            assert!(scale == plan.scale_rows, "{what}: rows to scale");
        }
    }
    // Bad shapes are refused as `plan` refuses them, and lengths out of order.
    let rows_of_one = params::lengths_in(&[0, 4]);
    assert!(format::layout(rows_of_one.clone(), 3, 0, 4, 0).is_err());
    assert!(format::layout(rows_of_one, 3, 32, 0, 0).is_err());
    assert!(format::layout([(2, 1), (1, 1)].into_iter(), 3, 32, 4, 0).is_err());
}

/// What brc_plan_count, util_scan, brc_plan_place and brc_plan_queue write, computed as their
/// warps do: tiles of `tile` rows, 32 rows a step, a bucket's lanes placed by their rank.
fn emulate_device_plan(
    rp: &[i32],
    l: &tessera::methods::brc::format::Layout,
    tile: usize,
) -> (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>) {
    use tessera::methods::brc::format::{DUMMY, NO_BUCKET, SPLIT};
    let rows = l.rows;
    let (k, b2) = (l.ell_width as i32, l.b2 as i32);
    let scale = l.ell_width == 0;
    let tiles = rows.div_ceil(tile).max(1);
    let row = |r: usize| -> (u32, bool) {
        let len = rp[r + 1] - rp[r];
        let rem = if len > k { len - k } else { 0 };
        (l.bucket_of[rem as usize], scale && (rem > b2 || len == 0))
    };
    // brc_plan_count: counts[b * tiles + t], the rows to scale as bucket `buckets`.
    let nb = l.buckets;
    let mut counts = vec![0u32; (nb + 1) * tiles];
    for t in 0..tiles {
        for r in t * tile..((t + 1) * tile).min(rows) {
            let (b, listed) = row(r);
            if b != NO_BUCKET {
                counts[b as usize * tiles + t] += 1;
            }
            counts[nb * tiles + t] += listed as u32;
        }
    }
    // util_scan: exclusive.
    let mut run = 0;
    for c in counts.iter_mut() {
        let v = *c;
        *c = run;
        run += v;
    }
    // brc_plan_place, a warp step at a time.
    let mut sorted = vec![u32::MAX; l.in_brc];
    let mut scale_rows = vec![u32::MAX; l.n_scale];
    for t in 0..tiles {
        let mut next: Vec<u32> = (0..nb).map(|b| counts[b * tiles + t]).collect();
        let mut next_listed = counts[nb * tiles + t] - l.in_brc as u32;
        let hi = ((t + 1) * tile).min(rows);
        for r0 in (t * tile..hi).step_by(32) {
            let lanes: Vec<(u32, bool)> = (r0..r0 + 32)
                .map(|r| if r < hi { row(r) } else { (NO_BUCKET, false) })
                .collect();
            for (lane, &(b, listed)) in lanes.iter().enumerate() {
                if b != NO_BUCKET {
                    let rank = lanes[..lane].iter().filter(|(c, _)| *c == b).count() as u32;
                    sorted[(next[b as usize] + rank) as usize] = (r0 + lane) as u32;
                }
                if listed {
                    let rank = lanes[..lane].iter().filter(|(_, f)| *f).count() as u32;
                    scale_rows[(next_listed + rank) as usize] = (r0 + lane) as u32;
                }
            }
            for &(b, _) in &lanes {
                if b != NO_BUCKET {
                    next[b as usize] += 1;
                }
            }
            next_listed += lanes.iter().filter(|(_, f)| *f).count() as u32;
        }
    }
    // brc_plan_queue.
    let n = l.block_rows();
    let (mut dest, mut start, mut len) = (vec![DUMMY; n], vec![0u32; n], vec![0u32; n]);
    let rounds = l.rounds();
    for q in 0..n.min(l.pieces) {
        let j = l.round_start[..rounds].partition_point(|&s| s as usize <= q) - 1;
        let r = sorted[q - l.round_start[j] as usize] as usize;
        let (s, rem) = (rp[r], rp[r + 1] - rp[r] - k);
        let skip = j as i32 * b2;
        dest[q] = if l.ell_width > 0 || rem > b2 {
            r as u32 | SPLIT
        } else {
            r as u32
        };
        start[q] = (s + k + skip) as u32;
        len[q] = (rem - skip).min(b2) as u32;
    }
    (dest, start, len, scale_rows)
}

/// What `brc_ell_fill` and `brc_fill` write, computed as their warps do.
fn emulate_device_fill(
    plan: &tessera::methods::brc::format::Plan,
    a: &tessera::Csr<f64>,
) -> (Vec<i32>, Vec<f64>, Vec<u32>) {
    let (rp, ci, va) = (a.row_ptr(), a.col_ind(), a.values());
    let mut col = vec![0i32; plan.slots];
    let mut val = vec![0.0f64; plan.slots];
    let mut slot = vec![0u32; a.nnz()];
    // One warp's step: lanes with (start, len); slot s(lane) for the j-th entry.
    let mut warp = |pieces: &[(usize, usize)], j: usize, s: &dyn Fn(usize) -> usize| {
        let has = |l: usize| j < pieces[l].1;
        let with: u32 = (0..32).filter(|&l| has(l)).map(|l| 1u32 << l).sum();
        for (lane, &(start, _)) in pieces.iter().enumerate() {
            let above = with & ((1u32 << lane) - 1);
            let src = if above != 0 {
                31 - above.leading_zeros() as usize
            } else if with != 0 {
                with.trailing_zeros() as usize
            } else {
                0
            };
            if has(lane) {
                col[s(lane)] = ci[start + j];
                val[s(lane)] = va[start + j];
                slot[start + j] = s(lane) as u32;
            } else if s(lane) != usize::MAX {
                col[s(lane)] = if has(src) { ci[pieces[src].0 + j] } else { 0 };
            }
        }
    };
    let (rows, k) = (plan.rows, plan.ell_width);
    for g in (0..rows).step_by(32) {
        let pieces: Vec<(usize, usize)> = (g..g + 32)
            .map(|i| match i < rows {
                true => (rp[i] as usize, ((rp[i + 1] - rp[i]) as usize).min(k)),
                false => (0, 0),
            })
            .collect();
        for j in 0..k {
            warp(&pieces, j, &|lane| match g + lane < rows {
                true => j * rows + g + lane,
                false => usize::MAX,
            });
        }
    }
    for b in 0..plan.num_blocks() {
        let off = plan.ell_slots() + plan.block_offset[b] as usize;
        let pieces: Vec<(usize, usize)> = (b * 32..(b + 1) * 32)
            .map(|q| (plan.piece_start[q] as usize, plan.piece_len[q] as usize))
            .collect();
        for j in 0..plan.nnz_per_block[b] as usize {
            warp(&pieces, j, &|lane| off + j * 32 + lane);
        }
    }
    (col, val, slot)
}

/// The first index where `a` and `b` differ (or their lengths, when one is a prefix).
fn first_diff<T: PartialEq>(a: &[T], b: &[T]) -> Result<usize, (usize, usize)> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .ok_or((a.len(), b.len()))
}
