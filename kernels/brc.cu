// brc.cu — BRC SpMV (Ashari, Sedaghati, Eisenlohr, Sadayappan, ICS'14), Figure 3 done
// properly, plus the ELL part of the ELL+BRC hybrid (§5, §8) and the two small kernels that
// finish rows the BRC kernel cannot finish alone.
//
// Format (built on the host, src/methods/brc/format.rs): rows sorted by length; blocks of B1
// block rows (B1 = 32: one warp per block), block b being B1 x T_b, column-major at
// block_info[b].x: slot (r, j) at block_info[b].x + j*B1 + r, T_b = block_info[b].y. A row
// longer than B2 is cut in pieces that sit in several block rows. dest[t] says what block row
// t does with its sum:
//   0xFFFFFFFF        dummy row (the last block's filler): nothing;
//   row (bit 31 = 0)  the block row owns the row: y[row] = alpha*sum + beta*y[row] (no atomic);
//   SPLIT | i         the row has other contributions: atomicAdd(y + i, alpha*sum) into a y that
//                     brc_scale_rows (or brc_ell, hybrid) made ready, or, deterministic
//                     variant (partial != NULL), partial[i] = sum, finished by brc_reduce.
//
// Work split:
//   brc_spmv_<T>:       one thread per block row (Figure 3): thread tid takes block rows tid,
//                       tid + G, ..., tid + (rep-1)*G, G = gridDim.x*blockDim.x (Figure 3's
//                       `tid += blockDim.x * blockDim.x` read as the grid stride). Block row t
//                       is row t % B1 of block t / B1, so with B1 = 32 a warp is one block (one
//                       T: no divergence, §3.1) and with B1 a multiple of 32 a block is B1/32
//                       consecutive warps. The coarsening (§3.3, rep > 1 when sigma > mu) gives
//                       each warp blocks a grid apart: wide blocks from the top of the order
//                       interleaved with narrow ones from further down. Loads of data and
//                       column indices are coalesced (32 consecutive slots per warp); padding
//                       reuses a column another lane loads in the same instruction.
//   brc_scale_rows_<T>: one thread per listed row: y = beta*y (0 when beta = 0, y not read).
//                       Atomic variant, pure BRC: runs first, for split rows (which then
//                       receive atomics) and empty rows (which are in no block). brc_spmv
//                       overlaps it (and brc_ell) on devices that allow it, waiting for it
//                       before its first atomic (tessera_wait_primary, kernels/common.cuh).
//   brc_ell_<T>:        hybrid: one thread per row, the row's first k entries (ELL, column-major
//                       rows x k, no permutation): y = alpha*sum + beta*y for every row. Runs
//                       first; all BRC block rows are then SPLIT (they add).
//   brc_reduce_<T>:     deterministic variant: one thread per listed row, sums the row's
//                       partials in block-row order: y = alpha*s + beta*y, or y += alpha*s after
//                       the ELL part (accumulate != 0). Empty rows are listed with no partials.
//
// BLAS semantics: y = alpha*A*x + beta*y; beta == 0 never reads y (NaN in y cannot leak). The
// atomic variant is not bitwise reproducible (float atomics land in any order); the
// deterministic one is.
//
// Defines: none. B1, rep, the ELL width and the block size are launch arguments, so one module
// serves every candidate the tuner tries; so is `stream` (brc_spmv, brc_ell): the matrix arrays
// read with the streaming hint or plain loads (tessera_matrix_load).

#define BRC_DUMMY 0xFFFFFFFFu
#define BRC_SPLIT 0x80000000u

