//! `tessera bench`: the checked, timed run of one method (host or CUDA), the cuSPARSE baseline
//! rows, the table, the CSV, the suite, the geometric means and the plots; the end-to-end
//! measurement itself is in `e2e.rs`.

use crate::e2e::{self, Pipeline, Source, NS};
use crate::plot;
use crate::report::*;
use crate::{load, rel_error, setup, tolerance, RunOpts, Setup, DEFAULT_SPEC};
use std::time::Instant;
use tessera::backend::cuda::DeviceVec;
use tessera::bench::cusparse::Preprocess;
use tessera::{select, Algorithm, BackendKind, Csr, Matrix, Operation, Scalar, ValueType};

pub(crate) struct Outcome {
    pub(crate) algorithm: Algorithm,
    pub(crate) params: String,
    pub(crate) analysis_ms: f64,
    pub(crate) bytes: u64,
    pub(crate) error: f64,
    pub(crate) ok: bool,
    pub(crate) spmv_ms: Option<f64>,
}

/// Analyzes `a` with `alg`, checks y = A x (beta = 0, y poisoned with NaN) against the f64
/// reference, and optionally times spmv.
fn run_one<T: Scalar>(
    s: &Setup,
    a64: &Csr<f64>,
    alg: Algorithm,
    time_batches: Option<usize>,
) -> Result<Outcome, tessera::Error> {
    let csr: Csr<T> = a64.convert();
    let mut m = Matrix::from_csr(&s.handle, csr);
    m.analyze(&s.handle, alg, s.tuning)?;
    let info = m.info();
    let (x, want, _) = e2e::inputs(&*m.csr(&s.handle)?);
    if let Some(dev) = s.handle.cuda() {
        return run_one_gpu(s, dev, m, &x, &want, time_batches);
    }
    let mut y = vec![T::from_f64(f64::NAN); a64.rows()];
    let product = |y: &mut [T]| m.spmv(&s.handle, Operation::NonTranspose, T::ONE, &x, T::ZERO, y);
    product(&mut y)?;
    let got: Vec<f64> = y.iter().map(|v| v.to_f64()).collect();
    let error = rel_error(&got, &want);
    let ok = error <= tolerance(T::EPSILON, m.stats().max);
    let spmv_ms = match time_batches {
        Some(batches) if ok => {
            // Batches of K back-to-back calls, K so that a batch takes >= 20 ms; median.
            let t = Instant::now();
            product(&mut y)?;
            let one = t.elapsed().as_secs_f64().max(1e-7);
            let k = ((0.02 / one).ceil() as usize).clamp(1, 10_000);
            let mut times = Vec::with_capacity(batches);
            for _ in 0..batches.max(1) {
                let t = Instant::now();
                for _ in 0..k {
                    product(&mut y)?;
                }
                times.push(t.elapsed().as_secs_f64() * 1e3 / k as f64);
            }
            times.sort_by(f64::total_cmp);
            Some(times[times.len() / 2])
        }
        _ => None,
    };
    Ok(Outcome {
        algorithm: info.algorithm,
        params: info.params,
        analysis_ms: info.analysis_ms,
        bytes: info.device_bytes,
        error,
        ok,
        spmv_ms,
    })
}

/// x on the device and y on the device poisoned with NaN (a product that skips a row shows).
fn device_vectors<T: Scalar>(
    dev: &std::sync::Arc<tessera::backend::cuda::Device>,
    x: &[T],
    rows: usize,
) -> Result<(DeviceVec<T>, DeviceVec<T>), tessera::Error> {
    Ok((
        DeviceVec::from_slice(dev, x)?,
        DeviceVec::from_slice(dev, &vec![T::from_f64(f64::NAN); rows])?,
    ))
}

/// max |y - want| / max |want| of a device y (after the work on `stream`).
fn device_error<T: Scalar>(
    y: &DeviceVec<T>,
    stream: tessera::backend::cuda::Stream,
    want: &[f64],
) -> Result<f64, tessera::Error> {
    let got: Vec<f64> = y.to_vec(stream)?.iter().map(|v| v.to_f64()).collect();
    Ok(rel_error(&got, want))
}

