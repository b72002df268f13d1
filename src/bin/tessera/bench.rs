//! `tessera bench`: the checked, timed run of one method (host or CUDA), the cuSPARSE baseline
//! rows, the table, the CSV, the suite, the geometric means and the plots; the end-to-end
//! measurement itself is in `e2e.rs`.

use crate::e2e::{self, Pipeline, Source, NS};
use crate::plot;
use crate::{load, random_x, rel_error, setup, tolerance, RunOpts, Setup, DEFAULT_SPEC};
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
    let x64 = random_x(a64.cols(), 42);
    let x: Vec<T> = x64.iter().map(|&v| T::from_f64(v)).collect();
    let xr: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
    let mut want = vec![0.0; a64.rows()];
    m.csr()
        .convert::<f64>()
        .spmv_f64(Operation::NonTranspose, 1.0, &xr, 0.0, &mut want);
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
}

/// One line of the bench table: a tessera method or a cuSPARSE algorithm on one matrix.
struct BenchRow {
    matrix: String,
    rows: usize,
    cols: usize,
    nnz: usize,
    vt: ValueType,
    label: String,
    chosen: String,
    analysis_ms: Option<f64>,
    spmv_ms: Option<f64>,
    baseline_ms: Option<f64>,
    bytes: u64,
    error: f64,
    status: String,
    params: String,
    csr_bytes: f64,
    /// This row's own end-to-end pipelines (a tessera method: one; a cuSPARSE algorithm: with
    /// and without preprocess, those measured).
    e2e: Vec<Pipeline>,
    /// Every cuSPARSE pipeline of this matrix and value type: the end-to-end baseline.
    baseline_e2e: Vec<Pipeline>,
    cold_first_ms: Option<f64>,
}

