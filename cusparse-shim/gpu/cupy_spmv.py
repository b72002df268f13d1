#!/usr/bin/env python3
"""CuPy's own sparse product, unmodified, on real matrices: run as is and with libtessera_cusparse.so
preloaded, and compare the lines.

    python3 cupy_spmv.py [--iters N] [--blocks B] [--no-check] MATRIX...
                                                    (MATRIX: .mtx, .mtx.xz or gen:NAME, see mtxio.py)

For each matrix, f64 then f32: a cupyx.scipy.sparse.csr_matrix over int32 indices; y = A @ x and
A.dot(x) checked against a float64 host reference (per entry |y - ref| <= tol * sum_j |a_ij x_j|,
tol 1e-12 for f64 and 1e-5 for f32, and no NaN); after 5 more warm-up products (the shim analyzes
a matrix on its first), B blocks (default 5) of N back-to-back A @ x, each timed with the host clock
and ended by the current stream's synchronize (us per product: the median block, CuPy's descriptor
set-up and output allocation included; N as spmv_compare's, fewer past 2^21 entries, see
mtxio.calls_for); y of the last block checked; then A.data *= 2 three times, each followed by a
product that must see the new values. --no-check leaves out every check (timing only). One line
per matrix and type, then a summary; exit 1 on any failure:

    CUPY <matrix> <f64|f32> <ok|FAIL> us=<median> lo=<fastest block> hi=<slowest> calls=<n>
         maxrel=<e|skip> [<what failed>]
    SUMMARY ok=<n> fail=<m>"""
import argparse
import sys
import time
import traceback

import cupy as cp
import cupyx.scipy.sparse as csp
import numpy as np

from mtxio import TOL, calls_for, check, read_csr, reference, result_line, vector

WARM = 5


def run(name, shape, indptr, indices, data, dtype, iters, blocks, checking):
    dtype = np.dtype(dtype)
    tol = TOL[dtype]
    vals = data.astype(dtype)
    x = vector(shape[1], dtype)
    ref, scale = reference(indptr, indices, vals, x) if checking else (None, None)
    a = csp.csr_matrix((cp.asarray(vals), cp.asarray(indices, dtype=cp.int32),
                        cp.asarray(indptr, dtype=cp.int32)), shape=shape)
    xd = cp.asarray(x)
    problems = []
    worst = 0.0
    if checking:
        worst = check("matmul", cp.asnumpy(a @ xd), ref, scale, tol, problems)
        worst = max(worst, check("dot", cp.asnumpy(a.dot(xd)), ref, scale, tol, problems))

    stream = cp.cuda.get_current_stream()
    calls = calls_for(iters, len(data))
    for _ in range(WARM):
        y = a @ xd
    stream.synchronize()
    times = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(calls):
            y = a @ xd
        stream.synchronize()
        times.append((time.perf_counter() - t0) * 1e6 / calls)
    if not checking:
        return times, calls, None, problems
    worst = max(worst, check("timed", cp.asnumpy(y), ref, scale, tol, problems))

    # Values changed in place (same device array, nothing told): the product must follow.
    # Doubling is exact, so the reference scales exactly.
    for k in (1, 2, 3):
        a.data *= 2
        factor = float(2 ** k)
        worst = max(worst, check(f"inplace{k}", cp.asnumpy(a @ xd), ref * factor, scale * factor, tol, problems))
    return times, calls, worst, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=200, help="products per timed block")
    ap.add_argument("--blocks", type=int, default=5, help="timed blocks (the median is reported)")
    ap.add_argument("--no-check", dest="checking", action="store_false", help="time only")
    ap.add_argument("matrices", nargs="+")
    args = ap.parse_args()
    print(f"INFO cupy={cp.__version__} cuda_runtime={cp.cuda.runtime.runtimeGetVersion()}", flush=True)
    ok = fail = 0
    for arg in args.matrices:
        try:
            name, shape, indptr, indices, data = read_csr(arg)
        except Exception as e:  # an unreadable file fails, the rest still run
            print(f"ERROR {arg}: {e}", flush=True)
            fail += 1
            continue
        for dtype, tname in ((np.float64, "f64"), (np.float32, "f32")):
            try:
                times, calls, worst, problems = run(name, shape, indptr, indices, data, dtype, args.iters,
                                                    max(1, args.blocks), args.checking)
            except Exception as e:
                traceback.print_exc()
                print(f"CUPY {name} {tname} FAIL us=-1 maxrel=-1 error:{type(e).__name__}:{e}".replace("\n", " "),
                      flush=True)
                fail += 1
                continue
            print(result_line(f"CUPY {name} {tname}", times, calls, worst, problems), flush=True)
            ok, fail = (ok + 1, fail) if not problems else (ok, fail + 1)
    print(f"SUMMARY ok={ok} fail={fail}", flush=True)
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
