// Prototype (session 38, run F): long rows (dense 2000^2, 4000 x 1000, 1000 x 4000): a warp per
// row with 32-bit loads (as CSR_VECTOR's pieces) against 128-bit loads with W warps per row and
// G chunks per trip. Build: nvcc -O3 -arch=sm_90 -std=c++17 long.cu -o l
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define FULL 0xffffffffu
#define CK(x) do{cudaError_t e=(x); if(e){printf("err %s line %d\n",cudaGetErrorString(e),__LINE__); exit(1);}}while(0)

template <typename T> __device__ __forceinline__ T wsum(T a) { for (int o = 16; o; o >>= 1) a += __shfl_xor_sync(FULL, a, o); return a; }

// warp per row, U scalar entries per lane per trip
template <typename T, int U>
__global__ void scalar_k(int rows, const int* __restrict__ rp, const int* __restrict__ ci, const T* __restrict__ va, const T* __restrict__ x, T* __restrict__ y) {
  long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; int lane = threadIdx.x & 31;
  if (w >= rows) return;
  int lo = rp[w], hi = rp[w + 1]; T s[U] = {};
  int k = lo + lane;
  for (; k + 32 * (U - 1) < hi; k += 32 * U) {
    T v[U]; int c[U];
#pragma unroll
    for (int u = 0; u < U; ++u) { v[u] = __ldcs(va + k + 32 * u); c[u] = __ldcs(ci + k + 32 * u); }
#pragma unroll
    for (int u = 0; u < U; ++u) s[u] += v[u] * __ldg(x + c[u]);
  }
  for (; k < hi; k += 32) s[0] += __ldcs(va + k) * __ldg(x + __ldcs(ci + k));
  T a = s[0];
#pragma unroll
  for (int u = 1; u < U; ++u) a += s[u];
  a = wsum(a); if (lane == 0) y[w] = a;
}

// W warps per row, 16-byte loads: each lane takes 4 columns (int4) and their values per chunk,
// G chunks per trip.
template <typename T, int W, int G>
__global__ void vec_k(int rows, const int* __restrict__ rp, const int* __restrict__ ci, const T* __restrict__ va, const T* __restrict__ x, T* __restrict__ y) {
  constexpr int V = 16 / sizeof(T);
  constexpr int E = V < 4 ? 4 : V;
  __shared__ T part[8][W];
  const int rib = threadIdx.x / (32 * W);
  const long long row = (long long)blockIdx.x * (blockDim.x / (32 * W)) + rib;
  const int t = threadIdx.x % (32 * W), lane = threadIdx.x & 31, wir = t >> 5;
  T s = T(0);
  if (row < rows) {
    const int lo = rp[row], hi = rp[row + 1];
    int a = min(hi, (lo + E - 1) / E * E);
    for (int k = lo + t; k < a; k += 32 * W) s += va[k] * __ldg(x + ci[k]);
    int nb = (hi - a) / E;
    const int4* c4 = reinterpret_cast<const int4*>(ci + a);
    for (int b = t; b < nb; b += 32 * W * G) {
      T acc = T(0);
#pragma unroll
      for (int g = 0; g < G; ++g) {
        int bb = b + g * 32 * W;
        if (bb < nb) {
          if constexpr (sizeof(T) == 4) {
            float4 v = __ldcs(reinterpret_cast<const float4*>(va + a) + bb); int4 c = __ldcs(c4 + bb);
            acc += v.x * __ldg(x + c.x) + v.y * __ldg(x + c.y) + v.z * __ldg(x + c.z) + v.w * __ldg(x + c.w);
          } else {
            const double2* v2 = reinterpret_cast<const double2*>(va + a);
            double2 v0 = __ldcs(v2 + 2 * bb), v1 = __ldcs(v2 + 2 * bb + 1); int4 c = __ldcs(c4 + bb);
            acc += v0.x * __ldg(x + c.x) + v0.y * __ldg(x + c.y) + v1.x * __ldg(x + c.z) + v1.y * __ldg(x + c.w);
          }
        }
      }
      s += acc;
    }
    for (int k = a + nb * E + t; k < hi; k += 32 * W) s += va[k] * __ldg(x + ci[k]);
  }
  s = wsum(s);
  if (W == 1) { if (lane == 0 && row < rows) y[row] = s; return; }
  if (lane == 0) part[rib][wir] = s;
  __syncthreads();
  if (t == 0 && row < rows) { T r = T(0); for (int i = 0; i < W; ++i) r += part[rib][i]; y[row] = r; }
}

