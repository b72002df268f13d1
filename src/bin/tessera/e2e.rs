//! The end-to-end measurement of `tessera bench`: the time to N products of a caller that starts
//! from CSR arrays (in device memory, or on the host) and pays the set-up once, for tessera and
//! for cuSPARSE's pipelines; and `cold_first_ms`, the first product of a fresh process with an
//! empty kernel cache (the hidden `tessera cold-first` command, run as a child process).
//!
//! Every definition is in [`HELP`] (shown by `tessera bench --help`) and in
//! `notes/end-to-end.md`.

use crate::{load, random_x, rel_error, tolerance, RunOpts, Setup};
use std::sync::Arc;
use std::time::Instant;
use tessera::backend::cuda::import::DeviceCsr;
use tessera::backend::cuda::{self, Device, DeviceVec, Stream};
use tessera::bench::cusparse::{
    CusparseAlg, CusparseCsr, CusparseHandle, CusparseSpmv, Preprocess,
};
use tessera::{
    Algorithm, BackendKind, BackgroundStatus, BorrowedWrites, Csr, CsrParts, Handle, IndexBase,
    Indices, Matrix, Operation, Scalar, Tuning, ValueType,
};

/// The numbers of products the end-to-end columns are given for.
pub(crate) const NS: [u64; 5] = [1, 10, 100, 1000, 10000];

/// How many times a first product is measured (the median is kept)... Seven: a first product
/// of 30-90 µs moves by tens of µs between calls on the GPU machine (session 15's run C), and
/// the median of three left single matrices' N = 1 columns 0.2-0.5 apart between runs.
const FIRST_REPS: usize = 7;
/// ...unless the first measurement takes longer than this (ms): then it alone is kept.
const LONG_FIRST_MS: f64 = 100.0;

/// The definitions, for `tessera bench --help` (and, in more words, `notes/end-to-end.md`).
pub(crate) const HELP: &str = "\
End to end (CSV columns after params; the table \"end to end\" printed after the main one):
  e2e_N_ms (N = 1, 10, 100, 1000, 10000) = first + (N - 1) * spmv_ms: the time to N products of a
      caller whose CSR arrays are already in device memory. `first` is the wall time (host clock) of:
      what tessera_create_csr does with device pointers (per array a cuPointerGetAttributes query,
      then Matrix::from_device: validation, conversion and row statistics on the device, one copy of
      the converted arrays to the host for tessera's host copy), analyze (method set-up on the
      device copy, any tuning), one product
      y = A x into device x and y allocated beforehand, and a synchronize. Measured on a fresh matrix
      after the checked and timed run of the same method (kernels compiled and loaded), median of 7
      (1 when the first takes over 100 ms); the first product is checked against the f64 reference.
      Host backend: there is no device, e2e_N_ms = e2e_host_N_ms. Where AUTO builds a format in the
      background (the product changes along the way), the time past the first product is measured
      by running the products on a fresh matrix (a synchronize at each N): e2e_N_ms = first + (that
      run's time to N products - its time to its first).
  e2e_host_N_ms = the same from host arrays: Matrix::new on the host CSR arrays, analyze, one product,
      synchronize.
  e2e_borrow_N_ms = the same from device arrays read in place: what tessera_create_csr_borrowed does
      (the pointer queries, then Matrix::borrow_device_deferred: the check queued on the device, not
      waited for, no allocation, no copy; Matrix::borrow_device, which waits, with TESSERA_CHECK=sync),
      analyze (AUTO: HOLA while the check runs), one product, synchronize. cuSPARSE's descriptors read the
      arrays in place too: its baseline here is cuspe2e_N_ms. Host backend: e2e_host_N_ms.
  cuSPARSE rows: e2e_N_ms and e2e_host_N_ms are that algorithm's better pipeline at N, with or
      without cusparseSpMV_preprocess, each pipeline first + (N - 1) * its own steady spmv time
      (params gives each one). First product from device arrays: cusparseCreateConstCsr, two cusparseCreateDnVec,
      cusparseSpMV_bufferSize, cuMemAlloc of the workspace, cusparseSpMV_preprocess (with), one
      cusparseSpMV, synchronize, on a cuSPARSE handle created beforehand (as tessera's handle is); from
      host arrays: the same after cuMemAlloc and upload of the three arrays.
  cuspe2e_N_ms, cuspe2e_host_N_ms = cuSPARSE's best pipeline at N: the least over ALG_DEFAULT and
      CSR_ALG2, with and without preprocess, of first + (N - 1) * spmv; the same on every row of a
      matrix and value type; `-` without cuSPARSE.
  cold_first_ms (only with --cold) = the tessera binary run again as a fresh process (`tessera
      cold-first SPEC --methods M --precision P --tuning T`) with TESSERA_CACHE_DIR a new empty folder;
      it measures from before creating the handle to after the first product's synchronize: handle
      (CUDA context), Matrix::new from host arrays, analyze (kernels compiled by NVRTC), upload of x and
      y, one product, synchronize. cuSPARSE rows: the CUDA context, loading libcusparse, cusparseCreate,
      upload of the arrays, the set-up with preprocess, upload of x and y, one product, synchronize.
      Loading the matrix file or generating it is not counted.";

/// `TESSERA_TRACE` set to 1 or more: the first products' timelines on stderr. The library's
/// level, read once per process: the end-to-end loop asks at every product, and a lookup of the
/// environment there (a lock and a search) would be counted as tessera's time.
fn trace_on() -> bool {
    tessera::backend::trace_level() >= 1
}

fn text<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// One way from the caller's CSR arrays to products: the wall time of its first product (set-up
/// included) from device arrays and from host arrays, and its steady time per product.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pipeline {
    /// "auto", "csr_vector", "ALG_DEFAULT with preprocess", ...
    pub(crate) name: String,
    pub(crate) first_dev_ms: f64,
    pub(crate) first_host_ms: f64,
    /// From device arrays read in place (`tessera_create_csr_borrowed`); `None` where that is
    /// `first_dev_ms` already (cuSPARSE's descriptors always read the arrays in place).
    pub(crate) first_borrow_ms: Option<f64>,
    pub(crate) spmv_ms: f64,
    /// The wall times to each of [`NS`] products, measured by running them, where the product
    /// changes along the way (AUTO's background build): then the time past the first product
    /// replaces the model (see [`Pipeline::e2e_ms`]).
    pub(crate) measured: Option<Measured>,
}

/// Wall milliseconds to each of [`NS`] products, from device arrays and from host arrays.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Measured {
    pub(crate) dev: [f64; NS.len()],
    pub(crate) host: [f64; NS.len()],
    pub(crate) borrow: [f64; NS.len()],
}

