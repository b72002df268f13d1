use super::*;

#[test]
fn short_params_keep_the_head_of_the_sentence() {
    let csr = "coop=4 repeat=1 block_size=128 grid=54 (Reguly-Giles fixed rule, 5.4; 1500 blocks)";
    assert_eq!(
        short_params(csr, 40),
        "coop=4 repeat=1 block_size=128 grid=54"
    );
    let bccoo =
        "block=1x1 tile=8 flags=u8 col=u16 slices=1 wg=64 s2-cache2xWG (fixed rule); fill 100%";
    assert_eq!(
        short_params(bccoo, 40),
        "block=1x1 tile=8 flags=u8 col=u16…"
    );
    let brc = "B1=32 B2=7 rep=1; fixed rule: pure BRC";
    assert_eq!(short_params(brc, 40), "B1=32 B2=7 rep=1");
    // No space in the second half: a hard cut; never more than `max` characters.
    let long = "x".repeat(100);
    assert_eq!(short_params(&long, 10), format!("{}…", "x".repeat(9)));
    for max in 1..60 {
        assert!(short_params(bccoo, max).chars().count() <= max, "{max}");
    }
    // Multi-byte text is cut at characters, not bytes.
    assert_eq!(short_params("αβγδεζηθικ", 5), "αβγδ…");
    // Empty, and a sentence that opens with its parenthesis.
    assert_eq!(short_params("", 40), "");
    assert_eq!(
        short_params("(libcusparse not found)", 40),
        "(libcusparse not found)"
    );
    assert_eq!(
        short_params("  threads=256 npt=4  ", 40),
        "threads=256 npt=4"
    );
}

/// A row as a GPU run makes it: tessera's BRC with one pipeline, cuSPARSE's four as the
/// end-to-end baseline.
fn sample_row(params: &str) -> BenchRow {
    let p = |name: &str, dev: f64, host: f64, spmv: f64| Pipeline {
        name: name.into(),
        first_dev_ms: dev,
        first_host_ms: host,
        first_borrow_ms: None,
        spmv_ms: spmv,
        measured: None,
    };
    BenchRow {
        matrix: "gen:uniform:1000000,16,1".into(),
        rows: 1_000_000,
        cols: 1_000_000,
        nnz: 16_000_000,
        vt: ValueType::F64,
        label: "brc".into(),
        chosen: "brc".into(),
        analysis_ms: Some(123.456),
        spmv_ms: Some(0.12345),
        baseline_ms: Some(0.2),
        bytes: 123_456_789,
        error: 1.9e-16,
        status: "ok".into(),
        params: params.into(),
        csr_bytes: 2.0e8,
        e2e: vec![p("brc", 150.0, 140.0, 0.12345)],
        baseline_e2e: vec![
            p("ALG_DEFAULT with preprocess", 9.0, 30.0, 0.2),
            p("ALG_DEFAULT without preprocess", 4.0, 25.0, 0.25),
            p("CSR_ALG2 with preprocess", 9.5, 30.5, 0.21),
            p("CSR_ALG2 without preprocess", 5.0, 26.0, 0.3),
        ],
        cold_first_ms: Some(1234.5),
    }
}

const BRC_PARAMS: &str = "B1=32 B2=7 rep=1 block_size=128 hybrid=off padding=1.003 (stored slots 11264 / nnz 11232; ELL 0), blocks=54, split_rows=0, empty_rows=0, atomic (float atomicAdd for split rows: not bitwise reproducible); fixed rule: pure BRC (HYB width 0)";

#[test]
fn a_table_row_fits_200_columns_and_the_csv_keeps_the_whole_sentence() {
    let params = BRC_PARAMS;
    let r = sample_row(params);
    let row = table_row(&r, Some(3000.0));
    assert!(
        row.chars().count() <= 200,
        "{} characters: {row}",
        row.chars().count()
    );
    assert!(row.ends_with("  B1=32 B2=7 rep=1 block_size=128…"), "{row}");
    assert!(csv_row(&r, Some(3000.0)).contains(&format!(",\"{params}\",")));
}

