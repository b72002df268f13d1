//! The borrowed create's check, queued and not waited for (`Matrix::borrow_device_deferred`,
//! what `tessera_create_csr_borrowed` does). On a real GPU:
//! - while the check runs, AUTO runs a provisional HOLA gated by it: its products are right
//!   on the create's stream, on another stream and in a captured graph;
//! - once the check has reported, AUTO's choice is the one a create that waits makes (the
//!   light method, then the heavy format), swapped in at product boundaries; the graph of the
//!   provisional form still runs right; values updated at each stage are followed;
//! - malformed arrays (each way the host path refuses, including a row_ptr pointing far past
//!   the arrays) make the products launched before the outcome fill y with NaN and read
//!   nothing out of bounds (run under compute-sanitizer), and every later call returns the
//!   error a waiting create returns, with its sentence;
//! - with every check slot taken, a create waits for its check, as before.
//!
//! The tests hold every check's outcome (`hold_checks`) to make "before the outcome" certain,
//! so each takes the whole device. Without a GPU every test prints one "skipped: no CUDA
//! device" line and returns.

mod common;

use common::gpu::{
    capture, checked_product as product, destroy_stream, gpu, launch, new_stream, whole_device,
    DeviceArrays,
};

type Arrays = DeviceArrays<f64>;
use common::products::{assert_product, x_for};
use cudarc::driver::sys;
use tessera::backend::cuda::check::hold_checks;
use tessera::backend::cuda::{DeviceVec, Stream};
use tessera::{Algorithm, BorrowedWrites, Csr, Error, Handle, Matrix, Operation, Tuning};

/// Holds every deferred check's outcome while alive (released on drop, also on a panic).
struct Held;

impl Held {
    fn new() -> Held {
        hold_checks(true);
        Held
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        hold_checks(false);
    }
}

/// AUTO's method for `a` from a create that waits for its check, once its background build
/// (if any) has swapped in.
fn waited_choice(h: &Handle, a: &Csr<f64>) -> Algorithm {
    let arrays = Arrays::of(h, a);
    let mut m = Matrix::<f64>::borrow_device(h, &arrays.descr(), BorrowedWrites::Announced)
        .unwrap()
        .unwrap();
    m.analyze(h, Algorithm::Auto, Tuning::None).unwrap();
    m.finish_background(h).unwrap();
    m.info().algorithm
}