/// The CUDA half of [`run_one`]: x and y in device memory, y poisoned with NaN for the checked
/// call; ONLINE tuning may settle first (up to 1000 calls); then [`time_gpu`]'s measure (three
/// warm-up calls, then the median of at least 7 batches of about 1 ms of back-to-back calls
/// between CUDA events). The product is checked again after timing.
fn run_one_gpu<T: Scalar>(
    s: &Setup,
    dev: &std::sync::Arc<tessera::backend::cuda::Device>,
    m: Matrix<T>,
    x: &[T],
    want: &[f64],
    time_batches: Option<usize>,
) -> Result<Outcome, tessera::Error> {
    let h = &s.handle;
    let stream = h.cuda_stream();
    let (dx, dy) = device_vectors(dev, x, want.len())?;
    let call = || {
        m.spmv_device(
            h,
            Operation::NonTranspose,
            T::ONE,
            dx.addr(),
            T::ZERO,
            dy.addr(),
        )
    };
    let check = |error: &mut f64| -> Result<(), tessera::Error> {
        *error = error.max(device_error(&dy, stream, want)?);
        Ok(())
    };
    let mut error = 0.0;
    call()?;
    check(&mut error)?;
    // The steady state is the final method's: AUTO's background build (if any) first.
    m.finish_background(h)?;
    let tol = tolerance(T::EPSILON, m.stats().max);
    let mut spmv_ms = None;
    if let (Some(batches), true) = (time_batches, error <= tol) {
        let mut n = 0;
        while !m.tuning_settled() && n < 1000 {
            call()?;
            n += 1;
            if n % 8 == 0 {
                h.synchronize()?;
            }
        }
        spmv_ms = Some(time_gpu(dev, stream, batches, &call)?);
        check(&mut error)?;
    }
    let info = m.info();
    Ok(Outcome {
        algorithm: info.algorithm,
        params: info.params,
        analysis_ms: info.analysis_ms,
        bytes: info.device_bytes,
        error,
        ok: error <= tol,
        spmv_ms,
    })
}

/// Milliseconds per call of `call`: three warm-up calls, then the median of at least 7 batches
/// of about 1 ms of back-to-back calls between CUDA events ([`tessera::backend::cuda::Timer`]).
fn time_gpu(
    dev: &std::sync::Arc<tessera::backend::cuda::Device>,
    stream: tessera::backend::cuda::Stream,
    batches: usize,
    call: &dyn Fn() -> Result<(), tessera::Error>,
) -> Result<f64, tessera::Error> {
    tessera::backend::cuda::Timer::new(dev)?.median_ms(stream, 3, batches, call)
}

/// cuSPARSE's generic SpMV (`cusparseSpMV`, after `cusparseSpMV_preprocess` with
/// [`Preprocess::Yes`]) on the same CSR, the baseline of the speedups (the faster of its
/// algorithms that pass the check, with preprocess), checked against the f64 reference and timed
/// like tessera: (preparation ms, spmv ms or None when the check failed, max relative error,
/// device bytes).
#[allow(clippy::too_many_arguments)]
fn run_cusparse<T: Scalar>(
    s: &Setup,
    dev: &std::sync::Arc<tessera::backend::cuda::Device>,
    a: &Csr<T>,
    alg: tessera::bench::cusparse::CusparseAlg,
    pre: Preprocess,
    x: &[T],
    want: &[f64],
    batches: usize,
) -> Result<(f64, Option<f64>, f64, u64), tessera::Error> {
    use tessera::bench::cusparse::CusparseSpmv;
    let stream = s.handle.cuda_stream();
    let t = Instant::now();
    let op = CusparseSpmv::new_with(dev, stream, a, alg, pre)?;
    let prep_ms = t.elapsed().as_secs_f64() * 1e3;
    let (dx, dy) = device_vectors(dev, x, want.len())?;
    let call = || op.spmv(dx.addr(), dy.addr());
    call()?;
    let error = device_error(&dy, stream, want)?;
    let max_row = (0..a.rows())
        .map(|i| (a.row_ptr()[i + 1] - a.row_ptr()[i]) as usize)
        .max()
        .unwrap_or(0);
    let ms = if error <= tolerance(T::EPSILON, max_row) {
        Some(time_gpu(dev, stream, batches, &call)?)
    } else {
        None
    };
    Ok((prep_ms, ms, error, op.device_bytes() as u64))
}

