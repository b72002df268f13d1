//! The `tessera` command-line tool, run as a user would.

use std::process::{Command, Output};

fn tessera(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .env_remove("TESSERA_BACKEND")
        .output()
        .expect("run tessera")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn help_documents_every_command_and_every_generator() {
    let o = tessera(&["--help"]);
    let (out, _) = text(&o);
    assert!(o.status.success());
    for word in ["info", "verify", "bench", "--backend", "TESSERA_BACKEND"] {
        assert!(out.contains(word), "--help lacks {word}");
    }
    for g in tessera::io::gen::catalogue() {
        assert!(
            out.contains(&format!("gen:{}:", g.name)),
            "--help lacks gen:{}",
            g.name
        );
    }
}

#[test]
fn bench_says_which_backend_and_why_and_writes_csv() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("out.csv");
    let o = tessera(&[
        "--backend",
        "auto",
        "bench",
        "gen:lap3d7:12",
        "--repeat",
        "3",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    // No GPU on CI: the host backend, with the reason.
    if !std::path::Path::new("/dev/nvidiactl").exists() {
        assert!(err.contains("backend: host (no GPU:"), "{err}");
    }
    assert!(out.contains("auto:csr_vector"), "{out}");
    let csv = std::fs::read_to_string(csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("matrix,rows,cols,nnz"));
    // A header, then AUTO and each implemented method, every one checked ok.
    assert_eq!(
        lines.len(),
        2 + tessera::select::IMPLEMENTED.len(),
        "header + auto + each method:\n{csv}"
    );
    for l in &lines[1..] {
        assert!(l.contains(",ok,"), "{l}");
    }
}

#[test]
fn verify_passes_on_a_real_and_a_generated_matrix_in_both_precisions() {
    let mut args = vec![
        "--backend",
        "host",
        "verify",
        "gen:emptyrows:500,6,1",
        "--precision",
        "both",
        "--methods",
        "auto,csr_vector",
    ];
    let shared = tessera::io::shared_matrices_dir().map(|d| d.join("bayer10.mtx.xz"));
    let path = shared.as_ref().map(|p| p.to_string_lossy().into_owned());
    if let Some(p) = path.as_deref() {
        args.push(p);
    }
    let o = tessera(&args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let oks = out
        .lines()
        .filter(|l| l.contains(" ok (max rel. error"))
        .count();
    assert_eq!(oks, if path.is_some() { 8 } else { 4 }, "{out}");
}

#[test]
fn info_prints_statistics_and_the_chosen_parameters() {
    let o = tessera(&["--backend", "host", "info", "gen:dense:20,30"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("20 x 30, 600 non-zeros"), "{out}");
    assert!(out.contains("mean 30.00"), "{out}");
    assert!(out.contains("csr_vector: coop=8"), "{out}");
}

#[test]
fn info_honours_methods() {
    // gen:dense:20,30 is a matrix AUTO gives CSR_VECTOR: a HOLA line shows --methods was read.
    let o = tessera(&[
        "--backend",
        "host",
        "info",
        "gen:dense:20,30",
        "--methods",
        "hola",
        "--precision",
        "both",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    for vt in ["f64", "f32"] {
        assert!(out.contains(&format!("  hola ({vt})  hola: ")), "{out}");
    }
    let method_lines: Vec<&str> = out
        .lines()
        .filter(|l| l.contains(" (f64) ") || l.contains(" (f32) "))
        .collect();
    assert_eq!(method_lines.len(), 2, "one line per value type:\n{out}");
    assert!(
        method_lines.iter().all(|l| l.starts_with("  hola (")),
        "only the method asked for:\n{out}"
    );

    // all: AUTO, then every implemented method, as bench and verify read it.
    let o = tessera(&[
        "--backend",
        "host",
        "info",
        "gen:dense:20,30",
        "--methods",
        "all",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let lines: Vec<&str> = out.lines().filter(|l| l.contains(" (f64) ")).collect();
    assert_eq!(lines.len(), 1 + tessera::select::IMPLEMENTED.len(), "{out}");
    assert!(lines[0].starts_with("  auto (f64) "), "{out}");
    for (m, l) in tessera::select::IMPLEMENTED.iter().zip(&lines[1..]) {
        let head = format!("  {} (f64) ", m.name());
        let chosen = format!(" {}: ", m.name());
        assert!(l.starts_with(&head) && l.contains(&chosen), "{m}: {out}");
    }

    // An unknown name is an error naming the valid ones, before any matrix is loaded.
    let o = tessera(&[
        "--backend",
        "host",
        "info",
        "gen:dense:20,30",
        "--methods",
        "hola,fastest",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("error: --methods: 'fastest' is not a valid algorithm")
            && err.contains("hola"),
        "{err}"
    );
    assert!(!err.contains("loaded"), "{err}");
}

#[test]
fn bad_input_is_a_clear_error_and_exit_code_2() {
    for args in [
        &["--backend", "host", "info", "gen:nosuch:1"][..],
        &["--backend", "host", "info", "/nonexistent/file.mtx"],
        &[
            "--backend",
            "host",
            "bench",
            "gen:diag:5",
            "--methods",
            "fastest",
        ],
        &["--backend", "warp", "info", "gen:diag:5"],
    ] {
        let o = tessera(args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.lines()
                .any(|l| l.starts_with("error: ") && l.len() > 30),
            "{args:?}: {err}"
        );
    }
}
