//! BCCOO's tunables (yaSpMV, Yan et al. PPoPP'14, Table 1), the fixed rule used for
//! `TESSERA_TUNING_NONE`, and the candidate sets of the auto-tuner (§4) for QUICK and EXHAUSTIVE.
//!
//! Kernel defines (`kernels/bccoo.cu`): `BCCOO_BW` (block width, [`BW_VALUES`]) and
//! `BCCOO_BH` (block height, [`BH_VALUES`]): 12 specialisations. The workgroup size is the
//! launch's block size (its arrays in dynamic shared memory), and the rest of Table 1 that the
//! kernel needs — the thread-level tile size, the bit-flag word type, the column-index mode, the
//! strategy of §3.2.2 and the result cache size — travels in one packed launch argument
//! ([`Params::config_word`]); the number of vertical slices (BCCOO+) only changes the format
//! and adds the combine kernel.
//!
//! Table 1 rows we fix, as the paper's own pruning does (§4): texture memory for x is always
//! used (`__ldg`, the read-only path), and the transpose is always offline (done by the host when
//! it builds the format). Strategy 1's `Reg_size`/`ShM_size` collapse into its tile size: our
//! strategy-1 kernel keeps only the first row-stop sum of a tile in registers and writes the
//! later ones at once (see kernels/bccoo.cu), so there is no `intermediate_sums` array to split.
#![forbid(unsafe_code)]

pub use super::kernel::{BH_VALUES, BW_VALUES, KERNELS};
use std::fmt;

/// Workgroup (thread block) sizes of Table 1 (a launch argument; at most the kernel's
/// `BCCOO_MAX_WG`).
pub const WG_VALUES: &[i64] = &[64, 128, 256, 512];
/// Thread-level tile sizes of strategy 2 (Table 1).
pub const TILES_STRATEGY2: &[u32] = &[8, 16, 24, 32, 40, 64, 96, 128];
/// Strategy 1 tile sizes with the paper's pruning (`ShM_size` = 0, `Reg_size` in 8/16/32; §4).
pub const TILES_STRATEGY1_PRUNED: &[u32] = &[8, 16, 32];
/// Strategy 1 tile sizes `Reg_size + ShM_size` of Table 1 without pruning (each 0/8/16/32, not
/// both 0).
pub const TILES_STRATEGY1_ALL: &[u32] = &[8, 16, 24, 32, 40, 48, 64];
/// Vertical slice counts (Table 1; 1 = BCCOO, more = BCCOO+).
pub const SLICE_VALUES: &[u32] = &[1, 2, 4, 8, 16, 32];
/// Bit-flag word types: unsigned char, short, int (Table 1).
pub const WORD_BITS: &[u32] = &[8, 16, 32];
/// The largest result cache, in multiples of the workgroup size (Table 1).
pub const MAX_CACHE: u32 = 4;
/// Column indices are `u16` when the matrix has fewer block columns than this (§4: "less than
/// 65535"); otherwise they are `u32` or delta-compressed (§2.2).
pub const U16_BLOCK_COLS: usize = 65535;
/// The warp: thread tiles are transposed in groups of 32 threads (offline transpose, §3.2.2).
pub const WARP: usize = 32;
/// How many block shapes the tuner keeps: "the 4 smallest memory footprints" (§4).
pub const TUNED_SHAPES: usize = 4;

/// A block shape: `bw` columns by `bh` rows (§2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shape {
    /// Block width: 1, 2 or 4.
    pub bw: u32,
    /// Block height: 1, 2, 3 or 4.
    pub bh: u32,
}

impl Shape {
    /// Every shape of Table 1.
    pub fn all() -> Vec<Shape> {
        let mut v = Vec::new();
        for &bw in BW_VALUES {
            for &bh in BH_VALUES {
                v.push(Shape {
                    bw: bw as u32,
                    bh: bh as u32,
                });
            }
        }
        v
    }

