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
        &[
            "--backend",
            "host",
            "bench",
            "gen:diag:5",
            "--stream",
            "sideways",
        ],
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

/// The cells of one CSV line: commas inside double quotes belong to the cell (tessera quotes the
/// matrix and params cells and writes no quote inside them).
fn csv_cells(line: &str) -> Vec<String> {
    let (mut cells, mut cell, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    cells.push(cell);
    cells
}

/// The CSV's rows as maps from column name to cell.
fn csv_rows(csv: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut lines = csv.lines();
    let header = csv_cells(lines.next().expect("a header"));
    lines
        .map(|l| {
            let cells = csv_cells(l);
            assert_eq!(cells.len(), header.len(), "{l}");
            header.iter().cloned().zip(cells).collect()
        })
        .collect()
}

/// The SVG polylines of stroke width 2: the end-to-end picture's matrix lines (its axes and
/// ticks are polylines of width 1; its reference line and legend strokes are rectangles).
fn curves(svg: &str) -> usize {
    svg.split("<polyline")
        .skip(1)
        .filter(|rest| {
            rest.split('>')
                .next()
                .unwrap_or("")
                .contains("stroke-width=\"2\"")
        })
        .count()
}

#[test]
fn bench_writes_end_to_end_columns_that_grow_with_n_and_one_line_per_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("e2e.csv");
    let svg = dir.path().join("e2e.svg");
    let o = tessera(&[
        "--backend",
        "host",
        "bench",
        "gen:lap3d7:8",
        "gen:dense:20,30",
        "--repeat",
        "3",
        "--csv",
        csv.to_str().unwrap(),
        "--e2e-plot",
        svg.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("end to end: time to N products in ms"),
        "{out}"
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let header = text.lines().next().unwrap();
    // The old columns first, in their order; the new ones after them.
    assert!(
        header.starts_with("matrix,rows,cols,nnz,type,method,chosen,analysis_ms,spmv_ms,analysis_in_spmvs,cusparse_best_ms,speedup_vs_cusparse,gflops,csr_gbps,pct_peak,device_bytes,max_rel_error,status,params,e2e_1_ms,"),
        "{header}"
    );
    for col in [
        "e2e_10000_ms",
        "e2e_host_1_ms",
        "cuspe2e_1_ms",
        "cuspe2e_host_10000_ms",
        "cold_first_ms",
    ] {
        assert!(header.split(',').any(|c| c == col), "{col}: {header}");
    }
    let rows = csv_rows(&text);
    assert_eq!(rows.len(), 2 * (1 + tessera::select::IMPLEMENTED.len()));
    let num = |r: &std::collections::HashMap<String, String>, c: &str| -> f64 {
        r[c].parse()
            .unwrap_or_else(|_| panic!("{c} = {:?} in {r:?}", r[c]))
    };
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r:?}");
        for prefix in ["e2e_", "e2e_host_"] {
            let at = |n: u32| num(r, &format!("{prefix}{n}_ms"));
            assert!(
                at(10000) > at(1000) && at(1000) > at(100) && at(100) > at(10),
                "{r:?}"
            );
            assert!(at(10) > at(1) && at(1) > 0.0, "{r:?}");
            // e2e_N = e2e_1 + (N - 1) * spmv_ms (spmv_ms printed to 5 decimals).
            let spmv = num(r, "spmv_ms");
            let want = at(1) + 9999.0 * spmv;
            assert!((at(10000) - want).abs() <= 1e-3 * want + 0.1, "{r:?}");
        }
        // The host backend has no device: both variants are the one measurement.
        assert_eq!(r["e2e_1_ms"], r["e2e_host_1_ms"]);
        // No cuSPARSE on the host backend; no --cold.
        for c in ["cuspe2e_1_ms", "cuspe2e_host_10000_ms", "cold_first_ms"] {
            assert_eq!(r[c], "-", "{c}: {r:?}");
        }
    }
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(curves(&svg), 2, "one line per matrix (AUTO's)");
    for m in ["gen:lap3d7:8 f64", "gen:dense:20,30 f64"] {
        assert!(svg.contains(m), "{m} missing from the picture");
    }
}

#[test]
fn bench_cold_runs_a_fresh_process_per_row_and_out_writes_the_end_to_end_picture() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let o = tessera(&[
        "--backend",
        "host",
        "bench",
        "gen:lap3d7:8",
        "--methods",
        "auto,csr_vector",
        "--repeat",
        "3",
        "--cold",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let text = std::fs::read_to_string(out_dir.join("bench.csv")).unwrap();
    let rows = csv_rows(&text);
    assert_eq!(rows.len(), 2);
    for r in &rows {
        let cold: f64 = r["cold_first_ms"]
            .parse()
            .unwrap_or_else(|_| panic!("{r:?}"));
        assert!(cold > 0.0, "{r:?}");
    }
    let svg = std::fs::read_to_string(out_dir.join("e2e.svg")).unwrap();
    assert_eq!(curves(&svg), 1);

    // The child itself: one line, the milliseconds; a check of its product; clear errors.
    let cache = dir.path().join("cache");
    let o = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args([
            "--backend",
            "host",
            "cold-first",
            "gen:lap3d7:8",
            "--methods",
            "hola",
        ])
        .env("TESSERA_CACHE_DIR", &cache)
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{out}\n{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.trim().parse::<f64>().unwrap() > 0.0, "{out}");
    assert!(err.contains("from before the handle"), "{err}");
    for (method, why) in [
        ("cusparse", "cuSPARSE needs the CUDA backend"),
        ("fastest", "not a valid algorithm"),
        ("cusparse:alg9", "not a cuSPARSE algorithm"),
    ] {
        let o = tessera(&[
            "--backend",
            "host",
            "cold-first",
            "gen:lap3d7:8",
            "--methods",
            method,
        ]);
        let (_, err) = self::text(&o);
        assert_eq!(o.status.code(), Some(2), "{method}: {err}");
        assert!(err.contains(why), "{method}: {err}");
    }
}

#[test]
fn bench_help_defines_every_end_to_end_column() {
    let o = tessera(&["bench", "--help"]);
    let (out, _) = text(&o);
    assert!(o.status.success());
    for word in [
        "e2e_N_ms",
        "e2e_host_N_ms",
        "cuspe2e_N_ms",
        "cuspe2e_host_N_ms",
        "cold_first_ms",
        "--cold",
        "--e2e-plot",
        "TESSERA_CACHE_DIR",
        "median of 7",
    ] {
        assert!(out.contains(word), "bench --help lacks {word}");
    }
    // The child command is hidden from the tool's help.
    let (top, _) = text(&tessera(&["--help"]));
    assert!(!top.contains("cold-first"), "{top}");
}
