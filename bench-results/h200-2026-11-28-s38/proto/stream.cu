// Prototype (session 38, run D): a warp per 32 rows, lane per row; the warp loads its rows' entries
// coalesced in chunks of 32*U into shared memory (products), each lane sums its row in order.
// Against a plain COOP-lane group per row. Build: nvcc -O3 -arch=sm_90 -std=c++17 stream.cu -o s
#include <cstdio>
#include <vector>
#include <random>
#include <algorithm>
#include <cuda_runtime.h>
#define FULL 0xffffffffu
#define CK(x) do{cudaError_t e=(x); if(e){printf("err %s line %d\n",cudaGetErrorString(e),__LINE__); exit(1);}}while(0)

template <typename T, int U>
__global__ void stream_k(int rows, const int* __restrict__ rp, const int* __restrict__ ci, const T* __restrict__ va,
                         const T* __restrict__ x, T* __restrict__ y) {
  extern __shared__ __align__(16) unsigned char sm[];
  T* buf = reinterpret_cast<T*>(sm) + (threadIdx.x >> 5) * (32 * U);
  const int lane = threadIdx.x & 31;
  const long long r0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) & ~31LL;
  if (r0 >= rows) return;
  const long long r = r0 + lane;
  const bool real = r < rows;
  int start = real ? __ldg(rp + r) : 0;
  int end = __shfl_down_sync(FULL, start, 1);
  const int last = (int)min(31LL, rows - 1 - r0);
  if (lane == last) end = __ldg(rp + r + 1);
  const int lo = __shfl_sync(FULL, start, 0);
  const int hi = __shfl_sync(FULL, end, last);
  T sum = T(0);
  for (int c0 = lo; c0 < hi; c0 += 32 * U) {
    T v[U]; int c[U];
#pragma unroll
    for (int u = 0; u < U; ++u) { int k = c0 + lane + 32 * u; if (k < hi) { v[u] = __ldcs(va + k); c[u] = __ldcs(ci + k); } }
#pragma unroll
    for (int u = 0; u < U; ++u) { int k = c0 + lane + 32 * u; buf[lane + 32 * u] = k < hi ? v[u] * __ldg(x + c[u]) : T(0); }
    __syncwarp();
    const int a = max(start, c0), b = min(end, c0 + 32 * U);
    for (int k = a; k < b; ++k) sum += buf[k - c0];
    __syncwarp();
  }
  if (real) y[r] = sum;
}

template <typename T, int COOP>
__global__ void coop_k(int rows, const int* __restrict__ rp, const int* __restrict__ ci, const T* __restrict__ va,
                       const T* __restrict__ x, T* __restrict__ y) {
  const int lane = threadIdx.x & (COOP - 1);
  const long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / COOP;
  T s = T(0);
  if (r < rows) { for (int k = __ldg(rp + r) + lane, e = __ldg(rp + r + 1); k < e; k += COOP) s += __ldg(va + k) * __ldg(x + __ldg(ci + k)); }
  for (int o = COOP / 2; o > 0; o /= 2) s += __shfl_down_sync(FULL, s, o, COOP);
  if (lane == 0 && r < rows) y[r] = s;
}

struct Csr { int n; std::vector<int> rp, ci; };
Csr stencil(int nx, int ny, int nz, int w) { // w=1: 7-pt (or 5-pt if nz==1); w=2: 27-pt
  Csr a; a.n = nx * ny * nz; a.rp.push_back(0);
  for (int k = 0; k < nz; ++k) for (int j = 0; j < ny; ++j) for (int i = 0; i < nx; ++i) {
    for (int dk = -1; dk <= 1; ++dk) for (int dj = -1; dj <= 1; ++dj) for (int di = -1; di <= 1; ++di) {
      int nd = (di != 0) + (dj != 0) + (dk != 0);
      if (w == 1 && nd > 1) continue;
      int ii = i + di, jj = j + dj, kk = k + dk;
      if (ii < 0 || jj < 0 || kk < 0 || ii >= nx || jj >= ny || kk >= nz) continue;
      a.ci.push_back((kk * ny + jj) * nx + ii);
    }
    a.rp.push_back(a.ci.size());
  }
  return a;
}
Csr uniform(int n, int per) {
  Csr a; a.n = n; a.rp.push_back(0); std::mt19937 g(1);
  for (int r = 0; r < n; ++r) { std::vector<int> c; while ((int)c.size() < per) { int v = g() % n; if (std::find(c.begin(), c.end(), v) == c.end()) c.push_back(v); } std::sort(c.begin(), c.end()); for (int v : c) a.ci.push_back(v); a.rp.push_back(a.ci.size()); }
  return a;
}