    /// Values per block.
    pub fn area(self) -> usize {
        (self.bw * self.bh) as usize
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Rows x columns, the paper's convention (§2.4's "n x 1" blocks are n rows tall).
        write!(f, "{}x{}", self.bh, self.bw)
    }
}

/// How the column index array is stored (§2.2, §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColMode {
    /// One `u16` block column per block (fewer than 65535 block columns).
    U16,
    /// One `u32` block column per block (Table 1 "Col_index compress: No" for wide matrices).
    U32,
    /// Segmented difference per thread tile as `i16`, -1 = read the `u32` array (§2.2).
    Delta,
}

impl ColMode {
    /// The kernel's code for it.
    pub fn code(self) -> u32 {
        match self {
            ColMode::U16 => 0,
            ColMode::U32 => 1,
            ColMode::Delta => 2,
        }
    }

    /// The modes a matrix with `block_cols` block columns can use; the first is the fixed rule.
    pub fn allowed(block_cols: usize) -> &'static [ColMode] {
        if block_cols < U16_BLOCK_COLS {
            &[ColMode::U16]
        } else {
            &[ColMode::Delta, ColMode::U32]
        }
    }
}

impl fmt::Display for ColMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ColMode::U16 => "u16",
            ColMode::U32 => "u32",
            ColMode::Delta => "delta16",
        })
    }
}

/// How a workgroup combines its segment sums (§3.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Strategy 1: per-thread sums in registers; each thread writes its rows' results itself.
    Registers,
    /// Strategy 2: a per-workgroup result cache in shared memory of `n` x workgroup-size
    /// entries (1..=4), written to y coalesced; results beyond it go straight to y.
    ResultCache(u32),
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strategy::Registers => f.write_str("s1-registers"),
            Strategy::ResultCache(n) => write!(f, "s2-cache{n}xWG"),
        }
    }
}

/// Everything that decides the arrays of the format (§2.2–2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FormatParams {
    /// Block shape.
    pub shape: Shape,
    /// Vertical slices: 1 = BCCOO, more = BCCOO+ (§2.3).
    pub slices: u32,
    /// Blocks per thread (the thread-level tile, §3.2.1).
    pub tile: u32,
    /// Bits per bit-flag word: 8, 16 or 32.
    pub word_bits: u32,
    /// Column index storage.
    pub col: ColMode,
}

impl FormatParams {
    /// Words of bit flags per thread tile.
    pub fn words_per_thread(&self) -> usize {
        self.tile.div_ceil(self.word_bits) as usize
    }

    /// True when the host format can be built with these values (any tile >= 1).
    pub fn is_valid(&self) -> bool {
        BW_VALUES.contains(&(self.shape.bw as i64))
            && BH_VALUES.contains(&(self.shape.bh as i64))
            && SLICE_VALUES.contains(&self.slices)
            && (1..=255).contains(&self.tile)
            && WORD_BITS.contains(&self.word_bits)
    }
}

/// One complete BCCOO configuration: the format plus how the kernel runs over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Params {
    /// The format.
    pub format: FormatParams,
    /// Threads per workgroup.
    pub wg: u32,
    /// §3.2.2 strategy.
    pub strategy: Strategy,
}

impl Params {
    /// True when the GPU kernel runs these values: a compiled shape, a workgroup size of
    /// Table 1, a tile that is a multiple of 8 (the kernel walks tiles in unrolled steps of 8)
    /// and a result cache of 1..=4 workgroup sizes.
    pub fn is_valid(&self) -> bool {
        self.format.is_valid()
            && WG_VALUES.contains(&(self.wg as i64))
            && self.format.tile % 8 == 0
            && match self.strategy {
                Strategy::Registers => true,
                Strategy::ResultCache(n) => (1..=MAX_CACHE).contains(&n),
            }
    }

