// util.cu — the method-independent kernels over CSR (src/backend/cuda/csr.rs launches them):
//   util_scale_<T>:   y = beta * y, and y = 0 when beta == 0 (never reads y then, so NaN in y
//                     cannot leak). Used for alpha == 0 and before the atomic transpose.
//   util_scatter_<T>: the value map: dst[slot[k]] = src[k] for every CSR non-zero k (slot NULL
//                     means the identity). tessera_update_values runs this for every method;
//                     padding slots of a format are never named by the map and stay zero.
// One thread per element, grid-stride loops (any grid size covers any n). No defines.

template <typename T>
__device__ __forceinline__ void util_scale(long long n, T *y, T beta) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = beta == T(0) ? T(0) : beta * y[i];
    }
}

template <typename T>
__device__ __forceinline__ void util_scatter(long long n, const T *__restrict__ src,
                                             const unsigned *__restrict__ slot,
                                             T *__restrict__ dst) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
        dst[slot ? (long long)slot[k] : k] = src[k];
    }
}

#define UTIL_ENTRY(T, S)                                                                       \
    extern "C" __global__ void util_scale_##S(long long n, T *y, T beta) {                     \
        util_scale<T>(n, y, beta);                                                             \
    }                                                                                          \
    extern "C" __global__ void util_scatter_##S(long long n, const T *__restrict__ src,        \
                                                const unsigned *__restrict__ slot,             \
                                                T *__restrict__ dst) {                         \
        util_scatter<T>(n, src, slot, dst);                                                    \
    }
TESSERA_INSTANTIATE(UTIL_ENTRY)

// ---- Import of a caller's CSR already in device memory (src/backend/cuda/import.rs) ----
// util_import_rows: one thread per row i (grid-stride). Converts row_ptr (int32 or int64, base
//   0 or 1) to tessera's int32 base-0 row_ptr, checks rows i..i+1 (non-decreasing, within nnz),
//   and accumulates the row statistics: sum of squared lengths, min, max, empty rows, the
//   column spread (last - first + 1 over non-empty rows) and the row-boundary descents (a
//   non-empty row whose first column is below the previous entry's, the last of an earlier row).
// util_import_cols: one thread per entry k. Converts col_ind the same way, checks its range,
//   and counts descents col[k] > col[k+1] over the whole array. Columns are sorted within every
//   row exactly when every descent is a row-boundary descent.
// status (unsigned long long), all zero at the start (one asynchronous memset, no upload):
//   [0] ~(first bad row i) (max of the complements: 0 = none), [1] ~(first bad entry k), [2]
//   descents, [3] boundary descents, [4] sum of squared lengths, [5] max length, [6] ~(min
//   length), [7] empty rows, [8] spread sum, [9] row_ptr[0] is not the base, [10] row_ptr[rows]
//   is not nnz + base (the host reads those two values back only then). Each thread
//   accumulates over its grid-stride rounds; then a warp reduction, the block's through shared
//   memory, and one atomic per block and word: same-address atomics serialize in L2 (one per
//   warp and round was the larger part of the import's kernel time; one per warp still took
//   0.5 ms of a 4M-row matrix's 0.7 ms inspection on an H100, 34k warps times six words).
// Launched with at most UTIL_IMPORT_WARPS * 32 threads per block.
#define UTIL_IMPORT_WARPS 8

__device__ __forceinline__ long long util_index(const void *p, int is64, long long i) {
    return is64 ? ((const long long *)p)[i] : (long long)((const int *)p)[i];
}

__device__ __forceinline__ unsigned long long util_warp_sum(unsigned long long v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(TESSERA_FULL_MASK, v, o);
    return v;
}

__device__ __forceinline__ unsigned long long util_warp_max(unsigned long long v) {
    for (int o = 16; o > 0; o >>= 1) {
        unsigned long long w = __shfl_down_sync(TESSERA_FULL_MASK, v, o);
        v = w > v ? w : v;
    }
    return v;
}

__device__ __forceinline__ unsigned long long util_warp_min(unsigned long long v) {
    for (int o = 16; o > 0; o >>= 1) {
        unsigned long long w = __shfl_down_sync(TESSERA_FULL_MASK, v, o);
        v = w < v ? w : v;
    }
    return v;
}

