//! Owned, validated CSR: `i32` indices, base 0, columns sorted within each row (duplicates kept,
//! so they add in every product), built from any input the C API accepts. Also the row
//! statistics the selector and the fixed rules read, and the plain f64 product every test
//! compares against.
#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::types::{IndexBase, Operation};

/// Largest row count, column count or non-zero count tessera stores (indices are `i32`).
pub const MAX_DIM: i64 = i32::MAX as i64;

/// The caller's index array, in either accepted integer type.
#[derive(Debug, Clone, Copy)]
pub enum Indices<'a> {
    /// `int32_t` indices.
    I32(&'a [i32]),
    /// `int64_t` indices.
    I64(&'a [i64]),
}

impl Indices<'_> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        match self {
            Indices::I32(s) => s.len(),
            Indices::I64(s) => s.len(),
        }
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `i`, widened.
    #[inline]
    pub fn get(&self, i: usize) -> i64 {
        match self {
            Indices::I32(s) => s[i] as i64,
            Indices::I64(s) => s[i],
        }
    }
}

/// A CSR matrix as the caller describes it, before validation.
#[derive(Debug, Clone, Copy)]
pub struct CsrParts<'a, T> {
    /// Number of rows (>= 0).
    pub rows: i64,
    /// Number of columns (>= 0).
    pub cols: i64,
    /// Number of stored entries (>= 0).
    pub nnz: i64,
    /// `rows + 1` row offsets.
    pub row_ptr: Indices<'a>,
    /// `nnz` column indices.
    pub col_ind: Indices<'a>,
    /// `nnz` values.
    pub values: &'a [T],
    /// Index base of `row_ptr` and `col_ind`.
    pub base: IndexBase,
}

/// Row statistics of a matrix: what the fixed rules and the selector look at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowStats {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Stored entries.
    pub nnz: usize,
    /// Mean entries per row (0 for a matrix without rows).
    pub mean: f64,
    /// Population standard deviation of the row lengths.
    pub std_dev: f64,
    /// Shortest row.
    pub min: usize,
    /// Longest row.
    pub max: usize,
    /// Rows without entries.
    pub empty_rows: usize,
    /// Mean over non-empty rows of (last column - first column + 1): how far apart a row's x
    /// reads are.
    pub col_spread: f64,
}

/// Owned CSR with `i32` indices, base 0, and columns sorted (stably) within each row.
#[derive(Debug, Clone, PartialEq)]
pub struct Csr<T> {
    rows: usize,
    cols: usize,
    row_ptr: Vec<i32>,
    col_ind: Vec<i32>,
    values: Vec<T>,
    /// For each of the caller's entries, its position in `values`; `None` when the caller's
    /// columns were already sorted (the identity).
    input_to_csr: Option<Vec<u32>>,
}

/// A size from the caller: negative is `InvalidSize`, above [`MAX_DIM`] is `NotSupported`.
pub fn check_dim(name: &str, v: i64) -> Result<usize> {
    if v < 0 {
        return Err(Error::InvalidSize(format!("{name} = {v} is negative")));
    }
    if v > MAX_DIM {
        return Err(Error::NotSupported(format!(
            "{name} = {v} exceeds 2^31-1 = {MAX_DIM}, the largest tessera supports (indices are stored as 32-bit integers)"
        )));
    }
    Ok(v as usize)
}

/// An empty vector with room for `n` entries, or `AllocFailed` (instead of aborting the host
/// process) when the memory is not there.
fn try_vec<V>(n: usize, what: &str) -> Result<Vec<V>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        Error::AllocFailed(format!(
            "could not allocate host memory for tessera's copy of {what} ({n} entries of {} bytes)",
            std::mem::size_of::<V>()
        ))
    })?;
    Ok(v)
}

