// csr_vector.cu — the parametrised CSR kernel of Reguly & Giles (InPar 2012), Figure 3.
//
// Work split (paper §4, Figure 3):
//   - a *group* of COOP consecutive threads (COOP a power of two <= 32, §5.1) shares one row;
//   - each group handles `repeat` rows in turn (§5.2): block b, group g covers rows
//       b * (blockDim.x / COOP) * repeat + g + r * (blockDim.x / COOP),  r = 0 .. repeat-1,
//     exactly Figure 3's `i` and `i += blockDim.x/coop`;
//   - the block size (§5.3) is the launch's blockDim.x (a multiple of 32 and of COOP).
// Each thread of a group walks the row's entries with stride COOP, so a group's loads of
// col_ind and values are coalesced; a group walks two of its rows at a time (see
// csr_vector_pair), which measured 78% -> 85% of copy bandwidth on the 7-point Laplacian. The paper reduces the COOP partial sums through shared
// memory (Figure 3's sdata tree); we do the same tree with warp shuffles, which needs no shared
// memory and no __syncthreads (groups never span warps because COOP <= 32 and blocks are whole
// warps). The reduction order is fixed: the product is bitwise reproducible run to run.
//
// BLAS semantics: y = alpha*A*x + beta*y; beta == 0 never reads y (NaN in y cannot leak).
//
// Defines: COOP (threads per row; default 4). Block size and repeat are launch arguments, so
// one module per COOP serves every block size and repeat that tuning tries.

#ifndef COOP
#define COOP 4
#endif

#if (COOP & (COOP - 1)) != 0 || COOP < 1 || COOP > 32
#error "COOP must be a power of two between 1 and 32"
#endif

// The sum of a group's share of row i's entries [start, end): lane `lane` takes start+lane,
// start+lane+COOP, ...  Two rows of the group's repeat sequence are walked together (`a` and
// `b`), so that the loads of both are in flight at once: memory-level parallelism for short rows,
// where one row is a single trip. This changes only the order in which a group visits its rows,
// not which rows it owns (Figure 3's assignment), nor the order of any row's additions.
template <typename T, typename I>
__device__ __forceinline__ void csr_vector_pair(const I *__restrict__ col_ind,
                                                const T *__restrict__ values,
                                                const T *__restrict__ x, I ka, I ea, I kb, I eb,
                                                T &a, T &b) {
    // Two of each row's entries per trip (this lane's k and k + COOP): the loads of four
    // entries, then their four gathers of x, are in flight together; a row of COOP + 1 to
    // 2 COOP entries is one trip, not two. Each lane still adds its entries in order (k, then
    // k + COOP), so the sums are the same bit for bit.
    while (ka < ea || kb < eb) {
        const bool pa = ka < ea, pa2 = ka + COOP < ea, pb = kb < eb, pb2 = kb + COOP < eb;
        T va = T(0), va2 = T(0), vb = T(0), vb2 = T(0);
        I ca = 0, ca2 = 0, cb = 0, cb2 = 0;
        if (pa) {
            va = tessera_ro_load(values + ka);
            ca = tessera_ro_load(col_ind + ka);
        }
        if (pa2) {
            va2 = tessera_ro_load(values + ka + COOP);
            ca2 = tessera_ro_load(col_ind + ka + COOP);
        }
        if (pb) {
            vb = tessera_ro_load(values + kb);
            cb = tessera_ro_load(col_ind + kb);
        }
        if (pb2) {
            vb2 = tessera_ro_load(values + kb + COOP);
            cb2 = tessera_ro_load(col_ind + kb + COOP);
        }
        const T xa = pa ? tessera_ro_load(x + ca) : T(0);
        const T xa2 = pa2 ? tessera_ro_load(x + ca2) : T(0);
        const T xb = pb ? tessera_ro_load(x + cb) : T(0);
        const T xb2 = pb2 ? tessera_ro_load(x + cb2) : T(0);
        if (pa) {
            a += va * xa;
        }
        if (pa2) {
            a += va2 * xa2;
        }
        if (pb) {
            b += vb * xb;
        }
        if (pb2) {
            b += vb2 * xb2;
        }
        ka += 2 * COOP;
        kb += 2 * COOP;
    }
}

