// Session 27: uploading a large pageable host array. cudaMemcpy from pageable memory (what a
// caller does), against staging through two page-locked buffers with copy threads (what
// tessera's upload_staged does: threads spawned per chunk), with the threads spawned once per
// upload, and other chunk sizes and thread counts. Build: nvcc -O2 -std=c++17 -o up upload.cu
#include <cuda_runtime.h>
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
using clk = std::chrono::steady_clock;
static double ms(clk::time_point a) { return std::chrono::duration<double, std::milli>(clk::now() - a).count(); }

struct Stage { char* buf[2]; cudaEvent_t ev[2]; cudaStream_t s; size_t chunk; };

static void staged_spawn(Stage& st, const char* src, size_t n, char* dst, int threads) {
  for (size_t k = 0, off = 0; off < n; k++, off += st.chunk) {
    int i = k % 2; size_t len = std::min(st.chunk, n - off);
    cudaEventSynchronize(st.ev[i]);
    size_t part = (len + threads - 1) / threads;
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; t++) { size_t a = t * part, b = std::min(len, a + part); if (a < b) ts.emplace_back([&, a, b] { memcpy(st.buf[i] + a, src + off + a, b - a); }); }
    for (auto& t : ts) t.join();
    cudaMemcpyAsync(dst + off, st.buf[i], len, cudaMemcpyHostToDevice, st.s); cudaEventRecord(st.ev[i], st.s);
  }
  cudaStreamSynchronize(st.s);
}

static void staged_once(Stage& st, const char* src, size_t n, char* dst, int threads) {
  size_t nchunks = (n + st.chunk - 1) / st.chunk;
  std::barrier start(threads), done(threads);
  auto work = [&](int t) {
    for (size_t k = 0; k < nchunks; k++) {
      start.arrive_and_wait();
      int i = k % 2; size_t off = k * st.chunk, len = std::min(st.chunk, n - off);
      size_t part = (len + threads - 1) / threads, a = t * part, b = std::min(len, a + part);
      if (a < b) memcpy(st.buf[i] + a, src + off + a, b - a);
      done.arrive_and_wait();
    }
  };
  std::vector<std::thread> ts; for (int t = 1; t < threads; t++) ts.emplace_back(work, t);
  for (size_t k = 0; k < nchunks; k++) {
    int i = k % 2; size_t off = k * st.chunk, len = std::min(st.chunk, n - off);
    cudaEventSynchronize(st.ev[i]);
    start.arrive_and_wait();
    size_t part = (len + threads - 1) / threads, b = std::min(len, part);
    memcpy(st.buf[i], src + off, b);
    done.arrive_and_wait();
    cudaMemcpyAsync(dst + off, st.buf[i], len, cudaMemcpyHostToDevice, st.s); cudaEventRecord(st.ev[i], st.s);
  }
  for (auto& t : ts) t.join();
  cudaStreamSynchronize(st.s);
}

int main() {
  for (size_t mb : {16, 48, 128}) {
    size_t n = mb << 20;
    std::vector<char> src(n); for (size_t i = 0; i < n; i += 4096) src[i] = (char)i; memset(src.data(), 1, n);
    char* dst; cudaMalloc(&dst, n);
    printf("%zu MB: ", mb);
    auto run = [&](const char* what, auto f) {
      std::vector<double> t; for (int r = 0; r < 7; r++) { cudaDeviceSynchronize(); auto a = clk::now(); f(); t.push_back(ms(a)); }
      std::sort(t.begin(), t.end()); printf("%s %.2f ms (%.1f GB/s); ", what, t[3], n / t[3] / 1e6);
    };
    run("cudaMemcpy", [&] { cudaMemcpy(dst, src.data(), n, cudaMemcpyHostToDevice); });
    for (size_t chunk : {8u << 20, 16u << 20}) for (int th : {4, 8}) {
      Stage st; st.chunk = chunk; for (int i = 0; i < 2; i++) { cudaHostAlloc(&st.buf[i], chunk, 0); cudaEventCreateWithFlags(&st.ev[i], cudaEventDisableTiming); } cudaStreamCreateWithFlags(&st.s, cudaStreamNonBlocking);
      char name[64];
      snprintf(name, 64, "spawn/%zuMB/%dt", chunk >> 20, th); run(name, [&] { staged_spawn(st, src.data(), n, dst, th); });
      snprintf(name, 64, "once/%zuMB/%dt", chunk >> 20, th); run(name, [&] { staged_once(st, src.data(), n, dst, th); });
    }
    printf("\n"); cudaFree(dst);
  }
}
