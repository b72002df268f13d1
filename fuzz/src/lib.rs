//! What the fuzz targets share: turning fuzz bytes into CSR input, and the oracle checks of
//! every host format against the plain f64 CSR product.
//!
//! The checks panic on a wrong result; libFuzzer reports a panic as a crash and keeps the input
//! (fuzz/artifacts/<target>/). Every crash found becomes a regression test in tessera's own test
//! suite (tests/fuzz_regressions.rs).

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use tessera::methods::{self, bccoo, brc, csr_vector, hola, HostMethod, Request};
use tessera::{Csr, CsrParts, IndexBase, Indices, Operation, Scalar, Tuning};

/// Largest row or column count a fuzz matrix gets (keeps one run in microseconds).
pub const MAX_DIM: usize = 1000;

/// A value from a byte: multiples of 1/8 in [-16, 16). Products and sums of these are exact in
/// f64 for the sizes fuzzed, so f64 results must match the oracle up to rounding of the sum
/// order only.
pub fn small_value(b: u8) -> f64 {
    (b as i8) as f64 / 8.0
}

/// CSR input as a caller could pass it to `tessera_create_csr`, before validation.
#[derive(Debug, Clone)]
pub struct RawCsr {
    /// Declared rows.
    pub rows: i64,
    /// Declared columns.
    pub cols: i64,
    /// Declared non-zeros.
    pub nnz: i64,
    /// row_ptr entries (as i64; narrowed for I32 input).
    pub row_ptr: Vec<i64>,
    /// col_ind entries.
    pub col_ind: Vec<i64>,
    /// Values.
    pub values: Vec<f64>,
    /// Index base.
    pub base: IndexBase,
    /// Pass the indices as `int64_t` (else `int32_t`, truncated).
    pub i64_indices: bool,
}

/// A size from the fuzz bytes: mostly small, sometimes anything (negative, huge).
fn size(u: &mut Unstructured<'_>, max: usize) -> Result<i64> {
    Ok(match u.int_in_range(0u8..=15)? {
        0 => u.arbitrary::<i64>()?,
        1 => *u.choose(&[-1, i32::MAX as i64, i32::MAX as i64 + 1, i64::MAX, i64::MIN])?,
        _ => u.int_in_range(0..=max as i64)?,
    })
}

impl RawCsr {
    /// Builds CSR input from fuzz bytes: usually well-formed (row lengths then columns, so that
    /// the formats get exercised), sometimes with sizes, row offsets or columns off.
    pub fn arbitrary(u: &mut Unstructured<'_>) -> Result<RawCsr> {
        let base = if u.arbitrary::<bool>()? {
            IndexBase::One
        } else {
            IndexBase::Zero
        };
        let b = base.offset();
        let i64_indices = u.arbitrary::<bool>()?;
        let rows = size(u, 200)?;
        let cols = size(u, MAX_DIM)?;
        let mut row_ptr = vec![b];
        let mut col_ind = Vec::new();
        let wide_cols = cols.clamp(1, MAX_DIM as i64);
        let nrows = rows.clamp(0, 200) as usize;
        let mut long_row_done = false;
        for _ in 0..nrows {
            if u.is_empty() {
                break;
            }
            let len = match u.int_in_range(0u8..=31)? {
                // One long row now and then (HOLA's and BRC's split rows, BCCOO's many stops).
                0 if !long_row_done => {
                    long_row_done = true;
                    u.int_in_range(32usize..=600)?
                }
                1..=6 => 0, // empty rows
                k => (k % 9) as usize,
            };
            for _ in 0..len {
                let c = match u.int_in_range(0u8..=63)? {
                    0 => u.arbitrary::<i64>()?, // anything: out of range, negative
                    1 => wide_cols - 1,
                    _ => u.int_in_range(0..=wide_cols - 1)?,
                };
                col_ind.push(c.wrapping_add(b));
            }
            row_ptr.push(col_ind.len() as i64 + b);
        }
        // Pad to the declared row count with empty rows when the bytes ran out.
        while row_ptr.len() < nrows + 1 {
            row_ptr.push(col_ind.len() as i64 + b);
        }
        let mut nnz = col_ind.len() as i64;
        // Now and then, break one thing.
        match u.int_in_range(0u8..=15)? {
            0 if !row_ptr.is_empty() => {
                let i = u.choose_index(row_ptr.len())?;
                row_ptr[i] = u.arbitrary::<i64>()?;
            }
            1 => nnz = size(u, 100)?,
            2 => {
                row_ptr.pop();
            }
            3 if !col_ind.is_empty() => {
                col_ind.pop();
            }
            4 if !row_ptr.is_empty() => {
                let i = u.choose_index(row_ptr.len())?;
                row_ptr[i] = row_ptr[i].wrapping_add(*u.choose(&[-1i64, 1])?);
            }
            _ => {}
        }
        let values = (0..col_ind.len())
            .map(|_| u.arbitrary::<u8>().map(small_value))
            .collect::<Result<Vec<_>>>()?;
        Ok(RawCsr {
            rows,
            cols,
            nnz,
            row_ptr,
            col_ind,
            values,
            base,
            i64_indices,
        })
    }

