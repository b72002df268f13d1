// tile.cu — TileSpMV (Niu et al., IPDPS'21), §III.C: seven warp-level routines over 16x16
// tiles stored in per-tile formats (src/methods/tile/format.rs says the bytes of each).
//
// Work split (§III.D): one warp per work item; an item is up to `tbalance` tiles of one tile
// row (the host cut the list: item i runs tiles item_start[i]..item_start[i+1] of tile row
// item_row[i] & ~TILE_SPLIT). Our choice inside the warp (§III.C gives the warp one tile at a
// time): each half-warp takes a tile, so two tiles are in flight per warp: half h runs tiles
// t0 + h, t0 + h + 2, ...; lane r of a half owns row r of the tile row in every format. Per
// tile, lane r loads x[col0 + r] (0 past the last column) into a register and into the half's
// 16 shared-memory slots (§III.C: x segments in registers or shared memory):
//   CSR (Alg. 2): lane r walks row r's entries (row offsets r, r + 1), x from shared memory.
//   COO (Alg. 3): in rounds of 16 entries, lane j loads entry j, multiplies it by x (shuffle
//                 from the column's lane), an inclusive segmented scan by row (entries are
//                 sorted by row) leaves each row's sum in its last entry's lane, which hands it
//                 to the row's lane through shared memory. The paper adds through shared-memory
//                 atomics; the scan gives a fixed order (bitwise reproducible).
//   ELL (Alg. 4): lane r reads slot e * 16 + r of the column-major 16 x w block (coalesced).
//   HYB:          the ELL part, then its COO part as COO.
//   Dns:          lane r reads row r of the column-major block (16 coalesced loads, issued
//                 before the x segment is exchanged).
//   DnsRow:       the lane whose row is dense row i reads its 16 contiguous values.
//   DnsCol:       lane r reads row r of each dense column, x from shared memory.
// Shuffles (COO) use the half's mask and width 16 with trip counts uniform in the half; the two
// halves may run different formats. The halves are added with one shuffle at the end; lanes
// 0..15 write their rows (never past `rows`):
//   y = alpha*s + beta*y (beta == 0: y not read), or, for an item of a split tile row,
//   atomicAdd(y, alpha*s) into a y that tile_prescale scaled by beta first (one thread per row
//   of each split tile row; beta == 0 writes 0 without reading). Items of unsplit tile rows
//   use no atomics: the product is bitwise reproducible when no tile row is split.
//
// Why half-warp tiles and a segmented scan for COO (the paper's one tile per warp was
// latency-bound here), with the variants measured and dropped: notes/tile.md, "Versions".
//
// Entry points: tile_prescale_<T>, tile_spmv_<T> (blocks of TILE_WARPS warps). No defines:
// te, th, tbalance and the deferral shape the host-built arrays, nothing compile-time.

#define TILE_SPLIT 0x80000000u
#define TILE_WARPS 4

#define TILE_F_CSR 0
#define TILE_F_COO 1
#define TILE_F_ELL 2
#define TILE_F_HYB 3
#define TILE_F_DNS 4
#define TILE_F_ROW 5
#define TILE_F_COL 6

// Column index at nibble j of p (two 4-bit indices per byte, low nibble first).
__device__ __forceinline__ unsigned tile_nib(const unsigned char *__restrict__ p, unsigned j) {
    const unsigned b = tessera_ro_load(p + (j >> 1));
    return (j & 1u) ? (b >> 4) : (b & 15u);
}

// COO entries (row << 4 | col bytes, sorted by row): in rounds of 16, lane j of the half
// loads entry j and multiplies it by x (a shuffle from the column's lane); an inclusive
// segmented scan by row (4 shuffle steps; equal rows are adjacent) leaves each row's sum in
// its last entry's lane, which hands it to the row's lane through shared memory. One round
// trip and ~25 instructions per 16 entries, in a fixed order (bitwise reproducible).
// Called by the whole half (trip counts uniform in the half; hmask names it).
template <typename T>
__device__ __forceinline__ void tile_coo(const unsigned char *__restrict__ ti,
                                         const T *__restrict__ tv, unsigned n, T xv, T *srow,
                                         int r, unsigned hmask, T &s) {
    for (unsigned c0 = 0; c0 < n; c0 += 16) {
        const unsigned j = c0 + (unsigned)r;
        const bool have = j < n;
        const unsigned b = have ? (unsigned)tessera_ro_load(ti + j) : 0u;
        const T v = have ? tessera_ro_load(tv + j) : T(0);
        const T xg = __shfl_sync(hmask, xv, (int)(b & 15u), 16);
        const int rj = have ? (int)(b >> 4) : 16 + r; // past the end: a row of its own
        T p = v * xg;
#pragma unroll
        for (int off = 1; off < 16; off <<= 1) {
            const T q = __shfl_up_sync(hmask, p, off, 16);
            const int rq = __shfl_up_sync(hmask, rj, off, 16);
            if (r >= off && rq == rj) {
                p += q;
            }
        }
        const int rn = __shfl_down_sync(hmask, rj, 1, 16);
        srow[r] = T(0);
        __syncwarp(hmask);
        if (have && (r == 15 || rn != rj)) {
            srow[rj] = p; // the last entry of row rj: the row's sum in this round
        }
        __syncwarp(hmask);
        s += srow[r];
        __syncwarp(hmask);
    }
}

