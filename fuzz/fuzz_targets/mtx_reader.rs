//! Fuzz target (b): the Matrix Market reader (`tessera::io::mtx::from_bytes`, which `read` and
//! the CLI use), on arbitrary bytes, plain or xz. A malformed file must be an error that names
//! the file (and, for content errors, the line), never a panic; an accepted file must give a
//! well-formed CSR within tessera's limits.
//!
//! Limit of this target: a well-formed header declaring 2^20 to 2^26 rows or columns is a valid
//! (huge, mostly empty) matrix whose CSR needs memory in proportion; such plain-text inputs are
//! skipped. Beyond 2^26 the reader refuses a file storing fewer than 1/8 as many entries (see
//! `io::mtx`), which no input of a few kilobytes does, so those sizes are fuzzed.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Rows or columns at or above this (and up to 2^26) are skipped, see above.
const SKIP_DIM: u64 = 1 << 20;

/// The numbers of the first content line after the banner (the size line), if any parse.
fn declared_dims(data: &[u8]) -> Vec<u64> {
    let text = String::from_utf8_lossy(data);
    let line = text
        .lines()
        .skip(1)
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('%'));
    line.map(|l| {
        l.split_whitespace()
            .filter_map(|t| t.trim_start_matches('+').parse::<u64>().ok())
            .collect()
    })
    .unwrap_or_default()
}

fuzz_target!(|data: &[u8]| {
    let is_xz = data.starts_with(&[0xFD, b'7', b'z', b'X', b'Z', 0x00]);
    if !is_xz
        && declared_dims(data)
            .iter()
            .take(2)
            .any(|&d| (SKIP_DIM..=tessera::io::mtx::HUGE_DIM as u64).contains(&d))
    {
        return;
    }
    match tessera::io::mtx::from_bytes(data, "fuzz.mtx") {
        Ok(a) => {
            let (rp, ci) = (a.row_ptr(), a.col_ind());
            assert_eq!(rp.len(), a.rows() + 1);
            assert_eq!(rp[0], 0);
            assert_eq!(rp[a.rows()] as usize, a.nnz());
            assert!(rp.windows(2).all(|w| w[0] <= w[1]));
            assert_eq!(ci.len(), a.nnz());
            assert_eq!(a.values().len(), a.nnz());
            for r in 0..a.rows() {
                let row = &ci[rp[r] as usize..rp[r + 1] as usize];
                assert!(row.windows(2).all(|w| w[0] <= w[1]), "row {r} unsorted");
                assert!(row.iter().all(|&c| c >= 0 && (c as usize) < a.cols()));
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.contains("fuzz.mtx"),
                "the error does not name the file: {msg}"
            );
            assert!(!msg.contains('\n'), "the error is not one line: {msg}");
            assert!(
                matches!(
                    e,
                    tessera::Error::InvalidMatrix(_) | tessera::Error::NotSupported(_)
                ),
                "unexpected error kind for a bad file: {e:?}"
            );
        }
    }
});
