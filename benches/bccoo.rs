//! Criterion benches of BCCOO's host-side work (yaSpMV, issue 6): the conversion CSR -> BCCOO
//! (the block shape estimate of the fixed rule, the blocking merge, the tiled/transposed layout)
//! on the suite's 3D elasticity matrix (48^3 nodes, 3 dof: 331,776 rows, ~27M non-zeros), and
//! the host reference product over the format on a smaller matrix.
//! `cargo bench --bench bccoo`; `BCCOO_BENCH_MATRIX=gen:stencil27:100` picks another matrix.
//! The bar: converting a 27M-non-zero matrix in under 1 s on one core.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;
use tessera::methods::bccoo::{format, params, reference};

fn bench(c: &mut Criterion) {
    let spec = std::env::var("BCCOO_BENCH_MATRIX").unwrap_or_else(|_| "gen:elasticity:48".into());
    let a = tessera::io::gen::generate(&spec).expect("generator works");
    let facts = format::facts(&a);
    let p = params::fixed_rule(&facts, 132);
    println!(
        "{spec}: {} rows, {} non-zeros; fixed rule for 132 SMs: {p}",
        a.rows(),
        a.nnz()
    );
    let mut g = c.benchmark_group("bccoo_conversion");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(a.nnz() as u64));
    g.bench_function("facts_block_shape_estimate", |b| {
        b.iter(|| format::facts(black_box(&a)))
    });
    g.bench_function("block_merge", |b| {
        b.iter(|| format::block(black_box(&a), p.format.shape, 1).unwrap())
    });
    let blk = format::block(&a, p.format.shape, 1).unwrap();
    g.bench_function("layout_tiles_flags_transpose", |b| {
        b.iter(|| format::layout(black_box(&a), &blk, &p.format, p.wg as usize).unwrap())
    });
    drop(blk);
    g.bench_function("full_conversion_facts_rule_block_layout", |b| {
        b.iter(|| {
            let f = format::facts(black_box(&a));
            let p = params::fixed_rule(&f, 132);
            format::build(&a, &p.format, p.wg as usize).unwrap()
        })
    });
    g.finish();

    let small = tessera::io::gen::generate("gen:elasticity:16").expect("generator works");
    let p = params::fixed_rule(&format::facts(&small), 14);
    let f = format::build(&small, &p.format, p.wg as usize).unwrap();
    let info = f.wg_info(p.wg as usize);
    let x: Vec<f64> = (0..small.cols())
        .map(|i| 1.0 + (i % 7) as f64 * 0.1)
        .collect();
    let mut y = vec![0.0; small.rows()];
    let mut g = c.benchmark_group("bccoo_reference");
    g.throughput(Throughput::Elements(small.nnz() as u64));
    g.bench_function("reference_spmv_f64_elasticity16", |b| {
        b.iter(|| {
            reference::spmv(
                black_box(&f),
                p.wg as usize,
                p.strategy,
                &info,
                1.0,
                &x,
                0.0,
                &mut y,
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
