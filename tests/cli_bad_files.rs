//! Malformed Matrix Market input to the `tessera` CLI: every bad file gives exit code 2 and one
//! `error: ` line naming the file and (for content errors) the line, never a panic or a trace,
//! quickly and without allocating in proportion to a size line the file does not back up.
//! Also the accepted oddities: duplicate entries (kept, they add) and CRLF line ends.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn tessera(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .env_remove("TESSERA_BACKEND")
        // A panic would print its backtrace: make sure the test would see it.
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("run tessera")
}

const H: &str = "%%MatrixMarket matrix coordinate real general\n";

/// (name, file bytes, the line the error must name; None where the file has no lines to name:
/// a broken xz stream).
fn bad_files() -> Vec<(&'static str, Vec<u8>, Option<usize>)> {
    let s = |t: &str| t.as_bytes().to_vec();
    let h = |t: &str| format!("{H}{t}").into_bytes();
    let xz_magic = [0xFD, b'7', b'z', b'X', b'Z', 0x00];
    let mut bad_xz = xz_magic.to_vec();
    bad_xz.extend_from_slice(b"\x00\x04garbage that is no xz stream");
    // A real xz stream cut in half.
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.mtx.xz");
    let (_, a) = tessera::io::load("gen:lap3d7:4").unwrap();
    tessera::io::mtx::write(&whole, &a).unwrap();
    let whole = std::fs::read(&whole).unwrap();
    let truncated_xz = whole[..whole.len() / 2].to_vec();
    vec![
        ("empty file", s(""), Some(1)),
        ("only blank lines", s("\n\n"), Some(1)),
        ("not a header", s("hello\n1 1 1\n1 1 1\n"), Some(1)),
        ("header without a type", s("%%MatrixMarket matrix\n1 1 0\n"), Some(1)),
        ("header with an unknown format", s("%%MatrixMarket matrix sparse real general\n1 1 0\n"), Some(1)),
        ("header with an unknown field", s("%%MatrixMarket matrix coordinate quaternion general\n1 1 0\n"), Some(1)),
        ("header with an unknown symmetry", s("%%MatrixMarket matrix coordinate real lopsided\n1 1 0\n"), Some(1)),
        ("a vector, not a matrix", s("%%MatrixMarket vector coordinate real general\n1 1 0\n"), Some(1)),
        ("complex values", s("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n"), Some(1)),
        ("hermitian", s("%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n"), Some(1)),
        ("array pattern", s("%%MatrixMarket matrix array pattern general\n1 1\n"), Some(1)),
        ("no size line", h("% only a comment\n"), Some(3)),
        ("size line with two numbers", h("3 3\n1 1 1\n"), Some(2)),
        ("size line with four numbers", h("3 3 1 1\n1 1 1\n"), Some(2)),
        ("size line not numbers", h("3 x 1\n1 1 1\n"), Some(2)),
        ("negative size", h("-3 3 1\n1 1 1\n"), Some(2)),
        ("fractional size", h("3.5 3 1\n1 1 1\n"), Some(2)),
        ("rows above 2^31-1", h("3000000000 3 1\n1 1 1\n"), Some(2)),
        ("size beyond u64", h("99999999999999999999999 3 1\n1 1 1\n"), Some(2)),
        ("fewer entries than declared", h("3 3 4\n1 1 1\n2 2 2\n3 3 3\n"), Some(5)),
        ("truncated mid-entry", h("3 3 3\n1 1 1\n2 2 2\n3 3"), Some(5)),
        ("more entries than declared", h("3 3 1\n1 1 1\n2 2 2\n"), Some(4)),
        ("row index 0", h("3 3 1\n0 1 1\n"), Some(3)),
        ("row index past the last row", h("3 3 2\n1 1 1\n4 1 1\n"), Some(4)),
        ("column index past the last column", h("3 3 1\n1 9 1\n"), Some(3)),
        ("negative index", h("3 3 1\n-1 1 1\n"), Some(3)),
        ("index not a number", h("3 3 1\none 1 1\n"), Some(3)),
        ("value not a number", h("3 3 1\n1 1 abc\n"), Some(3)),
        ("two values", h("3 3 1\n1 1 1 2\n"), Some(3)),
        ("value missing", h("3 3 1\n1 1\n"), Some(3)),
        ("a value in a pattern file", s("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 5\n"), Some(3)),
        ("real value in an integer file", s("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n"), Some(3)),
        ("integer overflow in an integer file", s("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 99999999999999999999\n"), Some(3)),
        ("binary junk in an entry", [h("2 2 1\n"), b"\xff\xfe\x00 1 1\n".to_vec()].concat(), Some(3)),
        ("diagonal entry of a skew-symmetric matrix", s("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n"), Some(3)),
        ("non-square symmetric matrix", s("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n"), Some(2)),
        ("array with too many values", s("%%MatrixMarket matrix array real general\n2 1\n1\n2\n3\n"), Some(5)),
        ("array with too few values", s("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n"), Some(5)),
        // Huge declared sizes: refused fast, before any allocation of that size.
        ("huge declared entry count", h("2000000000 2000000000 2000000000\n1 1 1\n"), Some(3)),
        ("huge dense array", s("%%MatrixMarket matrix array real general\n2000000000 2000000000\n1\n"), Some(3)),
        ("huge row count for one entry", h("2000000000 1 1\n1 1 1\n"), Some(2)),
        ("huge column count for one entry", h("1 2000000000 1\n1 1 1\n"), Some(2)),
        ("not xz after the xz magic", bad_xz, None),
        ("truncated xz", truncated_xz, None),
    ]
}