fn stages(spec: &str) {
    let Some(mut h) = gpu() else { return };
    let _g = whole_device();
    let dev = h.cuda().unwrap().clone();
    let (s1, s2) = (new_stream(), new_stream());
    let (name, a) = tessera::io::load(spec).unwrap();
    h.set_stream(s1 as usize).unwrap();
    let want = waited_choice(&h, &a);
    let arrays = Arrays::of(&h, &a);
    let held = Held::new();
    let mut m = Matrix::<f64>::borrow_device_deferred(&h, &arrays.descr())
        .unwrap()
        .unwrap();
    m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
    let info = m.info();
    assert_eq!(info.algorithm, Algorithm::Hola, "{name}: {}", info.params);
    assert!(m.is_provisional(), "{name}");
    assert!(info.params.contains("check runs"), "{}", info.params);
    // The provisional HOLA's row starts come from the check's kernel: in carry mode in the
    // check slot's 24 KiB up to two blocks of 1024 entries per SM (its f64 layout: starts,
    // then four slots of two sums and a counter per block), in a big workspace of 256 KiB up
    // to four; beyond, in share mode (prescale and atomics) in a big one (none of this test's
    // matrices holds one of the 16 while the next is created).
    let sm = dev.sm_count() as usize;
    let blocks = a.nnz().div_ceil(1024);
    let starts = ((blocks + 1) * 4).next_multiple_of(256);
    let layout = starts + 4 * (20 * blocks).next_multiple_of(256);
    let share = blocks > 4 * sm;
    let in_kernel = if share {
        starts <= 256 << 10
    } else {
        layout
            <= if blocks <= 2 * sm {
                24 << 10
            } else {
                256 << 10
            }
    };
    assert_eq!(
        info.params.contains("from the check's kernel"),
        in_kernel,
        "{name}: {}",
        info.params
    );
    assert_eq!(
        info.params.contains(" prescale"),
        share,
        "{name}: {}",
        info.params
    );
    // A grid of more blocks than any SM holds at once runs in share mode whatever the
    // statistics: the provisional HOLA stays when AUTO picks its parameters.
    let kept = blocks > 8 * sm;

    // Gated products on the create's stream, on another, and a graph captured now.
    product(
        &h,
        &m,
        &a,
        &format!("{name} while the check runs, stream 1"),
        1,
    );
    h.set_stream(s2 as usize).unwrap();
    product(
        &h,
        &m,
        &a,
        &format!("{name} while the check runs, stream 2"),
        2,
    );
    let x = x_for(a.cols(), 3);
    let dx = DeviceVec::from_slice(&dev, &x).unwrap();
    let gy = DeviceVec::from_slice(&dev, &vec![f64::NAN; a.rows()]).unwrap();
    let zeros = vec![0.0; a.rows()];
    let graph = capture(s2, || {
        m.spmv_device(&h, Operation::NonTranspose, 1.0, dx.addr(), 0.0, gy.addr())
            .unwrap()
    });
    let replay = |a: &Csr<f64>, what: &str| {
        launch(graph, s2);
        let y = gy.to_vec(Stream(s2 as usize)).unwrap();
        assert_product(what, a, Operation::NonTranspose, 1.0, &x, 0.0, &zeros, &y);
    };
    replay(&a, &format!("{name} graph of the provisional HOLA"));

    // The outcome: the product that reads it leaves AUTO's real choice to the next one, which
    // starts it; finish_background swaps it in.
    drop(held);
    product(&h, &m, &a, &format!("{name} at the outcome"), 4);
    let read = m.info();
    assert!(
        read.params.contains("check runs"),
        "{name}: {}",
        read.params
    );
    product(&h, &m, &a, &format!("{name} after the outcome"), 8);
    let at_outcome = m.info();
    m.finish_background(&h).unwrap();
    let info = m.info();
    assert_eq!(info.algorithm, want, "{name}: {}", info.params);
    if want == Algorithm::Hola && kept {
        // A HOLA of the provisional parameters built now would run in share mode too: the
        // provisional one stays, over the starts the check's kernel wrote.
        assert!(
            info.params.contains("from the check's kernel") && info.params.contains(" prescale"),
            "{name}: {}",
            info.params
        );
    } else if want == Algorithm::Hola {
        // The provisional HOLA runs in carry mode; without rows long enough to need it the
        // final one runs the core kernel alone, over the provisional one's row starts (these
        // grids are one wave), in from the product that read the outcome.
        let own = a.stats().max <= 1025;
        assert_eq!(info.params.contains(" own"), own, "{name}: {}", info.params);
        if own {
            assert!(
                at_outcome.params.contains(" own")
                    && at_outcome
                        .params
                        .contains("row starts of the HOLA that ran"),
                "{name}: {}",
                at_outcome.params
            );
        }
    }
    let (got, host) = (m.stats(), a.stats());
    assert_eq!(
        (got.max, got.min, got.empty_rows),
        (host.max, host.min, host.empty_rows),
        "{name}: the check's statistics"
    );
    product(&h, &m, &a, &format!("{name} after the swap, stream 2"), 5);
    h.set_stream(s1 as usize).unwrap();
    product(&h, &m, &a, &format!("{name} after the swap, stream 1"), 6);
    replay(&a, &format!("{name} graph after the swap"));

    // New values, written into the caller's array: every form follows.
    let v: Vec<f64> = a.values().iter().map(|v| 0.5 * v - 0.25).collect();
    m.update_values(&h, &v).unwrap();
    let mut a2 = a.clone();
    a2.set_values_from_input(&v).unwrap();
    product(&h, &m, &a2, &format!("{name} after update_values"), 7);
    replay(&a2, &format!("{name} graph after update_values"));

    // SAFETY: destroyed once, after its last launch finished (to_vec waited).
    unsafe { sys::cuGraphExecDestroy(graph) };
    drop(m);
    h.set_stream(0).unwrap();
    destroy_stream(s1);
    destroy_stream(s2);
}

