//! The floor plan of ARCHITECTURE.md, checked: every `crate::...` path in the library's code
//! names a module its floor may import. Reads the source tree; where it is absent (a test
//! executable copied to another machine) the test skips with one line.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The floor of a source file (its path under `src/`), and the top-level modules it may name
/// through `crate::`. `api::types` (the C constants) counts as the base floor.
fn allowed(rel: &str) -> Option<(&'static str, &'static [&'static str])> {
    const BASE: &[&str] = &["types", "error", "scalar", "csr", "api::types"];
    let rules: &[(&str, &str, &[&str])] = &[
        ("api/types.rs", "base", &[]),
        ("types.rs", "base", &["api::types"]),
        ("error.rs", "base", &["types"]),
        ("scalar.rs", "base", &["types"]),
        ("csr.rs", "base", &["types", "error", "scalar"]),
        ("io/", "io", BASE),
        (
            "backend/",
            "backend",
            &["backend", "types", "error", "scalar", "csr"],
        ),
        (
            "methods/",
            "methods",
            &["methods", "backend", "types", "error", "scalar", "csr"],
        ),
        (
            "select.rs",
            "select (AUTO)",
            &["methods", "backend", "types", "error", "scalar", "csr"],
        ),
        (
            "matrix/",
            "matrix",
            &[
                "matrix", "handle", "select", "methods", "backend", "types", "error", "scalar",
                "csr",
            ],
        ),
        (
            "handle.rs",
            "handle",
            &["backend", "types", "error", "scalar", "csr"],
        ),
        (
            "bench/",
            "bench",
            &[
                "bench",
                "api",
                "api::types",
                "matrix",
                "handle",
                "select",
                "methods",
                "backend",
                "types",
                "error",
                "scalar",
                "csr",
            ],
        ),
        (
            "api/",
            "api",
            &[
                "api",
                "api::types",
                "matrix",
                "handle",
                "select",
                "methods",
                "backend",
                "types",
                "error",
                "scalar",
                "csr",
            ],
        ),
    ];
    rules
        .iter()
        .find(|(prefix, _, _)| {
            if prefix.ends_with('/') {
                rel.starts_with(prefix)
            } else {
                rel == *prefix
            }
        })
        .map(|(_, floor, may)| (*floor, *may))
}

/// The code of a file without its comments and, unless `with_tests`, without its
/// `#[cfg(test)]` modules (a method's tests may use anything, e.g. the generators of `io`; the
/// floor's own tests may not reach up).
fn code_of(text: &str, with_tests: bool) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if !with_tests
            && t.starts_with("#[cfg(test)]")
            && lines.peek().is_some_and(|l| l.contains("mod "))
        {
            break;
        }
        let code = t.split("//").next().unwrap_or("");
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// `crate::` paths in `code`, as the module they enter (`methods`, `api::types`, ...).
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name == "api" && rest.starts_with("api::types") {
            found.insert("api::types".to_string());
        } else if !name.is_empty() {
            found.insert(name);
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_library_file_imports_only_from_its_own_floor_or_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    if !src.is_dir() {
        println!(
            "skipped: the source tree {} is not on this machine",
            src.display()
        );
        return;
    }
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut checked = 0;
    let mut wrong = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel.starts_with("bin/") || rel == "lib.rs" || rel.ends_with("/tests.rs") {
            continue;
        }
        let Some((floor, may)) = allowed(&rel) else {
            wrong.push(format!(
                "{rel}: no floor in ARCHITECTURE.md's plan (add it to this test)"
            ));
            continue;
        };
        let code = code_of(&std::fs::read_to_string(f).unwrap(), floor == "backend");
        for m in crate_paths(&code) {
            if !may.contains(&m.as_str()) {
                wrong.push(format!("{rel} ({floor}) imports crate::{m}"));
            }
        }
        checked += 1;
    }
    assert!(checked > 40, "only {checked} files checked");
    assert!(
        wrong.is_empty(),
        "imports against the floor plan:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checker_sees_imports_and_ignores_comments_and_tests() {
    let code = code_of(
        "use crate::methods::x; // crate::api\n#[cfg(test)]\nmod tests {\n use crate::io::load;\n}\n",
        false,
    );
    let found = crate_paths(&code);
    assert_eq!(found, BTreeSet::from(["methods".to_string()]));
    let with_tests = code_of(
        "use crate::csr::Csr;\n#[cfg(test)]\nmod tests {\n use crate::io::load;\n}\n",
        true,
    );
    assert_eq!(
        crate_paths(&with_tests),
        BTreeSet::from(["csr".to_string(), "io".to_string()])
    );
    assert_eq!(
        crate_paths("use crate::api::types as c; crate::api::functions"),
        BTreeSet::from(["api".to_string(), "api::types".to_string()])
    );
    assert_eq!(allowed("backend/cuda/csr.rs").unwrap().0, "backend");
    assert!(!allowed("backend/cuda/csr.rs")
        .unwrap()
        .1
        .contains(&"methods"));
}

/// No file of the library or the CLI does three jobs: none is over 900 lines (unit tests may
/// sit beside a module in `tests.rs` or `<module>_tests.rs`, and are not counted).
#[test]
fn no_source_file_is_over_900_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    if !src.is_dir() {
        println!(
            "skipped: the source tree {} is not on this machine",
            src.display()
        );
        return;
    }
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let long: Vec<String> = files
        .iter()
        .filter(|f| {
            let name = f.file_name().unwrap().to_string_lossy();
            name != "tests.rs" && !name.ends_with("_tests.rs")
        })
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n > 900).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over 900 lines:\n{}",
        long.join("\n")
    );
}
