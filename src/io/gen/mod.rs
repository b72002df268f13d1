//! Deterministic matrix generators: the benchmark suite (each generator's default spec is its
//! suite size) and small matrices for tests, named by a spec string `gen:NAME:ARGS`.
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
//!
//! Code layout: this file holds the catalogue, the spec parser and the two short dispatches
//! (arguments to a `Plan`, a plan to its builder); each generator's argument checks
//! (`plan_NAME`) sit next to its builder (`NAME`) in the file of its family:
//! - `mesh.rs`: grids with fixed values (`lap3d7`, `stencil27`, `elasticity`, `grid2d`);
//! - `sampled.rs`: rows of random distinct columns (`uniform`, `lp`, `circuit`, `emptyrows`,
//!   `random`, `onerow`);
//! - `rmat.rs`: the R-MAT graph (`powerlaw`);
//! - `basic.rs`: `dense`, `empty` and `diag`;
//! - `random.rs`: the random stream and the sampling helpers they share.
#![forbid(unsafe_code)]

mod basic;
mod mesh;
mod random;
mod rmat;
mod sampled;
#[cfg(test)]
mod tests;

use crate::csr::{Csr, CsrParts, Indices, MAX_DIM};
use crate::error::{Error, Result};
use crate::types::IndexBase;
use random::RandomStream;

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
        name: "band",
        args: "N,LOWER,UPPER",
        default_spec: "gen:band:3000,900,900",
        stands_for: "tests: a dense band (structured, about half dense at the default)",
        description: "N x N with every entry from LOWER columns left of the diagonal to UPPER \
                      right of it present (clipped at the edges), random values (fixed seed).",
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

/// Which generator, with the arguments its builder needs beyond the matrix's sizes.
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
    Band {
        lower: usize,
        upper: usize,
    },
}

impl Plan {
    /// A plan whose non-zero count is known in advance.
    fn exact(rows: usize, cols: usize, nnz: usize, kind: Kind) -> Result<Plan> {
        Ok(Plan {
            rows,
            cols,
            nnz: Some(nnz),
            kind,
        })
    }

    /// Runs the generator's builder, which fills the CSR arrays row by row.
    fn build(&self) -> Result<Csr<f64>> {
        let nnz = self.nnz.unwrap_or(0);
        let mut b = Build::new(self.rows, self.cols, nnz);
        match self.kind {
            Kind::Lap3d7 { n } => mesh::lap3d7(n, &mut b),
            Kind::Stencil27 { n } => mesh::stencil27(n, &mut b),
            Kind::Elasticity { n } => mesh::elasticity(n, &mut b),
            Kind::Dense => basic::dense(&mut b),
            Kind::PowerLaw { scale, seed } => rmat::powerlaw(scale, nnz, seed, &mut b),
            Kind::Uniform { perrow, seed } => sampled::uniform(perrow, seed, &mut b),
            Kind::Lp { seed } => sampled::lp(nnz, seed, &mut b),
            Kind::Circuit {
                perrow,
                longrows,
                longlen,
                seed,
            } => sampled::circuit(perrow, longrows, longlen, seed, &mut b),
            Kind::Grid2d { n } => mesh::grid2d(n, &mut b),
            Kind::EmptyRows { seed } => sampled::emptyrows(nnz, seed, &mut b),
            Kind::RandomPerRow { perrow, seed } => sampled::random_per_row(perrow, seed, &mut b),
            Kind::RandomDensity { density, seed } => sampled::random_density(density, seed, &mut b),
            Kind::OneRow { len } => sampled::onerow(len, &mut b),
            Kind::Empty => basic::empty(&mut b),
            Kind::Diag => basic::diag(&mut b),
            Kind::Band { lower, upper } => basic::band(lower, upper, &mut b),
        }
        if let Some(nnz) = self.nnz {
            debug_assert_eq!(b.col.len(), nnz, "{:?}", self.kind);
        }
        b.finish()
    }
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

/// The product of `a` as a `u128`, or `None` where it overflows.
fn mul(a: &[usize]) -> Option<u128> {
    a.iter().try_fold(1u128, |p, &x| p.checked_mul(x as u128))
}

/// Checks a spec's NAME and ARGS and works out the matrix's sizes, allocating nothing.
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
    match name {
        "lap3d7" => mesh::plan_lap3d7(&a),
        "stencil27" => mesh::plan_stencil27(&a),
        "elasticity" => mesh::plan_elasticity(&a),
        "dense" => basic::plan_dense(&a),
        "powerlaw" => rmat::plan_powerlaw(&a),
        "uniform" => sampled::plan_uniform(&a),
        "lp" => sampled::plan_lp(&a),
        "circuit" => sampled::plan_circuit(&a),
        "grid2d" => mesh::plan_grid2d(&a),
        "emptyrows" => sampled::plan_emptyrows(&a),
        "random" => sampled::plan_random(&a),
        "onerow" => sampled::plan_onerow(&a),
        "empty" => basic::plan_empty(&a),
        "diag" => basic::plan_diag(&a),
        "band" => basic::plan_band(&a),
        _ => Err(a.err(format!("generator '{name}' is listed but not implemented"))),
    }
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
    fn random_values(&mut self, s: &mut RandomStream) {
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