    /// Validates through `Csr::from_parts`, the constructor every input of the C API goes
    /// through. The indices are narrowed to `int32_t` (wrapping, as a C cast would) unless
    /// `i64_indices`.
    pub fn validate(&self) -> tessera::Result<Csr<f64>> {
        let narrow = |v: &[i64]| v.iter().map(|&x| x as i32).collect::<Vec<i32>>();
        let (rp32, ci32) = (narrow(&self.row_ptr), narrow(&self.col_ind));
        let (row_ptr, col_ind) = if self.i64_indices {
            (Indices::I64(&self.row_ptr), Indices::I64(&self.col_ind))
        } else {
            (Indices::I32(&rp32), Indices::I32(&ci32))
        };
        Csr::from_parts(CsrParts {
            rows: self.rows,
            cols: self.cols,
            nnz: self.nnz,
            row_ptr,
            col_ind,
            values: &self.values,
            base: self.base,
        })
    }
}

/// Asserts that `y` = alpha*op(A)*x + beta*y0 with a bound that holds for any summation order:
/// (n+2)·eps·(|alpha|·|A||x| + |beta·y0|) with n the longest row or column, plus the slack
/// of one rounding of each input to T. NaN never passes.
#[allow(clippy::too_many_arguments)]
pub fn assert_product<T: Scalar>(
    what: &str,
    a: &Csr<f64>,
    op: Operation,
    alpha: f64,
    x: &[T],
    beta: f64,
    y0: &[T],
    y: &[T],
) {
    let longest = {
        let mut c = vec![0usize; a.cols()];
        a.col_ind().iter().for_each(|&j| c[j as usize] += 1);
        let rows = (0..a.rows()).map(|i| (a.row_ptr()[i + 1] - a.row_ptr()[i]) as usize);
        c.into_iter().chain(rows).max().unwrap_or(0)
    };
    let tol = 2.0 * T::EPSILON * (longest + 2) as f64;
    let xr: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
    let scale = a.abs_product_f64(op, &xr);
    let mut want: Vec<f64> = y0.iter().map(|v| v.to_f64()).collect();
    a.spmv_f64(op, alpha, &xr, beta, &mut want);
    assert_eq!(y.len(), want.len(), "{what}: y length");
    for i in 0..y.len() {
        let bound =
            tol * (alpha.abs() * scale[i] + (beta * y0[i].to_f64()).abs()) + f64::MIN_POSITIVE;
        let err = (y[i].to_f64() - want[i]).abs();
        assert!(
            err <= bound,
            "{what} {:?} {op} alpha={alpha} beta={beta}: y[{i}] = {} but the f64 product is {} \
             (error {err:e} > {bound:e}); matrix {} x {}, nnz {}",
            T::VALUE_TYPE,
            y[i].to_f64(),
            want[i],
            a.rows(),
            a.cols(),
            a.nnz()
        );
    }
}

/// The (alpha, beta) pairs tried: the plain product, the BLAS update, alpha = 0.
pub const ALPHA_BETA: [(f64, f64); 3] = [(1.0, 0.0), (-2.0, 0.5), (0.0, 2.0)];

/// One product to check: its inputs and the f64 answer with its error bound.
struct Case<T> {
    op: Operation,
    alpha: f64,
    beta: f64,
    x: Vec<T>,
    y0: Vec<T>,
    want: Vec<f64>,
    bound: Vec<f64>,
}

