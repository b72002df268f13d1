//! `tessera`: information, verification and timing of tessera's SpMV methods on Matrix Market
//! files or generated matrices. With no arguments it benches a built-in default matrix.
#![forbid(unsafe_code)]

use clap::{Args, Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;
use tessera::{
    select, Algorithm, BackendKind, Csr, Handle, Matrix, Operation, Scalar, Tuning, ValueType,
};

/// The matrix `tessera` with no arguments benches: a 3D 7-point Laplacian on 64^3 (262,144
/// rows, 1.8M non-zeros) — big enough to measure, small enough for the host backend.
const DEFAULT_SPEC: &str = "gen:lap3d7:64";

#[derive(Parser)]
#[command(
    name = "tessera",
    version,
    about = "GPU sparse matrix-vector multiply: information, verification and timing",
    long_about = "Runs tessera's SpMV methods on Matrix Market files (.mtx, .mtx.xz) or generated matrices (gen:NAME:ARGS).\n\
Without a subcommand it benches the built-in default matrix (gen:lap3d7:64). It runs on CUDA device 0 when a usable GPU is present, else on the host backend, and says which and why.",
    after_long_help = generators_help()
)]
struct Cli {
    /// Backend: auto (CUDA if usable, else host), cuda, or host.
    #[arg(long, global = true, default_value = "auto")]
    backend: String,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Size, row statistics, and the method and parameters analyze chooses.
    Info {
        /// Matrix Market files or gen:NAME:ARGS specs.
        #[arg(required = true)]
        specs: Vec<String>,
        #[command(flatten)]
        opts: RunOpts,
    },
    /// Checks every method against the f64 host reference (both operations, several alpha/beta,
    /// NaN in y when beta = 0); exits 1 if any result is off.
    Verify {
        /// Matrix Market files or gen:NAME:ARGS specs.
        #[arg(required = true)]
        specs: Vec<String>,
        #[command(flatten)]
        opts: RunOpts,
    },
    /// Times analyze and spmv of every method (after checking its result) and prints a table.
    Bench {
        /// Matrix Market files or gen:NAME:ARGS specs (default: gen:lap3d7:64).
        specs: Vec<String>,
        #[command(flatten)]
        opts: RunOpts,
        /// Timed batches per method; the median is reported.
        #[arg(long, default_value_t = 7)]
        repeat: usize,
        /// Also write the table as CSV to this file.
        #[arg(long)]
        csv: Option<std::path::PathBuf>,
    },
}

#[derive(Args, Clone)]
struct RunOpts {
    /// Methods to run, comma-separated (auto, csr_vector, hola, bccoo, brc, tile, or all).
    #[arg(long, default_value = "all")]
    methods: String,
    /// Value types: f64, f32 or both.
    #[arg(long, default_value = "f64")]
    precision: String,
    /// Tuning for analyze: none, quick, exhaustive, online.
    #[arg(long, default_value = "none")]
    tuning: String,
}

fn generators_help() -> String {
    let mut s = String::from("Generated matrices (gen:NAME:ARGS; every argument optional, deterministic from its seed):\n");
    for g in tessera::io::gen::catalogue() {
        s += &format!(
            "  gen:{}:{}\n      {} Default {}. Stands in for: {}.\n",
            g.name, g.args, g.description, g.default_spec, g.stands_for
        );
    }
    s += "\nEnvironment: TESSERA_BACKEND=host|cuda (tessera_create's backend), TESSERA_MATRICES (folder of the shared matrices),\nTESSERA_DETERMINISTIC=1 (AUTO picks only bitwise-reproducible methods).";
    s
}

struct Setup {
    handle: Handle,
    tuning: Tuning,
    methods: Vec<Algorithm>,
    types: Vec<ValueType>,
}

fn open_backend(choice: &str) -> Result<Handle, String> {
    let kind = match choice {
        "auto" => None,
        other => Some(other.parse::<BackendKind>().map_err(|e| e.to_string())?),
    };
    let result = match kind {
        Some(k) => Handle::with_backend(k, 0),
        None => Handle::with_backend(BackendKind::Cuda, 0).or_else(|e| {
            eprintln!("backend: host (no GPU: {})", e.detail());
            Handle::with_backend(BackendKind::Host, 0)
        }),
    };
    let h = result.map_err(|e| e.to_string())?;
    match h.cuda() {
        Some(dev) => {
            let (maj, min) = dev.driver_version();
            let (cc0, cc1) = dev.compute_capability();
            eprintln!(
                "backend: cuda (device {}: {}, sm_{cc0}{cc1}, {} SMs, {:.0} GiB, driver CUDA {maj}.{min})",
                h.device(),
                dev.name(),
                dev.sm_count(),
                dev.total_memory() as f64 / (1u64 << 30) as f64
            );
        }
        None if kind.is_some() => eprintln!("backend: host (as asked)"),
        None => {}
    }
    Ok(h)
}