extern "C" __global__ void util_import_rows(long long rows, long long nnz, long long base,
                                            const void *__restrict__ row_ptr,
                                            const void *__restrict__ col_ind, int is64,
                                            int *__restrict__ out,
                                            unsigned long long *__restrict__ status) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    // Each thread accumulates over its rows, then one warp reduction and one atomic per warp
    // and statistic (not per round: same-address atomics serialize in L2).
    unsigned long long sq = 0, mx = 0, mn = ~0ull, empty = 0, spread = 0, bdesc = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += stride) {
        const long long a = util_index(row_ptr, is64, i) - base;
        const long long b = util_index(row_ptr, is64, i + 1) - base;
        if (a > b || b > nnz || a < 0) {
            atomicMax(&status[0], ~(unsigned long long)i);
        } else {
            const unsigned long long len = (unsigned long long)(b - a);
            sq += len * len;
            mx = len > mx ? len : mx;
            mn = len < mn ? len : mn;
            if (len == 0) {
                ++empty;
            } else {
                const long long c0 = util_index(col_ind, is64, a);
                spread += (unsigned long long)(util_index(col_ind, is64, b - 1) - c0 + 1);
                if (a > 0 && util_index(col_ind, is64, a - 1) > c0) ++bdesc;
            }
        }
        // out == NULL: validate and measure only (a CSR tessera reads in place).
        if (out) out[i] = (int)a;
        if (i == 0 && a != 0) status[9] = 1;
        if (i == rows - 1) {
            if (out) out[rows] = (int)b;
            if (b != nnz) status[10] = 1;
        }
    }
    // Every thread of the block gets here (no early exit above): full-warp shuffles, then the
    // warps' results through shared memory, then one atomic per block and word.
    __shared__ unsigned long long part[6][UTIL_IMPORT_WARPS];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    sq = util_warp_sum(sq);
    empty = util_warp_sum(empty);
    spread = util_warp_sum(spread);
    bdesc = util_warp_sum(bdesc);
    mx = util_warp_max(mx);
    mn = util_warp_min(mn);
    if (lane == 0) {
        part[0][warp] = sq;
        part[1][warp] = empty;
        part[2][warp] = spread;
        part[3][warp] = bdesc;
        part[4][warp] = mx;
        part[5][warp] = mn;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)(blockDim.x >> 5); ++w) {
            sq += part[0][w];
            empty += part[1][w];
            spread += part[2][w];
            bdesc += part[3][w];
            mx = part[4][w] > mx ? part[4][w] : mx;
            mn = part[5][w] < mn ? part[5][w] : mn;
        }
        if (sq) atomicAdd(&status[4], sq);
        if (empty) atomicAdd(&status[7], empty);
        if (spread) atomicAdd(&status[8], spread);
        if (bdesc) atomicAdd(&status[3], bdesc);
        if (mx) atomicMax(&status[5], mx);
        if (mn != ~0ull) atomicMax(&status[6], ~mn);
    }
}

extern "C" __global__ void util_import_cols(long long nnz, long long cols, long long base,
                                            const void *__restrict__ col_ind, int is64,
                                            int *__restrict__ out,
                                            unsigned long long *__restrict__ status) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    unsigned long long desc = 0;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < nnz; k += stride) {
        const long long raw = util_index(col_ind, is64, k);
        const long long c = raw - base;
        if (c < 0 || c >= cols) atomicMax(&status[1], ~(unsigned long long)k);
        if (out) out[k] = (int)c;
        if (k + 1 < nnz && raw > util_index(col_ind, is64, k + 1)) ++desc;
    }
    // One warp reduction, then the block's through shared memory, and one atomic per block,
    // after the loop (every thread gets here).
    __shared__ unsigned long long part[UTIL_IMPORT_WARPS];
    desc = util_warp_sum(desc);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = desc;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)(blockDim.x >> 5); ++w) desc += part[w];
        if (desc) atomicAdd(&status[2], desc);
    }
}