    /// Bytes of dynamic shared memory the kernel needs for values of `val_bytes` bytes:
    /// last_partial_sums (bh x wg values), the result cache (strategy 2) and one open flag
    /// per thread.
    pub fn shared_bytes(&self, val_bytes: usize) -> u32 {
        let cache = match self.strategy {
            Strategy::Registers => 0,
            Strategy::ResultCache(n) => n as usize,
        };
        let wg = self.wg as usize;
        ((self.format.shape.bh as usize * wg + cache * wg) * val_bytes + wg) as u32
    }

    /// The packed launch argument of `bccoo_spmv_<T>`: tile (bits 0-7), log2(word bits / 8)
    /// (8-9), column mode (10-11), strategy 2 (12), result cache multiple (13-15).
    pub fn config_word(&self) -> i32 {
        let wlog = match self.format.word_bits {
            8 => 0,
            16 => 1,
            _ => 2,
        };
        let (s, cache) = match self.strategy {
            Strategy::Registers => (0, 0),
            Strategy::ResultCache(n) => (1, n),
        };
        (self.format.tile | wlog << 8 | self.format.col.code() << 10 | s << 12 | cache << 13) as i32
    }
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fp = &self.format;
        write!(
            f,
            "block={} tile={} flags=u{} col={} slices={} wg={} {}",
            fp.shape, fp.tile, fp.word_bits, fp.col, fp.slices, self.wg, self.strategy
        )
    }
}

/// The bit-flag word the fixed rule takes for a tile: the widest of u8/u16/u32 that divides it
/// (one load per 16 blocks at the paper's example tile of 16, §3.2.1).
pub fn default_word_bits(tile: u32) -> u32 {
    [32, 16, 8].into_iter().find(|w| tile % w == 0).unwrap_or(8)
}

/// Estimated bytes one product moves through the format for a shape with `blocks` blocks
/// (values with padding, column indices at `col_bytes` per block, bit flags, first-result
/// entries at the fixed tile): what the tuner ranks shapes by (§4: "the 4 smallest memory
/// footprints").
pub fn footprint(shape: Shape, blocks: f64, val_bytes: usize, col_bytes: f64) -> f64 {
    blocks * (shape.area() * val_bytes) as f64 + blocks * col_bytes + blocks / 8.0 + blocks / 4.0
}

/// The largest escape rate (column deltas beyond a short, first blocks of tiles included) at
/// which the delta compression still moves fewer bytes than plain u32 indices: 2 + 4e < 4
/// gives 0.5; we keep a margin for the extra dependent load of an escape.
pub const MAX_DELTA_ESCAPES: f64 = 0.4;

/// What the fixed rule and the tuner need to know of a matrix.
#[derive(Debug, Clone)]
pub struct MatrixFacts {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Bytes per value (4 or 8).
    pub val_bytes: usize,
    /// Estimated blocks for every shape (in [`Shape::all`] order), empty block rows included.
    pub blocks: Vec<(Shape, f64)>,
    /// Estimated fraction of 1x1 blocks whose column delta from the previous entry (in CSR
    /// order, across row ends) does not fit a short: the delta compression's escape rate.
    pub far_jumps: f64,
}

impl MatrixFacts {
    /// Shapes by estimated footprint, smallest first (ties: fewer values per block first).
    pub fn shapes_by_footprint(&self) -> Vec<Shape> {
        let mut v: Vec<(f64, Shape)> = self
            .blocks
            .iter()
            .map(|&(s, b)| {
                let cb = self.col_bytes(s.bw, 16);
                (footprint(s, b, self.val_bytes, cb), s)
            })
            .collect();
        v.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(a.1.area().cmp(&b.1.area()))
                .then(a.1.cmp(&b.1))
        });
        v.into_iter().map(|(_, s)| s).collect()
    }

    /// Estimated blocks of `shape`.
    pub fn blocks_of(&self, shape: Shape) -> f64 {
        self.blocks
            .iter()
            .find(|(s, _)| *s == shape)
            .map_or(0.0, |&(_, b)| b)
    }

    /// Block columns for a block width.
    pub fn block_cols(&self, bw: u32) -> usize {
        self.cols.div_ceil(bw as usize)
    }

    /// The fixed rule's column mode for a block width and tile: u16 when it fits (§4), else
    /// the delta compression (§2.2) unless too many deltas would escape, then u32.
    pub fn col_mode(&self, bw: u32, tile: u32) -> ColMode {
        if self.block_cols(bw) < U16_BLOCK_COLS {
            ColMode::U16
        } else if self.far_jumps + 1.0 / tile as f64 <= MAX_DELTA_ESCAPES {
            ColMode::Delta
        } else {
            ColMode::U32
        }
    }

    /// Estimated bytes per block of the column indices with the fixed rule's mode.
    pub fn col_bytes(&self, bw: u32, tile: u32) -> f64 {
        match self.col_mode(bw, tile) {
            ColMode::U16 => 2.0,
            ColMode::U32 => 4.0,
            ColMode::Delta => 2.0 + 4.0 * (self.far_jumps + 1.0 / tile as f64),
        }
    }
}

