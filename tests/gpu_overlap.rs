//! The overlapped second kernel of a product's pair (programmatic dependent launch, compute
//! capability 9.0 and later: `Device::overlaps_launches`): HOLA's share mode (`hola_prescale`,
//! then `hola_spmv`), pure and hybrid BRC (`brc_scale_rows` or `brc_ell`, then `brc_spmv`) and
//! TILE with split tile rows (`tile_prescale`, then `tile_spmv`) give the right product with the
//! overlap and without it; a chain of products where each one's y is the next one's x (the
//! second kernel must not read x before the product before it has finished) and a captured
//! graph stay right with it. Without a GPU every test prints one "skipped: no CUDA device" line
//! and returns.

mod common;

use common::gpu::{
    capture, destroy_stream, gpu, new_stream, replay_checked, shared_device, whole_device,
};
use common::products::{check_method, x_for};
use tessera::backend::cuda::DeviceVec;
use tessera::{Algorithm, Csr, Handle, Matrix, Operation, Tuning};

/// 200,000 rows of 10 to 14 random columns: BRC's fixed rule takes the hybrid (an ELL part of
/// the CUSP width, BRC blocks for the rest).
fn narrow_spread() -> Csr<f64> {
    let n = 200_000usize;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut t = Vec::new();
    for r in 0..n {
        let len = 10 + (next() % 5) as usize;
        for _ in 0..len {
            let c = (next() % n as u64) as usize;
            t.push((r, c, 1.0 + (next() % 7) as f64));
        }
    }
    Csr::from_triplets(n, n, &t).unwrap()
}

/// What a method's info shows when its products run a pair of kernels.
type Shows = fn(&str) -> bool;

/// (what, matrix, method, its info with a pair of kernels): HOLA in share mode, BRC pure
/// (split and empty rows scaled first) and hybrid (the ELL part first), TILE with split tile
/// rows.
fn pairs() -> Vec<(String, Csr<f64>, Algorithm, Shows)> {
    let (e, empty) = tessera::io::load("gen:emptyrows:300000,16,3").unwrap();
    let (d, dense) = tessera::io::load("gen:dense:1000,1000").unwrap();
    vec![
        (e.clone(), empty.clone(), Algorithm::Hola, |p| {
            p.contains(" prescale")
        }),
        (e, empty, Algorithm::Brc, |p| {
            p.contains("hybrid=off") && !p.contains("split_rows=0")
        }),
        (
            "narrow spread".into(),
            narrow_spread(),
            Algorithm::Brc,
            |p| p.contains("hybrid=ELL"),
        ),
        (d, dense, Algorithm::Tile, |p| {
            p.contains(" split tile rows") && !p.contains(" 0 split tile rows")
        }),
    ]
}

fn matrix(h: &Handle, a: &Csr<f64>, alg: Algorithm, shows: Shows, what: &str) -> Matrix<f64> {
    let mut m = Matrix::from_csr(h, a.clone());
    m.analyze(h, alg, Tuning::None).unwrap();
    let info = m.info();
    assert!(
        shows(&info.params),
        "{what}: {alg:?} should run a pair of kernels: {}",
        info.params
    );
    m
}

#[test]
fn a_products_pair_is_right_with_and_without_the_overlap() {
    // Exclusive: the answer forced here is the device's, for every test of the file.
    let _device = whole_device();
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let overlaps = dev.compute_capability().0 >= 9;
    for on in [false, true] {
        dev.force_overlap(Some(on));
        assert_eq!(dev.overlaps_launches(), on && overlaps);
        for (name, a, alg, shows) in pairs() {
            let what = format!("{name}, overlap {on}");
            matrix(&h, &a, alg, shows, &what);
            check_method(&h, &what, &a, alg, Tuning::None);
        }
    }
    dev.force_overlap(None);
}

/// u <- A u / s + 0.25 u' twenty times on the device (u' the vector before), each product's y
/// the next one's x, against the same chain in f64 on the host.
#[test]
fn a_chain_of_products_reads_each_x_after_the_product_that_wrote_it() {
    let _device = shared_device();
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    for (name, a, alg, shows) in pairs() {
        let m = matrix(&h, &a, alg, shows, &name);
        // 1 / the largest absolute row sum: the chain neither grows nor vanishes.
        let s = (0..a.rows())
            .map(|r| {
                let (lo, hi) = (a.row_ptr()[r] as usize, a.row_ptr()[r + 1] as usize);
                a.values()[lo..hi].iter().map(|v| v.abs()).sum::<f64>()
            })
            .fold(1.0, f64::max);
        let alpha = 1.0 / s;
        let mut u = x_for(a.cols(), 11);
        let mut v = x_for(a.rows(), 12);
        let (mut du, mut dv) = (
            DeviceVec::from_slice(&dev, &u).unwrap(),
            DeviceVec::from_slice(&dev, &v).unwrap(),
        );
        for _ in 0..20 {
            m.spmv_device(
                &h,
                Operation::NonTranspose,
                alpha,
                du.addr(),
                0.25,
                dv.addr(),
            )
            .unwrap();
            let mut next = v.clone();
            a.spmv_f64(Operation::NonTranspose, alpha, &u, 0.25, &mut next);
            v = u;
            u = next;
            std::mem::swap(&mut du, &mut dv);
        }
        let got = du.to_vec(h.cuda_stream()).unwrap();
        let scale = u.iter().fold(1e-300f64, |m, v| m.max(v.abs()));
        let worst = got
            .iter()
            .zip(&u)
            .map(|(g, w)| (g - w).abs() / scale)
            .fold(0.0, f64::max);
        assert!(
            worst < 1e-10,
            "{name}, {alg:?}: 20 chained products off by {worst:e} (relative to the largest entry)"
        );
    }
}

#[test]
fn a_captured_pair_replays_right_with_the_overlap() {
    // A global-mode capture fails other threads' allocations: exclusive.
    let _device = whole_device();
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let stream = new_stream();
    let mut hs = Handle::with_backend(tessera::BackendKind::Cuda, 0).unwrap();
    hs.set_stream(stream as usize).unwrap();
    for (name, a, alg, shows) in pairs() {
        let m = matrix(&hs, &a, alg, shows, &name);
        let mut dx = DeviceVec::from_slice(&dev, &x_for(a.cols(), 1)).unwrap();
        let y0 = x_for(a.rows(), 2);
        let dy = DeviceVec::from_slice(&dev, &y0).unwrap();
        let exec = capture(stream, || {
            m.spmv_device(&hs, Operation::NonTranspose, 2.0, dx.addr(), 0.5, dy.addr())
                .unwrap()
        });
        replay_checked(
            &hs,
            exec,
            stream,
            &mut dx,
            &dy,
            &a,
            y0,
            &format!("{name}, {alg:?}"),
        );
    }
    hs.set_stream(0).unwrap();
    destroy_stream(stream);
}
