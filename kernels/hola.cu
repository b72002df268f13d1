// hola.cu — Hola-SpMV and Hola-SpMVT (Steinberger, Zayer, Seidel, ICS'17) on tessera's CSR
// arrays (sorted columns, base 0, i32 indices). The host twin is src/methods/hola/reference.rs;
// it follows the same blocks, threads, bit masks and write paths.
//
// Work split (§3.1, §3.2): block b owns the NPB = THREADS*NPT non-zeros [b*NPB, (b+1)*NPB);
// thread t of the block owns the NPT consecutive non-zeros starting at t*NPT within it. The
// block's rows are [starts[b], r1): starts[] comes from hola_row_starts (Alg. 2), run once at
// analyze because it depends only on the pattern (the paper runs it before every product; we
// keep the buffer).
//
// Rows crossing a block boundary, two ways (params.rs chooses by grid size):
//   sharing (large grids)  every such row is shared between the blocks it spans: each product
//                          launches hola_prescale (y = beta*y for those rows), then hola_spmv,
//                          which adds each block's part with an atomic.
//   ownership (small grids, OWN) a row that spans two blocks belongs to the block where it
//                          starts, which reads the row's tail in the next block itself
//                          (HolaBlock, hola_tail) and writes y plainly; only rows spanning three
//                          blocks or more are shared, and carried (hola_spmv_carry). With every
//                          row at most NPB + 1 long there are none: hola_spmv_own alone, no
//                          carry workspace. One launch either way. The tail costs each block
//                          that has one a dependent round trip (its column ids, then x): on a
//                          grid of many waves that costs more than the prescale launch saves
//                          (notes/hola.md), on a small grid less than the launch.
//
// Kernels:
//   hola_row_starts      one thread per row (Alg. 2): starts[blk] = the row holding non-zero
//                        blk*NPB; starts[0] = 0 (leading empty rows belong to block 0) and
//                        starts[nblocks] = rows.
//   hola_prescale_<T>    one thread per block boundary: y[r] = beta*y[r] for each row shared
//                        between blocks (once per row), which the core kernel then adds to with
//                        atomics. This replaces the paper's y = 0 pass over all rows (§3.1
//                        line 8): rows owned by one block get beta*y in the core kernel's
//                        coalesced write, so y is read only when beta != 0 (BLAS semantics).
//   hola_spmv_own_<T>    the core kernel with ownership, for small grids without long rows.
//   hola_spmv_carry_<T>  the core kernel with ownership, for small grids with long rows: a block's
//                        part of a shared row goes to a carry slot (2 per block); per shared row
//                        a counter (indexed by the block where the row starts, zeroed at
//                        analyze) counts the parts, and the block that brings the last part sums
//                        them in block order, writes y[r] = alpha*sum + beta*y[r] and resets the
//                        counter (so CUDA graph replays need nothing in between). It saves a
//                        launch but adds a fence and an atomic round trip at the end of every
//                        block with a shared row: a win only while the product is launch-bound
//                        (params.rs decides; measurements in notes/hola.md).
//   hola_spmv_<T>        the core kernel (Alg. 3), one block per NPB non-zeros; three modes
//                        chosen per block from its row count (§3.3):
//                          one row      block-wide sum, one write (atomic, or a carry part, if
//                                       the row is shared);
//                          <= NPB rows  the normal path: row starts and row-end bit masks in
//                                       shared memory (Alg. 4), per-thread sums with plain
//                                       stores of completed rows into the shared output buffer,
//                                       leftovers combined by a warp segmented reduction
//                                       (Alg. 6) or shared atomics, coalesced write of the
//                                       buffer to y; the first/last row, when shared with the
//                                       neighbouring block, by atomic (or carry);
//                          > NPB rows   (many empty rows) the COO path of §3.3: each thread
//                                       finds its first row by binary search in row_ptr and
//                                       adds each row piece to y with an atomic; the block
//                                       writes beta*y of its own rows first (pieces of shared
//                                       rows are summed in shared memory, then carried).
//   hola_spmvt_<T>       Hola-SpMVT (Alg. 7): the same split and row assignment; each non-zero
//                        a_ij adds alpha*a_ij*x_i to y_j with an atomic (y holds beta*y first).
//
// Loading (Alg. 5): a warp reads its 32*NPT values and column indices with 16-byte vector loads
// (2 doubles, 4 floats, 4 ints), coalesced, then a register transpose (rotations + shuffles)
// gives each thread its own NPT consecutive entries. The last block (fewer than NPB non-zeros)
// loads element by element with bounds checks. The x gathers are issued before the row
// assignment of Alg. 4 (the paper's order is the reverse), so they overlap it. Values and
// column ids are read with the streaming hint (__ldcs, evict-first): each warp reads whole
// 128-byte lines that no other warp needs, and keeping them out of L2 leaves room for x.
// Measured on an H100 (notes/hola.md): stencil27 0.136 -> 0.124 ms, circuit 0.054 -> 0.052.
//
// Empty rows (§3.3): a warp whose threads must step over empty rows after a row end is flagged;
// flagged warps take the next non-empty row from a shared table of the row starting at each of
// the block's entries (filled with the row assignment) instead of adding 1. The paper looks it
// up in row_ptr, a chain of dependent loads per row end. Empty rows get 0 in the output buffer,
// so their y becomes beta*y.
//
// Gates: every kernel takes `gate` (NULL, or the verdict word of a check still running when the
// product was launched) and the product kernels `n` (y's length): see tessera_gated in
// common.cuh. hola_row_starts and hola_prescale return at once when the gate is shut.
//
// Defines: THREADS (threads per block: 128, 256, 512), NPT (non-zeros per thread: 4, 8),
// SORT (1: sort each thread's column ids before gathering x, §3.2 "odd-even merge"; 0: off).
// Float atomics make the result order-dependent: not bitwise reproducible.