template <typename T, bool STREAM>
__device__ __forceinline__ void brc_spmv(long long block_rows, int b1, int rep,
                                         const uint2 *__restrict__ block_info,
                                         const unsigned *__restrict__ dest,
                                         const int *__restrict__ col,
                                         const T *__restrict__ val, const T *__restrict__ x,
                                         T *__restrict__ y, T *__restrict__ partial, T alpha,
                                         T beta) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    // Launched overlapping brc_scale_rows or brc_ell (launch_overlapped): a split row's atomic
    // waits for that kernel, and so does every thread at its end (the product never completes
    // before it). Owned rows are in no scale list: their writes do not wait. (A wait before
    // every thread's first write, whatever its row, cost 2-15% on the H100.)
    for (int i = 0; i < rep; ++i, t += stride) {
        if (t >= block_rows) {
            break;
        }
        const unsigned d = tessera_ro_load(dest + t);
        if (d == BRC_DUMMY) {
            continue;
        }
        // block_rows < 2^31 (format.rs checks it): 32-bit division.
        const unsigned cb = (unsigned)t / (unsigned)b1;
        const unsigned r = (unsigned)t - cb * (unsigned)b1;
        const uint2 info = tessera_ro_load(block_info + cb);
        const unsigned width = info.y;
        unsigned e = info.x + r;
        T sum = T(0);
        // Values and column ids are read once per product: streaming loads (evict-first) on a
        // matrix larger than the L2, so they do not push x out of the caches (H100: powerlaw
        // 0.153 -> 0.146 ms, emptyrows 0.171 -> 0.161 ms, circuit 0.065 -> 0.063 ms; stencils
        // unchanged); plain ones on a smaller matrix (tessera_matrix_load).
#pragma unroll 4
        for (unsigned j = 0; j < width; ++j, e += (unsigned)b1) {
            sum += tessera_matrix_load<STREAM>(val + e) *
                   tessera_ro_load(x + tessera_matrix_load<STREAM>(col + e));
        }
        const unsigned low = d & ~BRC_SPLIT;
        if ((d & BRC_SPLIT) == 0u) {
            y[low] = beta != T(0) ? alpha * sum + beta * y[low] : alpha * sum;
        } else if (partial != nullptr) {
            partial[low] = sum;
        } else {
            tessera_wait_primary();
            atomicAdd(y + low, alpha * sum);
        }
    }
    tessera_wait_primary();
}

template <typename T>
__device__ __forceinline__ void brc_scale_rows(int n, const unsigned *__restrict__ rows,
                                               T *__restrict__ y, T beta) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const unsigned r = tessera_ro_load(rows + i);
        y[r] = beta != T(0) ? beta * y[r] : T(0);
    }
}

template <typename T, bool STREAM>
__device__ __forceinline__ void brc_ell(int rows, int k, const int *__restrict__ col,
                                        const T *__restrict__ val, const T *__restrict__ x,
                                        T *__restrict__ y, T alpha, T beta) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) {
        return;
    }
    T sum = T(0);
    unsigned e = (unsigned)i;
#pragma unroll 4
    for (int j = 0; j < k; ++j, e += (unsigned)rows) {
        // As in brc_spmv.
        sum += tessera_matrix_load<STREAM>(val + e) *
               tessera_ro_load(x + tessera_matrix_load<STREAM>(col + e));
    }
    y[i] = beta != T(0) ? alpha * sum + beta * y[i] : alpha * sum;
}

template <typename T>
__device__ __forceinline__ void brc_reduce(int n, const unsigned *__restrict__ rows,
                                           const unsigned *__restrict__ ptr,
                                           const T *__restrict__ partial, T *__restrict__ y,
                                           T alpha, T beta, int accumulate) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    const unsigned r = tessera_ro_load(rows + i);
    const unsigned end = tessera_ro_load(ptr + i + 1);
    T s = T(0);
    for (unsigned p = tessera_ro_load(ptr + i); p < end; ++p) {
        s += partial[p];
    }
    if (accumulate) {
        y[r] = y[r] + alpha * s;
    } else {
        y[r] = beta != T(0) ? alpha * s + beta * y[r] : alpha * s;
    }
}

// The column a padding lane of a warp stores for one slot, as format.rs pads: the column of the
// nearest lane below it with an entry there (the nearest row above), else of the lowest lane
// with one, else 0. `c` is the lane's own column (0 where it has none). Every lane calls it.
__device__ __forceinline__ int brc_pad_column(bool has, int c, int lane) {
    const unsigned with = __ballot_sync(TESSERA_FULL_MASK, has);
    const unsigned above = with & ((1u << lane) - 1u);
    const int src = above ? 31 - __clz(above) : (with ? __ffs(with) - 1 : 0);
    return __shfl_sync(TESSERA_FULL_MASK, c, src);
}