fn setup(backend: &str, o: &RunOpts) -> Result<Setup, String> {
    let tuning = o.tuning.parse::<Tuning>().map_err(|e| e.to_string())?;
    let methods = if o.methods == "all" {
        Algorithm::ALL.to_vec()
    } else {
        o.methods
            .split(',')
            .map(|m| m.trim().parse::<Algorithm>().map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?
    };
    let types = match o.precision.as_str() {
        "both" => vec![ValueType::F64, ValueType::F32],
        p => vec![p.parse::<ValueType>().map_err(|e| e.to_string())?],
    };
    Ok(Setup {
        handle: open_backend(backend)?,
        tuning,
        methods,
        types,
    })
}

fn load(spec: &str) -> Result<(String, Csr<f64>), String> {
    let t = Instant::now();
    // The reader's and generators' errors name the file or spec themselves.
    let r = tessera::io::load(spec).map_err(|e| e.to_string())?;
    eprintln!(
        "loaded {} ({} x {}, {} non-zeros) in {:.2} s",
        r.0,
        r.1.rows(),
        r.1.cols(),
        r.1.nnz(),
        t.elapsed().as_secs_f64()
    );
    Ok(r)
}

/// Deterministic x in [-1, 1), never zero.
fn random_x(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let v = (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            if v.abs() < 1e-3 {
                0.5
            } else {
                v
            }
        })
        .collect()
}

/// max |y - ref| / max |ref| (0/0 = 0; any NaN gives infinity).
fn rel_error(y: &[f64], r: &[f64]) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (a, b) in y.iter().zip(r) {
        let d = (a - b).abs();
        if d.is_nan() {
            return f64::INFINITY;
        }
        num = num.max(d);
        den = den.max(b.abs());
    }
    if num == 0.0 {
        0.0
    } else {
        num / den
    }
}

/// Tolerance of a checked run, relative to max |ref| (BENCHMARKING.md's error measure):
/// 10·eps·sqrt(longest row), times 4 because an entry's rounding error scales with its row's
/// sum of |a_ij·x_j|, which may exceed max |ref| when terms cancel. Still far below what one
/// wrong entry gives.
fn tolerance(eps: f64, max_row: usize) -> f64 {
    10.0 * eps * ((max_row.max(1)) as f64).sqrt() * 4.0
}