/// Where the CSR arrays start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Device,
    Host,
    /// Device arrays read in place: `tessera_create_csr_borrowed`, cuSPARSE's descriptors.
    Borrowed,
}

impl Pipeline {
    /// first + (n - 1) * spmv_ms.
    pub(crate) fn e2e_ms(&self, n: u64, from: Source) -> f64 {
        let first = match from {
            Source::Device => self.first_dev_ms,
            Source::Host => self.first_host_ms,
            Source::Borrowed => self.first_borrow_ms.unwrap_or(self.first_dev_ms),
        };
        if let (Some(m), Some(i)) = (&self.measured, NS.iter().position(|&k| k == n)) {
            // The measured run's time past its first product, after the median first product
            // (the run's own first product is one sample of the same thing).
            let run = match from {
                Source::Device => &m.dev,
                Source::Host => &m.host,
                Source::Borrowed => &m.borrow,
            };
            return first + (run[i] - run[0]);
        }
        first + n.saturating_sub(1) as f64 * self.spmv_ms
    }

    /// "name: first X ms from device arrays, Y ms from host arrays, then Z ms per product".
    pub(crate) fn describe(&self) -> String {
        let measured = match &self.measured {
            Some(m) => format!(
                " (measured to {} products: {} ms from device arrays)",
                NS.map(|n| n.to_string()).join(", "),
                m.dev.map(|v| format!("{v:.3}")).join(", ")
            ),
            None => String::new(),
        };
        let borrowed = self
            .first_borrow_ms
            .map_or(String::new(), |b| format!(" ({b:.4} ms read in place)"));
        format!(
            "{}: first {:.4} ms from device arrays{borrowed}, {:.4} ms from host arrays, then {:.5} ms per product{measured}",
            self.name, self.first_dev_ms, self.first_host_ms, self.spmv_ms
        )
    }
}

