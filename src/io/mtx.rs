//! Matrix Market files: reading `.mtx` and `.mtx.xz` into [`Csr<f64>`], writing them back.
//!
//! What is read:
//! - `matrix coordinate` and `matrix array` (dense, column-major; every value is stored, zeros
//!   included, because the file says the matrix is dense);
//! - fields `real` (also `double`), `integer`, and `pattern` — a pattern file has no values and
//!   every entry reads as **1.0** (negated to -1.0 for the mirrored half of a skew-symmetric one);
//! - symmetry `general`; `symmetric` (the stored triangle is expanded to both, the diagonal once;
//!   an entry stored above the diagonal is mirrored the same way); `skew-symmetric`
//!   (a_ji = -a_ij; a diagonal entry is an error, as the format forbids it);
//! - `%` comment lines and blank lines anywhere, `\r\n` line ends, Fortran exponents (`1.0D+03`);
//! - xz-compressed files, recognised by their magic bytes whatever their name, decompressed in
//!   memory.
//!
//! `complex` fields and `hermitian` symmetry are `Error::NotSupported` (tessera computes in real
//! arithmetic). A malformed file is `Error::InvalidMatrix` with one sentence naming the file and the
//! line; an unreadable one is `Error::InvalidValue`. Duplicate entries are kept and add up (as
//! in tessera's CSR). The size line is never trusted for memory: storage grows with the entries
//! actually read, and a file declaring more than max(2^26, 8 x stored entries) rows or columns
//! is refused (`NotSupported`) instead of taking gigabytes for an almost empty matrix.
//!
//! Why a hand-written parser (a well-kept crate is preferred where one fits; these were evaluated):
//! `matrix-market-rs` 0.1 reads `general`/`symmetric` only (no skew-symmetric), reports no line
//! numbers, leaves the symmetric expansion to the caller and declares no SPDX licence; `sprs`
//! 0.11 does read all the variants, but needs Rust 1.88 (this crate's MSRV is 1.85) and brings
//! ndarray, num-complex and smallvec for one function, and its errors do not name the line;
//! `nalgebra-sparse`'s `io` feature pulls in nalgebra plus pest and pest_derive (a long compile
//! on CI's 2 cores) and builds a pest parse tree of the whole file. The coordinate format is a
//! few dozen lines to parse; this parser reads 10^6 entries in about 0.2 s in a release build
//! (`Andrews`, 760k expanded entries: 0.07 s once decompressed).
//!
//! xz: `lzma-rs` (pure Rust, two small dependencies, no C toolchain or system liblzma needed, so
//! it builds the same on CI and on a GPU box). Measured on the 13 shared matrices (22.7 MiB
//! decompressed): 0.8 s release, 4.5 s debug; the C `liblzma` (static build) is 0.5 s / 0.6 s but
//! compiles xz-utils' C sources, and `lzma-rust2` is no faster in release (3.4 s in debug) and
//! brings sha2 and its digest stack. `lzma-rs`'s encoder stores literals only, so `.xz` files
//! written by [`write()`] are valid but not smaller; they exist for round-trip tests.
#![forbid(unsafe_code)]

use crate::csr::{Csr, MAX_DIM};
use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Rows and columns a file may declare whatever it stores (see [`parse`]); beyond this, at most
/// 8 per stored entry.
pub const HUGE_DIM: usize = 1 << 26;

/// The six bytes every xz stream starts with.
const XZ_MAGIC: [u8; 6] = [0xFD, b'7', b'z', b'X', b'Z', 0x00];

/// Reads a Matrix Market file (`.mtx`, or xz-compressed `.mtx.xz`) into a CSR matrix.
///
/// `pattern` entries read as 1.0; `symmetric` and `skew-symmetric` storage is expanded to the
/// full matrix. Errors: the file cannot be read → `InvalidValue`; malformed content →
/// `InvalidMatrix` naming the file and line; `complex`/`hermitian` → `NotSupported`.
pub fn read(path: &Path) -> Result<Csr<f64>> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::InvalidValue(format!("cannot read {}: {e}", path.display())))?;
    from_bytes(&bytes, &path.display().to_string())
}