/// The fixed rule (TUNING_NONE). The paper tunes everything (§4) and gives no rule, so this is
/// ours, built from its observations:
/// - block shape: the smallest estimated footprint (§4's first pruning, taken to its minimum),
///   except that a shape of at most 8 entries within [`SMALL_SHAPE_SLACK`] of it is preferred
///   to a larger one (dense 2000²: 4x2 0.0210 ms against 4x4 0.0238 ms on an H100 — a 4x4
///   block's 16 values per load step crowd the 64 registers of the kernel);
/// - tile 16 with u16 flags (§3.2.1's example: "a single short" of flags per thread) and
///   workgroups of 256 threads — tile 8, then workgroups halved down to 64 threads, while the
///   matrix would give fewer than one workgroup per SM, so that small matrices still spread
///   over the device (the paper's matrices all had >= 1M non-zeros; H100 EXHAUSTIVE sweeps of
///   dense 2000² and bcsstk16 found tile 8 with 128-256 threads best: 4x2 tile 8 WG 256
///   0.0210 ms, tile 16 WG 64 0.0245 ms); tile 32 with u32 flags when even
///   that leaves [`LARGE_WGS_PER_SM`] workgroups per SM (elasticity 48: tile 16 0.108 ms,
///   32 0.100 ms; EXHAUSTIVE found 64 best at 0.097 ms, but 64 lost on stencil27 and 32 did
///   not: longer tiles spread a warp's x gathers over more rows);
/// - strategy (§3.2.2): short segments -> strategy 2 with a result cache of 2 x WG (coalesced
///   writes of many results); segments longer than a tile (mean blocks per block row > tile)
///   -> strategy 1 (few results, nothing to gather);
/// - BCCOO (1 slice): the paper's tuner chose BCCOO+ for one matrix of 20 (§6);
/// - u16 column indices when they fit, else the delta compression (§2.2) — or u32 where the
///   sampled rows say that more than [`MAX_DELTA_ESCAPES`] of the deltas would escape.
pub fn fixed_rule(f: &MatrixFacts, sm_count: u32) -> Params {
    let shape = fixed_shape(f);
    let blocks = f.blocks_of(shape);
    let want = sm_count.max(1) as f64;
    let (mut wg, mut tile) = (256u32, 16u32);
    if blocks / ((wg * 32) as f64) >= LARGE_WGS_PER_SM * want {
        tile = 32;
    }
    if blocks / ((wg * tile) as f64) < want {
        tile = 8;
    }
    while wg > 64 && blocks / ((wg * tile) as f64) < want {
        wg /= 2;
    }
    let block_rows = f.rows.div_ceil(shape.bh as usize).max(1);
    let per_row = blocks / block_rows as f64;
    let strategy = if per_row > tile as f64 {
        Strategy::Registers
    } else {
        Strategy::ResultCache(2)
    };
    Params {
        format: FormatParams {
            shape,
            slices: 1,
            tile,
            word_bits: default_word_bits(tile),
            col: f.col_mode(shape.bw, tile),
        },
        wg,
        strategy,
    }
}