#[test]
fn a_sound_matrix_runs_gated_hola_until_its_check_reports_then_autos_choice() {
    // CSR_VECTOR's rows, HOLA's long rows (carry mode), HOLA's rows of at most a block (its
    // core kernel alone), a large stencil (CSR_VECTOR, then BRC) and circuits of 372, 645 and
    // 1231 blocks (HOLA's provisional carry mode in a big workspace; share mode, replaced;
    // share mode, kept).
    for spec in [
        "gen:random:3000,2000,8,1",
        "gen:circuit:20000,4,20,3000,5",
        "gen:powerlaw:12,8,5",
        "gen:lap3d7:100",
        "gen:circuit:80000,4,20,3000,5",
        "gen:circuit:150000,4,20,3000,5",
        "gen:circuit:300000,4,20,3000,5",
    ] {
        stages(spec);
    }
}

#[test]
fn products_right_after_create_and_analyze_on_another_stream_are_right() {
    let Some(mut h) = gpu() else { return };
    let _g = whole_device();
    let (s1, s2) = (new_stream(), new_stream());
    for spec in ["gen:lap3d7:60", "gen:powerlaw:15,8,2"] {
        let (name, a) = tessera::io::load(spec).unwrap();
        let arrays = Arrays::of(&h, &a);
        h.set_stream(s1 as usize).unwrap();
        let mut m = Matrix::<f64>::borrow_device_deferred(&h, &arrays.descr())
            .unwrap()
            .unwrap();
        m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
        // No wait anywhere: the product on stream 2 is ordered after the check and the
        // analysis queued on stream 1.
        h.set_stream(s2 as usize).unwrap();
        for k in 0..3 {
            product(
                &h,
                &m,
                &a,
                &format!("{name}, product {k} on stream 2"),
                10 + k,
            );
        }
    }
    h.set_stream(0).unwrap();
    destroy_stream(s1);
    destroy_stream(s2);
}

#[test]
fn an_analyze_that_finds_the_check_done_keeps_hola_in_the_checks_workspace() {
    // AUTO's HOLA without a heavy format: over the starts the check's kernel wrote (32 blocks,
    // own mode; 137 blocks with rows of 3000, carry mode), and with its starts written into
    // the slot's workspace by analyze (332 blocks: beyond what the kernel lays out, own mode).
    let Some(mut h) = gpu() else { return };
    let _g = whole_device();
    let (s1, s2) = (new_stream(), new_stream());
    for spec in [
        "gen:powerlaw:12,8,5",
        "gen:circuit:20000,4,20,3000,5",
        "gen:circuit:80000,4,20,1000,5",
    ] {
        let (name, a) = tessera::io::load(spec).unwrap();
        let arrays = Arrays::of(&h, &a);
        h.set_stream(s1 as usize).unwrap();
        let mut m = Matrix::<f64>::borrow_device_deferred(&h, &arrays.descr())
            .unwrap()
            .unwrap();
        tessera::backend::cuda::synchronize(h.cuda().unwrap(), Stream(s1 as usize)).unwrap();
        m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
        let info = m.info();
        assert_eq!(info.algorithm, Algorithm::Hola, "{name}: {}", info.params);
        assert!(!m.is_provisional(), "{name}");
        // Nothing of its own on the device: the CSR is the caller's, HOLA's row starts (and
        // carry workspace) the check's.
        assert_eq!(info.device_bytes, 0, "{name}: {}", info.params);
        product(&h, &m, &a, &format!("{name}, stream 1"), 20);
        h.set_stream(s2 as usize).unwrap();
        product(&h, &m, &a, &format!("{name}, stream 2"), 21);
        let v: Vec<f64> = a.values().iter().map(|v| 2.0 * v + 1.0).collect();
        m.update_values(&h, &v).unwrap();
        let mut a2 = a.clone();
        a2.set_values_from_input(&v).unwrap();
        product(&h, &m, &a2, &format!("{name} after update_values"), 22);
        drop(m);
    }
    h.set_stream(0).unwrap();
    destroy_stream(s1);
    destroy_stream(s2);
}