// One work item (see the top of the file): a half-warp per tile, two tiles in flight.
template <typename T>
__device__ __forceinline__ void
tile_spmv(int nitems, int rows, int cols, const unsigned *__restrict__ item_row,
          const unsigned *__restrict__ item_start, const unsigned *__restrict__ tile_col,
          const unsigned char *__restrict__ fmt, const unsigned char *__restrict__ width,
          const unsigned *__restrict__ val_ptr, const unsigned *__restrict__ idx_ptr,
          const unsigned char *__restrict__ idx, const T *__restrict__ val,
          const T *__restrict__ x, T *__restrict__ y, T alpha, T beta) {
    __shared__ T sx[TILE_WARPS][2][16];
    __shared__ T srows[TILE_WARPS][2][16];
    const int lane = threadIdx.x & 31;
    const int wib = threadIdx.x >> 5;
    const int item = blockIdx.x * (blockDim.x >> 5) + wib;
    if (item >= nitems) {
        tessera_wait_primary(); // see below
        return;                 // the whole warp: item is warp-uniform
    }
    const int r = lane & 15;
    const int h = lane >> 4;
    const unsigned hmask = 0xffffu << (16 * h);
    T *xs = sx[wib][h];
    T *srow = srows[wib][h];
    const unsigned code = tessera_ro_load(item_row + item);
    const unsigned tr = code & ~TILE_SPLIT;
    const unsigned t0 = tessera_ro_load(item_start + item);
    const unsigned t1 = tessera_ro_load(item_start + item + 1);
    T s = T(0);
    for (unsigned t = t0 + (unsigned)h; t < t1; t += 2) {
        const long long cx = (long long)tessera_ro_load(tile_col + t) * 16 + r;
        const unsigned vb = tessera_ro_load(val_ptr + t);
        const unsigned vlen = tessera_ro_load(val_ptr + t + 1) - vb;
        const unsigned w = tessera_ro_load(width + t);
        const unsigned f = tessera_ro_load(fmt + t);
        const unsigned char *__restrict__ ti = idx + tessera_ro_load(idx_ptr + t);
        const T *__restrict__ tv = val + vb;
        const T xv = cx < (long long)cols ? tessera_ro_load(x + cx) : T(0);
        if (f == TILE_F_DNS) {
            // The tile's 16 values are loaded before x is exchanged: they depend on val_ptr
            // alone, so they are in flight with x's load, not after it (one round trip less
            // per tile on a warp's chain of tiles). Measured on an H200 (named TILE per
            // product, two rounds; notes/tile.md): f64 0-24% faster on seven dense and random
            // matrices (session 30, run N: dense 3000² 23.5-23.8 -> 21.9 us, random 3000² at
            // 97% 36.0-36.3 -> 27.3-27.8); f32, once edge tiles were Dns too (session 31,
            // run B), 4-5% faster out of the L2 (dense 4000² 21.2 -> 20.4 us, random 4000² at
            // 65% 21.3 -> 20.3) and within the noise on the rest.
            T dv[16];
#pragma unroll
            for (int c = 0; c < 16; ++c) {
                dv[c] = tessera_ro_load(tv + c * 16 + r);
            }
            __syncwarp(hmask); // the half's reads of the previous segment are done
            xs[r] = xv;
            __syncwarp(hmask);
#pragma unroll
            for (int c = 0; c < 16; ++c) {
                s += dv[c] * xs[c];
            }
            continue;
        }
        __syncwarp(hmask); // the half's reads of the previous segment are done
        xs[r] = xv;
        __syncwarp(hmask);
        switch (f) {
        case TILE_F_CSR: {
            const unsigned st = tessera_ro_load(ti + r);
            const unsigned en = r < 15 ? (unsigned)tessera_ro_load(ti + r + 1) : vlen;
#pragma unroll 4
            for (unsigned j = st; j < en; ++j) {
                s += tessera_ro_load(tv + j) * xs[tile_nib(ti + 16, j)];
            }
            break;
        }
        case TILE_F_COO:
            tile_coo<T>(ti, tv, vlen, xv, srow, r, hmask, s);
            break;
        case TILE_F_ELL:
        case TILE_F_HYB: {
#pragma unroll 4
            for (unsigned k = 0; k < w; ++k) {
                const unsigned sl = k * 16u + (unsigned)r;
                s += tessera_ro_load(tv + sl) * xs[tile_nib(ti, sl)];
            }
            const unsigned n = 16u * w;
            if (vlen > n) {
                tile_coo<T>(ti + 8u * w, tv + n, vlen - n, xv, srow, r, hmask, s);
            }
            break;
        }
        case TILE_F_ROW: {
            int mine = -1;
            for (unsigned i = 0; i < w; ++i) {
                if ((int)tessera_ro_load(ti + i) == r) {
                    mine = (int)i;
                }
            }
            if (mine >= 0) {
#pragma unroll
                for (int c = 0; c < 16; ++c) {
                    s += tessera_ro_load(tv + mine * 16 + c) * xs[c];
                }
            }
            break;
        }
        case TILE_F_COL:
#pragma unroll 4
            for (unsigned i = 0; i < w; ++i) {
                s += tessera_ro_load(tv + i * 16u + r) * xs[tessera_ro_load(ti + i)];
            }
            break;
        default:
            break;
        }
    }
    __syncwarp();
    s += __shfl_down_sync(TESSERA_FULL_MASK, s, 16);
    // Launched overlapping tile_prescale (launch_overlapped): wait for its y = beta*y before
    // the first write (every thread, so the product never completes before it).
    tessera_wait_primary();
    const long long row = (long long)tr * 16 + lane;
    if (lane < 16 && row < (long long)rows) {
        const T v = alpha * s;
        if (code & TILE_SPLIT) {
            atomicAdd(y + row, v);
        } else {
            y[row] = beta != T(0) ? v + beta * y[row] : v;
        }
    }
}

