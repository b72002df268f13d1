//! TILE on a CUDA device: the f64 product on every shared matrix, the edge cases and TILE's
//! own (sizes not divisible by 16, long tile rows split across warps, dense blocks, the
//! seven-format matrix), the kernels against the host reference over the same arrays with
//! deferral forced on and off (`TileGpu::with_params` with an explicit `TileParams`), QUICK
//! and EXHAUSTIVE tuning, update_values (host and device memory, through both parts of the
//! value map), the deterministic variant. Without a GPU every test prints one skip line.

mod common;

use common::gpu::gpu;
use common::products::{assert_product, check_method, shared_matrix_files, x_for, EDGE_CASES};
use tessera::backend::cuda::csr::GpuCsr;
use tessera::backend::cuda::DeviceVec;
use tessera::methods::tile::cuda::{DownloadedFormat, TileGpu};
use tessera::methods::tile::params::TBALANCE_UNLIMITED;
use tessera::methods::tile::{format, reference, TileParams};
use tessera::methods::{GpuMethod, Request};
use tessera::{Algorithm, Csr, Handle, Matrix, Operation, Scalar, Tuning};

/// A plain and a deterministic handle.
fn gpus() -> Option<[Handle; 2]> {
    let h = gpu()?;
    let mut d = gpu()?;
    d.set_deterministic(true);
    Some([h, d])
}

/// TILE's own cases (as in tests/tile_host.rs).
const TILE_CASES: &[&str] = &[
    "gen:random:17,33,5,1",
    "gen:random:19,5000,300,4",
    "gen:dense:40,300",
    "gen:elasticity:5",
    "gen:stencil27:9",
    "gen:uniform:3001,9,3",
];

/// 48x48, nine tiles: CSR, COO, ELL / HYB, Dns, DnsRow / DnsCol, two empty (the unit test's
/// matrix in src/methods/tile/reference.rs).
fn seven_formats() -> Csr<f64> {
    let mut t = Vec::new();
    let mut put = |tr: usize, tc: usize, r: usize, c: usize| {
        let (gr, gc) = (tr * 16 + r, tc * 16 + c);
        t.push((gr, gc, 1.0 + ((48 * gr + gc) % 97) as f64 / 50.0));
    };
    for r in 0..16 {
        for j in 0..1 + r % 3 {
            put(0, 0, r, (r + 3 * j) % 16);
        }
        put(0, 2, r, r);
        put(0, 2, r, (r + 5) % 16);
        if r == 0 {
            (0..14).for_each(|c| put(1, 0, 0, c));
        } else {
            put(1, 0, r, r);
        }
        for c in 0..16 {
            if (r * 16 + c) % 5 != 0 {
                put(1, 1, r, c);
            }
        }
        put(2, 0, r, 4);
        put(2, 0, r, 9);
    }
    for (r, c) in [(0, 2), (5, 7), (9, 1)] {
        put(0, 1, r, c);
    }
    for c in 0..16 {
        put(1, 2, 3, c);
        put(1, 2, 10, c);
    }
    Csr::from_triplets(48, 48, &t).unwrap()
}

#[test]
fn tile_gpu_matches_the_f64_product_on_every_shared_matrix() {
    let Some(h) = gpu() else { return };
    let Some(files) = shared_matrix_files() else {
        return;
    };
    for f in &files {
        let (name, a) = tessera::io::load(f.to_str().unwrap()).unwrap();
        check_method(&h, &name, &a, Algorithm::Tile, Tuning::None);
    }
}

#[test]
fn tile_gpu_edge_cases_and_tile_shapes_match_the_f64_product_in_both_variants() {
    let Some(hs) = gpus() else { return };
    for h in &hs {
        check_method(
            h,
            "seven formats",
            &seven_formats(),
            Algorithm::Tile,
            Tuning::None,
        );
        for spec in EDGE_CASES.iter().chain(TILE_CASES) {
            let (name, a) = tessera::io::load(spec).unwrap();
            check_method(h, &name, &a, Algorithm::Tile, Tuning::None);
            let mut m = Matrix::from_csr(h, a.clone());
            m.analyze(h, Algorithm::Tile, Tuning::None).unwrap();
            let info = m.info();
            if h.deterministic() {
                assert!(info.deterministic, "{name}: {}", info.params);
            }
            assert!(info.device_bytes > 0 || a.rows() == 0, "{name}");
        }
    }
}