template <typename T, typename I>
__device__ __forceinline__ void csr_vector_spmv(int rows, const I *__restrict__ row_ptr,
                                                const I *__restrict__ col_ind,
                                                const T *__restrict__ values,
                                                const T *__restrict__ x, T *__restrict__ y,
                                                T alpha, T beta, int repeat) {
    const int lane = threadIdx.x & (COOP - 1);
    const int groups = blockDim.x / COOP;
    const long long first =
        (long long)blockIdx.x * groups * repeat + (long long)(threadIdx.x / COOP);
    for (int r = 0; r < repeat; r += 2) {
        // Rows r and r+1 of this group's sequence (Figure 3: i, then i += blockDim.x/coop).
        const long long ia = first + (long long)r * groups;
        const long long ib = ia + groups;
        const bool ha = ia < rows;
        const bool hb = r + 1 < repeat && ib < rows;
        I ka = 0, ea = 0, kb = 0, eb = 0;
        if (ha) {
            ka = tessera_ro_load(row_ptr + ia) + lane;
            ea = tessera_ro_load(row_ptr + ia + 1);
        }
        if (hb) {
            kb = tessera_ro_load(row_ptr + ib) + lane;
            eb = tessera_ro_load(row_ptr + ib + 1);
        }
        T a = T(0), b = T(0);
        csr_vector_pair<T, I>(col_ind, values, x, ka, ea, kb, eb, a, b);
        // Every lane takes part in the shuffle trees, also those past the last row.
        a = tessera_group_sum<COOP>(a);
        b = tessera_group_sum<COOP>(b);
        if (lane == 0) {
            if (ha) {
                y[ia] = beta != T(0) ? alpha * a + beta * y[ia] : alpha * a;
            }
            if (hb) {
                y[ib] = beta != T(0) ? alpha * b + beta * y[ib] : alpha * b;
            }
        }
    }
}

// tessera's own CSR (int32), and a caller's int64 arrays read in place (the cuSPARSE drop-in
// over PyTorch's default index type): csr_vector_spmv_i64_<T>.
#define CSR_VECTOR_ENTRY(T, S)                                                                 \
    extern "C" __global__ void csr_vector_spmv_##S(                                            \
        int rows, const int *__restrict__ row_ptr, const int *__restrict__ col_ind,            \
        const T *__restrict__ values, const T *__restrict__ x, T *__restrict__ y, T alpha,     \
        T beta, int repeat) {                                                                  \
        csr_vector_spmv<T, int>(rows, row_ptr, col_ind, values, x, y, alpha, beta, repeat);    \
    }                                                                                          \
    extern "C" __global__ void csr_vector_spmv_i64_##S(                                        \
        int rows, const long long *__restrict__ row_ptr,                                       \
        const long long *__restrict__ col_ind, const T *__restrict__ values,                   \
        const T *__restrict__ x, T *__restrict__ y, T alpha, T beta, int repeat) {             \
        csr_vector_spmv<T, long long>(rows, row_ptr, col_ind, values, x, y, alpha, beta,       \
                                      repeat);                                                 \
    }
TESSERA_INSTANTIATE(CSR_VECTOR_ENTRY)