/// The least end-to-end time at `n` products over `ps` (None when empty).
pub(crate) fn best(ps: &[Pipeline], n: u64, from: Source) -> Option<f64> {
    ps.iter().map(|p| p.e2e_ms(n, from)).min_by(f64::total_cmp)
}

/// The median of up to [`FIRST_REPS`] calls of `f` (its first alone when it exceeds
/// [`LONG_FIRST_MS`]).
fn median_first(mut f: impl FnMut() -> Result<f64, String>) -> Result<f64, String> {
    let mut v = vec![f()?];
    if v[0] <= LONG_FIRST_MS {
        for _ in 1..FIRST_REPS {
            v.push(f()?);
        }
    }
    v.sort_by(f64::total_cmp);
    Ok(v[v.len() / 2])
}

/// x (as the checked run draws it), the f64 reference y = A x, and the tolerance of the check.
pub(crate) fn inputs<T: Scalar>(csr: &Csr<T>) -> (Vec<T>, Vec<f64>, f64) {
    let x: Vec<T> = random_x(csr.cols(), 42)
        .into_iter()
        .map(T::from_f64)
        .collect();
    let xr: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
    let mut want = vec![0.0; csr.rows()];
    csr.convert::<f64>()
        .spmv_f64(Operation::NonTranspose, 1.0, &xr, 0.0, &mut want);
    (x, want, tolerance(T::EPSILON, csr.stats().max))
}

fn check(got: &[f64], want: &[f64], tol: f64, what: &str) -> Result<(), String> {
    let e = rel_error(got, want);
    if e <= tol {
        Ok(())
    } else {
        Err(format!(
            "{what}: the first product differs from the f64 reference (max rel. error {e:.2e}, tolerance {tol:.2e})"
        ))
    }
}

/// [`check`] of a y in device memory (copied back after the work on `stream`).
fn check_device<T: Scalar>(
    dy: &DeviceVec<T>,
    stream: Stream,
    want: &[f64],
    tol: f64,
    what: &str,
) -> Result<(), String> {
    let got: Vec<f64> = dy
        .to_vec(stream)
        .map_err(text)?
        .iter()
        .map(|v| v.to_f64())
        .collect();
    check(&got, want, tol, what)
}

/// The caller's arrays as `Matrix::new` takes them (tessera's CSR: `i32`, base 0).
fn parts<'a, T: Scalar>(
    csr: &Csr<T>,
    row_ptr: &'a [i32],
    col_ind: &'a [i32],
    values: &'a [T],
) -> CsrParts<'a, T> {
    CsrParts {
        rows: csr.rows() as i64,
        cols: csr.cols() as i64,
        nnz: csr.nnz() as i64,
        row_ptr: Indices::I32(row_ptr),
        col_ind: Indices::I32(col_ind),
        values,
        base: IndexBase::Zero,
    }
}

/// tessera's first product with `alg`, from device arrays and from host arrays (ms), as [`HELP`]
/// defines them. Run it after the checked run of the same method, so that its kernels are
/// compiled and loaded.
pub(crate) fn tessera_first(
    s: &Setup,
    vt: ValueType,
    a64: &Csr<f64>,
    alg: Algorithm,
) -> Result<(Firsts, Option<Measured>), String> {
    match vt {
        ValueType::F32 => tessera_first_typed::<f32>(s, a64, alg),
        ValueType::F64 => tessera_first_typed::<f64>(s, a64, alg),
    }
}

/// First products (ms) from device arrays, from host arrays, and from device arrays read in
/// place.
pub(crate) type Firsts = (f64, f64, f64);

