//! Unit tests of `select.rs`.

use super::*;
use crate::csr::Csr;

#[test]
fn a_background_build_starts_when_the_products_would_have_paid_for_its_copies() {
    // (Run where TESSERA_BACKGROUND_AFTER is unset; no other unit test sets it.)
    if std::env::var_os("TESSERA_BACKGROUND_AFTER").is_some() {
        return;
    }
    let brc = background_start_after(Algorithm::Brc, BuildFrom::HostCopy);
    // Two copies instead of one: twice the products.
    assert_eq!(
        background_start_after(Algorithm::Brc, BuildFrom::Download),
        2 * brc
    );
    // A format expected to save more starts sooner.
    assert!(background_start_after(Algorithm::Tile, BuildFrom::HostCopy) < brc);
    // A Krylov solve of a few hundred products never starts one.
    assert!(brc >= 1000, "{brc}");
    // A build on the device moves no copies: it starts after tens of products, not
    // thousands, and not at once (it would slow the first ones).
    let device = background_start_after(Algorithm::Brc, BuildFrom::Device);
    assert!((10..=100).contains(&device), "{device}");
    // TILE's device build (more launches and a read-back) waits until a solve of 100
    // products is over.
    let tile = background_start_after(Algorithm::Tile, BuildFrom::Device);
    assert!((100..1000).contains(&tile), "{tile}");
}

fn stats(spec: &str) -> RowStats {
    crate::io::load(spec).unwrap().1.stats()
}

#[test]
fn heuristic_sends_long_rows_and_wide_rows_to_hola() {
    assert_eq!(
        heuristic(&stats("gen:lap3d7:10"), 8, false, 132),
        Algorithm::CsrVector
    );
    assert_eq!(
        heuristic(&stats("gen:uniform:2000,8,1"), 8, false, 132),
        Algorithm::CsrVector
    );
    // Large with even short rows: BRC; large with longer rows: HOLA.
    assert_eq!(
        heuristic(&stats("gen:uniform:300000,16,1"), 8, false, 132),
        Algorithm::Brc
    );
    assert_eq!(
        heuristic(&stats("gen:lap3d7:90"), 8, false, 132),
        Algorithm::Brc
    );
    assert_eq!(
        heuristic(&stats("gen:grid2d:725"), 8, false, 132),
        Algorithm::Brc
    );
    assert_eq!(
        heuristic(&stats("gen:elasticity:12"), 8, false, 132),
        Algorithm::CsrVector
    );
    // CSR_VECTOR's longest row in 6 trips of 16 (81 entries, coop 8): CSR_VECTOR. In 9
    // trips (rows of 140, mean 59: coop 8) in a grid of one wave: HOLA; in more waves
    // (26 blocks on 10 SMs) CSR_VECTOR keeps it.
    let shallow = stats("gen:elasticity:6");
    assert_eq!(shallow.max.div_ceil(16), 6);
    assert_eq!(heuristic(&shallow, 8, false, 132), Algorithm::CsrVector);
    let t: Vec<_> = (0..440usize)
        .flat_map(|r| {
            let len = if r % 10 == 0 { 140 } else { 50 };
            (0..len).map(move |c| (r, (c * 7 + r) % 3000, 1.0))
        })
        .collect();
    let deep = Csr::from_triplets(440, 3000, &t).unwrap().stats();
    assert!(deep.mean > 16.0 && deep.mean <= 64.0 && deep.max == 140);
    assert_eq!(deep.max.div_ceil(16), 9);
    assert_eq!(heuristic(&deep, 8, false, 132), Algorithm::Hola);
    assert_eq!(heuristic(&deep, 8, false, 10), Algorithm::CsrVector);
    assert_eq!(
        heuristic(&stats("gen:circuit:3000,5,2,2500,4"), 8, false, 132),
        Algorithm::Hola
    );
    let mut t: Vec<_> = (0..100).map(|i| (2 * i, i % 7, 1.0)).collect();
    t.push((3, 3, 1.0));
    let half_empty = Csr::from_triplets(200, 7, &t).unwrap();
    assert_eq!(
        heuristic(&half_empty.stats(), 8, false, 132),
        Algorithm::CsrVector
    );
    // Rows of 129-1,024: CSR_VECTOR's pieces; rows of 128: CSR_VECTOR's row groups; rows
    // of 2,000: HOLA.
    assert_eq!(
        heuristic(&stats("gen:dense:200,300"), 8, false, 132),
        Algorithm::CsrVector
    );
    assert!(!crate::methods::csr_vector::pieces::suits(&stats(
        "gen:dense:200,128"
    )));
    assert_eq!(
        heuristic(&stats("gen:dense:200,128"), 8, false, 132),
        Algorithm::CsrVector
    );
    assert_eq!(
        heuristic(&stats("gen:dense:200,2000"), 8, false, 132),
        Algorithm::Hola
    );
    // Dense enough (f64: 61%, f32: 50%) and >= 1M non-zeros: TILE's dense tiles.
    assert!((tile_min_density(8) - 8.0 / 13.2).abs() < 1e-12);
    assert_eq!(tile_min_density(4), 0.5);
    for (spec, f64_tile) in [
        ("gen:random:2000,2000,1100,7", false), // 55%
        ("gen:random:2000,2000,1300,7", true),  // 65%
    ] {
        assert_eq!(
            heuristic(&stats(spec), 4, false, 132),
            Algorithm::Tile,
            "{spec}"
        );
        let f64_pick = heuristic(&stats(spec), 8, false, 132);
        assert_eq!(
            f64_pick == Algorithm::Tile,
            f64_tile,
            "{spec}: {f64_pick:?}"
        );
    }
    assert_eq!(
        heuristic(&stats("gen:dense:1000,1000"), 8, false, 132),
        Algorithm::Tile
    );
    assert_eq!(
        heuristic(&stats("gen:dense:1000,1000"), 8, true, 132),
        Algorithm::CsrVector
    );
    assert_eq!(
        heuristic(&stats("gen:onerow:500,3000,3000"), 8, false, 132),
        Algorithm::Hola
    );
    // Determinism keeps CSR_VECTOR; so does an empty matrix.
    assert_eq!(
        heuristic(&stats("gen:circuit:3000,5,2,2500,4"), 8, true, 132),
        Algorithm::CsrVector
    );
    let e = Csr::<f64>::from_triplets(3, 3, &[]).unwrap();
    assert_eq!(heuristic(&e.stats(), 8, false, 132), Algorithm::CsrVector);
}