struct Outcome {
    algorithm: Algorithm,
    params: String,
    analysis_ms: f64,
    bytes: u64,
    error: f64,
    ok: bool,
    spmv_ms: Option<f64>,
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

/// The CUDA half of [`run_one`], as BENCHMARKING.md measures: x and y in device memory, y
/// poisoned with NaN for the checked call; ONLINE tuning may settle first (its calls are the
/// warm-up); then batches of K back-to-back calls between CUDA events (K so that a batch takes
/// >= 1 ms), the median over the batches. The product is checked again after timing.
fn run_one_gpu<T: Scalar>(
    s: &Setup,
    dev: &std::sync::Arc<tessera::backend::cuda::Device>,
    m: Matrix<T>,
    x: &[T],
    want: &[f64],
    time_batches: Option<usize>,
) -> Result<Outcome, tessera::Error> {
    use tessera::backend::cuda::{DeviceVec, Event};
    let h = &s.handle;
    let stream = h.cuda_stream();
    let dx = DeviceVec::from_slice(dev, x)?;
    let dy = DeviceVec::from_slice(dev, &vec![T::from_f64(f64::NAN); want.len()])?;
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
        let got: Vec<f64> = dy.to_vec(stream)?.iter().map(|v| v.to_f64()).collect();
        *error = error.max(rel_error(&got, want));
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
        for _ in 0..3 {
            call()?;
        }
        let (start, end) = (Event::new(dev)?, Event::new(dev)?);
        let batch = |k: usize| -> Result<f64, tessera::Error> {
            start.record(stream)?;
            for _ in 0..k {
                call()?;
            }
            end.record(stream)?;
            end.synchronize()?;
            Ok(end.elapsed_ms(&start)? / k as f64)
        };
        let one = batch(1)?.max(1e-4);
        let k = ((1.0 / one).ceil() as usize).clamp(1, 20_000);
        let mut times = Vec::with_capacity(batches);
        for _ in 0..batches.max(7) {
            times.push(batch(k)?);
        }
        times.sort_by(f64::total_cmp);
        spmv_ms = Some(times[times.len() / 2]);
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

fn run_typed(
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

fn cmd_info(backend: &str, specs: &[String], o: &RunOpts) -> Result<bool, String> {
    let s = setup(backend, o)?;
    for spec in specs {
        let (name, a) = load(spec)?;
        let st = a.stats();
        println!("{name}");
        println!(
            "  size        {} x {}, {} non-zeros",
            st.rows, st.cols, st.nnz
        );
        println!(
            "  rows        mean {:.2}, std-dev {:.2}, min {}, max {}, empty {}",
            st.mean, st.std_dev, st.min, st.max, st.empty_rows
        );
        println!(
            "  col spread  {:.1} (mean first-to-last column distance per row)",
            st.col_spread
        );
        for &vt in &s.types {
            match run_typed(&s, vt, &a, Algorithm::Auto, None) {
                Ok(out) => println!(
                    "  auto ({vt})  {}: {} | {} bytes | analysis {:.3} ms",
                    out.algorithm, out.params, out.bytes, out.analysis_ms
                ),
                Err(e) => println!("  auto ({vt})  failed: {e}"),
            }
        }
    }
    Ok(true)
}

fn cmd_verify(backend: &str, specs: &[String], o: &RunOpts) -> Result<bool, String> {
    let s = setup(backend, o)?;
    let mut all_ok = true;
    for spec in specs {
        let (name, a64) = load(spec)?;
        for &vt in &s.types {
            for &alg in &s.methods {
                if alg != Algorithm::Auto && !select::implemented(alg) {
                    println!("{name:<28} {vt} {alg:<11} skipped (not implemented yet)");
                    continue;
                }
                let ok = match vt {
                    ValueType::F32 => verify_typed::<f32>(&s, &a64, alg),
                    ValueType::F64 => verify_typed::<f64>(&s, &a64, alg),
                };
                match ok {
                    Ok((worst, tol)) => {
                        let pass = worst <= tol;
                        all_ok &= pass;
                        println!(
                            "{name:<28} {vt} {alg:<11} {} (max rel. error {worst:.2e}, tolerance {tol:.2e})",
                            if pass { "ok" } else { "FAILED" }
                        );
                    }
                    Err(e) => {
                        all_ok = false;
                        println!("{name:<28} {vt} {alg:<11} FAILED: {e}");
                    }
                }
            }
        }
    }
    Ok(all_ok)
}

/// Both operations, several alpha/beta; returns the worst relative error and the tolerance.
fn verify_typed<T: Scalar>(
    s: &Setup,
    a64: &Csr<f64>,
    alg: Algorithm,
) -> Result<(f64, f64), tessera::Error> {
    let mut m = Matrix::from_csr(&s.handle, a64.convert::<T>());
    m.analyze(&s.handle, alg, s.tuning)?;
    let a = m.csr().convert::<f64>();
    let mut worst = 0.0f64;
    for op in [Operation::NonTranspose, Operation::Transpose] {
        let (xl, yl) = m.vector_lengths(op);
        let x: Vec<T> = random_x(xl, 7).into_iter().map(T::from_f64).collect();
        let xr: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
        for (alpha, beta) in [(1.0, 0.0), (-0.5, 2.0), (0.0, 3.0)] {
            let y0: Vec<T> = random_x(yl, 9).into_iter().map(T::from_f64).collect();
            let mut y: Vec<T> = if beta == 0.0 {
                vec![T::from_f64(f64::NAN); yl]
            } else {
                y0.clone()
            };
            let mut want: Vec<f64> = y0.iter().map(|v| v.to_f64()).collect();
            a.spmv_f64(op, alpha, &xr, beta, &mut want);
            m.spmv(
                &s.handle,
                op,
                T::from_f64(alpha),
                &x,
                T::from_f64(beta),
                &mut y,
            )?;
            let got: Vec<f64> = y.iter().map(|v| v.to_f64()).collect();
            worst = worst.max(rel_error(&got, &want));
        }
    }
    let longest_col = {
        let mut c = vec![0usize; a.cols()];
        a.col_ind().iter().for_each(|&j| c[j as usize] += 1);
        c.into_iter().max().unwrap_or(0)
    };
    Ok((worst, tolerance(T::EPSILON, m.stats().max.max(longest_col))))
}

/// CSR bytes (BENCHMARKING.md; Reguly & Giles eq. 2 with x read once), beta = 0.
fn csr_floor_bytes(a: &Csr<f64>, val: usize) -> f64 {
    (a.nnz() * (val + 4) + (a.rows() + 1) * 4 + a.cols() * val + a.rows() * val) as f64
}

fn cmd_bench(
    backend: &str,
    specs: &[String],
    o: &RunOpts,
    repeat: usize,
    csv: Option<&std::path::Path>,
) -> Result<bool, String> {
    let s = setup(backend, o)?;
    let specs: Vec<String> = if specs.is_empty() {
        eprintln!("no matrix given: benching the default {DEFAULT_SPEC}");
        vec![DEFAULT_SPEC.to_string()]
    } else {
        specs.to_vec()
    };
    let peak_gbs = match s.handle.cuda() {
        Some(dev) => {
            let g =
                tessera::backend::cuda::copy_bandwidth_gbs(dev, s.handle.cuda_stream(), 1 << 30)
                    .map_err(|e| e.to_string())?;
            println!(
                "gpu: {} (sm_{}{}, {} SMs); copy bandwidth {g:.0} GB/s (device-to-device, 1 GiB, read + write)",
                dev.name(),
                dev.compute_capability().0,
                dev.compute_capability().1,
                dev.sm_count()
            );
            Some(g)
        }
        None => None,
    };
    let header = format!(
        "{:<24} {:>9} {:>10} {:<4} {:<11} {:>11} {:>10} {:>8} {:>8} {:>6} {:>12} {:>9}  params",
        "matrix",
        "rows",
        "nnz",
        "type",
        "method",
        "analysis_ms",
        "spmv_ms",
        "GFLOP/s",
        "GB/s",
        "%peak",
        "bytes",
        "rel_err"
    );
    println!("backend: {}", s.handle.backend());
    println!("{header}");
    let mut rows_csv = vec![
        "matrix,rows,cols,nnz,type,method,tuning,chosen,analysis_ms,spmv_ms,gflops,csr_gbps,pct_peak,device_bytes,max_rel_error,status,params".to_string(),
    ];
    let mut all_ok = true;
    for spec in &specs {
        let (name, a) = load(spec)?;
        for &vt in &s.types {
            let val = match vt {
                ValueType::F32 => 4,
                ValueType::F64 => 8,
            };
            for &alg in &s.methods {
                if alg != Algorithm::Auto && !select::implemented(alg) {
                    continue;
                }
                let label = if alg == Algorithm::Auto {
                    "auto".to_string()
                } else {
                    alg.to_string()
                };
                match run_typed(&s, vt, &a, alg, Some(repeat)) {
                    Ok(out) => {
                        all_ok &= out.ok;
                        let (ms, gf, gb, pct) = match out.spmv_ms {
                            Some(ms) => {
                                let gbs = csr_floor_bytes(&a, val) / (ms * 1e6);
                                (
                                    format!("{ms:.4}"),
                                    format!("{:.2}", 2.0 * a.nnz() as f64 / (ms * 1e6)),
                                    format!("{gbs:.1}"),
                                    peak_gbs
                                        .map_or("-".into(), |p| format!("{:.1}", 100.0 * gbs / p)),
                                )
                            }
                            None => ("FAILED".into(), "-".into(), "-".into(), "-".into()),
                        };
                        let method = if alg == Algorithm::Auto {
                            format!("auto:{}", out.algorithm)
                        } else {
                            label.clone()
                        };
                        println!(
                            "{name:<24} {:>9} {:>10} {vt:<4} {method:<11} {:>11.3} {ms:>10} {gf:>8} {gb:>8} {pct:>6} {:>12} {:>9.2e}  {}",
                            a.rows(), a.nnz(), out.analysis_ms, out.bytes, out.error, out.params
                        );
                        rows_csv.push(format!(
                            "{name},{},{},{},{vt},{label},{},{},{:.6},{},{},{},{},{},{:.3e},{},\"{}\"",
                            a.rows(),
                            a.cols(),
                            a.nnz(),
                            s.tuning,
                            out.algorithm,
                            out.analysis_ms,
                            ms,
                            gf,
                            gb,
                            pct,
                            out.bytes,
                            out.error,
                            if out.ok { "ok" } else { "FAILED" },
                            out.params.replace('"', "'")
                        ));
                    }
                    Err(e) => {
                        all_ok = false;
                        println!("{name:<24} {vt:<4} {label:<11} FAILED: {e}");
                        rows_csv.push(format!(
                            "{name},{},{},{},{vt},{label},{},,,,,,,,,FAILED,\"{e}\"",
                            a.rows(),
                            a.cols(),
                            a.nnz(),
                            s.tuning
                        ));
                    }
                }
            }
        }
    }
    if s.handle.backend() == BackendKind::Host {
        println!("note: host backend — these are times of the host reference, not GPU numbers; cuSPARSE and % of peak need a GPU.");
    }
    if let Some(path) = csv {
        let mut f = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        writeln!(f, "{}", rows_csv.join("\n")).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(all_ok)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let default = RunOpts {
        methods: "all".into(),
        precision: "f64".into(),
        tuning: "none".into(),
    };
    let r = match &cli.command {
        None => cmd_bench(&cli.backend, &[], &default, 7, None),
        Some(Command::Info { specs, opts }) => cmd_info(&cli.backend, specs, opts),
        Some(Command::Verify { specs, opts }) => cmd_verify(&cli.backend, specs, opts),
        Some(Command::Bench {
            specs,
            opts,
            repeat,
            csv,
        }) => cmd_bench(&cli.backend, specs, opts, *repeat, csv.as_deref()),
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("some results failed the check against the f64 host reference");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
