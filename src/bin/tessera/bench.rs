//! `tessera bench`: the checked, timed run of one method (host or CUDA), the cuSPARSE baseline
//! rows, the table, the CSV, the suite, the geometric means and the plot.

use crate::plot;
use crate::{load, random_x, rel_error, setup, tolerance, RunOpts, Setup, DEFAULT_SPEC};
use std::time::Instant;
use tessera::backend::cuda::DeviceVec;
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

/// cuSPARSE's generic SpMV (`cusparseSpMV` after `cusparseSpMV_preprocess`) on the same CSR,
/// the baseline of the speedups (the faster of its algorithms that pass the check), checked
/// against the f64 reference and timed like tessera: (preparation ms, spmv ms or None when the check
/// failed, max relative error, device bytes).
fn run_cusparse<T: Scalar>(
    s: &Setup,
    dev: &std::sync::Arc<tessera::backend::cuda::Device>,
    a: &Csr<T>,
    alg: tessera::bench::cusparse::CusparseAlg,
    x: &[T],
    want: &[f64],
    batches: usize,
) -> Result<(f64, Option<f64>, f64, u64), tessera::Error> {
    use tessera::bench::cusparse::CusparseSpmv;
    let stream = s.handle.cuda_stream();
    let t = Instant::now();
    let op = CusparseSpmv::new(dev, stream, a, alg)?;
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
    .join(",")
}

const CSV_HEADER: &str = "matrix,rows,cols,nnz,type,method,chosen,analysis_ms,spmv_ms,analysis_in_spmvs,cusparse_best_ms,speedup_vs_cusparse,gflops,csr_gbps,pct_peak,device_bytes,max_rel_error,status,params";

/// cuSPARSE's two algorithms on one matrix and value type (CUDA only; "n/a" rows when
/// libcusparse is missing).
fn cusparse_rows<T: Scalar>(
    s: &Setup,
    name: &str,
    a64: &Csr<f64>,
    batches: usize,
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
    };
    if let Err(e) = cusparse::probe() {
        let mut r = base("cusparse".into());
        r.params = e.to_string();
        return vec![r];
    }
    cusparse::CUSPARSE_ALGS
        .into_iter()
        .map(|alg| {
            let mut r = base(format!("cusparse:{alg}"));
            match run_cusparse(s, dev, &a, alg, &x, &want, batches) {
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
            r
        })
        .collect()
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
                ValueType::F32 => cusparse_rows::<f32>(&s, &name, &a, b.repeat),
                ValueType::F64 => cusparse_rows::<f64>(&s, &name, &a, b.repeat),
            };
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
    for l in &summary {
        println!("{l}");
    }
    if s.handle.backend() == BackendKind::Host {
        println!("note: host backend — these are times of the host reference, not GPU numbers; cuSPARSE and % of peak need a GPU.");
    }
    let csv_text = std::iter::once(CSV_HEADER.to_string())
        .chain(rows.iter().map(|r| csv_row(r, peak)))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let (csv, plot) = match b.out {
        Some(dir) => {
            write_file(
                &dir.join("command.txt"),
                &(context.join("\n") + "\n" + &summary.join("\n") + "\n"),
            )?;
            (Some(dir.join("bench.csv")), Some(dir.join("bench.svg")))
        }
        None => (None, None),
    };
    for path in b.csv.map(|p| p.to_path_buf()).into_iter().chain(csv) {
        write_file(&path, &csv_text)?;
    }
    if let Some(path) = b.plot.map(|p| p.to_path_buf()).or(plot) {
        draw_plot(&path, &context, &rows, peak)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(all_ok)
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

    #[test]
    fn a_table_row_fits_200_columns_and_the_csv_keeps_the_whole_sentence() {
        let params = "B1=32 B2=7 rep=1 block_size=128 hybrid=off padding=1.003 (stored slots 11264 / nnz 11232; ELL 0), blocks=54, split_rows=0, empty_rows=0, atomic (float atomicAdd for split rows: not bitwise reproducible); fixed rule: pure BRC (HYB width 0)";
        let r = BenchRow {
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
        };
        let row = table_row(&r, Some(3000.0));
        assert!(
            row.chars().count() <= 200,
            "{} characters: {row}",
            row.chars().count()
        );
        assert!(row.ends_with("  B1=32 B2=7 rep=1 block_size=128…"), "{row}");
        assert!(csv_row(&r, Some(3000.0)).ends_with(&format!(",\"{params}\"")));
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