#[test]
fn long_rows_over_many_columns_go_to_csr_vector_sliced() {
    // 1,000 entries per row over 400,000 columns: 33 slices of 12,288 columns in f64, 30
    // entries per row and slice.
    let lp = stats("gen:lp:2000,400000,1000,1");
    assert!(crate::methods::csr_vector::sliced::suits(&lp, 8));
    assert_eq!(heuristic(&lp, 8, false, 132), Algorithm::CsrVector);
    // Four times the columns: 7 per slice, not sliced; rows of 1,000 run in pieces.
    let wide = stats("gen:lp:2000,1600000,1000,1");
    assert!(!crate::methods::csr_vector::sliced::suits(&wide, 8));
    assert!(crate::methods::csr_vector::pieces::suits(&wide));
    assert_eq!(heuristic(&wide, 8, false, 132), Algorithm::CsrVector);
    // Rows of 2,000 over 4M columns (6 per slice): HOLA's split.
    let longer = stats("gen:lp:2000,4000000,2000,1");
    assert_eq!(heuristic(&longer, 8, false, 132), Algorithm::Hola);
    // 81 entries per row over 4 slices' width, but each row within a band of a few
    // thousand columns: not sliced.
    let band = stats("gen:elasticity:24");
    assert!(!crate::methods::csr_vector::sliced::suits(&band, 8));
}