#ifndef THREADS
#define THREADS 256
#endif
#ifndef NPT
#define NPT 8
#endif
#ifndef SORT
#define SORT 0
#endif

#if THREADS % 32 != 0 || THREADS < 32 || THREADS > 1024
#error "THREADS must be a multiple of 32 between 32 and 1024"
#endif
#if NPT != 4 && NPT != 8 && NPT != 16
#error "NPT must be 4, 8 or 16 (a power of two holding whole 16-byte vectors)"
#endif

#define HOLA_WARPS (THREADS / 32)
#define HOLA_NPB (THREADS * NPT)

// ---------------------------------------------------------------------------------------------
// Alg. 2: block row starts, one thread per row.
// Also zeroes `zero[0, nzero)` (carry mode's workspace; grid-stride), saving a memset call.
extern "C" __global__ void hola_row_starts(int rows, int nblocks, const int *__restrict__ row_ptr,
                                           int *__restrict__ starts,
                                           const unsigned *__restrict__ gate,
                                           int *__restrict__ zero, long long nzero) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long i = t; i < nzero; i += (long long)gridDim.x * blockDim.x) {
        zero[i] = 0;
    }
    if (gate != nullptr && *gate != 0u) {
        return; // malformed arrays (tessera_gated): the products fill y with NaN
    }
    if (t == 0) {
        starts[0] = 0;
        starts[nblocks] = rows;
    }
    if (t >= rows) {
        return;
    }
    const long long a = row_ptr[t], e = row_ptr[t + 1];
    if (a == e) {
        return;
    }
    // Blocks whose first non-zero lies in [a, e): the row is their starting row. Block 0 always
    // starts at row 0 (written above), so that leading empty rows have an owner.
    long long first = (a + HOLA_NPB - 1) / HOLA_NPB;
    if (first < 1) {
        first = 1;
    }
    for (long long blk = first; blk <= (e - 1) / HOLA_NPB; ++blk) {
        starts[blk] = (int)t;
    }
}

// ---------------------------------------------------------------------------------------------
// y = beta*y for rows shared between blocks, once per row: boundary b (1 <= b < nblocks) scales
// its block's first row when that row began in block b-1 (its first crossing). Runs only before
// `hola_spmv`, which shares every row crossing a block boundary (no ownership).
template <typename T>
__device__ __forceinline__ void hola_prescale(int nblocks, const int *__restrict__ row_ptr,
                                              const int *__restrict__ starts, T *y, T beta) {
    const long long b = (long long)blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (b >= nblocks) {
        return;
    }
    const int r = starts[b];
    const long long a = row_ptr[r], bs = b * HOLA_NPB;
    if (a < bs && a >= bs - HOLA_NPB) {
        y[r] = beta == T(0) ? T(0) : beta * y[r];
    }
}

// ---------------------------------------------------------------------------------------------
// Loading helpers.

__device__ __forceinline__ void hola_vload(const double *p, double *o) {
    const double2 v = __ldcs(reinterpret_cast<const double2 *>(p));
    o[0] = v.x;
    o[1] = v.y;
}
__device__ __forceinline__ void hola_vload(const float *p, float *o) {
    const float4 v = __ldcs(reinterpret_cast<const float4 *>(p));
    o[0] = v.x;
    o[1] = v.y;
    o[2] = v.z;
    o[3] = v.w;
}
__device__ __forceinline__ void hola_vload(const int *p, int *o) {
    const int4 v = __ldcs(reinterpret_cast<const int4 *>(p));
    o[0] = v.x;
    o[1] = v.y;
    o[2] = v.z;
    o[3] = v.w;
}

