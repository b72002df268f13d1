// tile.cu — TileSpMV (Niu et al., IPDPS'21), §III.C: seven warp-level routines over 16x16
// tiles stored in per-tile formats (src/methods/tile/format.rs says the bytes of each).
//
// Work split (§III.D): one warp per work item; an item is up to `tbalance` tiles of one tile
// row (the host cut the list: item i runs tiles item_start[i]..item_start[i+1] of tile row
// item_row[i] & ~TILE_SPLIT). Lane l accumulates for row l % 16 of the tile row; half
// h = l / 16 takes every other column / entry / dense row. Per tile, lane c < 16 (and its twin
// c + 16) holds x[col0 + c] in a register (0 past the last column), and the routines fetch
// x[col0 + k] with a shuffle from lane k (§III.C: "x in registers ... register shuffle"):
//   CSR (Alg. 2): lanes 2r, 2r+1 walk row r's entries alternately, x from shared memory (the
//                 paper's choice: the loop trip counts differ per lane, so no shuffles inside);
//                 a shuffle by 1 adds the pair, a shuffle brings row r's sum to lane r.
//   COO (Alg. 3): each lane loads one entry (32 per round trip), then half h walks entries
//                 h, h+2, ... in registers by shuffles and the lane of the entry's row adds it.
//                 The paper adds through shared-memory atomics; this form gives the same sums
//                 in a fixed order (bitwise reproducible). Loading entry by entry inside the
//                 walk (the first version) made every HYB tail a chain of dependent loads:
//                 bcsstk16 26.4 -> 14.4 us, sparse-images 30.9 -> 15.9 us on an H100.
// The loops over a tile's entries are unrolled (#pragma unroll) so that their loads go out
// together. Tried and dropped (H100): the metadata of 32 tiles loaded at once, one per lane
// (no gain); streaming loads (__ldcs) for values (dense 2000^2 1.66x -> 1.01x); the CSR routine
// as one entry per lane with a segmented warp scan (elasticity 0.144 -> 0.196 ms).
//   ELL (Alg. 4): slot s = lane + 32i of the column-major 16 x w block is row s % 16 = lane % 16.
//   HYB:          the ELL part, then its COO part as COO.
//   Dns:          lane (r, h) takes columns h, h+2, ... of row r (column-major: coalesced).
//   DnsRow:       half h takes dense rows h, h+2, ...: lane c multiplies column c with its own
//                 x, an xor butterfly over the 16 lanes sums the row, the row's lane keeps it.
//   DnsCol:       half h takes dense columns h, h+2, ...: lane r multiplies row r, x shuffled.
// All loops whose bodies shuffle have warp-uniform trip counts. The two halves are added with
// one shuffle at the end; lanes 0..15 write their rows (never past `rows`):
//   y = alpha*s + beta*y (beta == 0: y not read), or, for an item of a split tile row,
//   atomicAdd(y, alpha*s) into a y that tile_prescale scaled by beta first (one thread per row
//   of each split tile row; beta == 0 writes 0 without reading). Items of unsplit tile rows
//   use no atomics: the product is bitwise reproducible when no tile row is split.
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

// COO entries (row << 4 | col bytes): each lane loads one entry of a chunk of 32 (one round
// trip per chunk instead of one per entry pair), then the chunk is walked in registers: half h
// takes entries h, h+2, ... of it by shuffles, and the lane of the entry's row adds it (fixed
// order, uniform trip counts).
template <typename T>
__device__ __forceinline__ void tile_coo(const unsigned char *__restrict__ idx,
                                         const T *__restrict__ val, unsigned n, T xv, int r,
                                         int h, T &s) {
    const int lane = threadIdx.x & 31;
    for (unsigned c0 = 0; c0 < n; c0 += 32) {
        const unsigned mine = c0 + (unsigned)lane;
        const bool have = mine < n;
        const unsigned mb = have ? (unsigned)tessera_ro_load(idx + mine) : 0u;
        const T mv = have ? tessera_ro_load(val + mine) : T(0);
        const unsigned cn = (n - c0) < 32u ? (n - c0) : 32u;
        for (unsigned j0 = 0; j0 < cn; j0 += 2) {
            const unsigned j = j0 + (unsigned)h;
            const unsigned b = __shfl_sync(TESSERA_FULL_MASK, mb, (int)(j & 31u));
            const T v = __shfl_sync(TESSERA_FULL_MASK, mv, (int)(j & 31u));
            const T xg = __shfl_sync(TESSERA_FULL_MASK, xv, (int)(b & 15u));
            if (j < cn && (int)(b >> 4) == r) {
                s += v * xg;
            }
        }
    }
}

