//! `tessera`: information, verification and timing of tessera's SpMV methods on Matrix Market
//! files or generated matrices. With no arguments it benches a built-in default matrix.
#![forbid(unsafe_code)]

mod bench;
mod e2e;
mod plot;
mod report;

use bench::{cmd_bench, run_typed, BenchArgs};
use clap::{Args, Parser, Subcommand};
use std::process::ExitCode;
use std::time::Instant;
use tessera::{
    select, Algorithm, BackendKind, Csr, Handle, Matrix, Operation, Scalar, Tuning, ValueType,
};

/// The matrix `tessera` with no arguments benches: a 3D 7-point Laplacian on 64^3 (262,144
/// rows, 1.8M non-zeros) — big enough to measure, small enough for the host backend.
const DEFAULT_SPEC: &str = "gen:lap3d7:64";

/// `tessera --version`: the version, then which GPU architectures have kernels built in.
fn long_version() -> &'static str {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| {
        format!(
            "{}\n{}",
            env!("CARGO_PKG_VERSION"),
            tessera::backend::cuda::builtin::summary()
        )
    })
}

#[derive(Parser)]
#[command(
    name = "tessera",
    version,
    long_version = long_version(),
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
    /// Size, row statistics, and the method and parameters analyze chooses: AUTO's choice, or
    /// with --methods each method's parameters.
    Info {
        /// Matrix Market files or gen:NAME:ARGS specs.
        #[arg(required = true)]
        specs: Vec<String>,
        #[command(flatten)]
        opts: RunOpts,
    },
    /// What tessera adds to a product beyond its kernel: a one-row product launched bare, through
    /// the Rust API and through the C API, and the C API's call on an empty matrix; host and
    /// CUDA-event microseconds per call (CUDA only).
    Overhead,
    /// Checks every method against the f64 host reference (both operations, several alpha/beta,
    /// NaN in y when beta = 0); exits 1 if any result is off.
    Verify {
        /// Matrix Market files or gen:NAME:ARGS specs.
        #[arg(required = true)]
        specs: Vec<String>,
        #[command(flatten)]
        opts: RunOpts,
    },
    /// Times analyze and spmv of every method (after checking its result) and prints a table,
    /// then the end-to-end table: the time to N = 1, 10, 100, 1000, 10000 products, set-up
    /// included, against cuSPARSE's best pipeline.
    #[command(after_long_help = e2e::HELP)]
    Bench {
        /// Matrix Market files or gen:NAME:ARGS specs (default: gen:lap3d7:64).
        specs: Vec<String>,
        #[command(flatten)]
        opts: RunOpts,
        /// Timed batches per method (at least 7 on a GPU); the median is reported.
        #[arg(long, default_value_t = 7)]
        repeat: usize,
        /// Also write the table as CSV to this file.
        #[arg(long)]
        csv: Option<std::path::PathBuf>,
        /// Draw speedup vs cuSPARSE and % of peak into this SVG file.
        #[arg(long)]
        plot: Option<std::path::PathBuf>,
        /// Draw AUTO's end-to-end speedup over cuSPARSE's best pipeline (from device arrays)
        /// against N, one line per matrix, into this SVG file. Without any cuSPARSE baseline
        /// (host backend) it draws e2e_N_ms / (N * spmv_ms) instead: what the set-up adds to N
        /// steady products.
        #[arg(long)]
        e2e_plot: Option<std::path::PathBuf>,
        /// Also measure cold_first_ms: one fresh process per row (this binary, `tessera
        /// cold-first`) with an empty kernel cache times handle + create + analyze + the first
        /// product (see below).
        #[arg(long)]
        cold: bool,
        /// Write bench.csv, bench.svg, e2e.svg and command.txt (command, GPU, driver, geometric
        /// means) into this folder.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// Run the benchmark suite: every .mtx and .mtx.xz of the shared matrices (TESSERA_MATRICES
        /// or ../shared/matrices) and the large generated ones (gen:lap3d7:160, gen:stencil27:100,
        /// gen:elasticity:48, gen:dense:2000,2000, gen:powerlaw:20,16,1,
        /// gen:uniform:1000000,16,1, gen:lp:4284,1092610,2600,1,
        /// gen:circuit:1000000,5,4,100000,1, gen:grid2d:725, gen:emptyrows:1000000,16,1), after
        /// any SPECs given.
        #[arg(long)]
        suite: bool,
        /// Per-product times only (no end-to-end measurement): for sweeps over many matrices,
        /// such as AUTO's training set (scripts/auto-training).
        #[arg(long)]
        steady: bool,
        /// The stream tessera and cuSPARSE queue their work on: `legacy` (the default stream,
        /// as CuPy and PyTorch use unless told otherwise) or `own` (a non-blocking stream made
        /// for the run, as a code that makes its own streams, PETSc's for one). Cold first
        /// products (`--cold`) always use the default stream.
        #[arg(long, default_value = "legacy", value_parser = ["legacy", "own"])]
        stream: String,
    },
    /// One row's cold_first_ms, run by `bench --cold` as a fresh process (with TESSERA_CACHE_DIR
    /// set to a new empty folder): loads SPEC, then times from before creating the handle to after
    /// the first product's synchronize, checks the product and prints the milliseconds as its one
    /// line of standard output. --methods takes one method, or cusparse[:ALG_DEFAULT|:CSR_ALG2].
    #[command(hide = true)]
    ColdFirst {
        /// A Matrix Market file or gen:NAME:ARGS spec.
        spec: String,
        #[command(flatten)]
        opts: RunOpts,
    },
}

