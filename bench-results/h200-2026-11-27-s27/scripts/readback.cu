// Session 27: what a background build's read-back costs beside a caller that queues products far
// ahead of the GPU. A caller thread launches `busy` (a ~20 us streaming kernel over the whole GPU)
// back to back on its stream; a worker thread, on its own non-blocking stream, repeatedly
// launches a tiny kernel and reads 120 bytes back, in one of several ways. Printed: the worker's
// read-back latency, and the caller's per-launch host time while the worker runs (against a
// caller alone). Build: nvcc -O2 -arch=sm_90 -o readback readback.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
using clk = std::chrono::steady_clock;
static double us(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

__global__ void busy(const float4* x, float4* y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 a = x[i], b = y[i]; b.x += a.x; b.y += a.y; b.z += a.z; b.w += a.w; y[i] = b;
  }
}
__global__ void tiny(unsigned long long* r, unsigned long long v) {
  if (threadIdx.x < 15) r[threadIdx.x] = v + threadIdx.x;
}

__global__ void flagged(unsigned long long* f, unsigned long long v) { __threadfence_system(); *(volatile unsigned long long*)f = v; }

__global__ void spin(long long ns) { long long t0 = clock64(); while (clock64() - t0 < ns * 2) {} }

struct Stat { double med, p90, max, mean; };
static Stat stat(std::vector<double> v) {
  if (v.empty()) return {0, 0, 0, 0};
  std::sort(v.begin(), v.end()); double s = 0; for (double x : v) s += x;
  return {v[v.size() / 2], v[v.size() * 9 / 10], v.back(), s / v.size()};
}

enum Mode { LAUNCH_TIMED, LONG_KERNEL, EVENT_QUERY_ONLY, LAUNCH_ONLY, FLAG_SPIN, PINNED_EVENT_YIELD, PAGEABLE, PINNED_SYNC, PINNED_EVENT_POLL, MAPPED_EVENT_POLL, PINNED_EVENT_SYNC, MALLOC_ASYNC, STREAM_CREATE, NONE };
static const char* names[] = {"worker launch calls timed (then 20 us of yield)", "one 2 ms one-block kernel pending, no calls", "cuEventQuery of a done event in a loop (no GPU work)", "tiny launches only, no waits (1 per 20 us)", "kernel writes mapped memory + flag, host spins on it", "pinned DtoH + event query loop (yield)", "pageable DtoH + stream sync", "pinned DtoH + stream sync", "pinned DtoH + event query loop",
  "kernel writes mapped host memory + event query loop", "pinned DtoH + event sync (blocking-sync event)", "cudaMallocAsync 32 MB + free (pool kept)", "cudaStreamCreate + destroy", "caller alone"};

