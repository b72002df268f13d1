//! The pictures of `tessera bench`. `--plot`: one SVG with two panels sharing the matrix axis —
//! (top) speedup over cuSPARSE as grouped bars on a log scale, anchored at 1×, and (bottom) % of
//! peak bandwidth as grouped bars — with one colour per method and a legend strip under the title.
//! `--e2e-plot` ([`draw_e2e`]): one line per matrix of an end-to-end ratio against the number of
//! products N, both axes on a log scale, with a reference line at 1.
//!
//! Text is written as SVG `<text>` elements with `font-family="sans-serif"`, left for the viewer
//! to render: nothing here reads, embeds or rasterizes a font (plotters is built without its
//! `ttf`/`ab_glyph` features and sizes labels by its built-in estimate), so this runs on a machine
//! with no fonts and no network.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;
use std::path::Path;

/// One bar group: a matrix and, per method label, its speedup over the cuSPARSE baseline (None = failed / n/a).
pub struct SpeedupRow {
    pub matrix: String,
    pub speedups: Vec<(String, Option<f64>)>,
}

/// One point: method label, matrix, % of peak bandwidth.
pub struct PeakRow {
    pub method: String,
    pub matrix: String,
    pub pct_peak: f64,
}

/// Tableau 10: distinct, colour-blind-friendly hues; more methods than this cycle.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4E, 0x79, 0xA7),
    RGBColor(0xF2, 0x8E, 0x2B),
    RGBColor(0xE1, 0x57, 0x59),
    RGBColor(0x76, 0xB7, 0xB2),
    RGBColor(0x59, 0xA1, 0x4F),
    RGBColor(0xED, 0xC9, 0x48),
    RGBColor(0xB0, 0x7A, 0xA1),
    RGBColor(0xFF, 0x9D, 0xA7),
    RGBColor(0x9C, 0x75, 0x5F),
    RGBColor(0xBA, 0xB0, 0xAC),
];
const SHADE: RGBColor = RGBColor(0xF2, 0xF2, 0xF2);
const GRID: RGBColor = RGBColor(0xD0, 0xD0, 0xD0);
const REFERENCE: RGBColor = RGBColor(0x30, 0x30, 0x30);
const FAILED: RGBColor = RGBColor(0xC0, 0x00, 0x00);

/// Font sizes in plotters units (the SVG's font-size is these / 1.24).
const TITLE_PX: f64 = 26.0;
const CAPTION_PX: f64 = 19.0;
const TEXT_PX: f64 = 15.0;
/// Rough advance of one character of sans-serif text at TEXT_PX, for layout only.
const CHAR_W: f64 = 7.2;
/// Matrix labels longer than this are shortened with an ellipsis.
const MAX_LABEL_CHARS: usize = 40;
const LEFT: u32 = 90;
const RIGHT: u32 = 30;

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult<T = ()> = Result<T, DrawingAreaErrorKind<std::io::Error>>;

fn font(px: f64) -> TextStyle<'static> {
    TextStyle::from((FontFamily::SansSerif, px))
}

/// Draws two panels into one SVG file at `path`: (top) speedup vs cuSPARSE per matrix as grouped
/// bars on a log scale from the 1× line, (bottom) % of peak bandwidth per method per matrix as
/// grouped bars with a line at 100%. Creates `path`'s folder if missing. Returns an error string
/// on failure.
pub fn draw(
    path: &Path,
    title: &str,
    speedups: &[SpeedupRow],
    peaks: &[PeakRow],
) -> Result<(), String> {
    let svg = render(title, speedups, peaks)?;
    if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()))
}

/// The matrices and methods of both panels, in order of first appearance.
struct Data<'a> {
    matrices: Vec<&'a str>,
    /// Every method of either panel: its index is its colour.
    methods: Vec<&'a str>,
    /// Methods of the speedup panel, in `methods` order: its index is the bar's slot in a group.
    top_methods: Vec<&'a str>,
    /// Methods of the % of peak panel, likewise.
    bottom_methods: Vec<&'a str>,
}

