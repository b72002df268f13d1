use super::*;

const METHODS: [&str; 6] = ["auto", "csr-scalar", "csr-vector", "merge", "sell", "ell"];

/// 25 matrices × 6 methods, with some failures, speedups from 0.3× to 6× and peaks up to 110%.
fn sample() -> (Vec<SpeedupRow>, Vec<PeakRow>) {
    let names: Vec<String> = (0..25)
        .map(|i| match i % 5 {
            0 => format!("lap3d7_{i} f64"),
            1 => format!("webbase-1M-{i} f32"),
            2 => format!("circuit_{i}"),
            3 => format!("GAP-twitter<&>{i}"),
            _ => format!("nlpkkt{}", 80 + i),
        })
        .collect();
    let mut speedups = Vec::new();
    let mut peaks = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let mut row = Vec::new();
        for (j, m) in METHODS.iter().enumerate() {
            let x = ((i * 7 + j * 13) % 23) as f64 / 22.0;
            let s = (0.3f64.ln() + x * (6.0f64 / 0.3).ln()).exp();
            let v = ((i + j) % 11 != 3).then_some(s);
            row.push((m.to_string(), v));
            if v.is_some() {
                peaks.push(PeakRow {
                    method: m.to_string(),
                    matrix: name.clone(),
                    pct_peak: 110.0 * x,
                });
            }
        }
        peaks.push(PeakRow {
            method: "cusparse:default".into(),
            matrix: name.clone(),
            pct_peak: 40.0 + (i % 7) as f64 * 5.0,
        });
        speedups.push(SpeedupRow {
            matrix: name.clone(),
            speedups: row,
        });
    }
    (speedups, peaks)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[test]
fn draws_both_panels_with_every_matrix_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/bench.svg");
    let (speedups, peaks) = sample();
    draw(&path, "tessera bench — test GPU", &speedups, &peaks).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.len() > 10_000, "only {} bytes", svg.len());
    assert!(svg.trim_start().starts_with("<svg"), "{}", &svg[..100]);
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(svg.matches("<rect").count() > 25 * 6 * 2 - 40);
    for r in &speedups {
        assert!(svg.contains(&escape(&r.matrix)), "{} missing", r.matrix);
    }
    for needle in [
        "tessera bench — test GPU",
        "Speedup over cuSPARSE",
        "% of peak bandwidth",
        "cusparse:default",
        "csr-vector (geo-mean",
        "failed / n/a",
        "rotate(270",
    ] {
        assert!(svg.contains(needle), "{needle} missing");
    }
    // No font is embedded or referenced: the viewer's sans-serif renders the text.
    assert!(!svg.contains("@font-face") && !svg.contains("<image"));
}

#[test]
fn draws_empty_and_degenerate_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.svg");
    draw(&path, "empty", &[], &[]).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.contains("no speedups") && svg.contains("no % of peak"));

    // Host backend: rows but no baseline; one method; odd values.
    let rows = vec![
        SpeedupRow {
            matrix: "only".into(),
            speedups: vec![("auto".into(), None)],
        },
        SpeedupRow {
            matrix: "x".repeat(100),
            speedups: vec![("auto".into(), Some(f64::NAN))],
        },
    ];
    let peaks = vec![PeakRow {
        method: "auto".into(),
        matrix: "only".into(),
        pct_peak: f64::INFINITY,
    }];
    draw(&path, "host", &rows, &peaks).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.contains("only") && svg.contains("all failed or n/a"));
    assert!(svg.contains(&format!("{}…", "x".repeat(MAX_LABEL_CHARS - 1))));
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
}

#[test]
fn reports_an_unwritable_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let e = draw(&file.join("x.svg"), "t", &[], &[]).unwrap_err();
    assert!(e.contains("file"), "{e}");
}

/// The SVG polylines of width 2: the end-to-end picture's matrix lines (the axes and ticks
/// are polylines of width 1).
fn curves(svg: &str) -> usize {
    svg.matches("<polyline")
        .zip(svg.split("<polyline").skip(1))
        .filter(|(_, rest)| {
            rest.split('>')
                .next()
                .unwrap_or("")
                .contains("stroke-width=\"2\"")
        })
        .count()
}

#[test]
fn draws_one_end_to_end_line_per_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/e2e.svg");
    let ns = [1.0f64, 10.0, 100.0, 1000.0, 10000.0];
    // 25 matrices (colours and markers cycle), speedups from 0.005x to 3x; one line with a
    // NaN and a zero (dropped points), one with no usable point at all (no line).
    let mut lines: Vec<E2eLine> = (0..25)
        .map(|i| E2eLine {
            matrix: format!("matrix<{i}> f64 (hola)"),
            points: ns
                .iter()
                .map(|&n| (n, 0.005 * (1.0 + i as f64 / 10.0) * n.powf(0.6)))
                .collect(),
        })
        .collect();
    lines[3].points[1].1 = f64::NAN;
    lines[3].points[2].1 = 0.0;
    lines.push(E2eLine {
        matrix: "none".into(),
        points: vec![(10.0, f64::INFINITY)],
    });
    draw_e2e(
        &path,
        "end to end — test GPU",
        "auto: speedup",
        "speedup (×)",
        &lines,
    )
    .unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.trim_start().starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(
        curves(&svg),
        25,
        "one polyline per matrix with a usable point"
    );
    for needle in [
        "end to end — test GPU",
        "auto: speedup",
        "N products (log scale)",
        "matrix&lt;24&gt; f64 (hola)",
        "10000",
    ] {
        assert!(svg.contains(needle), "{needle} missing");
    }
    assert!(
        svg.contains("<circle") && svg.contains("<polygon"),
        "markers"
    );
    assert!(!svg.contains(">none<"), "no legend entry without a line");
    assert!(!svg.contains("NaN") && !svg.contains("inf"));

    // Nothing to draw: the axes and a sentence, no curve.
    draw_e2e(&path, "host", "c", "y", &[]).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert_eq!(curves(&svg), 0);
    assert!(svg.contains("no end-to-end data"));
}

#[test]
fn log_ticks_and_numbers() {
    assert_eq!(log_ticks(0.74, 1.35), vec![0.8, 0.9, 1.0, 1.1, 1.2, 1.3]);
    let wide = log_ticks(0.2, 8.0);
    assert!(
        wide.contains(&1.0) && wide.len() <= 10 && wide.len() >= 4,
        "{wide:?}"
    );
    assert!(log_ticks(1e-9, 1e9).len() <= 10);
    assert_eq!(fmt_num(1.0), "1");
    assert_eq!(fmt_num(0.5), "0.5");
    assert_eq!(fmt_num(2.5), "2.5");
    assert_eq!(fmt_num(120.0), "120");
    assert_eq!(fmt_num(1.4213), "1.42");
}