// brc_ell_build_<T>: the ELL part of a pure-ELL hybrid (k = the longest row: no BRC blocks),
// built on the device from tessera's CSR, exactly as format.rs builds it on the host: slot
// (row i, j) at j*rows + i holds row i's j-th entry; value_slot[e] names the slot of CSR entry
// e; a padding slot holds 0 and the column of the nearest row above in its aligned group of 32
// rows with an entry in column j, else the first such row below, else column 0.
// One warp per block and per group of 32 rows. The group's entries are contiguous in the CSR:
// they are read once, coalesced, into shared memory (32*k values then 32*k columns, k <= 96:
// the launch gives 32*k*(sizeof(T) + 4) bytes), with value_slot written on the way; then each
// lane writes its row's slots column by column (coalesced: 32 consecutive rows per column),
// with ballots and shuffles for the padding. Reading the rows straight from the CSR instead
// (a thread per row, k strided loads) took 3 ms for a 27-point stencil of 26M entries.
template <typename T>
__device__ __forceinline__ void brc_ell_build(int rows, int k, const int *__restrict__ rp,
                                              const int *__restrict__ ci,
                                              const T *__restrict__ va, int *__restrict__ col,
                                              T *__restrict__ val, unsigned *__restrict__ slot) {
    extern __shared__ __align__(16) unsigned char brc_smem[];
    T *s_val = reinterpret_cast<T *>(brc_smem);
    int *s_col = reinterpret_cast<int *>(s_val + 32 * k);
    __shared__ int s_start[33];
    const int lane = threadIdx.x;
    const int r0 = blockIdx.x * 32;
    const int i = r0 + lane;
    const bool row = i < rows;
    // Row starts of the group; rows past the end start (and end) at rp[rows].
    s_start[lane] = rp[min(r0 + lane, rows)];
    if (lane == 0) s_start[32] = rp[min(r0 + 32, rows)];
    __syncwarp();
    const int seg0 = s_start[0], seg1 = s_start[32];
    for (int e = seg0 + lane; e < seg1; e += 32) {
        // The entry's row: the last of the group starting at or before it.
        int lo = 0, hi = 31;
        while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (s_start[mid] <= e) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        const int j = e - s_start[lo];
        s_col[lo * k + j] = ci[e];
        s_val[lo * k + j] = va[e];
        slot[e] = (unsigned)j * (unsigned)rows + (unsigned)(r0 + lo);
    }
    __syncwarp();
    const int len = row ? s_start[lane + 1] - s_start[lane] : 0;
    for (int j = 0; j < k; ++j) {
        const bool has = j < len;
        const int c = has ? s_col[lane * k + j] : 0;
        const int pad = brc_pad_column(has, c, lane);
        if (row) {
            const unsigned s = (unsigned)j * (unsigned)rows + (unsigned)i;
            col[s] = has ? c : pad;
            val[s] = has ? s_val[lane * k + j] : T(0);
        }
    }
}

