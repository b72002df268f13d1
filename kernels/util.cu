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