fn push_new<'a>(v: &mut Vec<&'a str>, s: &'a str) {
    if !v.contains(&s) {
        v.push(s);
    }
}

impl<'a> Data<'a> {
    fn new(speedups: &'a [SpeedupRow], peaks: &'a [PeakRow]) -> Self {
        let (mut matrices, mut methods) = (Vec::new(), Vec::new());
        for r in speedups {
            push_new(&mut matrices, &r.matrix);
            for (m, _) in &r.speedups {
                push_new(&mut methods, m);
            }
        }
        for p in peaks {
            push_new(&mut matrices, &p.matrix);
            push_new(&mut methods, &p.method);
        }
        let in_top = |m: &&str| {
            speedups
                .iter()
                .any(|r| r.speedups.iter().any(|(l, _)| l == m))
        };
        let top_methods = methods.iter().copied().filter(in_top).collect();
        let bottom_methods = methods
            .iter()
            .copied()
            .filter(|m| peaks.iter().any(|p| p.method == *m))
            .collect();
        Data {
            matrices,
            methods,
            top_methods,
            bottom_methods,
        }
    }

    fn color(&self, method: &str) -> RGBColor {
        let i = self.methods.iter().position(|m| *m == method).unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    }

    fn matrix_index(&self, matrix: &str) -> f64 {
        self.matrices.iter().position(|m| *m == matrix).unwrap_or(0) as f64
    }
}

/// A speedup that can be drawn on a log axis.
fn usable(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite() && *v > 0.0)
}

fn geomean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

fn short_label(s: &str) -> String {
    if s.chars().count() <= MAX_LABEL_CHARS {
        s.to_string()
    } else {
        s.chars().take(MAX_LABEL_CHARS - 1).chain(['…']).collect()
    }
}

fn text_width(s: &str) -> u32 {
    (s.chars().count() as f64 * CHAR_W).ceil() as u32
}

/// A number with at most three significant digits and no trailing zeros.
fn fmt_num(v: f64) -> String {
    if v != 0.0 && v.abs() < 0.01 {
        return format!("{v:.0e}");
    }
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else if v.abs() >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Tick values for a log axis over [lo, hi]: the finest of a few 1-2-5-like series that gives at
/// most 10 ticks (for very wide ranges, every k-th decade).
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    const SERIES: [&[f64]; 5] = [
        &[
            1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0,
            9.0,
        ],
        &[1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0],
        &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0],
        &[1.0, 2.0, 5.0],
        &[1.0],
    ];
    let ticks = |series: &[f64]| -> Vec<f64> {
        let (e0, e1) = (lo.log10().floor() as i32 - 1, hi.log10().ceil() as i32 + 1);
        (e0..=e1)
            .flat_map(|e| {
                series.iter().map(move |m| {
                    if e < 0 {
                        m / 10f64.powi(-e)
                    } else {
                        m * 10f64.powi(e)
                    }
                })
            })
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    for s in SERIES {
        let t = ticks(s);
        if t.len() <= 10 {
            return t;
        }
    }
    let t = ticks(&[1.0]);
    let step = t.len().div_ceil(10);
    t.into_iter().step_by(step).collect()
}

/// Pixel sizes of the picture, from the number of matrices and methods and the label lengths.
struct Layout {
    width: u32,
    height: u32,
    title_h: u32,
    legend_h: u32,
    top_h: u32,
    label_h: u32,
    legend: Vec<(u32, u32, usize)>,
}

const TITLE_H: u32 = 48;
const LEGEND_ROW_H: u32 = 24;
const CAPTION_H: u32 = 34;
const TOP_PLOT_H: u32 = 380;
const BOTTOM_PLOT_H: u32 = 280;

