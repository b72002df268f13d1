//! The generators whose rows hold random distinct columns: `uniform`, `lp`, `circuit`,
//! `emptyrows`, `random` and `onerow`. Each draws its structure from one sub-stream, then every
//! value, in CSR order, from another.
#![forbid(unsafe_code)]

use super::random::{distribute, sample_sorted, RandomStream, CHOICE, STRUCTURE, VALUES};
use super::{mul, Args, Build, Kind, Plan};
use crate::error::Result;

/// `uniform:ROWS,PERROW,SEED`: square, ROWS*PERROW non-zeros.
pub(super) fn plan_uniform(a: &Args<'_>) -> Result<Plan> {
    let rows = a.size(0)?;
    let perrow = a.size(1)?;
    if perrow > rows {
        return Err(a.err(format!(
            "PERROW = {perrow} distinct columns cannot fit in {rows} columns"
        )));
    }
    let nnz = a.fit("non-zeros", mul(&[rows, perrow]))?;
    Plan::exact(
        rows,
        rows,
        nnz,
        Kind::Uniform {
            perrow,
            seed: a.uint(2)?,
        },
    )
}

/// Every row `perrow` distinct uniformly random columns.
pub(super) fn uniform(perrow: usize, seed: u64, b: &mut Build) {
    let (rows, cols) = (b.rows, b.cols);
    let mut s = RandomStream::new("uniform", seed, STRUCTURE);
    let mut buf = Vec::new();
    for _ in 0..rows {
        sample_sorted(&mut s, perrow, cols, &mut b.col, &mut buf);
        b.end_row();
    }
    b.random_values(&mut RandomStream::new("uniform", seed, VALUES));
}

/// `lp:ROWS,COLS,PERROW,SEED`: ROWS*PERROW non-zeros.
pub(super) fn plan_lp(a: &Args<'_>) -> Result<Plan> {
    let (rows, cols, perrow) = (a.size(0)?, a.size(1)?, a.size(2)?);
    if perrow > cols {
        return Err(a.err(format!(
            "PERROW = {perrow} distinct columns cannot fit in COLS = {cols}"
        )));
    }
    let nnz = a.fit("non-zeros", mul(&[rows, perrow]))?;
    Plan::exact(rows, cols, nnz, Kind::Lp { seed: a.uint(3)? })
}

/// `nnz` non-zeros over rows whose lengths are proportional to random weights in [0.5, 1.5).
pub(super) fn lp(nnz: usize, seed: u64, b: &mut Build) {
    let (rows, cols) = (b.rows, b.cols);
    let mut s = RandomStream::new("lp", seed, STRUCTURE);
    let weights: Vec<f64> = (0..rows).map(|_| 0.5 + s.unit()).collect();
    let lens = distribute(nnz, &weights, cols);
    let mut buf = Vec::new();
    for &len in &lens {
        sample_sorted(&mut s, len, cols, &mut b.col, &mut buf);
        b.end_row();
    }
    b.random_values(&mut RandomStream::new("lp", seed, VALUES));
}

/// `circuit:ROWS,PERROW,LONGROWS,LONGLEN,SEED`: square,
/// (ROWS-LONGROWS)*PERROW + LONGROWS*LONGLEN non-zeros.
pub(super) fn plan_circuit(a: &Args<'_>) -> Result<Plan> {
    let (rows, perrow, longrows, longlen) = (a.size(0)?, a.size(1)?, a.size(2)?, a.size(3)?);
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
    let nnz = (rows - longrows) as u128 * perrow as u128 + longrows as u128 * longlen as u128;
    let nnz = a.fit("non-zeros", Some(nnz))?;
    let seed = a.uint(4)?;
    let kind = Kind::Circuit {
        perrow,
        longrows,
        longlen,
        seed,
    };
    Plan::exact(rows, rows, nnz, kind)
}