// ---- Vertical slices with x staged in shared memory (CSR_VECTOR's sliced mode) ----
//
// For long rows over many columns (linear programs: a few thousand rows of thousands of
// entries each, over a million columns) every entry's x read is a random 32-byte sector from
// the L2, and the L2's rate of such requests bounds the product (notes/csr_vector.md). The
// sliced mode cuts the columns into slices of `width` columns (yaSpMV's vertical slices, BCCOO+
// in kernels/bccoo.cu, which counted on the texture cache) and stages each slice's part of x in
// shared memory: a block copies it in with coalesced loads, then its row groups read x from
// shared memory. A work item is one slice and a range of rows; it writes each row's sum over
// the slice to part[slice * rows + row], and csr_vector_combine adds a row's slices and applies
// alpha and beta. Every sum has a fixed order: the product is bitwise reproducible.

// split[s * rows + r] (s = 0 .. slices): the first entry of row r whose column is at least
// s * width (columns are sorted within rows); s = slices holds the row's end. One thread per
// (s, r): a binary search within the row.
extern "C" __global__ void csr_vector_split(int rows, int slices, int width,
                                            const int *__restrict__ row_ptr,
                                            const int *__restrict__ col_ind,
                                            int *__restrict__ split) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)(slices + 1) * rows) {
        return;
    }
    const int s = (int)(i / rows), r = (int)(i % rows);
    int lo = row_ptr[r], hi = row_ptr[r + 1];
    if (s == slices) {
        split[i] = hi;
        return;
    }
    const long long bound = (long long)s * width;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (col_ind[mid] < bound) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    split[i] = lo;
}

// Loads of x in flight per thread while a block stages its slice.
#define CSR_SLICE_UNROLL 8

// The 16-byte vector of T, for staging x: four floats or two doubles per load.
template <typename T>
struct csr_slice_vec;
template <>
struct csr_slice_vec<float> {
    typedef float4 type;
    static constexpr int n = 4;
};
template <>
struct csr_slice_vec<double> {
    typedef double2 type;
    static constexpr int n = 2;
};

// dst[i] = src[i] for i in [begin, n): CSR_SLICE_UNROLL loads in flight per thread before their
// stores. V is a value type or a 16-byte vector of them (__ldg has both).
template <typename V>
__device__ __forceinline__ void csr_slice_copy(const V *__restrict__ src, V *__restrict__ dst,
                                               int begin, int n) {
    for (int base = begin; base < n; base += CSR_SLICE_UNROLL * blockDim.x) {
        V v[CSR_SLICE_UNROLL];
#pragma unroll
        for (int u = 0; u < CSR_SLICE_UNROLL; u++) {
            const int i = base + u * blockDim.x + threadIdx.x;
            if (i < n) {
                v[u] = __ldg(src + i);
            }
        }
#pragma unroll
        for (int u = 0; u < CSR_SLICE_UNROLL; u++) {
            const int i = base + u * blockDim.x + threadIdx.x;
            if (i < n) {
                dst[i] = v[u];
            }
        }
    }
}

// xs[0, n) = src[0, n): 16-byte loads when src is 16-byte aligned (a caller's x need not be),
// then one value per load for the rest (all of it when src is not aligned).
template <typename T>
__device__ __forceinline__ void csr_slice_stage(const T *__restrict__ src, T *__restrict__ xs,
                                                int n) {
    typedef typename csr_slice_vec<T>::type V;
    constexpr int N = csr_slice_vec<T>::n;
    int done = 0;
    if ((reinterpret_cast<unsigned long long>(src) & 15ull) == 0) {
        csr_slice_copy<V>(reinterpret_cast<const V *>(src), reinterpret_cast<V *>(xs), 0, n / N);
        done = n / N * N;
    }
    csr_slice_copy<T>(src, xs, done, n);
}

