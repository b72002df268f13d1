//! What the background-build tests share (`background_host.rs`, `gpu_background.rs`).

use super::products::x_for;
use tessera::{BackgroundStatus, Csr, Handle, Matrix, Scalar};

/// New values for the same pattern (the caller's order is CSR order here), and the f64 CSR of
/// the values the matrix holds after the update (rounded to T).
pub fn new_values<T: Scalar>(m: &mut Matrix<T>, h: &Handle, seed: u64) -> (Vec<T>, Csr<f64>) {
    let csr = m.csr(h).unwrap();
    let v: Vec<T> = x_for(csr.nnz(), seed)
        .into_iter()
        .map(T::from_f64)
        .collect();
    let mut c = (*csr).clone();
    c.set_values_from_input(&v).unwrap();
    (v, c.convert())
}

/// Waits (polling `info`, up to 2 minutes) until the background build is no longer running.
pub fn wait_until_built<T: Scalar>(m: &Matrix<T>) {
    let t = std::time::Instant::now();
    while matches!(m.info().background, BackgroundStatus::Building(_)) {
        assert!(
            t.elapsed().as_secs() < 120,
            "the background build never finished"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}