// Register transpose of Alg. 5 for vectors of V elements. On entry lane t holds the warp's
// vectors q = t + 32*i (i < VECS = NPT/V) in a[i*V..]; on exit lane d holds vectors d*VECS + s
// in a[s*V..], i.e. its own NPT consecutive entries. Round r: lane d pulls its slot
// s = (r + i_d) mod VECS, with i_d = d*VECS/32, from lane (d*VECS mod 32) + s, which offers its
// vector (t - r) mod VECS; the rotations before and after (selects, no dynamic register
// indexing, so nothing spills to local memory) are the paper's move sequences.
template <int V, typename E>
__device__ __forceinline__ void hola_warp_transpose(E (&a)[NPT], int lane) {
    constexpr int VECS = NPT / V;
    if (VECS == 1) {
        return;
    }
    E rot[NPT];
    const int u = lane & (VECS - 1);
#pragma unroll
    for (int j = 0; j < VECS; ++j) {
        const int k = (u - j) & (VECS - 1);
#pragma unroll
        for (int v = 0; v < V; ++v) {
            E s = a[v];
#pragma unroll
            for (int m = 1; m < VECS; ++m) {
                s = (m == k) ? a[m * V + v] : s;
            }
            rot[j * V + v] = s;
        }
    }
    const int id = (lane * VECS) >> 5;
    const int base = (lane * VECS) & 31;
    E recv[NPT];
#pragma unroll
    for (int r = 0; r < VECS; ++r) {
        const int src = base + ((r + id) & (VECS - 1));
#pragma unroll
        for (int v = 0; v < V; ++v) {
            recv[r * V + v] = __shfl_sync(TESSERA_FULL_MASK, rot[r * V + v], src);
        }
    }
#pragma unroll
    for (int s = 0; s < VECS; ++s) {
        const int k = (s - id) & (VECS - 1);
#pragma unroll
        for (int v = 0; v < V; ++v) {
            E w = recv[v];
#pragma unroll
            for (int m = 1; m < VECS; ++m) {
                w = (m == k) ? recv[m * V + v] : w;
            }
            a[s * V + v] = w;
        }
    }
}

template <typename T> struct HolaVecWidth;
template <> struct HolaVecWidth<double> { static const int N = 2; };
template <> struct HolaVecWidth<float> { static const int N = 4; };

// Thread tid's NPT column ids and values of the block starting at non-zero bs (bn of them).
// Full blocks: coalesced vector loads + transpose; the last, partial block: guarded scalar
// loads, padding entries are column 0 with value 0.
template <typename T>
__device__ __forceinline__ void hola_load(long long bs, int bn, int tid,
                                          const int *__restrict__ col_ind,
                                          const T *__restrict__ values, int (&col)[NPT],
                                          T (&val)[NPT]) {
    if (bn == HOLA_NPB) {
        constexpr int VV = HolaVecWidth<T>::N;
        const int lane = tid & 31;
        const long long warp_off = bs + (long long)(tid >> 5) * 32 * NPT;
#pragma unroll
        for (int i = 0; i < NPT / VV; ++i) {
            hola_vload(values + warp_off + VV * (lane + 32 * i), val + i * VV);
        }
#pragma unroll
        for (int i = 0; i < NPT / 4; ++i) {
            hola_vload(col_ind + warp_off + 4 * (lane + 32 * i), col + i * 4);
        }
        hola_warp_transpose<VV>(val, lane);
        hola_warp_transpose<4>(col, lane);
    } else {
        const long long p0 = bs + (long long)tid * NPT;
#pragma unroll
        for (int j = 0; j < NPT; ++j) {
            const bool in = j + tid * NPT < bn;
            col[j] = in ? __ldcs(col_ind + p0 + j) : 0;
            val[j] = in ? __ldcs(values + p0 + j) : T(0);
        }
    }
}

// Batcher's odd-even merge sort network on NPT keys, carrying a payload (§3.2: "a simple
// odd-even-merge sort for each thread's col ids"). All indices are compile-time constants.
template <typename K, typename P>
__device__ __forceinline__ void hola_sort(K (&key)[NPT], P (&pay)[NPT]) {
#pragma unroll
    for (int p = 1; p < NPT; p <<= 1) {
#pragma unroll
        for (int k = p; k >= 1; k >>= 1) {
#pragma unroll
            for (int j = k % p; j + k < NPT; j += 2 * k) {
#pragma unroll
                for (int i = 0; i < k; ++i) {
                    const int lo = i + j, hi = i + j + k;
                    if (hi < NPT && lo / (2 * p) == hi / (2 * p)) {
                        const bool sw = key[lo] > key[hi];
                        const K kl = key[lo], kh = key[hi];
                        const P pl = pay[lo], ph = pay[hi];
                        key[lo] = sw ? kh : kl;
                        key[hi] = sw ? kl : kh;
                        pay[lo] = sw ? ph : pl;
                        pay[hi] = sw ? pl : ph;
                    }
                }
            }
        }
    }
}

