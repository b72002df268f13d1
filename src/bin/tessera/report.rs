//! The bench report: one row per matrix, value type and method, the terminal tables (the main
//! one and the end-to-end one), the CSV and the geometric-mean summaries.

use crate::bench::geomean;
use crate::e2e::{self, Pipeline, Source, NS};
use tessera::ValueType;

/// One line of the bench table: a tessera method or a cuSPARSE algorithm on one matrix.
pub(crate) struct BenchRow {
    pub(crate) matrix: String,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) nnz: usize,
    pub(crate) vt: ValueType,
    pub(crate) label: String,
    pub(crate) chosen: String,
    pub(crate) analysis_ms: Option<f64>,
    pub(crate) spmv_ms: Option<f64>,
    pub(crate) baseline_ms: Option<f64>,
    pub(crate) bytes: u64,
    pub(crate) error: f64,
    pub(crate) status: String,
    pub(crate) params: String,
    pub(crate) csr_bytes: f64,
    /// This row's own end-to-end pipelines (a tessera method: one; a cuSPARSE algorithm: with
    /// and without preprocess, those measured).
    pub(crate) e2e: Vec<Pipeline>,
    /// Every cuSPARSE pipeline of this matrix and value type: the end-to-end baseline.
    pub(crate) baseline_e2e: Vec<Pipeline>,
    pub(crate) cold_first_ms: Option<f64>,
}

impl BenchRow {
    pub(crate) fn ok(&self) -> bool {
        self.status == "ok"
    }
    pub(crate) fn is_cusparse(&self) -> bool {
        self.label.starts_with("cusparse")
    }
    pub(crate) fn speedup(&self) -> Option<f64> {
        match (self.ok(), self.spmv_ms, self.baseline_ms) {
            (true, Some(t), Some(b)) if !self.is_cusparse() => Some(b / t),
            _ => None,
        }
    }
    pub(crate) fn gbs(&self) -> Option<f64> {
        self.spmv_ms.map(|t| self.csr_bytes / (t * 1e6))
    }
    /// The time to `n` products, set-up included (the best of this row's pipelines).
    pub(crate) fn e2e_ms(&self, n: u64, from: Source) -> Option<f64> {
        e2e::best(&self.e2e, n, from).filter(|_| self.ok())
    }
    /// cuSPARSE's best pipeline at `n` products.
    pub(crate) fn cusp_e2e_ms(&self, n: u64, from: Source) -> Option<f64> {
        e2e::best(&self.baseline_e2e, n, from)
    }
    /// cuSPARSE's best time to `n` products over this (tessera) row's.
    pub(crate) fn e2e_speedup(&self, n: u64, from: Source) -> Option<f64> {
        match (self.e2e_ms(n, from), self.cusp_e2e_ms(n, from)) {
            (Some(t), Some(b)) if !self.is_cusparse() && t > 0.0 => Some(b / t),
            _ => None,
        }
    }
}

pub(crate) fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// Characters of a method's parameters the table shows. The columns before them take 163
/// characters, so a row (with a matrix name of up to 26) fits a 200-column terminal; the CSV
/// and `tessera info` keep the whole sentence.
pub(crate) const TABLE_PARAMS: usize = 37;

/// The table's short form of a parameter sentence: the text before its first `;` or `(` (the
/// whole text where that is empty), cut to at most `max` characters, at a space where one is
/// in the second half, with an ellipsis.
pub(crate) fn short_params(params: &str, max: usize) -> String {
    let head = params.split([';', '(']).next().unwrap_or("").trim();
    let head = if head.is_empty() { params.trim() } else { head };
    if head.chars().count() <= max {
        return head.to_string();
    }
    let cut: String = head.chars().take(max.saturating_sub(1)).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if cut[..i].chars().count() >= max / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", cut.trim_end_matches([' ', ',']))
}

/// A row of the table, the parameters in their short form.
pub(crate) fn table_row(r: &BenchRow, peak: Option<f64>) -> String {
    let method = if r.label == "auto" {
        format!("auto:{}", r.chosen)
    } else {
        r.label.clone()
    };
    let ms = match (r.ok(), r.spmv_ms) {
        (true, Some(t)) => format!("{t:.4}"),
        _ => r.status.clone(),
    };
    format!(
        "{:<26} {:>9} {:>10} {:<4} {method:<22} {:>11} {ms:>9} {:>9} {:>7} {:>8} {:>7} {:>6} {:>11} {:>9.2e}  {}",
        r.matrix,
        r.rows,
        r.nnz,
        r.vt,
        opt(r.analysis_ms, 3),
        opt(r.baseline_ms, 4),
        opt(r.speedup(), 2),
        opt(r.spmv_ms.map(|t| 2.0 * r.nnz as f64 / (t * 1e6)), 1),
        opt(r.gbs(), 0),
        opt(r.gbs().zip(peak).map(|(g, p)| 100.0 * g / p), 1),
        r.bytes,
        r.error,
        short_params(&r.params, TABLE_PARAMS)
    )
}