template <typename T>
__device__ __forceinline__ void tile_prescale(int nsplit, int rows,
                                              const unsigned *__restrict__ split_rows,
                                              T *__restrict__ y, T beta) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)nsplit * 16) {
        return;
    }
    const long long row = (long long)tessera_ro_load(split_rows + (i >> 4)) * 16 + (i & 15);
    if (row < (long long)rows) {
        y[row] = beta != T(0) ? beta * y[row] : T(0);
    }
}

#define TILE_ENTRY(T, S)                                                                       \
    extern "C" __global__ void __launch_bounds__(TILE_WARPS * 32) tile_spmv_##S(              \
        int nitems, int rows, int cols, const unsigned *__restrict__ item_row,                 \
        const unsigned *__restrict__ item_start, const unsigned *__restrict__ tile_col,        \
        const unsigned char *__restrict__ fmt, const unsigned char *__restrict__ width,        \
        const unsigned *__restrict__ val_ptr,                                                  \
        const unsigned *__restrict__ idx_ptr, const unsigned char *__restrict__ idx,           \
        const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y, T alpha,        \
        T beta) {                                                                              \
        tile_spmv<T>(nitems, rows, cols, item_row, item_start, tile_col, fmt, width,           \
                     val_ptr, idx_ptr, idx, val, x, y, alpha, beta);                           \
    }                                                                                          \
    extern "C" __global__ void tile_prescale_##S(int nsplit, int rows,                         \
                                                 const unsigned *__restrict__ split_rows,      \
                                                 T *__restrict__ y, T beta) {                  \
        tessera_release_dependents();                                                          \
        tile_prescale<T>(nsplit, rows, split_rows, y, beta);                                   \
    }
TESSERA_INSTANTIATE(TILE_ENTRY)

// ---- The format built on the device from tessera's CSR (src/methods/tile/device.rs) ----
// The same arrays format.rs builds on the host (its oracle, compared array by array in the
// tests), in four steps on one stream:
//   tile_census:   every pair (tile row tr, tile column tc) of the tile grid, t = tr * tcols +
//                  tc, which is the order of the format's tiles. A half-warp takes one grid tile
//                  (grid-stride); lane r finds row tr*16 + r's entries in the tile's 16 columns
//                  by two binary searches of its sorted columns, then the half computes Figure
//                  5's choice and the tile's sizes exactly as format.rs does (TileShape::
//                  variation as sqrt(n * sum(len^2) - nnz^2) / nnz, in double: the same IEEE
//                  operations on both sides). Per grid tile: its format (TILE_NONE when it stores
//                  nothing), width, and three counts: 1 when stored, its values, its index bytes;
//                  per block, Figure 7's census (tiles and non-zeros per format, deferred
//                  entries) added into `census`; and, where the host gives it room
//                  (`ranges`, 16 lanes x 8 bytes a grid tile), each lane's entry range, so
//                  that the fill does not search the rows again.
//   (util_scan_*:  the counts become offsets: tile index, value offset, index offset.)
//   tile_rows_census / tile_items: the work items of two tbalance values per tile row (the
//                  host picks one after reading the totals, as the fixed rule does), then
//                  item_row, item_start and split_rows of the chosen one.
//   tile_fill_<T>: the grid again; each stored tile writes its level-1 entries, its index bytes
//                  (OR-ed into zeroed 32-bit words: two tiles or two lanes may share a word),
//                  its values and each entry's slot in the value map.
// Only matrices whose grid has at most a quarter as many tiles as non-zeros are built this way
// (device.rs), so the grid costs at most a few binary searches per non-zero. Entries the host
// build would defer (TileSpMV_DeferredCOO) are counted, not written: with any, device.rs builds
// on the host instead.
#define TILE_BUILD_THREADS 256
#define TILE_NONE 0xffu
#define TILE_CENSUS_WORDS 15

