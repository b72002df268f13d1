# Random-gather ceiling on this GPU: 1e6 rows x 16 entries/row, x of 1e6 doubles.
# k_gather: y[r] = sum_j x[col[16r+j]] (reads col 64 MB + 16M gathers, writes y 8 MB)
# k_spmv:   y[r] = sum_j val[16r+j]*x[col[16r+j]] (CSR-like: + values 128 MB)
# Each with random columns and with sorted-local columns (col = r + j, the streaming ceiling).
import cupy as cp, numpy as np
src = r'''
extern "C" __global__ void k_gather(const int* __restrict__ col, const double* __restrict__ x, double* y, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x; if (r >= n) return;
  const int4* c = reinterpret_cast<const int4*>(col + 16LL * r);
  double s = 0;
  #pragma unroll
  for (int q = 0; q < 4; ++q) { int4 v = __ldcs(c + q); s += __ldg(x + v.x) + __ldg(x + v.y) + __ldg(x + v.z) + __ldg(x + v.w); }
  y[r] = s;
}
extern "C" __global__ void k_spmv(const int* __restrict__ col, const double* __restrict__ val, const double* __restrict__ x, double* y, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x; if (r >= n) return;
  const int4* c = reinterpret_cast<const int4*>(col + 16LL * r);
  const double2* a = reinterpret_cast<const double2*>(val + 16LL * r);
  double s = 0;
  #pragma unroll
  for (int q = 0; q < 4; ++q) { int4 v = __ldcs(c + q); double2 a0 = __ldcs(a + 2*q), a1 = __ldcs(a + 2*q + 1);
    s += a0.x * __ldg(x + v.x) + a0.y * __ldg(x + v.y) + a1.x * __ldg(x + v.z) + a1.y * __ldg(x + v.w); }
  y[r] = s;
}
'''
m = cp.RawModule(code=src, options=("-std=c++17",))
g, sp = m.get_function("k_gather"), m.get_function("k_spmv")
n = 1_000_000
rng = np.random.default_rng(1)
x = cp.asarray(rng.random(n))
val = cp.asarray(rng.random(16 * n))
y = cp.zeros(n)
def t(f, args, reps=50):
    s, e = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(3): f(((n + 255) // 256,), (256,), args)
    res = []
    for _ in range(7):
        s.record()
        for _ in range(reps): f(((n + 255) // 256,), (256,), args)
        e.record(); e.synchronize()
        res.append(cp.cuda.get_elapsed_time(s, e) / reps)
    return sorted(res)[3]
for name, col in [("random", cp.asarray(rng.integers(0, n, 16 * n, dtype=np.int32))),
                  ("local", cp.asarray((np.arange(16 * n, dtype=np.int64) // 16 + np.tile(np.arange(16), n)) % n).astype(cp.int32))]:
    tg = t(g, (col, x, y, np.int32(n)))
    ts = t(sp, (col, val, x, y, np.int32(n)))
    print(f"{name:7s} gather-only {tg*1000:7.1f} us ({(64e6+8e6+8e6)/tg/1e6:6.0f} GB/s DRAM-floor)   spmv {ts*1000:7.1f} us ({(192e6+8e6+8e6)/ts/1e6:6.0f} GB/s)")