/// The kernels with explicit parameters against the host reference over the same arrays and
/// against the f64 product; then new values (host upload + refresh through the value map).
fn gpu_vs_reference<T: Scalar>(h: &Handle, name: &str, a64: &Csr<f64>, p: TileParams) {
    let dev = h.cuda().unwrap();
    let stream = h.cuda_stream();
    let a = a64.convert::<T>();
    let stats = a.stats();
    let csr = upload(h, &a);
    let req = Request {
        host: Some(&a),
        stats: &stats,
        tuning: Tuning::None,
        deterministic: false,
    };
    let m = TileGpu::with_params(dev, stream, &csr, &req, p, "test").unwrap();
    let mut f = format::build(&a, &p).unwrap();
    let what = format!("{name} {p}");
    products_then_new_values(
        h,
        &what,
        &a,
        &csr,
        &m,
        Some(&mut f),
        &[(1.0, 0.0), (-2.0, 0.5)],
    );
    assert_eq!(
        m.deterministic(),
        f.split_rows.is_empty() && f.deferred.is_none(),
        "{name} {p}"
    );
}

/// Two rounds of products of `m` (built for `a` on `csr`) against the f64 product, for each
/// (alpha, beta) of `pairs` (y starts as NaN where beta is 0); the second round after new values
/// reached `m` through its value map on the device. With `reference`, the host reference over
/// the same arrays too (its values brought up to date as well).
fn products_then_new_values<T: Scalar>(
    h: &Handle,
    what: &str,
    a: &Csr<T>,
    csr: &GpuCsr<T>,
    m: &TileGpu<T>,
    mut reference: Option<&mut format::Tiled<T>>,
    pairs: &[(f64, f64)],
) {
    let dev = h.cuda().unwrap();
    let stream = h.cuda_stream();
    let mut a = a.clone();
    let x: Vec<T> = x_for(a.cols(), 3).into_iter().map(T::from_f64).collect();
    for round in 0..2 {
        if round == 1 {
            // New values: through the value map on the device into both parts.
            a.values_mut()
                .iter_mut()
                .enumerate()
                .for_each(|(k, v)| *v = T::from_f64(((k * 7) % 11) as f64 - 5.0));
            csr.upload_values(stream, a.values()).unwrap();
            m.refresh_values(csr, stream).unwrap();
            if let Some(f) = reference.as_deref_mut() {
                f.update_values(&a);
            }
        }
        let a_seen = a.convert::<f64>();
        for &(alpha, beta) in pairs {
            let y0: Vec<T> = x_for(a.rows(), 5).into_iter().map(T::from_f64).collect();
            let start = if beta == 0.0 {
                vec![T::from_f64(f64::NAN); a.rows()]
            } else {
                y0.clone()
            };
            let dx = DeviceVec::from_slice(dev, &x).unwrap();
            let dy = DeviceVec::from_slice(dev, &start).unwrap();
            m.spmv(
                csr,
                stream,
                T::from_f64(alpha),
                dx.addr(),
                T::from_f64(beta),
                dy.addr(),
            )
            .unwrap();
            let mut ys = vec![(dy.to_vec(stream).unwrap(), "GPU")];
            if let Some(f) = reference.as_deref() {
                let mut y_ref = start.clone();
                reference::spmv(f, T::from_f64(alpha), &x, T::from_f64(beta), &mut y_ref);
                ys.push((y_ref, "reference"));
            }
            for (yy, who) in &ys {
                assert_product(
                    &format!("{what} round {round} ({who})"),
                    &a_seen,
                    Operation::NonTranspose,
                    alpha,
                    &x,
                    beta,
                    &y0,
                    yy,
                );
            }
        }
    }
}