// brc_fill_<T>: the blocks of a BRC form (B1 = 32) filled on the device from tessera's CSR, from
// the plan (format.rs's `plan` on the host, or the device's: brc_plan_* below): block row q's
// piece is entries piece_start[q] .. + piece_len[q] of the CSR (0 entries for the last block's
// dummies). Exactly format.rs's `fill`: slot (r, j) of block b at ell_slots + block_info[b].x +
// j*32 + r holds the j-th entry of block row r's piece; value_slot[e] names the slot of CSR entry
// e; a padding slot holds 0 and the column of the nearest block row above with an entry in slot
// j, else the first such row below (block_info[b].y = T_b is the longest piece, so some row has
// one). One warp per block (lane = block row), 128 threads a CTA. The block's slots are done
// BRC_FILL_CHUNK columns at a time: the warp first stages those entries of its 32 pieces in
// shared memory, BRC_FILL_CHUNK lanes per piece reading consecutive entries (and writing the
// value map), 32 / BRC_FILL_CHUNK pieces per step; then each lane takes its own piece's entries
// from there and the warp writes 32 consecutive slots per column (coalesced), with a ballot and
// a shuffle for the padding. A lane walking its own piece in the CSR instead (one sector read
// for each 4 or 8 bytes used, the rows of one length lying anywhere in a graph) made the fill
// L2-bound at about four times the bytes it needs (ncu, session 36: 1.2 ms on power-law 2^20 x
// 16).
#define BRC_FILL_CHUNK 8
#define BRC_FILL_STRIDE (BRC_FILL_CHUNK + 1)
template <typename T>
__device__ __forceinline__ void brc_fill(int blocks, unsigned ell_slots,
                                         const uint2 *__restrict__ block_info,
                                         const unsigned *__restrict__ piece_start,
                                         const unsigned *__restrict__ piece_len,
                                         const int *__restrict__ ci, const T *__restrict__ va,
                                         int *__restrict__ col, T *__restrict__ val,
                                         unsigned *__restrict__ slot) {
    // A row of BRC_FILL_STRIDE words per piece: lanes reading their own pieces' entries fall in
    // different banks.
    __shared__ int s_col[4][32 * BRC_FILL_STRIDE];
    __shared__ T s_val[4][32 * BRC_FILL_STRIDE];
    const int b = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const int lane = (int)(threadIdx.x & 31);
    const int w = (int)(threadIdx.x >> 5);
    if (b >= blocks) {
        return;  // whole warps: blockDim.x is a multiple of 32
    }
    int *my_col = s_col[w];
    T *my_val = s_val[w];
    const uint2 info = block_info[b];
    const unsigned q = (unsigned)b * 32u + (unsigned)lane;
    const unsigned start = piece_start[q];
    const unsigned len = piece_len[q];
    const unsigned off = ell_slots + info.x;
    constexpr int kPer = 32 / BRC_FILL_CHUNK;  // pieces staged per step
    const int sub = lane % BRC_FILL_CHUNK;     // this lane's entry of a chunk
    const int group = lane / BRC_FILL_CHUNK;   // which of a step's pieces it reads
    for (unsigned j0 = 0; j0 < info.y; j0 += BRC_FILL_CHUNK) {
#pragma unroll
        for (int step = 0; step < 32 / kPer; ++step) {
            const int p = step * kPer + group;
            const unsigned ps = __shfl_sync(TESSERA_FULL_MASK, start, p);
            const unsigned pl = __shfl_sync(TESSERA_FULL_MASK, len, p);
            const unsigned j = j0 + (unsigned)sub;
            if (j < pl) {
                my_col[p * BRC_FILL_STRIDE + sub] = ci[ps + j];
                my_val[p * BRC_FILL_STRIDE + sub] = va[ps + j];
                slot[ps + j] = off + j * 32u + (unsigned)p;
            }
        }
        __syncwarp();
        const unsigned left = info.y - j0;
        const unsigned n = left < BRC_FILL_CHUNK ? left : BRC_FILL_CHUNK;
        for (unsigned jj = 0; jj < n; ++jj) {
            const unsigned j = j0 + jj;
            const bool has = j < len;
            const int c = has ? my_col[lane * BRC_FILL_STRIDE + (int)jj] : 0;
            const int pad = brc_pad_column(has, c, lane);
            const unsigned s = off + j * 32u + (unsigned)lane;
            col[s] = has ? c : pad;
            val[s] = has ? my_val[lane * BRC_FILL_STRIDE + (int)jj] : T(0);
        }
        __syncwarp();  // the next chunk overwrites the stage
    }
}