/// `n` copies of `v`, or ALLOC_FAILED when the host cannot hold them.
///
/// Through `vec![v; n]`, which asks the allocator for zeroed memory when `v` is a zero integer
/// or float: fresh pages come zeroed from the kernel, so nothing is written here and the pages
/// are first touched by whoever fills them (the parallel passes of [`Csr::from_parts`]). An
/// explicit fill wrote every byte on one thread first: 120 of the 150 ms of `from_parts` on
/// 28M non-zeros (2-core CI machine). The reservation before it turns an allocation the host
/// refuses into ALLOC_FAILED instead of an abort.
pub(crate) fn try_vec_filled<V: Clone>(n: usize, v: V, what: &str) -> Result<Vec<V>> {
    drop(try_vec::<V>(n, what)?);
    Ok(vec![v; n])
}

/// The error of a value update with `len` values for a matrix of `nnz` entries.
pub(crate) fn check_values_len(len: usize, nnz: usize) -> Result<()> {
    if len != nnz {
        return Err(Error::InvalidSize(format!(
            "{len} new values given for a matrix with nnz = {nnz}"
        )));
    }
    Ok(())
}

/// `n` copies of `v` with every page already mapped, touched by parallel threads: the
/// destination of a copy from the device. The driver copies into pageable memory through its own
/// staging buffers on one thread, and a page it touches first there costs a fault on that
/// thread; faulted here in parallel, the copy runs at the staging rate.
pub(crate) fn try_vec_touched<V: Clone + Send + Sync>(
    n: usize,
    v: V,
    what: &str,
) -> Result<Vec<V>> {
    let mut out = try_vec_filled(n, v.clone(), what)?;
    let chunk = n.div_ceil(threads_for(n)).max(1);
    if chunk < n {
        std::thread::scope(|scope| {
            for c in out.chunks_mut(chunk) {
                let v = v.clone();
                scope.spawn(move || c.fill(v));
            }
        });
    }
    Ok(out)
}

/// Entries below which the host passes over a CSR run on one thread: spawning costs more.
const PARALLEL_MIN: usize = 1 << 20;

/// Up to 8 threads for `n` entries (1 below [`PARALLEL_MIN`]): the memory-bound passes.
fn threads_for(n: usize) -> usize {
    host_threads(n, 8)
}

/// Threads for a host pass over `n` entries: 1 below [`PARALLEL_MIN`], else up to `max`, the
/// cores this process may use, and one per quarter of [`PARALLEL_MIN`] entries.
pub(crate) fn host_threads(n: usize, max: usize) -> usize {
    if n < PARALLEL_MIN {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .min(max)
        .min(n / (PARALLEL_MIN / 4))
        .max(1)
}

/// `dst[k] = src[k] - base` for every column, checking `base <= src[k] < base + cols`, in
/// parallel chunks; the lowest out-of-range `k`, if any (then `dst` is partly written).
fn rebase_columns<I: Copy + Into<i64> + Send + Sync>(
    src: &[I],
    base: i64,
    cols: usize,
    dst: &mut [i32],
) -> Option<usize> {
    let n = src.len();
    let chunk = n.div_ceil(threads_for(n)).max(1);
    let run = |s: &[I], d: &mut [i32]| -> Option<usize> {
        let mut bad = None;
        for (i, (&c, o)) in s.iter().zip(d.iter_mut()).enumerate() {
            // Checked: a caller's int64 column near i64::MIN would overflow `c - base`.
            let r = Into::<i64>::into(c).checked_sub(base).unwrap_or(-1);
            if r < 0 || r >= cols as i64 {
                bad.get_or_insert(i);
            }
            *o = r as i32;
        }
        bad
    };
    if chunk >= n {
        return run(src, dst);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = src
            .chunks(chunk)
            .zip(dst.chunks_mut(chunk))
            .enumerate()
            .map(|(i, (s, d))| scope.spawn(move || run(s, d).map(|k| i * chunk + k)))
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().expect("a column check thread panicked"))
            .min()
    })
}

