#!/usr/bin/env python3
"""PyTorch's sparse CSR product, unmodified, on real matrices: run as is and with
libtessera_cusparse.so preloaded, and compare the lines.

    python3 torch_spmv.py [--iters N] [--blocks B] [--no-check] MATRIX...
                                                    (MATRIX: .mtx, .mtx.xz or gen:NAME, see mtxio.py)

For each matrix, f64 then f32, each with int64 indices (PyTorch's default) and int32 indices:
torch.sparse_csr_tensor(crow, col, values, size, device='cuda'); torch.mv(A, x) and A @ x checked
against a float64 host reference (per entry |y - ref| <= tol * sum_j |a_ij x_j|, tol 1e-12 for f64
and 1e-5 for f32, and no NaN); after 5 more warm-up products (the shim analyzes a matrix on its
first), B blocks (default 5) of N back-to-back A @ x, each timed with the host clock and ended by
torch.cuda.synchronize() (us per product: the median block; N as spmv_compare's, fewer past 2^21
entries, see mtxio.calls_for); y of the last block checked; then A.values().mul_(2) twice, each
followed by a product that must see the new values. --no-check leaves out every check (timing
only). One line per matrix, type and index type, then a summary; exit 1 on any failure:

    TORCH <matrix> <f64|f32> <int32|int64> <ok|FAIL> us=<median> lo=<fastest block> hi=<slowest>
          calls=<n> maxrel=<e|skip> [<what failed>]
    SUMMARY ok=<n> fail=<m>"""
import argparse
import sys
import time
import traceback

import numpy as np
import torch

from mtxio import TOL, calls_for, check, read_csr, reference, result_line, vector

WARM = 5


def _host(y):
    """A torch result on the host, as numpy."""
    return y.cpu().numpy()


def run(shape, indptr, indices, vals, x, ref, scale, index_dtype, iters, blocks):
    """One index type; ref is None for timing only (no check)."""
    tol = TOL[vals.dtype]
    dev = torch.device("cuda")
    crow = torch.from_numpy(indptr).to(device=dev, dtype=index_dtype)
    col = torch.from_numpy(indices).to(device=dev, dtype=index_dtype)
    values = torch.from_numpy(vals).to(dev)
    a = torch.sparse_csr_tensor(crow, col, values, size=shape, device="cuda")
    xd = torch.from_numpy(x).to(dev)
    problems = []
    worst = 0.0
    if ref is not None:
        worst = check("mv", _host(torch.mv(a, xd)), ref, scale, tol, problems)
        worst = max(worst, check("matmul", _host(a @ xd), ref, scale, tol, problems))

    calls = calls_for(iters, len(vals))
    for _ in range(WARM):
        y = a @ xd
    torch.cuda.synchronize()
    times = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(calls):
            y = a @ xd
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6 / calls)
    if ref is None:
        return times, calls, None, problems
    worst = max(worst, check("timed", _host(y), ref, scale, tol, problems))

    # Values changed in place through the values() view; doubling is exact.
    for k in (1, 2):
        a.values().mul_(2)
        factor = float(2 ** k)
        worst = max(worst, check(f"inplace{k}", _host(a @ xd), ref * factor, scale * factor, tol, problems))
    return times, calls, worst, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=200, help="products per timed block")
    ap.add_argument("--blocks", type=int, default=5, help="timed blocks (the median is reported)")
    ap.add_argument("--no-check", dest="checking", action="store_false", help="time only")
    ap.add_argument("matrices", nargs="+")
    args = ap.parse_args()
    print(f"INFO torch={torch.__version__} cuda={torch.version.cuda} device={torch.cuda.get_device_name()}",
          flush=True)
    ok = fail = 0
    for arg in args.matrices:
        try:
            name, shape, indptr, indices, data = read_csr(arg)
        except Exception as e:  # an unreadable file fails, the rest still run
            print(f"ERROR {arg}: {e}", flush=True)
            fail += 1
            continue
        for dtype, tname in ((torch.float64, "f64"), (torch.float32, "f32")):
            np_dtype = np.dtype(np.float64 if dtype == torch.float64 else np.float32)
            vals = data.astype(np_dtype)
            x = vector(shape[1], np_dtype)
            ref = scale = None
            for index_dtype, iname in ((torch.int64, "int64"), (torch.int32, "int32")):
                label = f"TORCH {name} {tname} {iname}"
                try:
                    if args.checking and ref is None:  # one reference for both index types
                        ref, scale = reference(indptr, indices, vals, x)
                    times, calls, worst, problems = run(shape, indptr, indices, vals, x, ref, scale, index_dtype,
                                                        args.iters, max(1, args.blocks))
                except Exception as e:
                    traceback.print_exc()
                    print(f"{label} FAIL us=-1 maxrel=-1 error:{type(e).__name__}:{e}".replace("\n", " "), flush=True)
                    fail += 1
                    continue
                print(result_line(label, times, calls, worst, problems), flush=True)
                ok, fail = (ok + 1, fail) if not problems else (ok, fail + 1)
    print(f"SUMMARY ok={ok} fail={fail}", flush=True)
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
