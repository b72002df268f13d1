#!/usr/bin/env python3
"""Session 29 prototype: rows cut into pieces of P entries, a warp (or block) per piece,
partial sums combined per row in order; against a pure streaming read and cuSPARSE."""
import sys
import numpy as np
import cupy as cp
import cupyx.scipy.sparse as sp

SRC = r'''
template <typename T, int U>
__device__ void piece_warp(const int* __restrict__ item_row, const int* __restrict__ item_lo,
                           const int* __restrict__ ci, const T* __restrict__ va,
                           const T* __restrict__ x, T* __restrict__ part, int items) {
  const int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (w >= items) return;
  const int lo = item_lo[w], hi = item_lo[w + 1];
  T s[U];
  #pragma unroll
  for (int u = 0; u < U; ++u) s[u] = T(0);
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
  #pragma unroll
  for (int o = 16; o > 0; o >>= 1) a += __shfl_down_sync(0xffffffffu, a, o);
  if (lane == 0) part[w] = a;
}
template <typename T>
__device__ void combine(const int* __restrict__ row_item, const T* __restrict__ part, T* y, int rows) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  T a = T(0);
  for (int i = row_item[r]; i < row_item[r + 1]; ++i) a += part[i];
  y[r] = a;
}
template <typename T, int U>
__device__ void piece_atomic(const int* __restrict__ item_row, const int* __restrict__ item_lo,
                           const int* __restrict__ ci, const T* __restrict__ va,
                           const T* __restrict__ x, T* __restrict__ y, int items) {
  const int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (w >= items) return;
  const int lo = item_lo[w], hi = item_lo[w + 1];
  T s[U];
  #pragma unroll
  for (int u = 0; u < U; ++u) s[u] = T(0);
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
  #pragma unroll
  for (int o = 16; o > 0; o >>= 1) a += __shfl_down_sync(0xffffffffu, a, o);
  if (lane == 0) atomicAdd(y + item_row[w], a);
}
template <typename T, int U>
__device__ void piece_carry(const int* __restrict__ item_row, const int* __restrict__ item_lo,
                           const int* __restrict__ row_item, const int* __restrict__ ci, const T* __restrict__ va,
                           const T* __restrict__ x, T* __restrict__ part, unsigned* cnt, T* y, int items) {
  const int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (w >= items) return;
  const int lo = item_lo[w], hi = item_lo[w + 1];
  T s[U];
  #pragma unroll
  for (int u = 0; u < U; ++u) s[u] = T(0);
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
  #pragma unroll
  for (int o = 16; o > 0; o >>= 1) a += __shfl_down_sync(0xffffffffu, a, o);
  const int r = item_row[w];
  const int f = row_item[r], n = row_item[r + 1] - f;
  if (n == 1) { if (lane == 0) y[r] = a; return; }
  unsigned last = 0;
  if (lane == 0) {
    part[w] = a;
    __threadfence();
    last = atomicAdd(cnt + r, 1u) == (unsigned)(n - 1);
  }
  last = __shfl_sync(0xffffffffu, last, 0);
  if (!last) return;
  __threadfence();
  T t = T(0);
  for (int i = f + lane; i < f + n; i += 32) t += __ldcg(part + i);  // order fixed per lane
  #pragma unroll
  for (int o = 16; o > 0; o >>= 1) t += __shfl_down_sync(0xffffffffu, t, o);
  if (lane == 0) { y[r] = t; cnt[r] = 0; }
}
template <typename T>
__device__ void stream(const int* __restrict__ ci, const T* __restrict__ va, T* out, long long n) {
  T a = T(0);
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x)
    a += __ldcs(va + k) * (T)__ldcs(ci + k);
  if (a == T(12345)) out[0] = a;
}
#define E(T, S) \
extern "C" __global__ void pw4_##S(const int* a, const int* b, const int* c, const T* d, const T* e, T* f, int n) { piece_warp<T, 4>(a, b, c, d, e, f, n); } \
extern "C" __global__ void pw8_##S(const int* a, const int* b, const int* c, const T* d, const T* e, T* f, int n) { piece_warp<T, 8>(a, b, c, d, e, f, n); } \
extern "C" __global__ void pa4_##S(const int* a, const int* b, const int* c, const T* d, const T* e, T* f, int n) { piece_atomic<T, 4>(a, b, c, d, e, f, n); } \
extern "C" __global__ void pc4_##S(const int* a, const int* b, const int* b2, const int* c, const T* d, const T* e, T* f, unsigned* g, T* h, int n) { piece_carry<T, 4>(a, b, b2, c, d, e, f, g, h, n); } \
extern "C" __global__ void pc8_##S(const int* a, const int* b, const int* b2, const int* c, const T* d, const T* e, T* f, unsigned* g, T* h, int n) { piece_carry<T, 8>(a, b, b2, c, d, e, f, g, h, n); } \
extern "C" __global__ void pc16_##S(const int* a, const int* b, const int* b2, const int* c, const T* d, const T* e, T* f, unsigned* g, T* h, int n) { piece_carry<T, 16>(a, b, b2, c, d, e, f, g, h, n); } \
extern "C" __global__ void comb_##S(const int* a, const T* b, T* c, int n) { combine<T>(a, b, c, n); } \
extern "C" __global__ void stream_##S(const int* a, const T* b, T* c, long long n) { stream<T>(a, b, c, n); }
E(float, f32)
E(double, f64)
'''
mod = cp.RawModule(code=SRC, options=("-std=c++17",))