#[derive(Args, Clone)]
struct RunOpts {
    /// Methods to run, comma-separated (auto, csr_vector, hola, bccoo, brc, tile, or all: auto
    /// and every implemented method) [default: all; for info: auto].
    #[arg(long)]
    methods: Option<String>,
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
    /// `tessera bench --stream own`: the stream the handle (and cuSPARSE) queue on, made for
    /// the run (dropped after the handle: fields drop in order).
    own_stream: Option<tessera::backend::cuda::OwnedStream>,
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

/// Parses the options (`default_methods` where `--methods` is not given) and opens the backend.
fn setup(backend: &str, o: &RunOpts, default_methods: &str) -> Result<Setup, String> {
    let tuning = o
        .tuning
        .parse::<Tuning>()
        .map_err(|e| format!("--tuning: {e}"))?;
    let methods = o.methods.as_deref().unwrap_or(default_methods);
    let methods = if methods == "all" {
        Algorithm::ALL.to_vec()
    } else {
        methods
            .split(',')
            .map(|m| m.trim().parse::<Algorithm>())
            .map(|r| r.map_err(|e| format!("--methods: {e}, or all")))
            .collect::<Result<Vec<_>, _>>()?
    };
    let types = match o.precision.as_str() {
        "both" => vec![ValueType::F64, ValueType::F32],
        p => vec![p
            .parse::<ValueType>()
            .map_err(|e| format!("--precision: {e}, or both"))?],
    };
    Ok(Setup {
        handle: open_backend(backend)?,
        tuning,
        methods,
        types,
        own_stream: None,
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

/// Tolerance of a checked run, for the error measure max |y - ref| / max |ref| ([`rel_error`]):
/// 10·eps·sqrt(longest row), times 4 because an entry's rounding error scales with its row's
/// sum of |a_ij·x_j|, which may exceed max |ref| when terms cancel. Still far below what one
/// wrong entry gives.
fn tolerance(eps: f64, max_row: usize) -> f64 {
    10.0 * eps * ((max_row.max(1)) as f64).sqrt() * 4.0
}

fn cmd_overhead() -> Result<bool, String> {
    let probes = tessera::bench::overhead::run(0).map_err(|e| format!("overhead: {e}"))?;
    println!("{:<78} {:>10} {:>10}", "per call", "host us", "event us");
    for p in &probes {
        println!(
            "{:<78} {:>10.3} {:>10}",
            p.what,
            p.host_us,
            p.event_us.map_or("-".to_string(), |e| format!("{e:.3}"))
        );
    }
    Ok(true)
}

fn cmd_info(backend: &str, specs: &[String], o: &RunOpts) -> Result<bool, String> {
    let s = setup(backend, o, "auto")?;
    // "auto (f64)", "csr_vector (f32)", ...: one column wide enough for every requested method.
    let width = s.methods.iter().map(|m| m.name().len()).max().unwrap_or(0) + " (f64)".len();
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
            for &alg in &s.methods {
                let head = format!("{} ({vt})", alg.name());
                if alg != Algorithm::Auto && !select::implemented(alg) {
                    println!("  {head:<width$}  skipped (not implemented yet)");
                    continue;
                }
                match run_typed(&s, vt, &a, alg, None) {
                    Ok(out) => println!(
                        "  {head:<width$}  {}: {} | {} bytes | analysis {:.3} ms",
                        out.algorithm, out.params, out.bytes, out.analysis_ms
                    ),
                    Err(e) => println!("  {head:<width$}  failed: {e}"),
                }
            }
        }
    }
    Ok(true)
}

fn cmd_verify(backend: &str, specs: &[String], o: &RunOpts) -> Result<bool, String> {
    let s = setup(backend, o, "all")?;
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
    let a = m.csr(&s.handle)?.convert::<f64>();
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let default = RunOpts {
        methods: None,
        precision: "f64".into(),
        tuning: "none".into(),
    };
    let r = match &cli.command {
        None => cmd_bench(
            &cli.backend,
            &BenchArgs {
                specs: &[],
                suite: false,
                repeat: 7,
                csv: None,
                plot: None,
                e2e_plot: None,
                cold: false,
                out: None,
                steady: false,
                own_stream: false,
            },
            &default,
        ),
        Some(Command::Info { specs, opts }) => cmd_info(&cli.backend, specs, opts),
        Some(Command::Overhead) => cmd_overhead(),
        Some(Command::Verify { specs, opts }) => cmd_verify(&cli.backend, specs, opts),
        Some(Command::Bench {
            specs,
            opts,
            repeat,
            csv,
            plot,
            e2e_plot,
            cold,
            out,
            suite,
            steady,
            stream,
        }) => cmd_bench(
            &cli.backend,
            &BenchArgs {
                specs,
                suite: *suite,
                repeat: *repeat,
                csv: csv.as_deref(),
                plot: plot.as_deref(),
                e2e_plot: e2e_plot.as_deref(),
                cold: *cold,
                out: out.as_deref(),
                steady: *steady,
                own_stream: stream == "own",
            },
            opts,
        ),
        Some(Command::ColdFirst { spec, opts }) => e2e::cmd_cold_first(&cli.backend, spec, opts),
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