// util_inspect_{i32,i64}: what util_import_rows and util_import_cols check and measure, for a
//   CSR that tessera reads in place (no outputs), in one launch. The work is cut into `tiles`
//   tiles, tile t holding rows [t*rows/tiles, (t+1)*rows/tiles) and entries [t*nnz/tiles,
//   (t+1)*nnz/tiles): a block takes tiles grid-stride and checks and measures the tile's rows
//   (row_ptr coalesced; the columns at each row's ends), then its entries, coalesced. The two
//   ranges of a tile cover about the same part of col_ind, so the row pass's reads of it mostly
//   hit what the entry pass brings into L2; a skewed matrix costs locality, never balance (each
//   tile has its share of the entries). Each thread keeps UTIL_INSPECT_UNROLL loads in flight.
// status: words [0, 11) as util_import_*'s (they accumulate here), [11] the blocks done. They
//   are zero at the start and the kernel leaves them zero: the last block to finish moves them
//   into `result` (11 words; device memory, or mapped page-locked host memory that the host
//   reads once the kernel is done), so the caller neither clears nor allocates anything. That
//   block also writes `verdict` (when not NULL): 1 when the arrays are malformed or a row's
//   columns are unsorted, else 0: the gate of the products launched before the host has read
//   the result (tessera_gated in common.cuh).
#define UTIL_INSPECT_UNROLL 8