impl Layout {
    fn new(data: &Data, legend_entries: &[String]) -> Self {
        let n = data.matrices.len().max(1) as u32;
        let k = data.top_methods.len().max(data.bottom_methods.len()).max(1) as u32;
        let bar_px = if n * k > 200 { 7 } else { 10 };
        let group_px = (bar_px * k + 14).max(26);
        let width = (LEFT + RIGHT + n * group_px).max(900);
        let longest = data
            .matrices
            .iter()
            .map(|m| text_width(&short_label(m)))
            .max()
            .unwrap_or(0);
        let label_h = longest + 16;
        // Legend entries flow left to right and wrap: (x, row, entry index).
        let mut legend = Vec::new();
        let (mut x, mut row) = (LEFT, 0);
        for (i, e) in legend_entries.iter().enumerate() {
            let w = 22 + text_width(e) + 28;
            if x > LEFT && x + w > width - RIGHT {
                x = LEFT;
                row += 1;
            }
            legend.push((x, row, i));
            x += w;
        }
        let legend_h = if legend.is_empty() {
            0
        } else {
            (row + 1) * LEGEND_ROW_H + 8
        };
        let top_h = CAPTION_H + TOP_PLOT_H + label_h;
        let bottom_h = CAPTION_H + BOTTOM_PLOT_H + label_h;
        Layout {
            width,
            height: TITLE_H + legend_h + top_h + bottom_h + 10,
            title_h: TITLE_H,
            legend_h,
            top_h,
            label_h,
            legend,
        }
    }
}

/// The SVG text of the picture.
fn render(title: &str, speedups: &[SpeedupRow], peaks: &[PeakRow]) -> Result<String, String> {
    let data = Data::new(speedups, peaks);
    let any_failed = speedups
        .iter()
        .any(|r| r.speedups.iter().any(|(_, v)| usable(*v).is_none()));
    let mut entries: Vec<String> = data
        .methods
        .iter()
        .map(|m| {
            let v: Vec<f64> = speedups
                .iter()
                .flat_map(|r| &r.speedups)
                .filter(|(l, _)| l == m)
                .filter_map(|(_, v)| usable(*v))
                .collect();
            match geomean(&v) {
                Some(g) => format!("{m} (geo-mean {}×)", fmt_num(g)),
                None => m.to_string(),
            }
        })
        .collect();
    if any_failed {
        entries.push("failed / n/a".to_string());
    }
    let layout = Layout::new(&data, &entries);
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (layout.width, layout.height)).into_drawing_area();
        draw_all(
            &root, &layout, &data, title, &entries, any_failed, speedups, peaks,
        )
        .and_then(|()| root.present())
        .map_err(|e| format!("drawing the plot: {e}"))?;
    }
    Ok(svg)
}

#[allow(clippy::too_many_arguments)]
fn draw_all(
    root: &Area,
    layout: &Layout,
    data: &Data,
    title: &str,
    entries: &[String],
    any_failed: bool,
    speedups: &[SpeedupRow],
    peaks: &[PeakRow],
) -> DrawResult {
    root.fill(&WHITE)?;
    let (head, rest) = root.split_vertically(layout.title_h);
    head.draw_text(
        title,
        &TextStyle::from((FontFamily::SansSerif, TITLE_PX, FontStyle::Bold))
            .pos(Pos::new(HPos::Center, VPos::Center)),
        (layout.width as i32 / 2, layout.title_h as i32 / 2 + 4),
    )?;
    let (legend, rest) = rest.split_vertically(layout.legend_h);
    for &(x, row, i) in &layout.legend {
        let (x, y) = (x as i32, (row * LEGEND_ROW_H + LEGEND_ROW_H / 2) as i32);
        if any_failed && i == entries.len() - 1 {
            legend.draw(&Cross::new((x + 7, y), 5, FAILED.stroke_width(2)))?;
        } else {
            let c = data.color(data.methods[i]);
            legend.draw(&Rectangle::new([(x, y - 7), (x + 14, y + 7)], c.filled()))?;
        }
        legend.draw_text(
            &entries[i],
            &font(TEXT_PX).pos(Pos::new(HPos::Left, VPos::Center)),
            (x + 22, y),
        )?;
    }
    let (top, bottom) = rest.split_vertically(layout.top_h);
    speedup_panel(root, &top, layout, data, speedups)?;
    peak_panel(root, &bottom, layout, data, peaks)
}