/// How much larger (relative) a shape of at most 8 entries may be estimated than the smallest
/// footprint and still be the fixed rule's shape (see [`fixed_rule`]).
pub const SMALL_SHAPE_SLACK: f64 = 0.03;

/// Workgroups of 256 threads x tile 32 per SM from which the fixed rule takes tile 32.
pub const LARGE_WGS_PER_SM: f64 = 3.0;

/// The fixed rule's block shape: the smallest footprint, or a shape of at most 8 entries within
/// [`SMALL_SHAPE_SLACK`] of it.
fn fixed_shape(f: &MatrixFacts) -> Shape {
    let by = f.shapes_by_footprint();
    let best = by[0];
    if best.area() <= 8 {
        return best;
    }
    let cb = |s: Shape| f.col_bytes(s.bw, 16);
    let fp = |s: Shape| footprint(s, f.blocks_of(s), f.val_bytes, cb(s));
    let limit = fp(best) * (1.0 + SMALL_SHAPE_SLACK);
    by.into_iter()
        .find(|&s| s.area() <= 8 && fp(s) <= limit)
        .unwrap_or(best)
}

/// True when BCCOO+ is worth timing in QUICK: the matrix is wider than tall (the paper's one
/// BCCOO+ matrix, LP, is 4K x 1.1M) and wide enough to give every slice some block columns.
pub fn slices_worth_trying(f: &MatrixFacts) -> bool {
    f.cols > f.rows && f.cols >= 2 * 32 * 4
}

/// The slice counts `p` allows on this matrix (each slice at least one block column wide).
pub fn slice_counts(f: &MatrixFacts, bw: u32) -> Vec<u32> {
    SLICE_VALUES
        .iter()
        .copied()
        .filter(|&s| s == 1 || f.cols / (bw as usize * s as usize) >= 1)
        .collect()
}

/// (tile, strategy) pairs of strategy 1 and 2 (Table 1): pruned as §4 says, or all.
pub fn tile_strategies(pruned: bool) -> Vec<(u32, Strategy)> {
    let mut v = Vec::new();
    let s1 = if pruned {
        TILES_STRATEGY1_PRUNED
    } else {
        TILES_STRATEGY1_ALL
    };
    for &t in s1 {
        v.push((t, Strategy::Registers));
    }
    let caches: &[u32] = if pruned { &[1, 2] } else { &[1, 2, 3, 4] };
    for &t in TILES_STRATEGY2 {
        for &c in caches {
            v.push((t, Strategy::ResultCache(c)));
        }
    }
    v
}

/// One stage of the tuner: candidates derived from the incumbent `best`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The block shapes of the 4 smallest footprints (§4).
    Shapes,
    /// Tile size x strategy (x result cache) (Table 1).
    TileStrategy,
    /// Workgroup size.
    Workgroup,
    /// Bit-flag word type.
    Words,
    /// Column index compression (wide matrices only).
    Columns,
    /// BCCOO+ slice counts.
    Slices,
    /// EXHAUSTIVE's joint stage: shape x tile/strategy/cache x workgroup.
    Joint,
}

