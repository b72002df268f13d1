#!/usr/bin/env python3
"""Fits AUTO's rule (issue 19, notes/auto.md) on the training set and checks it on held-out
matrices. Standard library only.

    scripts/auto-fit.py TRAIN_DIR [HELDOUT_DIR ...] [--depth D] [--min-leaf N] [--sm SMS]

Each DIR holds `bench.csv` or `train.csv` (`tessera bench --methods all --steady`, f32 and/or
f64) and `features.txt` (`tessera info` of the same matrices: row statistics). The first DIR is
the training set (scripts/auto-training), the others are only evaluated.

The model is a decision tree over what analyze knows (the row statistics, the value type and the
device's SM count), grown greedily to minimise the regret: the sum over matrices of
log(time of the leaf's method / time of the fastest method). A method with a format of its own
(BRC, BCCOO, TILE) carries a 3% handicap in the fit, so that a leaf keeps a method over the CSR
arrays unless a format is clearly faster. Reported: the tree, and for each set how often the
pick is within 3% of the fastest tessera method, and how often it is at least as fast as
cuSPARSE's best.
"""

import csv
import math
import re
import sys
from pathlib import Path

METHODS = ["csr_vector", "hola", "brc", "bccoo", "tile"]
HEAVY = {"brc", "bccoo", "tile"}
HANDICAP = 1.03


def features(path):
    out, name = {}, None
    for line in Path(path).read_text().splitlines():
        if line and not line.startswith(" "):
            name = line.strip()
            continue
        s = line.strip()
        if m := re.match(r"size\s+(\d+) x (\d+), (\d+) non-zeros", s):
            rows, cols, nnz = map(int, m.groups())
            out.setdefault(name, {}).update(rows=rows, cols=cols, nnz=nnz)
        elif m := re.match(
            r"rows\s+mean ([\d.]+), std-dev ([\d.]+), min (\d+), max (\d+), empty (\d+)", s
        ):
            mean, std, mn, mx, empty = m.groups()
            out[name].update(
                mean=float(mean), std=float(std), min=int(mn), max=int(mx), empty=int(empty)
            )
        elif m := re.match(r"col spread\s+([\d.]+)", s):
            out[name]["spread"] = float(m.group(1))
    return out


def derived(f, val, sm):
    """The features the rule may split on: what RowStats, the value type and the device give."""
    mean = max(f["mean"], 1e-9)
    return {
        "log_nnz_per_sm": math.log10(max(f["nnz"], 1) / sm),
        "mean": f["mean"],
        "cv": f["std"] / mean,
        "max_over_mean": f["max"] / mean,
        "empty_frac": f["empty"] / max(f["rows"], 1),
        "spread_frac": f["spread"] / max(f["cols"], 1),
        "density": f["nnz"] / max(f["rows"] * f["cols"], 1),
        "value_bytes": val,
    }


def load(d, sm):
    d = Path(d)
    csv_path = next(p for p in [d / "train.csv", d / "bench.csv"] if p.exists())
    feats = features(d / "features.txt")
    times = {}
    for r in csv.DictReader(open(csv_path)):
        if r["status"] != "ok" or r["spmv_ms"] in ("", "-"):
            continue
        key = (r["matrix"], r["type"])
        times.setdefault(key, {})[r["method"]] = float(r["spmv_ms"])
    samples = []
    for (name, vt), t in sorted(times.items()):
        if name not in feats or not all(m in t for m in METHODS):
            continue
        cus = min((v for m, v in t.items() if m.startswith("cusparse")), default=None)
        val = 4 if vt == "f32" else 8
        samples.append(
            {
                "name": name,
                "type": vt,
                "x": derived(feats[name], val, sm),
                "t": {m: t[m] for m in METHODS},
                "auto": t.get("auto"),
                "cusparse": cus,
            }
        )
    return samples


def regret(samples, m):
    return sum(
        math.log(s["t"][m] * (HANDICAP if m in HEAVY else 1.0) / min(s["t"].values()))
        for s in samples
    )


