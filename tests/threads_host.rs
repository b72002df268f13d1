//! The thread-safety contract on the host backend (issue 10, item 5; runs in CI): 8 threads,
//! each with its own host handle, share matrices of every implemented method (f32 and f64,
//! ONLINE tuning asked for too) and multiply them concurrently, both operations, every y
//! checked against the f64 product; one thread meanwhile creates, analyzes, updates and
//! destroys matrices of its own. The GPU twin is tests/gpu_threads.rs.

mod common;

use common::products::{assert_product, x_for};
use tessera::{AnyMatrix, BackendKind, Csr, Handle, Matrix, Operation, Scalar, Tuning};

const THREADS: u64 = 8;

fn host() -> Handle {
    Handle::with_backend(BackendKind::Host, 0).unwrap()
}

fn product<T: Scalar>(h: &Handle, m: &Matrix<T>, a: &Csr<f64>, name: &str, seed: u64) {
    for op in [Operation::NonTranspose, Operation::Transpose] {
        let (xl, yl) = m.vector_lengths(op);
        let x: Vec<T> = x_for(xl, seed).into_iter().map(T::from_f64).collect();
        let y0: Vec<T> = x_for(yl, seed + 1).into_iter().map(T::from_f64).collect();
        let mut y = y0.clone();
        m.spmv(h, op, T::from_f64(1.5), &x, T::from_f64(-0.5), &mut y)
            .unwrap();
        assert_product(name, a, op, 1.5, &x, -0.5, &y0, &y);
    }
}

#[test]
fn eight_threads_with_their_own_host_handles_share_every_methods_matrices() {
    let h = host();
    let mut mats: Vec<(String, Csr<f64>, AnyMatrix)> = Vec::new();
    for spec in ["gen:powerlaw:11,8,5", "gen:random:3000,2000,9,4"] {
        let (name, a) = tessera::io::load(spec).unwrap();
        for &alg in tessera::select::IMPLEMENTED {
            for tuning in [Tuning::None, Tuning::Online] {
                let mut m = Matrix::from_csr(&h, a.clone());
                m.analyze(&h, alg, tuning).unwrap();
                mats.push((
                    format!("{name} {alg} {tuning} f64"),
                    a.clone(),
                    AnyMatrix::F64(m),
                ));
            }
            let mut m = Matrix::from_csr(&h, a.convert::<f32>());
            m.analyze(&h, alg, Tuning::None).unwrap();
            let a32 = m.csr(&h).unwrap().convert::<f64>();
            mats.push((format!("{name} {alg} f32"), a32, AnyMatrix::F32(m)));
        }
    }
    let mats = &mats;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            s.spawn(move || {
                let h = host();
                for round in 0..2 {
                    for i in 0..mats.len() {
                        let (name, a, m) = &mats[(i + 5 * t as usize) % mats.len()];
                        let seed = 1000 * t + 100 * round + i as u64;
                        match m {
                            AnyMatrix::F64(m) => product(&h, m, a, name, seed),
                            AnyMatrix::F32(m) => product(&h, m, a, name, seed),
                        }
                    }
                }
            });
        }
        // Meanwhile: matrices of this thread's own come and go.
        s.spawn(|| {
            let h = host();
            let (name, a) = tessera::io::load("gen:lap3d7:10").unwrap();
            for round in 0..20u64 {
                for &alg in tessera::select::IMPLEMENTED {
                    let mut m = Matrix::from_csr(&h, a.clone());
                    m.analyze(&h, alg, Tuning::None).unwrap();
                    let fresh = x_for(a.nnz(), round);
                    m.update_values(&h, &fresh).unwrap();
                    let mut b = a.clone();
                    b.values_mut().copy_from_slice(&fresh);
                    product(&h, &m, &b, &format!("{name} {alg} round {round}"), round);
                }
            }
        });
    });
}
