#!/usr/bin/env python3
"""A/B of `tessera bench` runs (`gpu-run ab-host`): reads CSVs named <dir>/ab-<mode>-<round>/bench.csv
and prints, per matrix and value type, AUTO's first product from host arrays (e2e_host_1_ms)
and its end-to-end speedup over cuSPARSE's best host pipeline of the same process
(cuspe2e_host_N_ms / e2e_host_N_ms) at N = 1, 10, 100, for every mode and round, then the
geometric means. `--from copy` reads the creates from device arrays copied (e2e_N_ms against
cuspe2e_N_ms), `--from borrow` those read in place (e2e_borrow_N_ms against cuspe2e_N_ms)."""
import csv
import math
import os
import sys
from collections import defaultdict

NS = (1, 10, 100)


def main(args):
    source = "host"
    if len(args) >= 2 and args[0] == "--from":
        source, args = args[1], args[2:]
    ours, theirs = {"host": ("e2e_host_", "cuspe2e_host_"), "copy": ("e2e_", "cuspe2e_"),
                    "borrow": ("e2e_borrow_", "cuspe2e_")}[source]
    paths = args
    runs = []  # (label, {(matrix, type): row})
    for p in paths:
        label = os.path.basename(os.path.dirname(p)).removeprefix("ab-")
        try:
            rows = list(csv.DictReader(open(p)))
        except OSError as e:
            print(f"{label}: {e}")
            continue
        runs.append((label, {(r["matrix"], r["type"]): r for r in rows
                             if r["method"].startswith("auto")}))
    keys = sorted({k for _, rs in runs for k in rs})
    head = f"{'matrix':28} {'type':4} " + " ".join(
        f"{label:>24}" for label, _ in runs)
    print(f"first product ({source}), ms / speedup over cuSPARSE at N = 1, 10, 100")
    print(head)
    logs = defaultdict(lambda: defaultdict(list))
    for k in keys:
        cells = []
        for label, rs in runs:
            r = rs.get(k)
            if r is None:
                cells.append(f"{'-':>24}")
                continue
            try:
                first = float(r[f"{ours}1_ms"])
                sp = [float(r[f"{theirs}{n}_ms"]) / float(r[f"{ours}{n}_ms"]) for n in NS]
            except (KeyError, ValueError):
                cells.append(f"{'?':>24}")
                continue
            for n, s in zip(NS, sp):
                logs[label][n].append(math.log(s))
            cells.append(f"{first:8.3f} " + "/".join(f"{s:4.2f}" for s in sp).rjust(15))
        print(f"{k[0][:28]:28} {k[1]:4} " + " ".join(cells))
    print(f"{'geometric mean':33} " + " ".join(
        f"{'':8} " + "/".join(
            f"{math.exp(sum(v[n]) / len(v[n])):4.2f}" if v[n] else "   -"
            for n in NS).rjust(15)
        for v in (logs[label] for label, _ in runs)))


if __name__ == "__main__":
    main(sys.argv[1:])
