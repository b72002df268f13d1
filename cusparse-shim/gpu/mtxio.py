"""Matrices for cupy_spmv.py and torch_spmv.py: the same CSR that spmv_compare.c builds.

read_csr(arg) takes a Matrix Market file (.mtx, or .mtx.xz) or one of spmv_compare's built-in
matrices (the edge cases gen:empty-rows, gen:nnz0, gen:long-row, gen:wide, and the large
gen:lap3d:K and gen:uniform:ROWS,PERROW,SEED, generated with the same formulas: see the head of
spmv_compare.c) and returns (name, (rows, cols), indptr, indices, data): int64 index arrays, float64
values, base 0, columns sorted and distinct in each row. Symmetric and skew-symmetric files are
mirrored; a pattern file's entry (i, j), 0-based, is 1 + ((7i + 13j) mod 17) / 16; duplicates are
summed. The large ones are built with whole-array numpy (gen:lap3d:128, 14.6M entries, in about a
second).

Files are read with scipy.io.mmread when SciPy is there, else with a small reader, and cached as
.npz under $TESSERA_MTX_CACHE (default /tmp/tessera_mtx_cache), keyed by path, size and mtime, so
the runs after the first skip the parse.

reference() and max_rel() are the host check shared by both scripts; calls_for() the calls per
timed block (as spmv_compare.c's: N, scaled down past 2^21 entries)."""
import hashlib
import io
import lzma
import os

import statistics

import numpy as np

CACHE = os.environ.get("TESSERA_MTX_CACHE", "/tmp/tessera_mtx_cache")
# Relative error bounds, per entry, against sum_j |a_ij x_j| (as spmv_compare.c).
TOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5}


def pattern_value(i, j):
    return 1.0 + ((7 * i + 13 * j) % 17).astype(np.float64) / 16.0


def unit(k, salt):
    """spmv_compare.c's unit(): splitmix64 of (k, salt) to [-1, 1), vectorised in uint64."""
    with np.errstate(over="ignore"):
        z = (np.atleast_1d(np.asarray(k, dtype=np.uint64)) * np.uint64(0x9E3779B97F4A7C15)
             + np.uint64(salt) * np.uint64(0xD1B54A32D192ED03) + np.uint64(0x632BE59BD9B4E019))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return (z >> np.uint64(11)).astype(np.float64) / 4503599627370496.0 - 1.0


def to_csr(rows, cols, ri, ci, v):
    """Triplets (base 0) to CSR: sorted by row then column, duplicates summed."""
    ri = np.asarray(ri, dtype=np.int64)
    ci = np.asarray(ci, dtype=np.int64)
    v = np.asarray(v, dtype=np.float64)
    order = np.lexsort((ci, ri))
    ri, ci, v = ri[order], ci[order], v[order]
    if len(ri):
        first = np.ones(len(ri), dtype=bool)
        first[1:] = (ri[1:] != ri[:-1]) | (ci[1:] != ci[:-1])
        starts = np.flatnonzero(first)
        v = np.add.reduceat(v, starts)
        ri, ci = ri[starts], ci[starts]
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(ri, minlength=rows), out=indptr[1:])
    return indptr, ci, v


def _open(path):
    return lzma.open(path, "rb") if path.endswith(".xz") else open(path, "rb")


def _banner(path):
    with _open(path) as f:
        words = f.readline().decode("ascii", "replace").lower().split()
    if len(words) != 5 or words[0] != "%%matrixmarket" or words[1:3] != ["matrix", "coordinate"]:
        raise ValueError(f"{path}: not a coordinate Matrix Market file")
    field, symmetry = words[3], words[4]
    if field not in ("real", "integer", "pattern", "double") or symmetry not in (
            "general", "symmetric", "skew-symmetric"):
        raise ValueError(f"{path}: {field} {symmetry} not supported")
    return field, symmetry


def _read_small(path, field, symmetry):
    """The reader without SciPy: returns shape and mirrored triplets (base 0)."""
    with _open(path) as f:
        text = io.TextIOWrapper(f, encoding="ascii", errors="replace")
        line = text.readline()
        while line.startswith("%") or not line.strip():
            line = text.readline()
        rows, cols, nnz = (int(w) for w in line.split()[:3])
        body = np.loadtxt(text, comments="%", ndmin=2, dtype=np.float64, max_rows=nnz)
    if body.shape[0] != nnz:
        raise ValueError(f"{path}: {body.shape[0]} entries of {nnz}")
    ri = body[:, 0].astype(np.int64) - 1
    ci = body[:, 1].astype(np.int64) - 1
    v = np.zeros(nnz) if field == "pattern" else body[:, 2].copy()
    if symmetry != "general":
        off = ri != ci
        sign = -1.0 if symmetry == "skew-symmetric" else 1.0
        ri, ci, v = (np.concatenate([ri, ci[off]]), np.concatenate([ci, ri[off]]),
                     np.concatenate([v, sign * v[off]]))
    return rows, cols, ri, ci, v


