// Session 21 experiment (not yet run: that session had no device time): why does tessera's
// CSR allocation cost 88-195 us on every create while cuSPARSE's pipeline, in the same process,
// allocates the same three sizes in 5-16 us (notes/end-to-end.md, session 21)?
//
// Each scenario creates and frees the CSR arrays of as-caida (row_ptr 105,904 B, col_ind
// 427,048 B, values 854,096 B, uploaded from pageable memory) 9 times and prints the median
// and the largest time of the allocation calls alone and of the whole create (allocations and
// copies), per scenario:
//   separate    three cuMemAlloc, freed at the end of each round (what tessera and the bench's
//               cuSPARSE pipeline both do)
//   neighbour   the same, with a 127-byte allocation made after them and kept alive until the
//               next round's arrays exist (cuSPARSE's workspace, freed later)
//   one         one cuMemAlloc of the three together (DeviceBuffer::alloc_parts)
//   pool        cuMemAllocAsync from the default pool with a release threshold of 1 GiB, a
//               stream synchronize, cuMemFreeAsync at the end of each round
//   pool+free   the same pool allocations, freed with cuMemFree (what tessera's Drop does)
//
// Build and run on the GPU machine:
//   g++ -O2 -std=c++17 alloc_reuse.cpp -I/usr/local/cuda/include
//       -L/usr/local/cuda/lib64/stubs -lcuda -o alloc_reuse && ./alloc_reuse
// (one line)
// (syntax-checked here with g++ -fsyntax-only against the CUDA headers of the PyPI wheels).
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using clk = std::chrono::steady_clock;

static double us(clk::time_point a, clk::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
}

static void ok(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) {
        const char* name = nullptr;
        cuGetErrorName(r, &name);
        std::fprintf(stderr, "%s: %s\n", what, name ? name : "?");
        std::exit(1);
    }
}

enum Mode { SEPARATE, NEIGHBOUR, ONE, POOL, POOL_FREE };
static const char* NAMES[] = {"separate", "neighbour", "one", "pool", "pool+free"};

int main() {
    ok(cuInit(0), "cuInit");
    CUdevice dev;
    ok(cuDeviceGet(&dev, 0), "cuDeviceGet");
    CUcontext ctx;
    ok(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    ok(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    CUstream s;
    ok(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    CUmemoryPool pool;
    ok(cuDeviceGetDefaultMemPool(&pool, dev), "cuDeviceGetDefaultMemPool");
    cuuint64_t threshold = 1ull << 30;
    ok(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
       "cuMemPoolSetAttribute");

    const size_t sizes[3] = {105904, 427048, 854096};
    std::vector<char> host(sizes[2], 1);
    // The bench's live vectors (x, y and the caller's device arrays) stay alive throughout.
    CUdeviceptr live[4];
    for (auto& p : live) ok(cuMemAlloc(&p, 211800), "cuMemAlloc live");

    std::printf("%-10s %12s %12s %12s %12s\n", "scenario", "alloc med", "alloc max",
                "create med", "create max");
    for (int mode = SEPARATE; mode <= POOL_FREE; ++mode) {
        std::vector<double> alloc_t, create_t;
        CUdeviceptr neighbour = 0;
        for (int rep = 0; rep < 9; ++rep) {
            CUdeviceptr a[3] = {0, 0, 0};
            auto t0 = clk::now();
            if (mode == ONE) {
                size_t total = 0;
                size_t off[3];
                for (int i = 0; i < 3; ++i) {
                    off[i] = total;
                    total += (sizes[i] + 255) / 256 * 256;
                }
                CUdeviceptr whole;
                ok(cuMemAlloc(&whole, total), "cuMemAlloc one");
                for (int i = 0; i < 3; ++i) a[i] = whole + off[i];
            } else if (mode == POOL || mode == POOL_FREE) {
                for (int i = 0; i < 3; ++i) ok(cuMemAllocAsync(&a[i], sizes[i], s), "cuMemAllocAsync");
                ok(cuStreamSynchronize(s), "cuStreamSynchronize");
            } else {
                for (int i = 0; i < 3; ++i) ok(cuMemAlloc(&a[i], sizes[i]), "cuMemAlloc");
            }
            auto t1 = clk::now();
            for (int i = 0; i < 3; ++i) {
                ok(cuMemcpyHtoDAsync(a[i], host.data(), sizes[i], s), "cuMemcpyHtoDAsync");
                ok(cuStreamSynchronize(s), "cuStreamSynchronize");
            }
            auto t2 = clk::now();
            if (mode == NEIGHBOUR) {
                if (neighbour) ok(cuMemFree(neighbour), "cuMemFree neighbour");
                ok(cuMemAlloc(&neighbour, 127), "cuMemAlloc neighbour");
            }
            if (rep > 0) {  // the first round of each scenario warms it up
                alloc_t.push_back(us(t0, t1));
                create_t.push_back(us(t0, t2));
            }
            if (mode == ONE) {
                ok(cuMemFree(a[0]), "cuMemFree one");
            } else if (mode == POOL) {
                for (auto p : a) ok(cuMemFreeAsync(p, s), "cuMemFreeAsync");
                ok(cuStreamSynchronize(s), "cuStreamSynchronize");
            } else {
                for (auto p : a) ok(cuMemFree(p), "cuMemFree");
            }
        }
        if (neighbour) ok(cuMemFree(neighbour), "cuMemFree neighbour");
        auto med = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            return v[v.size() / 2];
        };
        auto max = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
        std::printf("%-10s %10.1fus %10.1fus %10.1fus %10.1fus\n", NAMES[mode], med(alloc_t),
                    max(alloc_t), med(create_t), max(create_t));
    }
    for (auto p : live) ok(cuMemFree(p), "cuMemFree live");
    ok(cuStreamDestroy(s), "cuStreamDestroy");
    ok(cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
    return 0;
}