pub(crate) fn run_typed(
    s: &Setup,
    vt: ValueType,
    a: &Csr<f64>,
    alg: Algorithm,
    t: Option<usize>,
) -> Result<Outcome, tessera::Error> {
    match vt {
        ValueType::F32 => run_one::<f32>(s, a, alg, t),
        ValueType::F64 => run_one::<f64>(s, a, alg, t),
    }
}

/// The least memory traffic of one CSR product with beta = 0, which GB/s and % of peak are
/// computed from: values and column indices (nnz·(val + 4)), row pointers ((rows + 1)·4), x
/// read once (cols·val) and y written once (rows·val).
fn csr_floor_bytes(a: &Csr<f64>, val: usize) -> f64 {
    (a.nnz() * (val + 4) + (a.rows() + 1) * 4 + a.cols() * val + a.rows() * val) as f64
}

/// The generated half of the benchmark suite: `--suite` runs the shared matrices and then
/// these. `bench
/// --suite`'s help lists them too (a test keeps the two alike).
const SUITE_GENERATED: &[&str] = &[
    "gen:lap3d7:160",
    "gen:stencil27:100",
    "gen:elasticity:48",
    "gen:dense:2000,2000",
    "gen:powerlaw:20,16,1",
    "gen:uniform:1000000,16,1",
    "gen:lp:4284,1092610,2600,1",
    "gen:circuit:1000000,5,4,100000,1",
    "gen:grid2d:725",
    "gen:emptyrows:1000000,16,1",
];

/// What `tessera bench` was asked for beyond the common options.
pub(crate) struct BenchArgs<'a> {
    pub(crate) specs: &'a [String],
    pub(crate) suite: bool,
    pub(crate) repeat: usize,
    pub(crate) csv: Option<&'a std::path::Path>,
    pub(crate) plot: Option<&'a std::path::Path>,
    pub(crate) e2e_plot: Option<&'a std::path::Path>,
    pub(crate) cold: bool,
    pub(crate) out: Option<&'a std::path::Path>,
    /// Per-product times only: no end-to-end columns (training sweeps, `--steady`).
    pub(crate) steady: bool,
    /// `--stream own`: queue on a non-blocking stream made for the run.
    pub(crate) own_stream: bool,
}