__device__ __forceinline__ unsigned tile_half_sum(unsigned hmask, unsigned v) {
#pragma unroll
    for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(hmask, v, o, 16);
    return v;
}

__device__ __forceinline__ unsigned tile_half_max(unsigned hmask, unsigned v) {
#pragma unroll
    for (int o = 8; o > 0; o >>= 1) {
        const unsigned u = __shfl_xor_sync(hmask, v, o, 16);
        v = u > v ? u : v;
    }
    return v;
}

__device__ __forceinline__ unsigned tile_half_or(unsigned hmask, unsigned v) {
#pragma unroll
    for (int o = 8; o > 0; o >>= 1) v |= __shfl_xor_sync(hmask, v, o, 16);
    return v;
}

// Exclusive scan of v over the half (lane r gets the sum of lanes 0..r-1).
__device__ __forceinline__ unsigned tile_half_exclusive(unsigned hmask, int r, unsigned v) {
    unsigned inc = v;
#pragma unroll
    for (int o = 1; o < 16; o <<= 1) {
        const unsigned u = __shfl_up_sync(hmask, inc, o, 16);
        if (r >= o) inc += u;
    }
    return inc - v;
}

// The bits of the half's lanes set in a ballot of the warp, shifted to bits 0..15.
__device__ __forceinline__ unsigned tile_half_ballot(unsigned hmask, bool p) {
    return (__ballot_sync(hmask, p) & hmask) >> (__ffs(hmask) - 1);
}

