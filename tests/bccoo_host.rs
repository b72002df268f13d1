//! BCCOO (yaSpMV) on the host backend, end to end through the safe Rust API: every shared
//! matrix and the generated edge cases, plus BCCOO's own edge cases (a row spanning many
//! workgroups, a matrix wide enough for the delta-compressed column indices, half empty rows),
//! in f32 and f64, both operations, update_values, against the plain f64 CSR product. The
//! host backend runs `methods::bccoo::reference` over the BCCOO arrays.

mod common;

use common::products::{check_method, check_typed, shared_matrix_files, EDGE_CASES};
use tessera::{Algorithm, BackendKind, Handle, Matrix, Operation, Tuning};

fn host() -> Handle {
    Handle::with_backend(BackendKind::Host, 0).unwrap()
}

/// BCCOO's own edge cases beyond EDGE_CASES.
const BCCOO_EDGE_CASES: &[&str] = &[
    "gen:onerow:64,200000,200000", // one row across ~50 workgroups; 200000 columns: delta16
    "gen:random:40,300000,60,7",   // wide: delta16 with escapes
    "gen:emptyrows:3000,20,5",     // half the rows empty: zero blocks with row stops
    "gen:elasticity:5",            // 3x3 node blocks
    "gen:stencil27:7",
    "gen:dense:70,9",
    "gen:diag:1",
];

#[test]
fn bccoo_matches_the_f64_product_on_every_shared_matrix_on_the_host_backend() {
    let Some(files) = shared_matrix_files() else {
        return;
    };
    let h = host();
    for f in &files {
        let (name, a) = tessera::io::load(f.to_str().unwrap()).unwrap();
        check_method(&h, &name, &a, Algorithm::Bccoo, Tuning::None);
    }
}

#[test]
fn bccoo_matches_the_f64_product_on_the_edge_cases_on_the_host_backend() {
    let h = host();
    for spec in EDGE_CASES.iter().chain(BCCOO_EDGE_CASES) {
        let (name, a) = tessera::io::load(spec).unwrap();
        check_method(&h, &name, &a, Algorithm::Bccoo, Tuning::None);
    }
}

#[test]
fn bccoo_info_names_its_parameters_its_bytes_against_csr_and_determinism() {
    let h = host();
    let (_, a) = tessera::io::load("gen:elasticity:12").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Bccoo, Tuning::None).unwrap();
    let info = m.info();
    assert_eq!(info.algorithm, Algorithm::Bccoo);
    assert!(info.deterministic);
    assert!(info.params.starts_with("block="), "{}", info.params);
    assert!(info.params.contains("fixed rule"), "{}", info.params);
    assert!(info.params.contains("x CSR"), "{}", info.params);
    // 3x3 node blocks: the format moves fewer bytes than CSR.
    let ratio: f64 = info
        .params
        .split("MB/product = ")
        .nth(1)
        .and_then(|s| s.split('x').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!(ratio < 0.9, "{}", info.params);
    assert!(info.device_bytes as usize > a.bytes());
}

#[test]
fn bccoo_tuning_on_the_host_keeps_the_fixed_rule_and_says_so() {
    let h = host();
    let (name, a) = tessera::io::load("gen:powerlaw:10,8,3").unwrap();
    for t in [Tuning::Quick, Tuning::Exhaustive, Tuning::Online] {
        check_typed::<f64>(&h, &name, &a, Algorithm::Bccoo, t);
        let mut m = Matrix::from_csr(&h, a.clone());
        m.analyze(&h, Algorithm::Bccoo, t).unwrap();
        assert!(m.info().params.contains("keeps the fixed rule"));
    }
}

#[test]
fn bccoo_products_on_the_host_are_bitwise_reproducible() {
    let h = host();
    let (_, a) = tessera::io::load("gen:onerow:300,20000,20000").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Bccoo, Tuning::None).unwrap();
    let x = common::products::x_for(a.cols(), 9);
    let mut runs = Vec::new();
    for _ in 0..2 {
        let mut y = vec![f64::NAN; a.rows()];
        m.spmv(&h, Operation::NonTranspose, 1.0, &x, 0.0, &mut y)
            .unwrap();
        runs.push(y);
    }
    assert_eq!(runs[0], runs[1]);
}

/// The suite matrices of notes/benchmarking.md (shared and generated), for the format table.
const SUITE_GENERATED: &[&str] = &[
    "gen:lap3d7:160",
    "gen:stencil27:100",
    "gen:elasticity:48",
    "gen:dense:2000,2000",
    "gen:powerlaw:20,16,1",
    "gen:uniform:1000000,16,1",
    "gen:lp:4284,1092610,2600,1",
    "gen:circuit:1000000,5,4,100000,1",
    "gen:grid2d:725",
    "gen:emptyrows:1000000,16,1",
];

/// Prints notes/bccoo.md's table: bytes one f64 product moves with BCCOO's fixed rule (for an
/// H100/H200's 132 SMs) against the CSR floor of notes/benchmarking.md, x and y included, for every
/// suite matrix. `cargo test --release --test bccoo_host -- --ignored --nocapture`.
#[test]
#[ignore = "prints the format table of notes/bccoo.md (large matrices; run in release)"]
fn bccoo_format_bytes_against_csr_for_every_suite_matrix() {
    use tessera::methods::bccoo::{csr_matrix_bytes, format, params};
    let mut specs: Vec<String> = shared_matrix_files()
        .unwrap_or_default()
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    specs.extend(SUITE_GENERATED.iter().map(|s| s.to_string()));
    println!(
        "| matrix | rows | cols | nnz | fixed rule (132 SMs) | fill | escapes/block | CSR MB | BCCOO MB | BCCOO/CSR | matrix part only | footprint MB | convert s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for spec in &specs {
        let (name, a) = tessera::io::load(spec).unwrap();
        let t = std::time::Instant::now();
        let p = params::fixed_rule(&format::facts(&a), 132);
        let f = format::build(&a, &p.format, p.wg as usize).unwrap();
        let secs = t.elapsed().as_secs_f64();
        let v = 8usize;
        let xy = (a.cols() + a.rows()) * v;
        let csr_m = csr_matrix_bytes(a.rows(), a.nnz(), v);
        let bccoo_m = f.traffic_bytes(p.wg as usize);
        let (csr, bccoo) = (csr_m + xy, bccoo_m + xy);
        println!(
            "| {name} | {} | {} | {} | {} {} t{} wg{} {} | {:.0}% | {:.3} | {:.1} | {:.1} | {:.3} | {:.3} | {:.1} | {:.2} |",
            a.rows(),
            a.cols(),
            a.nnz(),
            p.format.shape,
            p.format.col,
            p.format.tile,
            p.wg,
            p.strategy,
            100.0 * a.nnz() as f64 / (f.blocks * p.format.shape.area()) as f64,
            f.escapes as f64 / f.blocks.max(1) as f64,
            csr as f64 / 1e6,
            bccoo as f64 / 1e6,
            bccoo as f64 / csr as f64,
            bccoo_m as f64 / csr_m as f64,
            (f.bytes() + f.wg_info(p.wg as usize).len()) as f64 / 1e6,
            secs
        );
    }
}