impl BenchRow {
    fn ok(&self) -> bool {
        self.status == "ok"
    }
    fn is_cusparse(&self) -> bool {
        self.label.starts_with("cusparse")
    }
    fn speedup(&self) -> Option<f64> {
        match (self.ok(), self.spmv_ms, self.baseline_ms) {
            (true, Some(t), Some(b)) if !self.is_cusparse() => Some(b / t),
            _ => None,
        }
    }
    fn gbs(&self) -> Option<f64> {
        self.spmv_ms.map(|t| self.csr_bytes / (t * 1e6))
    }
    /// The time to `n` products, set-up included (the best of this row's pipelines).
    fn e2e_ms(&self, n: u64, from: Source) -> Option<f64> {
        e2e::best(&self.e2e, n, from).filter(|_| self.ok())
    }
    /// cuSPARSE's best pipeline at `n` products.
    fn cusp_e2e_ms(&self, n: u64, from: Source) -> Option<f64> {
        e2e::best(&self.baseline_e2e, n, from)
    }
    /// cuSPARSE's best time to `n` products over this (tessera) row's.
    fn e2e_speedup(&self, n: u64, from: Source) -> Option<f64> {
        match (self.e2e_ms(n, from), self.cusp_e2e_ms(n, from)) {
            (Some(t), Some(b)) if !self.is_cusparse() && t > 0.0 => Some(b / t),
            _ => None,
        }
    }
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// Characters of a method's parameters the table shows. The columns before them take 163
/// characters, so a row (with a matrix name of up to 26) fits a 200-column terminal; the CSV
/// and `tessera info` keep the whole sentence.
const TABLE_PARAMS: usize = 37;

/// The table's short form of a parameter sentence: the text before its first `;` or `(` (the
/// whole text where that is empty), cut to at most `max` characters, at a space where one is
/// in the second half, with an ellipsis.
fn short_params(params: &str, max: usize) -> String {
    let head = params.split([';', '(']).next().unwrap_or("").trim();
    let head = if head.is_empty() { params.trim() } else { head };
    if head.chars().count() <= max {
        return head.to_string();
    }
    let cut: String = head.chars().take(max.saturating_sub(1)).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if cut[..i].chars().count() >= max / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", cut.trim_end_matches([' ', ',']))
}

/// A row of the table, the parameters in their short form.
fn table_row(r: &BenchRow, peak: Option<f64>) -> String {
    let method = if r.label == "auto" {
        format!("auto:{}", r.chosen)
    } else {
        r.label.clone()
    };
    let ms = match (r.ok(), r.spmv_ms) {
        (true, Some(t)) => format!("{t:.4}"),
        _ => r.status.clone(),
    };
    format!(
        "{:<26} {:>9} {:>10} {:<4} {method:<22} {:>11} {ms:>9} {:>9} {:>7} {:>8} {:>7} {:>6} {:>11} {:>9.2e}  {}",
        r.matrix,
        r.rows,
        r.nnz,
        r.vt,
        opt(r.analysis_ms, 3),
        opt(r.baseline_ms, 4),
        opt(r.speedup(), 2),
        opt(r.spmv_ms.map(|t| 2.0 * r.nnz as f64 / (t * 1e6)), 1),
        opt(r.gbs(), 0),
        opt(r.gbs().zip(peak).map(|(g, p)| 100.0 * g / p), 1),
        r.bytes,
        r.error,
        short_params(&r.params, TABLE_PARAMS)
    )
}

/// Prints a table row; a row that is not ok also gets its whole parameters or error on stderr,
/// which the table's short form may cut.
fn print_row(r: &BenchRow, peak: Option<f64>) {
    println!("{}", table_row(r, peak));
    if !r.ok() && short_params(&r.params, TABLE_PARAMS) != r.params.trim() {
        eprintln!(
            "  {} {} {} {}: {}",
            r.matrix, r.vt, r.label, r.status, r.params
        );
    }
}

fn csv_row(r: &BenchRow, peak: Option<f64>) -> String {
    let q = |t: &str| format!("\"{}\"", t.replace('"', "'"));
    [
        q(&r.matrix),
        r.rows.to_string(),
        r.cols.to_string(),
        r.nnz.to_string(),
        r.vt.to_string(),
        r.label.clone(),
        r.chosen.clone(),
        opt(r.analysis_ms, 4),
        opt(r.spmv_ms, 5),
        opt(r.analysis_ms.zip(r.spmv_ms).map(|(a, t)| a / t), 1),
        opt(r.baseline_ms, 5),
        opt(r.speedup(), 3),
        opt(r.spmv_ms.map(|t| 2.0 * r.nnz as f64 / (t * 1e6)), 2),
        opt(r.gbs(), 1),
        opt(r.gbs().zip(peak).map(|(g, p)| 100.0 * g / p), 2),
        r.bytes.to_string(),
        format!("{:.3e}", r.error),
        r.status.clone(),
        q(&r.params),
    ]
    .into_iter()
    .chain(E2E_COLUMNS.iter().flat_map(|&(cusparse, from)| {
        NS.map(|n| {
            opt(
                if cusparse {
                    r.cusp_e2e_ms(n, from)
                } else {
                    r.e2e_ms(n, from)
                },
                4,
            )
        })
    }))
    .chain([opt(r.cold_first_ms, 4)])
    .collect::<Vec<_>>()
    .join(",")
}

/// The columns of the first tessera versions, in their order.
const CSV_HEADER: &str = "matrix,rows,cols,nnz,type,method,chosen,analysis_ms,spmv_ms,analysis_in_spmvs,cusparse_best_ms,speedup_vs_cusparse,gflops,csr_gbps,pct_peak,device_bytes,max_rel_error,status,params";

/// The end-to-end column groups after them, each for every N of [`NS`]: (cuSPARSE's baseline
/// rather than the row's own, where the arrays start), named by [`e2e_prefix`].
const E2E_COLUMNS: [(bool, Source); 4] = [
    (false, Source::Device),
    (false, Source::Host),
    (true, Source::Device),
    (true, Source::Host),
];

fn e2e_prefix(cusparse: bool, from: Source) -> &'static str {
    match (cusparse, from) {
        (false, Source::Device) => "e2e_",
        (false, Source::Host) => "e2e_host_",
        (true, Source::Device) => "cuspe2e_",
        (true, Source::Host) => "cuspe2e_host_",
    }
}