/// The x axis shared by both panels: one unit per matrix (matrix i centred on i), ticks at the
/// group centres. (plotters' f64 axis with custom key points has no mesh formatter, hence this.)
struct MatrixAxis(usize);

impl Ranged for MatrixAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let r = self.range();
        let t = (v - r.start) / (r.end - r.start);
        limit.0 + (f64::from(limit.1 - limit.0) * t + 1e-3).floor() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            (0..self.0).map(|i| i as f64).collect()
        }
    }

    fn range(&self) -> Range<f64> {
        -0.5..self.0.max(1) as f64 - 0.5
    }
}

/// Shades every other matrix's column, from `lo` to `hi` on the y axis.
fn shade_columns<Y: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<SVGBackend, Cartesian2d<MatrixAxis, Y>>,
    data: &Data,
    lo: f64,
    hi: f64,
) -> DrawResult {
    chart.draw_series((0..data.matrices.len()).step_by(2).map(|i| {
        let c = i as f64;
        Rectangle::new([(c - 0.5, lo), (c + 0.5, hi)], SHADE.filled())
    }))?;
    Ok(())
}

/// Matrix names under a panel, rotated to read upwards and ending at the axis.
fn matrix_labels<Y: Ranged<ValueType = f64>>(
    root: &Area,
    chart: &ChartContext<SVGBackend, Cartesian2d<MatrixAxis, Y>>,
    data: &Data,
    y_any: f64,
) -> DrawResult {
    let y0 = chart.plotting_area().get_pixel_range().1.end + 8;
    let style = font(TEXT_PX)
        .transform(FontTransform::Rotate270)
        .pos(Pos::new(HPos::Right, VPos::Center));
    for (i, m) in data.matrices.iter().enumerate() {
        let (x, _) = chart.backend_coord(&(i as f64, y_any));
        root.draw_text(&short_label(m), &style, (x, y0))?;
    }
    Ok(())
}

/// Left edge and width, in x units, of the bar of slot `slot` of `k` in matrix `i`'s group.
fn bar_span(i: f64, slot: usize, k: usize) -> (f64, f64) {
    let w = 0.8 / k.max(1) as f64;
    (i - 0.4 + slot as f64 * w, w)
}

/// A filled bar from `y0` to `y1`, one pixel narrower on the right to separate neighbours.
fn bar(x0: f64, w: f64, y0: f64, y1: f64, c: RGBColor) -> Rectangle<(f64, f64)> {
    let mut r = Rectangle::new([(x0, y0), (x0 + w, y1)], c.filled());
    r.set_margin(0, 0, 0, 1);
    r
}

fn no_data(area: &Area, layout: &Layout, text: &str) -> DrawResult {
    let (w, h) = area.dim_in_pixel();
    // A quarter of the way down the plot, clear of the 1× and 100% lines.
    let top = CAPTION_H as i32;
    let y = top + (h as i32 - layout.label_h as i32 - top) / 4;
    area.draw_text(
        text,
        &font(CAPTION_PX)
            .color(&RGBColor(0x70, 0x70, 0x70))
            .pos(Pos::new(HPos::Center, VPos::Center)),
        (w as i32 / 2, y),
    )
}