// brc_ell_fill_<T>: the ELL part of a hybrid of any width k (rows longer than k keep the rest
// for the blocks, which brc_fill fills), filled on the device from tessera's CSR exactly as
// format.rs's `fill` does: slot (row i, j) at j*rows + i holds row i's j-th entry for j <
// min(len, k); value_slot names it; a padding slot holds 0 and the column of the nearest row
// above in its aligned group of 32 rows with an entry in column j, else the first such row
// below, else column 0. One warp per group (lane = row), each lane walking its own row (loads
// strided across the lanes), 32 consecutive slots written per j. brc_ell_build stages a group
// in shared memory instead, for the pure ELL form of even rows (k = the longest row, <= 96).
template <typename T>
__device__ __forceinline__ void brc_ell_fill(int rows, int k, const int *__restrict__ rp,
                                             const int *__restrict__ ci,
                                             const T *__restrict__ va, int *__restrict__ col,
                                             T *__restrict__ val, unsigned *__restrict__ slot) {
    const long long g = (long long)((blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const int lane = (int)(threadIdx.x & 31);
    const long long i = g * 32 + lane;
    if (g * 32 >= rows) {
        return;  // whole warps: blockDim.x is a multiple of 32
    }
    const bool row = i < rows;
    const int start = row ? rp[i] : 0;
    const int whole = row ? rp[i + 1] - start : 0;
    const int len = whole < k ? whole : k;
    for (int j = 0; j < k; ++j) {
        const bool has = j < len;
        const int c = has ? ci[start + j] : 0;
        const int pad = brc_pad_column(has, c, lane);
        if (row) {
            const unsigned s = (unsigned)j * (unsigned)rows + (unsigned)i;
            col[s] = has ? c : pad;
            val[s] = has ? va[start + j] : T(0);
            if (has) {
                slot[start + j] = s;
            }
        }
    }
}

#define BRC_ENTRY(T, S)                                                                        \
    extern "C" __global__ void brc_spmv_##S(                                                   \
        long long block_rows, int b1, int rep, const uint2 *__restrict__ block_info,           \
        const unsigned *__restrict__ dest, const int *__restrict__ col,                        \
        const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y,                 \
        T *__restrict__ partial, T alpha, T beta, int stream) {                                \
        if (stream) {                                                                          \
            brc_spmv<T, true>(block_rows, b1, rep, block_info, dest, col, val, x, y, partial,  \
                              alpha, beta);                                                    \
        } else {                                                                               \
            brc_spmv<T, false>(block_rows, b1, rep, block_info, dest, col, val, x, y, partial, \
                               alpha, beta);                                                   \
        }                                                                                      \
    }                                                                                          \
    extern "C" __global__ void brc_scale_rows_##S(int n, const unsigned *__restrict__ rows,    \
                                                  T *__restrict__ y, T beta) {                 \
        tessera_release_dependents();                                                          \
        brc_scale_rows<T>(n, rows, y, beta);                                                   \
    }                                                                                          \
    extern "C" __global__ void brc_ell_##S(int rows, int k, const int *__restrict__ col,       \
                                           const T *__restrict__ val, const T *__restrict__ x, \
                                           T *__restrict__ y, T alpha, T beta, int stream) {   \
        tessera_release_dependents();                                                          \
        if (stream) {                                                                          \
            brc_ell<T, true>(rows, k, col, val, x, y, alpha, beta);                            \
        } else {                                                                               \
            brc_ell<T, false>(rows, k, col, val, x, y, alpha, beta);                           \
        }                                                                                      \
    }                                                                                          \
    extern "C" __global__ void brc_reduce_##S(                                                 \
        int n, const unsigned *__restrict__ rows, const unsigned *__restrict__ ptr,            \
        const T *__restrict__ partial, T *__restrict__ y, T alpha, T beta, int accumulate) {   \
        brc_reduce<T>(n, rows, ptr, partial, y, alpha, beta, accumulate);                      \
    }                                                                                          \
    extern "C" __global__ void brc_ell_build_##S(                                              \
        int rows, int k, const int *__restrict__ rp, const int *__restrict__ ci,               \
        const T *__restrict__ va, int *__restrict__ col, T *__restrict__ val,                  \
        unsigned *__restrict__ slot) {                                                         \
        brc_ell_build<T>(rows, k, rp, ci, va, col, val, slot);                                 \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(128) brc_fill_##S(                            \
        int blocks, unsigned ell_slots, const uint2 *__restrict__ block_info,                  \
        const unsigned *__restrict__ piece_start, const unsigned *__restrict__ piece_len,      \
        const int *__restrict__ ci, const T *__restrict__ va, int *__restrict__ col,           \
        T *__restrict__ val, unsigned *__restrict__ slot) {                                    \
        brc_fill<T>(blocks, ell_slots, block_info, piece_start, piece_len, ci, va, col, val,   \
                    slot);                                                                     \
    }                                                                                          \
    extern "C" __global__ void brc_ell_fill_##S(                                               \
        int rows, int k, const int *__restrict__ rp, const int *__restrict__ ci,               \
        const T *__restrict__ va, int *__restrict__ col, T *__restrict__ val,                  \
        unsigned *__restrict__ slot) {                                                         \
        brc_ell_fill<T>(rows, k, rp, ci, va, col, val, slot);                                  \
    }
TESSERA_INSTANTIATE(BRC_ENTRY)

