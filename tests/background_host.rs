//! AUTO's background build on the host backend (runs in CI): AUTO with TUNING_NONE answers
//! with a method over the CSR arrays when its heuristic picks BRC or TILE, builds that format
//! on a worker thread and swaps it in at a product boundary. Products before, during and after
//! the swap, from several threads, with update_values at each stage, re-analysis and drop while
//! the build runs, and `TESSERA_BACKGROUND_BUILD=0`. The GPU twin is tests/gpu_background.rs.

mod common;

use common::background::{new_values, wait_until_built};

use common::products::{assert_product, x_for};
use std::sync::mpsc;
use tessera::{
    Algorithm, BackendKind, BackgroundStatus, Csr, Handle, Matrix, Operation, Scalar, Tuning,
};

fn host() -> Handle {
    Handle::with_backend(BackendKind::Host, 0).unwrap()
}

/// Both operations, y = 1.5 op(A) x - 0.5 y0, checked against the f64 product of `a`.
fn products<T: Scalar>(h: &Handle, m: &Matrix<T>, a: &Csr<f64>, what: &str, seed: u64) {
    for op in [Operation::NonTranspose, Operation::Transpose] {
        let (xl, yl) = m.vector_lengths(op);
        let x: Vec<T> = x_for(xl, seed).into_iter().map(T::from_f64).collect();
        let y0: Vec<T> = x_for(yl, seed + 1).into_iter().map(T::from_f64).collect();
        let mut y = y0.clone();
        m.spmv(h, op, T::from_f64(1.5), &x, T::from_f64(-0.5), &mut y)
            .unwrap();
        assert_product(what, a, op, 1.5, &x, -0.5, &y0, &y);
    }
}

/// Every stage of a swap, gated: the worker waits after its host half until the test lets it go.
fn stages<T: Scalar>(spec: &str, now: Algorithm, later: Algorithm) {
    let h = host();
    let (name, a64) = tessera::io::load(spec).unwrap();
    let mut m = Matrix::from_csr(&h, a64.convert::<T>());
    let (tx, rx) = mpsc::channel();
    m.analyze_then(&h, now, later, Some(rx)).unwrap();
    let mut a = m.csr(&h).unwrap().convert::<f64>();
    let info = m.info();
    assert_eq!(
        info.algorithm, now,
        "{name}: runs {now} while {later} is built"
    );
    assert_eq!(info.background, BackgroundStatus::Building(later));
    assert!(
        info.params.contains("built in the background"),
        "{}",
        info.params
    );
    let bytes_before = info.device_bytes;

    // Before: products run `now`, and update_values reaches it (the worker's copy is older).
    products(&h, &m, &a, &format!("{name} before the swap"), 1);
    let (v, a2) = new_values(&mut m, &h, 11);
    m.update_values(&h, &v).unwrap();
    a = a2;
    products(
        &h,
        &m,
        &a,
        &format!("{name} after update_values, before the swap"),
        2,
    );
    assert_eq!(m.info().algorithm, now);

    // Built but not swapped in until a product comes.
    tx.send(()).unwrap();
    wait_until_built(&m);
    assert_eq!(m.info().background, BackgroundStatus::Ready(later));
    assert_eq!(m.info().algorithm, now);
    assert!(
        m.info().device_bytes > bytes_before,
        "the built form is counted"
    );

    // The next product (the fifth: `products` makes two) swaps it in, its values refreshed
    // first (they changed after the build started).
    products(&h, &m, &a, &format!("{name} at the swap"), 3);
    let info = m.info();
    assert_eq!(info.algorithm, later);
    assert!(
        matches!(info.background, BackgroundStatus::Swapped { target, products: 4, .. } if target == later),
        "{:?}",
        info.background
    );
    assert!(
        info.params.contains("swapped in after 4 products"),
        "{}",
        info.params
    );

    // After: update_values reaches the new form (and the retired one).
    let (v, a3) = new_values(&mut m, &h, 12);
    m.update_values(&h, &v).unwrap();
    products(
        &h,
        &m,
        &a3,
        &format!("{name} after the swap and update_values"),
        4,
    );

    // Analyzing again drops everything: a named method runs, nothing is in the background.
    m.analyze(&h, Algorithm::CsrVector, Tuning::None).unwrap();
    assert_eq!(m.info().background, BackgroundStatus::None);
    products(&h, &m, &a3, &format!("{name} analyzed again"), 5);
}

#[test]
fn every_stage_of_a_swap_to_brc_and_to_tile_is_right() {
    stages::<f64>("gen:powerlaw:11,8,5", Algorithm::CsrVector, Algorithm::Brc);
    stages::<f32>("gen:powerlaw:11,8,5", Algorithm::Hola, Algorithm::Tile);
    stages::<f64>("gen:random:3000,2000,9,4", Algorithm::Hola, Algorithm::Brc);
    stages::<f32>("gen:dense:200,300", Algorithm::CsrVector, Algorithm::Tile);
}