#[test]
fn tile_gpu_kernels_match_the_reference_with_deferral_forced_on_and_off() {
    let Some(h) = gpu() else { return };
    let mut cases: Vec<(String, Csr<f64>)> = vec![("seven formats".into(), seven_formats())];
    for spec in [
        "gen:powerlaw:12,8,2",
        "gen:circuit:3000,5,2,2500,4",
        "gen:random:4,100000,700,2",
        "gen:random:100000,4,3,2",
        "gen:random:19,5000,300,4",
        "gen:emptyrows:2000,8,3",
        "gen:dense:37,53",
        "gen:elasticity:4",
    ] {
        cases.push(tessera::io::load(spec).unwrap());
    }
    for (name, a) in &cases {
        for deferred in [false, true] {
            for tbalance in [1, 8, TBALANCE_UNLIMITED] {
                let p = TileParams {
                    tbalance,
                    ..TileParams::paper(deferred)
                };
                gpu_vs_reference::<f64>(&h, name, a, p);
                gpu_vs_reference::<f32>(&h, name, a, p);
            }
        }
    }
}

#[test]
fn tile_gpu_quick_and_exhaustive_tuning_match_and_say_how_they_chose() {
    let Some(h) = gpu() else { return };
    for spec in [
        "gen:powerlaw:14,8,2",
        "gen:elasticity:8",
        "gen:random:19,5000,300,4",
    ] {
        let (name, a) = tessera::io::load(spec).unwrap();
        for tuning in [Tuning::Quick, Tuning::Exhaustive] {
            check_method(&h, &name, &a, Algorithm::Tile, tuning);
            let mut m = Matrix::from_csr(&h, a.clone());
            m.analyze(&h, Algorithm::Tile, tuning).unwrap();
            let params = m.info().params;
            assert!(params.contains("tuned:"), "{name} {tuning}: {params}");
        }
    }
}

#[test]
fn tile_gpu_deterministic_variant_gives_bitwise_equal_products_run_to_run() {
    let Some(mut h) = gpu() else { return };
    h.set_deterministic(true);
    let (_, a) = tessera::io::load("gen:random:19,5000,300,4").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Tile, Tuning::None).unwrap();
    assert!(m.info().deterministic, "{}", m.info().params);
    let dev = h.cuda().unwrap();
    let x = DeviceVec::from_slice(dev, &x_for(a.cols(), 9)).unwrap();
    let y0 = x_for(a.rows(), 2);
    let mut out = Vec::new();
    for _ in 0..2 {
        let y = DeviceVec::from_slice(dev, &y0).unwrap();
        m.spmv_device(&h, Operation::NonTranspose, 1.5, x.addr(), -0.25, y.addr())
            .unwrap();
        out.push(y.to_vec(h.cuda_stream()).unwrap());
    }
    assert!(out[0]
        .iter()
        .zip(&out[1])
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}

/// Split tile rows add with atomics into a y pre-scaled by a separate launch; nothing is shared
/// between products. Eight threads, each with its own stream, queue 20 products of one matrix
/// back to back (y += 1.5*A*x each time).
#[test]
fn tile_gpu_products_queued_on_eight_streams_add_up() {
    let Some(h) = gpu() else { return };
    let (name, a) = tessera::io::load("gen:random:19,5000,300,4").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Tile, Tuning::None).unwrap();
    assert!(
        m.info().params.contains("2 split tile rows"),
        "{}",
        m.info().params
    );
    common::gpu::queued_products_on_streams(&m, &a, &name, 8, 20);
}

/// The fixed rule halves tbalance when the work items would fill under half of the GPU and a
/// tile row is split anyway (`params::small_grid`): a 32 x 256 dense matrix has two tile rows
/// of 16 tiles, two items each at the paper's tbalance 8 and four at 4 (added with atomics);
/// the products stay right.
#[test]
fn tile_gpu_fixed_rule_halves_tbalance_on_a_small_grid() {
    let Some(h) = gpu() else { return };
    let (name, a) = tessera::io::load("gen:dense:32,256").unwrap();
    let mut m = Matrix::from_csr(&h, a.clone());
    m.analyze(&h, Algorithm::Tile, Tuning::None).unwrap();
    let p = m.info().params;
    assert!(
        p.contains("tbalance=4") && p.contains("8 warps, 2 split tile rows"),
        "{p}"
    );
    common::gpu::queued_products_on_streams(&m, &a, &name, 2, 5);
}

