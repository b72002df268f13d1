//! A background build stops when its matrix is dropped (host backend, runs in CI): the format
//! builders poll a cancel flag (`src/methods/cancel.rs`), so the worker ends its job long before
//! a whole build would, instead of spending a core to the end and discarding the result. In a
//! file of its own: it counts this process's running builds (`tessera::running_builds`; their
//! threads stay, idle, for the next build), which no other test may start meanwhile.

use std::time::{Duration, Instant};
use tessera::{Algorithm, BackendKind, Handle, Matrix};

/// Waits until no build is running; returns how long that took.
fn until_no_build_thread(limit: Duration) -> Duration {
    let t = Instant::now();
    while tessera::running_builds() != 0 {
        assert!(
            t.elapsed() < limit,
            "a build is still running after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    t.elapsed()
}

#[test]
fn a_dropped_matrix_stops_its_background_build() {
    let h = Handle::with_backend(BackendKind::Host, 0).unwrap();
    let (_, a) = tessera::io::load("gen:lap3d7:128").unwrap();
    // The whole build, for scale.
    let mut m = Matrix::from_csr(&h, a.clone());
    let t = Instant::now();
    m.analyze_then(&h, Algorithm::CsrVector, Algorithm::Brc, None)
        .unwrap();
    m.finish_background(&h).unwrap();
    let whole = t.elapsed();
    assert_eq!(m.info().algorithm, Algorithm::Brc, "{}", m.info().params);
    drop(m);
    until_no_build_thread(Duration::from_secs(60));

    println!("a whole BRC build: {whole:?}");
    // Dropped a tenth into the build: the thread ends well before a whole build would.
    for _ in 0..3 {
        let mut m = Matrix::from_csr(&h, a.clone());
        m.analyze_then(&h, Algorithm::CsrVector, Algorithm::Brc, None)
            .unwrap();
        std::thread::sleep(whole / 10);
        let t = Instant::now();
        drop(m);
        let dropped = t.elapsed();
        let ended = until_no_build_thread(Duration::from_secs(60));
        println!("dropped in {dropped:?}, the worker ended {ended:?} after");
        assert!(
            dropped + ended < whole / 2,
            "the worker ran {ended:?} after the drop (which took {dropped:?}); a whole build takes {whole:?}"
        );
    }
}