fn tessera_first_typed<T: Scalar>(
    s: &Setup,
    a64: &Csr<f64>,
    alg: Algorithm,
) -> Result<(Firsts, Option<Measured>), String> {
    let csr: Csr<T> = a64.convert();
    let (x, want, tol) = inputs(&csr);
    let h = &s.handle;
    let Some(dev) = h.cuda() else {
        // Host backend: no device memory; one measurement serves both columns.
        let ms = median_first(|| {
            let mut y = vec![T::from_f64(f64::NAN); csr.rows()];
            let t = Instant::now();
            let mut m = Matrix::new(h, parts(&csr, csr.row_ptr(), csr.col_ind(), csr.values()))
                .map_err(text)?;
            m.analyze(h, alg, s.tuning).map_err(text)?;
            m.spmv(h, Operation::NonTranspose, T::ONE, &x, T::ZERO, &mut y)
                .map_err(text)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let got: Vec<f64> = y.iter().map(|v| v.to_f64()).collect();
            check(&got, &want, tol, "host backend")?;
            Ok(ms)
        })?;
        return Ok(((ms, ms, ms), None));
    };
    let stream = h.cuda_stream();
    let nan = vec![T::from_f64(f64::NAN); csr.rows()];
    let dx = DeviceVec::from_slice(dev, &x).map_err(text)?;
    let mut dy = DeviceVec::from_slice(dev, &nan).map_err(text)?;
    // The caller's arrays in device memory, made before any clock starts.
    let d_row_ptr = DeviceVec::from_slice(dev, csr.row_ptr()).map_err(text)?;
    let d_col_ind = DeviceVec::from_slice(dev, csr.col_ind()).map_err(text)?;
    let d_values = DeviceVec::from_slice(dev, csr.values()).map_err(text)?;
    // From the caller's arrays to an analyzed matrix, as a caller starting `from` there does.
    let create = |from: Source| -> Result<Matrix<T>, String> {
        Ok(match from {
            Source::Host => {
                tessera::backend::span_start();
                let mut m = Matrix::new(h, parts(&csr, csr.row_ptr(), csr.col_ind(), csr.values()))
                    .map_err(text)?;
                tessera::backend::span("host: create");
                m.analyze(h, alg, s.tuning).map_err(text)?;
                m
            }
            Source::Device | Source::Borrowed => {
                // What tessera_create_csr (or _borrowed) does with device pointers
                // (src/api/functions.rs, device_csr): ask the driver what each array is, then
                // Matrix::from_device (validated and converted on the device) or
                // Matrix::borrow_device (validated; the arrays read in place).
                let tq = Instant::now();
                tessera::backend::span_start();
                for (addr, len) in [
                    (d_row_ptr.addr(), d_row_ptr.len()),
                    (d_col_ind.addr(), d_col_ind.len()),
                    (d_values.addr(), d_values.len()),
                ] {
                    if len > 0 {
                        cuda::pointer_info(dev, addr).map_err(text)?;
                    }
                }
                if trace_on() {
                    eprintln!(
                        "tessera: e2e pointer queries {:.1} us",
                        tq.elapsed().as_secs_f64() * 1e6
                    );
                }
                let p = DeviceCsr {
                    rows: csr.rows(),
                    cols: csr.cols(),
                    nnz: csr.nnz(),
                    row_ptr: d_row_ptr.addr(),
                    col_ind: d_col_ind.addr(),
                    values: d_values.addr(),
                    is64: false,
                    base: IndexBase::Zero,
                };
                let made = match (csr.nnz(), from) {
                    (0, _) => Some(
                        Matrix::new(h, parts(&csr, csr.row_ptr(), csr.col_ind(), csr.values()))
                            .map_err(text)?,
                    ),
                    (_, Source::Borrowed) if tessera::deferred_checks() => {
                        Matrix::borrow_device_deferred(h, &p).map_err(text)?
                    }
                    (_, Source::Borrowed) => {
                        Matrix::borrow_device(h, &p, BorrowedWrites::Announced).map_err(text)?
                    }
                    _ => Matrix::from_device(h, &p).map_err(text)?,
                };
                let mut m =
                    made.ok_or("the device import found unsorted columns in a tessera CSR")?;
                m.analyze(h, alg, s.tuning).map_err(text)?;
                m
            }
        })
    };
    let (xa, ya) = (dx.addr(), dy.addr());
    let product = |m: &Matrix<T>| {
        m.spmv_device(h, Operation::NonTranspose, T::ONE, xa, T::ZERO, ya)
            .map_err(text)
    };
    let mut one = |from: Source| -> Result<f64, String> {
        dy.copy_from(&nan).map_err(text)?;
        h.synchronize().map_err(text)?;
        let t = Instant::now();
        let m = create(from)?;
        let made = t.elapsed();
        product(&m)?;
        let launched = t.elapsed();
        h.synchronize().map_err(text)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        tessera::backend::spans(&format!("e2e first from {from:?} to the synchronize"));
        if trace_on() {
            eprintln!(
                "tessera: e2e first product from {from:?} ({}): create + analyze {:.1} us, product call {:.1} us, synchronize {:.1} us",
                m.info().algorithm,
                made.as_secs_f64() * 1e6,
                (launched - made).as_secs_f64() * 1e6,
                ms * 1e3 - launched.as_secs_f64() * 1e6
            );
        }
        check_device(&dy, stream, &want, tol, "from device arrays")?;
        drop(m);
        Ok(ms)
    };
    let dev_ms = median_first(|| one(Source::Device))?;
    let host_ms = median_first(|| one(Source::Host))?;
    let borrow_ms = median_first(|| one(Source::Borrowed))?;
    // Where AUTO builds a format in the background, the product changes along the way: the
    // times to N products are measured by running them (a synchronize at each N of NS).
    // (`force`: measured whether or not this one changes, since another source's does.)
    let run = |from: Source, force: bool| -> Result<Option<[f64; NS.len()]>, String> {
        h.synchronize().map_err(text)?;
        let t = Instant::now();
        let m = create(from)?;
        if !force && m.info().background == BackgroundStatus::None && !m.is_provisional() {
            return Ok(None);
        }
        let mut at = [0.0; NS.len()];
        let mut done = 0;
        // With TESSERA_TRACE: each of the first products' call (host µs) and what ran it.
        let mut calls: Vec<String> = Vec::new();
        for (i, &n) in NS.iter().enumerate() {
            while done < n {
                let tc = Instant::now();
                let clock = if done < 1000 && trace_on() {
                    tessera::backend::span_start();
                    tessera::backend::trace_clock_us()
                } else {
                    0.0
                };
                product(&m)?;
                done += 1;
                if trace_on() && done <= 1000 {
                    // The first 24 calls listed; any of the first 1,000 that took long (over
                    // 30 us among the first 24, 200 us after) with its steps (TESSERA_TRACE=3).
                    let us = tc.elapsed().as_secs_f64() * 1e6;
                    let long = us > if done <= 24 { 30.0 } else { 200.0 };
                    if long || done <= 24 {
                        let ran = m.info().algorithm;
                        if long {
                            tessera::backend::spans(&format!(
                                "e2e run from {from:?}, product {done} ({ran}) at {clock:.1} us"
                            ));
                        }
                        if done <= 24 {
                            calls.push(format!("{us:.1}:{ran}"));
                        }
                    }
                }
            }
            h.synchronize().map_err(text)?;
            at[i] = t.elapsed().as_secs_f64() * 1e3;
        }
        if trace_on() {
            let info = m.info();
            eprintln!(
                "tessera: e2e run from {from:?}: at N = {NS:?} {at:.3?} ms; first calls (us:method) {}; then {}: {}",
                calls.join(" "),
                info.algorithm,
                info.params
            );
        }
        check_device(&dy, stream, &want, tol, "after the background build")?;
        Ok(Some(at))
    };
    // Read in place, AUTO starts with HOLA while the check runs (then changes); the other
    // sources change only with a background build.
    let first = run(Source::Borrowed, false)?;
    let dev = run(Source::Device, first.is_some())?;
    let force = first.is_some() || dev.is_some();
    let host = run(Source::Host, force)?;
    let borrow = match first {
        Some(b) => Some(b),
        None if force => run(Source::Borrowed, true)?,
        None => None,
    };
    let measured = match (dev, host, borrow) {
        (Some(dev), Some(host), Some(borrow)) => Some(Measured { dev, host, borrow }),
        _ => None,
    };
    Ok(((dev_ms, host_ms, borrow_ms), measured))
}

