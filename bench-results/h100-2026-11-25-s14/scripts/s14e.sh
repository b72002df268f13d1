#!/usr/bin/env bash
# Session 14, run E: ncu with warm caches on tessera's own kernels in the timed loop, AUTO vs
# BRC named, stencil27:48 f64 (AUTO's BRC ran 1.5x slower than BRC named in run D).
cd "$(dirname "$0")/.."
[ -d gpu-bundle ] || tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
W=/tmp/e; mkdir -p $W
for meth in auto brc; do
  echo "-- ncu warm, stencil27:48 $meth: tessera kernels 40..52"
  timeout 200 ncu --cache-control none -k regex:"brc|csr_vector|hola|util" --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,launch__grid_size,launch__block_size --launch-skip 40 --launch-count 12 --csv $B/bin/tessera bench gen:stencil27:48 --methods $meth --steady --repeat 7 > $W/ncu-$meth.csv 2>&1
  python3 - $W/ncu-$meth.csv <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 14 and r[0].isdigit()]
by = {}
for r in rows:
    by.setdefault(r[0], {"k": r[4][:22]})[r[12]] = r[14]
for i, d in sorted(by.items(), key=lambda t: int(t[0])):
    print(i, " ".join(f"{k[:26]}={v}" for k, v in d.items()))
PY
done
tar -czf $OUT/e.tgz -C $W .