/// `dst.copy_from_slice(src)` in parallel chunks on a large array.
fn copy_parallel<V: Copy + Send + Sync>(src: &[V], dst: &mut [V]) {
    let n = src.len();
    let chunk = n.div_ceil(threads_for(n)).max(1);
    if chunk >= n {
        dst.copy_from_slice(src);
        return;
    }
    std::thread::scope(|scope| {
        for (s, d) in src.chunks(chunk).zip(dst.chunks_mut(chunk)) {
            scope.spawn(move || d.copy_from_slice(s));
        }
    });
}

/// The columns out of range (not in `base..base + cols`) and the descents (k with col[k] >
/// col[k + 1]) over the whole array, counted in branch-free passes (parallel chunks on a large
/// array; a chunk also counts the descent into the next chunk's first column).
fn column_scan(col: &[i32], base: i64, cols: usize) -> (usize, usize) {
    // cols <= 2^31 - 1: c is in range exactly when c - base, as unsigned, is below cols
    // (below base it wraps to a large value).
    let (b, limit) = (base as i32, cols as u32);
    let scan = |s: &[i32], next: Option<i32>| -> (usize, usize) {
        let bad: u32 = s
            .iter()
            .map(|&c| u32::from(c.wrapping_sub(b) as u32 >= limit))
            .sum();
        let rest = s.get(1..).unwrap_or_default();
        let inner: u32 = s.iter().zip(rest).map(|(x, y)| u32::from(x > y)).sum();
        let edge = match (s.last(), next) {
            (Some(&l), Some(f)) => usize::from(l > f),
            _ => 0,
        };
        (bad as usize, inner as usize + edge)
    };
    let n = col.len();
    let chunk = n.div_ceil(threads_for(n)).max(1);
    if chunk >= n {
        return scan(col, None);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = col
            .chunks(chunk)
            .enumerate()
            .map(|(i, s)| {
                let next = col.get((i + 1) * chunk).copied();
                scope.spawn(move || scan(s, next))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a column scan thread panicked"))
            .fold((0, 0), |(bad, d), (b, e)| (bad + b, d + e))
    })
}

/// The descents of `col` that fall at a row start (the last entry of one row above the first
/// of the next non-empty one): they are allowed, the others are unsorted rows. `row_ptr` is
/// sound, with index base `base`.
fn row_start_descents(row_ptr: &[i32], col: &[i32], base: i64) -> usize {
    row_ptr
        .windows(2)
        .filter(|w| w[0] < w[1] && w[0] as i64 > base)
        .filter(|w| {
            let k = (w[0] as i64 - base) as usize;
            col[k - 1] > col[k]
        })
        .count()
}

/// True when some row's columns are not sorted (rows checked in parallel chunks).
fn any_row_unsorted(row_ptr: &[i32], col_ind: &[i32]) -> bool {
    let rows = row_ptr.len().saturating_sub(1);
    let unsorted_in = |r0: usize, r1: usize| {
        (r0..r1).any(|r| {
            let s = &col_ind[row_ptr[r] as usize..row_ptr[r + 1] as usize];
            s.windows(2).any(|w| w[0] > w[1])
        })
    };
    let t = threads_for(col_ind.len());
    if t == 1 || rows < t {
        return unsorted_in(0, rows);
    }
    let per = rows.div_ceil(t);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..t)
            .map(|i| {
                let (r0, r1) = (i * per, ((i + 1) * per).min(rows));
                scope.spawn(move || r0 < r1 && unsorted_in(r0, r1))
            })
            .collect();
        handles
            .into_iter()
            .any(|h| h.join().expect("a sort check thread panicked"))
    })
}

/// [`RowStats`] accumulated row by row (each row's sorted columns), in one order for every
/// path that measures a matrix on the host, so that they agree to the bit.
struct StatsAcc {
    rows: usize,
    nnz: usize,
    /// The sum of the squared row lengths (exact: at most max * nnz <= 2^62).
    sum_sq: u64,
    min: usize,
    max: usize,
    empty: usize,
    /// The sum over non-empty rows of last column - first column + 1 (exact).
    spread: u64,
}

impl StatsAcc {
    fn new(rows: usize, nnz: usize) -> Self {
        StatsAcc {
            rows,
            nnz,
            sum_sq: 0,
            min: usize::MAX,
            max: 0,
            empty: 0,
            spread: 0,
        }
    }