// ---- BRC's plan on the device (src/methods/brc/fill.rs, `plan_on_device`) ----
// format.rs's plan (Algorithm 1's sorted list, queue and destinations) for the atomic variant,
// without reading the row offsets on the host: brc_plan_lengths counts the rows of each length;
// the host makes the fixed rule and the layout from those counts alone (layout.rs: the buckets
// of the remaining lengths in descending order, the queue's rounds, the blocks' widths and
// offsets); brc_plan_count counts each tile's rows per bucket and its rows to scale, laid out
// bucket-major (counts[b * tiles + t], the rows to scale as bucket `buckets`), so that one
// exclusive scan of the whole array (util_scan) gives each tile's first place in the sorted list
// for each bucket, and after the list each tile's first place among the rows to scale;
// brc_plan_place writes the list (a stable counting sort: rows of one bucket in row order, as
// the host's) and the rows to scale (ascending); brc_plan_queue writes each block row's
// destination and piece, as the host's queue does.
//
// A row's bucket: bucket_of[rem], rem = its length past the ELL width k (0 when none: bucket_of[0]
// is BRC_NO_BUCKET, the row is in no block). It is listed to scale (`scale` set: pure BRC, atomic)
// when it is split (rem > B2) or empty. brc_plan_count and brc_plan_place take one tile of `tile`
// rows (a multiple of 32) per one-warp CTA, `buckets` words of dynamic shared memory, and walk it
// 32 rows at a time: __match_any_sync groups the lanes of one bucket, whose leader (lowest lane)
// moves that bucket's count on; a lane's place is its bucket's count before the step plus the
// lanes of its bucket below it.
#define BRC_NO_BUCKET 0xFFFFFFFFu

// hist[len] += the rows of that length, for len <= max_len; rows longer than that (none, when
// the matrix's statistics are right) count in hist[max_len + 1]. hist holds max_len + 2 zeroed
// words. Grid-stride over whole blocks (blockDim a multiple of 32); one atomic per length in a
// warp.
extern "C" __global__ void brc_plan_lengths(int rows, int max_len, const int *__restrict__ rp,
                                            unsigned *__restrict__ hist) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long base = (long long)blockIdx.x * blockDim.x; base < rows; base += stride) {
        const long long r = base + threadIdx.x;
        const bool in = r < rows;
        int len = in ? rp[r + 1] - rp[r] : -1;
        if (in && (len < 0 || len > max_len)) len = max_len + 1;
        const unsigned peers = __match_any_sync(TESSERA_FULL_MASK, (unsigned)len);
        if (in && (int)(threadIdx.x & 31) == __ffs(peers) - 1) {
            atomicAdd(hist + len, (unsigned)__popc(peers));
        }
    }
}

// A row's bucket and whether it is listed to scale (see above); rows at or past `end`: none.
__device__ __forceinline__ unsigned brc_plan_row(long long r, long long end,
                                                 const int *__restrict__ rp, int k, int b2,
                                                 int scale, const unsigned *__restrict__ bucket_of,
                                                 bool *listed) {
    *listed = false;
    if (r >= end) {
        return BRC_NO_BUCKET;
    }
    const int len = rp[r + 1] - rp[r];
    const int rem = len > k ? len - k : 0;
    *listed = scale && (rem > b2 || len == 0);
    return bucket_of[rem];
}

extern "C" __global__ void __launch_bounds__(32)
    brc_plan_count(int rows, int tile, int tiles, int k, int b2, int scale,
                   const int *__restrict__ rp, const unsigned *__restrict__ bucket_of,
                   int buckets, unsigned *__restrict__ counts) {
    extern __shared__ unsigned s_count[];
    const int lane = (int)threadIdx.x;
    for (int b = lane; b < buckets; b += 32) s_count[b] = 0;
    __syncwarp();
    const long long t = blockIdx.x;
    const long long lo = t * tile;
    const long long hi = lo + tile < rows ? lo + tile : rows;
    unsigned listed_rows = 0;
    for (long long r0 = lo; r0 < hi; r0 += 32) {
        bool listed;
        const unsigned b = brc_plan_row(r0 + lane, hi, rp, k, b2, scale, bucket_of, &listed);
        const unsigned peers = __match_any_sync(TESSERA_FULL_MASK, b);
        if (b != BRC_NO_BUCKET && lane == __ffs(peers) - 1) s_count[b] += (unsigned)__popc(peers);
        listed_rows += (unsigned)__popc(__ballot_sync(TESSERA_FULL_MASK, listed));
        __syncwarp();
    }
    for (int b = lane; b < buckets; b += 32) counts[(long long)b * tiles + t] = s_count[b];
    if (lane == 0) counts[(long long)buckets * tiles + t] = listed_rows;
}