// The int32 kernels are held to 64 registers (four blocks of 256 threads per SM, 50% occupancy;
// a few bytes spill): at 72-80 registers three blocks fit, and the check of a large matrix,
// latency-bound, ran at 26% of the DRAM bandwidth (H100, session 16).
// I: the caller's index type; N: the unsigned type of positions (rows and entries fit it: int32
// arrays hold fewer than 2^31 of each, so position + 8 * 1024 cannot wrap in 32 bits). 32-bit
// positions for int32 arrays keep the kernel at full occupancy (64-bit ones took 64 registers
// per thread, half the SM's warps, and the kernel ran at 28% of the DRAM bandwidth).
// STARTS (util_inspect_starts_i32 only): also HOLA's block row starts for `npb` non-zeros per
// block (what hola_row_starts computes: starts[b] = the row holding non-zero b*npb, starts[0] =
// 0, starts[nblocks] = rows; written only by rows found sound, so never out of bounds), and
// zeroes `zero[0, nzero)` (HOLA's carry workspace): a provisional HOLA over arrays still under
// check then needs no launch of its own (src/matrix/check.rs).
template <typename I, typename N, bool STARTS>
__device__ __forceinline__ void util_inspect(long long rows_, long long nnz_, long long cols_,
                                             long long base_, long long tiles,
                                             const I *__restrict__ row_ptr,
                                             const I *__restrict__ col_ind,
                                             unsigned long long *__restrict__ status,
                                             unsigned long long *__restrict__ result,
                                             unsigned *__restrict__ verdict,
                                             int *__restrict__ starts = nullptr,
                                             long long npb = 1, long long nblocks = 0,
                                             int *__restrict__ zero = nullptr,
                                             long long nzero = 0) {
    if (STARTS) {
        const long long t0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
        for (long long z = t0; z < nzero; z += (long long)gridDim.x * blockDim.x) {
            zero[z] = 0;
        }
        if (t0 == 0) {
            starts[0] = 0;
            starts[nblocks] = (int)rows_;
        }
    }
    const int U = UTIL_INSPECT_UNROLL;
    const N rows = (N)rows_, nnz = (N)nnz_;
    const I base = (I)base_, cols = (I)cols_;
    const N step = (N)U * blockDim.x;
    unsigned long long sq = 0, spread = 0;
    N mx = 0, mn = ~(N)0, empty = 0, bdesc = 0, desc = 0, badrow = 0, badcol = 0;
    unsigned first = 0, last = 0;
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
        const N r0 = (N)(t * rows_ / tiles), r1 = (N)((t + 1) * rows_ / tiles);
        const N e0 = (N)(t * nnz_ / tiles), e1 = (N)((t + 1) * nnz_ / tiles);
        for (N i0 = r0 + threadIdx.x; i0 < r1; i0 += step) {
            I a[U], b[U];
#pragma unroll
            for (int j = 0; j < U; ++j) {
                const N i = i0 + (N)j * blockDim.x;
                if (i < r1) {
                    a[j] = row_ptr[i] - base;
                    b[j] = row_ptr[i + 1] - base;
                }
            }
#pragma unroll
            for (int j = 0; j < U; ++j) {
                const N i = i0 + (N)j * blockDim.x;
                if (i >= r1) continue;
                if (a[j] > b[j] || (N)b[j] > nnz || a[j] < 0) {
                    // The first bad row, kept as its position + 1 (0: none).
                    badrow = (badrow == 0 || i + 1 < badrow) ? i + 1 : badrow;
                } else {
                    const N len = (N)(b[j] - a[j]);
                    sq += (unsigned long long)len * len;
                    mx = len > mx ? len : mx;
                    mn = len < mn ? len : mn;
                    if (len == 0) {
                        ++empty;
                    } else {
                        if (STARTS) {
                            long long blk = ((long long)a[j] + npb - 1) / npb;
                            blk = blk < 1 ? 1 : blk;
                            for (; blk <= ((long long)b[j] - 1) / npb; ++blk) starts[blk] = (int)i;
                        }
                        const I c0 = col_ind[a[j]];
                        spread += (unsigned long long)((long long)col_ind[b[j] - 1] - c0 + 1);
                        if (a[j] > 0 && col_ind[a[j] - 1] > c0) ++bdesc;
                    }
                }
                if (i == 0 && a[j] != 0) first = 1;
                if (i == rows - 1 && (N)b[j] != nnz) last = 1;
            }
        }
        // Each entry is compared with the next, loaded in the same batch. The kernel is bound
        // by issuing instructions (ncu: 0.66 issued per scheduler and cycle), so fewer
        // instructions per entry is what pays: a plain load of the next entry instead of a
        // shuffle and its lane tests took the 7-point Laplacian 160³'s check from 138 to 114 µs
        // and uniform 10^6 x 16's from 69 to 55 µs (H100, session 16, run I).
        // With int32 columns 16-byte aligned, the tile's whole quads of entries are read four
        // to a load (a quarter of the load instructions); the entries before the first quad
        // and after the last are read one by one.
        N q0 = e1, q1 = e1;
        if (sizeof(I) == 4 && (reinterpret_cast<unsigned long long>(col_ind) & 15ull) == 0) {
            q0 = (e0 + 3) & ~(N)3;
            q1 = e1 & ~(N)3;
            if (q0 > q1) q0 = q1 = e1;
        }
        const auto one = [&](N k, I v, I next) {
            const I c = v - base;
            if (c < 0 || c >= cols) badcol = (badcol == 0 || k + 1 < badcol) ? k + 1 : badcol;
            if (k + 1 < nnz && v > next) ++desc;
        };
        for (N k = e0 + threadIdx.x; k < q0; k += blockDim.x) {
            one(k, col_ind[k], k + 1 < nnz ? col_ind[k + 1] : (I)0);
        }
        for (N k = q1 + threadIdx.x; k < e1; k += blockDim.x) {
            one(k, col_ind[k], k + 1 < nnz ? col_ind[k + 1] : (I)0);
        }
        const int UQ = U / 2;
        for (N g0 = q0 + 4 * threadIdx.x; g0 < q1; g0 += (N)(4 * UQ) * blockDim.x) {
            int4 v[UQ];
            I w[UQ];
#pragma unroll
            for (int j = 0; j < UQ; ++j) {
                const N g = g0 + (N)(4 * j) * blockDim.x;
                v[j] = g < q1 ? *reinterpret_cast<const int4 *>(col_ind + g) : make_int4(0, 0, 0, 0);
                w[j] = g < q1 && g + 4 < nnz ? col_ind[g + 4] : (I)0;
            }
#pragma unroll
            for (int j = 0; j < UQ; ++j) {
                const N g = g0 + (N)(4 * j) * blockDim.x;
                if (g >= q1) continue;
                one(g, (I)v[j].x, (I)v[j].y);
                one(g + 1, (I)v[j].y, (I)v[j].z);
                one(g + 2, (I)v[j].z, (I)v[j].w);
                one(g + 3, (I)v[j].w, w[j]);
            }
        }
    }
    // Every thread gets here: warp reductions, the block's through shared memory, one atomic
    // per block and word.
    __shared__ unsigned long long part[11][UTIL_IMPORT_WARPS];
    __shared__ bool is_last;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    // Positions of the first bad row and entry as their complements (the largest complement is
    // the first position), as util_import_*'s words.
    unsigned long long v[11] = {badrow ? ~(unsigned long long)(badrow - 1) : 0ull,
                                badcol ? ~(unsigned long long)(badcol - 1) : 0ull,
                                desc,
                                bdesc,
                                sq,
                                mx,
                                mn == ~(N)0 ? 0ull : ~(unsigned long long)mn,
                                empty,
                                spread,
                                first,
                                last};
    const bool is_max[11] = {true, true, false, false, false, true, true, false, false, true, true};