// Block b is work item b: slice b / chunks, rows [rows * c / chunks, rows * (c + 1) / chunks)
// with c = b % chunks.
template <typename T>
__device__ __forceinline__ void csr_vector_sliced(int rows, int cols, int width, int chunks,
                                                  const int *__restrict__ split,
                                                  const int *__restrict__ col_ind,
                                                  const T *__restrict__ values,
                                                  const T *__restrict__ x, T *__restrict__ part) {
    extern __shared__ __align__(16) unsigned char csr_slice_smem[];
    T *xs = reinterpret_cast<T *>(csr_slice_smem);
    const int s = blockIdx.x / chunks, c = blockIdx.x % chunks;
    const int r0 = (int)((long long)rows * c / chunks);
    const int r1 = (int)((long long)rows * (c + 1) / chunks);
    const int c0 = s * width;
    const int n = min(width, cols - c0);
    csr_slice_stage<T>(x + c0, xs, n);
    __syncthreads();
    const int lane = threadIdx.x & (COOP - 1);
    const int groups = blockDim.x / COOP;
    const int *lo = split + (long long)s * rows;
    const int *hi = lo + rows;
    // The loop bound is the same for the whole block, so every lane reaches the shuffle tree.
    for (int rb = r0; rb < r1; rb += groups) {
        const int r = rb + threadIdx.x / COOP;
        const bool has = r < r1;
        int k = 0, e = 0;
        if (has) {
            k = lo[r] + lane;
            e = hi[r];
        }
        T a = T(0), b = T(0);
        // Two of the row's entries per trip (k and k + COOP), their loads in flight together;
        // each lane adds its entries in order into two sums, then a + b: a fixed order.
        for (; k + COOP < e; k += 2 * COOP) {
            const T va = __ldcs(values + k), vb = __ldcs(values + k + COOP);
            const int ca = __ldcs(col_ind + k), cb = __ldcs(col_ind + k + COOP);
            a += va * xs[ca - c0];
            b += vb * xs[cb - c0];
        }
        if (k < e) {
            a += __ldcs(values + k) * xs[__ldcs(col_ind + k) - c0];
        }
        a = tessera_group_sum<COOP>(a + b);
        if (has && lane == 0) {
            part[(long long)s * rows + r] = a;
        }
    }
}

// y[r] = alpha * (sum over slices of part[s * rows + r]) + beta * y[r] (beta == 0 never reads
// y). A block of CSR_COMBINE_ROWS x CSR_COMBINE_WAYS threads takes CSR_COMBINE_ROWS rows: way g
// adds slices g, g + WAYS, ... in order, then way 0 adds the ways' sums in order.
#define CSR_COMBINE_ROWS 32
#define CSR_COMBINE_WAYS 8

template <typename T>
__device__ __forceinline__ void csr_vector_combine(int rows, int slices,
                                                   const T *__restrict__ part,
                                                   T *__restrict__ y, T alpha, T beta) {
    __shared__ T sums[CSR_COMBINE_WAYS][CSR_COMBINE_ROWS];
    const int lr = threadIdx.x % CSR_COMBINE_ROWS, g = threadIdx.x / CSR_COMBINE_ROWS;
    const long long r = (long long)blockIdx.x * CSR_COMBINE_ROWS + lr;
    T a = T(0);
    if (r < rows) {
#pragma unroll 4
        for (int s = g; s < slices; s += CSR_COMBINE_WAYS) {
            a += part[(long long)s * rows + r];
        }
    }
    sums[g][lr] = a;
    __syncthreads();
    if (g == 0 && r < rows) {
        T t = sums[0][lr];
#pragma unroll
        for (int w = 1; w < CSR_COMBINE_WAYS; w++) {
            t += sums[w][lr];
        }
        y[r] = beta != T(0) ? alpha * t + beta * y[r] : alpha * t;
    }
}

#define CSR_SLICED_ENTRY(T, S)                                                                 \
    extern "C" __global__ void csr_vector_sliced_##S(                                          \
        int rows, int cols, int width, int chunks, const int *__restrict__ split,              \
        const int *__restrict__ col_ind, const T *__restrict__ values, const T *__restrict__ x, \
        T *__restrict__ part) {                                                                \
        csr_vector_sliced<T>(rows, cols, width, chunks, split, col_ind, values, x, part);      \
    }                                                                                          \
    extern "C" __global__ void csr_vector_combine_##S(int rows, int slices,                    \
                                                      const T *__restrict__ part,              \
                                                      T *__restrict__ y, T alpha, T beta) {    \
        csr_vector_combine<T>(rows, slices, part, y, alpha, beta);                             \
    }