/// Tessera's int32 CSR of `a` on the device.
fn upload<T: Scalar>(h: &Handle, a: &Csr<T>) -> GpuCsr<T> {
    let dev = h.cuda().unwrap();
    let launch = tessera::methods::transpose::gpu_launch(&a.stats(), dev.sm_count());
    GpuCsr::upload(dev, h.cuda_stream(), a, launch).unwrap()
}

/// Matrices for the device build: every tile format, duplicates, edge tiles, empty tile rows
/// and columns, half-dense blocks with holes.
fn device_build_cases() -> Vec<(String, Csr<f64>)> {
    let mut out = vec![("seven formats".to_string(), seven_formats())];
    for spec in TILE_CASES.iter().chain(EDGE_CASES) {
        let (name, a) = tessera::io::load(spec).unwrap();
        out.push((name, a));
    }
    // Duplicates (a tile holding two entries at one position is COO), one of them in a row of
    // 20 entries in one tile.
    let mut t: Vec<(usize, usize, f64)> =
        (0..40).map(|i| (i, (3 * i) % 37, 1.0 + i as f64)).collect();
    t.extend((0..20).map(|j| (5, j % 16, 0.5 + j as f64)));
    t.push((30, 1, 2.0));
    t.push((30, 1, -1.0));
    out.push(("duplicates".into(), Csr::from_triplets(41, 37, &t).unwrap()));
    // Half dense with holes: every format but COO appears, rows of each length.
    let mut t = Vec::new();
    for r in 0..203 {
        for c in 0..181 {
            if (r * 7 + c * 3) % 5 != 0 && (r / 16 + c / 16) % 4 != 3 && (c + r) % (1 + r % 9) != 1
            {
                t.push((r, c, ((r * 181 + c) % 23) as f64 - 11.0));
            }
        }
    }
    out.push((
        "half dense with holes".into(),
        Csr::from_triplets(203, 181, &t).unwrap(),
    ));
    // A last tile row of 8 rows at about 90% (its tiles Dns from 64 entries, format.rs's
    // dns_min_nnz) and a last tile column of 3 (below the edge rule: the whole tile's 128).
    let t: Vec<(usize, usize, f64)> = (0..40)
        .flat_map(|r| (0..51).map(move |c| (r, c)))
        .filter(|&(r, c)| (r * 13 + c * 7) % 10 != 0)
        .map(|(r, c)| (r, c, 1.0 + ((r + 2 * c) % 7) as f64))
        .collect();
    out.push((
        "edge tile row of 8".into(),
        Csr::from_triplets(40, 51, &t).unwrap(),
    ));
    out
}

/// The device build writes the arrays format.rs builds on the host (tiles, formats, widths,
/// offsets, index bytes, values, work items, split rows, value map), for both value types and
/// several parameter sets (thresholds moved, tbalance 2 and unlimited, deferral on where
/// nothing is deferred); with entries to defer it answers None. Then its product, and new
/// values through its value map.
#[test]
fn tile_gpu_device_build_writes_the_host_builds_arrays() {
    let Some(h) = gpu() else { return };
    let params = [
        TileParams::paper(false),
        TileParams::paper(true),
        TileParams {
            te: 0.1,
            th: 0.5,
            ..TileParams::paper(false)
        },
        TileParams {
            te: 0.4,
            th: 2.0,
            tbalance: 2,
            ..TileParams::paper(false)
        },
        TileParams {
            tbalance: TBALANCE_UNLIMITED,
            ..TileParams::paper(false)
        },
    ];
    let mut built = 0;
    for (name, a) in device_build_cases() {
        for p in params {
            device_build_vs_host::<f64>(&h, &name, &a, p, &mut built);
            device_build_vs_host::<f32>(&h, &name, &a, p, &mut built);
        }
    }
    assert!(built > 100, "only {built} device builds");
}

