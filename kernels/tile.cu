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
//   Dns:          lane r reads row r of the column-major block (16 coalesced loads).
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
        case TILE_F_DNS:
#pragma unroll
            for (int c = 0; c < 16; ++c) {
                s += tessera_ro_load(tv + c * 16 + r) * xs[c];
            }
            break;
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