TESSERA_INSTANTIATE(CSR_SLICED_ENTRY)

// ---------------------------------------------------------------------------------------------
// Pieces mode (methods/csr_vector/pieces.rs): for rows of a few hundred entries (a mean of
// 129-1,024), each row is cut into n_r = max(1, ceil(len / piece)) pieces of about equal
// length, and each piece is one warp's work. Row-per-group kernels read such rows trip after
// trip with two entries per lane in flight (latency-bound), and a non-zero split (HOLA) spends
// its blocks' time on row bookkeeping; a warp per piece keeps
// U = 32 / sizeof(T) loads of values and columns in flight per lane. A row of one piece is
// written by its warp; the pieces of a longer row leave their sums in a workspace slot, and the
// row's last warp to finish (a counter per row, reset by that warp: graph replays stay right)
// adds them in piece order. Every sum has a fixed order: the product is bitwise reproducible.
// Only the COOP == 32 module holds them (they do not depend on COOP).
#if COOP == 32

// row_item[r] = n_r, the pieces of row r (the scan then makes them offsets). A thread per row.
extern "C" __global__ void csr_vector_piece_count(int rows, const int *__restrict__ row_ptr,
                                                  int piece, unsigned *__restrict__ row_item) {
    const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const long long len = (long long)row_ptr[r + 1] - row_ptr[r];
        row_item[r] = len > piece ? (unsigned)((len + piece - 1) / piece) : 1u;
    }
}

// The piece table from the scanned offsets row_item (rows + 1): for piece i of row r (its j-th
// of n), item_row[i] = r and item_lo[i] = the first of its entries, row_ptr[r] + len * j / n
// (len the row's length); the pieces past the real count (row_item[rows]) up to `bound` are
// empty (item_lo = nnz) with row `rows`; item_lo[bound] = nnz. A piece's entries are then
// [item_lo[i], item_lo[i + 1]): pieces follow each other through the rows in entry order. One
// thread per index up to bound (bound >= rows): thread r writes row r's pieces, and thread t
// the padding piece t.
extern "C" __global__ void csr_vector_piece_table(int rows, const int *__restrict__ row_ptr,
                                                  const unsigned *__restrict__ row_item,
                                                  long long bound, unsigned *__restrict__ item_row,
                                                  unsigned *__restrict__ item_lo) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned nnz = (unsigned)row_ptr[rows];
    if (t < rows) {
        const unsigned f = row_item[t], n = row_item[t + 1] - f;
        const long long b = row_ptr[t], len = (long long)row_ptr[t + 1] - b;
        for (unsigned j = 0; j < n; ++j) {
            item_row[f + j] = (unsigned)t;
            item_lo[f + j] = (unsigned)(b + len * j / n);
        }
    }
    if (t >= (long long)row_item[rows] && t < bound) {
        item_row[t] = (unsigned)rows;
        item_lo[t] = nnz;
    }
    if (t == bound) {
        item_lo[t] = nnz;
    }
}