/// cuSPARSE's first product with `alg` and `pre` on `handle`, from device arrays and from host
/// arrays (ms), as [`HELP`] defines them. Run it after the steady timing of the same pipeline,
/// so that cuSPARSE's kernels are loaded.
pub(crate) fn cusparse_first<T: Scalar>(
    handle: &Arc<CusparseHandle>,
    dev: &Arc<Device>,
    csr: &Csr<T>,
    alg: CusparseAlg,
    pre: Preprocess,
) -> Result<(f64, f64), String> {
    let stream = handle.stream();
    let (x, want, tol) = inputs(csr);
    let nan = vec![T::from_f64(f64::NAN); csr.rows()];
    let dx = DeviceVec::from_slice(dev, &x).map_err(text)?;
    let mut dy = DeviceVec::from_slice(dev, &nan).map_err(text)?;
    let mut one = |from: Source| -> Result<f64, String> {
        dy.copy_from(&nan).map_err(text)?;
        // From device arrays: uploaded before the clock starts.
        let mut arrays = match from {
            Source::Device | Source::Borrowed => {
                Some(CusparseCsr::upload(dev, stream, csr).map_err(text)?)
            }
            Source::Host => None,
        };
        cuda::synchronize(dev, stream).map_err(text)?;
        let t = Instant::now();
        let arrays = match arrays.take() {
            Some(a) => a,
            None => CusparseCsr::upload(dev, stream, csr).map_err(text)?,
        };
        let op = CusparseSpmv::from_device(handle, arrays, alg, pre, dx.addr(), dy.addr())
            .map_err(text)?;
        let made = t.elapsed();
        op.spmv(dx.addr(), dy.addr()).map_err(text)?;
        let launched = t.elapsed();
        cuda::synchronize(dev, stream).map_err(text)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if trace_on() && from == Source::Device {
            eprintln!(
                "tessera: e2e first product of cuSPARSE {alg} {pre}: set-up {:.1} us, product call {:.1} us, synchronize {:.1} us",
                made.as_secs_f64() * 1e6,
                (launched - made).as_secs_f64() * 1e6,
                ms * 1e3 - launched.as_secs_f64() * 1e6
            );
        }
        check_device(&dy, stream, &want, tol, &format!("cuSPARSE {alg} {pre}"))?;
        drop(op);
        Ok(ms)
    };
    let dev_ms = median_first(|| one(Source::Device))?;
    let host_ms = median_first(|| one(Source::Host))?;
    Ok((dev_ms, host_ms))
}