STREAM = cp.cuda.Stream(non_blocking=True)


def timeit(f, reps=100, graph=True):
    """Microseconds per call: `reps` calls captured in one CUDA graph (no host launch cost),
    the median of 7 replays."""
    with STREAM:
        for _ in range(5):
            f()
        if graph:
            STREAM.begin_capture()
            for _ in range(reps):
                f()
            g = STREAM.end_capture()
            run = g.launch
        else:
            def run():
                for _ in range(reps):
                    f()
        run()
        ts = []
        for _ in range(7):
            s, e = cp.cuda.Event(), cp.cuda.Event()
            s.record(STREAM)
            run()
            e.record(STREAM)
            e.synchronize()
            ts.append(cp.cuda.get_elapsed_time(s, e) * 1e3 / reps)
    return sorted(ts)[3]


def pieces(rp, P):
    rows = len(rp) - 1
    lens = np.diff(rp)
    n = np.maximum((lens + P - 1) // P, 1)
    row_item = np.zeros(rows + 1, np.int64)
    row_item[1:] = np.cumsum(n)
    items = int(row_item[-1])
    item_row = np.repeat(np.arange(rows), n)
    j = np.arange(items) - row_item[item_row]
    lo = rp[item_row] + (lens[item_row] * j) // n[item_row]
    item_lo = np.append(lo, rp[-1])
    return (cp.asarray(item_row.astype(np.int32)), cp.asarray(item_lo.astype(np.int32)),
            cp.asarray(row_item.astype(np.int32)), items)


def check(out, key, t, y, ref):
    err = float(cp.max(cp.abs(y - ref)) / cp.max(cp.abs(ref)))
    out[key] = t if err < 1e-4 else -err


def run(name, A, dt):
    S = 'f32' if dt == np.float32 else 'f64'
    A = A.astype(dt).tocsr()
    rows, cols = A.shape
    d = sp.csr_matrix(A)
    x = cp.asarray(np.random.default_rng(1).standard_normal(cols).astype(dt))
    ref = d @ x
    rp = A.indptr.astype(np.int64)
    ci, va = d.indices, d.data
    out = {}
    yy = cp.zeros(rows, dt)
    try:
        out['cusparse'] = timeit(lambda: cp.cusparse.spmv(d, x, y=yy))
    except Exception as ex:
        print('cusparse graph failed', ex)
    junk = cp.zeros(1, dt)
    nnz = A.nnz
    out['stream'] = timeit(lambda: mod.get_function('stream_' + S)((1056,), (256,), (ci, va, junk, np.int64(nnz))))
    y = cp.zeros(rows, dt)
    cnt = cp.zeros(rows, cp.uint32)
    for P, kind, U in ((1024, 'w', 8), (512, 'carry', 4), (1024, 'carry', 4), (1024, 'carry', 8), (2048, 'carry', 8)):
        ir, il, ri, items = pieces(rp, P)
        part = cp.zeros(items, dt)
        if kind == 'w':
            f = mod.get_function('pw%d_%s' % (U, S))
            c = mod.get_function('comb_' + S)
            def go():
                f(((items * 32 + 255) // 256,), (256,), (ir, il, ci, va, x, part, np.int32(items)))
                c(((rows + 255) // 256,), (256,), (ri, part, y, np.int32(rows)))
        else:
            f = mod.get_function('pc%d_%s' % (U, S))
            def go():
                f(((items * 32 + 255) // 256,), (256,), (ir, il, ri, ci, va, x, part, cnt, y, np.int32(items)))
        y.fill(0)
        check(out, '%s%d P%d' % (kind, U, P), timeit(go), y, ref)
    mb = (nnz * (np.dtype(dt).itemsize + 4)) / 1e6
    print('%-28s %s nnz=%d %.1f MB: ' % (name, S, nnz, mb) + ' '.join('%s=%.2f' % kv for kv in out.items()), flush=True)


import scipy.sparse as ssp
rng = np.random.default_rng(7)
mats = [
    ('dense 2000x2000', lambda: ssp.csr_matrix(np.ones((2000, 2000)) + rng.random((2000, 2000)))),
    ('dense 1000x8000', lambda: ssp.csr_matrix(rng.random((1000, 8000)) + 0.5)),
    ('random 4000^2 0.5', lambda: ssp.random(4000, 4000, density=0.5, format='csr', random_state=3)),
    ('random 4000^2 0.125', lambda: ssp.random(4000, 4000, density=0.125, format='csr', random_state=3)),
    ('random 20000^2 0.02', lambda: ssp.random(20000, 20000, density=0.02, format='csr', random_state=3)),
]
print('#', cp.cuda.runtime.getDeviceProperties(0)['name'].decode())
for name, mk in mats:
    A = mk()
    for dt in (np.float32, np.float64):
        run(name, A, dt)