template <typename T>
void run(const char* name, const Csr& a) {
  int n = a.n; size_t nnz = a.ci.size();
  std::vector<T> va(nnz), x(n); for (size_t k = 0; k < nnz; ++k) va[k] = T(1) + T(k % 7) * T(0.25); for (int i = 0; i < n; ++i) x[i] = T(i % 11) * T(0.5) - T(1);
  std::vector<double> ref(n); for (int r = 0; r < n; ++r) { double s = 0; for (int k = a.rp[r]; k < a.rp[r+1]; ++k) s += (double)va[k] * x[a.ci[k]]; ref[r] = s; }
  int *drp, *dci; T *dva, *dx, *dy;
  CK(cudaMalloc(&drp, 4 * (n + 1))); CK(cudaMalloc(&dci, 4 * nnz)); CK(cudaMalloc(&dva, sizeof(T) * nnz)); CK(cudaMalloc(&dx, sizeof(T) * n)); CK(cudaMalloc(&dy, sizeof(T) * n));
  CK(cudaMemcpy(drp, a.rp.data(), 4 * (n + 1), cudaMemcpyHostToDevice)); CK(cudaMemcpy(dci, a.ci.data(), 4 * nnz, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dva, va.data(), sizeof(T) * nnz, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dx, x.data(), sizeof(T) * n, cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto time = [&](const char* what, auto launch) {
    for (int i = 0; i < 5; ++i) launch();
    CK(cudaDeviceSynchronize());
    std::vector<float> ts;
    for (int rep = 0; rep < 7; ++rep) { cudaEventRecord(e0); for (int i = 0; i < 50; ++i) launch(); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms / 50 * 1000); }
    std::sort(ts.begin(), ts.end());
    std::vector<T> y(n); CK(cudaMemcpy(y.data(), dy, sizeof(T) * n, cudaMemcpyDeviceToHost));
    double err = 0; for (int r = 0; r < n; ++r) err = std::max(err, std::abs((double)y[r] - ref[r]) / (1 + std::abs(ref[r])));
    printf("%-14s %s nnz=%9zu %-12s %8.2f us  err %.1e\n", name, sizeof(T) == 8 ? "f64" : "f32", nnz, what, ts[3], err);
  };
  int b = 128;
  time("coop2", [&] { coop_k<T, 2><<<(n * 2ll + b - 1) / b, b>>>(n, drp, dci, dva, dx, dy); });
  time("coop4", [&] { coop_k<T, 4><<<(n * 4ll + b - 1) / b, b>>>(n, drp, dci, dva, dx, dy); });
  time("coop8", [&] { coop_k<T, 8><<<(n * 8ll + b - 1) / b, b>>>(n, drp, dci, dva, dx, dy); });
  time("stream U4", [&] { stream_k<T, 4><<<(n + b - 1) / b, b, (b / 32) * 32 * 4 * sizeof(T)>>>(n, drp, dci, dva, dx, dy); });
  time("stream U8", [&] { stream_k<T, 8><<<(n + b - 1) / b, b, (b / 32) * 32 * 8 * sizeof(T)>>>(n, drp, dci, dva, dx, dy); });
  time("stream U16", [&] { stream_k<T, 16><<<(n + b - 1) / b, b, (b / 32) * 32 * 16 * sizeof(T)>>>(n, drp, dci, dva, dx, dy); });
  time("stream U8 b256", [&] { stream_k<T, 8><<<(n + 255) / 256, 256, 8 * 32 * 8 * sizeof(T)>>>(n, drp, dci, dva, dx, dy); });
  cudaFree(drp); cudaFree(dci); cudaFree(dva); cudaFree(dx); cudaFree(dy);
}

int main() {
  Csr g = stencil(725, 725, 1, 1); run<float>("grid2d 725", g); run<double>("grid2d 725", g);
  Csr l = stencil(160, 160, 160, 1); run<float>("lap3d7 160", l); run<double>("lap3d7 160", l);
  Csr s = stencil(100, 100, 100, 2); run<float>("stencil27 100", s); run<double>("stencil27 100", s);
  Csr u = uniform(1000000, 16); run<float>("uniform 1e6x16", u); run<double>("uniform 1e6x16", u);
  return 0;
}
