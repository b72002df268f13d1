# Session 30, run H: does a 2 KB block's alignment change how fast it streams? A CuPy kernel that
# reads TILE's Dns tiles as tile_spmv does (a warp per item of 8 consecutive tiles, each half every
# other tile, lane r loading row r of each of the 16 columns: 16 loads of 16 consecutive values),
# over 188 x 188 tiles of 256 values, laid out (a) back to back, (b) with a 128-value gap (the ELL
# edge tile) after each tile row of 188 (as the random 3000² at 97%), (c) with a gap of 16 values
# (128 B in f64) after each tile row, (d) with each tile row's gap rounded up to 256 values.
import cupy as cp, numpy as np
src = r'''
template <typename T>
__device__ void rd(const T* __restrict__ v, const unsigned* __restrict__ off, int ntiles, T* out) {
  const int lane = threadIdx.x & 31, r = lane & 15, h = lane >> 4;
  const int item = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int t0 = item * 8, t1 = min(t0 + 8, ntiles);
  T s = 0;
  for (int t = t0 + h; t < t1; t += 2) {
    const T* tv = v + __ldg(off + t);
#pragma unroll
    for (int c = 0; c < 16; ++c) s += __ldg(tv + c * 16 + r);
  }
  if (s == (T)12345.0) out[0] = s;
}
extern "C" __global__ void rd64(const double* v, const unsigned* off, int n, double* out) { rd<double>(v, off, n, out); }
extern "C" __global__ void rd32(const float* v, const unsigned* off, int n, float* out) { rd<float>(v, off, n, out); }
'''
mod = cp.RawModule(code=src, options=('-std=c++17',), name_expressions=None)
T, R = 188, 188
n = T * R
for dt, name in ((np.float64, 'rd64'), (np.float32, 'rd32')):
    k = mod.get_function(name)
    for label, gap in (('back to back', 0), ('gap 128 values a row', 128), ('gap 16 values a row', 16), ('gap 256 values a row', 256)):
        off = np.zeros(n, np.uint32)
        o = 0
        for tr in range(R):
            for tc in range(T):
                off[tr * T + tc] = o
                o += 256
            o += gap
        v = cp.random.random(o + 256).astype(dt)
        doff = cp.asarray(off)
        out = cp.zeros(1, dt)
        items = (n + 7) // 8
        grid = (items * 32 + 127) // 128
        for _ in range(20):
            k((grid,), (128,), (v, doff, np.int32(n), out))
        a, b = cp.cuda.Event(), cp.cuda.Event()
        ts = []
        for _ in range(7):
            a.record()
            for _ in range(50):
                k((grid,), (128,), (v, doff, np.int32(n), out))
            b.record(); b.synchronize()
            ts.append(cp.cuda.get_elapsed_time(a, b) / 50 * 1e3)
        mb = n * 256 * v.itemsize / 1e6
        print(f"{dt.__name__:8s} {label:22s} {np.median(ts):7.2f} us ({min(ts):.2f}-{max(ts):.2f}), {mb:.0f} MB, {mb / np.median(ts) * 1e-3:.2f} TB/s")