/// Reads the bytes of a Matrix Market file, xz-compressed or not (recognised by the magic
/// bytes): what [`read()`] does once it has the file. `source` names it in error messages.
pub fn from_bytes(bytes: &[u8], source: &str) -> Result<Csr<f64>> {
    if bytes.starts_with(&XZ_MAGIC) {
        let text = decompress_xz(bytes, source)?;
        parse(&text, source)
    } else {
        parse(bytes, source)
    }
}

/// Decompresses a whole xz stream held in memory.
fn decompress_xz(bytes: &[u8], source: &str) -> Result<Vec<u8>> {
    // xz files of matrices compress about 6:1; start there to avoid most regrowth.
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(6));
    let mut input = bytes;
    // A decoder bug on a malformed stream must not take the process down: a panic inside
    // lzma-rs becomes the same error as a reported failure.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        lzma_rs::xz_decompress(&mut input, &mut out).map_err(|e| e.to_string())
    }))
    .unwrap_or_else(|_| Err("the xz decoder failed on it".to_string()));
    r.map_err(|e| {
        Error::InvalidMatrix(format!(
            "{source} starts like an xz file but cannot be decompressed: {}",
            e.replace('\n', " ")
        ))
    })?;
    Ok(out)
}

/// Writes `a` as a `matrix coordinate real general` Matrix Market file, 1-based, in CSR order.
///
/// Values are written so that they read back bitwise equal (integers as integers, everything
/// else in shortest round-trip exponent form). A path ending in `.xz` is xz-compressed (valid
/// for any xz reader, but not smaller: see the module notes). Errors: the file cannot be
/// written → `InvalidValue`.
pub fn write(path: &Path, a: &Csr<f64>) -> Result<()> {
    let io_err =
        |e: std::io::Error| Error::InvalidValue(format!("cannot write {}: {e}", path.display()));
    let mut text = Vec::with_capacity(a.nnz() * 24 + 128);
    format_into(&mut text, a).map_err(io_err)?;
    let compress = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".xz"));
    let file = std::fs::File::create(path).map_err(io_err)?;
    let mut out = std::io::BufWriter::new(file);
    if compress {
        lzma_rs::xz_compress(&mut &text[..], &mut out).map_err(io_err)?;
    } else {
        out.write_all(&text).map_err(io_err)?;
    }
    out.flush().map_err(io_err)
}

/// The text of `a` as a general real coordinate file.
fn format_into(out: &mut Vec<u8>, a: &Csr<f64>) -> std::io::Result<()> {
    writeln!(out, "%%MatrixMarket matrix coordinate real general")?;
    writeln!(out, "% written by tessera {}", env!("CARGO_PKG_VERSION"))?;
    writeln!(out, "{} {} {}", a.rows(), a.cols(), a.nnz())?;
    let (rp, ci, v) = (a.row_ptr(), a.col_ind(), a.values());
    for r in 0..a.rows() {
        for k in rp[r] as usize..rp[r + 1] as usize {
            let x = v[k];
            // Integers print exactly as integers; `{:e}` is Rust's shortest round-trip form.
            if x.fract() == 0.0 && x.abs() < 9.0e15 && !(x == 0.0 && x.is_sign_negative()) {
                writeln!(out, "{} {} {}", r + 1, ci[k] + 1, x as i64)?;
            } else {
                writeln!(out, "{} {} {:e}", r + 1, ci[k] + 1, x)?;
            }
        }
    }
    Ok(())
}

/// How the file stores values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Real,
    Integer,
    Pattern,
}

/// Which part of the matrix the file stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Symmetry {
    General,
    Symmetric,
    Skew,
}

/// Lines of a byte buffer with 1-based line numbers; `\r` before `\n` is dropped.
struct Lines<'a> {
    data: &'a [u8],
    pos: usize,
    line_no: usize,
}