/// The plain f64 CSR products of one matrix for both operations and every (alpha, beta),
/// computed once and compared with every method (the bound of [`assert_product`]).
pub struct Oracle<T> {
    cases: Vec<Case<T>>,
    shape: (usize, usize, usize),
}

impl<T: Scalar> Oracle<T> {
    /// The cases for `a` (values as the method sees them), x and y0 derived from `seed`, for
    /// the (alpha, beta) pairs `ab`.
    pub fn new(a: &Csr<T>, seed: u8, ab: &[(f64, f64)]) -> Self {
        let a64 = a.convert::<f64>();
        let longest = {
            let mut c = vec![0usize; a.cols()];
            a.col_ind().iter().for_each(|&j| c[j as usize] += 1);
            let rows = (0..a.rows()).map(|i| (a.row_ptr()[i + 1] - a.row_ptr()[i]) as usize);
            c.into_iter().chain(rows).max().unwrap_or(0)
        };
        let tol = 2.0 * T::EPSILON * (longest + 2) as f64;
        let mut cases = Vec::new();
        for op in [Operation::NonTranspose, Operation::Transpose] {
            let (xl, yl) = match op {
                Operation::NonTranspose => (a.cols(), a.rows()),
                Operation::Transpose => (a.rows(), a.cols()),
            };
            let x: Vec<T> = (0..xl)
                .map(|i| T::from_f64(small_value((i as u8).wrapping_mul(37).wrapping_add(seed))))
                .collect();
            let y0: Vec<T> = (0..yl)
                .map(|i| T::from_f64(small_value((i as u8).wrapping_mul(11).wrapping_add(seed))))
                .collect();
            let xr: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
            let scale = a64.abs_product_f64(op, &xr);
            for &(alpha, beta) in ab {
                let mut want: Vec<f64> = y0.iter().map(|v| v.to_f64()).collect();
                a64.spmv_f64(op, alpha, &xr, beta, &mut want);
                let bound = (0..yl)
                    .map(|i| {
                        tol * (alpha.abs() * scale[i] + (beta * y0[i].to_f64()).abs())
                            + f64::MIN_POSITIVE
                    })
                    .collect();
                cases.push(Case {
                    op,
                    alpha,
                    beta,
                    x: x.clone(),
                    y0: y0.clone(),
                    want,
                    bound,
                });
            }
        }
        Oracle {
            cases,
            shape: (a.rows(), a.cols(), a.nnz()),
        }
    }

    /// Runs `f(op, alpha, x, beta, y)` for every case of the operations in `ops` and checks
    /// y. beta = 0 starts y as NaN (it must not be read).
    pub fn check(
        &self,
        what: &str,
        ops: &[Operation],
        f: impl Fn(Operation, T, &[T], T, &mut [T]),
    ) {
        for c in self.cases.iter().filter(|c| ops.contains(&c.op)) {
            let mut y = if c.beta == 0.0 {
                vec![T::from_f64(f64::NAN); c.y0.len()]
            } else {
                c.y0.clone()
            };
            f(
                c.op,
                T::from_f64(c.alpha),
                &c.x,
                T::from_f64(c.beta),
                &mut y,
            );
            for (i, ((yi, want), bound)) in y.iter().zip(&c.want).zip(&c.bound).enumerate() {
                let err = (yi.to_f64() - want).abs();
                assert!(
                    err <= *bound,
                    "{what} {:?} {} alpha={} beta={}: y[{i}] = {} but the f64 product is {} \
                     (error {err:e} > {:e}); matrix {:?} (rows, cols, nnz)",
                    T::VALUE_TYPE,
                    c.op,
                    c.alpha,
                    c.beta,
                    yi.to_f64(),
                    want,
                    bound,
                    self.shape
                );
            }
        }
    }
}

/// Both operations.
pub const BOTH: &[Operation] = &[Operation::NonTranspose, Operation::Transpose];
/// The non-transposed product only.
pub const PLAIN: &[Operation] = &[Operation::NonTranspose];

/// Checks one host method over its own arrays: both operations, every (alpha, beta).
pub fn check_host_method<T: Scalar>(
    what: &str,
    m: &dyn HostMethod<T>,
    a: &Csr<T>,
    oracle: &Oracle<T>,
) {
    oracle.check(what, BOTH, |op, al, x, be, y| match op {
        Operation::NonTranspose => m.spmv(a, al, x, be, y),
        Operation::Transpose => m.spmv_transpose(a, al, x, be, y),
    });
}

