//! HOLA on the host backend (its reference over the block/thread/bit-mask split) through the
//! safe Rust API: every shared matrix and the generated edge cases, f32 and f64, both
//! operations, alpha/beta cases, update_values — against the plain f64 CSR product.

mod common;

use common::products::{check_method, shared_matrix_files, EDGE_CASES};
use tessera::{Algorithm, BackendKind, Handle, Matrix, Tuning};

fn host() -> Handle {
    Handle::with_backend(BackendKind::Host, 0).unwrap()
}

#[test]
fn hola_matches_the_f64_product_on_every_shared_matrix_on_the_host() {
    let Some(files) = shared_matrix_files() else {
        return;
    };
    for f in &files {
        let (name, a) = tessera::io::load(f.to_str().unwrap()).unwrap();
        check_method(&host(), &name, &a, Algorithm::Hola, Tuning::None);
    }
}

#[test]
fn hola_matches_the_f64_product_on_the_edge_cases_on_the_host() {
    for spec in EDGE_CASES
        .iter()
        .chain(&["gen:emptyrows:20000,3,7", "gen:onerow:10,9000,9000"])
    {
        let (name, a) = tessera::io::load(spec).unwrap();
        check_method(&host(), &name, &a, Algorithm::Hola, Tuning::None);
    }
}

#[test]
fn hola_info_names_the_method_its_block_split_and_no_determinism() {
    let h = host();
    let (_, a) = tessera::io::load("gen:lap3d7:12").unwrap();
    let mut m = Matrix::from_csr(&h, a);
    m.analyze(&h, Algorithm::Hola, Tuning::Quick).unwrap();
    let info = m.info();
    assert_eq!(info.algorithm, Algorithm::Hola);
    assert!(!info.deterministic);
    let p = tessera::methods::hola::params::fixed_rule(m.stats());
    assert!(info.params.starts_with(&p.to_string()), "{}", info.params);
    assert!(
        info.params.contains("host backend keeps the fixed rule"),
        "{}",
        info.params
    );
    // The row-start buffer: one i32 per block of NPB non-zeros, plus one.
    let blocks = info.nnz.div_ceil(p.npb()) as u64;
    assert_eq!(
        info.device_bytes,
        m.csr(&h).unwrap().bytes() as u64 + 4 * (blocks + 1)
    );
}