/// cuSPARSE's two algorithms on one matrix and value type (CUDA only; "n/a" rows when
/// libcusparse is missing), each with its end-to-end pipelines (with and without preprocess)
/// and, with `cold`, its cold_first_ms.
fn cusparse_rows<T: Scalar>(
    s: &Setup,
    name: &str,
    spec: &str,
    a64: &Csr<f64>,
    b: &BenchArgs<'_>,
) -> Vec<BenchRow> {
    let (batches, cold) = (b.repeat, b.cold);
    use tessera::bench::cusparse;
    let Some(dev) = s.handle.cuda() else {
        return vec![];
    };
    let a: Csr<T> = a64.convert();
    let (x, want, _) = e2e::inputs(&a);
    let val = std::mem::size_of::<T>();
    let base = |label: String| BenchRow {
        matrix: name.to_string(),
        rows: a.rows(),
        cols: a.cols(),
        nnz: a.nnz(),
        vt: T::VALUE_TYPE,
        chosen: label.clone(),
        label,
        analysis_ms: None,
        spmv_ms: None,
        baseline_ms: None,
        bytes: 0,
        error: 0.0,
        status: "n/a".into(),
        params: String::new(),
        csr_bytes: csr_floor_bytes(a64, val),
        e2e: Vec::new(),
        baseline_e2e: Vec::new(),
        cold_first_ms: None,
    };
    if let Err(e) = cusparse::probe() {
        let mut r = base("cusparse".into());
        r.params = e.to_string();
        return vec![r];
    }
    // One cuSPARSE handle for the end-to-end pipelines, made before any of their clocks start,
    // as a solver makes one per process (and as tessera's handle is made before its clocks).
    let handle = cusparse::CusparseHandle::new(dev, s.handle.cuda_stream());
    let mut rows: Vec<BenchRow> = cusparse::CUSPARSE_ALGS
        .into_iter()
        .map(|alg| {
            let mut r = base(format!("cusparse:{alg}"));
            match run_cusparse(s, dev, &a, alg, Preprocess::Yes, &x, &want, batches) {
                Ok((prep, ms, err, bytes)) => {
                    r.analysis_ms = Some(prep);
                    r.spmv_ms = ms;
                    r.error = err;
                    r.bytes = bytes;
                    r.status = if ms.is_some() { "ok" } else { "FAILED" }.into();
                    r.params = "cusparseSpMV after cusparseSpMV_preprocess".into();
                }
                Err(e) => {
                    r.status = "FAILED".into();
                    r.params = e.to_string();
                }
            }
            if let (true, Some(with_ms), false) = (r.ok(), r.spmv_ms, b.steady) {
                let mut notes = Vec::new();
                for pre in [Preprocess::Yes, Preprocess::No] {
                    // The steady time of this pipeline: measured above with preprocess, here
                    // without (checked and timed the same way).
                    let steady = match pre {
                        Preprocess::Yes => Ok(with_ms),
                        Preprocess::No => run_cusparse(s, dev, &a, alg, pre, &x, &want, batches)
                            .map_err(|e| e.to_string())
                            .and_then(|(_, ms, err, _)| {
                                ms.ok_or(format!("failed the check (max rel. error {err:.2e})"))
                            }),
                    };
                    let first = steady.and_then(|t| {
                        let h = handle.as_ref().map_err(|e| e.to_string())?;
                        e2e::cusparse_first(h, dev, &a, alg, pre).map(|f| (t, f))
                    });
                    match first {
                        Ok((spmv_ms, (first_dev_ms, first_host_ms))) => {
                            let p = Pipeline {
                                name: format!("{alg} {pre}"),
                                first_dev_ms,
                                first_host_ms,
                                first_borrow_ms: None,
                                spmv_ms,
                                measured: None,
                            };
                            notes.push(p.describe());
                            r.e2e.push(p);
                        }
                        Err(e) => {
                            eprintln!(
                                "  {name} {} {alg} {pre}: end to end not measured: {e}",
                                T::VALUE_TYPE
                            );
                            notes.push(format!("{alg} {pre}: not measured: {e}"));
                        }
                    }
                }
                r.params += &format!("; end to end: {}", notes.join("; "));
            }
            if cold && r.ok() {
                cold_row(s, spec, &mut r);
            }
            r
        })
        .collect();
    let all: Vec<Pipeline> = rows.iter().flat_map(|r| r.e2e.clone()).collect();
    for r in &mut rows {
        r.baseline_e2e = all.clone();
    }
    rows
}

/// Measures `r`'s cold_first_ms in a fresh process (see [`e2e::cold_first`]); a failure is a
/// line on stderr and `-` in the CSV.
fn cold_row(s: &Setup, spec: &str, r: &mut BenchRow) {
    match e2e::cold_first(s.handle.backend(), spec, &r.label, r.vt, s.tuning) {
        Ok(ms) => r.cold_first_ms = Some(ms),
        Err(e) => eprintln!(
            "  {} {} {}: cold_first_ms not measured: {e}",
            r.matrix, r.vt, r.label
        ),
    }
}

pub(crate) fn geomean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