/// Every implemented method (the list AUTO uses, so a method added later is fuzzed too) with
/// the fixed rule, a determinism setting and a tuning mode, then its value map:
/// `update_values` with new values must give bitwise the product of the method rebuilt with
/// them.
pub fn check_every_method<T: Scalar>(a: &Csr<T>, u: &mut Unstructured<'_>) -> Result<()> {
    let stats = a.stats();
    let seed = u.arbitrary::<u8>()?;
    // One (alpha, beta) and one determinism setting per input keeps a run fast; the fuzzer
    // varies them.
    let ab = *u.choose(&ALPHA_BETA)?;
    let oracle = Oracle::new(a, seed, &[ab]);
    let deterministic = u.arbitrary::<bool>()?;
    let tuning = *u.choose(&[Tuning::None, Tuning::None, Tuning::Quick, Tuning::Online])?;
    let fresh: Vec<T> = (0..a.nnz())
        .map(|k| T::from_f64(small_value((k as u8).wrapping_mul(29).wrapping_add(seed))))
        .collect();
    let mut b = a.clone();
    b.values_mut().copy_from_slice(&fresh);
    let b_stats = b.stats();
    for &alg in tessera::select::IMPLEMENTED {
        {
            let req = Request {
                host: Some(a),
                stats: &stats,
                tuning,
                deterministic,
            };
            let what = format!("{alg} (deterministic={deterministic}, tuning={tuning})");
            let mut m = match methods::prepare_host(alg, &req) {
                Ok(m) => m,
                // A format that cannot hold this matrix must say so, not panic; only the
                // 32-bit limits of a value map can refuse a valid matrix this small.
                Err(e) => panic!("{what}: prepare_host refused a valid matrix: {e}"),
            };
            check_host_method(&what, m.as_ref(), a, &oracle);
            // The value map: update in place, compare with a fresh build over the new values.
            m.update_values(&b);
            let req_b = Request {
                host: Some(&b),
                stats: &b_stats,
                tuning,
                deterministic,
            };
            let rebuilt = methods::prepare_host(alg, &req_b).expect("rebuild");
            let x: Vec<T> = (0..a.cols())
                .map(|i| T::from_f64(small_value(i as u8 ^ seed)))
                .collect();
            let (mut y1, mut y2) = (vec![T::ZERO; a.rows()], vec![T::ZERO; a.rows()]);
            m.spmv(&b, T::ONE, &x, T::ZERO, &mut y1);
            rebuilt.spmv(&b, T::ONE, &x, T::ZERO, &mut y2);
            let bits = |v: &[T]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&y1),
                bits(&y2),
                "{what}: update_values then spmv differs from the format rebuilt with the new values"
            );
        }
    }
    Ok(())
}