// xs[j] = x[col[j]] (§3.2: issued right after the matrix loads, so that the gathers are in
// flight while the block assigns its rows). With SORT the gathers go out in ascending column
// order and come back in the thread's order.
template <typename T>
__device__ __forceinline__ void hola_gather(int (&col)[NPT], const T *__restrict__ x,
                                            T (&xs)[NPT]) {
#if SORT
    int c[NPT], idx[NPT];
#pragma unroll
    for (int j = 0; j < NPT; ++j) {
        c[j] = col[j];
        idx[j] = j;
    }
    hola_sort(c, idx);
#pragma unroll
    for (int j = 0; j < NPT; ++j) {
        xs[j] = __ldg(x + c[j]);
    }
    hola_sort(idx, xs);
#else
#pragma unroll
    for (int j = 0; j < NPT; ++j) {
        xs[j] = __ldg(x + col[j]);
    }
#endif
}

// prod[j] = val[j] * xs[j]; padding (beyond bn) gives 0 whatever x holds.
template <typename T>
__device__ __forceinline__ void hola_multiply(int bn, int tid, const T (&val)[NPT],
                                              const T (&xs)[NPT], T (&prod)[NPT]) {
#pragma unroll
    for (int j = 0; j < NPT; ++j) {
        prod[j] = j + tid * NPT < bn ? val[j] * xs[j] : T(0);
    }
}

// ---------------------------------------------------------------------------------------------
// The block's rows: [r0, r0 + nrows); whether the first/last is shared with a neighbour.
//
// Ownership: a row that spans exactly two blocks belongs to the block where it starts, which
// reads the row's tail in the next block itself (`tail_end` > 0: entries [bs + NPB, tail_end),
// fewer than NPB) and writes y plainly; the next block skips the row (`first_skip`). Only rows
// spanning three blocks or more are shared (`first_shared`, `last_shared`): carried or added
// with atomics. So a matrix whose rows are all at most NPB + 1 long has no shared row at all,
// and runs as one launch without carry or prescale.
struct HolaBlock {
    long long bs;       // first non-zero
    long long tail_end; // end of the owned last row's tail in the next block (0: none)
    int bn;             // non-zeros (NPB except in the last block)
    int r0;             // first row
    int nrows;          // rows in the block's range, empty ones included
    bool first_shared, last_shared; // the first/last row spans three blocks or more
    bool first_skip;                // the first row belongs to the previous block
};

template <bool OWN>
__device__ __forceinline__ HolaBlock hola_block(int nnz, int nblocks,
                                                const int *__restrict__ row_ptr,
                                                const int *__restrict__ starts) {
    HolaBlock k;
    const int b = blockIdx.x;
    k.bs = (long long)b * HOLA_NPB;
    k.bn = (int)min((long long)HOLA_NPB, (long long)nnz - k.bs);
    k.r0 = starts[b];
    int r1 = starts[nblocks]; // the row count
    k.last_shared = false;
    k.tail_end = 0;
    if (b + 1 < nblocks) {
        const int rn = starts[b + 1];
        const long long a = row_ptr[rn];
        r1 = rn;
        if (a < k.bs + HOLA_NPB) { // row rn goes on in the next block
            r1 = rn + 1;
            const long long e = row_ptr[rn + 1];
            if (OWN && a >= k.bs && e <= k.bs + 2 * HOLA_NPB) {
                k.tail_end = e; // it starts here and ends in the next block: ours
            } else {
                k.last_shared = true;
            }
        }
    }
    k.nrows = r1 - k.r0;
    const long long a0 = row_ptr[k.r0];
    const bool cont = a0 < k.bs; // the first row began in an earlier block
    k.first_skip = OWN && cont && a0 >= k.bs - HOLA_NPB && row_ptr[k.r0 + 1] <= k.bs + HOLA_NPB;
    k.first_shared = cont && !k.first_skip;
    return k;
}

// This thread's first entry of the owned last row's tail (k.tail_end > 0): entries
// [bs + NPB, tail_end), strided over the block's threads so the loads coalesce. Issued with the
// block's own gathers, so its latency overlaps theirs; three registers.
template <typename T>
__device__ __forceinline__ T hola_tail(const HolaBlock &k, const int *__restrict__ col_ind,
                                       const T *__restrict__ values, const T *__restrict__ x) {
    const long long p = k.bs + HOLA_NPB + threadIdx.x;
    return p < k.tail_end ? __ldg(values + p) * __ldg(x + __ldg(col_ind + p)) : T(0);
}

// `first` (hola_tail's) plus this thread's later entries of a tail longer than THREADS (rare),
// read at the end.
template <typename T>
__device__ __forceinline__ T hola_tail_rest(const HolaBlock &k, const int *__restrict__ col_ind,
                                            const T *__restrict__ values,
                                            const T *__restrict__ x, T first) {
#pragma unroll 1
    for (long long p = k.bs + HOLA_NPB + THREADS + threadIdx.x; p < k.tail_end; p += THREADS) {
        first += __ldg(values + p) * __ldg(x + __ldg(col_ind + p));
    }
    return first;
}