def _read_file(path):
    field, symmetry = _banner(path)
    try:
        import scipy.io
    except ImportError:
        rows, cols, ri, ci, v = _read_small(path, field, symmetry)
    else:
        with _open(path) as f:
            coo = scipy.io.mmread(f)  # mirrors symmetric and skew-symmetric storage
        rows, cols = coo.shape
        ri, ci = coo.row.astype(np.int64), coo.col.astype(np.int64)
        v = np.asarray(coo.data, dtype=np.float64)
    if field == "pattern":
        v = pattern_value(ri, ci)
    return (rows, cols), to_csr(rows, cols, ri, ci, v)


def _lap3d(k):
    """spmv_compare.c's gen_lap3d(): row x + K y + K^2 z, 6 on the diagonal, -1 to each neighbour."""
    n = k ** 3
    r = np.arange(n, dtype=np.int64)
    x, y, z = r % k, (r // k) % k, r // (k * k)
    offs = np.array([-k * k, -k, -1, 0, 1, k, k * k], dtype=np.int64)  # in column order
    keep = np.stack([z > 0, y > 0, x > 0, np.ones(n, dtype=bool), x < k - 1, y < k - 1, z < k - 1], axis=1)
    indices = (r[:, None] + offs[None, :])[keep]  # row-major: rows in order, columns sorted
    data = np.where(np.broadcast_to(offs == 0, keep.shape)[keep], 6.0, -1.0)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(keep.sum(axis=1), out=indptr[1:])
    return (n, n), (indptr, indices, data)


def _uniform(rows, per, seed):
    """spmv_compare.c's gen_uniform(): PERROW candidates a row, sorted, made distinct."""
    t = np.arange(per, dtype=np.int64)
    c = ((unit(np.arange(rows * per, dtype=np.int64), 100 + seed) + 1.0) * 0.5 * float(rows)).astype(np.int64)
    c = np.minimum(c, rows - 1).reshape(rows, per)
    c.sort(axis=1)
    c = np.minimum(np.maximum.accumulate(c - t, axis=1) + t, rows - per + t)
    indices = c.ravel()
    indptr = np.arange(rows + 1, dtype=np.int64) * per
    return (rows, rows), (indptr, indices, pattern_value(np.repeat(np.arange(rows, dtype=np.int64), per), indices))


def _generate_large(what):
    """gen:lap3d:K or gen:uniform:ROWS,PERROW,SEED (None for another name), limits as spmv_compare.c."""
    kind, _, sizes = what.partition(":")
    try:
        nums = [int(w) for w in sizes.split(",")]
    except ValueError:
        nums = []
    if kind == "lap3d":
        if len(nums) != 1 or not 1 <= nums[0] <= 675:
            raise ValueError("gen:lap3d:K wants 1 <= K <= 675")
        return _lap3d(nums[0])
    if kind == "uniform":
        if len(nums) != 3 or not (1 <= nums[1] <= nums[0] < 2 ** 31 - 1 and nums[0] * nums[1] < 2 ** 31 - 1
                                  and nums[2] >= 0):
            raise ValueError("gen:uniform:ROWS,PERROW,SEED wants 1 <= PERROW <= ROWS, ROWS * PERROW < 2^31, "
                             "SEED >= 0")
        return _uniform(*nums)
    return None


def _generate(what):
    """spmv_compare.c's gen_matrix(), entry for entry."""
    large = _generate_large(what)
    if large is not None:
        return large
    shapes = {"empty-rows": (5000, 4000), "nnz0": (100, 100), "long-row": (20000, 20000),
              "wide": (64, 300000)}
    if what not in shapes:
        raise ValueError(f"gen:{what}: unknown built-in matrix")
    rows, cols = shapes[what]
    ri, ci = [], []
    if what != "nnz0":
        r_all = np.arange(rows, dtype=np.int64)
        if what == "empty-rows":
            lens = np.where(r_all % 3 == 0, 0, 1 + ((unit(r_all, 7) + 1.0) * 5.5).astype(np.int64))
        elif what == "long-row":
            lens = np.where(r_all == 7, cols, 3)
        else:
            lens = np.full(rows, 4000, dtype=np.int64)
        for r in range(rows):
            n = int(lens[r])
            t = np.arange(n, dtype=np.int64)
            if n == cols:
                c = t
            else:
                c = ((unit(r * 4099 + t, 8) + 1.0) * 0.5 * float(cols)).astype(np.int64)
                c = np.minimum(c, cols - 1)
            ri.append(np.full(n, r, dtype=np.int64))
            ci.append(c)
    ri = np.concatenate(ri) if ri else np.zeros(0, dtype=np.int64)
    ci = np.concatenate(ci) if ci else np.zeros(0, dtype=np.int64)
    v = unit(np.arange(len(ri), dtype=np.int64), 9) if len(ri) else np.zeros(0)
    return (rows, cols), to_csr(rows, cols, ri, ci, v)


def matrix_name(arg):
    if arg.startswith("gen:"):
        return arg
    name = os.path.basename(arg)
    return name.removesuffix(".xz").removesuffix(".mtx")


def read_csr(arg):
    name = matrix_name(arg)
    if arg.startswith("gen:"):
        shape, (indptr, indices, data) = _generate(arg[4:])
        return name, shape, indptr, indices, data
    st = os.stat(arg)
    key = hashlib.sha1(f"{os.path.realpath(arg)}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:16]
    cached = os.path.join(CACHE, f"{name}-{key}.npz")
    if os.path.exists(cached):
        z = np.load(cached)
        return name, tuple(int(s) for s in z["shape"]), z["indptr"], z["indices"], z["data"]
    shape, (indptr, indices, data) = _read_file(arg)
    os.makedirs(CACHE, exist_ok=True)
    tmp = f"{cached}.{os.getpid()}.tmp.npz"
    np.savez(tmp, shape=np.array(shape), indptr=indptr, indices=indices, data=data)
    os.replace(tmp, cached)
    return name, shape, indptr, indices, data


def reference(indptr, indices, data, x):
    """y = A x in float64 and the per-entry scale sum_j |a_ij x_j|, from the values as given
    (whole-array: about a second for 15M entries)."""
    rows = len(indptr) - 1
    row_of = np.repeat(np.arange(rows), np.diff(indptr))
    prod = np.asarray(data, dtype=np.float64) * np.asarray(x, dtype=np.float64)[indices]
    return (np.bincount(row_of, weights=prod, minlength=rows),
            np.bincount(row_of, weights=np.abs(prod), minlength=rows))


def calls_for(n, nnz):
    """Calls per timed block: n, or n * 2^21 / nnz (at least 20) past 2^21 entries."""
    big = 1 << 21
    return n if nnz <= big else min(n, max(20, n * big // nnz))


def max_rel(y, ref, scale):
    """(largest |y - ref| / scale, any NaN in y); an entry with scale 0 must be exact."""
    y = np.asarray(y, dtype=np.float64)
    nan = bool(np.isnan(y).any())
    diff = np.abs(np.where(np.isnan(y), ref, y) - ref)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(scale > 0, diff / np.where(scale > 0, scale, 1.0), np.where(diff > 0, np.inf, 0.0))
    return (float(rel.max()) if rel.size else 0.0), nan


def check(label, y, ref, scale, tol, problems):
    """Compare a result copied to the host (numpy) with the reference; note what fails.
    Returns maxrel."""
    rel, nan = max_rel(y, ref, scale)
    if nan or not rel <= tol:
        problems.append(f"{label}:maxrel={rel:.3e}{':nan' if nan else ''}")
    return rel


def result_line(label, times, calls, worst, problems):
    """One greppable result line: ok or FAIL, the median and range of the block times (us)."""
    status = "FAIL" if problems else "ok"
    rel = "skip" if worst is None else f"{worst:.3e}"
    return (f"{label} {status} us={statistics.median(times):.2f} lo={min(times):.2f} hi={max(times):.2f} "
            f"calls={calls} maxrel={rel} {' '.join(problems)}").rstrip()


def vector(n, dtype, salt=1):
    """The x both scripts use: deterministic, in [-1, 1)."""
    return unit(np.arange(n, dtype=np.int64), salt).astype(dtype) if n else np.zeros(0, dtype=dtype)
