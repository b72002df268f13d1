// csr_vector.cu — the parametrised CSR kernel of Reguly & Giles (InPar 2012), Figure 3.
//
// Work split (paper §4, Figure 3):
//   - a *group* of COOP consecutive threads (COOP a power of two <= 32, §5.1) shares one row;
//   - each group handles `repeat` rows in turn (§5.2): block b, group g covers rows
//       b * (blockDim.x / COOP) * repeat + g + r * (blockDim.x / COOP),  r = 0 .. repeat-1,
//     exactly Figure 3's `i` and `i += blockDim.x/coop`;
//   - the block size (§5.3) is the launch's blockDim.x (a multiple of 32 and of COOP).
// Each thread of a group walks the row's entries with stride COOP, so a group's loads of
// col_ind and values are coalesced. The paper reduces the COOP partial sums through shared
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

template <typename T>
__device__ __forceinline__ void csr_vector_spmv(int rows, const int *__restrict__ row_ptr,
                                                const int *__restrict__ col_ind,
                                                const T *__restrict__ values,
                                                const T *__restrict__ x, T *__restrict__ y,
                                                T alpha, T beta, int repeat) {
    const int lane = threadIdx.x & (COOP - 1);
    const int groups = blockDim.x / COOP;
    const long long first =
        (long long)blockIdx.x * groups * repeat + (long long)(threadIdx.x / COOP);
    for (int r = 0; r < repeat; ++r) {
        const long long i = first + (long long)r * groups;
        T sum = T(0);
        if (i < rows) {
            const int end = row_ptr[i + 1];
            int k = row_ptr[i] + lane;
            // Two entries per trip: both loads are in flight before either is used (memory-level
            // parallelism; short rows, e.g. 7 entries at COOP = 4, then take one trip). The
            // order of the additions is fixed, so results stay reproducible.
            for (; k + COOP < end; k += 2 * COOP) {
                const T v0 = tessera_stream_load(values + k);
                const T v1 = tessera_stream_load(values + k + COOP);
                const int c0 = tessera_stream_load(col_ind + k);
                const int c1 = tessera_stream_load(col_ind + k + COOP);
                sum += v0 * tessera_ro_load(x + c0) + v1 * tessera_ro_load(x + c1);
            }
            if (k < end) {
                sum += tessera_stream_load(values + k) *
                       tessera_ro_load(x + tessera_stream_load(col_ind + k));
            }
        }
        // Every lane takes part in the shuffle tree, also those past the last row.
        sum = tessera_group_sum<COOP>(sum);
        if (lane == 0 && i < rows) {
            T out = alpha * sum;
            if (beta != T(0)) {
                out += beta * y[i];
            }
            y[i] = out;
        }
    }
}

#define CSR_VECTOR_ENTRY(T, S)                                                                 \
    extern "C" __global__ void csr_vector_spmv_##S(                                            \
        int rows, const int *__restrict__ row_ptr, const int *__restrict__ col_ind,            \
        const T *__restrict__ values, const T *__restrict__ x, T *__restrict__ y, T alpha,     \
        T beta, int repeat) {                                                                  \
        csr_vector_spmv<T>(rows, row_ptr, col_ind, values, x, y, alpha, beta, repeat);         \
    }
TESSERA_INSTANTIATE(CSR_VECTOR_ENTRY)
