//! Soak (issue 10, item 6): 100,000 products on the GPU, mixed with update_values and with
//! matrices destroyed and created again (every implemented method, f32 and f64, small and
//! medium matrices), every live matrix's latest products checked against the f64 product every
//! 1,000 calls, and memory flat: host RSS (/proc/self/status VmRSS) and device memory
//! (cuMemGetInfo) are printed at the start and the end in one summary line, and their growth
//! is bounded (see the constants). `TESSERA_TEST_SMALL=1` runs 2,000 products. Without a GPU
//! the test prints one "skipped: no CUDA device" line and returns.

mod common;

use common::gpu::gpu;
use common::products::{assert_product, x_for};
use std::sync::Arc;
use std::time::Instant;
use tessera::backend::cuda::{Device, DeviceVec};
use tessera::{Algorithm, Csr, Handle, Matrix, Operation, Scalar, Tuning, ValueType};

/// Device bytes that may stay in use after everything is destroyed: the driver gives memory out
/// in 2 MiB pages and keeps pools of its own (module code, events) that may round differently;
/// four pages. A leak of even one matrix per create/destroy cycle (50 cycles, each matrix at
/// least 0.5 MB on the device) or of 100 bytes per product would exceed it several times over.
const DEVICE_TOLERANCE: i64 = 8 << 20;

/// Host RSS growth allowed from the start (after a warm-up that created every kind of matrix
/// once, no matrix live) to the end (every matrix destroyed), both measured after
/// `malloc_trim(0)` hands the allocator's free pages back: what remains is live data plus
/// pages that hold a few live chunks (fragmentation), thread caches and the test's own
/// bookkeeping, a few MiB. A leaked host CSR per create/destroy cycle (0.8 to 2.4 MB each, 50
/// cycles) or 170 bytes per product (100,000 products) would exceed it.
const RSS_TOLERANCE_KB: i64 = 16 << 10;

const SPECS: &[&str] = &[
    "gen:random:20000,20000,10,{}", // 200K non-zeros, uniform rows
    "gen:powerlaw:13,8,{}",         // long rows; HOLA in carry mode
    "gen:lap3d7:30",                // 27K rows, stencil
];

fn small() -> bool {
    common::test_small()
}

/// Host RSS in kB, after handing the allocator's free pages back to the system (glibc), so that
/// the number follows live memory rather than the allocator's high-water mark.
fn rss_kb() -> i64 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: glibc's malloc_trim has no preconditions; it only releases free memory.
        unsafe { malloc_trim(0) };
    }
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(-1)
}

fn device_used(dev: &Arc<Device>) -> i64 {
    tessera::backend::cuda::synchronize(dev, tessera::backend::cuda::Stream(0)).unwrap();
    // What tessera's pool keeps for its next allocations is not held by any object.
    dev.release_cached_memory().unwrap();
    let (free, total) = dev.memory_info().unwrap();
    total as i64 - free as i64
}

/// One live matrix of the soak, with its vectors and what its products should be.
trait Live {
    /// Queues one product (op by parity of `i`), no waiting.
    fn queue(&mut self, h: &Handle, i: u64);
    /// Waits and checks the latest product of each operation.
    fn check(&self, h: &Handle, at: u64);
    /// New values (from the host; every third time from device memory).
    fn update(&mut self, h: &Handle, seed: u64);
}

/// Per operation: x (host), x and y on the device, and the alpha of the last product (0 when
/// nothing was queued since the values last changed).
type OpVectors<T> = (Vec<T>, DeviceVec<T>, DeviceVec<T>, f64);

struct Slot<T: Scalar> {
    name: String,
    m: Matrix<T>,
    /// The values the method sees, as f64 (the oracle).
    a: Csr<f64>,
    vecs: Vec<OpVectors<T>>,
}

fn slot<T: Scalar>(h: &Handle, spec: &str, alg: Algorithm, seed: u64) -> Box<dyn Live> {
    let (name, a) = tessera::io::load(spec).unwrap();
    let mut m = Matrix::from_csr(h, a.convert::<T>());
    m.analyze(h, alg, Tuning::None).unwrap();
    let dev = h.cuda().unwrap();
    let vecs = [Operation::NonTranspose, Operation::Transpose]
        .into_iter()
        .map(|op| {
            let (xl, yl) = m.vector_lengths(op);
            let x: Vec<T> = x_for(xl, seed).into_iter().map(T::from_f64).collect();
            let dx = DeviceVec::from_slice(dev, &x).unwrap();
            let dy = DeviceVec::from_slice(dev, &vec![T::ZERO; yl]).unwrap();
            (x, dx, dy, 0.0)
        })
        .collect();
    Box::new(Slot {
        name: format!("{name} {alg} {:?}", T::VALUE_TYPE),
        a: m.csr(h).unwrap().convert::<f64>(),
        m,
        vecs,
    })
}

impl<T: Scalar> Live for Slot<T> {
    fn queue(&mut self, h: &Handle, i: u64) {
        let k = (i % 2) as usize;
        let op = [Operation::NonTranspose, Operation::Transpose][k];
        let alpha = 1.0 + (i % 5) as f64 * 0.25;
        let (_, dx, dy, last) = &mut self.vecs[k];
        self.m
            .spmv_device(h, op, T::from_f64(alpha), dx.addr(), T::ZERO, dy.addr())
            .unwrap_or_else(|e| panic!("{} product {i}: {e}", self.name));
        *last = alpha;
    }

