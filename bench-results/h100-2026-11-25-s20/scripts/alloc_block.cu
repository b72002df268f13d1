// Session 20 experiment: does an allocation on one thread stall another thread's launches?
// Thread A launches an empty kernel back to back and records each launch's host time; thread B
// allocates (and frees) 25 MiB with cuMemAlloc, or with cuMemAllocAsync from the default pool,
// or from a pool grown beforehand. Prints the longest launch while B works.
#include <cuda.h>
#include <cuda_runtime.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
__global__ void empty_kernel() {}
using clk = std::chrono::steady_clock;
static double us(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }
int main() {
    cudaSetDevice(0);
    cudaFree(0);
    cudaStream_t sa, sb;
    cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking);
    empty_kernel<<<1, 32, 0, sa>>>();
    cudaDeviceSynchronize();
    size_t bytes = 25u << 20;
    cudaMemPool_t pool;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    for (int mode = 0; mode < 5; ++mode) {
        if (mode == 3) {  // keep what the pool grows to
            uint64_t thr = UINT64_MAX;
            cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr);
            void* p; cudaMallocAsync(&p, bytes * 4, sb); cudaFreeAsync(p, sb); cudaStreamSynchronize(sb);
        }
        for (int rep = 0; rep < 3; ++rep) {
            std::atomic<bool> go{false}, done{false};
            std::vector<double> t;
            t.reserve(100000);
            std::thread a([&] {
                cudaSetDevice(0);
                while (!go) {}
                while (!done) {
                    auto t0 = clk::now();
                    empty_kernel<<<1, 32, 0, sa>>>();
                    t.push_back(us(t0, clk::now()));
                }
            });
            go = true;
            std::this_thread::sleep_for(std::chrono::microseconds(300));
            auto b0 = clk::now();
            void* p = nullptr;
            double alloc_us = 0, free_us = 0;
            if (mode == 0) {
                CUdeviceptr d; cuMemAlloc(&d, bytes); alloc_us = us(b0, clk::now());
                auto f0 = clk::now(); cuMemFree(d); free_us = us(f0, clk::now());
            } else if (mode == 1) {  // cudaMalloc then no free (freed later)
                cudaMalloc(&p, bytes); alloc_us = us(b0, clk::now());
            } else {
                cudaMallocAsync(&p, bytes, sb); cudaStreamSynchronize(sb); alloc_us = us(b0, clk::now());
                auto f0 = clk::now(); cudaFreeAsync(p, sb); cudaStreamSynchronize(sb); free_us = us(f0, clk::now()); p = nullptr;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(300));
            done = true;
            a.join();
            if (p) cudaFree(p);
            cudaDeviceSynchronize();
            double mx = 0; for (double x : t) mx = x > mx ? x : mx;
            const char* names[] = {"cuMemAlloc+cuMemFree", "cudaMalloc (kept)", "cudaMallocAsync default pool", "cudaMallocAsync kept pool", "cudaMallocAsync kept pool again"};
            printf("%-34s rep %d: alloc %7.1f us, free %7.1f us; other thread: %zu launches, longest %7.1f us\n", names[mode], rep, alloc_us, free_us, t.size(), mx);
        }
    }
    return 0;
}