template <typename T>
__device__ __forceinline__ void
tile_spmv(int nitems, int rows, int cols, const unsigned *__restrict__ item_row,
          const unsigned *__restrict__ item_start, const unsigned *__restrict__ tile_col,
          const unsigned *__restrict__ tile_nnz, const unsigned char *__restrict__ fmt,
          const unsigned char *__restrict__ width, const unsigned *__restrict__ val_ptr,
          const unsigned *__restrict__ idx_ptr, const unsigned char *__restrict__ idx,
          const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y, T alpha,
          T beta) {
    __shared__ T sx[TILE_WARPS][16];
    const int lane = threadIdx.x & 31;
    const int wib = threadIdx.x >> 5;
    const int item = blockIdx.x * (blockDim.x >> 5) + wib;
    if (item >= nitems) {
        return; // the whole warp: item is warp-uniform
    }
    const int r = lane & 15;
    const int h = lane >> 4;
    const unsigned code = tessera_ro_load(item_row + item);
    const unsigned tr = code & ~TILE_SPLIT;
    const unsigned t0 = tessera_ro_load(item_start + item);
    const unsigned t1 = tessera_ro_load(item_start + item + 1);
    T s = T(0);
    for (unsigned t = t0; t < t1; ++t) {
        const long long col0 = (long long)tessera_ro_load(tile_col + t) * 16;
        const T xv = (col0 + r < (long long)cols) ? tessera_ro_load(x + col0 + r) : T(0);
        const unsigned vb = tessera_ro_load(val_ptr + t);
        const unsigned vlen = tessera_ro_load(val_ptr + t + 1) - vb;
        const unsigned w = tessera_ro_load(width + t);
        const unsigned char *__restrict__ ti = idx + tessera_ro_load(idx_ptr + t);
        const T *__restrict__ tv = val + vb;
        switch (tessera_ro_load(fmt + t)) {
        case TILE_F_CSR: {
            __syncwarp();
            if (lane < 16) {
                sx[wib][lane] = xv;
            }
            __syncwarp();
            const unsigned nnz = tessera_ro_load(tile_nnz + t + 1) - tessera_ro_load(tile_nnz + t);
            const int ri = lane >> 1;
            const unsigned st = tessera_ro_load(ti + ri);
            const unsigned en = ri < 15 ? (unsigned)tessera_ro_load(ti + ri + 1) : nnz;
            T p = T(0);
#pragma unroll 4
            for (unsigned j = st + (unsigned)(lane & 1); j < en; j += 2) {
                p += tessera_ro_load(tv + j) * sx[wib][tile_nib(ti + 16, j)];
            }
            p += __shfl_down_sync(TESSERA_FULL_MASK, p, 1);
            const T rs = __shfl_sync(TESSERA_FULL_MASK, p, 2 * r);
            if (h == 0) {
                s += rs;
            }
            break;
        }
        case TILE_F_COO:
            tile_coo<T>(ti, tv, vlen, xv, r, h, s);
            break;
        case TILE_F_ELL:
        case TILE_F_HYB: {
            const unsigned n = 16u * w;
#pragma unroll 4
            for (unsigned s0 = 0; s0 < n; s0 += 32) {
                const unsigned sl = s0 + (unsigned)lane;
                const bool ok = sl < n;
                const int c = ok ? (int)tile_nib(ti, sl) : 0;
                const T xg = __shfl_sync(TESSERA_FULL_MASK, xv, c);
                if (ok) {
                    s += tessera_ro_load(tv + sl) * xg;
                }
            }
            if (vlen > n) {
                tile_coo<T>(ti + 8u * w, tv + n, vlen - n, xv, r, h, s);
            }
            break;
        }
        case TILE_F_DNS:
#pragma unroll
            for (int c = 0; c < 16; c += 2) {
                const T xg = __shfl_sync(TESSERA_FULL_MASK, xv, c + h);
                s += tessera_ro_load(tv + (c + h) * 16 + r) * xg;
            }
            break;
        case TILE_F_ROW:
#pragma unroll 2
            for (unsigned i0 = 0; i0 < w; i0 += 2) {
                const unsigned i = i0 + (unsigned)h;
                const bool ok = i < w;
                T p = ok ? tessera_ro_load(tv + i * 16u + r) * xv : T(0);
#pragma unroll
                for (int off = 8; off > 0; off >>= 1) {
                    p += __shfl_xor_sync(TESSERA_FULL_MASK, p, off, 16);
                }
                const unsigned rid = ok ? (unsigned)tessera_ro_load(ti + i) : 255u;
                if (ok && (unsigned)r == rid) {
                    s += p;
                }
            }
            break;
        case TILE_F_COL:
#pragma unroll 4
            for (unsigned i0 = 0; i0 < w; i0 += 2) {
                const unsigned i = i0 + (unsigned)h;
                const bool ok = i < w;
                const int c = ok ? (int)tessera_ro_load(ti + i) : 0;
                const T xg = __shfl_sync(TESSERA_FULL_MASK, xv, c);
                if (ok) {
                    s += tessera_ro_load(tv + i * 16u + r) * xg;
                }
            }
            break;
        default:
            break;
        }
    }
    s += __shfl_down_sync(TESSERA_FULL_MASK, s, 16);
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
        const unsigned *__restrict__ tile_nnz, const unsigned char *__restrict__ fmt,          \
        const unsigned char *__restrict__ width, const unsigned *__restrict__ val_ptr,         \
        const unsigned *__restrict__ idx_ptr, const unsigned char *__restrict__ idx,           \
        const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y, T alpha,        \
        T beta) {                                                                              \
        tile_spmv<T>(nitems, rows, cols, item_row, item_start, tile_col, tile_nnz, fmt, width, \
                     val_ptr, idx_ptr, idx, val, x, y, alpha, beta);                           \
    }                                                                                          \
    extern "C" __global__ void tile_prescale_##S(int nsplit, int rows,                         \
                                                 const unsigned *__restrict__ split_rows,      \
                                                 T *__restrict__ y, T beta) {                  \
        tile_prescale<T>(nsplit, rows, split_rows, y, beta);                                   \
    }
TESSERA_INSTANTIATE(TILE_ENTRY)
