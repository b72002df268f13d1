//! TILE on the host backend, end to end through the safe Rust API: every shared matrix and the
//! generated edge cases, plus TILE's own (sizes not divisible by 16, long tile rows split
//! across warps, dense sub-blocks, deferral forced on and off), in f32 and f64, both
//! operations, the alpha/beta cases and update_values; the deterministic variant; and the
//! per-matrix format census of the paper's Figure 7 with the format's byte floor (printed:
//! `cargo test --release --test tile_host census -- --ignored --nocapture`, recorded in notes/tile.md).
//!
//! Forcing deferral: `TileHost::with_params` (and `TileGpu::with_params` on a GPU) take an
//! explicit `TileParams`, whose `deferred` field overrides the 1.8M rule.

mod common;

use common::products::{check_method, shared_matrix_files, x_for, EDGE_CASES};
use tessera::methods::tile::format::{TileFormat, TILE};
use tessera::methods::tile::host::TileHost;
use tessera::methods::tile::params::TBALANCE_UNLIMITED;
use tessera::methods::tile::TileParams;
use tessera::methods::{HostMethod, Request};
use tessera::{Algorithm, BackendKind, Csr, Handle, Matrix, Operation, Scalar, Tuning};

fn host() -> Handle {
    Handle::with_backend(BackendKind::Host, 0).unwrap()
}

fn deterministic_host() -> Handle {
    let mut h = host();
    h.set_deterministic(true);
    h
}

/// TILE's own cases: sizes not divisible by 16, long tile rows (split path), dense blocks.
const TILE_CASES: &[&str] = &[
    "gen:random:17,33,5,1",
    "gen:random:19,5000,300,4",
    "gen:dense:40,300",
    "gen:elasticity:5",
    "gen:stencil27:9",
    "gen:uniform:3001,9,3",
];

#[test]
fn tile_matches_the_f64_product_on_every_shared_matrix_on_the_host_backend() {
    let Some(files) = shared_matrix_files() else {
        return;
    };
    let h = host();
    for f in &files {
        let (name, a) = tessera::io::load(f.to_str().unwrap()).unwrap();
        check_method(&h, &name, &a, Algorithm::Tile, Tuning::None);
    }
}

#[test]
fn tile_matches_the_f64_product_on_the_edge_cases_and_its_own_on_the_host_backend() {
    for h in [host(), deterministic_host()] {
        for spec in EDGE_CASES.iter().chain(TILE_CASES) {
            let (name, a) = tessera::io::load(spec).unwrap();
            check_method(&h, &name, &a, Algorithm::Tile, Tuning::None);
            let mut m = Matrix::from_csr(&h, a.clone());
            m.analyze(&h, Algorithm::Tile, Tuning::None).unwrap();
            let info = m.info();
            assert!(info.params.contains("te=0.2 th=1"), "{}", info.params);
            if h.deterministic() {
                assert!(info.deterministic, "{name}: {}", info.params);
                assert!(info.params.contains("tbalance=inf"), "{}", info.params);
            }
        }
    }
}

#[test]
fn tile_splits_long_tile_rows_and_says_it_is_not_deterministic_then() {
    let (name, a) = tessera::io::load("gen:random:19,5000,300,4").unwrap();
    let h = host();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Tile, Tuning::None).unwrap();
    let info = m.info();
    assert!(
        info.params.starts_with(
            "te=0.2 th=1 tbalance=8 deferred=off (fixed rule III.D, nnz <= 1.8M); 612 tiles, tiles/nnz%:"
        ),
        "{}",
        info.params
    );
    assert!(info.params.contains("2 split tile rows"), "{}", info.params);
    assert!(!info.deterministic, "{name}");
}

/// The host method with explicit parameters against the f64 product (alpha/beta cases, beta
/// = 0 with NaN in y), then after update_values.
fn check_host_with<T: Scalar>(name: &str, a64: &Csr<f64>, p: TileParams) {
    let a = a64.convert::<T>();
    let stats = a.stats();
    let req = Request {
        host: Some(&a),
        stats: &stats,
        tuning: Tuning::None,
        deterministic: false,
    };
    let mut m = TileHost::with_params(&req, p, "test").unwrap();
    assert_eq!(
        m.format().deferred.is_some(),
        p.deferred && m.format().census.deferred_nnz > 0
    );
    let x: Vec<T> = x_for(a.cols(), 3).into_iter().map(T::from_f64).collect();
    let run = |m: &TileHost<T>, a: &Csr<T>, what: &str| {
        let a_seen = a.convert::<f64>();
        let xs: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
        for (alpha, beta) in [(1.0, 0.0), (-2.0, 0.5)] {
            let y0 = x_for(a.rows(), 5);
            let mut y: Vec<T> = if beta == 0.0 {
                vec![T::from_f64(f64::NAN); a.rows()]
            } else {
                y0.iter().map(|&v| T::from_f64(v)).collect()
            };
            m.spmv(a, T::from_f64(alpha), &x, T::from_f64(beta), &mut y);
            let mut want = y0.clone();
            a_seen.spmv_f64(Operation::NonTranspose, alpha, &xs, beta, &mut want);
            let scale = a_seen.abs_product_f64(Operation::NonTranspose, &xs);
            for i in 0..a.rows() {
                let tol =
                    64.0 * T::EPSILON * (1.0 + alpha.abs() * scale[i] + beta.abs() * y0[i].abs());
                assert!(
                    (y[i].to_f64() - want[i]).abs() <= tol,
                    "{name} {what} {p} alpha={alpha} beta={beta} row {i}: {} vs {}",
                    y[i],
                    want[i]
                );
            }
        }
    };
    run(&m, &a, "as built");
    let mut b = a.clone();
    b.values_mut()
        .iter_mut()
        .enumerate()
        .for_each(|(k, v)| *v = T::from_f64(((k * 7) % 11) as f64 - 5.0));
    m.update_values(&b);
    run(&m, &b, "after update_values");
}