#pragma unroll
    for (int w = 0; w < 11; ++w) v[w] = is_max[w] ? util_warp_max(v[w]) : util_warp_sum(v[w]);
    if (lane == 0) {
#pragma unroll
        for (int w = 0; w < 11; ++w) part[w][warp] = v[w];
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int q = 1; q < (int)(blockDim.x >> 5); ++q) {
#pragma unroll
            for (int w = 0; w < 11; ++w) {
                const unsigned long long p = part[w][q];
                v[w] = is_max[w] ? (p > v[w] ? p : v[w]) : v[w] + p;
            }
        }
#pragma unroll
        for (int w = 0; w < 11; ++w) {
            if (v[w] == 0) continue;
            if (is_max[w]) {
                atomicMax(&status[w], v[w]);
            } else {
                atomicAdd(&status[w], v[w]);
            }
        }
        __threadfence();
        is_last = atomicAdd(&status[11], 1ull) == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last) {
        return;
    }
    __shared__ unsigned long long fin[12];
    if (threadIdx.x < 12) {
        __threadfence();
        const unsigned long long w = atomicExch(&status[threadIdx.x], 0ull);
        fin[threadIdx.x] = w;
        if (threadIdx.x < 11) result[threadIdx.x] = w;
    }
    __syncthreads();
    if (threadIdx.x == 0 && verdict != nullptr) {
        // A bad row or entry, row_ptr[0] or row_ptr[rows] wrong, or a descent inside a row.
        *verdict = (fin[0] | fin[1] | fin[9] | fin[10]) != 0 || fin[2] != fin[3] ? 1u : 0u;
    }
}

extern "C" __global__ void __launch_bounds__(256, 4) util_inspect_i32(long long rows, long long nnz, long long cols,
                                            long long base, long long tiles,
                                            const int *__restrict__ row_ptr,
                                            const int *__restrict__ col_ind,
                                            unsigned long long *__restrict__ status,
                                            unsigned long long *__restrict__ result,
                                            unsigned *__restrict__ verdict) {
    util_inspect<int, unsigned, false>(rows, nnz, cols, base, tiles, row_ptr, col_ind, status,
                                       result, verdict);
}

extern "C" __global__ void __launch_bounds__(256, 4) util_inspect_starts_i32(
    long long rows, long long nnz, long long cols, long long base, long long tiles,
    const int *__restrict__ row_ptr, const int *__restrict__ col_ind,
    unsigned long long *__restrict__ status, unsigned long long *__restrict__ result,
    unsigned *__restrict__ verdict, int *__restrict__ starts, long long npb, long long nblocks,
    int *__restrict__ zero, long long nzero) {
    util_inspect<int, unsigned, true>(rows, nnz, cols, base, tiles, row_ptr, col_ind, status,
                                      result, verdict, starts, npb, nblocks, zero, nzero);
}

extern "C" __global__ void util_inspect_i64(long long rows, long long nnz, long long cols,
                                            long long base, long long tiles,
                                            const long long *__restrict__ row_ptr,
                                            const long long *__restrict__ col_ind,
                                            unsigned long long *__restrict__ status,
                                            unsigned long long *__restrict__ result,
                                            unsigned *__restrict__ verdict) {
    util_inspect<long long, unsigned long long, false>(rows, nnz, cols, base, tiles, row_ptr,
                                                       col_ind, status, result, verdict);
}