fn write_file(path: &std::path::Path, text: &str) -> Result<(), String> {
    if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

pub(crate) fn cmd_bench(backend: &str, b: &BenchArgs<'_>, o: &RunOpts) -> Result<bool, String> {
    let mut s = setup(backend, o, "all")?;
    match (b.own_stream, s.handle.cuda().cloned()) {
        (true, Some(dev)) => {
            let own = tessera::backend::cuda::OwnedStream::new(&dev).map_err(|e| e.to_string())?;
            s.handle
                .set_stream(own.stream().0)
                .map_err(|e| e.to_string())?;
            eprintln!("stream: a non-blocking stream of the run's own (--stream own)");
            s.own_stream = Some(own);
        }
        (true, None) => eprintln!("stream: --stream own has no effect on the host backend"),
        (false, _) => {}
    }
    let mut specs: Vec<String> = b.specs.to_vec();
    if b.suite {
        let dir = tessera::io::shared_matrices_dir().ok_or(
            "--suite needs the shared matrices (../shared/matrices, or set TESSERA_MATRICES)",
        )?;
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path().to_string_lossy().into_owned()))
            .filter(|p| p.ends_with(".mtx.xz") || p.ends_with(".mtx"))
            .collect();
        files.sort_by_key(|p| p.to_lowercase());
        specs.extend(files);
        specs.extend(SUITE_GENERATED.iter().map(|g| g.to_string()));
    }
    if specs.is_empty() {
        eprintln!("no matrix given: benching the default {DEFAULT_SPEC}");
        specs.push(DEFAULT_SPEC.to_string());
    }
    let mut context = vec![format!(
        "command: tessera {}",
        std::env::args().skip(1).collect::<Vec<_>>().join(" ")
    )];
    context.push(format!("tessera {}", env!("CARGO_PKG_VERSION")));
    let peak = match s.handle.cuda() {
        Some(dev) => {
            let g = tessera::bench::copy_bandwidth_gbs(dev, s.handle.cuda_stream(), 1 << 30)
                .map_err(|e| e.to_string())?;
            let (maj, min) = dev.driver_version();
            context.push(format!(
                "gpu: {} (sm_{}{}, {} SMs, driver CUDA {maj}.{min}); copy bandwidth {g:.0} GB/s (device-to-device, 1 GiB, read + write)",
                dev.name(),
                dev.compute_capability().0,
                dev.compute_capability().1,
                dev.sm_count()
            ));
            Some(g)
        }
        None => None,
    };
    context.push(format!(
        "backend: {}; tuning: {}",
        s.handle.backend(),
        s.tuning
    ));
    if let (Some(_), Some(k)) = (s.handle.cuda(), tessera::methods::kernel_override_summary()) {
        context.push(k);
    }
    for c in &context {
        println!("{c}");
    }
    println!(
        "{:<26} {:>9} {:>10} {:<4} {:<22} {:>11} {:>9} {:>9} {:>7} {:>8} {:>7} {:>6} {:>11} {:>9}  params",
        "matrix", "rows", "nnz", "type", "method", "analysis_ms", "spmv_ms", "cusp_ms", "speedup",
        "GFLOP/s", "GB/s", "%peak", "bytes", "rel_err"
    );
    let mut rows: Vec<BenchRow> = Vec::new();
    let mut all_ok = true;
    for (n, spec) in specs.iter().enumerate() {
        eprint!("[{}/{}] ", n + 1, specs.len());
        let (name, a) = load(spec)?;
        for &vt in &s.types {
            let val = match vt {
                ValueType::F32 => 4,
                ValueType::F64 => 8,
            };
            let cus = match vt {
                ValueType::F32 => cusparse_rows::<f32>(&s, &name, spec, &a, b),
                ValueType::F64 => cusparse_rows::<f64>(&s, &name, spec, &a, b),
            };
            let baseline_e2e: Vec<Pipeline> =
                cus.first().map_or(Vec::new(), |r| r.baseline_e2e.clone());
            let baseline = cus
                .iter()
                .filter(|r| r.ok())
                .filter_map(|r| r.spmv_ms)
                .min_by(f64::total_cmp);
            let mut here = Vec::new();
            for &alg in &s.methods {
                if alg != Algorithm::Auto && !select::implemented(alg) {
                    continue;
                }
                let label = if alg == Algorithm::Auto {
                    "auto".to_string()
                } else {
                    alg.to_string()
                };
                let mut r = BenchRow {
                    matrix: name.clone(),
                    rows: a.rows(),
                    cols: a.cols(),
                    nnz: a.nnz(),
                    vt,
                    label: label.clone(),
                    chosen: label.clone(),
                    analysis_ms: None,
                    spmv_ms: None,
                    baseline_ms: baseline,
                    bytes: 0,
                    error: 0.0,
                    status: "FAILED".into(),
                    params: String::new(),
                    csr_bytes: csr_floor_bytes(&a, val),
                    e2e: Vec::new(),
                    baseline_e2e: baseline_e2e.clone(),
                    cold_first_ms: None,
                };
                match run_typed(&s, vt, &a, alg, Some(b.repeat)) {
                    Ok(out) => {
                        r.chosen = out.algorithm.to_string();
                        r.analysis_ms = Some(out.analysis_ms);
                        r.spmv_ms = out.spmv_ms;
                        r.bytes = out.bytes;
                        r.error = out.error;
                        r.status = if out.ok { "ok" } else { "FAILED" }.into();
                        r.params = out.params;
                    }
                    Err(e) => r.params = e.to_string(),
                }
                // The first product on a fresh matrix, after the checked and timed run above
                // (so the method's kernels are compiled and loaded).
                if let (true, Some(spmv_ms), false) = (r.ok(), r.spmv_ms, b.steady) {
                    match e2e::tessera_first(&s, vt, &a, alg) {
                        Ok(((first_dev_ms, first_host_ms, borrow), measured)) => {
                            r.e2e.push(Pipeline {
                                name: label.clone(),
                                first_dev_ms,
                                first_host_ms,
                                first_borrow_ms: Some(borrow),
                                spmv_ms,
                                measured,
                            })
                        }
                        Err(e) => {
                            r.status = "FAILED".into();
                            r.params += &format!("; end to end: {e}");
                        }
                    }
                }
                if b.cold && r.ok() {
                    cold_row(&s, spec, &mut r);
                }
                all_ok &= r.ok();
                here.push(r);
            }
            for r in cus.into_iter().chain(here) {
                print_row(&r, peak);
                rows.push(r);
            }
        }
    }
    // Geometric-mean speedup over the better cuSPARSE algorithm, per method (FAILED excluded).
    let mut labels: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| !r.is_cusparse()) {
        if !labels.contains(&r.label.as_str()) {
            labels.push(&r.label);
        }
    }
    let mut summary = Vec::new();
    for l in labels {
        let sp: Vec<f64> = rows
            .iter()
            .filter(|r| r.label == l)
            .filter_map(BenchRow::speedup)
            .collect();
        let pk: Vec<f64> = rows
            .iter()
            .filter(|r| r.label == l && r.ok())
            .filter_map(|r| r.gbs().zip(peak).map(|(g, p)| 100.0 * g / p))
            .collect();
        let failed = rows.iter().filter(|r| r.label == l && !r.ok()).count();
        summary.push(match geomean(&sp) {
            Some(g) => format!(
                "geomean speedup vs the better cuSPARSE algorithm: {l} {g:.2}x over {} runs ({} faster, {} FAILED); median % of peak {}",
                sp.len(),
                sp.iter().filter(|&&x| x > 1.0).count(),
                failed,
                opt(median(&pk), 1)
            ),
            None => format!(
                "{l}: no cuSPARSE baseline to compare with ({}; {failed} FAILED)",
                if s.handle.cuda().is_some() { "cuSPARSE unavailable" } else { "host backend" }
            ),
        });
    }
    summary.extend(e2e_summary(&rows));
    for l in &summary {
        println!("{l}");
    }
    if s.handle.backend() == BackendKind::Host {
        println!("note: host backend — these are times of the host reference, not GPU numbers; cuSPARSE and % of peak need a GPU.");
    }
    if !b.steady {
        println!();
        for l in e2e_table(&rows, s.handle.backend() == BackendKind::Host) {
            println!("{l}");
        }
    }
    let csv_text = std::iter::once(csv_header())
        .chain(rows.iter().map(|r| csv_row(r, peak)))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let (csv, plot, e2e_plot) = match b.out {
        Some(dir) => {
            write_file(
                &dir.join("command.txt"),
                &(context.join("\n") + "\n" + &summary.join("\n") + "\n"),
            )?;
            (
                Some(dir.join("bench.csv")),
                Some(dir.join("bench.svg")),
                Some(dir.join("e2e.svg")),
            )
        }
        None => (None, None, None),
    };
    for path in b.csv.map(|p| p.to_path_buf()).into_iter().chain(csv) {
        write_file(&path, &csv_text)?;
    }
    if let Some(path) = b.plot.map(|p| p.to_path_buf()).or(plot) {
        draw_plot(&path, &context, &rows, peak)?;
        eprintln!("wrote {}", path.display());
    }
    for path in b
        .e2e_plot
        .map(|p| p.to_path_buf())
        .into_iter()
        .chain(e2e_plot)
    {
        draw_e2e_plot(&path, &context, &rows)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(all_ok)
}