impl<'a> Lines<'a> {
    fn new(data: &'a [u8]) -> Self {
        Lines {
            data,
            pos: 0,
            line_no: 0,
        }
    }

    /// The next line that is neither blank nor a `%` comment, with its number.
    fn next_content(&mut self) -> Option<(usize, &'a [u8])> {
        for (n, line) in self.by_ref() {
            let t = trim_start(line);
            if !t.is_empty() && t[0] != b'%' {
                return Some((n, line));
            }
        }
        None
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.data.len() {
            return None;
        }
        let rest = &self.data[self.pos..];
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        self.pos += end + 1;
        self.line_no += 1;
        let mut line = &rest[..end];
        if let [head @ .., b'\r'] = line {
            line = head;
        }
        Some((self.line_no, line))
    }
}

fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\r' || b == b'\x0c' || b == b'\x0b'
}

fn trim_start(s: &[u8]) -> &[u8] {
    let k = s.iter().position(|&b| !is_space(b)).unwrap_or(s.len());
    &s[k..]
}

/// Whitespace-separated fields of one line.
fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| is_space(b)).filter(|t| !t.is_empty())
}

/// A field as text for error messages (lossy, shortened).
fn show(tok: &[u8]) -> String {
    let s = String::from_utf8_lossy(tok);
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s.into_owned()
    }
}

/// A non-negative decimal integer, or None.
fn parse_u64(tok: &[u8]) -> Option<u64> {
    let digits = tok.strip_prefix(b"+").unwrap_or(tok);
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(v)
}

/// A signed decimal integer, or None.
fn parse_i64(tok: &[u8]) -> Option<i64> {
    match tok.first() {
        Some(b'-') => {
            let m = parse_u64(&tok[1..])?;
            if tok.get(1) == Some(&b'+') {
                return None;
            }
            0i64.checked_sub_unsigned(m)
        }
        _ => i64::try_from(parse_u64(tok)?).ok(),
    }
}

/// A real number as Rust reads it (`1`, `-2.5e-3`, `inf`, `nan`), also with a Fortran `D`
/// exponent.
fn parse_f64(tok: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(tok).ok()?;
    match s.parse::<f64>() {
        Ok(v) => Some(v),
        Err(_) if s.contains(['d', 'D']) => s.replace(['d', 'D'], "e").parse().ok(),
        Err(_) => None,
    }
}

