//! The thread-safety contract on a real GPU (issue 10, item 5; README "Contracts"): 8 threads,
//! each with its own handle and its own non-blocking stream, share matrices of every
//! implemented method (f32 and f64; HOLA in both carry and atomic mode; BRC's deterministic
//! variant; CSR_VECTOR with ONLINE tuning, whose search state every thread's products update;
//! AUTO with QUICK), multiply them concurrently (both operations, products queued back to back
//! without waiting), and every y is checked against the f64 product. Then every method's
//! matrix gets products queued on 8 streams at once into one y per stream (the per-matrix
//! workspaces must keep concurrent products apart). Without a GPU every test prints one
//! "skipped: no CUDA device" line and returns. `TESSERA_TEST_SMALL=1` runs fewer rounds.

mod common;

use common::gpu::{destroy_stream, gpu, new_stream, queued_products_on_streams};
use common::products::{assert_product, x_for};
use tessera::backend::cuda::DeviceVec;
use tessera::{Algorithm, AnyMatrix, BackendKind, Csr, Handle, Matrix, Operation, Scalar, Tuning};

const THREADS: u64 = 8;

fn small() -> bool {
    common::test_small()
}

/// One shared matrix: its values as the method sees them (f64), and the matrix.
struct Shared {
    name: String,
    alg: Algorithm,
    tuning: Tuning,
    a: Csr<f64>,
    m: AnyMatrix,
}

fn shared<T: Scalar>(
    h: &Handle,
    spec: &str,
    alg: Algorithm,
    tuning: Tuning,
    wrap: fn(Matrix<T>) -> AnyMatrix,
) -> Shared {
    let (name, a) = tessera::io::load(spec).unwrap();
    let mut m = Matrix::from_csr(h, a.convert::<T>());
    m.analyze(h, alg, tuning).unwrap();
    let name = format!(
        "{name} {alg} {tuning} {:?}: {}",
        T::VALUE_TYPE,
        m.info().params
    );
    Shared {
        name,
        alg,
        tuning,
        a: m.csr(h).unwrap().convert::<f64>(),
        m: wrap(m),
    }
}

/// Queues `rounds` products y = 1.5*op(A)*x - 0.5*y on the handle's stream for each matrix
/// (one y per matrix and operation, all in flight together), then checks them all.
fn products<T: Scalar>(
    h: &Handle,
    m: &Matrix<T>,
    a: &Csr<f64>,
    name: &str,
    seed: u64,
    rounds: usize,
) {
    let dev = h.cuda().unwrap();
    let mut queued = Vec::new();
    for op in [Operation::NonTranspose, Operation::Transpose] {
        let (xl, yl) = m.vector_lengths(op);
        let x: Vec<T> = x_for(xl, seed).into_iter().map(T::from_f64).collect();
        let y0: Vec<T> = x_for(yl, seed + 1).into_iter().map(T::from_f64).collect();
        let dx = DeviceVec::from_slice(dev, &x).unwrap();
        let dy = DeviceVec::from_slice(dev, &y0).unwrap();
        for _ in 0..rounds {
            m.spmv_device(
                h,
                op,
                T::from_f64(1.5),
                dx.addr(),
                T::from_f64(-0.5),
                dy.addr(),
            )
            .unwrap();
        }
        queued.push((op, x, y0, dx, dy));
    }
    for (op, x, y0, _dx, dy) in queued {
        let y = dy.to_vec(h.cuda_stream()).unwrap();
        // rounds of y <- 1.5 A x - 0.5 y: y = c_a * A x + (-0.5)^rounds * y0 with
        // c_a = 1.5 * sum_{k<rounds} (-0.5)^k.
        let c_a: f64 = (0..rounds).map(|k| 1.5 * (-0.5f64).powi(k as i32)).sum();
        let c_b = (-0.5f64).powi(rounds as i32);
        assert_product(
            &format!("{name}, {rounds} queued products, seed {seed}"),
            a,
            op,
            c_a,
            &x,
            c_b,
            &y0,
            &y,
        );
    }
}

