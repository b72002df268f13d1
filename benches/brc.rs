//! Criterion benches of BRC's host-side work: the fixed rule (row statistics of the BRC part,
//! the HYB width, the piece count), the CSR -> BRC conversion (Algorithm 1, pure and hybrid)
//! and the host reference product. `cargo bench --bench brc`. Matrices: the 3D 7-point
//! Laplacian on 48^3 (110,592 rows, 764,416 non-zeros; the rule picks the ELL-only hybrid) and
//! an R-MAT power-law graph of 2^17 rows (sigma > mu; pure BRC with split rows). Set
//! `TESSERA_BENCH_MATRIX=gen:lap3d7:160` (28.5 M non-zeros) to time one large conversion.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use tessera::methods::brc::format::{build, plan, plan_on, Variant};
use tessera::methods::brc::{params, reference};

fn bench(c: &mut Criterion) {
    let mut specs = vec![
        "gen:lap3d7:48".to_string(),
        "gen:powerlaw:17,8,1".to_string(),
    ];
    if let Ok(extra) = std::env::var("TESSERA_BENCH_MATRIX") {
        specs = vec![extra];
    }
    for spec in specs {
        let a = tessera::io::gen::generate(&spec).expect("generator works");
        let stats = a.stats();
        let rule = params::fixed_rule(a.row_ptr(), &stats, 132).params;
        let x: Vec<f64> = (0..a.cols()).map(|i| 1.0 + (i % 7) as f64 * 0.1).collect();
        let mut y = vec![0.0; a.rows()];
        let mut g = c.benchmark_group(format!("brc {spec}"));
        g.throughput(Throughput::Elements(a.nnz() as u64));
        if a.nnz() > 10_000_000 {
            g.sample_size(10);
        }
        g.bench_function("fixed_rule", |b| {
            b.iter(|| params::fixed_rule(black_box(a.row_ptr()), &stats, 132))
        });
        // The device fill's host half: the plan from the row offsets alone, on one thread and
        // on as many as `plan` takes.
        for (what, threads) in [
            ("plan_rule_atomic_1_thread", Some(1)),
            ("plan_rule_atomic", None),
        ] {
            g.bench_function(what, |b| {
                b.iter(|| {
                    let (rp, b2, k) = (
                        black_box(a.row_ptr()),
                        rule.b2 as usize,
                        rule.ell_width as usize,
                    );
                    match threads {
                        Some(t) => plan_on(rp, a.cols(), 32, b2, k, Variant::Atomic, t),
                        None => plan(rp, a.cols(), 32, b2, k, Variant::Atomic),
                    }
                    .expect("fits")
                })
            });
        }
        for (what, k) in [("pure", 0), ("rule", rule.ell_width as usize)] {
            if what == "rule" && k == 0 {
                continue;
            }
            g.bench_function(format!("convert_{what}_atomic"), |b| {
                b.iter(|| {
                    build(black_box(&a), 32, rule.b2 as usize, k, Variant::Atomic).expect("fits")
                })
            });
        }
        g.bench_function("convert_rule_deterministic", |b| {
            b.iter(|| {
                build(
                    black_box(&a),
                    32,
                    rule.b2 as usize,
                    rule.ell_width as usize,
                    Variant::Deterministic,
                )
                .expect("fits")
            })
        });
        let f = build(
            &a,
            32,
            rule.b2 as usize,
            rule.ell_width as usize,
            Variant::Atomic,
        )
        .expect("fits");
        g.bench_function("reference_spmv_f64", |b| {
            b.iter(|| reference::spmv(black_box(&f), rule.rep, 128, 1.0, &x, 0.0, &mut y))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