/// A new empty folder under the system's temporary folder.
fn fresh_dir(what: &str) -> Result<std::path::PathBuf, String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!(
        "tessera-{what}-{}-{nanos}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// `cold_first_ms` of one row: runs `tessera --backend B cold-first SPEC --methods M --precision
/// P --tuning T` (this very binary) with `TESSERA_CACHE_DIR` a new empty folder, and reads the
/// milliseconds it prints as its last line.
pub(crate) fn cold_first(
    backend: BackendKind,
    spec: &str,
    method: &str,
    vt: ValueType,
    tuning: Tuning,
) -> Result<f64, String> {
    let exe = std::env::current_exe().map_err(|e| format!("the tessera binary: {e}"))?;
    let cache = fresh_dir("cold-cache")?;
    let out = std::process::Command::new(&exe)
        .args([
            "--backend",
            backend.name(),
            "cold-first",
            spec,
            "--methods",
            method,
        ])
        .args(["--precision", vt.name(), "--tuning", tuning.name()])
        .env("TESSERA_CACHE_DIR", &cache)
        .output();
    let _ = std::fs::remove_dir_all(&cache);
    let out = out.map_err(|e| format!("{}: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = |s: &str| {
        s.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_string()
    };
    if !out.status.success() {
        let why: Vec<&str> = stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("loaded "))
            .collect();
        return Err(format!(
            "the cold-first child exited with {}: {}",
            out.status,
            why.join("; ")
        ));
    }
    let line = last(&stdout);
    line.parse::<f64>()
        .map_err(|_| format!("the cold-first child printed {line:?}, not a number of ms"))
}

/// `tessera cold-first SPEC`: the child of [`cold_first`]. Loads the matrix (not timed), then
/// measures from before creating the handle to after the first product's synchronize, checks the
/// product and prints the milliseconds as the one line of its standard output.
pub(crate) fn cmd_cold_first(backend: &str, spec: &str, o: &RunOpts) -> Result<bool, String> {
    let tuning = o
        .tuning
        .parse::<Tuning>()
        .map_err(|e| format!("--tuning: {e}"))?;
    let vt = o
        .precision
        .parse::<ValueType>()
        .map_err(|e| format!("--precision: {e} (cold-first takes one)"))?;
    let method = o.methods.as_deref().unwrap_or("auto").trim().to_string();
    let kind = match backend {
        "auto" => None,
        b => Some(b.parse::<BackendKind>().map_err(text)?),
    };
    let target = Target::parse(&method)?;
    let (name, a) = load(spec)?;
    let r = match vt {
        ValueType::F32 => cold_typed::<f32>(kind, &a, target, tuning),
        ValueType::F64 => cold_typed::<f64>(kind, &a, target, tuning),
    };
    match r {
        Ok(ms) => {
            eprintln!(
                "cold-first {name} {vt} {method}: {ms:.4} ms from before the handle to after the first product's synchronize (kernel cache: {})",
                tessera::backend::cuda::cache::dir()
                    .map_or("none".into(), |d| d.display().to_string())
            );
            println!("{ms:.4}");
            Ok(true)
        }
        Err(Cold::Wrong(e)) => {
            eprintln!("cold-first {name} {vt} {method}: {e}");
            Ok(false)
        }
        Err(Cold::Failed(e)) => Err(format!("cold-first {name} {vt} {method}: {e}")),
    }
}

/// What a cold-first child runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Tessera(Algorithm),
    Cusparse(CusparseAlg),
}