#[test]
fn eight_threads_with_their_own_handles_and_streams_share_every_methods_matrices() {
    let Some(h) = gpu() else { return };
    let mut det = Handle::with_backend(BackendKind::Cuda, 0).unwrap();
    det.set_deterministic(true);
    // Long rows on a small grid (HOLA carry mode: the carry workspace's ring is what
    // concurrent products share) and short rows on a larger one (HOLA's core kernel alone).
    let specs = ["gen:circuit:5000,5,3,5000,9", "gen:random:40000,30000,12,4"];
    let mut mats = Vec::new();
    for spec in specs {
        for &alg in tessera::select::IMPLEMENTED {
            mats.push(shared::<f64>(&h, spec, alg, Tuning::None, AnyMatrix::F64));
        }
        mats.push(shared::<f32>(
            &h,
            spec,
            Algorithm::Auto,
            Tuning::None,
            AnyMatrix::F32,
        ));
        mats.push(shared::<f64>(
            &det,
            spec,
            Algorithm::Brc,
            Tuning::None,
            AnyMatrix::F64,
        ));
        mats.push(shared::<f64>(
            &h,
            spec,
            Algorithm::CsrVector,
            Tuning::Online,
            AnyMatrix::F64,
        ));
    }
    mats.push(shared::<f64>(
        &h,
        specs[0],
        Algorithm::Auto,
        Tuning::Quick,
        AnyMatrix::F64,
    ));
    let carry = mats
        .iter()
        .any(|s| s.alg == Algorithm::Hola && s.m_info_params().contains(" carry"));
    assert!(
        carry,
        "no HOLA matrix in carry mode among {:?}",
        names(&mats)
    );
    let rounds = if small() { 2 } else { 12 };
    let sweeps = if small() { 1 } else { 3 };
    let mats = &mats;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            s.spawn(move || {
                let stream = new_stream();
                let mut h = Handle::with_backend(BackendKind::Cuda, 0).unwrap();
                h.set_stream(stream as usize).unwrap();
                for sweep in 0..sweeps {
                    // Each thread walks the matrices in its own order.
                    for i in 0..mats.len() {
                        let sh = &mats[(i + t as usize * 3) % mats.len()];
                        let seed = 100 * t + 10 * sweep + i as u64;
                        match &sh.m {
                            AnyMatrix::F64(m) => products(&h, m, &sh.a, &sh.name, seed, rounds),
                            AnyMatrix::F32(m) => products(&h, m, &sh.a, &sh.name, seed, rounds),
                        }
                    }
                }
                h.set_stream(0).unwrap();
                destroy_stream(stream);
            });
        }
    });
    // ONLINE's shared search state went through all of that and still gives right products.
    for sh in mats.iter().filter(|s| s.tuning == Tuning::Online) {
        if let AnyMatrix::F64(m) = &sh.m {
            for round in 0..50 {
                products(&h, m, &sh.a, &sh.name, 7 + round, 1);
            }
            assert!(m.tuning_settled(), "{}: {}", sh.name, m.info().params);
        }
    }
}

#[test]
fn products_of_every_method_queued_on_eight_streams_at_once_stay_apart() {
    let Some(h) = gpu() else { return };
    let rounds = if small() { 4 } else { 20 };
    for spec in [
        "gen:powerlaw:12,8,5",
        "gen:circuit:5000,5,3,5000,9",
        "gen:random:40000,30000,12,4",
    ] {
        let (name, a) = tessera::io::load(spec).unwrap();
        for &alg in tessera::select::IMPLEMENTED {
            let mut m = Matrix::from_csr(&h, a.clone());
            m.analyze(&h, alg, Tuning::None).unwrap();
            let what = format!("{name} {alg}: {}", m.info().params);
            queued_products_on_streams(&m, &a, &what, THREADS, rounds);
        }
    }
}

impl Shared {
    fn m_info_params(&self) -> String {
        match &self.m {
            AnyMatrix::F32(m) => m.info().params,
            AnyMatrix::F64(m) => m.info().params,
        }
    }
}

fn names(v: &[Shared]) -> Vec<&str> {
    v.iter().map(|s| s.name.as_str()).collect()
}