#[test]
fn tile_deferred_forced_on_and_off_matches_the_f64_product_on_the_host() {
    for spec in [
        "gen:powerlaw:12,8,2",
        "gen:circuit:3000,5,2,2500,4",
        "gen:random:4,100000,700,2",
        "gen:random:100000,4,3,2",
        "gen:emptyrows:2000,8,3",
        "gen:random:19,5000,300,4",
        "gen:lap3d7:9",
    ] {
        let (name, a) = tessera::io::load(spec).unwrap();
        for deferred in [false, true] {
            for tbalance in [8, TBALANCE_UNLIMITED] {
                let p = TileParams {
                    tbalance,
                    ..TileParams::paper(deferred)
                };
                check_host_with::<f64>(&name, &a, p);
                check_host_with::<f32>(&name, &a, p);
            }
        }
    }
}

#[test]
fn tile_tuning_requests_keep_the_fixed_rule_on_the_host_and_say_so() {
    let (name, a) = tessera::io::load("gen:powerlaw:10,6,1").unwrap();
    let h = host();
    for tuning in [Tuning::Quick, Tuning::Exhaustive, Tuning::Online] {
        check_method(&h, &name, &a, Algorithm::Tile, tuning);
        let mut m = Matrix::from_csr(&h, a.clone());
        m.analyze(&h, Algorithm::Tile, tuning).unwrap();
        assert!(m
            .info()
            .params
            .contains("host backend keeps the fixed rule"));
    }
}

#[test]
fn tile_deterministic_variant_gives_bitwise_equal_products_run_to_run() {
    let (_, a) = tessera::io::load("gen:random:19,5000,300,4").unwrap();
    let h = deterministic_host();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Tile, Tuning::None).unwrap();
    assert!(m.info().deterministic);
    assert!(m.info().params.contains("0 split tile rows"));
    let x = x_for(a.cols(), 9);
    let mut y1 = x_for(a.rows(), 2);
    let mut y2 = y1.clone();
    m.spmv(&h, Operation::NonTranspose, 1.5, &x, -0.25, &mut y1)
        .unwrap();
    m.spmv(&h, Operation::NonTranspose, 1.5, &x, -0.25, &mut y2)
        .unwrap();
    assert!(y1.iter().zip(&y2).all(|(a, b)| a.to_bits() == b.to_bits()));
}

/// The matrices of the census: the shared suite and the generators of the performance goal.
fn census_matrices() -> Vec<String> {
    let mut v: Vec<String> = shared_matrix_files()
        .unwrap_or_default()
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    for g in [
        "gen:dense:2000,2000",
        "gen:elasticity:20",
        "gen:stencil27:40",
        "gen:lap3d7:40",
        "gen:powerlaw:16,8,1",
        "gen:random:100000,100000,8,1",
    ] {
        v.push(g.to_string());
    }
    v
}

// Ignored by default (about 100 s in a debug build); run it with
// `cargo test --release --test tile_host census -- --ignored --nocapture`.
#[test]
#[ignore]
fn tile_census_of_formats_and_bytes_per_matrix() {
    // Figure 7 per matrix (percent of tiles / of non-zeros per format), and the matrix-side
    // bytes one product reads (f64, without deferral: level-1 arrays, work list, format and
    // width bytes, offsets, index bytes, values with padding) against CSR's (i32 indices).
    println!(
        "| matrix | nnz | tiles | nnz/tile | csr | coo | ell | hyb | dns | dnsrow | dnscol | TILE bytes | ratio to CSR | with deferral | ratio to CSR |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for spec in census_matrices() {
        let (name, a) = tessera::io::load(&spec).unwrap();
        let stats = a.stats();
        let req = Request {
            host: Some(&a),
            stats: &stats,
            tuning: Tuning::None,
            deterministic: false,
        };
        let m = TileHost::with_params(&req, TileParams::paper(false), "census").unwrap();
        let f = m.format();
        let c = &f.census;
        assert_eq!(c.total_nnz(), a.nnz(), "{name}");
        let short = name.rsplit('/').next().unwrap().trim_end_matches(".mtx.xz");
        let mut row = format!(
            "| {short} | {} | {} | {:.1} |",
            a.nnz(),
            c.total_tiles(),
            a.nnz() as f64 / c.total_tiles().max(1) as f64
        );
        for fm in TileFormat::all() {
            let (t, n) = c.shares(fm);
            row.push_str(&format!(" {t:.1}/{n:.1} |"));
        }
        // CSR's matrix-side floor: row_ptr (i32), then a column index and a value per entry.
        let csr_bytes = 4 * (a.rows() + 1) + 12 * a.nnz();
        let tile_bytes = f.format_bytes();
        let d = TileHost::with_params(&req, TileParams::paper(true), "census").unwrap();
        let deferred_bytes = d.format().format_bytes();
        let ratio = |b: usize| b as f64 / csr_bytes.max(1) as f64;
        row.push_str(&format!(
            " {tile_bytes} | {:.2} | {deferred_bytes} | {:.2} |",
            ratio(tile_bytes),
            ratio(deferred_bytes)
        ));
        println!("{row}");
        assert!(c.total_tiles() * TILE * TILE >= a.nnz(), "{name}");
    }
}