// First position in [lo, hi) of a sorted row whose column is >= c.
__device__ __forceinline__ unsigned tile_lower_bound(const int *__restrict__ ci, unsigned lo,
                                                     unsigned hi, long long c) {
    while (lo < hi) {
        const unsigned mid = lo + ((hi - lo) >> 1);
        if ((long long)tessera_ro_load(ci + mid) < c) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Lane r's entries in grid tile (tr, tc): [*lo, *lo + *cnt).
__device__ __forceinline__ void tile_lane_range(int rows, const int *__restrict__ rp,
                                                const int *__restrict__ ci, long long tr,
                                                long long tc, int r, unsigned *lo,
                                                unsigned *cnt) {
    const long long row = tr * 16 + r;
    *lo = 0;
    *cnt = 0;
    if (row < rows) {
        const unsigned b = (unsigned)tessera_ro_load(rp + row);
        const unsigned e = (unsigned)tessera_ro_load(rp + row + 1);
        const long long c0 = tc * 16;
        // A row's columns, sorted and none repeated, put the first column >= c0 at most
        // c0 - ci[b] entries after b and at most ci[e - 1] - c0 entries before e - 1: the
        // search runs between (a dense row's is one entry), and its answer is checked against
        // its neighbours, the whole row searched when a repeated column broke the bounds.
        unsigned l = b;
        if (e > b) {
            const long long first = tessera_ro_load(ci + b), last = tessera_ro_load(ci + e - 1);
            const long long n = (long long)(e - b);
            const long long up = c0 - first, down = last - c0;
            const unsigned hi_n = up < 0 ? b + 1 : (up + 1 < n ? b + (unsigned)(up + 1) : e);
            const unsigned lo_n = down < 0 ? e : (down + 1 < n ? e - 1 - (unsigned)down : b);
            l = lo_n <= hi_n ? tile_lower_bound(ci, lo_n, hi_n, c0) : b;
            const bool right = (l == b || (long long)tessera_ro_load(ci + l - 1) < c0) &&
                               (l == e || (long long)tessera_ro_load(ci + l) >= c0);
            if (!right) l = tile_lower_bound(ci, b, e, c0);
        }
        *lo = l;
        // The row has at most 16 entries in the tile unless it repeats a column: the end is
        // found among the next 16 (cached lines), and past them only after a repeat.
        const unsigned hi = e - *lo > 16 ? *lo + 16 : e;
        const long long cend = tc * 16 + 16;
        const unsigned end = hi < e && (long long)tessera_ro_load(ci + hi) < cend
                                 ? tile_lower_bound(ci, hi, e, cend)
                                 : tile_lower_bound(ci, *lo, hi, cend);
        *cnt = end - *lo;
    }
}

// One tile's shape and sizes, as format.rs's select, hyb_width and emit_tile compute them.
struct TileSizes {
    unsigned nnz, fmt, width, values, idx, deferred;
};

// Called by the whole half with lane r's row count `cnt`, column mask and duplicate flag.
__device__ __forceinline__ TileSizes tile_sizes(unsigned hmask, int r, unsigned cnt,
                                                unsigned mask, bool dup, unsigned vr,
                                                unsigned vc, double te, double th,
                                                unsigned vsz, int defer) {
    TileSizes s;
    s.nnz = tile_half_sum(hmask, cnt);
    s.fmt = TILE_NONE;
    s.width = s.values = s.idx = s.deferred = 0;
    if (s.nnz == 0) {
        return s;
    }
    const bool any_dup = tile_half_ballot(hmask, dup) != 0;
    const unsigned long long s2 = tile_half_sum(hmask, cnt * cnt);
    const unsigned long long x =
        (unsigned long long)vr * s2 - (unsigned long long)s.nnz * s.nnz;
    // IEEE round-to-nearest square root and division, as the host's f64 operations, whatever
    // the compile options.
    const double cv = __ddiv_rn(__dsqrt_rn((double)x), (double)s.nnz);
    // Column counts: lane j counts column j over the half's rows.
    unsigned colcnt = 0;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        const unsigned b = tile_half_ballot(hmask, (mask >> j) & 1u);
        if (r == j) colcnt = __popc(b);
    }
    const unsigned colmask = tile_half_or(hmask, mask);
    const bool rows_full = tile_half_ballot(hmask, !(cnt == 0 || cnt == vc)) == 0;
    const bool cols_full = tile_half_ballot(hmask, !(colcnt == 0 || colcnt == vr)) == 0;
    const unsigned longest = tile_half_max(hmask, cnt);
    // format.rs's dns_min_nnz: half the valid cells of a tile of at least 128 of them, else 128.
    const unsigned cells = vr * vc;
    const unsigned dns_min = cells >= 128u ? (cells + 1u) / 2u : 128u;
    if (any_dup || (s.nnz < 12 && cv > te)) {
        s.fmt = TILE_F_COO;
    } else if (s.nnz >= dns_min) {
        s.fmt = TILE_F_DNS;
    } else if (rows_full) {
        s.fmt = TILE_F_ROW;
    } else if (cols_full) {
        s.fmt = TILE_F_COL;
    } else if (cv <= te) {
        s.fmt = TILE_F_ELL;
    } else if (cv > th) {
        s.fmt = TILE_F_HYB;
    } else {
        s.fmt = TILE_F_CSR;
    }
    switch (s.fmt) {
    case TILE_F_CSR:
        s.values = s.nnz;
        s.idx = 16 + (s.nnz + 1) / 2;
        break;
    case TILE_F_COO:
        s.values = s.nnz;
        s.idx = s.nnz;
        if (defer) {
            s.deferred = s.nnz;
        }
        break;
    case TILE_F_ELL:
        s.width = longest;
        s.values = 16 * longest;
        s.idx = 8 * longest;
        break;
    case TILE_F_HYB: {
        // From the longest row down to 0, the width with the fewest bytes (strictly fewer
        // replaces the kept one).
        unsigned long long best_bytes = 0;
        unsigned best = longest, best_coo = 0;
        for (int w = (int)longest; w >= 0; --w) {
            const unsigned coo = tile_half_sum(hmask, cnt > (unsigned)w ? cnt - w : 0u);
            const unsigned long long bytes =
                16ull * w * vsz + 8ull * w + (unsigned long long)coo * (vsz + 1);
            if (w == (int)longest || bytes < best_bytes) {
                best_bytes = bytes;
                best = w;
                best_coo = coo;
            }
        }
        s.width = best;
        s.values = 16 * best;
        s.idx = 8 * best;
        if (defer) {
            s.deferred = best_coo;
        } else {
            s.values += best_coo;
            s.idx += best_coo;
        }
        break;
    }
    case TILE_F_DNS:
        s.values = 256;
        break;
    case TILE_F_ROW:
        s.width = __popc(tile_half_ballot(hmask, cnt > 0));
        s.values = 16 * s.width;
        s.idx = s.width;
        break;
    default: // TILE_F_COL
        s.width = __popc(colmask);
        s.values = 16 * s.width;
        s.idx = s.width;
        break;
    }
    return s;
}

// Lane r's column mask in the tile (bit c: row r has an entry in column c0 + c). The half
// reads one row at a time, each lane every 16th entry (coalesced), and ORs the bits together.
__device__ __forceinline__ unsigned tile_half_masks(unsigned hmask, int r,
                                                    const int *__restrict__ ci, unsigned lo,
                                                    unsigned cnt, long long c0) {
    unsigned mine = 0;
    for (int q = 0; q < 16; ++q) {
        const unsigned lq = __shfl_sync(hmask, lo, q, 16), nq = __shfl_sync(hmask, cnt, q, 16);
        if (nq == 0) continue; // uniform in the half
        unsigned m = 0;
        for (unsigned e = r; e < nq; e += 16) {
            m |= 1u << (unsigned)(tessera_ro_load(ci + lq + e) - c0);
        }
        m = tile_half_or(hmask, m);
        if (r == q) mine = m;
    }
    return mine;
}

// gb: format (ngrid bytes, TILE_NONE when the tile stores nothing), then width (ngrid bytes).
// gf: three arrays of ngrid + 1 u32: stored (0/1), values, index bytes.
// census (TILE_CENSUS_WORDS u64, zeroed by the host): tiles per format, non-zeros per format,
// deferred entries.
extern "C" __global__ void __launch_bounds__(TILE_BUILD_THREADS)
    tile_census(int rows, int cols, long long tcols, long long ngrid,
                const int *__restrict__ rp, const int *__restrict__ ci, double te, double th,
                int vsz, int defer, unsigned char *__restrict__ gb, unsigned *__restrict__ gf,
                unsigned long long *__restrict__ census, uint2 *__restrict__ ranges) {
    __shared__ unsigned counts[TILE_CENSUS_WORDS];
    if (threadIdx.x < TILE_CENSUS_WORDS) counts[threadIdx.x] = 0;
    __syncthreads();
    const int r = threadIdx.x & 15;
    const unsigned hmask = 0xffffu << (threadIdx.x & 16);
    const long long halves = (long long)gridDim.x * (blockDim.x / 16);
    for (long long t = (long long)blockIdx.x * (blockDim.x / 16) + threadIdx.x / 16; t < ngrid;
         t += halves) {
        const long long tr = t / tcols, tc = t % tcols;
        unsigned lo, cnt;
        tile_lane_range(rows, rp, ci, tr, tc, r, &lo, &cnt);
        if (ranges != nullptr) {
            ranges[t * 16 + r] = make_uint2(lo, cnt); // for tile_fill (coalesced, 128 B a tile)
        }
        const unsigned mask = tile_half_masks(hmask, r, ci, lo, cnt, tc * 16);
        // Sorted columns: two entries share one exactly when the row has fewer columns than
        // entries.
        const bool dup = (unsigned)__popc(mask) != cnt;
        const long long left_r = (long long)rows - tr * 16, left_c = (long long)cols - tc * 16;
        const unsigned vr = (unsigned)(left_r < 16 ? left_r : 16);
        const unsigned vc = (unsigned)(left_c < 16 ? left_c : 16);
        const TileSizes s = tile_sizes(hmask, r, cnt, mask, dup, vr, vc, te, th, (unsigned)vsz,
                                       defer);
        const bool kept = s.fmt != TILE_NONE &&
                          !(defer && (s.fmt == TILE_F_COO || (s.fmt == TILE_F_HYB && s.width == 0)));
        if (r == 0) {
            gb[t] = kept ? (unsigned char)s.fmt : (unsigned char)TILE_NONE;
            gb[ngrid + t] = (unsigned char)s.width;
            gf[t] = kept ? 1u : 0u;
            gf[(ngrid + 1) + t] = kept ? s.values : 0u;
            gf[2 * (ngrid + 1) + t] = kept ? s.idx : 0u;
            if (s.fmt != TILE_NONE) {
                atomicAdd(&counts[s.fmt], 1u);
                atomicAdd(&counts[7 + s.fmt], s.nnz);
                if (s.deferred) atomicAdd(&counts[14], s.deferred);
            }
        }
    }
    __syncthreads();
    if (threadIdx.x < TILE_CENSUS_WORDS && counts[threadIdx.x] != 0) {
        atomicAdd(&census[threadIdx.x], (unsigned long long)counts[threadIdx.x]);
    }
}

// Work items per tile row for tbalance ta and tb (TBALANCE_UNLIMITED never splits), as
// Tiled::set_tbalance cuts them: rf holds four arrays of trows + 1 u32: items at ta, 1 when
// split at ta, the same at tb. tile_off: the scanned stored-tile flags of the grid.
extern "C" __global__ void tile_rows_census(long long trows, long long tcols,
                                            const unsigned *__restrict__ tile_off, unsigned ta,
                                            unsigned tb, unsigned *__restrict__ rf) {
    const long long tr = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (tr >= trows) return;
    const unsigned n = tile_off[(tr + 1) * tcols] - tile_off[tr * tcols];
    const unsigned bal[2] = {ta, tb};
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const bool split = n > bal[i];
        rf[(2 * i) * (trows + 1) + tr] = split ? (n + bal[i] - 1) / bal[i] : 1u;
        rf[(2 * i + 1) * (trows + 1) + tr] = split ? 1u : 0u;
    }
}