// ---- Exclusive scans of u32 counts, for formats built on the device (src/backend/cuda/scan.rs) ----
// `data` holds `fields` arrays of n + 1 u32 each (field f at data + f * (n + 1)); each array's
// first n values are counts, replaced by their exclusive prefix sums, and its value n by the
// total (kept modulo 2^32 there: the exact totals, as u64, go to `totals[f]`, which the host
// checks before it uses an offset).
//
// One launch (a build beside a caller's products pays for each of its launches, far more than
// for their kernels' time: notes/end-to-end.md, session 27): Merrill and Garland's single-pass
// scan with decoupled look-back. A block takes its index from a ticket (so every block before
// it has started, and its look-back ends), sums its UTIL_SCAN_ITEMS values of a field and
// publishes the sum; thread 0 then adds the published words of the blocks before it, from the
// nearest back, until one that holds its inclusive prefix, and publishes its own; then the
// block writes its values' prefix sums. Blocks of UTIL_SCAN_THREADS threads, each taking
// UTIL_SCAN_PER consecutive values. Integer sums: the result does not depend on the order.
//
// words (scan.rs `workspace_bytes`, zeroed by the caller): [0] the ticket, [1 + b * fields + f]
// block b's word of field f: 0 while it has published nothing, else UTIL_SCAN_SUM | its own sum
// or UTIL_SCAN_PREFIX | the sum of every block up to it (values below 2^62), one 64-bit store.
#define UTIL_SCAN_THREADS 256
#define UTIL_SCAN_ITEMS 1024
#define UTIL_SCAN_PER (UTIL_SCAN_ITEMS / UTIL_SCAN_THREADS)
#define UTIL_SCAN_SUM (1ull << 62)
#define UTIL_SCAN_PREFIX (1ull << 63)
#define UTIL_SCAN_VALUE (UTIL_SCAN_SUM - 1ull)

extern "C" __global__ void __launch_bounds__(UTIL_SCAN_THREADS)
    util_scan(long long n, int fields, unsigned *__restrict__ data, unsigned long long *words,
              unsigned long long *__restrict__ totals) {
    __shared__ unsigned long long warp_sums[UTIL_SCAN_THREADS / 32 + 1];
    __shared__ long long s_block;
    __shared__ unsigned long long s_prefix;
    if (threadIdx.x == 0) s_block = (long long)atomicAdd(words, 1ull);
    __syncthreads();
    const long long b = s_block;
    const long long last = n > 0 ? (n - 1) / UTIL_SCAN_ITEMS : 0;
    volatile unsigned long long *word = words + 1;
    const long long first = b * UTIL_SCAN_ITEMS + threadIdx.x * UTIL_SCAN_PER;
    for (int f = 0; f < fields; ++f) {
        unsigned *d = data + (long long)f * (n + 1);
        unsigned v[UTIL_SCAN_PER];
        unsigned long long s = 0;
#pragma unroll
        for (int j = 0; j < UTIL_SCAN_PER; ++j) {
            v[j] = first + j < n ? d[first + j] : 0u;
            s += v[j];
        }
        unsigned long long sum;
        const unsigned long long mine = tessera_block_scan<UTIL_SCAN_THREADS>(s, warp_sums, &sum);
        if (threadIdx.x == 0) {
            unsigned long long prefix = 0;
            if (b > 0) {
                word[b * fields + f] = UTIL_SCAN_SUM | sum;
                for (long long p = b - 1;; --p) {
                    unsigned long long w;
                    do {
                        w = word[p * fields + f];
                    } while (w == 0);
                    prefix += w & UTIL_SCAN_VALUE;
                    if (w & UTIL_SCAN_PREFIX) break;
                }
            }
            word[b * fields + f] = UTIL_SCAN_PREFIX | (prefix + sum);
            s_prefix = prefix;
            if (b == last) {
                totals[f] = prefix + sum;
                d[n] = (unsigned)(prefix + sum);
            }
        }
        __syncthreads();
        unsigned long long run = s_prefix + mine;
#pragma unroll
        for (int j = 0; j < UTIL_SCAN_PER; ++j) {
            if (first + j < n) d[first + j] = (unsigned)run;
            run += v[j];
        }
        __syncthreads(); // s_prefix is the next field's
    }
}
