#!/usr/bin/env python3
"""A/B of the create path from host arrays (`gpu-run ab-host`): reads `tessera bench` CSVs named
<dir>/ab-<mode>-<round>/bench.csv and prints, per matrix and value type, AUTO's first product
from host arrays (e2e_host_1_ms) and its end-to-end speedup over cuSPARSE's best host pipeline
of the same process (cuspe2e_host_N_ms / e2e_host_N_ms) at N = 1, 10, 100, for every mode and
round, then the geometric means."""
import csv
import math
import os
import sys
from collections import defaultdict

NS = (1, 10, 100)


def main(paths):
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
    print("first product from host arrays, ms / speedup over cuSPARSE at N = 1, 10, 100")
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
                first = float(r["e2e_host_1_ms"])
                sp = [float(r[f"cuspe2e_host_{n}_ms"]) / float(r[f"e2e_host_{n}_ms"])
                      for n in NS]
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