// Alg. 4 (AssignRowsLocal): s_row[t] = local index of the row holding thread t's first
// non-zero (-1 for threads without non-zeros), s_bits[t] bit j = thread t's j-th non-zero ends
// a row (or the block), s_flag[w] = warp w must step over empty rows, s_at[p] = local index of
// the row starting at the block's entry p (written for every non-empty row; read only by
// flagged warps, for entries below bn). Empty rows get 0 in s_out when given. Ends with a
// barrier.
template <typename T>
__device__ __forceinline__ void hola_assign_rows(const HolaBlock &k, const int *__restrict__ row_ptr,
                                                 int *s_row, unsigned *s_bits, int *s_flag,
                                                 unsigned short *s_at, T *s_out) {
    const int tid = threadIdx.x;
    s_row[tid] = -1;
    s_bits[tid] = 0;
    if (tid < HOLA_WARPS) {
        s_flag[tid] = 0;
    }
    __syncthreads();
    for (int i = tid; i < k.nrows; i += THREADS) {
        const int r = k.r0 + i;
        long long a = row_ptr[r] - k.bs, e = row_ptr[r + 1] - k.bs;
        a = a < 0 ? 0 : a;
        e = e > HOLA_NPB ? HOLA_NPB : e;
        if (a >= e) {
            // Empty row at position a: the thread holding non-zero a-1 ends a row there and
            // must step over this one (§3.3): flag its warp.
            if (s_out) {
                s_out[i] = T(0);
            }
            if (a > 0) {
                s_flag[(a - 1) / (32 * NPT)] = 1;
            }
        } else {
            const int ta = (int)((a + NPT - 1) / NPT), tb = (int)((e - 1) / NPT);
            s_at[a] = (unsigned short)i;
            for (int t = ta; t <= tb; ++t) {
                s_row[t] = i;
            }
            atomicOr(&s_bits[tb], 1u << (unsigned)((e - 1) - (long long)tb * NPT));
        }
    }
    __syncthreads();
}

// The local row after `row`, which ended at the block's entry p, that holds a non-zero: row + 1,
// or in a flagged warp the row starting at entry p + 1 (past the block's last entry nothing
// reads the row any more).
__device__ __forceinline__ int hola_next_row(int row, bool flagged, int p, const HolaBlock &k,
                                             const unsigned short *s_at) {
    return flagged && p + 1 < k.bn ? (int)s_at[p + 1] : row + 1;
}