fn device_build_vs_host<T: Scalar>(
    h: &Handle,
    name: &str,
    a64: &Csr<f64>,
    p: TileParams,
    built: &mut usize,
) {
    let dev = h.cuda().unwrap();
    let stream = h.cuda_stream();
    let a = a64.convert::<T>();
    let csr = upload(h, &a);
    let what = format!("{name} {p} {}", std::any::type_name::<T>());
    let Some(m) = TileGpu::built_on_device(dev, stream, &csr, p, "test").unwrap() else {
        let f = format::build(&a, &p).unwrap();
        assert!(p.deferred && f.census.deferred_nnz > 0, "{what}: not built");
        return;
    };
    *built += 1;
    // The fixed rule's tbalance: p's, or the small-grid one, as the host rule picks it.
    let used = m.params();
    let mut f = format::build(&a, &p).unwrap();
    assert!(
        f.deferred.is_none(),
        "{what}: the host defers, the device did not"
    );
    if used.tbalance != p.tbalance {
        assert_eq!(
            p.tbalance,
            tessera::methods::tile::params::PAPER_TBALANCE,
            "{what}"
        );
        assert!(tessera::methods::tile::params::small_grid(
            f.item_row.len(),
            f.split_rows.len(),
            dev.sm_count()
        ));
        f.set_tbalance(used.tbalance);
    }
    let d = m.download(stream).unwrap();
    let e = DownloadedFormat::of(&f);
    assert_eq!(d.tile_col, e.tile_col, "{what}: tile columns");
    assert_eq!(d.format, e.format, "{what}: formats");
    assert_eq!(d.width, e.width, "{what}: widths");
    assert_eq!(d.val_ptr, e.val_ptr, "{what}: value offsets");
    assert_eq!(d.idx_ptr, e.idx_ptr, "{what}: index offsets");
    assert_eq!(d.idx, e.idx, "{what}: index bytes");
    assert_eq!(d.value_slot, e.value_slot, "{what}: value map");
    assert!(d.values == e.values, "{what}: values");
    assert_eq!(d.item_row, e.item_row, "{what}: work items");
    assert_eq!(d.item_start, e.item_start, "{what}: work-item starts");
    assert_eq!(d.split_rows, e.split_rows, "{what}: split rows");
    assert!(
        m.describe().contains(&f.summary()),
        "{what}: {}",
        m.describe()
    );
    // Its product, then new values through its value map.
    products_then_new_values(h, &what, &a, &csr, &m, None, &[(-2.0, 0.5)]);
}

/// AUTO and TILE with TUNING_NONE on matrices kept on the device build TILE's format on the
/// device (no host copy): AUTO's worker after its products (here at finish_background), TILE
/// at analyze; a matrix with entries the fixed rule defers (over 1.8M non-zeros, a sparse
/// tile) is built on the host from a downloaded CSR instead. Products and update_values on
/// each.
#[test]
fn tile_gpu_device_build_serves_auto_and_falls_back_to_the_host_for_deferred_entries() {
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap();
    let (_, dense) = tessera::io::load("gen:dense:1000,1000").unwrap();
    assert!(tessera::methods::tile::device::builds_on_device(
        &dense.stats()
    ));
    assert_eq!(
        tessera::select::heuristic(&dense.stats(), 8, false, dev.sm_count()),
        Algorithm::Tile
    );
    let mut auto = common::gpu::device_matrix(&h, &dense);
    auto.analyze(&h, Algorithm::Auto, Tuning::None).unwrap();
    assert_ne!(auto.info().algorithm, Algorithm::Tile);
    common::gpu::checked_product(&h, &auto, &dense, "dense AUTO before the swap", 1);
    auto.finish_background(&h).unwrap();
    let info = auto.info();
    assert_eq!(info.algorithm, Algorithm::Tile, "{}", info.params);
    assert!(
        info.params.contains("built on the device"),
        "{}",
        info.params
    );
    assert!(!auto.has_host_copy(), "nothing was downloaded");
    common::gpu::checked_product(&h, &auto, &dense, "dense AUTO after the swap", 2);
    let doubled: Vec<f64> = dense.values().iter().map(|v| 2.0 * v).collect();
    auto.update_values(&h, &doubled).unwrap();
    let mut b = dense.clone();
    b.set_values_from_input(&doubled).unwrap();
    common::gpu::checked_product(&h, &auto, &b, "dense AUTO after update_values", 3);

    // Over 1.8M non-zeros with one sparse tile: deferral on, and an entry to defer.
    let n = 1400;
    let mut t = Vec::with_capacity(n * n);
    for r in 0..n {
        for c in 0..n {
            let sparse_tile = r / 16 == 3 && c / 16 == 5;
            if !sparse_tile || (r % 16 < 3 && c % 16 == r % 16 * 2) {
                t.push((r, c, ((r * 31 + c * 17) % 13) as f64 - 6.0));
            }
        }
    }
    let a = Csr::from_triplets(n, n, &t).unwrap();
    assert!(a.nnz() > 1_800_000);
    for spec in [Algorithm::Tile, Algorithm::Auto] {
        let mut m = common::gpu::device_matrix(&h, &a);
        m.analyze(&h, spec, Tuning::None).unwrap();
        m.finish_background(&h).unwrap();
        let info = m.info();
        assert_eq!(info.algorithm, Algorithm::Tile, "{}", info.params);
        assert!(
            info.params.contains("found entries to defer"),
            "{spec:?}: {}",
            info.params
        );
        common::gpu::checked_product(&h, &m, &a, &format!("{spec:?}, deferred entries"), 4);
        m.update_values(&h, &vec![1.0; a.nnz()]).unwrap();
        let mut ones = a.clone();
        ones.set_values_from_input(&vec![1.0; a.nnz()]).unwrap();
        common::gpu::checked_product(&h, &m, &ones, &format!("{spec:?} after update_values"), 5);
    }
}

