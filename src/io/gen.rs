//! Deterministic matrix generators: the benchmark suite of BENCHMARKING.md and small matrices for
//! tests, named by a spec string `gen:NAME:ARGS`.
//!
//! ARGS are comma-separated non-negative integers (`random`'s third may be a decimal density);
//! every one is optional: a missing or empty argument takes its default, so `gen:lap3d7` is the
//! suite's 160^3 Laplacian and `gen:random:50,,4` is `gen:random:50,1000,4,1`. [`catalogue`]
//! lists the generators, their arguments, defaults, and what each stands in for.
//!
//! Guarantees:
//! - **Same output on every machine and every run**: the random stream is ChaCha8 (from
//!   `rand_chacha`) keyed by the generator's name and SEED; integers in a range come from a
//!   widening multiply, reals from the top 53 bits, and only correctly rounded float operations
//!   (+ - * / sqrt, no `ln`/`exp`/`powf`, which libm may round differently) are used. A test
//!   (`tests/io_matrices.rs`) pins checksums of several generated matrices, so any change of
//!   stream shows.
//! - Columns within a row are strictly increasing: generators never emit duplicates.
//! - Values of the random generators are uniform in magnitude over [0.1, 1) with a random sign:
//!   inside [-1, 1) but never tiny, so relative-error checks mean something. Stencils and the
//!   elasticity matrix have fixed values (given per generator).
//! - Sizes are checked before anything is allocated: rows, columns or non-zeros above 2^31-1
//!   (tessera's `i32` indices) are `InvalidValue` naming the spec.
//! - Cost, release build on the 2-core CI machine: the stencils, `uniform`, `lp` and
//!   `emptyrows` at their suite sizes take about 1 s each (`lap3d7:160`, 28.5M non-zeros:
//!   0.9 s, 0.7 GB peak); `powerlaw:20,16` about 2.5 s (its draws run on up to 8 threads, with
//!   the same result on any number). Peak memory is 24 to 40 bytes per non-zero.
//!
//! The matrices are built row by row in CSR order and handed to [`Csr::from_parts`], which
//! validates them like any caller's arrays; going through `from_triplets` would cost 24 more
//! bytes per non-zero for the same result.
#![forbid(unsafe_code)]

use crate::csr::{Csr, CsrParts, Indices, MAX_DIM};
use crate::error::{Error, Result};
use crate::types::IndexBase;
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One generator as the CLI's `--help` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenInfo {
    /// The NAME in `gen:NAME:ARGS`.
    pub name: &'static str,
    /// The argument names, comma-separated, in order (e.g. `ROWS,PERROW,SEED`).
    pub args: &'static str,
    /// The full spec with every default spelled out (the benchmark suite's size).
    pub default_spec: &'static str,
    /// The real matrices or matrix class this generator stands in for.
    pub stands_for: &'static str,
    /// Structure, values and non-zero count, in one or two sentences.
    pub description: &'static str,
}

const CATALOGUE: &[GenInfo] = &[
    GenInfo {
        name: "lap3d7",
        args: "N",
        default_spec: "gen:lap3d7:160",
        stands_for: "atmosmodd, CFD stencils",
        description: "3D 7-point Laplacian on an N x N x N grid, x fastest: N^3 rows, \
                      7N^3 - 6N^2 non-zeros; 6 on the diagonal, -1 for each face neighbour.",
    },
    GenInfo {
        name: "stencil27",
        args: "N",
        default_spec: "gen:stencil27:100",
        stands_for: "FEM on hexahedra",
        description: "3D 27-point stencil on an N x N x N grid: N^3 rows, (3N-2)^3 non-zeros; \
                      26 on the diagonal, -1 off it.",
    },
    GenInfo {
        name: "elasticity",
        args: "N",
        default_spec: "gen:elasticity:48",
        stands_for: "cant, consph, pwtk, shipsec1",
        description: "Elasticity-like matrix on an N^3-node hexahedral mesh, 3 unknowns per \
                      node: a 3x3 block for every pair of nodes sharing an element (up to 81 \
                      per row); 3N^3 rows, 9(3N-2)^3 non-zeros. Symmetric and strictly \
                      diagonally dominant (so SPD); fixed values.",
    },
    GenInfo {
        name: "dense",
        args: "R,C",
        default_spec: "gen:dense:2000,2000",
        stands_for: "dense2",
        description: "Dense R x C matrix stored as sparse: R*C non-zeros, random values.",
    },
    GenInfo {
        name: "powerlaw",
        args: "LOG2ROWS,AVG,SEED",
        default_spec: "gen:powerlaw:20,16,1",
        stands_for: "webbase-1M, in-2004, eu-2005",
        description: "R-MAT graph (a, b, c, d = 0.57, 0.19, 0.19, 0.05), square with \
                      2^LOG2ROWS rows and exactly 2^LOG2ROWS*AVG distinct non-zeros (repeated \
                      draws are merged and more are drawn until that many are distinct); \
                      vertices relabelled by a seeded bijection, so hubs are scattered. About \
                      half the rows are empty at the default size. AVG <= 2^LOG2ROWS/8.",
    },
    GenInfo {
        name: "uniform",
        args: "ROWS,PERROW,SEED",
        default_spec: "gen:uniform:1000000,16,1",
        stands_for: "unstructured worst case for x reuse",
        description: "Square; every row has exactly PERROW distinct uniformly random columns.",
    },
    GenInfo {
        name: "lp",
        args: "ROWS,COLS,PERROW,SEED",
        default_spec: "gen:lp:4284,1092610,2600,1",
        stands_for: "rail4284",
        description: "Wide LP-like ROWS x COLS matrix with exactly ROWS*PERROW non-zeros; row \
                      lengths spread over about PERROW/2 to 3*PERROW/2; distinct uniformly \
                      random columns.",
    },
    GenInfo {
        name: "circuit",
        args: "ROWS,PERROW,LONGROWS,LONGLEN,SEED",
        default_spec: "gen:circuit:1000000,5,4,100000,1",
        stands_for: "dc1, scircuit, rajat",
        description: "Square; every row holds its diagonal plus distinct random off-diagonal \
                      columns, PERROW in all, except LONGROWS randomly chosen rows with LONGLEN; \
                      (ROWS-LONGROWS)*PERROW + LONGROWS*LONGLEN non-zeros.",
    },
    GenInfo {
        name: "grid2d",
        args: "N",
        default_spec: "gen:grid2d:725",
        stands_for: "mc2depi (epidemiology)",
        description: "N x N grid with 4 non-zeros per row: the 5-point stencil without the \
                      west neighbour (south, self, east, north), so the pattern is not \
                      symmetric; N^2 rows, 4N^2 - 3N non-zeros; 4 on the diagonal, -1 off it.",
    },
    GenInfo {
        name: "emptyrows",
        args: "ROWS,AVG,SEED",
        default_spec: "gen:emptyrows:1000000,16,1",
        stands_for: "graph matrices with isolated vertices",
        description: "Square; floor(ROWS/2) randomly chosen rows are empty, the others have \
                      power-law lengths (Pareto, tail index 2, at least 1) with exactly \
                      ROWS*AVG non-zeros in all; distinct random columns.",
    },
    GenInfo {
        name: "random",
        args: "ROWS,COLS,DENSITY_OR_PERROW,SEED",
        default_spec: "gen:random:1000,1000,0.01,1",
        stands_for: "tests: small general random matrices",
        description: "An integer third argument (digits only) gives exactly that many distinct \
                      random columns per row; a decimal in [0, 1] (e.g. 0.05, 1.0) is a \
                      density: each entry is present with that probability, independently \
                      (time grows with ROWS*COLS, which must stay <= 2^31-1).",
    },
    GenInfo {
        name: "onerow",
        args: "ROWS,COLS,LONGROW_LEN",
        default_spec: "gen:onerow:1000,1000,1000",
        stands_for: "tests: one very long row among short ones",
        description: "Row ROWS/2 has LONGROW_LEN distinct random columns; every other row r \
                      has 1 + (r mod 3) (at most COLS). Fixed seed.",
    },
    GenInfo {
        name: "empty",
        args: "ROWS,COLS",
        default_spec: "gen:empty:100,100",
        stands_for: "tests: a matrix without entries",
        description: "ROWS x COLS with no non-zeros: every row empty.",
    },
    GenInfo {
        name: "diag",
        args: "N",
        default_spec: "gen:diag:1000",
        stands_for: "tests: the simplest non-empty pattern",
        description: "N x N diagonal with a_ii = 1 + (i mod 10).",
    },
];