fn speedup_panel(
    root: &Area,
    area: &Area,
    layout: &Layout,
    data: &Data,
    speedups: &[SpeedupRow],
) -> DrawResult {
    let values: Vec<f64> = speedups
        .iter()
        .flat_map(|r| &r.speedups)
        .filter_map(|(_, v)| usable(*v))
        .collect();
    let lo = values.iter().copied().fold(1.0, f64::min) / 1.35;
    let hi = values.iter().copied().fold(1.0, f64::max) * 1.35;
    let mut chart = ChartBuilder::on(area)
        .caption(
            "Speedup over cuSPARSE (higher is better, log scale)",
            font(CAPTION_PX),
        )
        .margin_left(8)
        .margin_right(RIGHT)
        .x_label_area_size(layout.label_h)
        .y_label_area_size(LEFT)
        .build_cartesian_2d(
            MatrixAxis(data.matrices.len()),
            (lo..hi).log_scale().with_key_points(log_ticks(lo, hi)),
        )?;
    shade_columns(&mut chart, data, lo, hi)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(GRID)
        .x_label_style(font(TEXT_PX).color(&TRANSPARENT))
        .y_label_style(font(TEXT_PX))
        .y_label_formatter(&|v| format!("{}×", fmt_num(*v)))
        .y_desc("speedup (×)")
        .axis_desc_style(font(TEXT_PX))
        .draw()?;
    let k = data.top_methods.len();
    let mut bars = Vec::new();
    let mut failed = Vec::new();
    for r in speedups {
        let i = data.matrix_index(&r.matrix);
        for (m, v) in &r.speedups {
            let slot = data.top_methods.iter().position(|t| t == m).unwrap_or(0);
            let (x0, w) = bar_span(i, slot, k);
            match usable(*v) {
                Some(v) => bars.push(bar(x0, w, 1.0, v, data.color(m))),
                None => failed.push(Cross::new((x0 + w / 2.0, 1.0), 4, FAILED.stroke_width(2))),
            }
        }
    }
    chart.draw_series(bars)?;
    let n = data.matrices.len().max(1) as f64;
    chart.draw_series([PathElement::new(
        [(-0.5, 1.0), (n - 0.5, 1.0)],
        REFERENCE.stroke_width(2),
    )])?;
    chart.draw_series(failed)?;
    matrix_labels(root, &chart, data, 1.0)?;
    if speedups.is_empty() {
        no_data(area, layout, "no speedups (no cuSPARSE baseline)")?;
    } else if values.is_empty() {
        no_data(area, layout, "no method has a speedup (all failed or n/a)")?;
    }
    Ok(())
}

fn peak_panel(
    root: &Area,
    area: &Area,
    layout: &Layout,
    data: &Data,
    peaks: &[PeakRow],
) -> DrawResult {
    let max = peaks
        .iter()
        .map(|p| p.pct_peak)
        .filter(|v| v.is_finite())
        .fold(100.0, f64::max);
    let hi = max * 1.08;
    let mut chart = ChartBuilder::on(area)
        .caption("% of peak bandwidth (CSR bytes / time)", font(CAPTION_PX))
        .margin_left(8)
        .margin_right(RIGHT)
        .x_label_area_size(layout.label_h)
        .y_label_area_size(LEFT)
        .build_cartesian_2d(MatrixAxis(data.matrices.len()), 0.0..hi)?;
    shade_columns(&mut chart, data, 0.0, hi)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .y_labels(8)
        .x_label_style(font(TEXT_PX).color(&TRANSPARENT))
        .y_label_style(font(TEXT_PX))
        .y_label_formatter(&|v| format!("{}%", fmt_num(*v)))
        .y_desc("% of peak")
        .axis_desc_style(font(TEXT_PX))
        .draw()?;
    let k = data.bottom_methods.len();
    chart.draw_series(peaks.iter().filter(|p| p.pct_peak.is_finite()).map(|p| {
        let slot = data
            .bottom_methods
            .iter()
            .position(|m| *m == p.method)
            .unwrap_or(0);
        let (x0, w) = bar_span(data.matrix_index(&p.matrix), slot, k);
        bar(x0, w, 0.0, p.pct_peak.max(0.0), data.color(&p.method))
    }))?;
    let n = data.matrices.len().max(1) as f64;
    chart.draw_series([PathElement::new(
        [(-0.5, 100.0), (n - 0.5, 100.0)],
        REFERENCE.stroke_width(2),
    )])?;
    matrix_labels(root, &chart, data, 0.0)?;
    if peaks.is_empty() {
        no_data(area, layout, "no % of peak data (needs a GPU)")?;
    }
    Ok(())
}

