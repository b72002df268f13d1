#!/usr/bin/env python3
"""The end-to-end summary of `tessera bench` CSVs (one per run): for AUTO's rows, per source of
the arrays (read in place: e2e_borrow_N_ms; device arrays copied: e2e_N_ms; host arrays:
e2e_host_N_ms, each against cuSPARSE's best pipeline of the same process), the geometric mean
of the speedup over cuSPARSE at N = 1, 10, 100, 1,000, 10,000, how many matrices are below 1,
and which (below 0.995, with their ratios)."""
import csv
import math
import sys

NS = (1, 10, 100, 1000, 10000)
SOURCES = (("in place", "e2e_borrow_", "cuspe2e_"), ("copied", "e2e_", "cuspe2e_"),
           ("host", "e2e_host_", "cuspe2e_host_"))


def main(paths):
    for p in paths:
        rows = [r for r in csv.DictReader(open(p)) if r["method"].startswith("auto")]
        print(f"== {p} ({len(rows)} AUTO rows)")
        for name, ours, theirs in SOURCES:
            cells, below = [], []
            for n in NS:
                sp = []
                for r in rows:
                    try:
                        s = float(r[f"{theirs}{n}_ms"]) / float(r[f"{ours}{n}_ms"])
                    except (KeyError, ValueError, ZeroDivisionError):
                        continue
                    sp.append(s)
                    if s < 0.995:
                        below.append(f"N={n} {r['matrix']} {r['type']} {s:.2f}")
                g = math.exp(sum(map(math.log, sp)) / len(sp)) if sp else float("nan")
                cells.append(f"{g:.2f} ({sum(s < 0.995 for s in sp)} below)")
            print(f"  {name:9} " + " / ".join(cells))
            if name == "in place":
                for b in below:
                    print(f"    {b}")


if __name__ == "__main__":
    main(sys.argv[1:])