// The COO path (§3.3): the row holding non-zero p (binary search over the block's rows).
__device__ __forceinline__ int hola_find_row(const HolaBlock &k, const int *__restrict__ row_ptr,
                                             long long p) {
    int lo = k.r0, hi = k.r0 + k.nrows - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (row_ptr[mid] <= p) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

template <typename T>
__device__ __forceinline__ T hola_block_sum(T v, T *scratch) {
    v = tessera_group_sum<32>(v);
    const int tid = threadIdx.x;
    __syncthreads(); // scratch may still be read by a previous call
    if ((tid & 31) == 0) {
        scratch[tid >> 5] = v;
    }
    __syncthreads();
    T s = T(0);
    if (tid == 0) {
        for (int w = 0; w < HOLA_WARPS; ++w) {
            s += scratch[w];
        }
    }
    return s;
}

// The carry protocol for a row shared between blocks (see the top of the file). Called by
// every thread of the block with the same arguments; `part` matters in thread 0 only. The
// block's part goes to carry[slot] (slot 2b for the block's first row, 2b+1 for its last); the
// block that brings the row's last part sums the parts of blocks s..e in order (s: where the
// row starts, e: where it ends) and writes y.
template <typename T>
__device__ __forceinline__ void hola_carry(int r, int slot, T part,
                                           const int *__restrict__ row_ptr, T *carry,
                                           int *count, T *y, T alpha, T beta, T *scratch,
                                           int *s_last) {
    const int tid = threadIdx.x;
    __syncthreads(); // s_last and scratch are free
    if (tid == 0) {
        carry[slot] = part;
        __threadfence();
        const long long a = row_ptr[r], e = row_ptr[r + 1];
        const int s = (int)(a / HOLA_NPB), last = (int)((e - 1) / HOLA_NPB);
        const int ticket = atomicAdd(count + s, 1);
        *s_last = ticket == last - s ? s : -1;
    }
    __syncthreads();
    const int s = *s_last;
    if (s >= 0) {
        __threadfence();
        const long long e = row_ptr[r + 1];
        const int last = (int)((e - 1) / HOLA_NPB);
        T v = T(0);
        for (int b = s + tid; b <= last; b += THREADS) {
            v += __ldcg(carry + (b == s ? 2 * b + 1 : 2 * b));
        }
        v = hola_block_sum(v, scratch);
        if (tid == 0) {
            y[r] = beta == T(0) ? alpha * v : alpha * v + beta * y[r];
            count[s] = 0;
        }
    }
}

// Share mode (hola_spmv, after hola_prescale): the product overlaps the prescale
// (launch_overlapped); wait for its y = beta*y before the first atomic into a shared row. The
// other modes run alone.
template <bool CARRY, bool OWN>
__device__ __forceinline__ void hola_wait_prescale() {
    if constexpr (!CARRY && !OWN) {
        tessera_wait_primary();
    }
}

// ---------------------------------------------------------------------------------------------
// Alg. 3: the core product.
template <typename T, bool CARRY, bool OWN>
__device__ __forceinline__ void hola_spmv(int nnz, int nblocks, const int *__restrict__ row_ptr,
                                          const int *__restrict__ col_ind,
                                          const T *__restrict__ values,
                                          const int *__restrict__ starts,
                                          const T *__restrict__ x, T *y, T alpha, T beta,
                                          T *carry, int *count) {
    __shared__ int s_row[THREADS];
    __shared__ unsigned s_bits[THREADS];
    __shared__ int s_flag[HOLA_WARPS];
    __shared__ unsigned short s_at[HOLA_NPB];
    __shared__ T s_out[HOLA_NPB];
    __shared__ T s_acc[2];
    __shared__ int s_last;
    const int b = blockIdx.x;
    const int tid = threadIdx.x, lane = tid & 31;
    const HolaBlock k = hola_block<OWN>(nnz, nblocks, row_ptr, starts);
    int col[NPT];
    T val[NPT], xs[NPT], prod[NPT];
    hola_load<T>(k.bs, k.bn, tid, col_ind, values, col, val);
    hola_gather<T>(col, x, xs);
    const T tail = OWN ? hola_tail<T>(k, col_ind, values, x) : T(0);

    if (k.nrows == 1) {
        if (k.first_skip) {
            return; // the previous block's row, ending here: it reads this part itself
        }
        hola_multiply<T>(k.bn, tid, val, xs, prod);
        // One row (a long row's middle, §3.3): block-wide sum, one write.
        T s = hola_tail_rest<T>(k, col_ind, values, x, tail);
#pragma unroll
        for (int j = 0; j < NPT; ++j) {
            s += prod[j];
        }
        s = hola_block_sum(s, s_out);
        hola_wait_prescale<CARRY, OWN>();
        if ((k.first_shared || k.last_shared) && CARRY) {
            hola_carry(k.r0, k.first_shared ? 2 * b : 2 * b + 1, s, row_ptr, carry, count, y,
                       alpha, beta, s_out, &s_last);
        } else if (k.first_shared || k.last_shared) {
            if (tid == 0) {
                atomicAdd(y + k.r0, alpha * s);
            }
        } else if (tid == 0) {
            y[k.r0] = beta == T(0) ? alpha * s : alpha * s + beta * y[k.r0];
        }
        return;
    }

    if (k.nrows > HOLA_NPB) {
        // More rows than the output buffer holds (many empty rows), §3.3: this block's own
        // rows get beta*y first, then every row piece is added with an atomic; pieces of the
        // shared first/last row are summed in shared memory and carried.
        if (tid < 2) {
            s_acc[tid] = T(0);
        }
        for (int i = tid; i < k.nrows; i += THREADS) {
            const bool shared = (i == 0 && (k.first_shared || k.first_skip)) ||
                                (i == k.nrows - 1 && k.last_shared);
            if (!shared) {
                y[k.r0 + i] = beta == T(0) ? T(0) : beta * y[k.r0 + i];
            }
        }
        hola_wait_prescale<CARRY, OWN>();
        __syncthreads();
        if (k.tail_end != 0) {
            const T v = tessera_group_sum<32>(hola_tail_rest<T>(k, col_ind, values, x, tail));
            if (lane == 0) {
                atomicAdd(y + k.r0 + k.nrows - 1, alpha * v);
            }
        }
        hola_multiply<T>(k.bn, tid, val, xs, prod);
        const long long p0 = k.bs + (long long)tid * NPT;
        const long long pend = k.bs + k.bn;
        if (p0 < pend) {
            int r = hola_find_row(k, row_ptr, p0);
            long long end = row_ptr[r + 1];
            T t = T(0);
#pragma unroll
            for (int j = 0; j < NPT; ++j) {
                const long long p = p0 + j;
                if (p < pend) {
                    t += prod[j];
                    if (p + 1 == end || j == NPT - 1 || p + 1 == pend) {
                        if (r == k.r0 && k.first_skip) {
                            // the previous block's row
                        } else if (!CARRY) {
                            atomicAdd(y + r, alpha * t);
                        } else if (r == k.r0 && k.first_shared) {
                            atomicAdd(s_acc, t);
                        } else if (r == k.r0 + k.nrows - 1 && k.last_shared) {
                            atomicAdd(s_acc + 1, t);
                        } else {
                            atomicAdd(y + r, alpha * t);
                        }
                        t = T(0);
                        if (p + 1 == end && j < NPT - 1 && p + 1 < pend) {
                            do {
                                ++r;
                                end = row_ptr[r + 1];
                            } while (end <= p + 1);
                        }
                    }
                }
            }
        }
        if (!CARRY) {
            return;
        }
        __syncthreads();
        const T first = s_acc[0], last = s_acc[1];
        if (k.first_shared) {
            hola_carry(k.r0, 2 * b, first, row_ptr, carry, count, y, alpha, beta, s_out, &s_last);
        }
        if (k.last_shared) {
            hola_carry(k.r0 + k.nrows - 1, 2 * b + 1, last, row_ptr, carry, count, y, alpha, beta,
                       s_out, &s_last);
        }
        return;
    }

    // The normal path.
    hola_assign_rows<T>(k, row_ptr, s_row, s_bits, s_flag, s_at, s_out);
    hola_multiply<T>(k.bn, tid, val, xs, prod);
    int row = s_row[tid];
    const unsigned bits = s_bits[tid];
    const bool flagged = s_flag[tid >> 5] != 0;
    const bool active = tid * NPT < k.bn;
    T t = T(0);
    bool open = false; // t holds non-zeros of `row` not yet stored
#pragma unroll
    for (int j = 0; j < NPT; ++j) {
        t += prod[j];
        open = open || (j + tid * NPT < k.bn);
        if ((bits >> j) & 1u) {
            s_out[row] = t;
            t = T(0);
            open = false;
            row = hola_next_row(row, flagged, tid * NPT + j, k, s_at);
        }
    }
    __syncthreads(); // every completed row is stored before the leftovers are added
    const unsigned open_mask = __ballot_sync(TESSERA_FULL_MASK, open);
    const unsigned no_end = __ballot_sync(TESSERA_FULL_MASK, active && bits == 0);
    if (__popc(no_end) > 16) {
        // Alg. 6: segmented warp reduction of the leftovers. A segment starts at a lane that
        // ended a row (or lane 0) and runs over the following lanes without a row end, which
        // all continue the same row; its head adds the segment's sum.
        const bool head = bits != 0 || lane == 0;
        const unsigned heads = __ballot_sync(TESSERA_FULL_MASK, head);
        const unsigned above = lane == 31 ? 0u : heads & ~((2u << lane) - 1u);
        const int seg_end = above ? __ffs(above) - 2 : 31;
        T v = open ? t : T(0);
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const T w = __shfl_down_sync(TESSERA_FULL_MASK, v, o);
            if (lane + o <= seg_end) {
                v += w;
            }
        }
        const unsigned seg =
            (seg_end == 31 ? 0xffffffffu : ((2u << seg_end) - 1u)) & ~((1u << lane) - 1u);
        if (head && (open_mask & seg)) {
            atomicAdd(s_out + row, v);
        }
    } else if (open) {
        atomicAdd(s_out + row, t);
    }
    if (k.tail_end != 0) {
        const T v = tessera_group_sum<32>(hola_tail_rest<T>(k, col_ind, values, x, tail));
        if (lane == 0) {
            atomicAdd(s_out + k.nrows - 1, v);
        }
    }
    __syncthreads();
    hola_wait_prescale<CARRY, OWN>();
    // Coalesced write of the buffer; a row shared with a neighbouring block is added with an
    // atomic (its y holds beta*y from hola_prescale) or carried.
    const T first = s_out[0], last = s_out[k.nrows - 1];
    for (int i = tid; i < k.nrows; i += THREADS) {
        const int r = k.r0 + i;
        const T v = alpha * s_out[i];
        if (i == 0 && k.first_skip) {
            // the previous block's row
        } else if (!((i == 0 && k.first_shared) || (i == k.nrows - 1 && k.last_shared))) {
            y[r] = beta == T(0) ? v : v + beta * y[r];
        } else if (!CARRY) {
            atomicAdd(y + r, v);
        }
    }
    if (!CARRY) {
        return;
    }
    if (k.first_shared) {
        hola_carry(k.r0, 2 * b, first, row_ptr, carry, count, y, alpha, beta, s_out, &s_last);
    }
    if (k.last_shared) {
        hola_carry(k.r0 + k.nrows - 1, 2 * b + 1, last, row_ptr, carry, count, y, alpha, beta,
                   s_out, &s_last);
    }
}