/// The candidates of `stage` around the incumbent `best` (which is not repeated). QUICK runs
/// [`QUICK_STAGES`] in order (a coordinate search over Table 1 with the paper's pruning);
/// EXHAUSTIVE runs [`EXHAUSTIVE_STAGES`] (the joint product of the main parameters, no pruning
/// but the shapes', then the remaining ones).
pub fn stage_candidates(stage: Stage, best: &Params, f: &MatrixFacts, quick: bool) -> Vec<Params> {
    let mut out: Vec<Params> = Vec::new();
    let shapes: Vec<Shape> = f
        .shapes_by_footprint()
        .into_iter()
        .take(TUNED_SHAPES)
        .collect();
    let with_shape = |p: &Params, s: Shape| -> Params {
        let mut q = *p;
        q.format.shape = s;
        if !ColMode::allowed(f.block_cols(s.bw)).contains(&q.format.col) {
            q.format.col = ColMode::allowed(f.block_cols(s.bw))[0];
        }
        if !slice_counts(f, s.bw).contains(&q.format.slices) {
            q.format.slices = 1;
        }
        q
    };
    match stage {
        Stage::Shapes => {
            for &s in &shapes {
                out.push(with_shape(best, s));
            }
        }
        Stage::TileStrategy => {
            for (tile, strategy) in tile_strategies(quick) {
                let mut q = *best;
                q.format.tile = tile;
                q.format.word_bits = default_word_bits(tile);
                q.strategy = strategy;
                out.push(q);
            }
        }
        Stage::Workgroup => {
            for &wg in WG_VALUES {
                let mut q = *best;
                q.wg = wg as u32;
                out.push(q);
            }
        }
        Stage::Words => {
            for &w in WORD_BITS {
                let mut q = *best;
                q.format.word_bits = w;
                out.push(q);
            }
        }
        Stage::Columns => {
            for &c in ColMode::allowed(f.block_cols(best.format.shape.bw)) {
                let mut q = *best;
                q.format.col = c;
                out.push(q);
            }
        }
        Stage::Slices => {
            if !quick || slices_worth_trying(f) {
                for s in slice_counts(f, best.format.shape.bw) {
                    let mut q = *best;
                    q.format.slices = s;
                    out.push(q);
                }
            }
        }
        Stage::Joint => {
            for &s in &shapes {
                for (tile, strategy) in tile_strategies(false) {
                    for &wg in WG_VALUES {
                        let mut q = with_shape(best, s);
                        q.format.tile = tile;
                        q.format.word_bits = default_word_bits(tile);
                        q.strategy = strategy;
                        q.wg = wg as u32;
                        out.push(q);
                    }
                }
            }
        }
    }
    out.retain(|q| q != best && q.is_valid());
    let mut seen = std::collections::HashSet::new();
    out.retain(|q| seen.insert(*q));
    out
}

/// QUICK: a coordinate search, one Table 1 parameter group at a time, with §4's pruning.
pub const QUICK_STAGES: &[Stage] = &[
    Stage::Shapes,
    Stage::TileStrategy,
    Stage::Workgroup,
    Stage::Words,
    Stage::Columns,
    Stage::Slices,
];