/// Parameter variants beyond the fixed rules, for the methods whose format has parameters:
/// CSR_VECTOR's coop/repeat/block size, HOLA's threads/non-zeros per thread, BRC's B1/B2/rep
/// and hybrid ELL width, BCCOO's block shape, slices, tile, flag word, workgroup and strategy.
pub fn check_parameter_variants<T: Scalar>(a: &Csr<T>, u: &mut Unstructured<'_>) -> Result<()> {
    let stats = a.stats();
    let seed = u.arbitrary::<u8>()?;
    let oracle = Oracle::new(a, seed, &[*u.choose(&ALPHA_BETA)?]);

    // CSR_VECTOR.
    let p = csr_vector::Params {
        coop: 1 << u.int_in_range(0u32..=5)?,
        repeat: u.int_in_range(1u32..=8)?,
        block_size: 32 * u.int_in_range(2u32..=32)?,
    };
    if p.is_valid() {
        oracle.check(&format!("CSR_VECTOR {p}"), PLAIN, |_, al, x, be, y| {
            csr_vector::reference::spmv(a, &p, al, x, be, y)
        });
    }

    // HOLA: the GPU's layouts, and small warps the host reference also accepts.
    let lay = hola::reference::Layout {
        warp: *u.choose(&[32usize, 32, 4, 8, 1])?,
        threads: 0,
        npt: *u.choose(&[8usize, 4, 1, 3, 32])?,
    };
    let lay = hola::reference::Layout {
        threads: lay.warp * u.int_in_range(1usize..=16)?,
        ..lay
    };
    let starts = hola::format::row_starts(a.row_ptr(), lay.npb());
    // Both ways of treating rows that cross a block boundary: ownership (rows spanning three
    // blocks carried), or every such row shared (after a prescale).
    let own = u.arbitrary::<bool>()?;
    oracle.check(
        &format!("HOLA {lay:?} own={own}"),
        BOTH,
        |op, al, x, be, y| match op {
            Operation::NonTranspose => hola::reference::spmv(a, &starts, lay, own, al, x, be, y),
            Operation::Transpose => hola::reference::spmv_transpose(a, &starts, lay, al, x, be, y),
        },
    );

    // BRC: explicit parameters through the host method (its format and value map).
    let p = brc::Params {
        b1: *u.choose(&[32u32, 1, 2, 7, 64])?,
        b2: u.int_in_range(1u32..=300)?,
        rep: u.int_in_range(1u32..=8)?,
        ell_width: *u.choose(&[0u32, 0, 1, 2, 5, 100])?,
        block_size: 32 * u.int_in_range(1u32..=32)?,
    };
    let deterministic = u.arbitrary::<bool>()?;
    let req = Request {
        host: Some(a),
        stats: &stats,
        tuning: Tuning::None,
        deterministic,
    };
    let m = brc::host::BrcHost::with_params(&req, p, "fuzz")
        .unwrap_or_else(|e| panic!("BRC {p}: refused a valid matrix: {e}"));
    // The plan is the same on any number of threads (chunks of rows and of block rows).
    let variant = if deterministic {
        brc::format::Variant::Deterministic
    } else {
        brc::format::Variant::Atomic
    };
    let threads = u.int_in_range(2usize..=9)?;
    let (b1, b2, k) = (p.b1 as usize, p.b2 as usize, p.ell_width as usize);
    let one = brc::format::plan_on(a.row_ptr(), a.cols(), b1, b2, k, variant, 1);
    let many = brc::format::plan_on(a.row_ptr(), a.cols(), b1, b2, k, variant, threads);
    assert!(
        one == many,
        "BRC {p}: the plan on {threads} threads differs from the plan on one"
    );
    check_host_method(
        &format!("BRC {p} deterministic={deterministic}"),
        &m,
        a,
        &oracle,
    );

    // BCCOO: any valid format and launch.
    let shape = *u.choose(&bccoo::params::Shape::all())?;
    let slices = *u.choose(bccoo::params::SLICE_VALUES)?;
    let tile = *u.choose(&[8u32, 16, 24, 32, 40, 64, 96, 128, 1, 3, 255])?;
    let word_bits = *u.choose(bccoo::params::WORD_BITS)?;
    let facts = bccoo::format::facts(a);
    let col = *u.choose(bccoo::params::ColMode::allowed(facts.block_cols(shape.bw)))?;
    let fp = bccoo::params::FormatParams {
        shape,
        slices,
        tile,
        word_bits,
        col,
    };
    let mut wg = *u.choose(bccoo::params::WG_VALUES)? as usize;
    // The format pads to wg x tile blocks; past a few thousand the padding only costs time (the
    // same code runs), and a fuzz run wants many inputs per second.
    if wg * tile as usize > 4096 {
        wg = 64;
    }
    let strategy = if u.arbitrary::<bool>()? {
        bccoo::params::Strategy::Registers
    } else {
        bccoo::params::Strategy::ResultCache(u.int_in_range(1u32..=bccoo::params::MAX_CACHE)?)
    };
    if fp.is_valid() {
        let f = match bccoo::format::build(a, &fp, wg) {
            Ok(f) => f,
            // Explicit parameters may not fit the matrix (more BCCOO+ slices than block
            // columns): refused as INVALID_VALUE, which the tuner never picks.
            Err(tessera::Error::InvalidValue(_)) => return Ok(()),
            Err(e) => panic!("BCCOO {fp:?}: refused a valid matrix: {e}"),
        };
        let info = f.wg_info(wg);
        oracle.check(
            &format!("BCCOO {fp:?} wg={wg} {strategy}"),
            PLAIN,
            |_, al, x, be, y| bccoo::reference::spmv(&f, wg, strategy, &info, al, x, be, y),
        );
    }
    Ok(())
}