    fn check(&self, h: &Handle, at: u64) {
        for (k, op) in [Operation::NonTranspose, Operation::Transpose]
            .into_iter()
            .enumerate()
        {
            let (x, _, dy, alpha) = &self.vecs[k];
            if *alpha == 0.0 {
                continue;
            }
            let y = dy.to_vec(h.cuda_stream()).unwrap();
            let y0 = vec![T::ZERO; y.len()];
            let what = format!("{} after {at} products", self.name);
            assert_product(&what, &self.a, op, *alpha, x, 0.0, &y0, &y);
        }
    }

    fn update(&mut self, h: &Handle, seed: u64) {
        let fresh: Vec<T> = x_for(self.a.nnz(), seed)
            .into_iter()
            .map(T::from_f64)
            .collect();
        if seed % 3 == 0 {
            let d = DeviceVec::from_slice(h.cuda().unwrap(), &fresh).unwrap();
            self.m.update_values_device(h, d.addr()).unwrap();
            // The scatter reads d on the stream: wait before d is freed.
            h.synchronize().unwrap();
        } else {
            self.m.update_values(h, &fresh).unwrap();
        }
        // The products already queued used the old values: check only those queued from now.
        self.vecs.iter_mut().for_each(|v| v.3 = 0.0);
        // Caller order = CSR order here (from_csr of a sorted CSR).
        self.a
            .values_mut()
            .iter_mut()
            .zip(&fresh)
            .for_each(|(d, s)| *d = s.to_f64());
    }
}

/// The k-th matrix of the soak: methods, value types and shapes in turn.
fn kth(h: &Handle, k: u64) -> Box<dyn Live> {
    let algs = tessera::select::IMPLEMENTED;
    let alg = algs[(k as usize) % algs.len()];
    let spec =
        SPECS[(k as usize / algs.len()) % SPECS.len()].replace("{}", &(k % 7 + 1).to_string());
    let vt = if (k as usize / (algs.len() * SPECS.len())) % 2 == 0 {
        ValueType::F64
    } else {
        ValueType::F32
    };
    match vt {
        ValueType::F64 => slot::<f64>(h, &spec, alg, k),
        ValueType::F32 => slot::<f32>(h, &spec, alg, k),
    }
}

#[test]
fn a_hundred_thousand_products_with_updates_and_matrices_coming_and_going_keep_memory_flat() {
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap().clone();
    let calls: u64 = if small() { 2_000 } else { 100_000 };
    let live_slots = 6u64;
    let cycle = calls / 50; // a matrix destroyed and created again every `cycle` products
    let check_every = 1_000;
    let update_every = 700;
    // Warm-up: every kind of matrix once (kernels compiled and loaded, driver pools grown).
    let kinds = (tessera::select::IMPLEMENTED.len() * SPECS.len() * 2) as u64;
    for k in 0..kinds {
        let mut s = kth(&h, k);
        s.queue(&h, 0);
        s.queue(&h, 1);
        s.check(&h, 0);
    }
    let (rss0, dev0) = (rss_kb(), device_used(&dev));
    let t0 = Instant::now();
    let mut next = 0u64;
    let mut live: Vec<Box<dyn Live>> = (0..live_slots)
        .map(|_| {
            next += 1;
            kth(&h, next - 1)
        })
        .collect();
    let (mut updates, mut recreated) = (0u64, 0u64);
    let mut rss_steady = None;
    for i in 0..calls {
        let s = (i % live_slots) as usize;
        live[s].queue(&h, i / live_slots);
        if (i + 1) % update_every == 0 {
            let u = ((i / update_every) % live_slots) as usize;
            live[u].update(&h, i);
            updates += 1;
        }
        if (i + 1) % check_every == 0 {
            for l in &live {
                l.check(&h, i + 1);
            }
        }
        if (i + 1) % cycle == 0 {
            let r = ((i / cycle) % live_slots) as usize;
            // Its products are checked first, then it goes (after the stream is idle).
            live[r].check(&h, i + 1);
            h.synchronize().unwrap();
            live[r] = kth(&h, next);
            next += 1;
            recreated += 1;
        }
        if i + 1 == calls / 10 {
            rss_steady = Some(rss_kb());
        }
    }
    for l in &live {
        l.check(&h, calls);
    }
    h.synchronize().unwrap();
    let rss_live = rss_kb();
    drop(live);
    let secs = t0.elapsed().as_secs_f64();
    let (rss1, dev1) = (rss_kb(), device_used(&dev));
    let steady = rss_steady.unwrap_or(rss0);
    println!(
        "soak: {calls} products, {updates} update_values, {recreated} matrices destroyed and created in {secs:.1} s; host RSS {rss0} kB at the start, {steady} kB after {} products, {rss_live} kB with the last matrices live, {rss1} kB at the end ({:+} kB); device memory in use {:.1} MiB at the start, {:.1} MiB at the end ({:+} bytes)",
        calls / 10,
        rss1 - rss0,
        dev0 as f64 / 1048576.0,
        dev1 as f64 / 1048576.0,
        dev1 - dev0
    );
    if common::under_sanitizer() {
        println!("device memory level not checked: running under compute-sanitizer");
    }
    assert!(
        dev1 - dev0 <= DEVICE_TOLERANCE || common::under_sanitizer(),
        "device memory grew by {} bytes over the soak",
        dev1 - dev0
    );
    assert!(
        rss1 - rss0 <= RSS_TOLERANCE_KB,
        "host RSS grew by {} kB over the soak",
        rss1 - rss0
    );
}