/// Parses the text of a Matrix Market file. `source` names it in error messages (a path, or
/// anything that tells the reader where the text came from).
///
/// Same rules and errors as [`read()`], which calls it after reading (and decompressing) the file.
pub fn parse(text: &[u8], source: &str) -> Result<Csr<f64>> {
    let bad =
        |line: usize, what: String| Error::InvalidMatrix(format!("{source}, line {line}: {what}"));
    let mut lines = Lines::new(text);

    // The banner: %%MatrixMarket matrix <format> <field> <symmetry>
    let Some((_, banner)) = lines.next() else {
        return Err(Error::InvalidMatrix(format!(
            "{source}, line 1: the file is empty; a Matrix Market file starts with a line like \
             '%%MatrixMarket matrix coordinate real general'"
        )));
    };
    let words: Vec<String> = fields(banner)
        .map(|t| String::from_utf8_lossy(t).to_ascii_lowercase())
        .collect();
    if words.first().map(String::as_str) != Some("%%matrixmarket") {
        return Err(bad(
            1,
            format!(
                "'{}' is not a Matrix Market header: the first line must start with \
                 '%%MatrixMarket matrix coordinate' (or 'array')",
                show(banner)
            ),
        ));
    }
    if words.len() != 5 {
        return Err(bad(
            1,
            format!(
                "the header has {} words after %%MatrixMarket but needs 4: object, format, \
                 field, symmetry (e.g. 'matrix coordinate real general')",
                words.len() - 1
            ),
        ));
    }
    if words[1] != "matrix" {
        return Err(Error::NotSupported(format!(
            "{source}, line 1: the object is '{}', but tessera reads only 'matrix' objects",
            show(words[1].as_bytes())
        )));
    }
    let coordinate = match words[2].as_str() {
        "coordinate" => true,
        "array" => false,
        other => {
            return Err(bad(
                1,
                format!("unknown format '{other}': expected 'coordinate' or 'array'"),
            ))
        }
    };
    let field = match words[3].as_str() {
        "real" | "double" => Field::Real,
        "integer" => Field::Integer,
        "pattern" => Field::Pattern,
        "complex" => {
            return Err(Error::NotSupported(format!(
                "{source}, line 1: a complex matrix; tessera computes in real arithmetic \
                 (f32/f64) and reads only real, integer and pattern files"
            )))
        }
        other => {
            return Err(bad(
                1,
                format!("unknown field '{other}': expected real, integer, pattern (or complex)"),
            ))
        }
    };
    let symmetry = match words[4].as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::Skew,
        "hermitian" => {
            return Err(Error::NotSupported(format!(
                "{source}, line 1: a hermitian matrix; tessera computes in real arithmetic and \
                 reads only general, symmetric and skew-symmetric files"
            )))
        }
        other => {
            return Err(bad(
                1,
                format!(
                    "unknown symmetry '{other}': expected general, symmetric, skew-symmetric \
                     (or hermitian)"
                ),
            ))
        }
    };
    if !coordinate && field == Field::Pattern {
        return Err(bad(
            1,
            "'array pattern' is not a valid Matrix Market type: a dense file needs values".into(),
        ));
    }

    // The size line.
    let Some((size_line, size)) = lines.next_content() else {
        return Err(Error::InvalidMatrix(format!(
            "{source}, line {}: the file ends after the header; the size line ('ROWS COLS NNZ') \
             is missing",
            lines.line_no + 1
        )));
    };
    let want = if coordinate { 3 } else { 2 };
    let nums: Vec<&[u8]> = fields(size).collect();
    if nums.len() != want {
        return Err(bad(
            size_line,
            format!(
                "the size line '{}' has {} numbers but a {} file needs {want} ({})",
                show(size),
                nums.len(),
                words[2],
                if coordinate {
                    "ROWS COLS NNZ"
                } else {
                    "ROWS COLS"
                }
            ),
        ));
    }
    let mut dims = [0u64; 3];
    for (d, t) in dims.iter_mut().zip(&nums) {
        *d = parse_u64(t).ok_or_else(|| {
            bad(
                size_line,
                format!(
                    "'{}' in the size line is not a non-negative integer",
                    show(t)
                ),
            )
        })?;
    }
    let (rows, cols) = (dims[0], dims[1]);
    for (name, v) in [("rows", rows), ("columns", cols)] {
        if v > MAX_DIM as u64 {
            return Err(Error::NotSupported(format!(
                "{source}, line {size_line}: {v} {name} exceed 2^31-1, the largest tessera \
                 supports"
            )));
        }
    }
    if symmetry != Symmetry::General && rows != cols {
        return Err(bad(
            size_line,
            format!(
                "a {} matrix must be square, but this one is {rows} x {cols}",
                words[4]
            ),
        ));
    }
    let (rows, cols) = (rows as usize, cols as usize);
    let count = if coordinate {
        dims[2]
    } else {
        let n = rows as u64;
        match symmetry {
            Symmetry::General => n * cols as u64,
            Symmetry::Symmetric => n * (n + 1) / 2,
            Symmetry::Skew => n * n.saturating_sub(1) / 2,
        }
    };
    // Never trust a size line for the allocation: an entry takes at least 4 bytes of text.
    let mirror = if symmetry == Symmetry::General { 1 } else { 2 };
    let cap = (count.min(text.len() as u64 / 4) as usize).saturating_mul(mirror);
    let mut entries: Vec<(usize, usize, f64)> = Vec::with_capacity(cap);

    let mut push = |line: usize, r: usize, c: usize, v: f64| -> Result<()> {
        match symmetry {
            Symmetry::General => entries.push((r, c, v)),
            Symmetry::Symmetric => {
                entries.push((r, c, v));
                if r != c {
                    entries.push((c, r, v));
                }
            }
            Symmetry::Skew => {
                if r == c {
                    return Err(bad(
                        line,
                        format!(
                            "entry ({}, {}) lies on the diagonal, which a skew-symmetric \
                             matrix cannot store",
                            r + 1,
                            c + 1
                        ),
                    ));
                }
                entries.push((r, c, v));
                entries.push((c, r, -v));
            }
        }
        Ok(())
    };
    let value = |line: usize, tok: &[u8]| -> Result<f64> {
        let v = match field {
            Field::Integer => parse_i64(tok).map(|v| v as f64),
            _ => parse_f64(tok),
        };
        v.ok_or_else(|| {
            bad(
                line,
                format!(
                    "'{}' is not {}",
                    show(tok),
                    if field == Field::Integer {
                        "an integer (the header says 'integer')"
                    } else {
                        "a real number"
                    }
                ),
            )
        })
    };

    let mut seen: u64 = 0;
    if coordinate {
        let per_line = if field == Field::Pattern { 2 } else { 3 };
        let index = |line: usize, tok: &[u8], what: &str, max: usize| -> Result<usize> {
            match parse_u64(tok) {
                Some(i) if i >= 1 && i <= max as u64 => Ok(i as usize - 1),
                Some(i) => Err(bad(
                    line,
                    format!("{what} index {i} is out of range: {what}s run from 1 to {max}"),
                )),
                None => Err(bad(
                    line,
                    format!("{what} index '{}' is not a positive integer", show(tok)),
                )),
            }
        };
        while let Some((n, line)) = lines.next_content() {
            if seen == count {
                return Err(bad(
                    n,
                    format!(
                        "more entries than the {count} the size line (line {size_line}) \
                         announces"
                    ),
                ));
            }
            let mut it = fields(line);
            let toks = [it.next(), it.next(), it.next(), it.next()];
            let got = toks.iter().take_while(|t| t.is_some()).count();
            let (a, b, c) = match toks {
                [Some(a), Some(b), c, None] if got == per_line => (a, b, c),
                _ => {
                    return Err(bad(
                        n,
                        format!(
                            "'{}' has {} fields but a {} entry needs {per_line} ({})",
                            show(line),
                            if got == 4 {
                                "4 or more".to_string()
                            } else {
                                got.to_string()
                            },
                            words[3],
                            if per_line == 2 {
                                "ROW COL"
                            } else {
                                "ROW COL VALUE"
                            }
                        ),
                    ))
                }
            };
            let r = index(n, a, "row", rows)?;
            let col = index(n, b, "column", cols)?;
            let v = match c {
                Some(t) => value(n, t)?,
                None => 1.0,
            };
            push(n, r, col, v)?;
            seen += 1;
        }
    } else {
        // Dense, column-major; symmetric files store the lower triangle (skew: strictly lower).
        let (mut r, mut c) = (0usize, 0usize);
        let first_row = |c: usize| match symmetry {
            Symmetry::General => 0,
            Symmetry::Symmetric => c,
            Symmetry::Skew => c + 1,
        };
        if count > 0 {
            r = first_row(0);
        }
        while let Some((n, line)) = lines.next_content() {
            for tok in fields(line) {
                if seen == count {
                    return Err(bad(
                        n,
                        format!(
                            "more values than the {count} a {rows} x {cols} {} array holds",
                            words[4]
                        ),
                    ));
                }
                let v = value(n, tok)?;
                push(n, r, c, v)?;
                seen += 1;
                r += 1;
                if r == rows {
                    c += 1;
                    r = first_row(c);
                }
            }
        }
    }
    if seen < count {
        return Err(Error::InvalidMatrix(format!(
            "{source}, line {}: the file ends after {seen} of the {count} {} announced on line \
             {size_line}",
            lines.line_no,
            if coordinate { "entries" } else { "values" },
        )));
    }
    // Nor is the size line trusted for the memory the matrix will take: the CSR needs 4 bytes
    // of row offsets per row and every product a vector of `cols` values, so a few-byte file
    // declaring 2 billion rows would take gigabytes. Up to 2^26 rows and columns are always
    // read; beyond that, at most 8 per stored entry.
    for (name, v) in [("rows", rows), ("columns", cols)] {
        let allowed = HUGE_DIM.max(8 * entries.len());
        if v > allowed {
            return Err(Error::NotSupported(format!(
                "{source}, line {size_line}: {v} {name} for {} stored entries; tessera's reader \
                 refuses more than max(2^26, 8 x entries) rows or columns, as the matrix would \
                 need {} MB of memory for almost nothing stored",
                entries.len(),
                (v as u64 * 12) >> 20
            )));
        }
    }
    if entries.len() as u64 > MAX_DIM as u64 {
        return Err(Error::NotSupported(format!(
            "{source} expands to {} entries, more than 2^31-1, the largest tessera supports",
            entries.len()
        )));
    }
    Csr::from_triplets(rows, cols, &entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Csr<f64>> {
        parse(text.as_bytes(), "t.mtx")
    }

    #[test]
    fn symmetric_lower_triangle_expands_with_the_diagonal_once() {
        let a =
            p("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2\n3 1 -1.5\n2 2 4\n")
                .unwrap();
        assert_eq!(a.row_ptr(), &[0, 2, 3, 4]);
        assert_eq!(a.col_ind(), &[0, 2, 1, 0]);
        assert_eq!(a.values(), &[2.0, -1.5, 4.0, -1.5]);
    }

    #[test]
    fn dense_arrays_are_column_major_and_symmetric_arrays_hold_the_lower_triangle() {
        let a = p("%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n").unwrap();
        assert_eq!(a.col_ind(), &[0, 1, 2, 0, 1, 2]);
        assert_eq!(a.values(), &[1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
        let s = p("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n").unwrap();
        assert_eq!(s.values(), &[1.0, 2.0, 2.0, 3.0]);
        let k = p("%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n").unwrap();
        // lower: a21 = 1, a31 = 2, a32 = 3
        assert_eq!(k.values(), &[-1.0, -2.0, 1.0, -3.0, 2.0, 3.0]);
        let e = p("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n").unwrap_err();
        assert!(
            e.detail().contains("ends after 3 of the 4 values"),
            "{}",
            e.detail()
        );
    }

    #[test]
    fn numbers_in_every_accepted_spelling() {
        assert_eq!(parse_f64(b"1.5D+02"), Some(150.0));
        assert_eq!(parse_f64(b"-2e-3"), Some(-0.002));
        assert_eq!(parse_f64(b"1.0.0"), None);
        assert_eq!(parse_i64(b"-17"), Some(-17));
        assert_eq!(parse_i64(b"+17"), Some(17));
        assert_eq!(parse_i64(b"-+17"), None);
        assert_eq!(parse_i64(b"1.0"), None);
        assert_eq!(parse_u64(b"99999999999999999999999"), None);
    }

    #[test]
    fn written_values_read_back_bitwise() {
        let vals = [
            0.1,
            -3.0,
            1e-300,
            6.02214076e23,
            -0.0,
            f64::MIN_POSITIVE,
            9.0e15,
            1.0 / 3.0,
        ];
        let t: Vec<_> = vals.iter().enumerate().map(|(i, &v)| (i, 0, v)).collect();
        let a = Csr::from_triplets(vals.len(), 1, &t).unwrap();
        let mut text = Vec::new();
        format_into(&mut text, &a).unwrap();
        let b = parse(&text, "mem").unwrap();
        let bits = |m: &Csr<f64>| m.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b));
    }
}