/// One line of the end-to-end picture: a matrix and its (N, value) points, N ascending.
pub struct E2eLine {
    pub matrix: String,
    pub points: Vec<(f64, f64)>,
}

/// The end-to-end picture's N axis: 1 to 10,000 products.
const E2E_N: Range<f64> = 1.0..10_000.0;
const E2E_PLOT_H: u32 = 520;
const E2E_X_LABELS_H: u32 = 56;

/// Draws the end-to-end picture into one SVG file at `path`: a line per matrix (with a marker
/// at each point; the colour and marker cycle, and the legend under the title names them) of
/// `y_desc` against N on log-log axes, under the caption `caption`, with a reference line at 1.
/// Each line is the picture's only SVG `<polyline>` for its matrix (the reference line and the
/// legend's strokes are `<rect>`s). Creates `path`'s folder if missing.
pub fn draw_e2e(
    path: &Path,
    title: &str,
    caption: &str,
    y_desc: &str,
    lines: &[E2eLine],
) -> Result<(), String> {
    // A matrix with no point to show gets no line and no legend entry.
    let lines: Vec<&E2eLine> = lines.iter().filter(|l| !e2e_points(l).is_empty()).collect();
    let svg = render_e2e(title, caption, y_desc, &lines)?;
    if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()))
}

/// The points of `line` that a log-log plot can show.
fn e2e_points(line: &E2eLine) -> Vec<(f64, f64)> {
    line.points
        .iter()
        .copied()
        .filter(|&(n, v)| (E2E_N.start..=E2E_N.end).contains(&n) && usable(Some(v)).is_some())
        .collect()
}

/// A line's marker: 0 a filled circle, 1 an open circle, 2 a triangle, by the line's index
/// (the colour cycles every 10 lines, the marker every 10 after that).
fn e2e_marker(i: usize) -> usize {
    (i / PALETTE.len()) % 3
}

fn render_e2e(
    title: &str,
    caption: &str,
    y_desc: &str,
    lines: &[&E2eLine],
) -> Result<String, String> {
    let width: u32 = 1000;
    let entries: Vec<String> = lines.iter().map(|l| short_label(&l.matrix)).collect();
    // Legend entries flow left to right and wrap: (x, row) per entry.
    let mut legend = Vec::new();
    let (mut x, mut row) = (LEFT, 0);
    for e in &entries {
        let w = 34 + text_width(e) + 24;
        if x > LEFT && x + w > width - RIGHT {
            x = LEFT;
            row += 1;
        }
        legend.push((x, row));
        x += w;
    }
    let legend_h = if entries.is_empty() {
        0
    } else {
        (row + 1) * LEGEND_ROW_H + 8
    };
    let height = TITLE_H + legend_h + CAPTION_H + E2E_PLOT_H + E2E_X_LABELS_H + 10;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        draw_e2e_all(
            &root, width, legend_h, &legend, &entries, title, caption, y_desc, lines,
        )
        .and_then(|()| root.present())
        .map_err(|e| format!("drawing the end-to-end plot: {e}"))?;
    }
    Ok(svg)
}