def leaf(samples):
    best = min(METHODS, key=lambda m: regret(samples, m))
    return {"leaf": best, "n": len(samples), "regret": regret(samples, best)}


def grow(samples, depth, min_leaf):
    node = leaf(samples)
    if depth == 0 or len(samples) < 2 * min_leaf:
        return node
    best = None
    for f in samples[0]["x"]:
        vals = sorted({s["x"][f] for s in samples})
        for a, b in zip(vals, vals[1:]):
            thr = (a + b) / 2
            lo = [s for s in samples if s["x"][f] <= thr]
            hi = [s for s in samples if s["x"][f] > thr]
            if len(lo) < min_leaf or len(hi) < min_leaf:
                continue
            r = leaf(lo)["regret"] + leaf(hi)["regret"]
            if best is None or r < best[0] - 1e-9:
                best = (r, f, thr, lo, hi)
    if best is None or best[0] >= node["regret"] - 0.05:
        return node
    _, f, thr, lo, hi = best
    return {
        "feature": f,
        "threshold": thr,
        "lo": grow(lo, depth - 1, min_leaf),
        "hi": grow(hi, depth - 1, min_leaf),
        "n": len(samples),
    }


def predict(tree, x):
    while "leaf" not in tree:
        tree = tree["lo"] if x[tree["feature"]] <= tree["threshold"] else tree["hi"]
    return tree["leaf"]


def show(tree, indent=""):
    if "leaf" in tree:
        return f"{indent}-> {tree['leaf']} ({tree['n']} matrices)\n"
    return (
        f"{indent}if {tree['feature']} <= {tree['threshold']:.4g}:  ({tree['n']})\n"
        + show(tree["lo"], indent + "    ")
        + f"{indent}else:\n"
        + show(tree["hi"], indent + "    ")
    )


def evaluate(tree, samples, label):
    hits = wins = auto_hits = auto_wins = 0
    misses = []
    for s in samples:
        fastest = min(s["t"].values())
        pick = predict(tree, s["x"])
        t = s["t"][pick]
        hits += t <= 1.03 * fastest
        if s["cusparse"] is not None:
            wins += t <= s["cusparse"]
        if s["auto"] is not None:
            auto_hits += s["auto"] <= 1.03 * fastest
            if s["cusparse"] is not None:
                auto_wins += s["auto"] <= s["cusparse"]
        if t > 1.03 * fastest:
            best = min(s["t"], key=s["t"].get)
            misses.append(f"    {s['name']} {s['type']}: {pick} {t*1e3:.1f} us, {best} {fastest*1e3:.1f} us")
    n = len(samples)
    geo = math.exp(
        sum(math.log(s["cusparse"] / s["t"][predict(tree, s["x"])]) for s in samples if s["cusparse"])
        / max(1, sum(1 for s in samples if s["cusparse"]))
    )
    print(
        f"{label}: {n} matrix-type pairs; the rule's pick within 3% of the fastest method: {hits} "
        f"({100*hits/n:.0f}%), at least as fast as cuSPARSE's best: {wins}; geomean over "
        f"cuSPARSE {geo:.3f}x; the AUTO that ran: within 3% {auto_hits}, as fast as cuSPARSE {auto_wins}"
    )
    for m in misses:
        print(m)


def main(argv):
    args, depth, min_leaf, sm = [], 4, 4, 132
    it = iter(argv)
    for a in it:
        if a == "--depth":
            depth = int(next(it))
        elif a == "--min-leaf":
            min_leaf = int(next(it))
        elif a == "--sm":
            sm = int(next(it))
        else:
            args.append(a)
    if not args:
        print(__doc__)
        return 2
    train = load(args[0], sm)
    tree = grow(train, depth, min_leaf)
    print(show(tree), end="")
    evaluate(tree, train, f"training ({args[0]})")
    for d in args[1:]:
        evaluate(tree, load(d, sm), f"held out ({d})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