#[test]
fn many_empty_rows_get_brc_when_large_per_sm() {
    // Half the rows empty, power-law lengths in the others: the fitted split; below it
    // the rule over the CSR arrays (long rows: HOLA).
    let small = stats("gen:emptyrows:2000,8,3");
    let large = stats("gen:emptyrows:300000,16,1");
    assert_eq!(heuristic(&small, 8, false, 132), Algorithm::Hola);
    assert_eq!(heuristic(&small, 8, false, 132), over_csr(&small, 132));
    assert_eq!(heuristic(&large, 8, false, 132), Algorithm::Brc);
    // The size threshold scales with the SMs: 4.8M non-zeros on 2,000 SMs is small.
    assert_eq!(heuristic(&large, 8, false, 2000), Algorithm::Hola);
    assert_eq!(
        heuristic(&stats("gen:powerlaw:19,16,1"), 8, false, 132),
        Algorithm::Brc
    );
    // A few empty rows do not (the circuit and graph matrices of the suite).
    assert_eq!(
        heuristic(&stats("gen:circuit:3000,5,2,2500,4"), 8, false, 132),
        Algorithm::Hola
    );
    // Determinism still keeps CSR_VECTOR, and AUTO builds the format in the background.
    assert_eq!(heuristic(&large, 8, true, 132), Algorithm::CsrVector);
    assert_eq!(
        background_plan(&large, 8, Algorithm::Auto, Tuning::None, false, 132, true)
            .filter(|_| background_enabled()),
        background_enabled().then_some((Algorithm::Hola, Algorithm::Brc))
    );
    assert_eq!(
        background_plan(&small, 8, Algorithm::Auto, Tuning::None, false, 132, true),
        None
    );
}

#[test]
fn heavy_tailed_rows_get_brc_whatever_their_empty_rows() {
    // R-MAT with 27% empty rows (inside the fit's gap) and a spread of 4.8: BRC, built in
    // the background behind HOLA, when large per SM.
    let graph = stats("gen:powerlaw:16,32,1");
    let empty = graph.empty_rows as f64 / graph.rows as f64;
    assert!(empty > 0.01 && empty < GRAPH_EMPTY_ROWS, "{empty}");
    assert!(heavy_tailed(&graph));
    assert_eq!(heuristic(&graph, 8, false, 132), Algorithm::Brc);
    assert_eq!(heuristic(&graph, 4, false, 132), Algorithm::Brc);
    assert_eq!(heuristic(&graph, 8, false, 2000), Algorithm::Hola);
    assert_eq!(
        background_plan(&graph, 8, Algorithm::Auto, Tuning::None, false, 132, true)
            .filter(|_| background_enabled()),
        background_enabled().then_some((Algorithm::Hola, Algorithm::Brc))
    );
    // A circuit: rows of 5 with a few of thousands spread more, but its shortest row is
    // the common one: HOLA.
    let circuit = stats("gen:circuit:200000,5,4,20000,2");
    assert!(circuit.std_dev > HEAVY_TAIL_CV * circuit.mean && !heavy_tailed(&circuit));
    assert_eq!(heuristic(&circuit, 8, false, 132), Algorithm::Hola);
    // Even rows, a band, uniform random rows: no tail.
    for m in [
        "gen:uniform:300000,16,1",
        "gen:lap3d7:40",
        "gen:random:20000,20000,100,2",
    ] {
        assert!(!heavy_tailed(&stats(m)), "{m}");
    }
    // Determinism keeps CSR_VECTOR.
    assert_eq!(heuristic(&graph, 8, true, 132), Algorithm::CsrVector);
}

#[test]
fn only_formats_of_their_own_are_tried() {
    assert!(has_own_format(Algorithm::Brc));
    assert!(has_own_format(Algorithm::Tile) && has_own_format(Algorithm::Bccoo));
    assert!(!has_own_format(Algorithm::Hola) && !has_own_format(Algorithm::CsrVector));
}

#[test]
fn tile_on_a_nearly_dense_matrix_needs_no_trial_and_runs_the_wide_mode_before_it() {
    // 2,000 x 2,000 dense: TILE sure, the wide mode first (132 SMs: 15 rows per SM).
    if !background_enabled() {
        return;
    }
    let dense = stats("gen:dense:2000,2000");
    for vb in [4, 8] {
        assert_eq!(heuristic(&dense, vb, false, 132), Algorithm::Tile);
        assert!(sure_of(Algorithm::Tile, &dense));
        assert_eq!(
            background_plan(&dense, vb, Algorithm::Auto, Tuning::None, false, 132, true),
            Some((Algorithm::CsrVector, Algorithm::Tile))
        );
    }
    // A band at 51%: TILE is tried (f64) or taken unsure (f32), against HOLA.
    let band = stats("gen:band:3000,900,900");
    assert!(!sure_of(Algorithm::Tile, &band));
    assert!(crate::methods::csr_vector::wide::suits(&band, 132));
    assert_eq!(
        background_plan(&band, 4, Algorithm::Auto, Tuning::None, false, 132, true),
        Some((Algorithm::Hola, Algorithm::Tile))
    );
    // Without a TILE to compare with, such rows run the wide mode.
    assert_eq!(over_csr(&band, 132), Algorithm::CsrVector);
    assert!(!sure_of(Algorithm::Brc, &dense));
    // As dense, but thin: tried as before.
    let thin = stats("gen:dense:400000,4");
    assert!(!sure_of(Algorithm::Tile, &thin));
}

