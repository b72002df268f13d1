// common.cuh — prepended as text to every kernel file by tessera (src/backend/cuda/kernels.rs)
// before NVRTC compiles it. NVRTC has no host headers, so this file includes nothing.
//
// Conventions: entry points are `extern "C" __global__`, named
// <method>_<step>_<f32|f64>, and instantiated for both value types by TESSERA_INSTANTIATE from
// one templated body. Every tunable is a -D define with a default in the kernel file.

#define TESSERA_FULL_MASK 0xffffffffu

// Sum over aligned groups of WIDTH lanes (WIDTH a power of two <= 32). Lane 0 of each group
// receives its group's sum. The tree order is fixed, so the result is bitwise reproducible.
// Every lane of the warp must call this (full mask).
template <int WIDTH, typename T>
__device__ __forceinline__ T tessera_group_sum(T v) {
#pragma unroll
    for (int offset = WIDTH / 2; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(TESSERA_FULL_MASK, v, offset, WIDTH);
    }
    return v;
}

// Read-only loads through the non-coherent (texture) path, for the matrix arrays and x alike.
// Measured on an H200 (notes/csr_vector.md): the streaming hint __ldcs (evict-first) on the
// matrix arrays cost 13% on the 7-point Laplacian 160^3 against __ldg, and gained nothing on a
// uniform random matrix, so every read-only array takes this one path.
template <typename T>
__device__ __forceinline__ T tessera_ro_load(const T *p) {
    return __ldg(p);
}

// The matrix arrays of a product (values, column ids), read once per product: with the
// streaming hint (__ldcs, evict-first) when STREAM, so that a matrix larger than the L2 does not
// push x out of it; through the read-only path (__ldg) otherwise, so that a matrix that fits in
// the L2 stays there between products. The launch decides (Device::streams_past_l2: about 0.8
// of the L2); BRC's entry points take it as their `stream` argument. HOLA reads with the hint
// on every matrix: plain loads made it 4-6% slower on matrices of 22-38 MB and 14% on the
// dense 2000² in f32 (32 MB; H100, session 17's runs D and F), where BRC gained up to 1.9x.
template <bool STREAM, typename T>
__device__ __forceinline__ T tessera_matrix_load(const T *p) {
    if constexpr (STREAM) {
        return __ldcs(p);
    } else {
        return __ldg(p);
    }
}

// A product's pair of kernels (a small first kernel preparing y, then the product), launched so
// that the second overlaps the first (src/backend/cuda/launching.rs, launch_overlapped:
// programmatic dependent launch, compute capability 9.0 and later). The first calls
// tessera_release_dependents() as it starts, so the second's blocks may be scheduled at once;
// the second calls tessera_wait_primary() before it touches anything the first writes, and
// waits there for the first's completion and writes. Without the overlapped launch (older
// devices, TESSERA_OVERLAP=0) both are no-ops: the stream orders the kernels.
__device__ __forceinline__ void tessera_release_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void tessera_wait_primary() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Exclusive scan of v over a block of kThreads threads (a multiple of 32, at most 1024; every
// thread calls): returns the sum of v over the threads before this one, and *total the block's
// sum. `warp_sums`: shared memory of kThreads / 32 + 1 words. Integer sums: the result does not
// depend on the order. Ends with a barrier, so `warp_sums` may be reused at once.
template <int kThreads>
__device__ __forceinline__ unsigned long long tessera_block_scan(unsigned long long v,
                                                                 unsigned long long *warp_sums,
                                                                 unsigned long long *total) {
    constexpr int kWarps = kThreads / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned long long inc = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned long long u = __shfl_up_sync(TESSERA_FULL_MASK, inc, o);
        if (lane >= o) inc += u;
    }
    if (lane == 31) warp_sums[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        // The warps' sums, scanned by the first warp (kWarps <= 32).
        const unsigned long long s = lane < kWarps ? warp_sums[lane] : 0ull;
        unsigned long long w = s;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const unsigned long long u = __shfl_up_sync(TESSERA_FULL_MASK, w, o);
            if (lane >= o) w += u;
        }
        if (lane < kWarps) warp_sums[lane] = w - s;
        if (lane == 31) warp_sums[kWarps] = w;
    }
    __syncthreads();
    const unsigned long long out = warp_sums[warp] + inc - v;
    *total = warp_sums[kWarps];
    __syncthreads();
    return out;
}

// Instantiate M(type, suffix) for every value type tessera computes in.
#define TESSERA_INSTANTIATE(M) M(float, f32) M(double, f64)

// The gate of a product over arrays whose check (util_inspect, earlier on the same stream) had
// not reported when the product was launched (src/matrix/check.rs): `gate` is the check's
// verdict word, 1 when the arrays are malformed, 0 when they are sound; NULL for arrays known to
// be sound. A gated kernel that finds 1 reads nothing of the matrix and fills y[0, n) with NaN
// (every block takes its grid-stride share), so a product over bad arrays neither faults nor
// leaves a plausible y; the next call on the matrix reports the check's error.
template <typename T>
__device__ __forceinline__ bool tessera_gated(const unsigned *gate, long long n, T *y) {
    if (gate == nullptr || *gate == 0u) {
        return false;
    }
    const T nan = (T)__int_as_float(0x7fc00000);
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = nan;
    }
    return true;
}