// The work items of tbalance `bal` (offsets item_off, split_off from tile_rows_census's
// scanned counts): item_row, item_start (items + 1), split_rows, as Tiled::set_tbalance cuts a
// tile row of n stored tiles: one item when n <= bal, else items of bal tiles (the last one
// shorter). A thread per grid tile (grid-stride): the first tile of a row writes an unsplit
// row's item (rows without stored tiles included), a stored tile at a multiple of bal in a
// split row the item it starts. Also zeroes the format's index words `idx` (tile_fill ORs its
// bytes into them), so that the host queues no memset.
extern "C" __global__ void tile_items(long long trows, long long tcols,
                                      const unsigned char *__restrict__ gb,
                                      const unsigned *__restrict__ tile_off, unsigned bal,
                                      const unsigned *__restrict__ item_off,
                                      const unsigned *__restrict__ split_off,
                                      unsigned *__restrict__ item_row,
                                      unsigned *__restrict__ item_start,
                                      unsigned *__restrict__ split_rows,
                                      unsigned *__restrict__ idx, long long idx_words) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long w = first; w < idx_words; w += stride) idx[w] = 0u;
    if (first == 0) item_start[0] = 0;
    const long long ngrid = trows * tcols;
    for (long long t = first; t < ngrid; t += stride) {
        const long long tr = t / tcols, tc = t % tcols;
        const unsigned s = tile_off[tr * tcols], e = tile_off[(tr + 1) * tcols];
        const unsigned i0 = item_off[tr];
        if (e - s <= bal) {
            if (tc == 0) {
                item_row[i0] = (unsigned)tr;
                item_start[i0 + 1] = e;
            }
            continue;
        }
        if (gb[t] == TILE_NONE) continue;
        const unsigned k = tile_off[t] - s;
        if (k == 0) split_rows[split_off[tr]] = (unsigned)tr;
        if (k % bal == 0) {
            const unsigned i = i0 + k / bal;
            item_row[i] = (unsigned)tr | TILE_SPLIT;
            item_start[i + 1] = e - (s + k) > bal ? s + k + bal : e;
        }
    }
}