impl Target {
    /// A tessera method's name, or `cusparse`, `cusparse:ALG_DEFAULT`, `cusparse:CSR_ALG2` (the
    /// bench table's labels).
    fn parse(s: &str) -> Result<Self, String> {
        let lower = s.to_ascii_lowercase();
        match lower.strip_prefix("cusparse") {
            Some("" | ":alg_default" | ":default") => Ok(Target::Cusparse(CusparseAlg::Default)),
            Some(":csr_alg2" | ":alg2") => Ok(Target::Cusparse(CusparseAlg::CsrAlg2)),
            Some(_) => Err(format!(
                "--methods: '{s}' is not a cuSPARSE algorithm (cusparse, cusparse:ALG_DEFAULT or cusparse:CSR_ALG2)"
            )),
            None => s
                .parse::<Algorithm>()
                .map(Target::Tessera)
                .map_err(|e| format!("--methods: {e}, or cusparse[:ALG_DEFAULT|:CSR_ALG2] (cold-first takes one)")),
        }
    }
}

/// Why a cold-first child did not measure: a wrong product, or an error.
enum Cold {
    Wrong(String),
    Failed(String),
}

impl From<tessera::Error> for Cold {
    fn from(e: tessera::Error) -> Self {
        Cold::Failed(e.to_string())
    }
}

fn cold_typed<T: Scalar>(
    kind: Option<BackendKind>,
    a64: &Csr<f64>,
    target: Target,
    tuning: Tuning,
) -> Result<f64, Cold> {
    let csr: Csr<T> = a64.convert();
    let (x, want, tol) = inputs(&csr);
    let nan = vec![T::from_f64(f64::NAN); csr.rows()];
    let t = Instant::now();
    match target {
        Target::Cusparse(alg) => {
            if kind == Some(BackendKind::Host) {
                return Err(Cold::Failed("cuSPARSE needs the CUDA backend".into()));
            }
            let stream = Stream(0);
            let dev = Device::open(0)?;
            let handle = CusparseHandle::new(&dev, stream)?;
            let arrays = CusparseCsr::upload(&dev, stream, &csr)?;
            let dx = DeviceVec::from_slice(&dev, &x)?;
            let dy = DeviceVec::from_slice(&dev, &nan)?;
            let op = CusparseSpmv::from_device(
                &handle,
                arrays,
                alg,
                Preprocess::Yes,
                dx.addr(),
                dy.addr(),
            )?;
            op.spmv(dx.addr(), dy.addr())?;
            cuda::synchronize(&dev, stream)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            finish(&dy.to_vec(stream)?, &want, tol, ms)
        }
        Target::Tessera(alg) => {
            let h = match kind {
                Some(k) => Handle::with_backend(k, 0)?,
                None => Handle::with_backend(BackendKind::Cuda, 0)
                    .or_else(|_| Handle::with_backend(BackendKind::Host, 0))?,
            };
            let mut m = Matrix::new(&h, parts(&csr, csr.row_ptr(), csr.col_ind(), csr.values()))?;
            m.analyze(&h, alg, tuning)?;
            match h.cuda() {
                Some(dev) => {
                    let dx = DeviceVec::from_slice(dev, &x)?;
                    let dy = DeviceVec::from_slice(dev, &nan)?;
                    m.spmv_device(
                        &h,
                        Operation::NonTranspose,
                        T::ONE,
                        dx.addr(),
                        T::ZERO,
                        dy.addr(),
                    )?;
                    h.synchronize()?;
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    finish(&dy.to_vec(h.cuda_stream())?, &want, tol, ms)
                }
                None => {
                    let mut y = nan;
                    m.spmv(&h, Operation::NonTranspose, T::ONE, &x, T::ZERO, &mut y)?;
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    finish(&y, &want, tol, ms)
                }
            }
        }
    }
}