/// The device scan under TILE's device build (`backend::cuda::scan`), from one block of counts
/// to many (the tile grids of the device-build test have at most a few blocks), against the
/// host's prefix sums:
/// each field's offsets, its total modulo 2^32 at index n, and the exact u64 totals (counts up
/// to 2^20, so the larger sums pass 2^32).
#[test]
fn device_scan_writes_the_host_prefix_sums() {
    use tessera::backend::cuda::scan::{exclusive_scan, workspace_bytes};
    use tessera::backend::cuda::{copy_to_host, DeviceBuffer};
    let Some(h) = gpu() else { return };
    let dev = h.cuda().unwrap();
    let stream = h.cuda_stream();
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let big = 65_536;
    for (n, fields) in [
        (0, 1),
        (1, 3),
        (1023, 2),
        (16_385, 3),
        (big, 4),
        (big + 1, 3),
        (3 * big + 777, 2),
    ] {
        let counts: Vec<u32> = (0..fields * (n + 1))
            .map(|i| match i % (n + 1) {
                j if j == n => 0xdead_beef, // overwritten with the total
                _ => (next() % (1 << 20)) as u32 * (next() % 3 != 0) as u32,
            })
            .collect();
        let data = DeviceBuffer::alloc(dev, 4 * counts.len(), "scan test data").unwrap();
        data.fill_from(stream, &counts).unwrap();
        let totals = DeviceBuffer::alloc(dev, 8 * fields, "scan test totals").unwrap();
        let work = DeviceBuffer::alloc(dev, workspace_bytes(n, fields), "scan test work").unwrap();
        work.zero(stream).unwrap();
        exclusive_scan(
            dev,
            stream,
            (data.addr(), n, fields),
            totals.addr(),
            work.addr(),
        )
        .unwrap();
        let mut got = vec![0u32; counts.len()];
        copy_to_host(dev, stream, data.addr(), &mut got).unwrap();
        let mut got_totals = vec![0u64; fields];
        copy_to_host(dev, stream, totals.addr(), &mut got_totals).unwrap();
        for f in 0..fields {
            let field = &counts[f * (n + 1)..f * (n + 1) + n];
            let mut run = 0u64;
            for (j, &c) in field.iter().enumerate() {
                assert_eq!(
                    got[f * (n + 1) + j],
                    run as u32,
                    "n {n} field {f} index {j}"
                );
                run += c as u64;
            }
            assert_eq!(
                got[f * (n + 1) + n],
                run as u32,
                "n {n} field {f}: the total"
            );
            assert_eq!(got_totals[f], run, "n {n} field {f}: the exact total");
        }
    }
}