    /// Every row of a sound int32 CSR (row_ptr from 0 to col_ind's length, non-decreasing;
    /// base 0), and with `STARTS` the count of column descents at row starts (where a
    /// non-empty row's first column is below the previous entry's; 0 without). Integer sums: a
    /// floating-point sum per row made a chain of dependent adds. (A version without
    /// data-dependent branches, every row's first, last and previous columns loaded at clamped
    /// indices, took twice as long on as-caida: 86 against 43 µs.)
    fn rows_i32<const STARTS: bool>(&mut self, row_ptr: &[i32], col_ind: &[i32]) -> usize {
        let mut at_starts = 0usize;
        for w in row_ptr.windows(2) {
            let (r0, r1) = (w[0] as usize, w[1] as usize);
            let cols = &col_ind[r0..r1];
            let len = cols.len();
            self.sum_sq += (len * len) as u64;
            self.min = self.min.min(len);
            self.max = self.max.max(len);
            match (cols.first(), cols.last()) {
                (Some(&first), Some(&last)) => {
                    self.spread += (last as i64 - first as i64 + 1) as u64;
                    if STARTS && r0 > 0 {
                        at_starts += usize::from(col_ind[r0 - 1] > first);
                    }
                }
                _ => self.empty += 1,
            }
        }
        at_starts
    }

    fn finish(self, cols: usize) -> RowStats {
        let rows = self.rows;
        let mean = if rows == 0 {
            0.0
        } else {
            self.nnz as f64 / rows as f64
        };
        // sum((len - mean)^2) = (rows * sum(len^2) - nnz^2) / rows, the numerator exact.
        let deviation =
            |rows: u128| (rows * self.sum_sq as u128).saturating_sub((self.nnz as u128).pow(2));
        RowStats {
            rows,
            cols,
            nnz: self.nnz,
            mean,
            std_dev: if rows == 0 {
                0.0
            } else {
                (deviation(rows as u128) as f64 / (rows as f64 * rows as f64)).sqrt()
            },
            min: if rows == 0 { 0 } else { self.min },
            max: self.max,
            empty_rows: self.empty,
            col_spread: if rows > self.empty {
                self.spread as f64 / (rows - self.empty) as f64
            } else {
                0.0
            },
        }
    }
}

/// Rows, columns, row_ptr and col_ind of int32 arrays found sound.
type SoundI32<'a> = (usize, usize, &'a [i32], &'a [i32]);