/// EXHAUSTIVE: the joint product of shape (4 smallest footprints) x every tile/strategy/cache of
/// Table 1 x every workgroup size, then the flag word, column and slice stages.
pub const EXHAUSTIVE_STAGES: &[Stage] =
    &[Stage::Joint, Stage::Words, Stage::Columns, Stage::Slices];

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(rows: usize, cols: usize) -> MatrixFacts {
        MatrixFacts {
            rows,
            cols,
            val_bytes: 8,
            blocks: Shape::all()
                .into_iter()
                .map(|s| (s, (rows * 7) as f64 / s.area() as f64 * 1.5))
                .collect(),
            far_jumps: 0.1,
        }
    }

    #[test]
    fn config_word_packs_every_field() {
        let p = Params {
            format: FormatParams {
                shape: Shape { bw: 2, bh: 3 },
                slices: 1,
                tile: 96,
                word_bits: 16,
                col: ColMode::Delta,
            },
            wg: 128,
            strategy: Strategy::ResultCache(3),
        };
        let c = p.config_word() as u32;
        assert_eq!(c & 0xff, 96);
        assert_eq!((c >> 8) & 3, 1);
        assert_eq!((c >> 10) & 3, 2);
        assert_eq!((c >> 12) & 1, 1);
        assert_eq!((c >> 13) & 7, 3);
        assert!(p.is_valid());
        assert_eq!(p.shared_bytes(8), ((3 * 128 + 3 * 128) * 8 + 128) as u32);
        assert_eq!(
            p.to_string(),
            "block=3x2 tile=96 flags=u16 col=delta16 slices=1 wg=128 s2-cache3xWG"
        );
    }

    #[test]
    fn the_largest_configuration_fits_the_default_dynamic_shared_memory() {
        let mut p = fixed_rule(&facts(100, 100), 14);
        p.format.shape = Shape { bw: 4, bh: 4 };
        p.wg = 512;
        p.strategy = Strategy::ResultCache(MAX_CACHE);
        assert!(p.shared_bytes(8) <= 48 * 1024);
    }

    #[test]
    fn fixed_rule_is_valid_and_uses_u16_columns_only_when_they_fit() {
        let p = fixed_rule(&facts(1000, 1000), 14);
        assert!(p.is_valid(), "{p}");
        assert_eq!(p.format.col, ColMode::U16);
        let mut f = facts(10, 300_000);
        let p = fixed_rule(&f, 14);
        assert_eq!(p.format.col, ColMode::Delta);
        f.far_jumps = 0.5;
        assert_eq!(fixed_rule(&f, 14).format.col, ColMode::U32);
        // Small matrices get smaller workgroups and tiles; large ones the paper's 256 x 16.
        assert_eq!((p.wg, p.format.tile), (64, 8));
        let p = fixed_rule(&facts(2_000_000, 2_000_000), 132);
        assert_eq!((p.wg, p.format.tile), (256, 16));
        assert_eq!(default_word_bits(16), 16);
        assert_eq!(default_word_bits(24), 8);
        assert_eq!(default_word_bits(96), 32);
    }

    #[test]
    fn fixed_rule_prefers_small_blocks_near_the_smallest_footprint_and_long_tiles_when_large() {
        // Every shape fully filled: 4x4 has the smallest footprint, an 8-entry shape is 1.8%
        // larger and within the slack, so the rule takes it.
        let f = facts(100_000, 100_000);
        assert_eq!(f.shapes_by_footprint()[0].area(), 16);
        let p = fixed_rule(&f, 132);
        assert_eq!(p.format.shape.area(), 8, "{p}");
        // Without the slack's margin (a 4x4 far smaller), 4x4 stays.
        let mut g = facts(100_000, 100_000);
        for (s, b) in g.blocks.iter_mut() {
            if s.area() != 16 {
                *b *= 1.2;
            }
        }
        assert_eq!(fixed_rule(&g, 132).format.shape.area(), 16);
        // 10M rows x 7 x 1.5 = 105M entries: >= 3 workgroups of 256 x 32 per SM -> tile 32
        // with u32 flag words; 1M rows is below that.
        let p = fixed_rule(&facts(10_000_000, 10_000_000), 132);
        assert_eq!(
            (p.wg, p.format.tile, p.format.word_bits),
            (256, 32, 32),
            "{p}"
        );
        assert!(p.is_valid());
        let p = fixed_rule(&facts(1_000_000, 1_000_000), 132);
        assert_eq!((p.wg, p.format.tile), (256, 16), "{p}");
    }

    #[test]
    fn candidates_are_valid_distinct_and_exclude_the_incumbent() {
        let f = facts(5000, 300_000);
        let best = fixed_rule(&f, 132);
        for quick in [true, false] {
            let stages = if quick {
                QUICK_STAGES
            } else {
                EXHAUSTIVE_STAGES
            };
            for &st in stages {
                let c = stage_candidates(st, &best, &f, quick);
                assert!(c.iter().all(|p| p.is_valid() && *p != best), "{st:?}");
                let set: std::collections::HashSet<_> = c.iter().collect();
                assert_eq!(set.len(), c.len());
            }
        }
        assert_eq!(
            stage_candidates(Stage::Shapes, &best, &f, true).len(),
            TUNED_SHAPES - 1
        );
        // Joint: 4 shapes x (7 + 8*4) x 4 workgroups, less the incumbent.
        assert_eq!(
            stage_candidates(Stage::Joint, &best, &f, false).len(),
            4 * 39 * 4 - 1
        );
    }
}