#[test]
fn malformed_matrix_market_files_give_one_error_line_with_the_line_number_and_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let mut problems = Vec::new();
    for (i, (name, bytes, line)) in bad_files().into_iter().enumerate() {
        let path = dir.path().join(format!("bad{i}.mtx"));
        std::fs::write(&path, &bytes).unwrap();
        let p = path.to_str().unwrap();
        let start = Instant::now();
        let o = tessera(&["--backend", "host", "info", p]);
        let took = start.elapsed();
        let err = String::from_utf8_lossy(&o.stderr);
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
        let others: Vec<&str> = err
            .lines()
            .filter(|l| !l.starts_with("error: ") && !l.starts_with("backend: "))
            .collect();
        let mut why = Vec::new();
        if o.status.code() != Some(2) {
            why.push(format!("exit code {:?}, not 2", o.status.code()));
        }
        if errors.len() != 1 || !others.is_empty() {
            why.push("not exactly one error line (and nothing else but the backend line)".into());
        }
        if err.contains("panicked") || err.contains("backtrace") {
            why.push("a panic".into());
        }
        if let Some(e) = errors.first() {
            if !e.contains(p) {
                why.push("the error does not name the file".into());
            }
            if let Some(n) = line {
                if !e.contains(&format!("line {n}:")) && !e.contains(&format!("line {n} ")) {
                    why.push(format!("the error does not name line {n}"));
                }
            }
        }
        if took > Duration::from_secs(10) {
            why.push(format!("took {took:?}"));
        }
        if !why.is_empty() {
            problems.push(format!("{name}: {}\n    stderr: {err}", why.join("; ")));
        }
    }
    assert!(
        problems.is_empty(),
        "{} malformed files were not reported as they should be:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn duplicate_entries_are_kept_and_add_up_and_crlf_files_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dups.mtx");
    std::fs::write(
        &path,
        format!("{H}% duplicates add\r\n2 2 3\r\n1 1 1\r\n1 1 2\r\n2 2 3\r\n"),
    )
    .unwrap();
    let a = tessera::io::mtx::read(&path).unwrap();
    assert_eq!(a.nnz(), 3, "duplicates are kept");
    let mut y = vec![0.0; 2];
    a.spmv_f64(
        tessera::Operation::NonTranspose,
        1.0,
        &[1.0, 1.0],
        0.0,
        &mut y,
    );
    assert_eq!(y, [3.0, 3.0], "duplicates add in every product");
    let o = tessera(&["--backend", "host", "verify", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_declared_size_up_to_the_reader_limit_is_read() {
    // 2^20 rows and 1 entry: below the reader's 2^26 limit, a valid (mostly empty) matrix.
    let a = tessera::io::mtx::parse(format!("{H}1048576 3 1\n1048576 3 2.5\n").as_bytes(), "t")
        .unwrap();
    assert_eq!((a.rows(), a.cols(), a.nnz()), (1 << 20, 3, 1));
    assert!(Path::new(env!("CARGO_BIN_EXE_tessera")).exists());
}