impl<T> CsrParts<'_, T> {
    /// row_ptr and col_ind when tessera's CSR can hold them as they are (int32, base 0),
    /// before any check of their entries.
    pub(crate) fn int32_base0(&self) -> Option<(&[i32], &[i32])> {
        match (self.row_ptr, self.col_ind, self.base) {
            (Indices::I32(rp), Indices::I32(ci), IndexBase::Zero) => Some((rp, ci)),
            _ => None,
        }
    }

    /// Int32 arrays (base 0 or 1) that are sound and sorted, as (rows, cols, row_ptr,
    /// col_ind); `None` for any other. Checked by branch-free counting passes: row_ptr's
    /// steps, then the columns out of range and the column descents, which must all fall at
    /// row starts.
    fn sound_sorted_i32(&self) -> Option<SoundI32<'_>> {
        let ((rows, cols, rp, ci), descents) = self.sound_i32()?;
        (descents == row_start_descents(rp, ci, self.base.offset())).then_some((rows, cols, rp, ci))
    }

    /// [`CsrParts::sound_sorted_i32`] but for the last step: int32 arrays whose row_ptr is
    /// sound and whose columns are all in range, with the count of column descents in col_ind
    /// (sorted rows: exactly those at row starts).
    fn sound_i32(&self) -> Option<(SoundI32<'_>, usize)> {
        let (Indices::I32(rp), Indices::I32(ci)) = (self.row_ptr, self.col_ind) else {
            return None;
        };
        let (rows, cols, nnz) = (
            check_dim("rows", self.rows).ok()?,
            check_dim("cols", self.cols).ok()?,
            check_dim("nnz", self.nnz).ok()?,
        );
        if rp.len() != rows + 1 || ci.len() != nnz || self.values.len() != nnz {
            return None;
        }
        // nnz + base may not fit an i32: compare in i64.
        let base = self.base.offset();
        if rp[0] as i64 != base || rp[rows] as i64 != nnz as i64 + base {
            return None;
        }
        // First = base and last = nnz + base: non-decreasing steps keep every offset in range.
        let falls = rp.windows(2).fold(0u32, |n, w| n | u32::from(w[0] > w[1]));
        if falls != 0 {
            return None;
        }
        let (bad, descents) = column_scan(ci, base, cols);
        (bad == 0).then_some(((rows, cols, rp, ci), descents))
    }

    /// The row statistics of arrays that tessera's CSR can take as they are, read and never
    /// copied: int32 indices, base 0, well formed, and each row's columns sorted. `None`
    /// for any other arrays (int64, base 1, unsorted rows, anything [`Csr::from_parts`]
    /// refuses): that path then converts, sorts or words the error. The statistics equal
    /// `Csr::from_parts(self)?.stats()` to the bit. One pass over the rows both measures them
    /// and counts the column descents at row starts (which must be all of them).
    pub fn stats_as_is(&self) -> Option<RowStats> {
        if self.base != IndexBase::Zero {
            return None;
        }
        let ((rows, cols, row_ptr, col_ind), descents) = self.sound_i32()?;
        let mut acc = StatsAcc::new(rows, col_ind.len());
        let at_starts = acc.rows_i32::<true>(row_ptr, col_ind);
        (at_starts == descents).then(|| acc.finish(cols))
    }
}

impl<T: Scalar> Csr<T> {
    /// Validates the caller's arrays and copies them into tessera's own CSR.
    ///
    /// Errors: negative sizes are `InvalidSize`; sizes above 2^31-1 are `NotSupported`; arrays of
    /// the wrong length are `InvalidSize`; a malformed `row_ptr` or an out-of-range column is
    /// `InvalidMatrix`, naming the entry and its value.
    pub fn from_parts(p: CsrParts<'_, T>) -> Result<Self> {
        match Self::from_sound_i32(&p)? {
            Some(csr) => Ok(csr),
            None => Self::from_parts_checked(p),
        }
    }

    /// [`Csr::from_parts`]'s fast path: int32 arrays (base 0 or 1) that are sound and sorted
    /// (`CsrParts::sound_sorted_i32`), copied as they are (rebased from base 1). `Ok(None)` for
    /// anything else (int64, a bad entry, unsorted rows): [`Csr::from_parts_checked`] then
    /// finds the first bad entry for its sentence, or sorts. `Err` only when host memory is
    /// short.
    fn from_sound_i32(p: &CsrParts<'_, T>) -> Result<Option<Self>> {
        let Some((rows, cols, rp, ci)) = p.sound_sorted_i32() else {
            return Ok(None);
        };
        let (nnz, base) = (ci.len(), p.base.offset());
        let mut row_ptr = try_vec(rows + 1, "row_ptr")?;
        row_ptr.extend(rp.iter().map(|&v| (v as i64 - base) as i32));
        let mut col_ind = try_vec_filled(nnz, 0i32, "col_ind")?;
        if base == 0 {
            copy_parallel(ci, &mut col_ind);
        } else if rebase_columns(ci, base, cols, &mut col_ind).is_some() {
            return Ok(None); // not reached: every column was found in range
        }
        let mut values = try_vec_filled(nnz, T::ZERO, "values")?;
        copy_parallel(p.values, &mut values);
        Ok(Some(Csr::unmapped(rows, cols, row_ptr, col_ind, values)))
    }