// ---------------------------------------------------------------------------------------------
// Alg. 7: Hola-SpMVT. y must hold beta*y. Each non-zero a_ij adds alpha*a_ij*x_i to y_j.
template <typename T>
__device__ __forceinline__ void hola_spmvt(int nnz, int nblocks,
                                           const int *__restrict__ row_ptr,
                                           const int *__restrict__ col_ind,
                                           const T *__restrict__ values,
                                           const int *__restrict__ starts,
                                           const T *__restrict__ x, T *y, T alpha) {
    __shared__ int s_row[THREADS];
    __shared__ unsigned s_bits[THREADS];
    __shared__ int s_flag[HOLA_WARPS];
    __shared__ unsigned short s_at[HOLA_NPB];
    const int tid = threadIdx.x;
    const HolaBlock k = hola_block<false>(nnz, nblocks, row_ptr, starts);
    int col[NPT];
    T val[NPT];
    hola_load<T>(k.bs, k.bn, tid, col_ind, values, col, val);
    const long long p0 = k.bs + (long long)tid * NPT;
    const long long pend = k.bs + k.bn;
    // Scale each value by alpha*x[row of the value] (lines 9-14).
    if (k.nrows == 1) {
        const T f = alpha * __ldg(x + k.r0);
#pragma unroll
        for (int j = 0; j < NPT; ++j) {
            val[j] *= f;
        }
    } else if (k.nrows > HOLA_NPB) {
        if (p0 < pend) {
            int r = hola_find_row(k, row_ptr, p0);
            long long end = row_ptr[r + 1];
            T f = alpha * __ldg(x + r);
#pragma unroll
            for (int j = 0; j < NPT; ++j) {
                const long long p = p0 + j;
                val[j] *= f;
                if (p + 1 == end && p + 1 < pend && j < NPT - 1) {
                    do {
                        ++r;
                        end = row_ptr[r + 1];
                    } while (end <= p + 1);
                    f = alpha * __ldg(x + r);
                }
            }
        }
    } else {
        hola_assign_rows<T>(k, row_ptr, s_row, s_bits, s_flag, s_at, (T *)nullptr);
        int row = s_row[tid];
        const unsigned bits = s_bits[tid];
        const bool flagged = s_flag[tid >> 5] != 0;
        if (row >= 0) {
            T f = alpha * __ldg(x + k.r0 + row);
#pragma unroll
            for (int j = 0; j < NPT; ++j) {
                val[j] *= f;
                if ((bits >> j) & 1u) {
                    row = hola_next_row(row, flagged, tid * NPT + j, k, s_at);
                    if (j < NPT - 1 && j + 1 + tid * NPT < k.bn) {
                        f = alpha * __ldg(x + k.r0 + row);
                    }
                }
            }
        }
    }
    // Padding (the last block) is marked by column -1 and skipped.
#pragma unroll
    for (int j = 0; j < NPT; ++j) {
        col[j] = p0 + j < pend ? col[j] : -1;
    }
#if SORT
    hola_sort(col, val); // line 15: sorted column access within the thread
#endif
#pragma unroll
    for (int j = 0; j < NPT; ++j) {
        if (col[j] >= 0) {
            atomicAdd(y + col[j], val[j]);
        }
    }
}