__device__ __forceinline__ void tile_put_byte(unsigned *__restrict__ words,
                                              unsigned long long pos, unsigned v) {
    atomicOr(words + (pos >> 2), v << (8 * (unsigned)(pos & 3)));
}

// Column c at nibble j of the bytes from `base` (low nibble first).
__device__ __forceinline__ void tile_put_nibble(unsigned *__restrict__ words,
                                                unsigned long long base, unsigned j,
                                                unsigned c) {
    tile_put_byte(words, base + (j >> 1), c << (4 * (j & 1)));
}

// gb, gf as tile_census left them, gf's three arrays scanned. `idx` as 32-bit words zeroed
// by tile_items; `values` not zeroed (each tile writes its whole range).
template <typename T>
__device__ __forceinline__ void tile_fill(int rows, long long tcols, long long ngrid,
                                          const int *__restrict__ rp,
                                          const int *__restrict__ ci, const T *__restrict__ va,
                                          const unsigned char *__restrict__ gb,
                                          const unsigned *__restrict__ gf,
                                          unsigned *__restrict__ tile_col,
                                          unsigned char *__restrict__ fmt_out,
                                          unsigned char *__restrict__ width_out,
                                          unsigned *__restrict__ val_ptr,
                                          unsigned *__restrict__ idx_ptr,
                                          unsigned *__restrict__ idx, T *__restrict__ values,
                                          unsigned *__restrict__ value_slot,
                                          const uint2 *__restrict__ ranges) {
    const unsigned *tile_off = gf, *val_off = gf + (ngrid + 1), *idx_off = gf + 2 * (ngrid + 1);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        val_ptr[tile_off[ngrid]] = val_off[ngrid];
        idx_ptr[tile_off[ngrid]] = idx_off[ngrid];
    }
    // A Dns tile's values, staged per half (padded rows of 17: the half's writes of one row,
    // 16 columns apart, fall in different banks), so that both its reads of the CSR (by row)
    // and its writes of the column-major block are coalesced.
    __shared__ T dns[TILE_BUILD_THREADS / 16][16 * 17];
    T *stage = dns[threadIdx.x / 16];
    const int r = threadIdx.x & 15;
    const unsigned hmask = 0xffffu << (threadIdx.x & 16);
    const long long halves = (long long)gridDim.x * (blockDim.x / 16);
    for (long long t = (long long)blockIdx.x * (blockDim.x / 16) + threadIdx.x / 16; t < ngrid;
         t += halves) {
        const unsigned f = gb[t];
        if (f == TILE_NONE) continue; // uniform in the half
        const long long tr = t / tcols, tc = t % tcols, c0 = tc * 16;
        const unsigned w = gb[ngrid + t];
        const unsigned ti = tile_off[t], voff = val_off[t];
        const unsigned long long ioff = idx_off[t];
        unsigned lo, cnt;
        if (ranges != nullptr) {
            const uint2 lr = ranges[t * 16 + r]; // the census's two binary searches, kept
            lo = lr.x;
            cnt = lr.y;
        } else {
            tile_lane_range(rows, rp, ci, tr, tc, r, &lo, &cnt);
        }
        // The column masks only for DnsCol (its index bytes and slots): the other formats
        // place entries by row and position.
        const unsigned mask = f == TILE_F_COL ? tile_half_masks(hmask, r, ci, lo, cnt, c0) : 0u;
        const unsigned rowoff = tile_half_exclusive(hmask, r, cnt);
        const unsigned over = cnt > w ? cnt - w : 0u;
        const unsigned coo_base = tile_half_exclusive(hmask, r, over);
        const unsigned nonempty = tile_half_ballot(hmask, cnt > 0);
        const unsigned rowpos = __popc(nonempty & ((1u << r) - 1));
        const unsigned colmask = tile_half_or(hmask, mask);
        if (r == 0) {
            tile_col[ti] = (unsigned)tc;
            fmt_out[ti] = (unsigned char)f;
            width_out[ti] = (unsigned char)w;
            val_ptr[ti] = voff;
            idx_ptr[ti] = (unsigned)ioff;
        }
        if (f == TILE_F_CSR) {
            tile_put_byte(idx, ioff + r, rowoff);
        } else if (f == TILE_F_ROW && cnt > 0) {
            tile_put_byte(idx, ioff + rowpos, (unsigned)r);
        } else if (f == TILE_F_COL && ((colmask >> r) & 1u)) {
            tile_put_byte(idx, ioff + __popc(colmask & ((1u << r) - 1)), (unsigned)r);
        }
        if (f == TILE_F_DNS) {
#pragma unroll
            for (int c = 0; c < 16; ++c) stage[c * 17 + r] = T(0);
            __syncwarp(hmask);
        } else {
            // The tile's padding slots are zero: the half zeroes its value range first (no
            // memset of the whole array; Dns tiles write all 256 values from the stage).
            const unsigned nv = val_off[t + 1] - voff;
            for (unsigned j = r; j < nv; j += 16) values[(unsigned long long)voff + j] = T(0);
            __syncwarp(hmask);
        }
        // The entries, one row q at a time, each lane every 16th (coalesced reads of the row
        // and writes of its value map).
        for (int q = 0; q < 16; ++q) {
            const unsigned nq = __shfl_sync(hmask, cnt, q, 16);
            if (nq == 0) continue; // uniform in the half
            const unsigned lq = __shfl_sync(hmask, lo, q, 16);
            const unsigned offq = __shfl_sync(hmask, rowoff, q, 16);
            const unsigned cooq = __shfl_sync(hmask, coo_base, q, 16);
            const unsigned posq = __shfl_sync(hmask, rowpos, q, 16);
            for (unsigned e = r; e < nq; e += 16) {
                const unsigned k = lq + e;
                const unsigned c = (unsigned)((long long)tessera_ro_load(ci + k) - c0);
                unsigned slot;
                switch (f) {
                case TILE_F_CSR:
                    slot = offq + e;
                    tile_put_nibble(idx, ioff + 16, slot, c);
                    break;
                case TILE_F_COO:
                    slot = offq + e;
                    tile_put_byte(idx, ioff + slot, (unsigned)q << 4 | c);
                    break;
                case TILE_F_ELL:
                case TILE_F_HYB:
                    if (e < w) {
                        slot = e * 16 + q;
                        tile_put_nibble(idx, ioff, slot, c);
                    } else {
                        // Only without deferral (device.rs builds nothing the host would
                        // defer).
                        const unsigned j = cooq + (e - w);
                        tile_put_byte(idx, ioff + 8 * w + j, (unsigned)q << 4 | c);
                        slot = 16 * w + j;
                    }
                    break;
                case TILE_F_DNS:
                    slot = c * 16 + q;
                    break;
                case TILE_F_ROW:
                    slot = posq * 16 + c;
                    break;
                default: // TILE_F_COL
                    slot = __popc(colmask & ((1u << c) - 1)) * 16 + q;
                    break;
                }
                value_slot[k] = voff + slot;
                const T v = tessera_ro_load(va + k);
                if (f == TILE_F_DNS) {
                    stage[c * 17 + q] = v;
                } else {
                    values[(unsigned long long)voff + slot] = v;
                }
            }
        }
        if (f == TILE_F_DNS) {
            // The block, column by column: lane r writes row r of each (coalesced).
            __syncwarp(hmask);
#pragma unroll
            for (int c = 0; c < 16; ++c) {
                values[(unsigned long long)voff + c * 16 + r] = stage[c * 17 + r];
            }
            __syncwarp(hmask);
        }
    }
}

#define TILE_BUILD_ENTRY(T, S)                                                                 \
    extern "C" __global__ void __launch_bounds__(TILE_BUILD_THREADS) tile_fill_##S(          \
        int rows, long long tcols, long long ngrid, const int *__restrict__ rp,                \
        const int *__restrict__ ci, const T *__restrict__ va,                                  \
        const unsigned char *__restrict__ gb, const unsigned *__restrict__ gf,                 \
        unsigned *__restrict__ tile_col, unsigned char *__restrict__ fmt_out,                  \
        unsigned char *__restrict__ width_out, unsigned *__restrict__ val_ptr,                 \
        unsigned *__restrict__ idx_ptr, unsigned *__restrict__ idx, T *__restrict__ values,   \
        unsigned *__restrict__ value_slot, const uint2 *__restrict__ ranges) {                 \
        tile_fill<T>(rows, tcols, ngrid, rp, ci, va, gb, gf, tile_col, fmt_out, width_out,     \
                     val_ptr, idx_ptr, idx, values, value_slot, ranges);                       \
    }
TESSERA_INSTANTIATE(TILE_BUILD_ENTRY)
