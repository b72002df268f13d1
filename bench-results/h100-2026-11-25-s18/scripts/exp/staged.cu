// Experiment: x staged in shared memory per vertical slice vs gathers from L2, on an LP-like
// matrix (rows x cols, perrow random sorted distinct columns) and a uniform one.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cuda_runtime.h>
#include <cusparse.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)

template <int W, typename T>
__device__ __forceinline__ T gsum(T v) {
#pragma unroll
    for (int o = W / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o, W);
    return v;
}

// Baseline: COOP lanes per row over the CSR, x from global (ldg).
template <int COOP, typename T>
__global__ void csr_vec(int rows, const int *rp, const int *ci, const T *v, const T *x, T *y) {
    int lane = threadIdx.x & (COOP - 1);
    long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / COOP;
    if (r >= rows) return;
    int s = rp[r], e = rp[r + 1];
    T a = 0;
    for (int k = s + lane; k < e; k += COOP) a += __ldcs(v + k) * __ldg(x + __ldcs(ci + k));
    a = gsum<COOP>(a);
    if (lane == 0) y[r] = a;
}

// Staged: item i = (slice s, rows [r0, r1)); x[s*W, s*W+W) in shared memory; partial[s*rows+r].
// split[s*rows + r] = first entry of row r with column >= s*W (s = 0..S, split[S] = row ends).
template <int COOP, typename T, typename C>
__global__ void staged(int rows, int cols, int W, const int *items, const int *split,
                       const C *ci, const T *v, const T *x, T *part) {
    extern __shared__ __align__(16) unsigned char smem[];
    T *xs = (T *)smem;
    int s = items[3 * blockIdx.x], r0 = items[3 * blockIdx.x + 1], r1 = items[3 * blockIdx.x + 2];
    int c0 = s * W, n = min(W, cols - c0);
    for (int i = threadIdx.x; i < n; i += blockDim.x) xs[i] = __ldg(x + c0 + i);
    __syncthreads();
    int lane = threadIdx.x & (COOP - 1);
    int groups = blockDim.x / COOP;
    const int *lo = split + (long long)s * rows, *hi = lo + rows;
    for (int r = r0 + threadIdx.x / COOP; r < r1; r += groups) {
        int b = lo[r], e = hi[r];
        T a = 0;
        for (int k = b + lane; k < e; k += COOP) {
            int c = (int)__ldcs(ci + k);
            if (sizeof(C) == 4) c -= c0;
            a += __ldcs(v + k) * xs[c];
        }
        a = gsum<COOP>(a);
        if (lane == 0) part[(long long)s * rows + r] = a;
    }
}

template <typename T>
__global__ void combine(int rows, int S, const T *part, T *y) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    T a = 0;
    for (int s = 0; s < S; s++) a += part[(long long)s * rows + r];
    y[r] = a;
}

static uint64_t st = 88172645463325252ull;
static uint64_t rnd() { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return st; }