/// Every row its diagonal plus random off-diagonal columns, `perrow` in all, except `longrows`
/// randomly chosen rows with `longlen`.
pub(super) fn circuit(perrow: usize, longrows: usize, longlen: usize, seed: u64, b: &mut Build) {
    let rows = b.rows;
    let mut pick = RandomStream::new("circuit", seed, CHOICE);
    let (mut long, mut buf) = (Vec::new(), Vec::new());
    sample_sorted(&mut pick, longrows, rows, &mut long, &mut buf);
    let mut s = RandomStream::new("circuit", seed, STRUCTURE);
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
    b.random_values(&mut RandomStream::new("circuit", seed, VALUES));
}

/// `emptyrows:ROWS,AVG,SEED`: square, ROWS*AVG non-zeros, all in the ROWS - floor(ROWS/2)
/// non-empty rows.
pub(super) fn plan_emptyrows(a: &Args<'_>) -> Result<Plan> {
    let rows = a.size(0)?;
    let avg = a.size(1)?;
    let nnz = a.fit("non-zeros", mul(&[rows, avg]))?;
    let full = rows - rows / 2;
    if rows > 0 && avg == 0 {
        return Err(a.err("AVG = 0 leaves no entries for the rows that must not be empty".into()));
    }
    if nnz as u128 > full as u128 * rows as u128 {
        return Err(a.err(format!(
            "AVG = {avg}: {nnz} non-zeros cannot fit in {full} non-empty rows of \
             {rows} columns"
        )));
    }
    Plan::exact(rows, rows, nnz, Kind::EmptyRows { seed: a.uint(2)? })
}

/// `total` non-zeros in randomly chosen non-empty rows (the others empty), each at least one
/// long and the rest spread by Pareto weights.
pub(super) fn emptyrows(total: usize, seed: u64, b: &mut Build) {
    let (rows, cols) = (b.rows, b.cols);
    let mut pick = RandomStream::new("emptyrows", seed, CHOICE);
    let (mut full, mut buf) = (Vec::new(), Vec::new());
    sample_sorted(&mut pick, rows - rows / 2, rows, &mut full, &mut buf);
    let mut s = RandomStream::new("emptyrows", seed, STRUCTURE);
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
    b.random_values(&mut RandomStream::new("emptyrows", seed, VALUES));
}

/// `random:ROWS,COLS,DENSITY_OR_PERROW,SEED`: digits only in the third argument give a count
/// of entries per row (exact non-zeros), anything else must be a density in [0, 1] (non-zeros
/// known only once drawn).
pub(super) fn plan_random(a: &Args<'_>) -> Result<Plan> {
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
        Plan::exact(rows, cols, nnz, Kind::RandomPerRow { perrow, seed })
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

/// `random` with a count: every row `perrow` distinct uniformly random columns.
pub(super) fn random_per_row(perrow: usize, seed: u64, b: &mut Build) {
    let (rows, cols) = (b.rows, b.cols);
    let mut s = RandomStream::new("random", seed, STRUCTURE);
    let mut buf = Vec::new();
    for _ in 0..rows {
        sample_sorted(&mut s, perrow, cols, &mut b.col, &mut buf);
        b.end_row();
    }
    b.random_values(&mut RandomStream::new("random", seed, VALUES));
}

/// `random` with a density: each entry present with probability `density`, independently.
pub(super) fn random_density(density: f64, seed: u64, b: &mut Build) {
    let (rows, cols) = (b.rows, b.cols);
    let mut s = RandomStream::new("random", seed, STRUCTURE);
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
    b.random_values(&mut RandomStream::new("random", seed, VALUES));
}

/// `onerow:ROWS,COLS,LONGROW_LEN`: ROWS at least 1, row ROWS/2 long, the others 1 to 3 long.
pub(super) fn plan_onerow(a: &Args<'_>) -> Result<Plan> {
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
    Plan::exact(rows, cols, nnz, Kind::OneRow { len })
}

/// Row `rows / 2` has `len` distinct random columns, every other row r has 1 + (r mod 3) (at
/// most `cols`); fixed seed.
pub(super) fn onerow(len: usize, b: &mut Build) {
    let (rows, cols) = (b.rows, b.cols);
    let mut s = RandomStream::new("onerow", 1, STRUCTURE);
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
    b.random_values(&mut RandomStream::new("onerow", 1, VALUES));
}