int main(int argc, char** argv) {
  int launches = argc > 1 ? atoi(argv[1]) : 3000;
  bool legacy = argc > 2 && !strcmp(argv[2], "legacy");
  size_t n = (argc > 3 ? (size_t)atoi(argv[3]) : 4) << 20;  // 4M float4 = 64 MB each (argv[3]: millions of float4s): about 50 us a launch on an H200
  float4 *x, *y; CK(cudaMalloc(&x, n * 16)); CK(cudaMalloc(&y, n * 16)); CK(cudaMemset(x, 0, n * 16)); CK(cudaMemset(y, 0, n * 16));
  cudaStream_t cs = 0; if (!legacy) CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
  cudaStream_t ws; CK(cudaStreamCreateWithFlags(&ws, cudaStreamNonBlocking));
  unsigned long long *dres, *hpin, *hmap, *dmap; CK(cudaMalloc(&dres, 128)); CK(cudaHostAlloc(&hpin, 128, 0));
  CK(cudaHostAlloc(&hmap, 128, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer(&dmap, hmap, 0));
  unsigned long long hpage[16];
  cudaEvent_t ev, evb; CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&evb, cudaEventDisableTiming | cudaEventBlockingSync));
  cudaMemPool_t pool; CK(cudaDeviceGetDefaultMemPool(&pool, 0)); unsigned long long thr = ~0ull; CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
  { void* p; CK(cudaMallocAsync(&p, 32 << 20, ws)); CK(cudaFreeAsync(p, ws)); CK(cudaStreamSynchronize(ws)); }
  int blocks = 132 * 8;
  // Time of one busy launch on an idle GPU.
  for (int i = 0; i < 20; i++) busy<<<blocks, 256, 0, cs>>>(x, y, n);
  CK(cudaStreamSynchronize(cs)); auto t = clk::now();
  for (int i = 0; i < 200; i++) busy<<<blocks, 256, 0, cs>>>(x, y, n);
  CK(cudaStreamSynchronize(cs)); printf("busy kernel: %.1f us per launch back to back (GPU-bound); caller stream %s\n", us(t, clk::now()) / 200, legacy ? "legacy default" : "non-blocking");
  printf("%-52s | %-26s | %-40s | %s\n", "worker's step", "worker us: med p90 max", "caller launch us while worker active: med p90 max mean", "caller total ms");
  for (int m = NONE; m >= LAUNCH_TIMED; m--) {
    for (int rep = 0; rep < 2; rep++) {
      CK(cudaDeviceSynchronize());
      std::vector<double> call(launches), wk; std::atomic<int> done{0}; std::atomic<bool> stop{false};
      std::atomic<long long> wstart{0}, wend{0};
      auto T0 = clk::now();
      std::thread worker([&] {
        if (m == NONE) return;
        while (done.load() < 100) std::this_thread::yield();
        wstart = std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - T0).count();
        for (int k = 0; k < 30 && !stop; k++) {
          auto a = clk::now();
          switch (m) {
            case PAGEABLE: tiny<<<1, 32, 0, ws>>>(dres, k); CK(cudaMemcpyAsync(hpage, dres, 120, cudaMemcpyDeviceToHost, ws)); CK(cudaStreamSynchronize(ws)); break;
            case PINNED_SYNC: tiny<<<1, 32, 0, ws>>>(dres, k); CK(cudaMemcpyAsync(hpin, dres, 120, cudaMemcpyDeviceToHost, ws)); CK(cudaStreamSynchronize(ws)); break;
            case PINNED_EVENT_POLL: tiny<<<1, 32, 0, ws>>>(dres, k); CK(cudaMemcpyAsync(hpin, dres, 120, cudaMemcpyDeviceToHost, ws)); CK(cudaEventRecord(ev, ws));
              while (cudaEventQuery(ev) == cudaErrorNotReady) std::this_thread::sleep_for(std::chrono::microseconds(2)); break;
            case LAUNCH_TIMED: { a = clk::now(); tiny<<<1, 32, 0, ws>>>(dres, k); wk.push_back(us(a, clk::now())); auto c = clk::now(); while (us(c, clk::now()) < 20) std::this_thread::yield(); continue; }
            case LONG_KERNEL: if (k == 0) { spin<<<1, 32, 0, ws>>>(2000000); } std::this_thread::sleep_for(std::chrono::microseconds(60)); break;
            case EVENT_QUERY_ONLY: { auto b = clk::now(); while (us(b, clk::now()) < 60) { (void)cudaEventQuery(ev); std::this_thread::sleep_for(std::chrono::microseconds(2)); } break; }
            case LAUNCH_ONLY: { auto b = clk::now(); while (us(b, clk::now()) < 60) { tiny<<<1, 32, 0, ws>>>(dres, k); auto c = clk::now(); while (us(c, clk::now()) < 20) std::this_thread::yield(); } break; }
            case FLAG_SPIN: { volatile unsigned long long* f = hmap + 15; tiny<<<1, 32, 0, ws>>>(dmap, 1000 + k); flagged<<<1, 1, 0, ws>>>(dmap + 15, 1000 + k);
              while (*f != (unsigned long long)(1000 + k)) std::this_thread::yield(); break; }
            case PINNED_EVENT_YIELD: tiny<<<1, 32, 0, ws>>>(dres, k); CK(cudaMemcpyAsync(hpin, dres, 120, cudaMemcpyDeviceToHost, ws)); CK(cudaEventRecord(ev, ws));
              while (cudaEventQuery(ev) == cudaErrorNotReady) std::this_thread::yield(); break;
            case MAPPED_EVENT_POLL: tiny<<<1, 32, 0, ws>>>(dmap, k); CK(cudaEventRecord(ev, ws));
              while (cudaEventQuery(ev) == cudaErrorNotReady) std::this_thread::sleep_for(std::chrono::microseconds(2)); break;
            case PINNED_EVENT_SYNC: tiny<<<1, 32, 0, ws>>>(dres, k); CK(cudaMemcpyAsync(hpin, dres, 120, cudaMemcpyDeviceToHost, ws)); CK(cudaEventRecord(evb, ws)); CK(cudaEventSynchronize(evb)); break;
            case MALLOC_ASYNC: { void* p; CK(cudaMallocAsync(&p, 32 << 20, ws)); CK(cudaFreeAsync(p, ws)); break; }
            case STREAM_CREATE: { cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); CK(cudaStreamDestroy(s)); break; }
            default: break;
          }
          wk.push_back(us(a, clk::now()));
        }
        wend = std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - T0).count();
      });
      for (int i = 0; i < launches; i++) {
        auto a = clk::now(); busy<<<blocks, 256, 0, cs>>>(x, y, n); call[i] = us(a, clk::now()); done = i + 1;
      }
      CK(cudaStreamSynchronize(cs)); double total = us(T0, clk::now()) / 1e3; stop = true; worker.join(); CK(cudaDeviceSynchronize());
      // The caller's launches while the worker was active (by start time; all launches for the caller alone).
      std::vector<double> during; double s = 0;
      { double ws_ = wstart / 1e3, we = wend / 1e3; double at = 0; auto T = 0.0; (void)T;
        // reconstruct launch start times from durations is not exact; take launches 100..100+K where K covers the worker's span
        for (int i = 0; i < launches; i++) { if (m == NONE ? (i >= 100 && i < 400) : (at >= ws_ && at <= we)) during.push_back(call[i]); at += call[i]; } }
      (void)s; Stat w = stat(wk), c = stat(during);
      printf("%-52s | %6.1f %6.1f %8.1f | n=%4zu %6.1f %6.1f %8.1f %6.1f | %.2f\n", names[m], w.med, w.p90, w.max, during.size(), c.med, c.p90, c.max, c.mean, total);
    }
  }
  return 0;
}
