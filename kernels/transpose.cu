// transpose.cu — y += alpha * A^T * x over the CSR arrays with atomics: tessera's default
// TRANSPOSE path for every method (src/backend/cuda/csr.rs), after Hola-SpMVT (Steinberger et al. 2017,
// "SpMVT"): each nonzero a_ij contributes alpha * a_ij * x_i to y_j with an atomic add.
//
// Work split: like csr_vector.cu — a group of COOP threads per row i (COOP a power of two <= 32),
// `repeat` rows per group; the group's threads walk row i with stride COOP, so their loads are
// coalesced, and each adds into y[col] atomically. y must already hold beta*y (the library
// launches util_scale first). Floating-point atomics make the summation order vary run to run:
// this product is not bitwise reproducible, and the matrix info says so.
//
// Defines: COOP (threads per row; default 4).

#ifndef COOP
#define COOP 4
#endif

#if (COOP & (COOP - 1)) != 0 || COOP < 1 || COOP > 32
#error "COOP must be a power of two between 1 and 32"
#endif

template <typename T>
__device__ __forceinline__ void transpose_spmv(int rows, const int *__restrict__ row_ptr,
                                               const int *__restrict__ col_ind,
                                               const T *__restrict__ values,
                                               const T *__restrict__ x, T *y, T alpha,
                                               int repeat) {
    const int lane = threadIdx.x & (COOP - 1);
    const int groups = blockDim.x / COOP;
    const long long first =
        (long long)blockIdx.x * groups * repeat + (long long)(threadIdx.x / COOP);
    for (int r = 0; r < repeat; ++r) {
        const long long i = first + (long long)r * groups;
        if (i >= rows) {
            return;
        }
        const T xi = alpha * tessera_ro_load(x + i);
        const int end = row_ptr[i + 1];
        for (int k = row_ptr[i] + lane; k < end; k += COOP) {
            atomicAdd(y + tessera_ro_load(col_ind + k), tessera_ro_load(values + k) * xi);
        }
    }
}

#define TRANSPOSE_ENTRY(T, S)                                                                  \
    extern "C" __global__ void transpose_spmv_##S(                                             \
        int rows, const int *__restrict__ row_ptr, const int *__restrict__ col_ind,            \
        const T *__restrict__ values, const T *__restrict__ x, T *y, T alpha, int repeat) {    \
        transpose_spmv<T>(rows, row_ptr, col_ind, values, x, y, alpha, repeat);                \
    }
TESSERA_INSTANTIATE(TRANSPOSE_ENTRY)