/// Every generator, in the order `--help` prints them (the benchmark suite first).
pub fn catalogue() -> &'static [GenInfo] {
    CATALOGUE
}

/// Generates the matrix a spec `gen:NAME:ARGS` names (see [`catalogue`]).
///
/// Errors (`InvalidValue`, naming the spec): not starting with `gen:`, unknown NAME, an
/// argument that is not a non-negative integer, too many arguments, arguments that contradict
/// each other (e.g. more entries per row than columns), or rows, columns or non-zeros above
/// 2^31-1.
pub fn generate(spec: &str) -> Result<Csr<f64>> {
    plan(spec)?.build()
}

/// A generator with its arguments checked and its sizes known, before anything is allocated.
#[derive(Debug, Clone, PartialEq)]
struct Plan {
    rows: usize,
    cols: usize,
    /// Exact non-zero count where it is known in advance (all but `random`'s density form).
    nnz: Option<usize>,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Lap3d7 {
        n: usize,
    },
    Stencil27 {
        n: usize,
    },
    Elasticity {
        n: usize,
    },
    Dense,
    PowerLaw {
        scale: u32,
        seed: u64,
    },
    Uniform {
        perrow: usize,
        seed: u64,
    },
    Lp {
        seed: u64,
    },
    Circuit {
        perrow: usize,
        longrows: usize,
        longlen: usize,
        seed: u64,
    },
    Grid2d {
        n: usize,
    },
    EmptyRows {
        seed: u64,
    },
    RandomPerRow {
        perrow: usize,
        seed: u64,
    },
    RandomDensity {
        density: f64,
        seed: u64,
    },
    OneRow {
        len: usize,
    },
    Empty,
    Diag,
}

/// A spec's arguments with their defaults.
struct Args<'a> {
    spec: &'a str,
    info: &'static GenInfo,
    given: Vec<&'a str>,
    defaults: Vec<&'static str>,
}

impl Args<'_> {
    fn err(&self, what: String) -> Error {
        Error::InvalidValue(format!("generator spec '{}': {what}", self.spec))
    }

    fn name(&self, i: usize) -> &'static str {
        self.info.args.split(',').nth(i).unwrap_or("?")
    }

    /// The text of argument `i`: the caller's, else the default.
    fn text(&self, i: usize) -> &str {
        match self.given.get(i) {
            Some(t) if !t.is_empty() => t,
            _ => self.defaults[i],
        }
    }

    fn uint(&self, i: usize) -> Result<u64> {
        let t = self.text(i);
        if !t.bytes().all(|b| b.is_ascii_digit()) || t.is_empty() {
            return Err(self.err(format!(
                "{} = '{t}' is not a non-negative integer",
                self.name(i)
            )));
        }
        t.parse::<u64>()
            .map_err(|_| self.err(format!("{} = '{t}' is too large", self.name(i))))
    }

    /// A size (rows, columns, non-zeros, entries per row), at most 2^31-1.
    fn fit(&self, what: &str, v: Option<u128>) -> Result<usize> {
        match v {
            Some(v) if v <= MAX_DIM as u128 => Ok(v as usize),
            Some(v) => Err(self.err(format!(
                "{what} = {v} exceeds 2^31-1 = {MAX_DIM}, the largest tessera supports"
            ))),
            None => Err(self.err(format!(
                "{what} overflows: it exceeds 2^31-1 = {MAX_DIM}, the largest tessera supports"
            ))),
        }
    }

    fn size(&self, i: usize) -> Result<usize> {
        let v = self.uint(i)?;
        self.fit(self.name(i), Some(u128::from(v)))
    }
}

