#!/usr/bin/env python3
"""Cross-check of tessera bench's cuSPARSE baseline (issue 4): CuPy's csr_matrix @ x on a
uniform random matrix of 10^6 rows with 16 distinct columns per row (f64), timed like
notes/benchmarking.md (CUDA events around batches of back-to-back calls, median of 7 batches).
`tessera bench gen:uniform:1000000,16,1` reports cuSPARSE on the same shape; the two should be
within 2x. Runs where CuPy is installed (the GPU machine)."""
import sys

import cupy as cp
import cupyx.scipy.sparse as csp
import numpy as np

rows, per = 1_000_000, 16
rng = np.random.default_rng(1)
# 16 distinct, sorted columns per row: one uniform draw in each of 16 equal column strata.
width = rows // per
cols = (np.arange(per, dtype=np.int64) * width + rng.integers(0, width, size=(rows, per))).astype(np.int32)
indptr = np.arange(0, rows * per + 1, per, dtype=np.int32)
a = csp.csr_matrix((cp.asarray(rng.random(rows * per)), cp.asarray(cols.ravel()), cp.asarray(indptr)), shape=(rows, rows))
x = cp.asarray(rng.random(rows) + 0.1)
y = a @ x
start, end = cp.cuda.Event(), cp.cuda.Event()
times = []
for _ in range(7):
    start.record()
    for _ in range(20):
        y = a @ x
    end.record()
    end.synchronize()
    times.append(cp.cuda.get_elapsed_time(start, end) / 20)
ms = sorted(times)[3]
print(f"cupy csr_matrix @ x, uniform {rows} x {rows}, {per}/row, f64: {ms:.4f} ms (median of 7 batches of 20; includes CuPy's output allocation)")
sys.exit(0)