// counts: brc_plan_count's, scanned (exclusive, over all (buckets + 1) * tiles words); `in_brc`
// rows in the sorted list (the scan's places of the rows to scale start there).
extern "C" __global__ void __launch_bounds__(32)
    brc_plan_place(int rows, int tile, int tiles, int k, int b2, int scale,
                   const int *__restrict__ rp, const unsigned *__restrict__ bucket_of,
                   int buckets, const unsigned *__restrict__ counts, unsigned in_brc,
                   unsigned *__restrict__ sorted, unsigned *__restrict__ scale_rows) {
    extern __shared__ unsigned s_next[];
    const int lane = (int)threadIdx.x;
    const long long t = blockIdx.x;
    for (int b = lane; b < buckets; b += 32) s_next[b] = counts[(long long)b * tiles + t];
    unsigned next_listed = counts[(long long)buckets * tiles + t] - in_brc;
    __syncwarp();
    const long long lo = t * tile;
    const long long hi = lo + tile < rows ? lo + tile : rows;
    const unsigned below = (1u << lane) - 1u;
    for (long long r0 = lo; r0 < hi; r0 += 32) {
        bool listed;
        const long long r = r0 + lane;
        const unsigned b = brc_plan_row(r, hi, rp, k, b2, scale, bucket_of, &listed);
        const unsigned peers = __match_any_sync(TESSERA_FULL_MASK, b);
        unsigned at = 0;
        if (b != BRC_NO_BUCKET) {
            at = s_next[b];
            sorted[at + (unsigned)__popc(peers & below)] = (unsigned)r;
        }
        __syncwarp();
        if (b != BRC_NO_BUCKET && lane == __ffs(peers) - 1) s_next[b] = at + (unsigned)__popc(peers);
        const unsigned ballot = __ballot_sync(TESSERA_FULL_MASK, listed);
        if (listed) scale_rows[next_listed + (unsigned)__popc(ballot & below)] = (unsigned)r;
        next_listed += (unsigned)__popc(ballot);
        __syncwarp();
    }
}

// Block row q of the queue: round j = the last with round_start[j] <= q (round_start has
// rounds + 1 entries, the last the pieces), the j-th piece of the row at place q - round_start[j]
// of the sorted list: entries from rp[row] + k + j * b2, at most b2 of them; destination the row,
// with BRC_SPLIT when the hybrid's ELL part or another piece also adds to it. Past the pieces:
// the last block's dummies. A thread per block row, grid-stride.
extern "C" __global__ void brc_plan_queue(long long block_rows, int rounds,
                                          const unsigned *__restrict__ round_start,
                                          const unsigned *__restrict__ sorted,
                                          const int *__restrict__ rp, int k, int b2, int hybrid,
                                          unsigned *__restrict__ dest,
                                          unsigned *__restrict__ piece_start,
                                          unsigned *__restrict__ piece_len) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const unsigned pieces = round_start[rounds];
    for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < block_rows;
         q += stride) {
        if (q >= pieces) {
            dest[q] = BRC_DUMMY;
            piece_start[q] = 0;
            piece_len[q] = 0;
            continue;
        }
        int lo = 0, hi = rounds - 1;  // round_start[lo] <= q < round_start[hi + 1]
        while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (round_start[mid] <= (unsigned)q) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        const unsigned row = sorted[(unsigned)q - round_start[lo]];
        const int start = rp[row];
        const int rem = rp[row + 1] - start - k;
        const int skip = lo * b2;
        const int left = rem - skip;
        dest[q] = (hybrid || rem > b2) ? (row | BRC_SPLIT) : row;
        piece_start[q] = (unsigned)(start + k + skip);
        piece_len[q] = (unsigned)(left < b2 ? left : b2);
    }
}