/// Prints a table row; a row that is not ok also gets its whole parameters or error on stderr,
/// which the table's short form may cut.
pub(crate) fn print_row(r: &BenchRow, peak: Option<f64>) {
    println!("{}", table_row(r, peak));
    if !r.ok() && short_params(&r.params, TABLE_PARAMS) != r.params.trim() {
        eprintln!(
            "  {} {} {} {}: {}",
            r.matrix, r.vt, r.label, r.status, r.params
        );
    }
}

pub(crate) fn csv_row(r: &BenchRow, peak: Option<f64>) -> String {
    let q = |t: &str| format!("\"{}\"", t.replace('"', "'"));
    [
        q(&r.matrix),
        r.rows.to_string(),
        r.cols.to_string(),
        r.nnz.to_string(),
        r.vt.to_string(),
        r.label.clone(),
        r.chosen.clone(),
        opt(r.analysis_ms, 4),
        opt(r.spmv_ms, 5),
        opt(r.analysis_ms.zip(r.spmv_ms).map(|(a, t)| a / t), 1),
        opt(r.baseline_ms, 5),
        opt(r.speedup(), 3),
        opt(r.spmv_ms.map(|t| 2.0 * r.nnz as f64 / (t * 1e6)), 2),
        opt(r.gbs(), 1),
        opt(r.gbs().zip(peak).map(|(g, p)| 100.0 * g / p), 2),
        r.bytes.to_string(),
        format!("{:.3e}", r.error),
        r.status.clone(),
        q(&r.params),
    ]
    .into_iter()
    .chain(E2E_COLUMNS.iter().flat_map(|&(cusparse, from)| {
        NS.map(|n| {
            opt(
                if cusparse {
                    r.cusp_e2e_ms(n, from)
                } else {
                    r.e2e_ms(n, from)
                },
                4,
            )
        })
    }))
    .chain([opt(r.cold_first_ms, 4)])
    .collect::<Vec<_>>()
    .join(",")
}

/// The columns of the first tessera versions, in their order.
pub(crate) const CSV_HEADER: &str = "matrix,rows,cols,nnz,type,method,chosen,analysis_ms,spmv_ms,analysis_in_spmvs,cusparse_best_ms,speedup_vs_cusparse,gflops,csr_gbps,pct_peak,device_bytes,max_rel_error,status,params";

/// The end-to-end column groups after them, each for every N of [`NS`]: (cuSPARSE's baseline
/// rather than the row's own, where the arrays start), named by [`e2e_prefix`].
/// (cuSPARSE's descriptors read device arrays in place: its borrowed column would repeat its
/// device one.)
pub(crate) const E2E_COLUMNS: [(bool, Source); 5] = [
    (false, Source::Device),
    (false, Source::Host),
    (true, Source::Device),
    (true, Source::Host),
    (false, Source::Borrowed),
];

pub(crate) fn e2e_prefix(cusparse: bool, from: Source) -> &'static str {
    match (cusparse, from) {
        (false, Source::Device) => "e2e_",
        (false, Source::Host) => "e2e_host_",
        (true, Source::Device) => "cuspe2e_",
        (true, Source::Host) => "cuspe2e_host_",
        (_, Source::Borrowed) => "e2e_borrow_",
    }
}

/// The CSV header: the old columns, then e2e_N_ms, e2e_host_N_ms, cuspe2e_N_ms,
/// cuspe2e_host_N_ms, e2e_borrow_N_ms (N = 1, 10, 100, 1000, 10000) and cold_first_ms.
pub(crate) fn csv_header() -> String {
    let mut h = CSV_HEADER.to_string();
    for (cusparse, from) in E2E_COLUMNS {
        for n in NS {
            h += &format!(",{}{n}_ms", e2e_prefix(cusparse, from));
        }
    }
    h + ",cold_first_ms"
}

/// N as the end-to-end table heads its columns: 1, 10, 100, 1k, 10k.
pub(crate) fn short_n(n: u64) -> String {
    if n >= 1000 && n % 1000 == 0 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// A ratio in at most 6 characters, about three significant digits ("-" for none).
pub(crate) fn fmt_ratio(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v >= 1000.0 => format!("{v:.1e}"),
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) if v >= 0.1 => format!("{v:.2}"),
        Some(v) if v >= 0.01 => format!("{v:.3}"),
        Some(v) => format!("{v:.0e}"),
    }
}