template <typename T>
void run(int R, int C) {
  size_t nnz = (size_t)R * C; std::vector<int> rp(R + 1), ci(nnz); std::vector<T> va(nnz), x(C);
  for (int r = 0; r <= R; ++r) rp[r] = r * C;
  for (size_t k = 0; k < nnz; ++k) { ci[k] = k % C; va[k] = T(1) + T(k % 7) * T(0.25); }
  for (int i = 0; i < C; ++i) x[i] = T(i % 11) * T(0.5) - T(1);
  std::vector<double> ref(R); for (int r = 0; r < R; ++r) { double s = 0; for (int k = rp[r]; k < rp[r + 1]; ++k) s += (double)va[k] * x[ci[k]]; ref[r] = s; }
  int *drp, *dci; T *dva, *dx, *dy;
  CK(cudaMalloc(&drp, 4 * (R + 1))); CK(cudaMalloc(&dci, 4 * nnz)); CK(cudaMalloc(&dva, sizeof(T) * nnz)); CK(cudaMalloc(&dx, sizeof(T) * C)); CK(cudaMalloc(&dy, sizeof(T) * R));
  CK(cudaMemcpy(drp, rp.data(), 4 * (R + 1), cudaMemcpyHostToDevice)); CK(cudaMemcpy(dci, ci.data(), 4 * nnz, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dva, va.data(), sizeof(T) * nnz, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dx, x.data(), sizeof(T) * C, cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto time = [&](const char* what, auto launch) {
    for (int i = 0; i < 5; ++i) launch();
    CK(cudaDeviceSynchronize());
    std::vector<float> ts;
    for (int rep = 0; rep < 7; ++rep) { cudaEventRecord(e0); for (int i = 0; i < 50; ++i) launch(); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms / 50 * 1000); }
    std::sort(ts.begin(), ts.end());
    std::vector<T> y(R); CK(cudaMemcpy(y.data(), dy, sizeof(T) * R, cudaMemcpyDeviceToHost));
    double err = 0; for (int r = 0; r < R; ++r) err = std::max(err, std::abs((double)y[r] - ref[r]) / (1 + std::abs(ref[r])));
    printf("dense %5d x %5d %s %-16s %8.2f us  err %.1e\n", R, C, sizeof(T) == 8 ? "f64" : "f32", what, ts[3], err);
  };
  int b = 128;
  time("scalar warp U8", [&] { scalar_k<T, 8><<<(R * 32ll + b - 1) / b, b>>>(R, drp, dci, dva, dx, dy); });
  time("scalar warp U4", [&] { scalar_k<T, 4><<<(R * 32ll + b - 1) / b, b>>>(R, drp, dci, dva, dx, dy); });
  time("vec W1 G1", [&] { vec_k<T, 1, 1><<<(R + 3) / 4, 128>>>(R, drp, dci, dva, dx, dy); });
  time("vec W1 G2", [&] { vec_k<T, 1, 2><<<(R + 3) / 4, 128>>>(R, drp, dci, dva, dx, dy); });
  time("vec W1 G4", [&] { vec_k<T, 1, 4><<<(R + 3) / 4, 128>>>(R, drp, dci, dva, dx, dy); });
  time("vec W2 G2", [&] { vec_k<T, 2, 2><<<(R + 1) / 2, 128>>>(R, drp, dci, dva, dx, dy); });
  time("vec W4 G1", [&] { vec_k<T, 4, 1><<<R, 128>>>(R, drp, dci, dva, dx, dy); });
  time("vec W4 G2", [&] { vec_k<T, 4, 2><<<R, 128>>>(R, drp, dci, dva, dx, dy); });
  time("vec W8 G1", [&] { vec_k<T, 8, 1><<<R, 256>>>(R, drp, dci, dva, dx, dy); });
  cudaFree(drp); cudaFree(dci); cudaFree(dva); cudaFree(dx); cudaFree(dy);
}
int main() {
  run<float>(2000, 2000); run<double>(2000, 2000);
  run<float>(4000, 1000); run<double>(4000, 1000);
  run<float>(1000, 4000); run<double>(1000, 4000);
  return 0;
}