#[test]
fn brc_is_tried_on_large_even_rows_longer_than_the_rule_only_with_a_trial() {
    let fem = stats("gen:elasticity:24");
    assert_eq!(heuristic(&fem, 8, false, 132), Algorithm::CsrVector);
    assert_eq!(trial_candidate(&fem, 8), Some(Algorithm::Brc));
    let plan = |s: &RowStats, det, trial| {
        background_plan(s, 8, Algorithm::Auto, Tuning::None, det, 132, trial)
    };
    if background_enabled() && trial_enabled() {
        assert_eq!(
            plan(&fem, false, true),
            Some((Algorithm::CsrVector, Algorithm::Brc))
        );
    }
    // No trial to follow (host backend, one core), determinism, a named method: none.
    assert_eq!(plan(&fem, false, false), None);
    assert_eq!(plan(&fem, true, true), None);
    assert_eq!(
        background_plan(&fem, 8, Algorithm::Hola, Tuning::None, false, 132, true),
        None
    );
    // TILE between half dense and its floor (f64 only: f32's floor is half dense, where
    // the rule takes TILE), a band as a random matrix; no second candidate after it.
    for spec in ["gen:random:2000,2000,1100,7", "gen:band:3000,900,900"] {
        let s = stats(spec);
        assert_eq!(trial_candidate(&s, 8), Some(Algorithm::Tile), "{spec}");
        assert_eq!(heuristic(&s, 4, false, 132), Algorithm::Tile, "{spec}");
        assert_ne!(heuristic(&s, 8, false, 132), Algorithm::Tile, "{spec}");
        assert_eq!(then_try(&s, 8, Algorithm::Tile), None, "{spec}");
        if background_enabled() && trial_enabled() {
            assert_eq!(
                background_plan(&s, 8, Algorithm::Auto, Tuning::None, false, 132, true),
                Some((Algorithm::Hola, Algorithm::Tile)),
                "{spec}"
            );
        }
    }
    assert_eq!(
        trial_candidate(&stats("gen:random:2000,2000,1300,7"), 8),
        Some(Algorithm::Brc),
        "65%: the rule's TILE, and even rows"
    );
    // Then BCCOO, after BRC only.
    assert_eq!(then_try(&fem, 8, Algorithm::Brc), Some(Algorithm::Bccoo));
    assert_eq!(then_try(&fem, 8, Algorithm::Tile), None);
    // Uneven rows (LP: 1,300 to 3,900 entries), short rows (the rule's own BRC), small
    // matrices: no candidate.
    for spec in [
        "gen:lp:2000,200000,600,1",
        "gen:lap3d7:100",
        "gen:elasticity:10",
    ] {
        let s = stats(spec);
        assert_eq!(trial_candidate(&s, 8), None, "{spec}");
        assert_eq!(then_try(&s, 8, Algorithm::Brc), None, "{spec}");
    }
}

#[test]
fn timed_candidates_start_with_the_heuristic_and_cover_every_method() {
    let c = timed_candidates(&stats("gen:circuit:3000,5,2,2500,4"), 8, false, 132);
    assert_eq!(c[0], Algorithm::Hola);
    assert_eq!(c.len(), IMPLEMENTED.len());
    assert!(IMPLEMENTED.iter().all(|a| c.contains(a)));
}

#[test]
fn unimplemented_methods_are_not_supported_and_say_which_are() {
    for a in [Algorithm::Bccoo, Algorithm::Brc, Algorithm::Tile] {
        if implemented(a) {
            continue;
        }
        let e = choose(&stats("gen:lap3d7:4"), 8, a, false, 132).unwrap_err();
        assert!(
            e.to_string().contains("TESSERA_ALGORITHM_CSR_VECTOR"),
            "{e}"
        );
    }
}