// Warp w takes piece w < bound: entries [item_lo[w], item_lo[w + 1]) of row item_row[w] (a
// padding piece has none and row `rows`: it leaves). The loads of the entries wait for one
// load of the table; the row's offsets in row_item are loaded beside them. part and cnt are one
// workspace slot (a value per piece, a zero counter per row).
template <typename T>
__device__ __forceinline__ void csr_vector_pieces(int rows, long long bound,
                                                  const int *__restrict__ col_ind,
                                                  const T *__restrict__ values,
                                                  const T *__restrict__ x, T *__restrict__ y,
                                                  T alpha, T beta,
                                                  const unsigned *__restrict__ row_item,
                                                  const unsigned *__restrict__ item_row,
                                                  const unsigned *__restrict__ item_lo,
                                                  T *__restrict__ part, unsigned *cnt) {
    constexpr int U = 32 / (int)sizeof(T);
    const long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    // w is the same for the whole warp: it leaves together.
    if (w >= bound) {
        return;
    }
    const int lo = (int)item_lo[w], hi = (int)item_lo[w + 1];
    const unsigned r = item_row[w];
    const bool real = r < (unsigned)rows;
    const unsigned f = real ? row_item[r] : 0u, n = real ? row_item[r + 1] - f : 0u;
    T s[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
        s[u] = T(0);
    }
    int k = lo + lane;
    // U entries per lane per trip, all their loads issued before the gathers of x.
    for (; k + 32 * (U - 1) < hi; k += 32 * U) {
        T v[U];
        int c[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            v[u] = __ldcs(values + k + 32 * u);
            c[u] = __ldcs(col_ind + k + 32 * u);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            s[u] += v[u] * __ldg(x + c[u]);
        }
    }
    for (; k < hi; k += 32) {
        s[0] += __ldcs(values + k) * __ldg(x + __ldcs(col_ind + k));
    }
    if (!real) {
        return;
    }
    T a = s[0];
#pragma unroll
    for (int u = 1; u < U; ++u) {
        a += s[u];
    }
    a = tessera_group_sum<32>(a);
    if (n == 1) {
        if (lane == 0) {
            y[r] = beta != T(0) ? alpha * a + beta * y[r] : alpha * a;
        }
        return;
    }
    unsigned last = 0;
    if (lane == 0) {
        part[w] = a;
        // The part is visible device-wide before the counter says so.
        __threadfence();
        last = atomicAdd(cnt + r, 1u) == n - 1 ? 1u : 0u;
    }
    last = __shfl_sync(TESSERA_FULL_MASK, last, 0);
    if (last == 0) {
        return;
    }
    __threadfence();
    T t = T(0);
    for (unsigned i = f + lane; i < f + n; i += 32) {
        t += __ldcg(part + i);
    }
    t = tessera_group_sum<32>(t);
    if (lane == 0) {
        y[r] = beta != T(0) ? alpha * t + beta * y[r] : alpha * t;
        cnt[r] = 0;
    }
}

#define CSR_PIECES_ENTRY(T, S)                                                                 \
    extern "C" __global__ void csr_vector_pieces_##S(                                          \
        int rows, long long bound, const int *__restrict__ col_ind,                            \
        const T *__restrict__ values, const T *__restrict__ x, T *__restrict__ y, T alpha,     \
        T beta, const unsigned *__restrict__ row_item, const unsigned *__restrict__ item_row,  \
        const unsigned *__restrict__ item_lo, T *__restrict__ part, unsigned *cnt) {           \
        csr_vector_pieces<T>(rows, bound, col_ind, values, x, y, alpha, beta, row_item,        \
                             item_row, item_lo, part, cnt);                                    \
    }
TESSERA_INSTANTIATE(CSR_PIECES_ENTRY)

// Wide mode (src/methods/csr_vector/wide.rs): rows of more than a thousand entries, even in
// length, a block of CSR_WIDE_THREADS threads per row. Each thread reads 16 bytes of columns
// (four) and their values at a time, two such chunks per trip: 128-bit loads, where the warp
// per piece issues one 32-bit load per entry. The row's entries before its first multiple of
// four (the head) and after its last whole chunk (the tail) are read one at a time. The host
// runs it only where col_ind and values are both 16-byte aligned (entry 4k then starts a chunk
// of both). The sums have a fixed order (each thread's in its entry order, a warp's shuffle
// tree, then the warps in order): the product is bitwise reproducible.
#define CSR_WIDE_THREADS 128

