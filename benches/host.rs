//! Criterion benches of the host-side work: CSR validation and copy from caller arrays, row
//! statistics, the direct create's read-only check and statistics (`CsrParts::stats_as_is`), the CSR_VECTOR host reference, and the plain f64 product (the test oracle).
//! `cargo bench --bench host`; the matrix is the 3D 7-point Laplacian on 48^3 (110,592 rows,
//! 764,416 non-zeros), or `TESSERA_BENCH_MATRIX` (a generator spec or a Matrix Market file, as
//! `tessera bench` takes them).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use tessera::methods::csr_vector;
use tessera::{Csr, CsrParts, IndexBase, Indices, Operation};

fn matrix() -> Csr<f64> {
    match std::env::var("TESSERA_BENCH_MATRIX") {
        Ok(spec) => {
            tessera::io::load(&spec)
                .expect("TESSERA_BENCH_MATRIX loads")
                .1
        }
        Err(_) => tessera::io::gen::generate("gen:lap3d7:48").expect("generator works"),
    }
}

fn bench(c: &mut Criterion) {
    let a = matrix();
    let (rp, ci, v) = (
        a.row_ptr().to_vec(),
        a.col_ind().to_vec(),
        a.values().to_vec(),
    );
    let x: Vec<f64> = (0..a.cols()).map(|i| 1.0 + (i % 7) as f64 * 0.1).collect();
    let mut g = c.benchmark_group("host");
    g.throughput(Throughput::Elements(a.nnz() as u64));
    // The caller's arrays, as the C API hands them over.
    let parts = || CsrParts {
        rows: a.rows() as i64,
        cols: a.cols() as i64,
        nnz: a.nnz() as i64,
        row_ptr: Indices::I32(black_box(&rp)),
        col_ind: Indices::I32(black_box(&ci)),
        values: black_box(&v),
        base: IndexBase::Zero,
    };
    g.bench_function("csr_from_parts_validate_and_copy", |b| {
        b.iter(|| Csr::from_parts(parts()).expect("valid"))
    });
    g.bench_function("row_statistics", |b| b.iter(|| black_box(&a).stats()));
    g.bench_function("csr_parts_stats_as_is", |b| {
        b.iter(|| parts().stats_as_is().expect("valid"))
    });
    let p = csr_vector::params::fixed_rule(&a.stats(), 14);
    let mut y = vec![0.0; a.rows()];
    g.bench_function("csr_vector_reference_spmv_f64", |b| {
        b.iter(|| csr_vector::reference::spmv(black_box(&a), &p, 1.0, &x, 0.0, &mut y))
    });
    g.bench_function("plain_f64_product", |b| {
        b.iter(|| black_box(&a).spmv_f64(Operation::NonTranspose, 1.0, &x, 0.0, &mut y))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