// One product entry point: hola_spmv<T, CARRY, OWN> behind the gate.
#define HOLA_SPMV_ENTRY(T, NAME, CARRY, OWN)                                                   \
    extern "C" __global__ void __launch_bounds__(THREADS) NAME(                                \
        int nnz, int nblocks, const int *__restrict__ row_ptr, const int *__restrict__ col_ind, \
        const T *__restrict__ values, const int *__restrict__ starts, const T *__restrict__ x,  \
        T *y, T alpha, T beta, T *carry, int *count, const unsigned *__restrict__ gate, int n) { \
        if (tessera_gated(gate, n, y)) {                                                       \
            hola_wait_prescale<CARRY, OWN>();                                                  \
            return;                                                                            \
        }                                                                                      \
        hola_spmv<T, CARRY, OWN>(nnz, nblocks, row_ptr, col_ind, values, starts, x, y, alpha,   \
                                 beta, carry, count);                                          \
    }

#define HOLA_ENTRY(T, S)                                                                       \
    extern "C" __global__ void hola_prescale_##S(int nblocks, const int *__restrict__ row_ptr, \
                                                 const int *__restrict__ starts, T *y, T beta,  \
                                                 const unsigned *__restrict__ gate) {           \
        tessera_release_dependents();                                                          \
        if (gate != nullptr && *gate != 0u) return;                                            \
        hola_prescale<T>(nblocks, row_ptr, starts, y, beta);                                   \
    }                                                                                          \
    HOLA_SPMV_ENTRY(T, hola_spmv_##S, false, false)                                            \
    HOLA_SPMV_ENTRY(T, hola_spmv_own_##S, false, true)                                         \
    HOLA_SPMV_ENTRY(T, hola_spmv_carry_##S, true, true)                                        \
    extern "C" __global__ void __launch_bounds__(THREADS) hola_spmvt_##S(                      \
        int nnz, int nblocks, const int *__restrict__ row_ptr, const int *__restrict__ col_ind, \
        const T *__restrict__ values, const int *__restrict__ starts, const T *__restrict__ x,  \
        T *y, T alpha, const unsigned *__restrict__ gate, int n) {                             \
        if (tessera_gated(gate, n, y)) return;                                                 \
        hola_spmvt<T>(nnz, nblocks, row_ptr, col_ind, values, starts, x, y, alpha);            \
    }
TESSERA_INSTANTIATE(HOLA_ENTRY)
