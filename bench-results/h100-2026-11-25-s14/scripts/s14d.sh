#!/usr/bin/env bash
# Session 14, run D: gpu_check (the final HOLA after the check); why AUTO's BRC runs slower than
# BRC named on matrices whose arrays fit in L2 (background build vs at analyze; ncu with warm
# caches: which kernels run per product, their time and L2 hit rate).
cd "$(dirname "$0")/.."
rm -rf gpu-bundle; tar -xJf gpu-carry/gb.tar.xz
B=$PWD/gpu-bundle
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/lib TESSERA_MATRICES=$B/matrices
export TESSERA_BIN=$B/bin/tessera
W=/tmp/d; mkdir -p $W
echo "# commit $(cat $B/COMMIT)" | tee $W/d.txt
(cd $B/tests && timeout 60 ./gpu_check > $W/gpu_check.log 2>&1; echo "gpu_check rc=$? $(grep -E '^test result' $W/gpu_check.log)"; grep -A8 panicked $W/gpu_check.log | head -20) | tee -a $W/d.txt
M="gen:grid2d:725 gen:stencil27:48"
timeout 60 $B/bin/tessera bench $M --methods auto,brc --steady 2>&1 | grep -E "auto|brc " | cut -c1-130 | tee -a $W/d.txt
echo "-- TESSERA_BACKGROUND_BUILD=0" | tee -a $W/d.txt
TESSERA_BACKGROUND_BUILD=0 timeout 60 $B/bin/tessera bench $M --methods auto --steady 2>&1 | grep -E "auto" | cut -c1-130 | tee -a $W/d.txt
for meth in auto brc; do
  echo "-- ncu warm, stencil27:48 $meth: kernels 60..75" | tee -a $W/d.txt
  timeout 120 ncu --cache-control none --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum --launch-skip 60 --launch-count 16 --csv $B/bin/tessera bench gen:stencil27:48 --methods $meth --steady --repeat 7 > $W/ncu-$meth.csv 2>&1
  python3 - $W/ncu-$meth.csv <<'PY' | tee -a $W/d.txt
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 14 and r[0].isdigit()]
by = {}
for r in rows:
    by.setdefault(r[0], {"k": r[4][:28], "g": r[8]})[r[12]] = r[14]
for i, d in sorted(by.items(), key=lambda t: int(t[0])):
    print(i, d["k"], d["g"], " ".join(f"{k.split('__')[1][:14]}={v}" for k, v in d.items() if k not in ("k", "g")))
PY
done
tar -czf $OUT/d.tgz -C $W .