/// The CSV header: the old columns, then e2e_N_ms, e2e_host_N_ms, cuspe2e_N_ms,
/// cuspe2e_host_N_ms (N = 1, 10, 100, 1000, 10000) and cold_first_ms.
fn csv_header() -> String {
    let mut h = CSV_HEADER.to_string();
    for (cusparse, from) in E2E_COLUMNS {
        for n in NS {
            h += &format!(",{}{n}_ms", e2e_prefix(cusparse, from));
        }
    }
    h + ",cold_first_ms"
}

/// cuSPARSE's two algorithms on one matrix and value type (CUDA only; "n/a" rows when
/// libcusparse is missing), each with its end-to-end pipelines (with and without preprocess)
/// and, with `cold`, its cold_first_ms.
fn cusparse_rows<T: Scalar>(
    s: &Setup,
    name: &str,
    spec: &str,
    a64: &Csr<f64>,
    batches: usize,
    cold: bool,
) -> Vec<BenchRow> {
    use tessera::bench::cusparse;
    let Some(dev) = s.handle.cuda() else {
        return vec![];
    };
    let a: Csr<T> = a64.convert();
    let x: Vec<T> = random_x(a.cols(), 42)
        .into_iter()
        .map(T::from_f64)
        .collect();
    let xr: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
    let mut want = vec![0.0; a.rows()];
    a.convert::<f64>()
        .spmv_f64(Operation::NonTranspose, 1.0, &xr, 0.0, &mut want);
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
            if let (true, Some(with_ms)) = (r.ok(), r.spmv_ms) {
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
                                spmv_ms,
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

fn geomean(v: &[f64]) -> Option<f64> {
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
    let s = setup(backend, o, "all")?;
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
                ValueType::F32 => cusparse_rows::<f32>(&s, &name, spec, &a, b.repeat, b.cold),
                ValueType::F64 => cusparse_rows::<f64>(&s, &name, spec, &a, b.repeat, b.cold),
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
                if let (true, Some(spmv_ms)) = (r.ok(), r.spmv_ms) {
                    match e2e::tessera_first(&s, vt, &a, alg) {
                        Ok((first_dev_ms, first_host_ms)) => r.e2e.push(Pipeline {
                            name: label.clone(),
                            first_dev_ms,
                            first_host_ms,
                            spmv_ms,
                        }),
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
    println!();
    for l in e2e_table(&rows, s.handle.backend() == BackendKind::Host) {
        println!("{l}");
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

/// N as the end-to-end table heads its columns: 1, 10, 100, 1k, 10k.
fn short_n(n: u64) -> String {
    if n >= 1000 && n % 1000 == 0 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// A ratio in at most 6 characters, about three significant digits ("-" for none).
fn fmt_ratio(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v >= 1000.0 => format!("{v:.1e}"),
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) if v >= 0.1 => format!("{v:.2}"),
        Some(v) if v >= 0.01 => format!("{v:.3}"),
        Some(v) => format!("{v:.0e}"),
    }
}

/// A time in ms in at most 6 characters ("-" for none).
fn fmt_ms6(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v < 10.0 => format!("{v:.3}"),
        Some(v) if v < 100.0 => format!("{v:.2}"),
        Some(v) if v < 1000.0 => format!("{v:.1}"),
        Some(v) if v < 99_999.5 => format!("{v:.0}"),
        Some(v) => format!("{v:.0e}"),
    }
}

/// The end-to-end table: per row its first product (ms, set-up included) from device arrays
/// and from host arrays, its speedup over cuSPARSE's best pipeline at each N from each (or,
/// when no row has a cuSPARSE baseline, as on the host backend, its time to N products), and
/// cold_first_ms. 160 characters wide (with a matrix name of up to 26). On the host backend
/// (`host`) the two groups are one measurement, and say so.
fn e2e_table(rows: &[BenchRow], host: bool) -> Vec<String> {
    let ns = NS.map(|n| format!("{:>6}", short_n(n))).join(" ");
    let baseline = rows.iter().any(|r| !r.baseline_e2e.is_empty());
    let (head, what) = if baseline {
        (
            "end to end: speedup over cuSPARSE's best pipeline after N products, set-up included; first product in ms (definitions: tessera bench --help)",
            "speedup",
        )
    } else {
        (
            "end to end: time to N products in ms, set-up included (no cuSPARSE baseline; definitions: tessera bench --help)",
            "ms",
        )
    };
    let (dev_group, host_group) = if host {
        (
            format!("{what}, host backend, N ="),
            format!("{what}, the same, N ="),
        )
    } else {
        (
            format!("{what}, CSR in device memory, N ="),
            format!("{what}, CSR on the host, N ="),
        )
    };
    let mut out = vec![
        head.to_string(),
        format!("{:<76}  {dev_group:<34}  {host_group:<34}", "")
            .trim_end()
            .to_string(),
        format!(
            "{:<26} {:<4} {:<22} {:>10} {:>10}  {ns}  {ns} {:>11}",
            "matrix", "type", "method", "first_ms", "host_1st", "cold_1st_ms"
        ),
    ];
    for r in rows {
        let method = if r.label == "auto" {
            format!("auto:{}", r.chosen)
        } else {
            r.label.clone()
        };
        let sp = |from| {
            NS.map(|n| {
                let v = if baseline {
                    fmt_ratio(r.e2e_speedup(n, from))
                } else {
                    fmt_ms6(r.e2e_ms(n, from))
                };
                format!("{v:>6}")
            })
            .join(" ")
        };
        out.push(format!(
            "{:<26} {:<4} {method:<22} {:>10} {:>10}  {}  {} {:>11}",
            r.matrix,
            r.vt,
            opt(r.e2e_ms(1, Source::Device), 3),
            opt(r.e2e_ms(1, Source::Host), 3),
            sp(Source::Device),
            sp(Source::Host),
            opt(r.cold_first_ms, 1)
        ));
    }
    out
}

/// Per tessera method, the geometric-mean end-to-end speedup over cuSPARSE's best pipeline at
/// each N (none without a baseline).
fn e2e_summary(rows: &[BenchRow]) -> Vec<String> {
    let mut labels: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| !r.is_cusparse()) {
        if !labels.contains(&r.label.as_str()) {
            labels.push(&r.label);
        }
    }
    let mut out = Vec::new();
    for l in labels {
        let at = |n: u64, from: Source| {
            let v: Vec<f64> = rows
                .iter()
                .filter(|r| r.label == l)
                .filter_map(|r| r.e2e_speedup(n, from))
                .collect();
            (geomean(&v), v.len())
        };
        if at(1, Source::Device).0.is_none() {
            continue;
        }
        let series = |from| {
            NS.map(|n| {
                let (g, k) = at(n, from);
                format!("{} ({k})", fmt_ratio(g))
            })
            .join(", ")
        };
        out.push(format!(
            "end-to-end geomean speedup vs cuSPARSE's best pipeline: {l} at N = 1, 10, 100, 1000, 10000 (matrices): from device arrays {}; from host arrays {}",
            series(Source::Device),
            series(Source::Host)
        ));
    }
    out
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
        .any(|r| r.e2e_speedup(1, Source::Device).is_some());
    let lines: Vec<plot::E2eLine> = mine
        .iter()
        .map(|r| plot::E2eLine {
            matrix: format!("{} {} ({})", r.matrix, r.vt, r.chosen),
            points: NS
                .iter()
                .filter_map(|&n| {
                    let v = if speedups {
                        r.e2e_speedup(n, Source::Device)
                    } else {
                        r.e2e_ms(n, Source::Device)
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
            format!("{label}: time to N products over cuSPARSE's best pipeline's (CSR in device memory; higher is better)"),
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
mod tests {
    use super::*;

    #[test]
    fn short_params_keep_the_head_of_the_sentence() {
        let csr =
            "coop=4 repeat=1 block_size=128 grid=54 (Reguly-Giles fixed rule, 5.4; 1500 blocks)";
        assert_eq!(
            short_params(csr, 40),
            "coop=4 repeat=1 block_size=128 grid=54"
        );
        let bccoo =
            "block=1x1 tile=8 flags=u8 col=u16 slices=1 wg=64 s2-cache2xWG (fixed rule); fill 100%";
        assert_eq!(
            short_params(bccoo, 40),
            "block=1x1 tile=8 flags=u8 col=u16…"
        );
        let brc = "B1=32 B2=7 rep=1; fixed rule: pure BRC";
        assert_eq!(short_params(brc, 40), "B1=32 B2=7 rep=1");
        // No space in the second half: a hard cut; never more than `max` characters.
        let long = "x".repeat(100);
        assert_eq!(short_params(&long, 10), format!("{}…", "x".repeat(9)));
        for max in 1..60 {
            assert!(short_params(bccoo, max).chars().count() <= max, "{max}");
        }
        // Multi-byte text is cut at characters, not bytes.
        assert_eq!(short_params("αβγδεζηθικ", 5), "αβγδ…");
        // Empty, and a sentence that opens with its parenthesis.
        assert_eq!(short_params("", 40), "");
        assert_eq!(
            short_params("(libcusparse not found)", 40),
            "(libcusparse not found)"
        );
        assert_eq!(
            short_params("  threads=256 npt=4  ", 40),
            "threads=256 npt=4"
        );
    }

    /// A row as a GPU run makes it: tessera's BRC with one pipeline, cuSPARSE's four as the
    /// end-to-end baseline.
    fn sample_row(params: &str) -> BenchRow {
        let p = |name: &str, dev: f64, host: f64, spmv: f64| Pipeline {
            name: name.into(),
            first_dev_ms: dev,
            first_host_ms: host,
            spmv_ms: spmv,
        };
        BenchRow {
            matrix: "gen:uniform:1000000,16,1".into(),
            rows: 1_000_000,
            cols: 1_000_000,
            nnz: 16_000_000,
            vt: ValueType::F64,
            label: "brc".into(),
            chosen: "brc".into(),
            analysis_ms: Some(123.456),
            spmv_ms: Some(0.12345),
            baseline_ms: Some(0.2),
            bytes: 123_456_789,
            error: 1.9e-16,
            status: "ok".into(),
            params: params.into(),
            csr_bytes: 2.0e8,
            e2e: vec![p("brc", 150.0, 140.0, 0.12345)],
            baseline_e2e: vec![
                p("ALG_DEFAULT with preprocess", 9.0, 30.0, 0.2),
                p("ALG_DEFAULT without preprocess", 4.0, 25.0, 0.25),
                p("CSR_ALG2 with preprocess", 9.5, 30.5, 0.21),
                p("CSR_ALG2 without preprocess", 5.0, 26.0, 0.3),
            ],
            cold_first_ms: Some(1234.5),
        }
    }

    const BRC_PARAMS: &str = "B1=32 B2=7 rep=1 block_size=128 hybrid=off padding=1.003 (stored slots 11264 / nnz 11232; ELL 0), blocks=54, split_rows=0, empty_rows=0, atomic (float atomicAdd for split rows: not bitwise reproducible); fixed rule: pure BRC (HYB width 0)";

    #[test]
    fn a_table_row_fits_200_columns_and_the_csv_keeps_the_whole_sentence() {
        let params = BRC_PARAMS;
        let r = sample_row(params);
        let row = table_row(&r, Some(3000.0));
        assert!(
            row.chars().count() <= 200,
            "{} characters: {row}",
            row.chars().count()
        );
        assert!(row.ends_with("  B1=32 B2=7 rep=1 block_size=128…"), "{row}");
        assert!(csv_row(&r, Some(3000.0)).contains(&format!(",\"{params}\",")));
    }

    #[test]
    fn the_csv_appends_the_end_to_end_columns_after_the_old_ones() {
        let header = csv_header();
        assert!(header.starts_with(&format!("{CSV_HEADER},e2e_1_ms,e2e_10_ms,")));
        assert!(header.ends_with(",cuspe2e_host_1000_ms,cuspe2e_host_10000_ms,cold_first_ms"));
        let names: Vec<&str> = header.split(',').collect();
        assert_eq!(
            names.len(),
            CSV_HEADER.split(',').count() + 4 * NS.len() + 1
        );
        let mut r = sample_row("no commas here");
        r.matrix = "lap3d7".into();
        let line = csv_row(&r, Some(3000.0));
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), names.len());
        let cell = |name: &str| -> f64 {
            let i = names.iter().position(|n| *n == name).expect(name);
            cells[i]
                .parse()
                .unwrap_or_else(|_| panic!("{name} = {}", cells[i]))
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-3;
        assert!(close(cell("e2e_1_ms"), 150.0));
        assert!(close(cell("e2e_1000_ms"), 150.0 + 999.0 * 0.12345));
        assert!(close(cell("e2e_host_10_ms"), 140.0 + 9.0 * 0.12345));
        // cuSPARSE's best pipeline changes with N: without preprocess first, with it later.
        assert!(close(cell("cuspe2e_1_ms"), 4.0));
        assert!(close(cell("cuspe2e_10000_ms"), 9.0 + 9999.0 * 0.2));
        assert!(close(cell("cuspe2e_host_1_ms"), 25.0));
        assert!(close(cell("cold_first_ms"), 1234.5));
        assert!(close(
            r.e2e_speedup(10000, Source::Device).unwrap(),
            (9.0 + 9999.0 * 0.2) / (150.0 + 9999.0 * 0.12345)
        ));
        // A failed row has no end-to-end times; cuSPARSE's stay.
        let mut failed = sample_row("x");
        failed.status = "FAILED".into();
        assert_eq!(failed.e2e_ms(10, Source::Device), None);
        assert_eq!(failed.e2e_speedup(10, Source::Device), None);
        assert_eq!(failed.cusp_e2e_ms(1, Source::Device), Some(4.0));
    }

    #[test]
    fn the_end_to_end_table_fits_200_columns() {
        let mut rows = vec![sample_row(BRC_PARAMS)];
        let mut auto = sample_row("");
        auto.label = "auto".into();
        auto.matrix = "a-matrix-name-of-26-chars!".into();
        auto.e2e[0].first_dev_ms = 123_456.0;
        rows.push(auto);
        let mut cus = sample_row("");
        cus.label = "cusparse:ALG_DEFAULT".into();
        rows.push(cus);
        let lines = e2e_table(&rows, false);
        for l in &lines {
            assert!(
                l.chars().count() <= 200,
                "{} characters: {l}",
                l.chars().count()
            );
        }
        // The columns line up: every row ends where the header does.
        let width = lines[2].chars().count();
        assert!(
            lines[3..].iter().all(|l| l.chars().count() == width),
            "{lines:#?}"
        );
        assert!(lines[0].contains("speedup over cuSPARSE"), "{}", lines[0]);
        assert!(lines[4].contains("auto:brc"), "{}", lines[4]);
        // No baseline anywhere (host backend): times instead of speedups.
        for r in &mut rows {
            r.baseline_e2e.clear();
        }
        let lines = e2e_table(&rows, true);
        assert!(lines[1].contains("ms, host backend, N ="), "{}", lines[1]);
        assert!(
            lines[0].contains("time to N products in ms"),
            "{}",
            lines[0]
        );
        assert!(lines[3].contains("150.0"), "{}", lines[3]);
        assert!(e2e_summary(&rows).is_empty());
    }

    #[test]
    fn ratios_and_times_fit_six_characters() {
        for v in [0.0001, 0.004, 0.05, 0.5, 1.234, 12.34, 123.4, 1234.0, 1e7] {
            assert!(
                fmt_ratio(Some(v)).chars().count() <= 6,
                "{v}: {}",
                fmt_ratio(Some(v))
            );
            assert!(
                fmt_ms6(Some(v)).chars().count() <= 6,
                "{v}: {}",
                fmt_ms6(Some(v))
            );
        }
        assert_eq!(fmt_ratio(Some(1.234)), "1.23");
        assert_eq!(fmt_ms6(Some(99_999.0)), "99999");
        assert_eq!(fmt_ratio(None), "-");
        assert_eq!(short_n(10000), "10k");
        assert_eq!(short_n(100), "100");
    }

    #[test]
    fn suite_help_lists_every_generated_matrix() {
        use clap::CommandFactory;
        let cli = crate::Cli::command();
        let bench = cli.find_subcommand("bench").expect("a bench command");
        let help = bench
            .get_arguments()
            .find(|a| a.get_id() == "suite")
            .and_then(|a| a.get_help())
            .expect("--suite has help")
            .to_string();
        for g in SUITE_GENERATED {
            assert!(
                help.contains(&format!("{g},")) || help.contains(&format!("{g})")),
                "{g}: {help}"
            );
        }
    }
}