#[test]
fn the_csv_appends_the_end_to_end_columns_after_the_old_ones() {
    let header = csv_header();
    assert!(header.starts_with(&format!("{CSV_HEADER},e2e_1_ms,e2e_10_ms,")));
    assert!(header.ends_with(",e2e_borrow_1000_ms,e2e_borrow_10000_ms,cold_first_ms"));
    let names: Vec<&str> = header.split(',').collect();
    assert_eq!(
        names.len(),
        CSV_HEADER.split(',').count() + 5 * NS.len() + 1
    );
    let mut r = sample_row("no commas here");
    r.matrix = "lap3d7".into();
    r.e2e[0].first_borrow_ms = Some(50.0);
    let line = csv_row(&r, Some(3000.0));
    let cells: Vec<&str> = line.split(',').collect();
    assert_eq!(cells.len(), names.len());
    let cell = |name: &str| -> f64 {
        let i = names.iter().position(|n| *n == name).expect(name);
        cells[i]
            .parse()
            .unwrap_or_else(|_| panic!("{name} = {}", cells[i]))
    };
    let close = |a: f64, b: f64| (a - b).abs() < 1e-3;
    assert!(close(cell("e2e_1_ms"), 150.0));
    assert!(close(cell("e2e_1000_ms"), 150.0 + 999.0 * 0.12345));
    assert!(close(cell("e2e_host_10_ms"), 140.0 + 9.0 * 0.12345));
    // cuSPARSE's best pipeline changes with N: without preprocess first, with it later.
    assert!(close(cell("cuspe2e_1_ms"), 4.0));
    assert!(close(cell("cuspe2e_10000_ms"), 9.0 + 9999.0 * 0.2));
    assert!(close(cell("cuspe2e_host_1_ms"), 25.0));
    assert!(close(cell("cold_first_ms"), 1234.5));
    assert!(close(cell("e2e_borrow_10_ms"), 50.0 + 9.0 * 0.12345));
    // Read in place, tessera is compared with cuSPARSE's device pipeline (it reads in place).
    assert!(close(
        r.e2e_speedup(1, Source::Borrowed).unwrap(),
        4.0 / 50.0
    ));
    assert!(close(
        r.e2e_speedup(10000, Source::Device).unwrap(),
        (9.0 + 9999.0 * 0.2) / (150.0 + 9999.0 * 0.12345)
    ));
    // A failed row has no end-to-end times; cuSPARSE's stay.
    let mut failed = sample_row("x");
    failed.status = "FAILED".into();
    assert_eq!(failed.e2e_ms(10, Source::Device), None);
    assert_eq!(failed.e2e_speedup(10, Source::Device), None);
    assert_eq!(failed.cusp_e2e_ms(1, Source::Device), Some(4.0));
}

#[test]
fn the_end_to_end_table_fits_210_columns() {
    let mut rows = vec![sample_row(BRC_PARAMS)];
    let mut auto = sample_row("");
    auto.label = "auto".into();
    auto.matrix = "a-matrix-name-of-26-chars!".into();
    auto.e2e[0].first_dev_ms = 123_456.0;
    rows.push(auto);
    let mut cus = sample_row("");
    cus.label = "cusparse:ALG_DEFAULT".into();
    rows.push(cus);
    let lines = e2e_table(&rows, false);
    for l in &lines {
        assert!(
            l.chars().count() <= 210,
            "{} characters: {l}",
            l.chars().count()
        );
    }
    // The columns line up: every row ends where the header does.
    let width = lines[2].chars().count();
    assert!(
        lines[3..].iter().all(|l| l.chars().count() == width),
        "{lines:#?}"
    );
    assert!(lines[0].contains("speedup over cuSPARSE"), "{}", lines[0]);
    assert!(lines[4].contains("auto:brc"), "{}", lines[4]);
    // No baseline anywhere (host backend): times instead of speedups.
    for r in &mut rows {
        r.baseline_e2e.clear();
    }
    let lines = e2e_table(&rows, true);
    assert!(lines[1].contains("ms, host backend, N ="), "{}", lines[1]);
    assert!(
        lines[0].contains("time to N products in ms"),
        "{}",
        lines[0]
    );
    assert!(lines[3].contains("150.0"), "{}", lines[3]);
    assert!(e2e_summary(&rows).is_empty());
}

#[test]
fn ratios_and_times_fit_six_characters() {
    for v in [0.0001, 0.004, 0.05, 0.5, 1.234, 12.34, 123.4, 1234.0, 1e7] {
        assert!(
            fmt_ratio(Some(v)).chars().count() <= 6,
            "{v}: {}",
            fmt_ratio(Some(v))
        );
        assert!(
            fmt_ms6(Some(v)).chars().count() <= 6,
            "{v}: {}",
            fmt_ms6(Some(v))
        );
    }
    assert_eq!(fmt_ratio(Some(1.234)), "1.23");
    assert_eq!(fmt_ms6(Some(99_999.0)), "99999");
    assert_eq!(fmt_ratio(None), "-");
    assert_eq!(short_n(10000), "10k");
    assert_eq!(short_n(100), "100");
}

#[test]
fn suite_help_lists_every_generated_matrix() {
    use clap::CommandFactory;
    let cli = crate::Cli::command();
    let bench = cli.find_subcommand("bench").expect("a bench command");
    let help = bench
        .get_arguments()
        .find(|a| a.get_id() == "suite")
        .and_then(|a| a.get_help())
        .expect("--suite has help")
        .to_string();
    for g in SUITE_GENERATED {
        assert!(
            help.contains(&format!("{g},")) || help.contains(&format!("{g})")),
            "{g}: {help}"
        );
    }
}