/// A time in ms in at most 6 characters ("-" for none).
pub(crate) fn fmt_ms6(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v < 10.0 => format!("{v:.3}"),
        Some(v) if v < 100.0 => format!("{v:.2}"),
        Some(v) if v < 1000.0 => format!("{v:.1}"),
        Some(v) if v < 99_999.5 => format!("{v:.0}"),
        Some(v) => format!("{v:.0e}"),
    }
}

/// The end-to-end table: per row its first product (ms, set-up included) from device arrays
/// and from host arrays, its speedup over cuSPARSE's best pipeline at each N from each (or,
/// when no row has a cuSPARSE baseline, as on the host backend, its time to N products), and
/// cold_first_ms. 208 characters wide (with a matrix name of up to 26). On the host backend
/// (`host`) the two groups are one measurement, and say so.
pub(crate) fn e2e_table(rows: &[BenchRow], host: bool) -> Vec<String> {
    let ns = NS.map(|n| format!("{:>6}", short_n(n))).join(" ");
    let baseline = rows.iter().any(|r| !r.baseline_e2e.is_empty());
    let (head, what) = if baseline {
        (
            "end to end: speedup over cuSPARSE's best pipeline after N products, set-up included; first product in ms (definitions: tessera bench --help)",
            "speedup",
        )
    } else {
        (
            "end to end: time to N products in ms, set-up included (no cuSPARSE baseline; definitions: tessera bench --help)",
            "ms",
        )
    };
    let (dev_group, host_group, borrow_group) = if host {
        (
            format!("{what}, host backend, N ="),
            format!("{what}, the same, N ="),
            format!("{what}, the same, N ="),
        )
    } else {
        (
            format!("{what}, CSR in device memory, N ="),
            format!("{what}, CSR on the host, N ="),
            format!("{what}, device CSR read in place, N ="),
        )
    };
    let mut out = vec![
        head.to_string(),
        format!(
            "{:<76}  {dev_group:<34}  {host_group:<34}  {:>10}  {borrow_group:<34}",
            "", ""
        )
        .trim_end()
        .to_string(),
        format!(
            "{:<26} {:<4} {:<22} {:>10} {:>10}  {ns}  {ns}  {:>10}  {ns} {:>11}",
            "matrix", "type", "method", "first_ms", "host_1st", "borrow_1st", "cold_1st_ms"
        ),
    ];
    for r in rows {
        let method = if r.label == "auto" {
            format!("auto:{}", r.chosen)
        } else {
            r.label.clone()
        };
        let sp = |from| {
            NS.map(|n| {
                let v = if baseline {
                    fmt_ratio(r.e2e_speedup(n, from))
                } else {
                    fmt_ms6(r.e2e_ms(n, from))
                };
                format!("{v:>6}")
            })
            .join(" ")
        };
        out.push(format!(
            "{:<26} {:<4} {method:<22} {:>10} {:>10}  {}  {}  {:>10}  {} {:>11}",
            r.matrix,
            r.vt,
            opt(r.e2e_ms(1, Source::Device), 3),
            opt(r.e2e_ms(1, Source::Host), 3),
            sp(Source::Device),
            sp(Source::Host),
            opt(r.e2e_ms(1, Source::Borrowed), 3),
            sp(Source::Borrowed),
            opt(r.cold_first_ms, 1)
        ));
    }
    out
}

/// Per tessera method, the geometric-mean end-to-end speedup over cuSPARSE's best pipeline at
/// each N (none without a baseline).
pub(crate) fn e2e_summary(rows: &[BenchRow]) -> Vec<String> {
    let mut labels: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| !r.is_cusparse()) {
        if !labels.contains(&r.label.as_str()) {
            labels.push(&r.label);
        }
    }
    let mut out = Vec::new();
    for l in labels {
        let at = |n: u64, from: Source| {
            let v: Vec<f64> = rows
                .iter()
                .filter(|r| r.label == l)
                .filter_map(|r| r.e2e_speedup(n, from))
                .collect();
            (geomean(&v), v.len())
        };
        if at(1, Source::Device).0.is_none() {
            continue;
        }
        let series = |from| {
            NS.map(|n| {
                let (g, k) = at(n, from);
                format!("{} ({k})", fmt_ratio(g))
            })
            .join(", ")
        };
        out.push(format!(
            "end-to-end geomean speedup vs cuSPARSE's best pipeline: {l} at N = 1, 10, 100, 1000, 10000 (matrices): from device arrays {}; from host arrays {}; from device arrays read in place {}",
            series(Source::Device),
            series(Source::Host),
            series(Source::Borrowed)
        ));
    }
    out
}