#[test]
fn threads_multiplying_across_the_swap_stay_right() {
    let h = host();
    let (name, a64) = tessera::io::load("gen:random:3000,2000,9,4").unwrap();
    let mut m = Matrix::from_csr(&h, a64.clone());
    let (tx, rx) = mpsc::channel();
    m.analyze_then(&h, Algorithm::CsrVector, Algorithm::Brc, Some(rx))
        .unwrap();
    let m = &m;
    let a = &a64;
    let name = name.as_str();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            s.spawn(move || {
                let h = host();
                for i in 0..40 {
                    products(
                        &h,
                        m,
                        a,
                        &format!("{name} thread {t} product {i}"),
                        100 * t + i,
                    );
                }
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        tx.send(()).unwrap();
    });
    // Whatever the threads did, one more product swaps in a finished build.
    wait_until_built(m);
    products(&h, m, a, name, 7);
    assert_eq!(m.info().algorithm, Algorithm::Brc);
}

#[test]
fn dropping_or_reanalyzing_a_matrix_while_its_format_is_built_is_clean() {
    let h = host();
    let (name, a64) = tessera::io::load("gen:powerlaw:11,8,5").unwrap();
    // Dropped with the worker held between its halves: the drop does not wait for it, and
    // the worker, once let go, sees the cancellation and builds nothing more.
    let (tx, rx) = mpsc::channel::<()>();
    let mut m = Matrix::from_csr(&h, a64.clone());
    m.analyze_then(&h, Algorithm::CsrVector, Algorithm::Tile, Some(rx))
        .unwrap();
    drop(m);
    drop(tx);
    // Re-analyzed while building: the new analysis alone counts.
    let (_tx, rx) = mpsc::channel::<()>();
    let mut m = Matrix::from_csr(&h, a64.clone());
    m.analyze_then(&h, Algorithm::CsrVector, Algorithm::Brc, Some(rx))
        .unwrap();
    m.analyze(&h, Algorithm::Hola, Tuning::None).unwrap();
    assert_eq!(m.info().algorithm, Algorithm::Hola);
    assert_eq!(m.info().background, BackgroundStatus::None);
    products(&h, &m, &a64, &name, 9);
    // finish_background without a build is a no-op; before analyze it is NOT_ANALYZED.
    m.finish_background(&h).unwrap();
    let fresh = Matrix::from_csr(&h, a64.clone());
    assert_eq!(
        fresh.finish_background(&h).unwrap_err().status(),
        tessera::Status::NotAnalyzed
    );
}

/// A build deferred to its `after`-th product (AUTO's start on the GPU): nothing is built
/// before, the build starts at that product and swaps in later; update_values while it waits
/// reaches the swapped-in form; finish_background starts a waiting build; a matrix dropped or
/// re-analyzed while its build waits ends the worker at once.
#[test]
fn a_deferred_build_starts_at_its_product_and_not_before() {
    let h = host();
    let (name, a64) = tessera::io::load("gen:uniform:70000,16,3").unwrap();
    let mut m = Matrix::from_csr(&h, a64.clone());
    let after = 5;
    m.analyze_deferred(&h, Algorithm::CsrVector, Algorithm::Brc, after)
        .unwrap();
    let waiting = BackgroundStatus::Scheduled {
        target: Algorithm::Brc,
        after,
    };
    assert_eq!(m.info().background, waiting);
    assert!(
        m.info().params.contains("after 5 products"),
        "{}",
        m.info().params
    );
    // Time passes and products run: the build does not start before the fifth.
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(m.info().background, waiting);
    let (v, mut a) = new_values(&mut m, &h, 21);
    m.update_values(&h, &v).unwrap();
    for k in 1..after {
        let y = one_product(&h, &m, a64.cols(), k);
        assert_product(
            &name,
            &a,
            Operation::NonTranspose,
            1.0,
            &x_for(a64.cols(), k),
            0.0,
            &vec![0.0; a64.rows()],
            &y,
        );
        assert_eq!(m.info().background, waiting, "after {k} products");
    }
    one_product(&h, &m, a64.cols(), 9);
    assert_ne!(m.info().background, waiting, "the fifth product starts it");
    wait_until_built(&m);
    products(&h, &m, &a, &format!("{name} after the build"), 3);
    assert_eq!(m.info().algorithm, Algorithm::Brc);
    let (v, a2) = new_values(&mut m, &h, 22);
    m.update_values(&h, &v).unwrap();
    a = a2;
    products(&h, &m, &a, &format!("{name} updated after the swap"), 4);

    // finish_background starts a build that waits, and swaps it in.
    m.analyze_deferred(&h, Algorithm::CsrVector, Algorithm::Brc, 1 << 40)
        .unwrap();
    m.finish_background(&h).unwrap();
    assert_eq!(m.info().algorithm, Algorithm::Brc);
    products(&h, &m, &a, &format!("{name} finished early"), 5);

    // Dropped or re-analyzed while waiting: returns at once, and nothing is left running.
    m.analyze_deferred(&h, Algorithm::CsrVector, Algorithm::Brc, 1 << 40)
        .unwrap();
    let t = std::time::Instant::now();
    m.analyze(&h, Algorithm::Hola, Tuning::None).unwrap();
    assert_eq!(m.info().background, BackgroundStatus::None);
    m.analyze_deferred(&h, Algorithm::CsrVector, Algorithm::Tile, 1 << 40)
        .unwrap();
    drop(m);
    assert!(t.elapsed().as_secs_f64() < 5.0, "{:?}", t.elapsed());
}