#[allow(clippy::too_many_arguments)]
fn draw_e2e_all(
    root: &Area,
    width: u32,
    legend_h: u32,
    legend: &[(u32, u32)],
    entries: &[String],
    title: &str,
    caption: &str,
    y_desc: &str,
    lines: &[&E2eLine],
) -> DrawResult {
    root.fill(&WHITE)?;
    let (head, rest) = root.split_vertically(TITLE_H);
    head.draw_text(
        title,
        &TextStyle::from((FontFamily::SansSerif, TITLE_PX, FontStyle::Bold))
            .pos(Pos::new(HPos::Center, VPos::Center)),
        (width as i32 / 2, TITLE_H as i32 / 2 + 4),
    )?;
    let (legend_area, plot_area) = rest.split_vertically(legend_h);
    let color = |i: usize| PALETTE[i % PALETTE.len()];
    for (i, &(x, row)) in legend.iter().enumerate() {
        let (x, y) = (x as i32, (row * LEGEND_ROW_H + LEGEND_ROW_H / 2) as i32);
        legend_area.draw(&Rectangle::new(
            [(x, y - 1), (x + 26, y + 1)],
            color(i).filled(),
        ))?;
        let (at, c) = ((x + 13, y), color(i));
        match e2e_marker(i) {
            0 => legend_area.draw(&Circle::new(at, 4, c.filled()))?,
            1 => legend_area.draw(&Circle::new(at, 4, c.stroke_width(2)))?,
            _ => legend_area.draw(&TriangleMarker::new(at, 5, c.filled()))?,
        }
        legend_area.draw_text(
            &entries[i],
            &font(TEXT_PX).pos(Pos::new(HPos::Left, VPos::Center)),
            (x + 34, y),
        )?;
    }
    let values: Vec<f64> = lines
        .iter()
        .flat_map(|l| e2e_points(l))
        .map(|(_, v)| v)
        .collect();
    let lo = values.iter().copied().fold(1.0, f64::min) / 1.35;
    let hi = values.iter().copied().fold(1.0, f64::max) * 1.35;
    let n_ticks: Vec<f64> = vec![1.0, 10.0, 100.0, 1000.0, 10000.0];
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(caption, font(CAPTION_PX))
        .margin_left(8)
        .margin_right(RIGHT)
        .x_label_area_size(E2E_X_LABELS_H)
        .y_label_area_size(LEFT)
        .build_cartesian_2d(
            E2E_N.log_scale().with_key_points(n_ticks),
            (lo..hi).log_scale().with_key_points(log_ticks(lo, hi)),
        )?;
    chart
        .configure_mesh()
        .bold_line_style(GRID)
        .x_label_style(font(TEXT_PX))
        .y_label_style(font(TEXT_PX))
        .x_label_formatter(&|v| format!("{}", v.round()))
        .y_label_formatter(&|v| fmt_num(*v))
        .x_desc("N products (log scale)")
        .y_desc(y_desc)
        .axis_desc_style(font(TEXT_PX))
        .draw()?;
    // The reference line at 1, a rectangle two pixels high (not a polyline: see draw_e2e).
    let (x0, y1) = chart.backend_coord(&(E2E_N.start, 1.0));
    let (x1, _) = chart.backend_coord(&(E2E_N.end, 1.0));
    root.draw(&Rectangle::new(
        [(x0, y1 - 1), (x1, y1 + 1)],
        REFERENCE.filled(),
    ))?;
    for (i, line) in lines.iter().enumerate() {
        let pts = e2e_points(line);
        if pts.is_empty() {
            continue;
        }
        let c = color(i);
        chart.draw_series([PathElement::new(pts.clone(), c.stroke_width(2))])?;
        match e2e_marker(i) {
            0 => chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 4, c.filled())))?,
            1 => chart.draw_series(
                pts.into_iter()
                    .map(|p| Circle::new(p, 4, c.stroke_width(2))),
            )?,
            _ => chart.draw_series(
                pts.into_iter()
                    .map(|p| TriangleMarker::new(p, 5, c.filled())),
            )?,
        };
    }
    if values.is_empty() {
        let (w, h) = plot_area.dim_in_pixel();
        plot_area.draw_text(
            "no end-to-end data (no method passed, or no baseline)",
            &font(CAPTION_PX)
                .color(&RGBColor(0x70, 0x70, 0x70))
                .pos(Pos::new(HPos::Center, VPos::Center)),
            (w as i32 / 2, h as i32 / 4),
        )?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "plot_tests.rs"]
mod tests;