    /// [`Csr::from_parts`] for any arrays: each check in turn, naming the first bad entry.
    fn from_parts_checked(p: CsrParts<'_, T>) -> Result<Self> {
        let rows = check_dim("rows", p.rows)?;
        let cols = check_dim("cols", p.cols)?;
        let nnz = check_dim("nnz", p.nnz)?;
        if p.row_ptr.len() != rows + 1 {
            return Err(Error::InvalidSize(format!(
                "row_ptr has {} entries but rows + 1 = {} are needed",
                p.row_ptr.len(),
                rows + 1
            )));
        }
        if p.col_ind.len() != nnz || p.values.len() != nnz {
            return Err(Error::InvalidSize(format!(
                "col_ind has {} entries and values {} but nnz = {nnz}",
                p.col_ind.len(),
                p.values.len()
            )));
        }
        let base = p.base.offset();
        let first = p.row_ptr.get(0);
        if first != base {
            return Err(Error::InvalidMatrix(format!(
                "row_ptr[0] = {first} but it must equal the index base ({base}, {})",
                p.base.c_name()
            )));
        }
        for i in 0..rows {
            let (a, b) = (p.row_ptr.get(i), p.row_ptr.get(i + 1));
            if a > b {
                return Err(Error::InvalidMatrix(format!(
                    "row_ptr is not non-decreasing: row_ptr[{i}] = {a} > row_ptr[{}] = {b}",
                    i + 1
                )));
            }
            if b - base > nnz as i64 {
                return Err(Error::InvalidMatrix(format!(
                    "row_ptr[{}] = {b} points past the last entry: with nnz = {nnz} and base {base} it may be at most {}",
                    i + 1,
                    nnz as i64 + base
                )));
            }
        }
        let last = p.row_ptr.get(rows);
        if last != nnz as i64 + base {
            return Err(Error::InvalidMatrix(format!(
                "row_ptr[rows] = row_ptr[{rows}] = {last} but it must equal nnz + base = {}",
                nnz as i64 + base
            )));
        }
        let mut row_ptr = try_vec(rows + 1, "row_ptr")?;
        row_ptr.extend((0..=rows).map(|i| (p.row_ptr.get(i) - base) as i32));
        // row_ptr is valid, so the entries of the rows are exactly 0..nnz in order: every
        // column is checked and rebased in one pass over the array (in parallel chunks on a
        // large matrix), and the row of a bad one is found only for the message.
        let mut col_ind = try_vec_filled(nnz, 0i32, "col_ind")?;
        let bad = match p.col_ind {
            Indices::I32(s) => rebase_columns(s, base, cols, &mut col_ind),
            Indices::I64(s) => rebase_columns(s, base, cols, &mut col_ind),
        };
        if let Some(k) = bad {
            let c = p.col_ind.get(k);
            let row = row_ptr.partition_point(|&e| e as usize <= k) - 1;
            return Err(Error::InvalidMatrix(format!(
                "col_ind[{k}] = {c} (row {}) is out of range: with cols = {cols} and base {base} columns run from {base} to {}",
                row as i64 + base,
                cols as i64 - 1 + base
            )));
        }
        let mut values = try_vec_filled(nnz, T::ZERO, "values")?;
        copy_parallel(p.values, &mut values);
        let mut csr = Csr::unmapped(rows, cols, row_ptr, col_ind, values);
        csr.sort_rows()?;
        Ok(csr)
    }