/// One product y = A x (seed `seed`), returned.
fn one_product(h: &Handle, m: &Matrix<f64>, cols: usize, seed: u64) -> Vec<f64> {
    let x = x_for(cols, seed);
    let mut y = vec![0.0; m.vector_lengths(Operation::NonTranspose).1];
    m.spmv(h, Operation::NonTranspose, 1.0, &x, 0.0, &mut y)
        .unwrap();
    y
}

/// The policy itself, on a matrix the heuristic sends to BRC: AUTO answers with CSR_VECTOR,
/// finish_background swaps BRC in; with TESSERA_BACKGROUND_BUILD=0 analyze builds BRC itself.
/// (One test: it sets an environment variable that analyze reads.)
#[test]
fn auto_answers_over_the_csr_and_swaps_in_its_heuristics_format() {
    let h = host();
    let (name, a64) = tessera::io::load("gen:uniform:70000,16,1").unwrap();
    assert_eq!(
        tessera::select::heuristic(&a64.stats(), 8, false, h.sm_count()),
        Algorithm::Brc
    );
    let mut m = Matrix::from_csr(&h, a64.clone());
    m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
    let info = m.info();
    assert_ne!(info.background, BackgroundStatus::None, "{}", info.params);
    if !matches!(info.background, BackgroundStatus::Swapped { .. }) {
        assert_eq!(info.algorithm, Algorithm::CsrVector);
    }
    products(&h, &m, &a64, &name, 1);
    m.finish_background(&h).unwrap();
    assert_eq!(m.info().algorithm, Algorithm::Brc);
    products(&h, &m, &a64, &name, 2);
    // QUICK and named methods never build in the background.
    m.analyze(&h, Algorithm::Brc, Tuning::None).unwrap();
    assert_eq!(m.info().background, BackgroundStatus::None);
    // The old behaviour on request.
    std::env::set_var("TESSERA_BACKGROUND_BUILD", "0");
    let r = m.analyze(&h, Algorithm::Auto, Tuning::None);
    std::env::remove_var("TESSERA_BACKGROUND_BUILD");
    r.unwrap();
    assert_eq!(m.info().algorithm, Algorithm::Brc);
    assert_eq!(m.info().background, BackgroundStatus::None);
    // Determinism keeps CSR_VECTOR, with nothing in the background.
    let mut hd = Handle::with_backend(BackendKind::Host, 0).unwrap();
    hd.set_deterministic(true);
    let mut md = Matrix::from_csr(&hd, a64.clone());
    md.analyze(&hd, Algorithm::Auto, Tuning::None).unwrap();
    assert_eq!(md.info().algorithm, Algorithm::CsrVector);
    assert_eq!(md.info().background, BackgroundStatus::None);
}

/// A process that may run on one core only (here `taskset -c 0`; an MPI rank bound to a core is
/// the common case) keeps AUTO's method over the CSR and builds no format in the background, and
/// says so in the parameters; with two cores or more the background build is used.
#[test]
fn one_core_keeps_the_csr_method_and_says_why() {
    use std::process::Command;
    if Command::new("taskset").arg("--version").output().is_err() {
        println!("skipped: no taskset on this machine");
        return;
    }
    let info = |pin: bool| {
        let mut cmd = if pin {
            let mut c = Command::new("taskset");
            c.args(["-c", "0", env!("CARGO_BIN_EXE_tessera")]);
            c
        } else {
            Command::new(env!("CARGO_BIN_EXE_tessera"))
        };
        let out = cmd
            .args(["info", "gen:lap3d7:80"])
            .env("TESSERA_BACKEND", "host")
            .env_remove("TESSERA_BACKGROUND_BUILD")
            .output()
            .expect("tessera info runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{text}");
        text
    };
    let one = info(true);
    assert!(
        one.contains("AUTO keeps csr_vector: this process has one core, which a background build of brc would take from it"),
        "{one}"
    );
    assert!(!one.contains("built in the background"), "{one}");
    if std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2) {
        let many = info(false);
        assert!(
            many.contains("csr_vector runs while brc is built in the background"),
            "{many}"
        );
    }
}