fn mul(a: &[usize]) -> Option<u128> {
    a.iter().try_fold(1u128, |p, &x| p.checked_mul(x as u128))
}

fn plan(spec: &str) -> Result<Plan> {
    let known = || {
        CATALOGUE
            .iter()
            .map(|g| g.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(rest) = spec.trim().strip_prefix("gen:") else {
        return Err(Error::InvalidValue(format!(
            "generator spec '{spec}' does not start with 'gen:' (the form is gen:NAME:ARGS, \
             NAME one of {})",
            known()
        )));
    };
    let (name, argtext) = rest.split_once(':').unwrap_or((rest, ""));
    let name = name.trim();
    let Some(info) = CATALOGUE.iter().find(|g| g.name == name) else {
        return Err(Error::InvalidValue(format!(
            "generator spec '{spec}': unknown generator '{name}'; known: {}",
            known()
        )));
    };
    let defaults: Vec<&'static str> = info
        .default_spec
        .rsplit(':')
        .next()
        .unwrap_or("")
        .split(',')
        .collect();
    let given: Vec<&str> = if argtext.trim().is_empty() {
        Vec::new()
    } else {
        argtext.split(',').map(str::trim).collect()
    };
    let a = Args {
        spec,
        info,
        given,
        defaults,
    };
    if a.given.len() > a.defaults.len() {
        return Err(a.err(format!(
            "{} arguments given but {name} takes at most {} ({})",
            a.given.len(),
            a.defaults.len(),
            info.args
        )));
    }

    let p = |rows, cols, nnz, kind| {
        Ok(Plan {
            rows,
            cols,
            nnz: Some(nnz),
            kind,
        })
    };
    match name {
        "lap3d7" | "stencil27" | "elasticity" => {
            let n = a.size(0)?;
            let nodes = a.fit("rows", mul(&[n, n, n]))?;
            let m = (3 * n).saturating_sub(2);
            match name {
                "lap3d7" => {
                    let nnz = (7 * n as u128 * n as u128 * n as u128)
                        .saturating_sub(6 * n as u128 * n as u128);
                    let nnz = a.fit("non-zeros", Some(nnz))?;
                    p(nodes, nodes, nnz, Kind::Lap3d7 { n })
                }
                "stencil27" => {
                    let nnz = a.fit("non-zeros", mul(&[m, m, m]))?;
                    p(nodes, nodes, nnz, Kind::Stencil27 { n })
                }
                _ => {
                    let rows = a.fit("rows", mul(&[3, n, n, n]))?;
                    let nnz = a.fit("non-zeros", mul(&[9, m, m, m]))?;
                    p(rows, rows, nnz, Kind::Elasticity { n })
                }
            }
        }
        "dense" => {
            let (r, c) = (a.size(0)?, a.size(1)?);
            let nnz = a.fit("non-zeros", mul(&[r, c]))?;
            p(r, c, nnz, Kind::Dense)
        }
        "powerlaw" => {
            let scale = a.uint(0)?;
            if scale > 30 {
                return Err(a.err(format!(
                    "LOG2ROWS = {scale}: 2^{scale} rows exceed 2^31-1, the largest tessera \
                     supports"
                )));
            }
            let rows = 1usize << scale;
            let avg = a.size(1)?;
            let nnz = a.fit("non-zeros", mul(&[rows, avg]))?;
            if avg > 0 && avg * 8 > rows {
                return Err(a.err(format!(
                    "AVG = {avg} is more than 2^LOG2ROWS/8 = {}: an R-MAT matrix that full \
                     takes very long to fill with distinct entries",
                    rows / 8
                )));
            }
            let seed = a.uint(2)?;
            p(
                rows,
                rows,
                nnz,
                Kind::PowerLaw {
                    scale: scale as u32,
                    seed,
                },
            )
        }
        "uniform" => {
            let rows = a.size(0)?;
            let perrow = a.size(1)?;
            if perrow > rows {
                return Err(a.err(format!(
                    "PERROW = {perrow} distinct columns cannot fit in {rows} columns"
                )));
            }
            let nnz = a.fit("non-zeros", mul(&[rows, perrow]))?;
            p(
                rows,
                rows,
                nnz,
                Kind::Uniform {
                    perrow,
                    seed: a.uint(2)?,
                },
            )
        }
        "lp" => {
            let (rows, cols, perrow) = (a.size(0)?, a.size(1)?, a.size(2)?);
            if perrow > cols {
                return Err(a.err(format!(
                    "PERROW = {perrow} distinct columns cannot fit in COLS = {cols}"
                )));
            }
            let nnz = a.fit("non-zeros", mul(&[rows, perrow]))?;
            p(rows, cols, nnz, Kind::Lp { seed: a.uint(3)? })
        }
        "circuit" => {
            let (rows, perrow, longrows, longlen) =
                (a.size(0)?, a.size(1)?, a.size(2)?, a.size(3)?);
            if longrows > rows {
                return Err(a.err(format!("LONGROWS = {longrows} exceeds ROWS = {rows}")));
            }
            for (what, len) in [("PERROW", perrow), ("LONGLEN", longlen)] {
                if rows > 0 && (len == 0 || len > rows) {
                    return Err(a.err(format!(
                        "{what} = {len} must be between 1 (the diagonal is always present) \
                         and ROWS = {rows}"
                    )));
                }
            }
            let nnz =
                (rows - longrows) as u128 * perrow as u128 + longrows as u128 * longlen as u128;
            let nnz = a.fit("non-zeros", Some(nnz))?;
            let seed = a.uint(4)?;
            let kind = Kind::Circuit {
                perrow,
                longrows,
                longlen,
                seed,
            };
            p(rows, rows, nnz, kind)
        }
        "grid2d" => {
            let n = a.size(0)?;
            let rows = a.fit("rows", mul(&[n, n]))?;
            let nnz = (4 * n as u128 * n as u128).saturating_sub(3 * n as u128);
            let nnz = a.fit("non-zeros", Some(nnz))?;
            p(rows, rows, nnz, Kind::Grid2d { n })
        }
        "emptyrows" => {
            let rows = a.size(0)?;
            let avg = a.size(1)?;
            let nnz = a.fit("non-zeros", mul(&[rows, avg]))?;
            let full = rows - rows / 2;
            if rows > 0 && avg == 0 {
                return Err(
                    a.err("AVG = 0 leaves no entries for the rows that must not be empty".into())
                );
            }
            if nnz as u128 > full as u128 * rows as u128 {
                return Err(a.err(format!(
                    "AVG = {avg}: {nnz} non-zeros cannot fit in {full} non-empty rows of \
                     {rows} columns"
                )));
            }
            p(rows, rows, nnz, Kind::EmptyRows { seed: a.uint(2)? })
        }
        "random" => {
            let (rows, cols) = (a.size(0)?, a.size(1)?);
            let seed = a.uint(3)?;
            let t = a.text(2);
            if t.bytes().all(|b| b.is_ascii_digit()) {
                let perrow = a.size(2)?;
                if perrow > cols {
                    return Err(a.err(format!(
                        "{perrow} distinct columns per row cannot fit in COLS = {cols}"
                    )));
                }
                let nnz = a.fit("non-zeros", mul(&[rows, perrow]))?;
                p(rows, cols, nnz, Kind::RandomPerRow { perrow, seed })
            } else {
                let density = match t.parse::<f64>() {
                    Ok(d) if (0.0..=1.0).contains(&d) => d,
                    _ => {
                        return Err(a.err(format!(
                            "DENSITY_OR_PERROW = '{t}' is neither a count of entries per row \
                             (digits only) nor a density between 0 and 1"
                        )))
                    }
                };
                a.fit(
                    "ROWS*COLS (the density form visits every entry)",
                    mul(&[rows, cols]),
                )?;
                Ok(Plan {
                    rows,
                    cols,
                    nnz: None,
                    kind: Kind::RandomDensity { density, seed },
                })
            }
        }
        "onerow" => {
            let (rows, cols, len) = (a.size(0)?, a.size(1)?, a.size(2)?);
            if rows == 0 {
                return Err(a.err("ROWS = 0 leaves no row to make long".into()));
            }
            if len > cols {
                return Err(a.err(format!(
                    "LONGROW_LEN = {len} distinct columns cannot fit in COLS = {cols}"
                )));
            }
            let short: u128 = (0..rows)
                .filter(|&r| r != rows / 2)
                .map(|r| (1 + r % 3).min(cols) as u128)
                .sum();
            let nnz = a.fit("non-zeros", Some(short + len as u128))?;
            p(rows, cols, nnz, Kind::OneRow { len })
        }
        "empty" => p(a.size(0)?, a.size(1)?, 0, Kind::Empty),
        "diag" => {
            let n = a.size(0)?;
            p(n, n, n, Kind::Diag)
        }
        _ => Err(a.err(format!("generator '{name}' is listed but not implemented"))),
    }
}

/// The random stream: ChaCha8 keyed by (seed, generator), one stream per purpose.
struct Stream(ChaCha8Rng);

/// Which use a stream serves; separate streams keep structure and values independent.
const STRUCTURE: u64 = 0;
const VALUES: u64 = 1;
const PERMUTATION: u64 = 2;
const CHOICE: u64 = 3;

impl Stream {
    fn new(generator: &str, seed: u64, purpose: u64) -> Self {
        // FNV-1a of the generator's name: fixed, so each generator has its own key space.
        let tag = generator.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        key[8..16].copy_from_slice(&tag.to_le_bytes());
        let mut rng = ChaCha8Rng::from_seed(key);
        rng.set_stream(purpose);
        Stream(rng)
    }

    #[inline]
    fn u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (n <= 2^32; bias below 2^-32).
    #[inline]
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    fn unit(&mut self) -> f64 {
        (self.u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A value with magnitude uniform in [0.1, 1) and a random sign.
    #[inline]
    fn value(&mut self) -> f64 {
        let x = self.u64();
        let m = 0.1 + 0.9 * ((x >> 11) as f64 * (1.0 / (1u64 << 53) as f64));
        // The top few draws would round up to 1.0: keep them below it.
        let m = m.min(1.0 - f64::EPSILON / 2.0);
        if x & 1 == 1 {
            -m
        } else {
            m
        }
    }
}

/// Appends `k` distinct values of `0..n` to `out`, in increasing order. `buf` is scratch.
fn sample_sorted(s: &mut Stream, k: usize, n: usize, out: &mut Vec<i32>, buf: &mut Vec<i32>) {
    debug_assert!(k <= n);
    if k == 0 {
        return;
    }
    if k.saturating_mul(4) >= n {
        // Selection sampling (Knuth's algorithm S): one draw per candidate, already sorted.
        let mut need = k;
        for c in 0..n {
            if s.below(n - c) < need {
                out.push(c as i32);
                need -= 1;
                if need == 0 {
                    break;
                }
            }
        }
    } else {
        // Sparse: draw, sort, drop repeats, draw the shortfall again.
        buf.clear();
        while buf.len() < k {
            for _ in buf.len()..k {
                buf.push(s.below(n) as i32);
            }
            buf.sort_unstable();
            buf.dedup();
        }
        out.extend_from_slice(buf);
    }
}

/// Splits `total` into one length per weight, proportional to the weights (largest remainder),
/// none above `cap`; the lengths add up to exactly `total` (which must be <= len * cap).
fn distribute(total: usize, weights: &[f64], cap: usize) -> Vec<usize> {
    let n = weights.len();
    debug_assert!(total as u128 <= n as u128 * cap as u128);
    if n == 0 {
        return Vec::new();
    }
    let sum: f64 = weights.iter().sum();
    let mut len = Vec::with_capacity(n);
    let mut frac = Vec::with_capacity(n);
    let mut given = 0usize;
    for (i, &w) in weights.iter().enumerate() {
        let ideal = total as f64 * (w / sum);
        let base = (ideal.floor() as usize).min(cap);
        len.push(base);
        frac.push((ideal - base as f64, i));
        given += base;
    }
    // Rounding can in principle overshoot by a unit; take it back from the longest rows.
    while given > total {
        let i = (0..n)
            .max_by_key(|&i| (len[i], std::cmp::Reverse(i)))
            .unwrap_or(0);
        len[i] -= 1;
        given -= 1;
    }
    frac.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut left = total - given;
    while left > 0 {
        for &(_, i) in &frac {
            if left == 0 {
                break;
            }
            if len[i] < cap {
                len[i] += 1;
                left -= 1;
            }
        }
    }
    len
}

/// CSR arrays being filled row by row.
struct Build {
    rows: usize,
    cols: usize,
    row_ptr: Vec<i32>,
    col: Vec<i32>,
    val: Vec<f64>,
}

impl Build {
    fn new(rows: usize, cols: usize, nnz: usize) -> Self {
        let mut row_ptr = Vec::with_capacity(rows + 1);
        row_ptr.push(0);
        Build {
            rows,
            cols,
            row_ptr,
            col: Vec::with_capacity(nnz),
            val: Vec::with_capacity(nnz),
        }
    }

    #[inline]
    fn push(&mut self, c: usize, v: f64) {
        self.col.push(c as i32);
        self.val.push(v);
    }

    #[inline]
    fn end_row(&mut self) {
        self.row_ptr.push(self.col.len() as i32);
    }

    /// Fills every value from the stream, in CSR order (for structure-only builds).
    fn random_values(&mut self, s: &mut Stream) {
        self.val.clear();
        self.val.extend((0..self.col.len()).map(|_| s.value()));
    }

    fn finish(self) -> Result<Csr<f64>> {
        debug_assert_eq!(self.row_ptr.len(), self.rows + 1);
        debug_assert!((0..self.rows).all(|r| {
            let row = &self.col[self.row_ptr[r] as usize..self.row_ptr[r + 1] as usize];
            row.windows(2).all(|w| w[0] < w[1])
        }));
        Csr::from_parts(CsrParts {
            rows: self.rows as i64,
            cols: self.cols as i64,
            nnz: self.col.len() as i64,
            row_ptr: Indices::I32(&self.row_ptr),
            col_ind: Indices::I32(&self.col),
            values: &self.val,
            base: IndexBase::Zero,
        })
    }
}

impl Plan {
    fn build(&self) -> Result<Csr<f64>> {
        let (rows, cols) = (self.rows, self.cols);
        let mut b = Build::new(rows, cols, self.nnz.unwrap_or(0));
        match self.kind {
            Kind::Lap3d7 { n } => {
                let (s1, s2) = (n, n * n);
                for z in 0..n {
                    for y in 0..n {
                        for x in 0..n {
                            let i = x + s1 * y + s2 * z;
                            if z > 0 {
                                b.push(i - s2, -1.0);
                            }
                            if y > 0 {
                                b.push(i - s1, -1.0);
                            }
                            if x > 0 {
                                b.push(i - 1, -1.0);
                            }
                            b.push(i, 6.0);
                            if x + 1 < n {
                                b.push(i + 1, -1.0);
                            }
                            if y + 1 < n {
                                b.push(i + s1, -1.0);
                            }
                            if z + 1 < n {
                                b.push(i + s2, -1.0);
                            }
                            b.end_row();
                        }
                    }
                }
            }
            Kind::Stencil27 { n } => {
                for_each_node(n, |i, nb| {
                    for &(j, _) in nb {
                        b.push(j, if j == i { 26.0 } else { -1.0 });
                    }
                    b.end_row();
                });
            }
            Kind::Elasticity { n } => elasticity(n, &mut b),
            Kind::Dense => {
                let mut s = Stream::new("dense", 1, VALUES);
                for _ in 0..rows {
                    for c in 0..cols {
                        b.push(c, s.value());
                    }
                    b.end_row();
                }
            }
            Kind::PowerLaw { scale, seed } => {
                power_law(scale, self.nnz.unwrap_or(0), seed, &mut b);
                b.random_values(&mut Stream::new("powerlaw", seed, VALUES));
            }
            Kind::Uniform { perrow, seed } => {
                let mut s = Stream::new("uniform", seed, STRUCTURE);
                let mut buf = Vec::new();
                for _ in 0..rows {
                    sample_sorted(&mut s, perrow, cols, &mut b.col, &mut buf);
                    b.end_row();
                }
                b.random_values(&mut Stream::new("uniform", seed, VALUES));
            }
            Kind::Lp { seed } => {
                let mut s = Stream::new("lp", seed, STRUCTURE);
                let weights: Vec<f64> = (0..rows).map(|_| 0.5 + s.unit()).collect();
                let lens = distribute(self.nnz.unwrap_or(0), &weights, cols);
                let mut buf = Vec::new();
                for &len in &lens {
                    sample_sorted(&mut s, len, cols, &mut b.col, &mut buf);
                    b.end_row();
                }
                b.random_values(&mut Stream::new("lp", seed, VALUES));
            }
            Kind::Circuit {
                perrow,
                longrows,
                longlen,
                seed,
            } => {
                let mut pick = Stream::new("circuit", seed, CHOICE);
                let (mut long, mut buf) = (Vec::new(), Vec::new());
                sample_sorted(&mut pick, longrows, rows, &mut long, &mut buf);
                let mut s = Stream::new("circuit", seed, STRUCTURE);
                let mut off = Vec::new();
                let mut next_long = long.iter().peekable();
                for r in 0..rows {
                    let len = if next_long.peek() == Some(&&(r as i32)) {
                        next_long.next();
                        longlen
                    } else {
                        perrow
                    };
                    off.clear();
                    sample_sorted(&mut s, len - 1, rows - 1, &mut off, &mut buf);
                    let split = off.partition_point(|&c| (c as usize) < r);
                    b.col.extend_from_slice(&off[..split]);
                    b.col.push(r as i32);
                    b.col.extend(off[split..].iter().map(|&c| c + 1));
                    b.end_row();
                }
                b.random_values(&mut Stream::new("circuit", seed, VALUES));
            }
            Kind::Grid2d { n } => {
                for y in 0..n {
                    for x in 0..n {
                        let i = x + n * y;
                        if y > 0 {
                            b.push(i - n, -1.0);
                        }
                        b.push(i, 4.0);
                        if x + 1 < n {
                            b.push(i + 1, -1.0);
                        }
                        if y + 1 < n {
                            b.push(i + n, -1.0);
                        }
                        b.end_row();
                    }
                }
            }
            Kind::EmptyRows { seed } => {
                let total = self.nnz.unwrap_or(0);
                let mut pick = Stream::new("emptyrows", seed, CHOICE);
                let (mut full, mut buf) = (Vec::new(), Vec::new());
                sample_sorted(&mut pick, rows - rows / 2, rows, &mut full, &mut buf);
                let mut s = Stream::new("emptyrows", seed, STRUCTURE);
                // Pareto with tail index 2: w = u^(-1/2), u in (0, 1].
                let weights: Vec<f64> = full
                    .iter()
                    .map(|_| 1.0 / (((s.u64() >> 11) + 1) as f64 / (1u64 << 53) as f64).sqrt())
                    .collect();
                let extra = distribute(total - full.len(), &weights, cols.saturating_sub(1));
                let mut k = 0;
                for r in 0..rows {
                    if full.get(k) == Some(&(r as i32)) {
                        sample_sorted(&mut s, 1 + extra[k], cols, &mut b.col, &mut buf);
                        k += 1;
                    }
                    b.end_row();
                }
                b.random_values(&mut Stream::new("emptyrows", seed, VALUES));
            }
            Kind::RandomPerRow { perrow, seed } => {
                let mut s = Stream::new("random", seed, STRUCTURE);
                let mut buf = Vec::new();
                for _ in 0..rows {
                    sample_sorted(&mut s, perrow, cols, &mut b.col, &mut buf);
                    b.end_row();
                }
                b.random_values(&mut Stream::new("random", seed, VALUES));
            }
            Kind::RandomDensity { density, seed } => {
                let mut s = Stream::new("random", seed, STRUCTURE);
                // 32 random bits per entry, two entries per draw.
                let threshold = (density * 4_294_967_296.0) as u64;
                for _ in 0..rows {
                    let mut c = 0;
                    while c < cols {
                        let x = s.u64();
                        if (x & 0xffff_ffff) < threshold {
                            b.col.push(c as i32);
                        }
                        if c + 1 < cols && (x >> 32) < threshold {
                            b.col.push(c as i32 + 1);
                        }
                        c += 2;
                    }
                    b.end_row();
                }
                b.random_values(&mut Stream::new("random", seed, VALUES));
            }
            Kind::OneRow { len } => {
                let mut s = Stream::new("onerow", 1, STRUCTURE);
                let mut buf = Vec::new();
                for r in 0..rows {
                    let k = if r == rows / 2 {
                        len
                    } else {
                        (1 + r % 3).min(cols)
                    };
                    sample_sorted(&mut s, k, cols, &mut b.col, &mut buf);
                    b.end_row();
                }
                b.random_values(&mut Stream::new("onerow", 1, VALUES));
            }
            Kind::Empty => {
                b.row_ptr.resize(rows + 1, 0);
            }
            Kind::Diag => {
                for i in 0..rows {
                    b.push(i, (1 + i % 10) as f64);
                    b.end_row();
                }
            }
        }
        if let Some(nnz) = self.nnz {
            debug_assert_eq!(b.col.len(), nnz, "{:?}", self.kind);
        }
        b.finish()
    }
}

/// Calls `f(node, neighbours)` for every node of an n^3 grid in order; `neighbours` lists the
/// (node, offset) pairs within one step in every coordinate (the node itself included), in
/// increasing node order.
fn for_each_node(n: usize, mut f: impl FnMut(usize, &[(usize, [i8; 3])])) {
    let mut nb: Vec<(usize, [i8; 3])> = Vec::with_capacity(27);
    let (s1, s2) = (n, n * n);
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                nb.clear();
                for dz in -1i8..=1 {
                    for dy in -1i8..=1 {
                        for dx in -1i8..=1 {
                            let (xx, yy, zz) = (
                                x as isize + dx as isize,
                                y as isize + dy as isize,
                                z as isize + dz as isize,
                            );
                            let inside = |v: isize| v >= 0 && (v as usize) < n;
                            if inside(xx) && inside(yy) && inside(zz) {
                                let j = xx as usize + s1 * yy as usize + s2 * zz as usize;
                                nb.push((j, [dx, dy, dz]));
                            }
                        }
                    }
                }
                f(x + s1 * y + s2 * z, &nb);
            }
        }
    }
}

/// The elasticity-like matrix: for nodes i != j sharing an element, with d = pos(j) - pos(i),
/// block K_ab(d) = -(1 + [a == b] + d_a d_b / 4) / |d|^2, which equals K_ba(-d), so the matrix
/// is symmetric. The diagonal block has 0.1 off its diagonal and, on it, 1 + the sum of the
/// magnitudes of the row's other entries: strictly diagonally dominant.
fn elasticity(n: usize, b: &mut Build) {
    for_each_node(n, |i, nb| {
        for a in 0..3 {
            let start = b.col.len();
            let mut diag_at = 0;
            let mut off_sum = 0.0;
            for &(j, d) in nb {
                for bb in 0..3 {
                    let v = if j == i {
                        if a == bb {
                            diag_at = b.col.len();
                            0.0
                        } else {
                            0.1
                        }
                    } else {
                        let d2 = d.iter().map(|&x| i32::from(x) * i32::from(x)).sum::<i32>();
                        let same = if a == bb { 1.0 } else { 0.0 };
                        let dd = f64::from(i32::from(d[a]) * i32::from(d[bb]));
                        -(1.0 + same + 0.25 * dd) / f64::from(d2)
                    };
                    off_sum += v.abs();
                    b.push(3 * j + bb, v);
                }
            }
            debug_assert!(b.col.len() > start);
            b.val[diag_at] = 1.0 + off_sum;
            b.end_row();
        }
    });
}

/// R-MAT edges, relabelled by a random permutation, until `nnz` distinct ones are drawn: the
/// sorted CSR structure goes into `b` (values are filled by the caller).
///
/// Rounds: draw as many edges as are still missing, sort them, drop repeats and those already
/// held, merge; stop when `nnz` are distinct (at the default size about 4% of draws repeat and
/// it takes a handful of rounds). Draws come in blocks of [`RMAT_BLOCK`], each from its own
/// ChaCha stream (round, block), so the blocks can be drawn on several threads and the result
/// does not depend on how many there are. Sorting beats a hash set here: one set lookup per
/// draw misses the cache and the TLB every time.
fn power_law(scale: u32, nnz: usize, seed: u64, b: &mut Build) {
    let n = 1usize << scale;
    let relabel = &Relabel::new(&mut Stream::new("powerlaw", seed, PERMUTATION), scale);
    // Keys are row << scale | col: sorted keys are CSR order. `held` is the first round's
    // distinct keys, `extra` those of later rounds (few), both sorted; merged once at the end.
    let (mut held, mut extra, mut fresh, mut tmp): (Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut round = 0u64;
    while held.len() + extra.len() < nnz {
        fresh.clear();
        fresh.resize(nnz - held.len() - extra.len(), 0);
        let blocks: Vec<(usize, &mut [u64])> = fresh.chunks_mut(RMAT_BLOCK).enumerate().collect();
        par_for_each(blocks, |(block, out)| {
            let stream = (1 << 40) | (round << 32) | block as u64;
            rmat_draws(
                &mut Stream::new("powerlaw", seed, stream),
                scale,
                relabel,
                out,
            );
        });
        sort_keys(&mut fresh, &mut tmp, 2 * scale);
        fresh.dedup();
        if round == 0 {
            std::mem::swap(&mut held, &mut fresh);
        } else {
            let (mut i, mut j) = (0, 0);
            fresh.retain(|&k| {
                i = gallop(&held, i, k);
                j = gallop(&extra, j, k);
                held.get(i) != Some(&k) && extra.get(j) != Some(&k)
            });
            extra = merge_sorted(&extra, &fresh);
        }
        round += 1;
    }
    let held = merge_sorted(&held, &extra);
    drop((extra, fresh, tmp));
    let mask = (1u64 << scale) - 1;
    b.row_ptr.clear();
    b.row_ptr.push(0);
    b.col.clear();
    let mut row = 0;
    for &k in &held {
        while (k >> scale) as usize > row {
            b.row_ptr.push(b.col.len() as i32);
            row += 1;
        }
        b.col.push((k & mask) as i32);
    }
    b.row_ptr.resize(n + 1, b.col.len() as i32);
}

/// The union of two sorted vectors without common elements, sorted.
fn merge_sorted(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut i = 0;
    for &x in b {
        let k = gallop(a, i, x);
        out.extend_from_slice(&a[i..k]);
        out.push(x);
        i = k;
    }
    out.extend_from_slice(&a[i..]);
    out
}

/// The first index `>= from` whose element is `>= x` in sorted `a` (`a.len()` if none), found
/// by doubling steps from `from`: cheap when the answer is near.
fn gallop(a: &[u64], from: usize, x: u64) -> usize {
    let mut step = 1;
    let mut lo = from;
    while lo + step < a.len() && a[lo + step] < x {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step + 1).min(a.len());
    lo + a[lo..hi].partition_point(|&y| y < x)
}

/// Draws per R-MAT block (each block has its own stream).
const RMAT_BLOCK: usize = 1 << 16;

/// A seeded bijection of `0..2^scale`: three rounds of multiply by an odd number, add, mask,
/// xor-shift (each step is invertible modulo 2^scale). It scatters R-MAT's hubs, which would
/// otherwise all sit at low indices, without a table lookup per draw (a 4 MB permutation
/// table missed the cache on every lookup and took half the generation time).
struct Relabel {
    mask: u64,
    half: u32,
    mul: [u64; 3],
    add: [u64; 3],
}

impl Relabel {
    fn new(s: &mut Stream, scale: u32) -> Self {
        let mut r = Relabel {
            mask: (1u64 << scale) - 1,
            half: scale.div_ceil(2).max(1),
            mul: [0; 3],
            add: [0; 3],
        };
        for k in 0..3 {
            r.mul[k] = s.u64() | 1;
            r.add[k] = s.u64();
        }
        r
    }

    #[inline]
    fn apply(&self, x: u64) -> u64 {
        let mut x = x;
        for k in 0..3 {
            x = x.wrapping_mul(self.mul[k]).wrapping_add(self.add[k]) & self.mask;
            x ^= x >> self.half;
        }
        x
    }
}

/// Fills `out` with R-MAT edges as relabelled keys `label(row) << scale | label(col)`.
fn rmat_draws(s: &mut Stream, scale: u32, relabel: &Relabel, out: &mut [u64]) {
    // Probabilities in 1/65536ths; one 16-bit slice of a draw per level.
    const A: u64 = 37355; // 0.57
    const AB: u64 = A + 12452; // + 0.19
    const ABC: u64 = AB + 12452; // + 0.19; d = 0.05 is the rest
    for o in out {
        let (mut r, mut c) = (0u64, 0u64);
        let mut bits = 0u64;
        for level in 0..scale {
            if level % 4 == 0 {
                bits = s.u64();
            }
            let x = bits & 0xffff;
            bits >>= 16;
            // Branch-free quadrant: c and d set the row bit, b and d the column bit.
            let (ge_a, ge_ab, ge_abc) = (x >= A, x >= AB, x >= ABC);
            r |= u64::from(ge_ab) << level;
            c |= u64::from(ge_a ^ ge_ab ^ ge_abc) << level;
        }
        *o = (relabel.apply(r) << scale) | relabel.apply(c);
    }
}

/// Sorts keys of `bits` significant bits: one counting pass on the top 8 bits into `tmp`, then
/// the 256 buckets (in cache) on several threads.
fn sort_keys(v: &mut Vec<u64>, tmp: &mut Vec<u64>, bits: u32) {
    let shift = bits.saturating_sub(8);
    let mut count = [0usize; 257];
    for &x in v.iter() {
        count[(x >> shift) as usize + 1] += 1;
    }
    for d in 0..256 {
        count[d + 1] += count[d];
    }
    tmp.clear();
    tmp.resize(v.len(), 0);
    let mut next = count;
    for &x in v.iter() {
        let d = (x >> shift) as usize;
        tmp[next[d]] = x;
        next[d] += 1;
    }
    let mut buckets = Vec::with_capacity(256);
    let mut rest: &mut [u64] = tmp;
    for d in 0..256 {
        let (head, tail) = rest.split_at_mut(count[d + 1] - count[d]);
        buckets.push(head);
        rest = tail;
    }
    par_for_each(buckets, |b| b.sort_unstable());
    std::mem::swap(v, tmp);
}

/// Runs `f` on every item, spread over the machine's cores (at most 8). Items go to threads
/// round-robin; results must not depend on which thread runs what.
fn par_for_each<T: Send>(items: Vec<T>, f: impl Fn(T) + Sync) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(items.len());
    if threads <= 1 {
        items.into_iter().for_each(f);
        return;
    }
    let mut lists: Vec<Vec<T>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, item) in items.into_iter().enumerate() {
        lists[i % threads].push(item);
    }
    let f = &f;
    std::thread::scope(|scope| {
        for list in lists {
            scope.spawn(move || list.into_iter().for_each(f));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BENCHMARKING.md's suite sizes, checked without generating anything.
    #[test]
    fn default_specs_have_the_suite_sizes() {
        let dims = |spec: &str| {
            let p = plan(spec).unwrap();
            (p.rows, p.cols, p.nnz)
        };
        assert_eq!(dims("gen:lap3d7"), (4_096_000, 4_096_000, Some(28_518_400)));
        assert_eq!(
            dims("gen:stencil27"),
            (1_000_000, 1_000_000, Some(26_463_592))
        );
        assert_eq!(dims("gen:elasticity"), (331_776, 331_776, Some(25_769_592)));
        assert_eq!(dims("gen:dense"), (2000, 2000, Some(4_000_000)));
        assert_eq!(dims("gen:powerlaw"), (1 << 20, 1 << 20, Some(16 << 20)));
        assert_eq!(
            dims("gen:uniform"),
            (1_000_000, 1_000_000, Some(16_000_000))
        );
        assert_eq!(dims("gen:lp"), (4284, 1_092_610, Some(11_138_400)));
        assert_eq!(dims("gen:circuit"), (1_000_000, 1_000_000, Some(5_399_980)));
        assert_eq!(dims("gen:grid2d"), (525_625, 525_625, Some(2_100_325)));
        assert_eq!(
            dims("gen:emptyrows"),
            (1_000_000, 1_000_000, Some(16_000_000))
        );
        for g in catalogue() {
            let spelled = plan(g.default_spec).unwrap();
            let bare = plan(&format!("gen:{}", g.name)).unwrap();
            assert_eq!(spelled, bare, "{}", g.name);
            assert_eq!(g.args.split(',').count(), g.default_spec.split(',').count());
        }
    }

    #[test]
    fn distribute_is_exact_proportional_and_capped() {
        assert_eq!(distribute(10, &[1.0, 1.0, 2.0], 100), vec![3, 2, 5]);
        assert_eq!(distribute(12, &[1.0, 100.0, 1.0], 5), vec![4, 5, 3]);
        assert_eq!(distribute(15, &[1.0, 100.0, 1.0], 5), vec![5, 5, 5]);
        assert_eq!(distribute(0, &[1.0, 2.0], 5), vec![0, 0]);
    }

    #[test]
    fn gallop_and_merge_agree_with_the_obvious_versions() {
        let a: Vec<u64> = (0..200).map(|i| i * 3).collect();
        for from in [0, 5, 100, 199, 200] {
            for x in [0, 1, 3, 4, 299, 300, 597, 598, 1000] {
                let want = from + a[from..].partition_point(|&y| y < x);
                assert_eq!(gallop(&a, from, x), want, "from {from} x {x}");
            }
        }
        let b: Vec<u64> = vec![1, 2, 4, 700, 701];
        let mut want: Vec<u64> = a.iter().chain(&b).copied().collect();
        want.sort_unstable();
        assert_eq!(merge_sorted(&a, &b), want);
        assert_eq!(merge_sorted(&[], &b), b);
        assert_eq!(merge_sorted(&b, &[]), b);
    }

    #[test]
    fn relabelling_is_a_bijection() {
        for scale in [0, 1, 2, 5, 11] {
            let r = Relabel::new(&mut Stream::new("t", 1, 0), scale);
            let mut seen = vec![false; 1 << scale];
            for x in 0..1u64 << scale {
                let y = r.apply(x) as usize;
                assert!(!seen[y], "scale {scale}: {y} twice");
                seen[y] = true;
            }
        }
    }

    #[test]
    fn sampled_columns_are_distinct_sorted_and_in_range() {
        let mut s = Stream::new("t", 3, 0);
        let (mut out, mut buf) = (Vec::new(), Vec::new());
        for (k, n) in [
            (0, 5),
            (5, 5),
            (3, 100),
            (40, 100),
            (99, 100),
            (1000, 1 << 30),
        ] {
            out.clear();
            sample_sorted(&mut s, k, n, &mut out, &mut buf);
            assert_eq!(out.len(), k);
            assert!(out.windows(2).all(|w| w[0] < w[1]));
            assert!(out.iter().all(|&c| (c as usize) < n));
        }
    }
}