template <typename T>
void run(const char *name, int rows, int cols, int perrow, bool f32) {
    std::vector<int> rp(rows + 1), ci;
    ci.reserve((size_t)rows * perrow);
    std::vector<int> tmp;
    for (int r = 0; r < rows; r++) {
        rp[r] = ci.size();
        tmp.clear();
        for (int k = 0; k < perrow; k++) tmp.push_back(rnd() % cols);
        std::sort(tmp.begin(), tmp.end());
        tmp.erase(std::unique(tmp.begin(), tmp.end()), tmp.end());
        ci.insert(ci.end(), tmp.begin(), tmp.end());
    }
    rp[rows] = ci.size();
    long long nnz = ci.size();
    std::vector<T> v(nnz), x(cols);
    for (auto &a : v) a = (T)((rnd() % 1000) / 500.0 - 1.0);
    for (auto &a : x) a = (T)((rnd() % 1000) / 500.0 - 1.0);
    // reference
    std::vector<double> yr(rows);
    for (int r = 0; r < rows; r++) { double a = 0; for (int k = rp[r]; k < rp[r + 1]; k++) a += (double)v[k] * x[ci[k]]; yr[r] = a; }

    const int SH = 96 * 1024;
    int W = SH / sizeof(T);
    int S = (cols + W - 1) / W;
    std::vector<int> split((size_t)(S + 1) * rows);
    std::vector<uint16_t> c16(nnz);
    for (int r = 0; r < rows; r++) {
        int k = rp[r];
        for (int s = 0; s <= S; s++) {
            long long lim = (long long)s * W;
            while (k < rp[r + 1] && ci[k] < lim) { k++; }
            split[(size_t)s * rows + r] = k;
        }
        for (int k2 = rp[r]; k2 < rp[r + 1]; k2++) c16[k2] = ci[k2] % W;
    }
    int *drp, *dci, *dsp, *ditems; uint16_t *dc16; T *dv, *dx, *dy, *dpart;
    CK(cudaMalloc(&drp, 4 * (rows + 1))); CK(cudaMalloc(&dci, 4 * nnz)); CK(cudaMalloc(&dc16, 2 * nnz));
    CK(cudaMalloc(&dsp, 4 * split.size())); CK(cudaMalloc(&dv, sizeof(T) * nnz)); CK(cudaMalloc(&dx, sizeof(T) * cols));
    CK(cudaMalloc(&dy, sizeof(T) * rows)); CK(cudaMalloc(&dpart, sizeof(T) * (size_t)S * rows));
    CK(cudaMemcpy(drp, rp.data(), 4 * (rows + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dci, ci.data(), 4 * nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dc16, c16.data(), 2 * nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dsp, split.data(), 4 * split.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dv, v.data(), sizeof(T) * nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dx, x.data(), sizeof(T) * cols, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    std::vector<T> y(rows);
    auto check = [&](const char *what) {
        CK(cudaMemcpy(y.data(), dy, sizeof(T) * rows, cudaMemcpyDeviceToHost));
        double err = 0; for (int r = 0; r < rows; r++) err = std::max(err, fabs(y[r] - yr[r]) / (1 + fabs(yr[r])));
        if (err > (f32 ? 1e-3 : 1e-9)) printf("  %s WRONG err %g\n", what, err);
    };
    auto timeit = [&](auto f) {
        for (int i = 0; i < 5; i++) f();
        CK(cudaDeviceSynchronize());
        float best = 1e9;
        for (int rep = 0; rep < 5; rep++) {
            cudaEventRecord(e0); for (int i = 0; i < 20; i++) f(); cudaEventRecord(e1); cudaEventSynchronize(e1);
            float ms; cudaEventElapsedTime(&ms, e0, e1); best = std::min(best, ms / 20 * 1000);
        }
        return best;
    };
    double bytes = nnz * (sizeof(T) + 4.0);
    printf("%s %s rows %d cols %d nnz %lld S %d W %d csr MB %.1f\n", name, f32 ? "f32" : "f64", rows, cols, nnz, S, W, bytes / 1e6);
    // baseline
    {
        float t8 = timeit([&] { csr_vec<8, T><<<(rows * 8 + 255) / 256, 256>>>(rows, drp, dci, dv, dx, dy); }); check("vec8");
        float t32 = timeit([&] { csr_vec<32, T><<<(rows * 32 + 255) / 256, 256>>>(rows, drp, dci, dv, dx, dy); }); check("vec32");
        printf("  csr_vec coop8 %.1f us coop32 %.1f us\n", t8, t32);
    }
    // cuSPARSE
    {
        cusparseHandle_t h; cusparseCreate(&h);
        cusparseSpMatDescr_t A; cusparseDnVecDescr_t X, Y;
        cudaDataType dt = f32 ? CUDA_R_32F : CUDA_R_64F;
        cusparseCreateCsr(&A, rows, cols, nnz, drp, dci, dv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dt);
        cusparseCreateDnVec(&X, cols, dx, dt); cusparseCreateDnVec(&Y, rows, dy, dt);
        T al = 1, be = 0; size_t bs = 0; void *buf = nullptr;
        for (auto alg : {CUSPARSE_SPMV_ALG_DEFAULT, CUSPARSE_SPMV_CSR_ALG2}) {
            cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &al, A, X, &be, Y, dt, alg, &bs);
            cudaFree(buf); cudaMalloc(&buf, bs + 1);
            cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &al, A, X, &be, Y, dt, alg, buf);
            float t = timeit([&] { cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &al, A, X, &be, Y, dt, alg, buf); });
            check("cusparse");
            printf("  cusparse alg%d %.1f us\n", (int)alg, t);
        }
    }
    // staged: items = slice x row chunks
    CK(cudaFuncSetAttribute(staged<8, T, int>, cudaFuncAttributeMaxDynamicSharedMemorySize, SH));
    CK(cudaFuncSetAttribute(staged<16, T, int>, cudaFuncAttributeMaxDynamicSharedMemorySize, SH));
    CK(cudaFuncSetAttribute(staged<32, T, int>, cudaFuncAttributeMaxDynamicSharedMemorySize, SH));
    CK(cudaFuncSetAttribute(staged<8, T, uint16_t>, cudaFuncAttributeMaxDynamicSharedMemorySize, SH));
    CK(cudaFuncSetAttribute(staged<16, T, uint16_t>, cudaFuncAttributeMaxDynamicSharedMemorySize, SH));
    CK(cudaFuncSetAttribute(staged<32, T, uint16_t>, cudaFuncAttributeMaxDynamicSharedMemorySize, SH));
    for (int chunks : {1, 2, 3, 4, 8}) {
        std::vector<int> items;
        for (int s = 0; s < S; s++) for (int c = 0; c < chunks; c++) {
            items.push_back(s); items.push_back((long long)rows * c / chunks); items.push_back((long long)rows * (c + 1) / chunks);
        }
        int ni = items.size() / 3;
        int *di; CK(cudaMalloc(&di, 4 * items.size())); CK(cudaMemcpy(di, items.data(), 4 * items.size(), cudaMemcpyHostToDevice));
        for (int bs : {256, 512}) {
            float t[6];
            t[0] = timeit([&] { staged<8, T, int><<<ni, bs, SH>>>(rows, cols, W, di, dsp, dci, dv, dx, dpart); combine<T><<<(rows + 255) / 256, 256>>>(rows, S, dpart, dy); }); check("st8");
            t[1] = timeit([&] { staged<16, T, int><<<ni, bs, SH>>>(rows, cols, W, di, dsp, dci, dv, dx, dpart); combine<T><<<(rows + 255) / 256, 256>>>(rows, S, dpart, dy); }); check("st16");
            t[2] = timeit([&] { staged<32, T, int><<<ni, bs, SH>>>(rows, cols, W, di, dsp, dci, dv, dx, dpart); combine<T><<<(rows + 255) / 256, 256>>>(rows, S, dpart, dy); }); check("st32");
            t[3] = timeit([&] { staged<8, T, uint16_t><<<ni, bs, SH>>>(rows, cols, W, di, dsp, dc16, dv, dx, dpart); combine<T><<<(rows + 255) / 256, 256>>>(rows, S, dpart, dy); }); check("u8");
            t[4] = timeit([&] { staged<16, T, uint16_t><<<ni, bs, SH>>>(rows, cols, W, di, dsp, dc16, dv, dx, dpart); combine<T><<<(rows + 255) / 256, 256>>>(rows, S, dpart, dy); }); check("u16");
            t[5] = timeit([&] { staged<32, T, uint16_t><<<ni, bs, SH>>>(rows, cols, W, di, dsp, dc16, dv, dx, dpart); combine<T><<<(rows + 255) / 256, 256>>>(rows, S, dpart, dy); }); check("u32");
            float tc = timeit([&] { combine<T><<<(rows + 255) / 256, 256>>>(rows, S, dpart, dy); });
            printf("  staged chunks %d items %d bs %d: i32 c8 %.1f c16 %.1f c32 %.1f | u16 c8 %.1f c16 %.1f c32 %.1f | combine alone %.1f\n", chunks, ni, bs, t[0], t[1], t[2], t[3], t[4], t[5], tc);
        }
        cudaFree(di);
    }
    cudaFree(drp); cudaFree(dci); cudaFree(dc16); cudaFree(dsp); cudaFree(dv); cudaFree(dx); cudaFree(dy); cudaFree(dpart);
}

int main() {
    run<double>("lp", 4284, 1092610, 2600, false);
    run<float>("lp", 4284, 1092610, 2600, true);
    run<double>("lp-narrow", 20000, 200000, 500, false);
    run<double>("wide-lp", 4284, 4000000, 2600, false);
    run<float>("wide-lp", 4284, 4000000, 2600, true);
    run<double>("uniform", 1000000, 1000000, 16, false);
    return 0;
}