/// Ways to break valid arrays (each refused by a create that waits).
fn breaks(a: &Csr<f64>) -> Vec<(&'static str, Vec<i32>, Vec<i32>)> {
    let (rp, ci) = (a.row_ptr().to_vec(), a.col_ind().to_vec());
    let mut out = Vec::new();
    let mut r = rp.clone();
    r[0] = 1;
    out.push(("row_ptr[0] off the base", r, ci.clone()));
    let mut r = rp.clone();
    r[10] = r[12] + 1;
    out.push(("row_ptr decreasing", r, ci.clone()));
    let mut r = rp.clone();
    r[50] = i32::MAX;
    out.push(("row_ptr far past the arrays", r, ci.clone()));
    let mut r = rp.clone();
    let last = r.len() - 1;
    r[last] -= 1;
    out.push(("row_ptr[rows] short of nnz", r, ci.clone()));
    let mut c = ci.clone();
    c[7] = a.cols() as i32;
    out.push(("a column out of range", rp.clone(), c));
    let mut c = ci.clone();
    c[9] = -5;
    out.push(("a negative column", rp.clone(), c));
    let mut c = ci;
    let (r0, r1) = (rp[3] as usize, rp[4] as usize);
    assert!(r1 - r0 >= 2);
    c.swap(r0, r0 + 1);
    out.push(("unsorted columns", rp, c));
    out
}

#[test]
fn malformed_arrays_fill_y_with_nan_and_report_at_the_next_call() {
    let Some(h) = gpu() else { return };
    let _g = whole_device();
    let dev = h.cuda().unwrap().clone();
    let (_, a) = tessera::io::load("gen:random:300,200,6,4").unwrap();
    for (what, rp, ci) in breaks(&a) {
        let arrays = Arrays::new(&h, a.rows(), a.cols(), &rp, &ci, a.values());
        // What a create that waits says.
        let want: Error =
            match Matrix::<f64>::borrow_device(&h, &arrays.descr(), BorrowedWrites::Announced) {
                Err(e) => e,
                Ok(None) => Error::NotSupported("sorted".into()),
                Ok(Some(_)) => panic!("{what}: a waiting create accepted it"),
            };
        let held = Held::new();
        let mut m = Matrix::<f64>::borrow_device_deferred(&h, &arrays.descr())
            .unwrap_or_else(|e| panic!("{what}: the create waited: {e}"))
            .unwrap();
        m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
        let y0 = vec![7.0; a.rows()];
        let x = DeviceVec::from_slice(&dev, &x_for(a.cols(), 1)).unwrap();
        let dy = DeviceVec::from_slice(&dev, &y0).unwrap();
        m.spmv_device(&h, Operation::NonTranspose, 1.0, x.addr(), 1.0, dy.addr())
            .unwrap();
        let y: Vec<f64> = dy.to_vec(h.cuda_stream()).unwrap();
        assert!(y.iter().all(|v| v.is_nan()), "{what}: y = {:?}...", &y[..4]);
        drop(held);
        let e = m
            .spmv_device(&h, Operation::NonTranspose, 1.0, x.addr(), 1.0, dy.addr())
            .unwrap_err();
        let same = |e: &Error| match &want {
            Error::NotSupported(_) => {
                matches!(e, Error::NotSupported(s) if s.contains("sorted"))
            }
            w => e == w,
        };
        assert!(same(&e), "{what}: {e} instead of {want}");
        let e = m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap_err();
        assert!(same(&e), "{what}: analyze: {e}");
        let e = m.update_values(&h, a.values()).unwrap_err();
        assert!(same(&e), "{what}: update_values: {e}");
        assert_eq!(e.status(), want.status(), "{what}");
        drop(m);
    }
}

#[test]
fn with_every_check_slot_taken_a_create_waits_for_its_check() {
    let Some(h) = gpu() else { return };
    let _g = whole_device();
    let (_, a) = tessera::io::load("gen:random:64,64,4,9").unwrap();
    let arrays = Arrays::of(&h, &a);
    let _held = Held::new();
    let mut ms = Vec::new();
    for _ in 0..300 {
        let mut m = Matrix::<f64>::borrow_device_deferred(&h, &arrays.descr())
            .unwrap()
            .unwrap();
        m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
        ms.push(m);
    }
    let provisional = ms.iter().filter(|m| m.is_provisional()).count();
    // 256 slots (a few may be held by matrices of other tests' handles still alive).
    assert!(
        (200..=256).contains(&provisional),
        "{provisional} of 300 matrices got a check slot"
    );
    for (i, m) in ms.iter().enumerate().step_by(29) {
        product(&h, m, &a, &format!("matrix {i} of 300"), i as u64);
    }
    let last = ms.last().unwrap();
    assert!(!last.is_provisional(), "the last create had no slot left");
    ms.clear();
    // Every slot is back.
    let mut m = Matrix::<f64>::borrow_device_deferred(&h, &arrays.descr())
        .unwrap()
        .unwrap();
    m.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
    assert!(m.is_provisional());
}