/// The end-to-end picture: AUTO's (or, without AUTO, the first method's) end-to-end speedup
/// over cuSPARSE's best pipeline from device arrays against N, one line per matrix and value
/// type; without any baseline, e2e_N_ms / (N * spmv_ms) instead.
fn draw_e2e_plot(
    path: &std::path::Path,
    context: &[String],
    rows: &[BenchRow],
) -> Result<(), String> {
    let label = match rows.iter().find(|r| r.label == "auto") {
        Some(_) => "auto",
        None => rows
            .iter()
            .find(|r| !r.is_cusparse())
            .map_or("auto", |r| r.label.as_str()),
    };
    let mine: Vec<&BenchRow> = rows.iter().filter(|r| r.label == label).collect();
    let speedups = mine
        .iter()
        .any(|r| r.e2e_speedup(1, Source::Borrowed).is_some());
    let lines: Vec<plot::E2eLine> = mine
        .iter()
        .map(|r| plot::E2eLine {
            matrix: format!("{} {} ({})", r.matrix, r.vt, r.chosen),
            points: NS
                .iter()
                .filter_map(|&n| {
                    let v = if speedups {
                        r.e2e_speedup(n, Source::Borrowed)
                    } else {
                        r.e2e_ms(n, Source::Borrowed)
                            .zip(r.spmv_ms)
                            .map(|(e, t)| e / (n as f64 * t))
                    };
                    v.map(|v| (n as f64, v))
                })
                .collect(),
        })
        .filter(|l| !l.points.is_empty())
        .collect();
    let title = context.iter().find(|c| c.starts_with("gpu: ")).map_or(
        "tessera bench, end to end (host backend)".to_string(),
        |g| {
            format!(
                "tessera bench, end to end — {}",
                &g[5..g.find(';').unwrap_or(g.len())]
            )
        },
    );
    let (caption, y_desc) = if speedups {
        (
            format!("{label}: time to N products over cuSPARSE's best pipeline's (CSR in device memory, read in place by both; higher is better)"),
            "speedup (×)",
        )
    } else {
        (
            format!(
                "{label}: time to N products / (N × steady product time); no cuSPARSE baseline"
            ),
            "e2e_N / (N · spmv)",
        )
    };
    plot::draw_e2e(path, &title, &caption, y_desc, &lines)
}

fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| v[v.len() / 2])
}

/// The picture: speedup over cuSPARSE per matrix (tessera's methods) and % of peak per method.
fn draw_plot(
    path: &std::path::Path,
    context: &[String],
    rows: &[BenchRow],
    peak: Option<f64>,
) -> Result<(), String> {
    let mut speedups: Vec<plot::SpeedupRow> = Vec::new();
    for r in rows.iter().filter(|r| !r.is_cusparse()) {
        let key = format!("{} {}", r.matrix, r.vt);
        let label = r.label.clone();
        match speedups.iter_mut().find(|s| s.matrix == key) {
            Some(s) => s.speedups.push((label, r.speedup())),
            None => speedups.push(plot::SpeedupRow {
                matrix: key,
                speedups: vec![(label, r.speedup())],
            }),
        }
    }
    let peaks: Vec<plot::PeakRow> = rows
        .iter()
        .filter(|r| r.ok())
        .filter_map(|r| {
            r.gbs().zip(peak).map(|(g, p)| plot::PeakRow {
                method: r.label.clone(),
                matrix: format!("{} {}", r.matrix, r.vt),
                pct_peak: 100.0 * g / p,
            })
        })
        .collect();
    let title = context
        .iter()
        .find(|c| c.starts_with("gpu: "))
        .map_or("tessera bench (host backend)".to_string(), |g| {
            format!("tessera bench — {}", &g[5..g.find(';').unwrap_or(g.len())])
        });
    plot::draw(path, &title, &speedups, &peaks)
}

#[cfg(test)]
#[path = "bench_tests.rs"]
mod tests;