// Four entries from chunk b (entries 4b..4b+3 past the aligned start): f32, one float4.
__device__ __forceinline__ float csr_wide_chunk(const float *__restrict__ values,
                                                const int4 *__restrict__ cols,
                                                const float *__restrict__ x, int b) {
    const float4 v = __ldcs(reinterpret_cast<const float4 *>(values) + b);
    const int4 c = __ldcs(cols + b);
    return v.x * __ldg(x + c.x) + v.y * __ldg(x + c.y) + v.z * __ldg(x + c.z) +
           v.w * __ldg(x + c.w);
}

// The same in f64: two double2.
__device__ __forceinline__ double csr_wide_chunk(const double *__restrict__ values,
                                                 const int4 *__restrict__ cols,
                                                 const double *__restrict__ x, int b) {
    const double2 *v2 = reinterpret_cast<const double2 *>(values);
    const double2 v0 = __ldcs(v2 + 2 * b), v1 = __ldcs(v2 + 2 * b + 1);
    const int4 c = __ldcs(cols + b);
    return v0.x * __ldg(x + c.x) + v0.y * __ldg(x + c.y) + v1.x * __ldg(x + c.z) +
           v1.y * __ldg(x + c.w);
}

// Block r takes row r (the grid is `rows` blocks of CSR_WIDE_THREADS threads).
template <typename T>
__device__ __forceinline__ void csr_vector_wide(const int *__restrict__ row_ptr,
                                                const int *__restrict__ col_ind,
                                                const T *__restrict__ values,
                                                const T *__restrict__ x, T *__restrict__ y,
                                                T alpha, T beta) {
    __shared__ T part[CSR_WIDE_THREADS / 32];
    const int r = blockIdx.x, t = threadIdx.x;
    const int lo = __ldg(row_ptr + r), hi = __ldg(row_ptr + r + 1);
    const int a = (int)min((long long)hi, ((long long)lo + 3) & ~3LL);
    T s = T(0);
    for (int k = lo + t; k < a; k += CSR_WIDE_THREADS) {
        s += __ldcs(values + k) * __ldg(x + __ldcs(col_ind + k));
    }
    const int chunks = (hi - a) >> 2;
    const int4 *cols = reinterpret_cast<const int4 *>(col_ind + a);
    for (int b = t; b < chunks; b += 2 * CSR_WIDE_THREADS) {
        // Both chunks' loads are issued before either's gathers.
        T acc = csr_wide_chunk(values + a, cols, x, b);
        if (b + CSR_WIDE_THREADS < chunks) {
            acc += csr_wide_chunk(values + a, cols, x, b + CSR_WIDE_THREADS);
        }
        s += acc;
    }
    for (int k = a + 4 * chunks + t; k < hi; k += CSR_WIDE_THREADS) {
        s += __ldcs(values + k) * __ldg(x + __ldcs(col_ind + k));
    }
    s = tessera_group_sum<32>(s);
    if ((t & 31) == 0) {
        part[t >> 5] = s;
    }
    __syncthreads();
    if (t == 0) {
        T v = part[0];
#pragma unroll
        for (int w = 1; w < CSR_WIDE_THREADS / 32; ++w) {
            v += part[w];
        }
        y[r] = beta != T(0) ? alpha * v + beta * y[r] : alpha * v;
    }
}

#define CSR_WIDE_ENTRY(T, S)                                                                   \
    extern "C" __global__ void __launch_bounds__(CSR_WIDE_THREADS) csr_vector_wide_##S(        \
        const int *__restrict__ row_ptr, const int *__restrict__ col_ind,                      \
        const T *__restrict__ values, const T *__restrict__ x, T *__restrict__ y, T alpha,     \
        T beta) {                                                                              \
        csr_vector_wide<T>(row_ptr, col_ind, values, x, y, alpha, beta);                       \
    }
TESSERA_INSTANTIATE(CSR_WIDE_ENTRY)

#endif // COOP == 32