fn finish<T: Scalar>(got: &[T], want: &[f64], tol: f64, ms: f64) -> Result<f64, Cold> {
    let got: Vec<f64> = got.iter().map(|v| v.to_f64()).collect();
    check(&got, want, tol, "cold first product").map_err(Cold::Wrong)?;
    Ok(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelines_add_the_steady_time_to_the_first_product() {
        let p = Pipeline {
            name: "p".into(),
            first_dev_ms: 2.0,
            first_host_ms: 3.0,
            first_borrow_ms: Some(1.5),
            spmv_ms: 0.5,
            measured: None,
        };
        assert_eq!(p.e2e_ms(1, Source::Device), 2.0);
        assert_eq!(p.e2e_ms(10, Source::Device), 6.5);
        assert_eq!(p.e2e_ms(1000, Source::Host), 3.0 + 999.0 * 0.5);
        assert_eq!(p.e2e_ms(0, Source::Host), 3.0);
        assert_eq!(p.e2e_ms(10, Source::Borrowed), 6.0);
        // The best pipeline changes with N: a slow set-up with fast products wins late.
        let q = Pipeline {
            name: "q".into(),
            first_dev_ms: 20.0,
            first_host_ms: 21.0,
            first_borrow_ms: None,
            spmv_ms: 0.1,
            measured: None,
        };
        let both = [p.clone(), q];
        assert_eq!(best(&both, 1, Source::Device), Some(2.0));
        assert_eq!(
            best(&both, 10000, Source::Device),
            Some(20.0 + 9999.0 * 0.1)
        );
        assert_eq!(best(&[], 10, Source::Host), None);
        // Without a borrowed first product (cuSPARSE's rows) it is the device one.
        assert_eq!(both[1].e2e_ms(1, Source::Borrowed), 20.0);
        // Measured times (a background build) replace the model at every N of NS.
        let r = Pipeline {
            measured: Some(Measured {
                dev: [1.0, 2.0, 3.0, 4.0, 5.0],
                host: [6.0, 7.0, 8.0, 9.0, 10.0],
                borrow: [0.5, 1.5, 2.5, 3.5, 4.5],
            }),
            ..p.clone()
        };
        // (Past the first product; the first is the median of seven, first_*_ms.)
        assert_eq!(r.e2e_ms(1, Source::Device), 2.0);
        assert_eq!(r.e2e_ms(100, Source::Device), 2.0 + 2.0);
        assert_eq!(r.e2e_ms(10000, Source::Host), 3.0 + 4.0);
        assert_eq!(r.e2e_ms(10, Source::Borrowed), 1.5 + 1.0);
        assert!(r
            .describe()
            .contains("measured to 1, 10, 100, 1000, 10000 products"));
        assert!(p
            .describe()
            .starts_with("p: first 2.0000 ms from device arrays"));
    }

    #[test]
    fn the_median_of_seven_or_one_long_measurement() {
        let mut v = [5.0, 1.0, 3.0, 9.0, 2.0, 8.0, 4.0].into_iter();
        assert_eq!(median_first(|| Ok(v.next().unwrap())), Ok(4.0));
        let mut calls = 0;
        let r = median_first(|| {
            calls += 1;
            Ok(LONG_FIRST_MS + 1.0)
        });
        assert_eq!((r, calls), (Ok(LONG_FIRST_MS + 1.0), 1));
        assert!(median_first(|| Err("no".to_string())).is_err());
    }

    #[test]
    fn cold_first_targets_are_the_table_labels() {
        assert_eq!(Target::parse("auto"), Ok(Target::Tessera(Algorithm::Auto)));
        assert_eq!(Target::parse("hola"), Ok(Target::Tessera(Algorithm::Hola)));
        for l in ["cusparse", "cusparse:ALG_DEFAULT"] {
            assert_eq!(Target::parse(l), Ok(Target::Cusparse(CusparseAlg::Default)));
        }
        let alg2 = format!("cusparse:{}", CusparseAlg::CsrAlg2);
        assert_eq!(
            Target::parse(&alg2),
            Ok(Target::Cusparse(CusparseAlg::CsrAlg2))
        );
        assert!(Target::parse("cusparse:alg9").is_err());
        assert!(Target::parse("fastest").unwrap_err().contains("cusparse"));
    }
}
