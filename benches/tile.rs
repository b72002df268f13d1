//! Criterion benches of TILE's host-side work: the CSR -> tile conversion (per-tile format
//! selection of Figure 5, with and without deferral) and the host reference product.
//! `cargo bench --bench tile`. Matrices: the 27-point stencil on 40^3 (1.6 M non-zeros, CSR/ELL
//! /HYB tiles) and an R-MAT power-law graph of 2^16 rows (COO tiles). Set
//! `TESSERA_BENCH_MATRIX=gen:...` to time another.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use tessera::methods::tile::format::build;
use tessera::methods::tile::{reference, TileParams};

fn bench(c: &mut Criterion) {
    let mut specs = vec![
        "gen:stencil27:40".to_string(),
        "gen:powerlaw:16,8,1".to_string(),
    ];
    if let Ok(extra) = std::env::var("TESSERA_BENCH_MATRIX") {
        specs = vec![extra];
    }
    for spec in specs {
        let a = tessera::io::gen::generate(&spec).expect("generator works");
        let x: Vec<f64> = (0..a.cols()).map(|i| 1.0 + (i % 7) as f64 * 0.1).collect();
        let mut y = vec![0.0; a.rows()];
        let mut g = c.benchmark_group(format!("tile {spec}"));
        g.throughput(Throughput::Elements(a.nnz() as u64));
        g.sample_size(10);
        for deferred in [false, true] {
            let p = TileParams::paper(deferred);
            g.bench_function(format!("convert_deferred_{deferred}"), |b| {
                b.iter(|| build(black_box(&a), &p).expect("fits"))
            });
            let f = build(&a, &p).expect("fits");
            g.bench_function(format!("reference_spmv_deferred_{deferred}"), |b| {
                b.iter(|| reference::spmv(&f, 1.0, black_box(&x), 0.0, &mut y))
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