    /// Builds a CSR from 0-based `(row, col, value)` triplets in any order; duplicates are kept
    /// (they add). Used by the Matrix Market reader and the generators.
    pub fn from_triplets(rows: usize, cols: usize, entries: &[(usize, usize, T)]) -> Result<Self> {
        check_dim("rows", rows as i64)?;
        check_dim("cols", cols as i64)?;
        check_dim("nnz", entries.len() as i64)?;
        let mut counts = try_vec_filled(rows + 1, 0usize, "row_ptr")?;
        for (k, &(r, c, _)) in entries.iter().enumerate() {
            if r >= rows || c >= cols {
                return Err(Error::InvalidMatrix(format!(
                    "entry {k} at ({r}, {c}) lies outside the {rows} x {cols} matrix"
                )));
            }
            counts[r + 1] += 1;
        }
        for i in 0..rows {
            counts[i + 1] += counts[i];
        }
        let mut row_ptr = try_vec(rows + 1, "row_ptr")?;
        row_ptr.extend(counts.iter().map(|&v| v as i32));
        let mut next = counts;
        let mut col_ind = try_vec_filled(entries.len(), 0i32, "col_ind")?;
        let mut values = try_vec_filled(entries.len(), T::ZERO, "values")?;
        for &(r, c, v) in entries {
            let k = next[r];
            next[r] += 1;
            col_ind[k] = c as i32;
            values[k] = v;
        }
        let mut csr = Csr {
            rows,
            cols,
            row_ptr,
            col_ind,
            values,
            input_to_csr: None,
        };
        csr.sort_rows()?;
        // Triplets have no "caller order" to update values in later: forget the permutation.
        csr.input_to_csr = None;
        Ok(csr)
    }

    /// Sorts the columns of every row (stable, so duplicates keep their order) and remembers
    /// where each caller entry went.
    fn sort_rows(&mut self) -> Result<()> {
        let unsorted = any_row_unsorted(&self.row_ptr, &self.col_ind);
        if !unsorted {
            return Ok(());
        }
        let mut input_to_csr = try_vec(self.nnz(), "the column-sorting map")?;
        input_to_csr.resize(self.nnz(), 0u32);
        let mut order: Vec<usize> = Vec::new();
        let mut cols_tmp: Vec<i32> = Vec::new();
        let mut vals_tmp: Vec<T> = Vec::new();
        for r in 0..self.rows {
            let (a, b) = (self.row_ptr[r] as usize, self.row_ptr[r + 1] as usize);
            order.clear();
            order.extend(a..b);
            order.sort_by_key(|&k| self.col_ind[k]);
            cols_tmp.clear();
            vals_tmp.clear();
            for (dst, &src) in order.iter().enumerate() {
                input_to_csr[src] = (a + dst) as u32;
                cols_tmp.push(self.col_ind[src]);
                vals_tmp.push(self.values[src]);
            }
            self.col_ind[a..b].copy_from_slice(&cols_tmp);
            self.values[a..b].copy_from_slice(&vals_tmp);
        }
        self.input_to_csr = Some(input_to_csr);
        Ok(())
    }

    /// A CSR validated elsewhere (the device import, `backend/cuda/import.rs`): base 0, columns
    /// sorted within each row, no value map. Checked only in debug builds.
    pub(crate) fn from_sorted(
        rows: usize,
        cols: usize,
        row_ptr: Vec<i32>,
        col_ind: Vec<i32>,
        values: Vec<T>,
    ) -> Self {
        debug_assert_eq!(row_ptr.len(), rows + 1);
        debug_assert_eq!(col_ind.len(), values.len());
        debug_assert!(!any_row_unsorted(&row_ptr, &col_ind));
        Csr::unmapped(rows, cols, row_ptr, col_ind, values)
    }

    /// The arrays as they are, with no value map (the caller's entries are in CSR order).
    fn unmapped(
        rows: usize,
        cols: usize,
        row_ptr: Vec<i32>,
        col_ind: Vec<i32>,
        values: Vec<T>,
    ) -> Self {
        Csr {
            rows,
            cols,
            row_ptr,
            col_ind,
            values,
            input_to_csr: None,
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.col_ind.len()
    }
    /// Row offsets (`rows + 1`, base 0).
    pub fn row_ptr(&self) -> &[i32] {
        &self.row_ptr
    }
    /// Column indices (base 0, sorted within each row).
    pub fn col_ind(&self) -> &[i32] {
        &self.col_ind
    }
    /// Values, in CSR order.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// For each caller entry, its index in [`Csr::values`].
    pub fn input_slot(&self, k: usize) -> usize {
        match &self.input_to_csr {
            Some(p) => p[k] as usize,
            None => k,
        }
    }

    /// For each caller entry, its index in [`Csr::values`]; None when that is the identity.
    pub fn input_map(&self) -> Option<&[u32]> {
        self.input_to_csr.as_deref()
    }

    /// Values in CSR order, writable (the pattern stays as it is).
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }

    /// Replaces the values, given in the caller's original entry order (same pattern).
    pub fn set_values_from_input(&mut self, input: &[T]) -> Result<()> {
        check_values_len(input.len(), self.nnz())?;
        match &self.input_to_csr {
            None => self.values.copy_from_slice(input),
            Some(p) => {
                for (k, &v) in input.iter().enumerate() {
                    self.values[p[k] as usize] = v;
                }
            }
        }
        Ok(())
    }

    /// Bytes this CSR occupies (row_ptr, col_ind, values).
    pub fn bytes(&self) -> usize {
        (self.row_ptr.len() + self.col_ind.len()) * 4 + self.values.len() * std::mem::size_of::<T>()
    }

    /// The same matrix in another value type.
    pub fn convert<U: Scalar>(&self) -> Csr<U> {
        Csr {
            rows: self.rows,
            cols: self.cols,
            row_ptr: self.row_ptr.clone(),
            col_ind: self.col_ind.clone(),
            values: self
                .values
                .iter()
                .map(|v| U::from_f64(v.to_f64()))
                .collect(),
            input_to_csr: self.input_to_csr.clone(),
        }
    }

    /// Row statistics in one pass over `row_ptr` (and the first/last column of each row).
    pub fn stats(&self) -> RowStats {
        let mut acc = StatsAcc::new(self.rows, self.nnz());
        acc.rows_i32::<false>(&self.row_ptr, &self.col_ind);
        acc.finish(self.cols)
    }

    /// The plain product in f64 — the oracle every method is compared against:
    /// `y = alpha*op(A)*x + beta*y`, with `beta == 0` never reading y.
    pub fn spmv_f64(&self, op: Operation, alpha: f64, x: &[f64], beta: f64, y: &mut [f64]) {
        let (xl, yl) = match op {
            Operation::NonTranspose => (self.cols, self.rows),
            Operation::Transpose => (self.rows, self.cols),
        };
        assert!(x.len() >= xl && y.len() >= yl, "x or y too short");
        let scale = |y: &mut f64| *y = if beta == 0.0 { 0.0 } else { beta * *y };
        match op {
            Operation::NonTranspose => {
                for (r, yr) in y[..yl].iter_mut().enumerate() {
                    let (a, b) = (self.row_ptr[r] as usize, self.row_ptr[r + 1] as usize);
                    let s: f64 = (a..b)
                        .map(|k| self.values[k].to_f64() * x[self.col_ind[k] as usize])
                        .sum();
                    scale(yr);
                    *yr += alpha * s;
                }
            }
            Operation::Transpose => {
                y[..yl].iter_mut().for_each(scale);
                for (r, &xr) in x[..xl].iter().enumerate() {
                    for k in self.row_ptr[r] as usize..self.row_ptr[r + 1] as usize {
                        y[self.col_ind[k] as usize] += alpha * self.values[k].to_f64() * xr;
                    }
                }
            }
        }
    }

    /// The sum of |a_ij * x_j| per output entry: the scale rounding errors are relative to.
    pub fn abs_product_f64(&self, op: Operation, x: &[f64]) -> Vec<f64> {
        let abs: Vec<f64> = x.iter().map(|v| v.abs()).collect();
        let mut out = match op {
            Operation::NonTranspose => vec![0.0; self.rows],
            Operation::Transpose => vec![0.0; self.cols],
        };
        let a = Csr {
            rows: self.rows,
            cols: self.cols,
            row_ptr: self.row_ptr.clone(),
            col_ind: self.col_ind.clone(),
            values: self.values.iter().map(|v| v.to_f64().abs()).collect(),
            input_to_csr: None,
        };
        a.spmv_f64(op, 1.0, &abs, 0.0, &mut out);
        out
    }
}

#[cfg(test)]
mod tests;
